"""typed_table.py OUT: runs under build-test/venv. Writes two small Delta tables whose data
files exercise the scan's conversions, with pyarrow's Parquet writer and a log written here
(no Delta writer involved), and prints {"tables": {name: expected rows}, "physical": [per file of types: column path ->
Parquet physical type]} (rows JSON-safe, as deltactl table scan --output json renders them):

  OUT/types: timestamps as INT64 millis and nanos (file 0) and as INT96 (file 1); decimals
    stored as INT32, INT64 and FIXED_LEN_BYTE_ARRAY; type widening (int -> long,
    float -> double, date -> timestamp_ntz, decimal(5,2) -> decimal(10,4), int -> double);
    byte and short; a column added to the table after the files were written (nulls); a
    list of structs and a map of lists with nulls at every level; a string partition column.
  OUT/mapped: column mapping in id mode: the files' columns have other names (physical
    names that do not match) and are found by Parquet field id."""
import datetime
import decimal
import json
import os
import sys
import uuid

import pyarrow as pa
import pyarrow.parquet as pq

D = decimal.Decimal
decimal.getcontext().prec = 60  # 38-digit values must not round
UTC = datetime.timezone.utc


def field(name, typ, nullable=True, meta=None):
    return {"name": name, "type": typ, "nullable": nullable, "metadata": meta or {}}


def commit(table, schema, files, partition_cols=(), config=None, reader=1, writer=2,
           rfeat=None, wfeat=None):
    log = os.path.join(table, "_delta_log")
    os.makedirs(log, exist_ok=True)
    proto = {"minReaderVersion": reader, "minWriterVersion": writer}
    if rfeat is not None:
        proto["readerFeatures"] = rfeat
        proto["writerFeatures"] = wfeat
    acts = [{"protocol": proto},
            {"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet", "options": {}},
                          "schemaString": json.dumps({"type": "struct", "fields": schema}),
                          "partitionColumns": list(partition_cols), "configuration": config or {},
                          "createdTime": 1700000000000}}]
    for path, pvals in files:
        size = os.path.getsize(os.path.join(table, path.replace("%20", " ")))
        acts.append({"add": {"path": path, "partitionValues": pvals, "size": size,
                             "modificationTime": 1700000000000, "dataChange": True}})
    with open(os.path.join(log, "00000000000000000000.json"), "w") as f:
        for a in acts:
            f.write(json.dumps(a) + "\n")


def ts_text(dt):
    return dt.astimezone(UTC).replace(tzinfo=None).strftime("%Y-%m-%dT%H:%M:%S.%f")


def types_table(out):
    t = os.path.join(out, "types")
    os.makedirs(t)
    t0 = datetime.datetime(1969, 12, 31, 23, 59, 58, 123456, tzinfo=UTC)  # before the epoch
    t1 = datetime.datetime(2024, 2, 29, 12, 0, 0, 654321, tzinfo=UTC)
    n = 3
    cols = {
        "ts_ms": pa.array([t0, t1, None], pa.timestamp("ms", tz="UTC")),
        "ts_ns": pa.array([t0, t1, None], pa.timestamp("ns", tz="UTC")),
        "ntz": pa.array([t0.replace(tzinfo=None), None, t1.replace(tzinfo=None)], pa.timestamp("us")),
        "d32": pa.array([D("-1234567.89"), D("0.01"), None], pa.decimal128(9, 2)),
        "d64": pa.array([D("123456789012345.678"), None, D("-0.001")], pa.decimal128(18, 3)),
        "dfix": pa.array([D("99999999999999999999999999999999.999999"), D("-1.5"), None],
                         pa.decimal128(38, 6)),
        "wide_i": pa.array([2147483647, -2147483648, None], pa.int32()),
        "wide_f": pa.array([1.5, None, -0.25], pa.float32()),
        "wide_d": pa.array([datetime.date(1970, 1, 2), datetime.date(1969, 12, 31), None], pa.date32()),
        "wide_dec": pa.array([D("123.45"), D("-0.01"), None], pa.decimal128(5, 2)),
        "wide_id": pa.array([7, None, -3], pa.int32()),
        "b": pa.array([-128, 127, None], pa.int8()),
        "s": pa.array([-32768, None, 32767], pa.int16()),
        "items": pa.array([[{"a": 1, "b": "x"}, None, {"a": None, "b": "z"}], [], None],
                          pa.list_(pa.struct([("a", pa.int32()), ("b", pa.string())]))),
        "m": pa.array([[("k", [1, None]), ("e", [])], None, [("n", None)]],
                      pa.map_(pa.string(), pa.list_(pa.int64()))),
    }
    table = pa.table(cols)
    # file 0: INT64 millis/nanos; decimals as integers where they fit
    os.makedirs(os.path.join(t, "p=one"))
    pq.write_table(table, os.path.join(t, "p=one", "f0.parquet"), version="2.6",
                   store_decimal_as_integer=True)
    # file 1: every timestamp as INT96 (Spark's legacy), decimals as FIXED_LEN_BYTE_ARRAY
    os.makedirs(os.path.join(t, "p=two x"))  # the log names it URL-encoded
    pq.write_table(table, os.path.join(t, "p=two x", "f1.parquet"), version="2.6",
                   use_deprecated_int96_timestamps=True)
    schema = [field("ts_ms", "timestamp"), field("ts_ns", "timestamp"), field("ntz", "timestamp_ntz"),
              field("d32", "decimal(9,2)"), field("d64", "decimal(18,3)"), field("dfix", "decimal(38,6)"),
              field("wide_i", "long"), field("wide_f", "double"), field("wide_d", "timestamp_ntz"),
              field("wide_dec", "decimal(10,4)"), field("wide_id", "double"), field("b", "byte"),
              field("s", "short"),
              field("items", {"type": "array", "containsNull": True, "elementType": {
                  "type": "struct", "fields": [field("a", "integer"), field("b", "string")]}}),
              field("m", {"type": "map", "keyType": "string", "valueContainsNull": True,
                          "valueType": {"type": "array", "elementType": "long", "containsNull": True}}),
              field("added", "string"), field("p", "string")]
    commit(t, schema, [("p=one/f0.parquet", {"p": "one"}), ("p=two%20x/f1.parquet", {"p": "two x"})],
           partition_cols=["p"], reader=3, writer=7, rfeat=["timestampNtz"], wfeat=["timestampNtz"])

    def dec(v, scale):
        return None if v is None else str(v.quantize(D(1).scaleb(-scale)))
    rows = []
    for pv, int96 in (("one", False), ("two x", True)):
        for i in range(n):
            r = {k: table.column(k)[i].as_py() for k in cols}
            ms = r["ts_ms"]
            rows.append({
                "ts_ms": None if ms is None else ts_text(ms.replace(microsecond=ms.microsecond // 1000 * 1000) if not int96 else ms),
                "ts_ns": None if r["ts_ns"] is None else ts_text(r["ts_ns"].to_pydatetime() if hasattr(r["ts_ns"], "to_pydatetime") else r["ts_ns"]),
                "ntz": None if r["ntz"] is None else ts_text(r["ntz"].replace(tzinfo=UTC)),
                "d32": dec(r["d32"], 2), "d64": dec(r["d64"], 3), "dfix": dec(r["dfix"], 6),
                "wide_i": r["wide_i"], "wide_f": r["wide_f"],
                "wide_d": None if r["wide_d"] is None else r["wide_d"].isoformat() + "T00:00:00.000000",
                "wide_dec": dec(r["wide_dec"], 4),
                "wide_id": None if r["wide_id"] is None else float(r["wide_id"]),
                "b": r["b"], "s": r["s"],
                "items": None if r["items"] is None else r["items"],
                "m": None if r["m"] is None else {k: v for k, v in r["m"]},
                "added": None, "p": pv,
            })
    return rows


def mapped_table(out):
    t = os.path.join(out, "mapped")
    os.makedirs(t)
    schema = pa.schema([
        pa.field("col-a1b2", pa.int64(), metadata={"PARQUET:field_id": "1"}),
        pa.field("col-c3d4", pa.struct([pa.field("col-e5", pa.string(), metadata={"PARQUET:field_id": "3"})]),
                 metadata={"PARQUET:field_id": "2"}),
    ])
    tbl = pa.table([pa.array([1, 2]), pa.array([{"col-e5": "x"}, None])], schema=schema)
    # the physical names in the log differ from the file's: only the ids can match
    pq.write_table(tbl, os.path.join(t, "f.parquet"))

    def cm(i, phys):
        return {"delta.columnMapping.id": i, "delta.columnMapping.physicalName": phys}
    dschema = [field("id", "long", meta=cm(1, "other-1")),
               field("info", {"type": "struct", "fields": [field("name", "string", meta=cm(3, "other-3"))]},
                     meta=cm(2, "other-2"))]
    commit(t, dschema, [("f.parquet", {})], config={"delta.columnMapping.mode": "id",
                                                   "delta.columnMapping.maxColumnId": "3"},
           reader=2, writer=5)
    return [{"id": 1, "info": {"name": "x"}}, {"id": 2, "info": None}]


def physical(path):
    s = pq.ParquetFile(path).schema
    return {s.column(i).path: s.column(i).physical_type for i in range(len(s))}


def main():
    out = sys.argv[1]
    tables = {"types": types_table(out), "mapped": mapped_table(out)}
    t = os.path.join(out, "types")
    print(json.dumps({"tables": tables,
                      "physical": [physical(os.path.join(t, "p=one", "f0.parquet")),
                                   physical(os.path.join(t, "p=two x", "f1.parquet"))]}))


if __name__ == "__main__":
    main()
