"""test_sharing_review.py: adversarial checks of sharing tables in S3 and of streamed replies.

Part 1 (s3rver from tests/js/s3, skipped when it is not installed): tables whose Delta logs
point outside their own prefix (absolute URLs into the sibling prefix tables/t2 or another
bucket, '..' in every spelling, absolute local paths, deletion vectors stored at an
absolute path, CDF files) must never yield a file URL outside s3://lake/tables/<table>/;
keys with odd characters ('?', '#', blanks, backslashes, CR/LF) stay inside it; an
endpoint holding a password is refused (at CreateStorageLocation) without showing it; the
AWS secret never appears.

Part 2 (local log-only tables, tests/bench/sharing_rest/gen_table.py): the streamed
query/changes replies when the handler fails after lines went out (the connection is cut,
the chunked body never terminated), clients that hang up before the first line, mid-way
or just before the end, many concurrent big queries, and SIGTERM while big queries are
streaming (exit 0, no sanitizer report).
"""
import http.server
import json
import os
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.parse

import requests

import dd_harness as h
from dd_stores import start_s3

GEN = os.path.join(h.ROOT, "tests", "bench", "sharing_rest", "gen_table.py")
SECRET = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYREVIEWSECRET"
PASSWORD = "hunter2pw"
SCHEMA = json.dumps({"type": "struct", "fields": [
    {"name": "id", "type": "long", "nullable": True, "metadata": {}}]})
SECRET_BYTES = b"PAR1 secret bytes of another table"

# add.path values (as written in the log, i.e. URI-encoded) that leave the table
ESCAPES = [
    "s3://lake/tables/t2/secret.parquet",
    "s3a://lake/tables/t2/secret.parquet",
    "s3://lake/tables/secret.parquet",
    "s3://lake/tables/evil/../t2/secret.parquet",
    "s3://lake/tables/evil/%2e%2e/t2/secret.parquet",
    "s3://other/tables/evil/secret.parquet",
    "s3://lake/tables/evil2/secret.parquet",
    "abfss://lake@acct.dfs.core.windows.net/tables/evil/x.parquet",
    "https://127.0.0.1:1/lake/tables/t2/secret.parquet",
    "file:///etc/passwd",
    "/etc/passwd",
    "//lake/tables/t2/secret.parquet",
    "%2Flake%2Ftables%2Ft2%2Fsecret.parquet",
    "../t2/secret.parquet",
    "%2e%2e/t2/secret.parquet",
    "%2E%2E%2Ft2%2Fsecret.parquet",
    "a/../../t2/secret.parquet",
    "a/%2e%2e/%2e%2e/t2/secret.parquet",
    "./../t2/secret.parquet",
    "..",
]
# odd but legal keys: the URL must stay in the table's prefix
ODD = [
    "a%3Fb.parquet", "a%23b.parquet", "a%20b.parquet", "a+b.parquet", "..%5C..%5Ct2%5Cx.parquet",
    "x%0D%0AHost:%20evil.parquet", "%252e%252e/t2/secret.parquet", "p%25q.parquet",
    "a//b.parquet", "x.parquet?prefix=t2", "x.parquet#frag",
]


def commit(actions):
    return "".join(json.dumps(a) + "\n" for a in actions).encode()


def proto_meta(cdf=False, dv=False):
    p = {"minReaderVersion": 1, "minWriterVersion": 2}
    if dv:
        p = {"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": ["deletionVectors"],
             "writerFeatures": ["deletionVectors"]}
    conf = {}
    if cdf:
        conf["delta.enableChangeDataFeed"] = "true"
    if dv:
        conf["delta.enableDeletionVectors"] = "true"
    return [{"protocol": p},
            {"metaData": {"id": "0b9f5c0e-1111-4222-8333-944455556666",
                          "format": {"provider": "parquet", "options": {}},
                          "schemaString": SCHEMA, "partitionColumns": [],
                          "configuration": conf, "createdTime": 1700000000000}}]


def add(path, **extra):
    a = {"path": path, "partitionValues": {}, "size": 10, "modificationTime": 1700000000000,
         "dataChange": True}
    a.update(extra)
    return {"add": a}


class ReviewS3(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-review-s3-")
        cls.s3, cls.endpoint = start_s3(os.path.join(cls.tmp, "store"))
        try:
            cls.upload()
            super().setUpClass()
            cls.setup_shares()
        except BaseException:
            cls.s3.kill()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.s3.kill()
        cls.s3.wait()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    @classmethod
    def put(cls, key, data):
        r = requests.put(cls.endpoint + "/lake/" + urllib.parse.quote(key), data=data)
        assert r.status_code == 200, (key, r.status_code)

    @classmethod
    def upload(cls):
        assert requests.put(cls.endpoint + "/lake").status_code == 200
        cls.put("tables/t2/secret.parquet", SECRET_BYTES)
        cls.put("tables/secret.parquet", SECRET_BYTES)
        cls.tables = {}
        for i, p in enumerate(ESCAPES):
            cls.tables["esc%02d" % i] = ("escape", p)
            cls.put("tables/esc%02d/_delta_log/%020d.json" % (i, 0),
                    commit(proto_meta() + [add("ok.parquet"), add(p)]))
        for i, p in enumerate(ODD):
            cls.tables["odd%02d" % i] = ("odd", p)
            cls.put("tables/odd%02d/_delta_log/%020d.json" % (i, 0), commit(proto_meta() + [add(p)]))
        # a deletion vector stored at an absolute path in the sibling table
        for i, dvp in enumerate(["s3://lake/tables/t2/secret.parquet", "../t2/secret.parquet",
                                 "s3://lake/tables/dv%02d/../t2/secret.parquet" % 1]):
            dv = {"storageType": "p", "pathOrInlineDv": dvp, "offset": 1, "sizeInBytes": 36,
                  "cardinality": 2}
            cls.tables["dv%02d" % i] = ("escape", dvp)
            cls.put("tables/dv%02d/_delta_log/%020d.json" % (i, 0),
                    commit(proto_meta(dv=True) + [add("ok.parquet", deletionVector=dv)]))
        # change data files pointing outside
        for i, cp in enumerate(["../t2/secret.parquet", "s3://lake/tables/t2/secret.parquet"]):
            name = "cdc%02d" % i
            cls.tables[name] = ("escape", cp)
            cls.put("tables/%s/_delta_log/%020d.json" % (name, 0),
                    commit(proto_meta(cdf=True) + [add("ok.parquet")]))
            cls.put("tables/%s/_delta_log/%020d.json" % (name, 1), commit([
                {"commitInfo": {"timestamp": 1700000001000, "operation": "UPDATE"}},
                {"cdc": {"path": cp, "partitionValues": {}, "size": 10, "dataChange": False}},
                add("ok2.parquet")]))

    @classmethod
    def admin(cls, method, path, body, expect=200):
        r = requests.request(method, cls.server.rest + path, json=body, headers=cls.A)
        assert r.status_code == expect, (path, r.status_code, r.text)
        return r.json()

    @classmethod
    def setup_shares(cls):
        cls.A = {"Authorization": "Bearer " + cls.server.token}
        cls.admin("POST", "/credentials", {"name": "aws1", "aws": {
            "accessKeyId": "S3RVER", "secretAccessKey": SECRET, "region": "eu-west-1"}})
        cls.admin("POST", "/locations", {"name": "lake", "url": "s3://lake/tables", "type": "S3",
                                         "credential": "aws1",
                                         "properties": {"endpoint": cls.endpoint}})
        host = cls.endpoint.split("//", 1)[1]
        # an endpoint holding a password is refused at creation, without showing it
        cls.pw_refused = cls.admin("POST", "/locations", {
            "name": "pw", "url": "s3://pwlake/t", "type": "S3", "credential": "aws1",
            "properties": {"endpoint": "http://admin:%s@%s" % (PASSWORD, host)}}, expect=400)
        cls.admin("POST", "/shares", {"name": "s"})
        cls.admin("POST", "/shares/s/schemas", {"name": "m"})
        for name in cls.tables:
            cls.admin("POST", "/shares/s/schemas/m/tables",
                      {"name": name, "location": "lake", "path": name, "historyShared": True})
        r = cls.admin("POST", "/recipients", {"name": "eve"})
        cls.R = {"Authorization": "Bearer " + r["bearerToken"]}
        cls.admin("POST", "/recipients/eve/grants/s", None)

    def call(self, table, what, body=None, caps=None, params=None):
        """The reply, with .text holding what arrived and .cut set when the server cut the
        connection mid-stream (how a failure after the first line is reported)."""
        hd = dict(self.R)
        if caps:
            hd["delta-sharing-capabilities"] = caps
        url = "%s/shares/s/schemas/m/tables/%s/%s" % (self.server.rest, table, what)
        if what == "changes":
            r = requests.get(url, headers=hd, params=params or {"startingVersion": 0}, stream=True)
        else:
            r = requests.post(url, data=json.dumps(body or {}), headers=hd, stream=True)
        got, r.cut = [], False
        try:
            for b in r.iter_content(1 << 16):
                got.append(b)
        except requests.exceptions.ChunkedEncodingError:
            r.cut = True
        r._content = b"".join(got)
        return r

    def urls_in(self, r):
        out = []
        for l in r.text.splitlines():
            out += re.findall(r'"(https?://[^"]*)"', l)
        return out

    def assert_inside(self, table, r, what):
        text = r.text + json.dumps(dict(r.headers))
        self.assertNotIn(SECRET, text)
        self.assertNotIn(urllib.parse.quote(SECRET, safe=""), text)
        for u in self.urls_in(r):
            u = json.loads('"%s"' % u)  # JSON string escapes
            sp = urllib.parse.urlsplit(u)
            self.assertEqual("%s://%s" % (sp.scheme, sp.netloc), self.endpoint, (what, u))
            path = urllib.parse.unquote(sp.path)
            self.assertTrue(path.startswith("/lake/tables/%s/" % table), (what, u))
            self.assertNotIn("..", path.split("/"), (what, u))
            self.assertNotIn(".", path.split("/"), (what, u))
            got = requests.get(u)
            self.assertNotEqual(got.content, SECRET_BYTES, (what, u))

    def test_paths_outside_the_table_never_signed(self):
        for name, (kind, p) in sorted(self.tables.items()):
            for what, caps in (("query", None), ("query", "responseformat=delta"),
                               ("changes", None), ("changes", "responseformat=delta")):
                with self.subTest(table=name, path=p, what=what, caps=caps):
                    r = self.call(name, what, caps=caps)
                    self.assert_inside(name, r, what)
                    if kind == "escape" and not (name.startswith("cdc") and what == "query"):
                        # refused: an error reply, or a stream cut before the entry
                        self.assertTrue(r.status_code >= 400 or r.cut, (r.status_code, r.text))
                        self.assertNotIn("t2/secret", urllib.parse.unquote(r.text))
                        self.assertNotIn("/etc/passwd", r.text)

    def test_odd_keys_stay_inside(self):
        for name, (kind, p) in sorted(self.tables.items()):
            if kind != "odd":
                continue
            with self.subTest(table=name, path=p):
                r = self.call(name, "query")
                self.assertEqual(r.status_code, 200, r.text)
                urls = self.urls_in(r)
                self.assertEqual(len(urls), 1, r.text)
                self.assert_inside(name, r, "query")
                key = urllib.parse.unquote(urllib.parse.urlsplit(json.loads('"%s"' % urls[0])).path)
                self.assertEqual(key, "/lake/tables/%s/%s" % (name, urllib.parse.unquote(p).replace("//", "/")))

    def test_endpoint_password_is_never_shown(self):
        self.assertNotIn(PASSWORD, json.dumps(self.pw_refused))
        self.assertIn("endpoint", self.pw_refused["message"])
        r = requests.get("%s/locations/pw" % self.server.rest, headers=self.A)
        self.assertEqual(r.status_code, 404, r.text)


def raw_request(u, path, auth, body="{}", method="POST"):
    s = socket.create_connection((u.hostname, u.port))
    s.sendall(("%s %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Length: %d\r\n"
               "Connection: close\r\n\r\n%s" % (method, path, auth, len(body), body)).encode())
    return s


def read_all(s, timeout=60):
    s.settimeout(timeout)
    chunks = []
    while True:
        try:
            b = s.recv(1 << 20)
        except ConnectionResetError:
            break
        if not b:
            break
        chunks.append(b)
    s.close()
    return b"".join(chunks)


class ReviewStream(h.ServerTest):
    NFILES = 30000

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="dd-review-stream-")
        big = os.path.join(cls.tmp, "big")
        subprocess.run(["/usr/bin/python3", GEN, big, str(cls.NFILES), "10"], check=True)
        # the same table with one file near its end that a parquet client cannot read (a
        # deletion vector): the failure comes mid-stream
        bad = os.path.join(cls.tmp, "bad")
        cls.bad_line(big, bad, lambda a: a["add"].update(deletionVector={
            "storageType": "i", "pathOrInlineDv": "wi5b=000010000siXQKl0rr91000f",
            "sizeInBytes": 40, "cardinality": 1}))
        # ... and one with an escaping path: refused before the first line
        escape = os.path.join(cls.tmp, "escape")
        cls.bad_line(big, escape, lambda a: a["add"].update(path="../../../etc/passwd"))
        cls.A = {"Authorization": "Bearer " + cls.server.token}
        B = cls.server.rest
        for path, body in (("/shares", {"name": "s"}), ("/shares/s/schemas", {"name": "m"}),
                           ("/shares/s/schemas/m/tables", {"name": "big", "url": "file://" + big}),
                           ("/shares/s/schemas/m/tables", {"name": "bad", "url": "file://" + bad}),
                           ("/shares/s/schemas/m/tables", {"name": "escape",
                                                           "url": "file://" + escape})):
            r = requests.post(B + path, json=body, headers=cls.A)
            assert r.status_code == 200, r.text
        cls.q = B + "/shares/s/schemas/m/tables/big/query"
        cls.u = urllib.parse.urlparse(cls.q)

    @staticmethod
    def bad_line(src, dst, change):
        """A copy of src whose 50th add from the end is changed in place by change()."""
        shutil.copytree(src, dst)
        c0 = os.path.join(dst, "_delta_log", "%020d.json" % 0)
        with open(c0) as f:
            lines = f.read().splitlines()
        a = json.loads(lines[-50])
        change(a)
        lines[-50] = json.dumps(a)
        with open(c0, "w") as f:
            f.write("\n".join(lines) + "\n")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def assert_alive(self):
        r = requests.post(self.q, data='{"maxFiles": 2}', headers=self.A)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(len([l for l in r.text.splitlines() if l.startswith('{"file"')]), 2)

    def test_failure_mid_stream_cuts_the_connection(self):
        path = self.u.path.replace("/big/", "/bad/")
        for _ in range(3):
            raw = read_all(raw_request(self.u, path, self.A["Authorization"]))
            head, _, body = raw.partition(b"\r\n\r\n")
            self.assertIn(b" 200 ", head.split(b"\r\n")[0])
            self.assertIn(b"chunked", head.lower())
            self.assertGreater(len(body), 1 << 20)  # lines went out before the failure
            self.assertFalse(body.endswith(b"\r\n0\r\n\r\n"), "a failed stream ended as complete")
            self.assertNotIn(b"/etc/passwd", body)
            self.assertNotIn(b"etc%2Fpasswd", body)
        with self.assertRaises((requests.exceptions.ChunkedEncodingError,
                                requests.exceptions.ConnectionError)):
            r = requests.post(self.q.replace("/big/", "/bad/"), data="{}", headers=self.A,
                              stream=True)
            for _ in r.iter_content(1 << 16):
                pass
        self.assert_alive()

    def test_failure_mid_stream_ends_with_an_error_line(self):
        """A client that asked for endStreamAction gets the failure as its last line (the
        protocol's errorMessage) and a complete reply."""
        r = requests.post(self.q.replace("/big/", "/bad/"), data="{}", stream=True, headers=dict(
            self.A, **{"delta-sharing-capabilities": "includeendstreamaction=true"}))
        self.assertEqual(r.status_code, 200)
        lines = r.content.decode().splitlines()  # raises if the stream was cut
        self.assertGreater(len(lines), 1000)
        last = json.loads(lines[-1])
        self.assertIn("errorMessage", last["endStreamAction"], lines[-1])
        self.assertNotIn("endStreamAction", lines[-2])
        self.assert_alive()

    def test_escaping_path_fails_before_the_first_line(self):
        for caps in (None, "includeendstreamaction=true", "responseformat=delta"):
            hd = dict(self.A)
            if caps:
                hd["delta-sharing-capabilities"] = caps
            r = requests.post(self.q.replace("/big/", "/escape/"), data="{}", headers=hd)
            self.assertEqual(r.status_code, 400, r.text[:300])
            self.assertIn("errorCode", r.json())
            self.assertNotIn("/etc/passwd", r.text)
        self.assert_alive()

    def test_hang_up_before_the_first_line(self):
        for i in range(20):
            s = raw_request(self.u, self.u.path, self.A["Authorization"])
            if i % 2:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
            s.close()
        for i in range(5):  # half a request, then gone
            s = socket.create_connection((self.u.hostname, self.u.port))
            s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\nContent-Length: 20"
                       "\r\n\r\n{" % (self.u.path, self.A["Authorization"])).encode())
            s.close()
        time.sleep(0.5)
        self.assert_alive()

    def test_hang_up_mid_stream_and_at_the_end(self):
        full = read_all(raw_request(self.u, self.u.path, self.A["Authorization"]))
        self.assertTrue(full.endswith(b"\r\n0\r\n\r\n"))
        for cut in (len(full) // 3, len(full) - 200, len(full) - 5, len(full) - 1):
            s = raw_request(self.u, self.u.path, self.A["Authorization"])
            got = 0
            while got < cut:
                b = s.recv(min(1 << 16, cut - got))
                if not b:
                    break
                got += len(b)
            s.close()
        time.sleep(0.3)
        self.assert_alive()

    def test_changes_hang_up_and_head(self):
        c = self.q.replace("/query", "/changes")
        path = urllib.parse.urlparse(c).path + "?startingVersion=0"
        for method in ("GET", "HEAD"):
            s = raw_request(self.u, path, self.A["Authorization"], body="", method=method)
            s.recv(1000)
            s.close()
        self.assert_alive()

    def test_many_concurrent_big_queries(self):
        results = []

        def one():
            r = requests.post(self.q, data="{}", headers=self.A)
            results.append((r.status_code,
                            sum(1 for l in r.text.splitlines() if l.startswith('{"file"'))))
        ts = [threading.Thread(target=one) for _ in range(8)]
        for t in ts:
            t.start()
        for t in ts:
            t.join(120)
        self.assertEqual(results, [(200, self.NFILES)] * 8)


class ReviewShutdown(unittest.TestCase):
    """SIGTERM while big queries stream: one client reading, others stalled."""

    def test_sigterm_while_streaming(self):
        tmp = tempfile.mkdtemp(prefix="dd-review-term-")
        h.stubs_dir()
        srv = h.Server()
        try:
            big = os.path.join(tmp, "big")
            subprocess.run(["/usr/bin/python3", GEN, big, "60000", "10"], check=True)
            srv.start()
            A = {"Authorization": "Bearer " + srv.token}
            for path, body in (("/shares", {"name": "s"}), ("/shares/s/schemas", {"name": "m"}),
                               ("/shares/s/schemas/m/tables", {"name": "big", "url": "file://" + big})):
                self.assertEqual(requests.post(srv.rest + path, json=body, headers=A).status_code, 200)
            u = urllib.parse.urlparse(srv.rest + "/shares/s/schemas/m/tables/big/query")
            socks = []
            for _ in range(3):  # stalled readers: the producers wait at the high-water mark
                s = socket.socket()
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.connect((u.hostname, u.port))
                s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n"
                           "Content-Length: 2\r\n\r\n{}" % (u.path, A["Authorization"])).encode())
                s.recv(100)
                socks.append(s)
            stop_reading = threading.Event()

            def reader():  # a reader slow enough to still be reading at the signal
                s = raw_request(u, u.path, A["Authorization"])
                s.settimeout(60)
                try:
                    while not stop_reading.is_set() and s.recv(4096):
                        time.sleep(0.001)
                except OSError:
                    pass
                s.close()
            t = threading.Thread(target=reader)
            t.start()
            time.sleep(1.0)
            t0 = time.time()
            code = srv.stop(timeout=60)
            took = time.time() - t0
            stop_reading.set()
            t.join(10)
            for s in socks:
                s.close()
            print("deltad stopped %.1f s after SIGTERM" % took)
            self.assertEqual(code, 0)
            self.assertLess(took, 12)  # the 5 s shutdown grace, not a 30 s wait
        finally:
            srv.cleanup()
            shutil.rmtree(tmp, ignore_errors=True)


class LoopingS3(http.server.BaseHTTPRequestHandler):
    """A broken S3 store: every listing is truncated and hands back the same token."""
    lists = 0

    def do_GET(self):
        if "list-type=2" in self.path:
            LoopingS3.lists += 1
            body = ("<?xml version=\"1.0\"?><ListBucketResult><Name>lake</Name>"
                    "<IsTruncated>true</IsTruncated><NextContinuationToken>same</NextContinuationToken>"
                    "<Contents><Key>t/_delta_log/%020d.json</Key><Size>1</Size>"
                    "<LastModified>2024-01-01T00:00:00.000Z</LastModified></Contents>"
                    "</ListBucketResult>" % LoopingS3.lists).encode()
            self.send_response(200)
        else:
            body = b"<Error><Code>NoSuchKey</Code></Error>"
            self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_HEAD = do_GET

    def log_message(self, *a):
        pass


class ReviewBrokenStore(h.ServerTest):
    def test_listing_that_repeats_its_token_ends(self):
        srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LoopingS3)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        try:
            A = {"Authorization": "Bearer " + self.server.token}
            B = self.server.rest
            for path, body in (
                    ("/credentials", {"name": "c", "aws": {"accessKeyId": "AK", "secretAccessKey": SECRET,
                                                           "region": "us-east-1"}}),
                    ("/locations", {"name": "loop", "url": "s3://lake", "type": "S3", "credential": "c",
                                    "properties": {"endpoint": "http://127.0.0.1:%d" % srv.server_port}}),
                    ("/shares", {"name": "s"}), ("/shares/s/schemas", {"name": "m"}),
                    ("/shares/s/schemas/m/tables", {"name": "t", "location": "loop", "path": "t"})):
                r = requests.post(B + path, json=body, headers=A)
                self.assertEqual(r.status_code, 200, r.text)
            t0 = time.time()
            try:
                r = requests.get(B + "/shares/s/schemas/m/tables/t/version", headers=A, timeout=20)
            except requests.exceptions.Timeout:
                self.fail("the listing loop never ended (%d listings)" % LoopingS3.lists)
            self.assertLess(time.time() - t0, 20)
            self.assertGreaterEqual(r.status_code, 400, r.text)
            self.assertNotIn(SECRET, r.text)
            self.assertLess(LoopingS3.lists, 10)
        finally:
            srv.shutdown()
            srv.server_close()


if __name__ == "__main__":
    h.main()
