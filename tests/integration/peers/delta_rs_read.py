"""delta_rs_read.py: runs under build-test/venv (scripts/peers.sh). Opens each Delta table
given on the command line with delta-rs (the `deltalake` package), latest version or, with
--timestamp MS, the version as of that time (epoch milliseconds), and prints one JSON object
{path: {"version": V, "files": {relative path, decoded: size}} or {"error": "Type: message"}}
for the caller to compare with deltad.

usage: delta_rs_read.py [--timestamp MS] PATH..."""
import datetime
import json
import sys
import urllib.parse

import deltalake
import pyarrow as pa


def read(path, ts_ms):
    try:
        dt = deltalake.DeltaTable(path)
        if ts_ms is not None:
            dt.load_as_version(datetime.datetime.fromtimestamp(ts_ms / 1000, datetime.timezone.utc))
        adds = pa.table(dt.get_add_actions(flatten=True))
        paths = adds.column("path").to_pylist()
        sizes = adds.column("size_bytes").to_pylist()
        files = {urllib.parse.unquote(p): s for p, s in zip(paths, sizes)}
        return {"version": dt.version(), "files": files}
    except Exception as e:  # the caller compares failures too
        return {"error": "%s: %s" % (type(e).__name__, e)}


def main():
    args = sys.argv[1:]
    ts_ms = None
    if args and args[0] == "--timestamp":
        ts_ms = int(args[1])
        args = args[2:]
    print(json.dumps({p: read(p, ts_ms) for p in args}))


if __name__ == "__main__":
    main()
