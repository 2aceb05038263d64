"""dd_stores.py: what the object-store sharing tests share: starting s3rver (the local S3
stand-in from tests/js/s3), reading NDJSON, and reducing protocol lines to what must be
equal whichever store a table is read from."""
import json
import os
import re
import subprocess
import unittest

import dd_harness as h

S3JS = os.path.join(h.ROOT, "tests", "js", "s3")


def ndjson(text):
    return [json.loads(l) for l in text.splitlines() if l]


def start_s3(directory):
    """Starts s3rver storing under directory; returns (process, endpoint URL)."""
    if not os.path.isdir(os.path.join(S3JS, "node_modules", "s3rver")):
        raise unittest.SkipTest("s3rver is not installed (run scripts/setup.sh)")
    # s3rver's continuation tokens use DES, which Node 17+ has only in the legacy provider
    p = subprocess.Popen(["node", "--openssl-legacy-provider", os.path.join(S3JS, "s3server.mjs"),
                          directory],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.match(r"PORT (\d+)", line)
    if not m:
        p.kill()
        raise RuntimeError("s3rver did not start: %r %r" % (line, p.stderr.read()))
    return p, "http://127.0.0.1:%s" % m.group(1)


def strip_lines(lines, keep_time=True):
    """Protocol lines without what differs between stores (URLs, expiry; and, unless
    keep_time, commit timestamps, which come from object times: upload time in a test
    store), sorted, as JSON strings."""
    out = []
    for l in lines:
        l = json.loads(json.dumps(l))
        for k in ("file", "add", "cdf", "remove"):
            if k in l:
                l[k].pop("url", None)
                l[k].pop("expirationTimestamp", None)
                if not keep_time:
                    l[k].pop("timestamp", None)
                if "deltaSingleAction" in l[k]:
                    for a in l[k]["deltaSingleAction"].values():
                        if isinstance(a, dict):
                            a.pop("path", None)
                            dv = a.get("deletionVector") or {}
                            if dv.get("storageType") == "p":
                                dv.pop("pathOrInlineDv")
        out.append(l)
    return sorted(json.dumps(l, sort_keys=True) for l in out)
