"""dml_cdf_peer.py: runs under build-test/venv. delta-rs's change data feed of tables
deltad changed, and the columns of their change data files.

usage: dml_cdf_peer.py REQ_JSON
  REQ_JSON: a list of {"path": P, "version": V}
Prints one JSON list, per request {"rows": [row dicts of load_cdf(starting_version=V),
_commit_timestamp left out], "cdc_columns": [[column names] of each file under
_change_data/]} or {"error": "Type: message"}."""
import datetime
import decimal
import json
import os
import sys

import deltalake
import pyarrow as pa
import pyarrow.parquet as pq


def canon(v):
    if isinstance(v, (datetime.date, datetime.datetime, decimal.Decimal)):
        return str(v)
    if isinstance(v, bytes):
        return v.hex()
    return v


def one(req):
    dt = deltalake.DeltaTable(req["path"])
    reader = dt.load_cdf(starting_version=req["version"])
    rows = [{k: canon(v) for k, v in r.items() if k != "_commit_timestamp"}
            for r in pa.table(reader.read_all()).to_pylist()]
    cols = []
    for d, _, fs in os.walk(os.path.join(req["path"], "_change_data")):
        for f in sorted(fs):
            if f.endswith(".parquet"):
                cols.append(pq.read_schema(os.path.join(d, f)).names)
    return {"rows": rows, "cdc_columns": cols}


def main():
    out = []
    for req in json.loads(sys.argv[1]):
        try:
            out.append(one(req))
        except Exception as e:  # the caller asserts which
            out.append({"error": "%s: %s" % (type(e).__name__, str(e)[:800])})
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    main()
