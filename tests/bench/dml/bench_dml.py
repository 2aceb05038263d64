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
               [--baseline PATH] [--no-dv] [--keep DIR]
--small is 100 files of 1,000,000 rows in all (the full size is 1,000 files, 10,000,000
rows). deltactl defaults to build-bench/cmd/deltactl (built Release when missing).
--baseline adds a second deltactl (copy-on-write, "deltad-baseline") to every round, so two
builds alternate in one run; --no-dv leaves out the deletion-vector contender; --keep
generates the table into DIR once and reuses it on later runs. Each row shows the median
and, after the slash, the minimum."""
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


def add_common_args(ap):
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--deltactl")
    ap.add_argument("--baseline", help="a second deltactl, run copy-on-write in every round")
    ap.add_argument("--no-dv", action="store_true", help="leave out the deletion-vector contender")
    ap.add_argument("--keep", help="generate the table here once and reuse it")


def setup(a, prefix, files, rows):
    """(deltactl, tmp, base, contenders): the table generated (or kept from --keep)."""
    deltactl = a.deltactl or os.path.join(ROOT, "build-bench", "cmd", "deltactl")
    if not os.path.exists(deltactl):
        deltactl = build_deltactl()
    tmp = tempfile.mkdtemp(prefix=prefix)
    base = os.path.join(a.keep, "base-%d-%d" % (files, rows)) if a.keep else os.path.join(tmp, "base")
    if not os.path.exists(os.path.join(base, "_delta_log")):
        shutil.rmtree(base, ignore_errors=True)
        generate(base, files, rows)
    who = {"deltad": deltactl}
    if a.baseline:
        who["deltad-baseline"] = a.baseline
    if not a.no_dv:
        who["deltad-dv"] = deltactl
    who["delta-rs"] = None
    return tmp, base, who


def rounds(a, tmp, base, who, run):
    """Every contender once per round, in turn, each on its own copy of base."""
    runs = {w: [] for w in who}
    for r in range(a.rounds):
        for w, bin_ in who.items():
            copy = os.path.join(tmp, "%s-%d" % (w, r))
            shutil.copytree(base, copy)
            if w == "deltad-dv":
                enable_dvs(copy)
            runs[w].append(run(bin_, copy))
            shutil.rmtree(copy)
    return runs


def table(head, runs):
    """Markdown rows: median / min of wall and CPU seconds, the median wall ratio."""
    med = {w: {k: statistics.median(x[k] for x in rs) for k in ("s", "cpu")} for w, rs in runs.items()}
    low = {w: {k: min(x[k] for x in rs) for k in ("s", "cpu")} for w, rs in runs.items()}
    print("| %s | wall s median / min | CPU s median / min | wall vs delta-rs (median) |" % head)
    print("|---|---|---|---|")
    for w, m in med.items():
        print("| %s | %.2f / %.2f | %.2f / %.2f | %.2fx |" % (w, m["s"], low[w]["s"], m["cpu"], low[w]["cpu"],
                                                            m["s"] / med["delta-rs"]["s"]))
    print("load average after: %s" % " ".join("%.2f" % x for x in os.getloadavg()))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--files", type=int)
    ap.add_argument("--rows", type=int)
    add_common_args(ap)
    a = ap.parse_args()
    files = a.files or (100 if a.small else 1000)
    rows = a.rows or (1000000 if a.small else 10000000)
    print("load average before: %s" % " ".join("%.2f" % x for x in os.getloadavg()))
    tmp, base, who = setup(a, "dd-bench-dml-", files, rows)
    try:
        runs = rounds(a, tmp, base, who,
                      lambda bin_, copy: run_deltars(copy) if bin_ is None else run_deltad(bin_, copy))
        want = runs["delta-rs"][0]["deleted"]
        for w, rs in runs.items():
            for x in rs:
                if x["deleted"] != want:
                    raise SystemExit("%s deleted %s rows, delta-rs %s" % (w, x["deleted"], want))
        # (peak RSS is not shown: both children inherit this python's high-water mark at fork)
        table("%d files, %d rows, delete `%s` (%d rows), %d rounds" % (files, rows, PRED, want, a.rounds), runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
