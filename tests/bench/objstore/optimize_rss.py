#!/usr/bin/python3
"""optimize_rss.py: deltad's peak memory during an OPTIMIZE of a table on S3 (moto's S3
server, from build-test/venv-stores), and the bytes a projected scan of the result
receives, for two deltad binaries in the same run (before and after streamed puts and
ranged reads), rounds alternating.

The table: FILES files written by delta-rs, ROWS rows each of an id and 48 random base64
characters (little to compress), so OPTIMIZE writes one file of about FILES x ROWS x 57
bytes. Peak memory is deltad's VmHWM, reset (/proc/PID/clear_refs) just before the OPTIMIZE;
bytes are deltad's deltad_objstore_http_received_bytes_total around
`deltactl table scan URL --columns id`. Prints a Markdown table.

usage: DELTACTL_BIN=... tests/bench/objstore/optimize_rss.py BASE_DELTAD NEW_DELTAD
         [--files 6] [--rows 150000] [--rounds 2]"""
import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "integration"))
import dd_harness as h  # noqa: E402
from dd_stores import admin, start_moto  # noqa: E402
from s3_requests import metric  # noqa: E402

WRITE = r"""
import base64, os, sys, deltalake, pyarrow as pa
files, rows = int(sys.argv[2]), int(sys.argv[3])
for k in range(files):
    ids = list(range(k * rows, (k + 1) * rows))
    pay = [base64.b64encode(os.urandom(36)).decode() for _ in ids]
    deltalake.write_deltalake(sys.argv[1], pa.table({'id': pa.array(ids, pa.int64()), 'payload': pay}),
                              mode='append')
"""


def ctl(server, *args):
    t0 = time.time()
    p = subprocess.run([os.environ["DELTACTL_BIN"], "--timeout", "3600", "--server", server.grpc_target,
                        "--token", server.token] + list(args), capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (args, p.stderr))
    return time.time() - t0, p.stdout


def hwm_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"^VmHWM:\s+(\d+) kB", f.read(), re.M).group(1))


def one_round(binary, endpoint, table, want_rows):
    os.environ["DELTAD_BIN"] = binary
    server = h.Server().start()
    try:
        admin(server, "POST", "/credentials", {"name": "moto", "aws": {
            "accessKeyId": "test", "secretAccessKey": "test", "region": "us-east-1"}})
        admin(server, "POST", "/locations", {"name": "lake", "url": "s3://lake/tables", "credential": "moto",
                                             "properties": {"endpoint": endpoint, "path_style": "true"}})
        url = "s3://lake/tables/" + table
        ctl(server, "--output", "json", "table", "detail", url)  # the snapshot, before the reset
        pid = server.proc.pid
        with open("/proc/%d/clear_refs" % pid, "w") as f:
            f.write("5")
        start_kb = hwm_kb(pid)
        secs, _ = ctl(server, "table", "optimize", url)
        peak_kb = hwm_kb(pid)
        b0 = metric(server, "deltad_objstore_http_received_bytes_total")
        _, out = ctl(server, "--output", "jsonl", "table", "scan", url, "--columns", "id")
        got = metric(server, "deltad_objstore_http_received_bytes_total") - b0
        if len(out.splitlines()) != want_rows:
            raise RuntimeError("scan of %s: %d rows, want %d" % (url, len(out.splitlines()), want_rows))
        _, detail = ctl(server, "--output", "json", "table", "detail", url)
        size = int(re.search(r'"sizeInBytes":\s*"?(\d+)', detail).group(1))
        return {"start": start_kb, "peak": peak_kb, "secs": secs, "scan_bytes": got, "size": size}
    finally:
        server.stop()
        server.cleanup()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("base")
    ap.add_argument("new")
    ap.add_argument("--files", type=int, default=6)
    ap.add_argument("--rows", type=int, default=150000)
    ap.add_argument("--rounds", type=int, default=2)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dd-optrss-")
    src = os.path.join(tmp, "t")
    py = os.path.join(os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv")), "bin", "python")
    subprocess.run([py, "-c", WRITE, src, str(a.files), str(a.rows)], check=True)
    in_bytes = sum(os.path.getsize(os.path.join(src, f)) for f in os.listdir(src) if f.endswith(".parquet"))
    names = ["%s-%d" % (k, r) for r in range(a.rounds) for k in ("base", "new")]
    moto, endpoint = start_moto(["lake"] + ["lake/tables/%s=%s" % (n, src) for n in names])
    res = {"base": [], "new": []}
    try:
        for n in names:
            kind = n.split("-")[0]
            res[kind].append(one_round(a.base if kind == "base" else a.new, endpoint, n, a.files * a.rows))
    finally:
        moto.kill()
        moto.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print("## OPTIMIZE on S3: peak memory, and a projected scan's bytes (#15, moto, %s)\n" % time.strftime("%Y-%m-%d"))
    print("Command: `DELTACTL_BIN=... %s`\n" % " ".join(["tests/bench/objstore/optimize_rss.py"] + sys.argv[1:]))
    print("%d input files, %d bytes; %d rounds each, alternating.\n" % (a.files, in_bytes, a.rounds))
    print("| deltad | output file bytes | VmHWM before (MiB) | VmHWM peak, min / median (MiB) | peak - before, median (MiB) | optimize s, median | scan --columns id bytes received, median |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for kind in ("base", "new"):
        r = res[kind]
        peaks = [x["peak"] / 1024.0 for x in r]
        print("| %s | %d | %.0f | %.0f / %.0f | %.0f | %.1f | %d |" % (
            kind, r[0]["size"], statistics.median(x["start"] / 1024.0 for x in r), min(peaks),
            statistics.median(peaks), statistics.median((x["peak"] - x["start"]) / 1024.0 for x in r),
            statistics.median(x["secs"] for x in r), statistics.median(x["scan_bytes"] for x in r)))


if __name__ == "__main__":
    main()
