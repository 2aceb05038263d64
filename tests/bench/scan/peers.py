"""peers.py TABLE REPS [--partitioned]: the same full scan to Arrow by DuckDB (python duckdb 2.x: to_arrow_table,
2 threads, read_parquet over the snapshot's active files, hive partitions for the partition
column) and by delta-rs (DeltaTable.to_pyarrow_table), REPS times each, one line a run:
"duckdb rows=N seconds=S" / "delta-rs rows=N seconds=S". Runs under build-test/venv.
peers.py TABLE REPS --where-lt COL N: delta-rs only, to_pyarrow_table(filters=[(COL, "<", N)])
(file skipping by stats, then the rows filtered)."""
import os
import sys
import time

import deltalake
import duckdb


def main():
    path, reps = sys.argv[1], int(sys.argv[2])
    partitioned = "--partitioned" in sys.argv[3:]
    if "--where-lt" in sys.argv[3:]:
        i = sys.argv.index("--where-lt")
        col, n = sys.argv[i + 1], int(sys.argv[i + 2])
        for _ in range(reps):
            t0 = time.monotonic()
            tbl = deltalake.DeltaTable(path).to_pyarrow_table(filters=[(col, "<", n)])
            t1 = time.monotonic()
            print("delta-rs rows=%d seconds=%.3f" % (tbl.num_rows, t1 - t0), flush=True)
            del tbl
        return
    for _ in range(reps):
        t0 = time.monotonic()
        files = deltalake.DeltaTable(path).file_uris()
        con = duckdb.connect()
        con.execute("SET threads = 2")
        tbl = con.read_parquet(files, hive_partitioning=partitioned).to_arrow_table()
        t1 = time.monotonic()
        print("duckdb rows=%d seconds=%.3f" % (tbl.num_rows, t1 - t0), flush=True)
        del tbl
        con.close()
        t0 = time.monotonic()
        tbl = deltalake.DeltaTable(path).to_pyarrow_table()
        t1 = time.monotonic()
        print("delta-rs rows=%d seconds=%.3f" % (tbl.num_rows, t1 - t0), flush=True)
        del tbl


if __name__ == "__main__":
    main()
    sys.stdout.flush()
    # duckdb's and delta-rs's thread pools sometimes abort at interpreter exit
    # ("terminate called without an active exception"): leave without running it
    os._exit(0)
