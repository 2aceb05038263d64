"""bench_merge.py: MERGE of 100,000 upserts (half matching rows spread over every file, half
new) into a table by deltad (`deltactl table merge --local` from a Parquet file, a Release
build) against delta-rs (`deltalake` DeltaTable.merge ... when_matched_update_all
.when_not_matched_insert_all, the source as an Arrow table), on copies of one generated
table, in the same run; deltad twice, copy-on-write and with deletion vectors (bench_dml.py's
table and enable_dvs). Measured: wall and CPU seconds of the process doing the merge
(delta-rs's in a child python that has read the source already). The updated and inserted
counts are checked equal. Output: a Markdown table of medians and the wall ratios.

Usage (under build-test/venv's python):
  bench_merge.py [--full] [--rounds N] [--deltactl PATH]
The default size is 100 files / 1,000,000 rows (minutes on the 2-core VM); --full is the
issue's 1,000 files / 10,000,000 rows."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import pyarrow as pa
import pyarrow.parquet as pq

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from bench_dml import ROOT, build_deltactl, enable_dvs, generate  # noqa: E402

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
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--deltactl")
    a = ap.parse_args()
    files, rows = (1000, 10000000) if a.full else (100, 1000000)
    deltactl = a.deltactl or os.path.join(ROOT, "build-bench", "cmd", "deltactl")
    if not os.path.exists(deltactl):
        deltactl = build_deltactl()
    tmp = tempfile.mkdtemp(prefix="dd-bench-merge-")
    try:
        base = os.path.join(tmp, "base")
        generate(base, files, rows)
        src = os.path.join(tmp, "upserts.parquet")
        pq.write_table(source(rows), src)
        runs = {"deltad": [], "deltad-dv": [], "delta-rs": []}
        for r in range(a.rounds):
            for who in runs:
                copy = os.path.join(tmp, "%s-%d" % (who, r))
                shutil.copytree(base, copy)
                if who == "deltad-dv":
                    enable_dvs(copy)
                runs[who].append(run_deltars(copy, src) if who == "delta-rs" else run_deltad(deltactl, copy, src))
                shutil.rmtree(copy)
        want = runs["delta-rs"][0]["counts"]
        for who, rs in runs.items():
            for x in rs:
                if x["counts"] != want:
                    raise SystemExit("%s: updated/inserted %s, delta-rs %s" % (who, x["counts"], want))
        med = {w: {k: statistics.median(x[k] for x in rs) for k in ("s", "cpu")} for w, rs in runs.items()}
        print("| %d files, %d rows, %d upserts (%d updated, %d inserted) | wall s | CPU s | wall vs delta-rs |"
              % (files, rows, UPSERTS, want[0], want[1]))
        print("|---|---|---|---|")
        for w, m in med.items():
            print("| %s | %.2f | %.2f | %.2fx |" % (w, m["s"], m["cpu"], m["s"] / med["delta-rs"]["s"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
