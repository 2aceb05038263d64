#!/usr/bin/python3
"""test_objstore_large.py: data files larger than one upload part in object storage, through
a real deltad with DD_OBJSTORE_PART_BYTES=256 KiB (moto runs with S3_UPLOAD_PART_MIN_SIZE
lowered to match; AWS wants 5 MiB).

A table of four files written by delta-rs is copied into moto's S3 server and Azurite, and
OPTIMIZE compacts it into one file of about 2.7 MB: on S3 a multipart upload (its ETag is a
multipart one, "...-N"), on Azure a block blob of many blocks (Get Block List). delta-rs
and deltad's scan read the rows back. A scan of one small column reads the footer and that
column's chunks by range: far fewer bytes than the file (deltad's received-bytes counter).
A deep clone of the big table from S3 into Azure copies the file in parts. An upload that
fails mid-way (a proxy in front of moto refuses the third part) fails the OPTIMIZE and
leaves no object, no multipart upload in progress and no commit; one whose key another
writer puts just before CompleteMultipartUpload is refused by If-None-Match: * (the other
object stays) and commits nothing."""
import http.client
import http.server
import json
import os
import re
import shutil
import subprocess
import tempfile
import threading
import urllib.parse

import botocore.session
import requests

import dd_harness as h
from dd_stores import AZ_ACCOUNT, AZ_KEY, admin, az_node, start_azurite, start_moto, stop_procs

PART = 256 * 1024
FILES, ROWS = 4, 12000  # rows per file; 48 random base64 characters each: little to compress
AZ_URL = "abfss://lake@%s.dfs.core.windows.net/tables" % AZ_ACCOUNT

WRITE = r"""
import base64, os, sys, deltalake, pyarrow as pa
for k in range(%d):
    ids = list(range(k * %d, (k + 1) * %d))
    pay = [base64.b64encode(os.urandom(36)).decode() for _ in ids]
    deltalake.write_deltalake(sys.argv[1], pa.table({'id': pa.array(ids, pa.int64()),
                              'payload': pay}), mode='append')
""" % (FILES, ROWS, ROWS)


class FailingProxy(http.server.BaseHTTPRequestHandler):
    """Forwards every request to moto, but refuses UploadPart number 3 under /flaky/ (403
    AccessDenied, not retried), and under /racy/ puts the key itself just before it
    forwards a CompleteMultipartUpload (a writer racing in); records each request's method
    and query parameter names."""
    protocol_version = "HTTP/1.1"

    def forward(self):
        u = urllib.parse.urlsplit(self.path)
        q = urllib.parse.parse_qs(u.query, keep_blank_values=True)
        n = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(n) if n else b""
        self.server.seen.append((self.command, sorted(k for k in q if not k.startswith("X-Amz-"))))
        if self.command == "POST" and "uploadId" in q and "/racy/" in u.path:
            key = urllib.parse.unquote(u.path).split("/", 2)[2]
            self.server.client.put_object(Bucket="lake", Key=key, Body=b"the other writer's object")
        if self.command == "PUT" and q.get("partNumber") == ["3"] and "/flaky/" in u.path:
            out = b"<Error><Code>AccessDenied</Code><Message>refused by the test</Message></Error>"
            self.send_response(403)
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
            return
        c = http.client.HTTPConnection(self.server.target)
        hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "expect")}
        c.request(self.command, self.path, body=body, headers=hdrs)
        r = c.getresponse()
        data = r.read()
        self.send_response(r.status)
        for k, v in r.getheaders():
            if k.lower() not in ("content-length", "transfer-encoding", "connection", "server", "date"):
                self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)
        c.close()

    do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = forward

    def log_message(self, *a):
        pass


class ObjstoreLarge(h.ServerTest):
    server_env = {"DD_OBJSTORE_PART_BYTES": str(PART)}

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-objlarge-")
        cls.procs = []
        cls.proxy = None
        try:
            cls.start_stores()
            super().setUpClass()
            cls.setup_catalog()
        except BaseException:
            cls.stop_stores()
            raise

    @classmethod
    def start_stores(cls):
        cls.src = os.path.join(cls.tmp, "big")
        py = os.path.join(os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv")),
                          "bin", "python")
        subprocess.run([py, "-c", WRITE, cls.src], check=True, timeout=300)
        os.environ["S3_UPLOAD_PART_MIN_SIZE"] = str(PART)  # moto's server inherits it
        cls.moto, cls.s3 = start_moto(["lake", "lake/tables/big=" + cls.src,
                                       "lake/flaky/t=" + cls.src, "lake/racy/t=" + cls.src])
        cls.procs.append(cls.moto)
        cls.azurite, cls.az = start_azurite(os.path.join(cls.tmp, "azurite"))
        cls.procs.append(cls.azurite)
        az_node("upload", cls.az, "lake", "tables", "big=" + cls.src)
        cls.proxy = http.server.ThreadingHTTPServer(("127.0.0.1", 0), FailingProxy)
        cls.proxy.target = cls.s3.split("//", 1)[1]
        cls.proxy.seen = []
        cls.proxy.client = botocore.session.get_session().create_client(
            "s3", endpoint_url=cls.s3, region_name="us-east-1", aws_access_key_id="test",
            aws_secret_access_key="test")
        threading.Thread(target=cls.proxy.serve_forever, daemon=True).start()

    @classmethod
    def stop_stores(cls):
        if cls.proxy:
            cls.proxy.shutdown()
        stop_procs(cls.procs)

    @classmethod
    def tearDownClass(cls):
        cls.stop_stores()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    @classmethod
    def setup_catalog(cls):
        admin(cls.server, "POST", "/credentials", {"name": "moto", "aws": {
            "accessKeyId": "test", "secretAccessKey": "test", "region": "us-east-1"}})
        admin(cls.server, "POST", "/credentials", {"name": "azkey", "azure": {
            "accountKey": {"accountName": AZ_ACCOUNT, "accountKey": AZ_KEY}}})
        proxy = "http://127.0.0.1:%d" % cls.proxy.server_address[1]
        for name, url, cred, ep in (("lake", "s3://lake/tables", "moto", cls.s3),
                                    ("flaky", "s3://lake/flaky", "moto", proxy),
                                    ("racy", "s3://lake/racy", "moto", proxy),
                                    ("az", AZ_URL, "azkey", cls.az)):
            admin(cls.server, "POST", "/locations", {"name": name, "url": url, "credential": cred,
                                                     "properties": {"endpoint": ep, "path_style": "true"}})

    # ---- helpers ----

    def ctl(self, *args, ok=True):
        p = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                            "--token", self.server.token] + list(args),
                           capture_output=True, text=True, timeout=600)
        if ok:
            self.assertEqual(p.returncode, 0, (args, p.stdout, p.stderr))
        return p

    def js(self, *args):
        return json.loads(self.ctl("--output", "json", *args).stdout)

    def received(self):
        out = self.server_metrics()
        return int(re.search(r"^deltad_objstore_http_received_bytes_total (\d+)$", out, re.M).group(1))

    def server_metrics(self):
        return subprocess.run(["curl", "-s", "-H", "Authorization: Bearer " + self.server.token,
                               self.server.rest.rsplit("/api/", 1)[0] + "/metrics"],
                              capture_output=True, text=True, check=True).stdout

    def delta_rs_rows(self, url):
        s3 = {"AWS_ENDPOINT_URL": self.s3, "AWS_ACCESS_KEY_ID": "test",
              "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
        az = {"account_name": AZ_ACCOUNT, "account_key": AZ_KEY, "use_emulator": "true",
              "azurite_url": self.az.rsplit("/", 1)[0]}
        opts = s3 if url.startswith("s3://") else az
        if url.startswith("abfss://"):
            url = "az://lake/" + url.split("/", 3)[3]
        venv = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
        p = subprocess.run([os.path.join(venv, "bin", "python"),
                            os.path.join(h.ROOT, "tests", "integration", "peers", "delta_rs_stores.py")],
                           input=json.dumps({"tables": [[url, opts]]}), capture_output=True,
                           text=True, timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        r = json.loads(p.stdout)[url]
        self.assertNotIn("error", r, r)
        return r

    def scan_ids(self, url):
        out = self.ctl("--output", "jsonl", "table", "scan", url, "--columns", "id").stdout
        return sorted(json.loads(l)["id"] for l in out.splitlines())

    def big_file(self, url):
        """The one data file of the table at url (delta-rs's view): its name under the table,
        and delta-rs's version and rows."""
        rs = self.delta_rs_rows(url)
        self.assertEqual(len(rs["files"]), 1, rs)
        return rs["files"][0].rsplit("/", 1)[1], rs

    def s3_keys(self, prefix):
        r = requests.get("%s/lake?list-type=2&prefix=%s" % (self.s3, prefix))
        self.assertEqual(r.status_code, 200, r.text)
        return re.findall(r"<Key>([^<]*)</Key>", r.text)

    def az_blocks(self, blob):
        """The committed blocks of an Azure blob: (count, total size)."""
        sas = az_node("sas", self.az, "lake", "r", "1")
        r = requests.get("%s/lake/%s?comp=blocklist&blocklisttype=committed&%s" % (self.az, blob, sas),
                         headers={"x-ms-version": "2021-08-06"})
        self.assertEqual(r.status_code, 200, r.text)
        sizes = [int(x) for x in re.findall(r"<Size>(\d+)</Size>", r.text)]
        return len(sizes), sum(sizes)

    # ---- tests (in name order: the later ones read what the first wrote) ----

    def test_1_optimize_s3_multipart(self):
        url = "s3://lake/tables/big"
        self.ctl("table", "optimize", url)
        name, rs = self.big_file(url)
        self.assertEqual((rs["version"], rs["rows"]), (FILES, FILES * ROWS))
        head = requests.head("%s/lake/tables/big/%s" % (self.s3, name))
        size = int(head.headers["Content-Length"])
        self.assertGreater(size, 8 * PART)
        parts = int(head.headers["ETag"].strip('"').rsplit("-", 1)[1])  # multipart: "<md5>-<parts>"
        self.assertEqual(parts, -(-size // PART))
        self.assertEqual(self.scan_ids(url), list(range(FILES * ROWS)))

    def test_2_projected_scan_reads_ranges(self):
        url = "s3://lake/tables/big"
        name, _ = self.big_file(url)
        size = int(requests.head("%s/lake/tables/big/%s" % (self.s3, name)).headers["Content-Length"])
        before = self.received()
        self.assertEqual(self.scan_ids(url), list(range(FILES * ROWS)))
        got = self.received() - before
        # the log, the footer and the id chunks (8 bytes a row at most), not the payload column
        self.assertLess(got, size // 4, "bytes received for a scan of id from a %d-byte file" % size)
        before = self.received()
        out = self.ctl("--output", "jsonl", "table", "scan", url).stdout
        self.assertEqual(len(out.splitlines()), FILES * ROWS)
        self.assertGreater(self.received() - before, size * 9 // 10)

    def test_3_deep_clone_s3_to_azure_in_blocks(self):
        dst = AZ_URL + "/bigclone"
        out = self.js("table", "clone", "s3://lake/tables/big", dst, "--deep")
        self.assertEqual(out["numCopiedFiles"], 1)
        name, rs = self.big_file(dst)
        self.assertEqual(rs["rows"], FILES * ROWS)
        n, size = self.az_blocks("tables/bigclone/" + name)
        self.assertGreater(size, 8 * PART)
        self.assertEqual(n, -(-size // PART))

    def test_4_optimize_azure_blocks(self):
        url = AZ_URL + "/big"
        self.ctl("table", "optimize", url)
        name, rs = self.big_file(url)
        self.assertEqual((rs["version"], rs["rows"]), (FILES, FILES * ROWS))
        n, size = self.az_blocks("tables/big/" + name)
        self.assertGreater(size, 8 * PART)
        self.assertEqual(n, -(-size // PART))
        self.assertEqual(self.scan_ids(url), list(range(FILES * ROWS)))

    def test_5_failed_upload_leaves_nothing(self):
        url = "s3://lake/flaky/t"
        keys = sorted(self.s3_keys("flaky/t/"))
        p = self.ctl("table", "optimize", url, ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("refused by the test", p.stderr)
        seen = self.proxy.seen
        self.assertIn(("PUT", ["partNumber", "uploadId"]), seen)   # parts 1, 2 (and 3, refused)
        self.assertIn(("DELETE", ["uploadId"]), seen)              # AbortMultipartUpload
        self.assertNotIn(("POST", ["uploadId"]), seen)             # never completed
        self.assertEqual(sorted(self.s3_keys("flaky/t/")), keys)   # no object, no commit
        r = requests.get("%s/lake?uploads" % self.s3)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertNotIn("<UploadId>", r.text)                      # no upload left in progress
        self.assertEqual(self.delta_rs_rows(url)["version"], FILES - 1)

    def test_6_complete_refused_when_the_key_appeared(self):
        """CompleteMultipartUpload carries If-None-Match: *: a key written by someone else
        meanwhile stays theirs (412), the upload is aborted, nothing is committed."""
        url = "s3://lake/racy/t"
        keys = set(self.s3_keys("racy/t/"))
        p = self.ctl("table", "optimize", url, ok=False)
        self.assertIn("ALREADY_EXISTS", p.stderr)
        new = set(self.s3_keys("racy/t/")) - keys
        self.assertEqual(len(new), 1, new)  # the other writer's, untouched
        got = self.proxy.client.get_object(Bucket="lake", Key=new.pop())["Body"].read()
        self.assertEqual(got, b"the other writer's object")
        self.assertNotIn("<UploadId>", requests.get("%s/lake?uploads" % self.s3).text)
        self.assertEqual(self.delta_rs_rows(url)["version"], FILES - 1)


if __name__ == "__main__":
    h.main()
