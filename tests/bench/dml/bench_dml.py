"""bench_dml.py: DELETE of 1% of the rows of a table spread over all its files by deltad
(`deltactl table delete --local`, a Release build) against delta-rs (`deltalake`
DeltaTable.delete), on copies of one generated table, in the same run; deltad twice: with
copy-on-write rewrites and with deletion vectors (the copy gets the deletionVectors
feature and delta.enableDeletionVectors=true; delta-rs does not write deletion vectors).

The table: FILES appends written by deltalake (id bigint, k int, v double, s string),
ROWS rows in all; the predicate `id % 100 = 7` hits every file. Each contender gets its
own copy per round; rounds alternate contenders. Measured: wall time and CPU seconds of
the process (deltactl's from wait4; delta-rs's in a child python). Output: a Markdown table of medians and the time ratios deltad / delta-rs; the
deleted row counts are checked equal.

Usage (under build-test/venv's python):
  bench_dml.py [--small] [--rounds N] [--files N] [--rows N] [--deltactl PATH]
--small is 100 files of 1,000,000 rows in all (the full size is 1,000 files, 10,000,000
rows). deltactl defaults to build-bench/cmd/deltactl (built Release when missing)."""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

import deltalake
import pyarrow as pa

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "optimize"))
from bench_optimize import build_deltactl  # noqa: E402 (the same Release build)
PRED = "id % 100 = 7"


def generate(path, files, rows):
    per = rows // files
    for f in range(files):
        lo = f * per
        t = pa.table({
            "id": pa.array(range(lo, lo + per), pa.int64()),
            "k": pa.array([(i * 7919) % 100000 for i in range(lo, lo + per)], pa.int32()),
            "v": pa.array([i * 0.25 for i in range(lo, lo + per)]),
            "s": pa.array(["s%07d" % ((i * 13) % 1000003) for i in range(lo, lo + per)]),
        })
        deltalake.write_deltalake(path, t, mode="append")


def enable_dvs(path):
    """Adds the deletionVectors feature and property in one commit (as ALTER TABLE would)."""
    log = os.path.join(path, "_delta_log")
    last = max(int(f[:20]) for f in os.listdir(log) if f.endswith(".json"))
    md = None
    with open(os.path.join(log, "%020d.json" % 0)) as f:
        for line in f:
            a = json.loads(line)
            md = a.get("metaData", md)
    md["configuration"]["delta.enableDeletionVectors"] = "true"
    proto = {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"],
             "writerFeatures": ["deletionVectors"]}
    with open(os.path.join(log, "%020d.json" % (last + 1)), "w") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": int(time.time() * 1000),
                                           "operation": "SET TBLPROPERTIES"}}) + "\n")
        f.write(json.dumps({"protocol": proto}) + "\n")
        f.write(json.dumps({"metaData": md}) + "\n")


DELTARS_CHILD = r'''
import json, resource, sys, time, deltalake
path, pred = sys.argv[1], sys.argv[2]
dt = deltalake.DeltaTable(path)
ru0 = resource.getrusage(resource.RUSAGE_SELF)
cpu0 = ru0.ru_utime + ru0.ru_stime
t0 = time.perf_counter()
m = dt.delete(pred)
el = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"s": el, "cpu": ru.ru_utime + ru.ru_stime - cpu0, "rss": ru.ru_maxrss * 1024,
                  "deleted": m["num_deleted_rows"]}))
'''


def run_deltars(path):
    p = subprocess.run([sys.executable, "-c", DELTARS_CHILD, path, PRED],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def run_deltad(deltactl, path):
    args = [deltactl, "--output", "jsonl", "table", "delete", path, "--where", PRED, "--local"]
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    el = time.perf_counter() - t0
    out, err = p.stdout.read(), p.stderr.read()
    if status != 0:
        raise SystemExit("deltactl failed: %s" % err)
    return {"s": el, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss * 1024,
            "deleted": int(json.loads(out.splitlines()[0])["numAffectedRows"])}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--files", type=int)
    ap.add_argument("--rows", type=int)
    ap.add_argument("--deltactl")
    a = ap.parse_args()
    files = a.files or (100 if a.small else 1000)
    rows = a.rows or (1000000 if a.small else 10000000)
    deltactl = a.deltactl or os.path.join(ROOT, "build-bench", "cmd", "deltactl")
    if not os.path.exists(deltactl):
        deltactl = build_deltactl()
    tmp = tempfile.mkdtemp(prefix="dd-bench-dml-")
    try:
        base = os.path.join(tmp, "base")
        generate(base, files, rows)
        runs = {"deltad": [], "deltad-dv": [], "delta-rs": []}
        for r in range(a.rounds):
            for who in runs:
                copy = os.path.join(tmp, "%s-%d" % (who, r))
                shutil.copytree(base, copy)
                if who == "deltad-dv":
                    enable_dvs(copy)
                res = run_deltars(copy) if who == "delta-rs" else run_deltad(deltactl, copy)
                runs[who].append(res)
                shutil.rmtree(copy)
        want = runs["delta-rs"][0]["deleted"]
        for who, rs in runs.items():
            for x in rs:
                if x["deleted"] != want:
                    raise SystemExit("%s deleted %s rows, delta-rs %s" % (who, x["deleted"], want))
        med = {w: {k: statistics.median(x[k] for x in rs) for k in ("s", "cpu", "rss")}
               for w, rs in runs.items()}
        # (peak RSS is not shown: both children inherit this python's high-water mark at fork)
        print("| %d files, %d rows, delete `%s` (%d rows) | wall s | CPU s | wall vs delta-rs |"
              % (files, rows, PRED, want))
        print("|---|---|---|---|")
        for w, m in med.items():
            print("| %s | %.2f | %.2f | %.2fx |" % (w, m["s"], m["cpu"], m["s"] / med["delta-rs"]["s"]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
