"""dd_stores.py: what the object-store tests share: starting s3rver (the local S3 stand-in
from tests/js/s3), moto's S3 server (the S3 stand-in that honours conditional puts, from
build-test/venv-stores), Azurite, reading NDJSON, and reducing protocol lines to what must
be equal whichever store a table is read from."""
import json
import os
import re
import subprocess
import unittest
import urllib.parse

import requests

import dd_harness as h

S3JS = os.path.join(h.ROOT, "tests", "js", "s3")
AZJS = os.path.join(h.ROOT, "tests", "js", "azure")
PEERS = os.path.join(h.ROOT, "tests", "integration", "peers")
AZ_ACCOUNT = "devstoreaccount1"
# The emulator's published development key (not a secret, but it must not leak either).
AZ_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="


def stores_venv():
    """build-test/venv-stores with scripts/peers-stores.txt installed (fails when it cannot
    install: a peer test never skips silently)."""
    venv = os.environ.get("DD_VENV_STORES") or os.path.join(
        os.path.dirname(os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))),
        "venv-stores")
    subprocess.run(["bash", os.path.join(h.ROOT, "scripts", "peers.sh"), venv,
                    os.path.join(h.ROOT, "scripts", "peers-stores.txt")], check=True)
    return venv


def _port_of(p, what):
    line = p.stdout.readline()
    m = re.match(r"PORT (\d+)", line)
    if not m:
        p.kill()
        raise RuntimeError("%s did not start: %r %r" % (what, line, p.stderr.read()))
    return m.group(1)


def start_moto(buckets):
    """Starts moto's S3 server with the buckets; returns (process, endpoint URL)."""
    py = os.path.join(stores_venv(), "bin", "python")
    p = subprocess.Popen([py, os.path.join(PEERS, "moto_s3.py")] + list(buckets),
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p, "http://127.0.0.1:%s" % _port_of(p, "moto")


def stop_procs(procs):
    """Kills the emulator processes and closes their pipes."""
    for p in procs:
        p.kill()
        p.wait()
        for s in (p.stdout, p.stderr):
            if s:
                s.close()


def start_azurite(directory):
    """Starts Azurite's Blob service under directory; returns (process, endpoint URL with
    the account)."""
    if not os.path.isdir(os.path.join(AZJS, "node_modules", "azurite")):
        raise unittest.SkipTest("azurite is not installed (run scripts/setup.sh)")
    p = subprocess.Popen(["node", os.path.join(AZJS, "azurite.mjs"), directory],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    return p, "http://127.0.0.1:%s/%s" % (_port_of(p, "azurite"), AZ_ACCOUNT)


def az_node(*args):
    """Runs tests/js/azure/blobs.mjs (Microsoft's SDK); returns its output."""
    r = subprocess.run(["node", os.path.join(AZJS, "blobs.mjs")] + list(args),
                       capture_output=True, text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("blobs.mjs %s failed: %s" % (args[0], r.stderr))
    return r.stdout.strip()


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


def s3rver_put_tree(endpoint, bucket, prefix, directory):
    """Uploads every file under directory to s3rver (which takes unsigned requests) as
    bucket/prefix/<relative path>; returns the count."""
    n = 0
    for root, _, files in os.walk(directory):
        for f in files:
            key = prefix + "/" + os.path.relpath(os.path.join(root, f), directory)
            with open(os.path.join(root, f), "rb") as fh:
                r = requests.put("%s/%s/%s" % (endpoint, bucket, urllib.parse.quote(key)), data=fh.read())
            assert r.status_code == 200, (key, r.status_code, r.text)
            n += 1
    return n


def admin(server, method, path, body, expect=200):
    """One admin REST call on server; asserts the status and returns the JSON body."""
    r = requests.request(method, server.rest + path, json=body,
                         headers={"Authorization": "Bearer " + server.token})
    assert r.status_code == expect, (path, r.status_code, r.text)
    return r.json()


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
