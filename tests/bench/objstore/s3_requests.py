#!/usr/bin/python3
"""s3_requests.py: how many requests and bytes deltad spends on S3 (moto's S3 server, the
emulator that honours conditional puts; from build-test/venv-stores) for
  - vacuum of a table with N unreferenced objects (default 100,000), against the minimum
    the S3 API allows: one ListObjectsV2 page per 1,000 keys plus one DeleteObjects per
    1,000 keys;
  - the first snapshot of a table whose checkpoint holds F adds (default 100,000; made by
    bench_delta gen), against the bytes of its _delta_log.
Figures come from deltad's own counters (/metrics: deltad_objstore_http_requests_total and
deltad_objstore_http_received_bytes_total), read before and after each operation, so they
count every HTTP request of the server, retries included. Prints a Markdown table.

usage: DELTAD_BIN=... DELTACTL_BIN=... BENCH_DELTA=.../bench_delta \
         tests/bench/objstore/s3_requests.py [--objects N] [--files F]"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "integration"))
import dd_harness as h  # noqa: E402
from dd_stores import admin, start_moto  # noqa: E402

import botocore.session  # noqa: E402

SIMPLE = os.path.join(os.path.realpath(os.environ.get(
    "DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures"))), "delta-rs-data", "simple_table")


def metric(server, name):
    out = subprocess.run(["curl", "-s", "-H", "Authorization: Bearer " + server.token,
                          server.rest.rsplit("/api/", 1)[0] + "/metrics"],
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"^%s (\d+)$" % re.escape(name), out, re.M)
    return int(m.group(1)) if m else 0


def counters(server):
    return (metric(server, "deltad_objstore_http_requests_total"),
            metric(server, "deltad_objstore_http_received_bytes_total"))


def ctl(server, *args):
    t0 = time.time()
    p = subprocess.run([os.environ["DELTACTL_BIN"], "--timeout", "3600", "--server", server.grpc_target, "--token",
                        server.token] + list(args), capture_output=True, text=True, timeout=3600)
    if p.returncode != 0:
        raise RuntimeError("%s: %s" % (args, p.stderr))
    return time.time() - t0, p.stdout


def put_many(endpoint, bucket, prefix, n):
    s3 = botocore.session.get_session().create_client(
        "s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test",
        aws_secret_access_key="test")
    def one(i):
        s3.put_object(Bucket=bucket, Key="%s/junk/part-%06d-unreferenced.snappy.parquet" % (prefix, i),
                      Body=b"x")
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        list(pool.map(one, range(n)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=100000)
    ap.add_argument("--files", type=int, default=100000)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="dd-s3req-")
    big = os.path.join(tmp, "big")
    subprocess.run([os.environ["BENCH_DELTA"], "gen", big, str(a.files)], check=True,
                   capture_output=True)
    log_bytes = sum(os.path.getsize(os.path.join(big, "_delta_log", f))
                    for f in os.listdir(os.path.join(big, "_delta_log")))
    moto, endpoint = start_moto(["lake", "lake/tables/vac=" + SIMPLE,
                                 "lake/tables/big/_delta_log=" + os.path.join(big, "_delta_log")])
    server = h.Server()
    try:
        t0 = time.time()
        put_many(endpoint, "lake", "tables/vac", a.objects)
        put_s = time.time() - t0
        server.start()
        admin(server, "POST", "/credentials", {"name": "moto", "aws": {
            "accessKeyId": "test", "secretAccessKey": "test", "region": "us-east-1"}})
        admin(server, "POST", "/locations", {"name": "lake", "url": "s3://lake/tables",
                                             "credential": "moto",
                                             "properties": {"endpoint": endpoint, "path_style": "true"}})
        time.sleep(max(0.0, t0 + put_s + 11 - time.time()))  # deltad keeps files younger than 10 s
        r0, b0 = counters(server)
        snap_s, _ = ctl(server, "--output", "json", "table", "detail", "s3://lake/tables/big")
        r1, b1 = counters(server)
        vac_s, out = ctl(server, "--output", "json", "table", "vacuum", "s3://lake/tables/vac",
                         "--retain", "0", "--allow-short-retention")
        r2, b2 = counters(server)
        m = re.search(r'"numDeletedFiles":\s*(\d+)', out)
        deleted = int(m.group(1)) if m else -1
        minimum = 2 * -(-a.objects // 1000)
        print("## Object-store requests (#15), moto S3 (%s)\n" % time.strftime("%Y-%m-%d"))
        print("Command: `%s`\n" % " ".join(["tests/bench/objstore/s3_requests.py"] + sys.argv[1:]))
        print("| operation | objects | requests | per 1,000 | minimum (list pages + batch deletes) | bytes received | seconds |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        print("| vacuum (%d deleted) | %d | %d | %.2f | %d | %d | %.1f |" % (
            deleted, a.objects, r2 - r1, (r2 - r1) * 1000.0 / a.objects, minimum, b2 - b1, vac_s))
        print("| first snapshot (table detail) | %d files in the checkpoint | %d | - | - | %d (log: %d) | %.2f |" % (
            a.files, r1 - r0, b1 - b0, log_bytes, snap_s))
        print("\n(%d junk objects uploaded in %.0f s.)" % (a.objects, put_s))
    finally:
        server.stop()
        moto.kill()
        moto.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
