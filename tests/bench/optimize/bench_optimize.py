"""bench_optimize.py: OPTIMIZE by deltad (`deltactl table optimize --local`, a Release
build) against delta-rs (`deltalake` optimize.compact() and optimize.z_order()) on copies
of one generated table, in the same run.

The table: FILES Parquet files written by pyarrow and committed at once (10 columns: id bigint,
k int, g int, v double, w double, s string, t string, d date, ts timestamp, b boolean), ROWS
rows in all, unpartitioned; --appends writes them as FILES deltalake appends instead (slow).
Each contender gets its own copy per round; the rounds alternate contenders. Both use the
same target file size (TARGET bytes). Measured: wall time, and the peak RSS of the process
(deltactl's from wait4; delta-rs's from a child python's ru_maxrss) and the CPU seconds
(user + system; delta-rs runs several threads, deltad one, so on a loaded machine the wall
times favour delta-rs). Output: a Markdown
table of medians and the time ratios deltad / delta-rs; both sides' row counts and sums are
checked equal after each run.

Usage (under build-test/venv's python):
  bench_optimize.py [--small] [--rounds N] [--files N] [--rows N] [--target BYTES]
                    [--deltactl PATH] [--keep DIR] [--modes compact,zorder]
--small is 200 files of 1,000,000 rows in all (the full size is 2,000 files, 10,000,000
rows). deltactl defaults to build-bench/cmd/deltactl (built Release when missing)."""
import argparse
import datetime
import json
import os
import resource
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


def generate(path, files, rows):
    per = rows // files
    base = datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc)
    for f in range(files):
        lo = f * per
        ids = pa.array(range(lo, lo + per), pa.int64())
        t = pa.table({
            "id": ids,
            "k": pa.array([(i * 7919) % 100000 for i in range(lo, lo + per)], pa.int32()),
            "g": pa.array([i % 97 for i in range(lo, lo + per)], pa.int32()),
            "v": pa.array([i * 0.25 for i in range(lo, lo + per)]),
            "w": pa.array([((i * 31) % 1000) / 7.0 for i in range(lo, lo + per)]),
            "s": pa.array(["s%07d" % ((i * 13) % 1000003) for i in range(lo, lo + per)]),
            "t": pa.array(["tag%d" % (i % 50) for i in range(lo, lo + per)]),
            "d": pa.array([datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 365)
                           for i in range(lo, lo + per)]),
            "ts": pa.array([base + datetime.timedelta(seconds=i) for i in range(lo, lo + per)],
                           pa.timestamp("us", tz="UTC")),
            "b": pa.array([i % 3 == 0 for i in range(lo, lo + per)]),
        })
        deltalake.write_deltalake(path, t, mode="append")


def file_table(lo, per):
    """The rows [lo, lo + per) of the generated table, as pyarrow columns (vectorized)."""
    import pyarrow.compute as pc
    ids = pa.array(range(lo, lo + per), pa.int64())
    mod = lambda a, m: pc.subtract(a, pc.multiply(pc.divide(a, m), m))  # ints: floor division
    s_num = mod(pc.multiply(ids, 13), 1000003)
    return pa.table({
        "id": ids,
        "k": pc.cast(mod(pc.multiply(ids, 7919), 100000), pa.int32()),
        "g": pc.cast(mod(ids, 97), pa.int32()),
        "v": pc.multiply(pc.cast(ids, pa.float64()), 0.25),
        "w": pc.divide(pc.cast(mod(pc.multiply(ids, 31), 1000), pa.float64()), 7.0),
        "s": pc.binary_join_element_wise("s", pc.utf8_lpad(pc.cast(s_num, pa.string()), 7, "0"), ""),
        "t": pc.binary_join_element_wise("tag", pc.cast(mod(ids, 50), pa.string()), ""),
        "d": pc.cast(pc.cast(pc.add(mod(ids, 365), 19723), pa.int32()), pa.date32()),
        "ts": pc.cast(pc.add(pc.multiply(ids, 1_000_000), 1704067200000000),
                      pa.timestamp("us", tz="UTC")),
        "b": pc.equal(mod(ids, 3), 0),
    })


def generate_fast(path, files, rows):
    """The same rows as generate(), one snappy Parquet file per FILES (written by pyarrow) and
    one commit of all the adds (protocol 1/2, numeric stats), instead of FILES appends by
    deltalake (whose log replay per append makes 2,000 appends take an hour on the VM)."""
    import uuid
    import pyarrow.compute as pc
    import pyarrow.parquet as papq
    per = rows // files
    os.makedirs(os.path.join(path, "_delta_log"))
    fields = [("id", "long"), ("k", "integer"), ("g", "integer"), ("v", "double"),
              ("w", "double"), ("s", "string"), ("t", "string"), ("d", "date"),
              ("ts", "timestamp"), ("b", "boolean")]
    schema = {"type": "struct", "fields": [{"name": n, "type": t, "nullable": True,
                                            "metadata": {}} for n, t in fields]}
    now = int(time.time() * 1000)
    lines = [json.dumps({"protocol": {"minReaderVersion": 1, "minWriterVersion": 2}}),
             json.dumps({"metaData": {"id": str(uuid.uuid4()), "format": {"provider": "parquet",
                         "options": {}}, "schemaString": json.dumps(schema),
                         "partitionColumns": [], "configuration": {}, "createdTime": now}})]
    for f in range(files):
        t = file_table(f * per, per)
        name = "part-%05d-%s-c000.snappy.parquet" % (f, uuid.uuid4())
        papq.write_table(t, os.path.join(path, name), compression="snappy")
        mins, maxs = {}, {}
        for n in ("id", "k", "g", "v", "w"):
            mm = pc.min_max(t[n])
            mins[n], maxs[n] = mm["min"].as_py(), mm["max"].as_py()
        stats = {"numRecords": per, "minValues": mins, "maxValues": maxs,
                 "nullCount": {n: 0 for n, _ in fields}}
        lines.append(json.dumps({"add": {"path": name, "partitionValues": {},
                     "size": os.path.getsize(os.path.join(path, name)),
                     "modificationTime": now, "dataChange": True, "stats": json.dumps(stats)}}))
    lines.append(json.dumps({"commitInfo": {"timestamp": now, "operation": "WRITE"}}))
    with open(os.path.join(path, "_delta_log", "%020d.json" % 0), "w") as out:
        out.write("\n".join(lines) + "\n")


def check(path):
    t = deltalake.DeltaTable(path).to_pyarrow_table(columns=["id", "k"])
    import pyarrow.compute as pc
    return t.num_rows, pc.sum(t["id"]).as_py(), pc.sum(t["k"]).as_py()


DELTARS_CHILD = r'''
import json, resource, sys, time, deltalake
path, mode, target = sys.argv[1], sys.argv[2], int(sys.argv[3])
dt = deltalake.DeltaTable(path)
ru0 = resource.getrusage(resource.RUSAGE_SELF)
cpu0 = ru0.ru_utime + ru0.ru_stime
t0 = time.perf_counter()
if mode == "compact":
    m = dt.optimize.compact(target_size=target)
else:
    m = dt.optimize.z_order(["k", "s"], target_size=target)
el = time.perf_counter() - t0
ru = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"s": el, "cpu": ru.ru_utime + ru.ru_stime - cpu0, "rss": ru.ru_maxrss * 1024,
                  "added": m["numFilesAdded"], "removed": m["numFilesRemoved"]}))
'''


def run_deltars(path, mode, target):
    p = subprocess.run([sys.executable, "-c", DELTARS_CHILD, path, mode, str(target)],
                       capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def run_deltad(deltactl, path, mode, target):
    args = [deltactl, "--output", "json", "table", "optimize", path, "--local",
            "--target-size", str(target)]
    if mode == "zorder":
        args += ["--zorder-by", "k,s"]
    t0 = time.perf_counter()
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    _, status, ru = os.wait4(p.pid, 0)
    el = time.perf_counter() - t0
    out, err = p.stdout.read(), p.stderr.read()
    if status != 0:
        raise SystemExit("deltactl failed: %s" % err)
    doc = json.loads(out)  # one result (pretty-printed), or a list of them
    m = (doc[0] if isinstance(doc, list) else doc)["metrics"]
    m = json.loads(m) if isinstance(m, str) else m
    return {"s": el, "cpu": ru.ru_utime + ru.ru_stime, "rss": ru.ru_maxrss * 1024,
            "added": m["numFilesAdded"],
            "removed": m["numFilesRemoved"]}


def build_deltactl():
    b = os.path.join(ROOT, "build-bench")
    subprocess.run(["cmake", "-S", ROOT, "-B", b, "-DCMAKE_BUILD_TYPE=Release", "-DDD_SANITIZE=OFF",
                    "-DDD_WERROR=OFF"], check=True, stdout=subprocess.DEVNULL)
    subprocess.run(["cmake", "--build", b, "--target", "deltactl", "-j2"], check=True,
                   stdout=subprocess.DEVNULL)
    return os.path.join(b, "cmd", "deltactl")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--files", type=int)
    ap.add_argument("--rows", type=int)
    ap.add_argument("--target", type=int, default=256 << 20)
    ap.add_argument("--deltactl")
    ap.add_argument("--keep")
    ap.add_argument("--modes", default="compact,zorder",
                    help="which operations to run (comma-separated: compact, zorder)")
    ap.add_argument("--appends", action="store_true",
                    help="generate by FILES deltalake appends (slow) instead of one commit")
    a = ap.parse_args()
    files = a.files or (200 if a.small else 2000)
    rows = a.rows or (1_000_000 if a.small else 10_000_000)
    deltactl = a.deltactl or os.path.join(ROOT, "build-bench", "cmd", "deltactl")
    if not os.path.exists(deltactl):
        deltactl = build_deltactl()
    work = a.keep or tempfile.mkdtemp(prefix="bench-opt-")
    src = os.path.join(work, "src")
    if not os.path.exists(src):
        t0 = time.perf_counter()
        (generate if a.appends else generate_fast)(src, files, rows)
        print("generated %d files, %d rows in %.1f s" % (files, rows, time.perf_counter() - t0),
              file=sys.stderr)
    want = check(src)
    res = {}
    modes = [m for m in ("compact", "zorder") if m in a.modes.split(",")]
    for r in range(a.rounds):
        for mode in modes:
            for who in (("deltad", "delta-rs") if r % 2 == 0 else ("delta-rs", "deltad")):
                copy = os.path.join(work, "copy")
                shutil.rmtree(copy, ignore_errors=True)
                shutil.copytree(src, copy)
                m = (run_deltad(deltactl, copy, mode, a.target) if who == "deltad"
                     else run_deltars(copy, mode, a.target))
                got = check(copy)
                if got != want:
                    raise SystemExit("%s %s changed the rows: %s != %s" % (who, mode, got, want))
                res.setdefault((mode, who), []).append(m)
                print(mode, who, m, file=sys.stderr)
    print("| operation | deltad s | delta-rs s | ratio | deltad CPU s | delta-rs CPU s | CPU ratio "
          "| deltad peak RSS MiB | delta-rs peak RSS MiB | files removed / added (deltad, delta-rs) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for mode in modes:
        d, x = res[(mode, "deltad")], res[(mode, "delta-rs")]
        ds = statistics.median(m["s"] for m in d)
        xs = statistics.median(m["s"] for m in x)
        dc = statistics.median(m["cpu"] for m in d)
        xc = statistics.median(m["cpu"] for m in x)
        print("| %s | %.2f | %.2f | %.2fx | %.2f | %.2f | %.2fx | %.0f | %.0f | %d/%d, %d/%d |" % (
            mode, ds, xs, ds / xs, dc, xc, dc / xc, statistics.median(m["rss"] for m in d) / 2**20,
            statistics.median(m["rss"] for m in x) / 2**20, d[0]["removed"], d[0]["added"],
            x[0]["removed"], x[0]["added"]))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    sys.stdout.flush()
    os._exit(0)  # deltalake's threads can abort the interpreter's shutdown


if __name__ == "__main__":
    main()
