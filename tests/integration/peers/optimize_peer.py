"""optimize_peer.py: the deltalake / DuckDB side of tests/integration/test_optimize.py
(run under build-test/venv). One JSON request as argv[1], one JSON answer on stdout:

  {"op": "make", "path": P, "files": N, "rows": R, "partitioned": bool}
      N appends of R rows each with deltalake (every Delta type deltalake writes, a struct,
      a list, a map, nulls; partition p with a '/' and a space in its values)
  {"op": "rows", "path": P, "version": V|null}
      {"deltalake": [...], "duckdb": [...], "files": n}: the rows deltalake reads, and the
      rows DuckDB's read_parquet reads from the active files (hive partitioning off; the
      partition column is added from the add actions), each a sorted list of canonical
      JSON strings
  {"op": "parquet", "files": [F...]}
      {"duckdb": [...]}: the rows DuckDB reads from those Parquet files (for tables deltalake
      cannot open, e.g. with the deletionVectors reader feature)
"""
import datetime
import decimal
import json
import os
import sys
import urllib.parse

import deltalake
import duckdb
import pyarrow as pa


def canon(v):
    if isinstance(v, float):
        return "f:%.7g" % v
    if isinstance(v, decimal.Decimal):
        return "d:%s" % v
    if isinstance(v, (datetime.datetime, datetime.date)):
        if isinstance(v, datetime.datetime) and v.tzinfo is not None:
            v = v.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return "t:%s" % v.isoformat()
    if isinstance(v, bytes):
        return "b:%s" % v.hex()
    if isinstance(v, dict):
        return "{%s}" % ",".join("%s:%s" % (json.dumps(k), canon(v[k])) for k in sorted(v))
    if isinstance(v, (list, tuple)):
        if v and all(isinstance(x, tuple) and len(x) == 2 for x in v):  # pyarrow's map
            return canon(dict(v))  # DuckDB gives maps as dicts
        return "[%s]" % ",".join(canon(x) for x in v)
    return json.dumps(v)


def table_rows(rows):
    return sorted(canon(r) for r in rows)


def make(req):
    parts = ["a b", "x/y", None]
    for i in range(req["files"]):
        n = req["rows"]
        base = i * n
        cols = {
            "id": pa.array(range(base, base + n), pa.int64()),
            "i": pa.array([(j * 7919) % 1000 for j in range(n)], pa.int32()),
            "sh": pa.array([j % 100 for j in range(n)], pa.int16()),
            "s": pa.array([None if j % 11 == 0 else "s%05d" % ((j * 31) % 997) for j in range(n)]),
            "dbl": pa.array([j / 3.0 for j in range(n)]),
            "flag": pa.array([j % 3 == 0 for j in range(n)]),
            "day": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=j % 40)
                             for j in range(n)]),
            "ts": pa.array([datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
                            + datetime.timedelta(microseconds=1234567 * j) for j in range(n)],
                           pa.timestamp("us", tz="UTC")),
            "dec": pa.array([decimal.Decimal(j) / 100 for j in range(n)], pa.decimal128(10, 2)),
            "st": pa.array([{"x": j, "y": None if j % 5 == 0 else "y%d" % j} for j in range(n)]),
            "l": pa.array([[j, None, j + 1] if j % 4 else [] for j in range(n)], pa.list_(pa.int32())),
            "m": pa.array([[("k%d" % (j % 3), j)] for j in range(n)], pa.map_(pa.string(), pa.int64())),
        }
        if req.get("partitioned"):
            cols["p"] = pa.array([parts[(base + j) % 3] for j in range(n)])
        deltalake.write_deltalake(req["path"], pa.table(cols), mode="append",
                                  partition_by=["p"] if req.get("partitioned") else None)
    return {"version": deltalake.DeltaTable(req["path"]).version()}


def rows(req):
    v = req.get("version")
    dt = deltalake.DeltaTable(req["path"], version=v) if v is not None else deltalake.DeltaTable(req["path"])
    out = {"deltalake": table_rows(dt.to_pyarrow_table().to_pylist())}
    actions = pa.table(dt.get_add_actions(flatten=True)).to_pylist()
    out["files"] = len(actions)
    con = duckdb.connect()
    got = []
    for a in actions:
        f = os.path.join(req["path"], urllib.parse.unquote(a["path"]))  # as the log has it
        rel = con.execute("SELECT * FROM read_parquet(?, hive_partitioning = false)", [f])
        names = [d[0] for d in rel.description]
        for r in rel.fetchall():
            row = dict(zip(names, r))
            for k, val in a.items():
                if k.startswith("partition.") or k.startswith("partition_values."):
                    row[k.split(".", 1)[1]] = val
            got.append(row)
    out["duckdb"] = table_rows(got)
    return out


def parquet(req):
    con = duckdb.connect()
    got = []
    for f in req["files"]:
        rel = con.execute("SELECT * FROM read_parquet(?, hive_partitioning = false)", [f])
        names = [d[0] for d in rel.description]
        got += [dict(zip(names, r)) for r in rel.fetchall()]
    return {"duckdb": table_rows(got)}


if __name__ == "__main__":
    req = json.loads(sys.argv[1])
    try:
        res = {"make": make, "rows": rows, "parquet": parquet}[req["op"]](req)
    except Exception as e:  # the test shows the peer's error
        res = {"error": "%s: %s" % (type(e).__name__, e)}
    print(json.dumps(res))
