"""arrow_rows.py: runs under build-test/venv. Reads Parquet files (a DAT case's expected
table_content) or a Delta table through delta-rs (--deltalake PATH [--version N]) with
pyarrow and prints {"rows": [...]} or {"error": "..."}: every row as an object of JSON-safe
values by the rules of spark_judge.py (decimals as strings, binary hex, dates and UTC
timestamps ISO, maps as objects), typed by the Arrow schema.

usage: arrow_rows.py FILE.parquet...  |  arrow_rows.py --deltalake PATH [--version N]"""
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq

import jsonsafe


def js(v, t):
    if v is None:
        return None
    if pa.types.is_struct(t):
        return {t.field(i).name: js(v.get(t.field(i).name), t.field(i).type)
                for i in range(t.num_fields)}
    if pa.types.is_map(t):
        out = {}
        for k, x in v:
            kk = js(k, t.key_type)
            out[kk if isinstance(kk, str) else json.dumps(kk, sort_keys=True)] = js(x, t.item_type)
        return out
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [js(x, t.value_type) for x in v]
    if pa.types.is_decimal(t):
        return str(v)
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return bytes(v).hex()
    if pa.types.is_timestamp(t):
        return jsonsafe.timestamp(v)
    if pa.types.is_date(t):
        return v.isoformat()
    if isinstance(v, float):
        return jsonsafe.floating(v)
    return v


def rows_of(table):
    cols = table.schema
    out = []
    for r in table.to_pylist():
        out.append({f.name: js(r[f.name], f.type) for f in cols})
    return out


def main():
    args = sys.argv[1:]
    try:
        if args and args[0] == "--deltalake":
            import deltalake
            version = int(args[3]) if len(args) > 3 and args[2] == "--version" else None
            dt = deltalake.DeltaTable(args[1], version=version)
            table = dt.to_pyarrow_table()
        else:
            table = pa.concat_tables([pq.read_table(p) for p in args]) if args else pa.table({})
        print(json.dumps({"rows": rows_of(table)}))
    except Exception as e:  # the caller records disagreements
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, str(e)[:1000])}))


if __name__ == "__main__":
    main()
