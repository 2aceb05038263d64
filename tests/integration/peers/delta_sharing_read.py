"""delta_sharing_read.py: runs under build-test/venv (scripts/peers.sh). Reads a shared table
with the official delta-sharing client, delta_sharing.load_as_pandas(PROFILE#share.schema.table),
and the expected rows from a folder of Parquet files with pyarrow, and prints both as one
JSON object {"got": [...], "expected": [...]}, rows sorted, for the caller to compare.
With --probe it only lists the tables, without the client's retries (ten, with backoff,
on a connection error), and prints {"tables": [...]} or {"error": "..."}.

usage: delta_sharing_read.py PROFILE TABLE EXPECTED_DIR
       delta_sharing_read.py PROFILE --probe"""
import glob
import json
import os
import sys

import delta_sharing
import pyarrow.parquet as pq


def rows(df):
    out = [{k: (None if v != v else v) for k, v in r.items()} for r in df.to_dict("records")]
    return sorted(out, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def probe(profile):
    client = delta_sharing.SharingClient(profile)
    client._rest_client._num_retries = 0
    try:
        tables = [t.share + "." + t.schema + "." + t.name for t in client.list_all_tables()]
        print(json.dumps({"tables": tables}))
    except Exception as e:  # the caller checks which
        print(json.dumps({"error": "%s: %s" % (type(e).__name__, e)}))


def main():
    if sys.argv[2] == "--probe":
        return probe(sys.argv[1])
    profile, table, expected_dir = sys.argv[1:4]
    client = delta_sharing.SharingClient(profile)
    tables = [t.share + "." + t.schema + "." + t.name for t in client.list_all_tables()]
    got = delta_sharing.load_as_pandas(profile + "#" + table)
    files = sorted(glob.glob(os.path.join(expected_dir, "*.parquet")))
    import pandas as pd
    expected = pd.concat([pq.read_table(f).to_pandas() for f in files], ignore_index=True)
    print(json.dumps({"tables": tables, "got": rows(got), "expected": rows(expected)},
                     default=str))


if __name__ == "__main__":
    main()
