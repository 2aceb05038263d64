"""delta_sharing_reads.py: runs under build-test/venv (scripts/peers.sh). Reads shared tables
with the official delta-sharing client, delta_sharing.load_as_pandas(PROFILE#share.schema.table),
once per PROFILE TABLE pair given, in order, and prints one JSON line per read:
{"profile": ..., "table": ..., "rows": N}.

usage: delta_sharing_reads.py PROFILE TABLE [PROFILE TABLE ...]"""
import json
import sys

import delta_sharing


def main():
    args = sys.argv[1:]
    for profile, table in zip(args[0::2], args[1::2]):
        df = delta_sharing.load_as_pandas(profile + "#" + table)
        print(json.dumps({"profile": profile, "table": table, "rows": len(df)}), flush=True)


if __name__ == "__main__":
    main()
