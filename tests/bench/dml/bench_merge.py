"""bench_merge.py: MERGE of 100,000 upserts (half matching rows spread over every file, half
new) into a table by deltad (`deltactl table merge --local` from a Parquet file, a Release
build) against delta-rs (`deltalake` DeltaTable.merge ... when_matched_update_all
.when_not_matched_insert_all, the source as an Arrow table), on copies of one generated
table, in the same run; deltad twice, copy-on-write and with deletion vectors (bench_dml.py's
table and enable_dvs). Measured: wall and CPU seconds of the process doing the merge
(delta-rs's in a child python that has read the source already). The updated and inserted
counts are checked equal. Output: a Markdown table of medians and the wall ratios.

Usage (under build-test/venv's python):
  bench_merge.py [--full] [--rounds N] [--deltactl PATH] [--baseline PATH] [--no-dv] [--keep DIR]
The default size is 100 files / 1,000,000 rows (minutes on the 2-core VM); --full is the
issue's 1,000 files / 10,000,000 rows. --baseline, --no-dv and --keep as bench_dml.py's."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import time

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_dml import add_common_args, rounds, setup, table  # noqa: E402

UPSERTS = 100000


def source(rows):
    """Half the ids matching (every 2*rows/UPSERTS-th id), half past the end."""
    step = max(1, rows // (UPSERTS // 2))
    ids = [i * step for i in range(UPSERTS // 2)] + [rows + i for i in range(UPSERTS // 2)]
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "k": pa.array([-1] * len(ids), pa.int32()),
        "v": pa.array([i * 0.5 for i in ids]),
        "s": pa.array(["new%07d" % i for i in ids]),
    })


DELTARS_CHILD = r'''
import json, resource, sys, time, deltalake, pyarrow.parquet as pq
path, src = sys.argv[1], pq.read_table(sys.argv[2])
dt = deltalake.DeltaTable(path)
ru0 = resource.getrusage(resource.RUSAGE_SELF)
cpu0 = ru0.ru_utime + ru0.ru_stime
t0 = time.perf_counter()
m = (dt.merge(src, "t.id = s.id", source_alias="s", target_alias="t")
     .when_matched_update_all().when_not_matched_insert_all().execute())
el = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"s": el, "cpu": ru.ru_utime + ru.ru_stime - cpu0,
                  "counts": [m["num_target_rows_updated"], m["num_target_rows_inserted"]]}))
'''


def run_deltars(path, src):
    p = subprocess.run([sys.executable, "-c", DELTARS_CHILD, path, src], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def run_deltad(deltactl, path, src):
    args = [deltactl, "--output", "jsonl", "table", "merge", path, "--source", src, "--on", "t.id = s.id",
            "--when-matched-update-all", "--when-not-matched-insert-all", "--local"]
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    el = time.perf_counter() - t0
    out, err = p.stdout.read(), p.stderr.read()
    if status != 0:
        raise SystemExit("deltactl failed: %s" % err)
    r = json.loads(out.splitlines()[0])
    return {"s": el, "cpu": ru.ru_utime + ru.ru_stime,
            "counts": [int(r["numUpdatedRows"]), int(r["numInsertedRows"])]}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--full", action="store_true")
    add_common_args(ap)
    a = ap.parse_args()
    files, rows = (1000, 10000000) if a.full else (100, 1000000)
    print("load average before: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    tmp, base, who = setup(a, "dd-bench-merge-", files, rows)
    try:
        src = os.path.join(tmp, "upserts.parquet")
        pq.write_table(source(rows), src)
        runs = rounds(a, tmp, base, who,
                      lambda bin_, copy: run_deltars(copy, src) if bin_ is None else run_deltad(bin_, copy, src))
        want = runs["delta-rs"][0]["counts"]
        for w, rs in runs.items():
            for x in rs:
                if x["counts"] != want:
                    raise SystemExit("%s: updated/inserted %s, delta-rs %s" % (w, x["counts"], want))
        table("%d files, %d rows, %d upserts (%d updated, %d inserted), %d rounds"
              % (files, rows, UPSERTS, want[0], want[1], a.rounds), runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
