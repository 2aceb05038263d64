"""test_sharing_s3.py: Delta Sharing of tables that live in S3.

A local S3-compatible server (s3rver, from tests/js/s3; it stands in for AWS, which cannot
run here, and does not check SigV4 signatures: tests/unit/sign and test_s3_sigv4_botocore.py
check those) holds copies of real fixture tables, uploaded object by object. A real deltad
gets an AWS credential, an S3 storage location with the store's endpoint, and shares the
tables both from S3 and from the local fixture directory. A recipient must see the same
protocol lines from both (apart from URLs), every S3 file URL must be a presigned URL of the
store that downloads the fixture's bytes, and tables the credential cannot reach must fail
cleanly.
"""
import json
import os
import shutil
import tempfile
import urllib.parse

import requests

import dd_harness as h
from dd_stores import ndjson, start_s3, strip_lines

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
RS = os.path.join(FIX, "delta-rs-data")
DAT = os.path.join(FIX, "dat", "reader_tests", "generated")

TABLES = {
    "parts": os.path.join(RS, "delta-0.8.0-partitioned"),
    "ckpt": os.path.join(RS, "checkpoint-cdf-table"),
    "cdf": os.path.join(RS, "cdf-table"),
    "dv": os.path.join(RS, "table-with-dv-small"),
    "multi": os.path.join(DAT, "multi_partitioned", "delta"),
}


# s3rver knows one account, whose access key id is "S3RVER"; it ignores the secret.
class SharingS3(h.ServerTest):
    server_args = ["--url-expiry-seconds", "600"]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-s3-")
        cls.s3, cls.endpoint = start_s3(os.path.join(cls.tmp, "store"))
        try:
            cls.upload_tables()
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
    def upload_tables(cls):
        assert requests.put(cls.endpoint + "/lake").status_code == 200
        cls.nobjects = 0
        for name, d in TABLES.items():
            for root, _, files in os.walk(d):
                for f in files:
                    rel = os.path.relpath(os.path.join(root, f), d)
                    key = "tables/%s/%s" % (name, rel)
                    with open(os.path.join(root, f), "rb") as fh:
                        r = requests.put(cls.endpoint + "/lake/" + urllib.parse.quote(key),
                                         data=fh.read())
                    assert r.status_code == 200, (key, r.status_code, r.text)
                    cls.nobjects += 1

    @classmethod
    def admin(cls, method, path, body, expect=200):
        r = requests.request(method, cls.server.rest + path, json=body, headers=cls.A)
        assert r.status_code == expect, (path, r.status_code, r.text)
        return r.json()

    @classmethod
    def setup_shares(cls):
        s = cls.server
        cls.A = {"Authorization": "Bearer " + s.token}
        cls.admin("POST", "/credentials", {"name": "aws1", "aws": {
            "accessKeyId": "S3RVER", "secretAccessKey": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
            "region": "eu-west-1"}})
        cls.admin("POST", "/locations", {"name": "lake", "url": "s3://lake/tables", "type": "S3",
                                         "credential": "aws1",
                                         "properties": {"endpoint": cls.endpoint}})
        for share in ("s3", "local"):
            cls.admin("POST", "/shares", {"name": share})
            cls.admin("POST", "/shares/%s/schemas" % share, {"name": "main"})
        for name, d in TABLES.items():
            cls.admin("POST", "/shares/s3/schemas/main/tables",
                      {"name": name, "location": "lake", "path": name, "historyShared": True})
            cls.admin("POST", "/shares/local/schemas/main/tables",
                      {"name": name, "url": "file://" + d, "historyShared": True})
        # added by URL: the location is found by prefix
        cls.admin("POST", "/shares/s3/schemas/main/tables",
                  {"name": "byurl", "url": "s3://lake/tables/parts", "historyShared": True})
        # nothing there, and a bucket no location covers
        cls.admin("POST", "/shares/s3/schemas/main/tables",
                  {"name": "missing", "location": "lake", "path": "nothing-here"})
        # a URL no storage location covers is refused when it is added
        cls.nocred_refused = cls.admin("POST", "/shares/s3/schemas/main/tables",
                                       {"name": "nocred", "url": "s3://other-bucket/t"},
                                       expect=403)
        r = cls.admin("POST", "/recipients", {"name": "bob"})
        cls.R = {"Authorization": "Bearer " + r["bearerToken"]}
        cls.admin("POST", "/recipients/bob/grants/s3", None)
        cls.admin("POST", "/recipients/bob/grants/local", None)

    def call(self, share, table, what, body=None, caps=None, method="POST"):
        hd = dict(self.R)
        if caps:
            hd["delta-sharing-capabilities"] = caps
        url = "%s/shares/%s/schemas/main/tables/%s/%s" % (self.server.rest, share, table, what)
        if method == "GET":
            return requests.get(url, headers=hd, params=body or {})
        return requests.post(url, data=json.dumps(body or {}), headers=hd)

    def same_lines(self, table, what, body=None, caps=None, method="POST", keep_time=True):
        a = self.call("s3", table, what, body, caps, method)
        b = self.call("local", table, what, body, caps, method)
        self.assertEqual(a.status_code, 200, a.text)
        self.assertEqual(b.status_code, 200, b.text)
        self.assertEqual(a.headers.get("Delta-Table-Version"), b.headers.get("Delta-Table-Version"))
        self.assertEqual(strip_lines(ndjson(a.text), keep_time),
                         strip_lines(ndjson(b.text), keep_time))
        return ndjson(a.text), ndjson(b.text)

    def check_url(self, table, url, local_url):
        u = urllib.parse.urlparse(url)
        self.assertEqual("%s://%s" % (u.scheme, u.netloc), self.endpoint)
        self.assertTrue(u.path.startswith("/lake/tables/%s/" % table), u.path)
        q = urllib.parse.parse_qs(u.query)
        self.assertEqual(q["X-Amz-Algorithm"], ["AWS4-HMAC-SHA256"])
        self.assertTrue(q["X-Amz-Credential"][0].startswith("S3RVER/"))
        self.assertIn("/eu-west-1/s3/aws4_request", q["X-Amz-Credential"][0])
        self.assertEqual(q["X-Amz-Expires"], ["600"])
        self.assertRegex(q["X-Amz-Signature"][0], "^[0-9a-f]{64}$")
        got = requests.get(url)
        self.assertEqual(got.status_code, 200, url)
        want = requests.get(local_url)
        self.assertEqual(want.status_code, 200)
        self.assertEqual(got.content, want.content)
        return got.content

    def test_version_and_metadata(self):
        for t in TABLES:
            a = self.call("s3", t, "version", method="GET")
            b = self.call("local", t, "version", method="GET")
            self.assertEqual(a.status_code, 200, a.text)
            self.assertEqual(a.headers["Delta-Table-Version"], b.headers["Delta-Table-Version"])
            caps = "responseformat=delta;readerfeatures=deletionvectors" if t == "dv" else None
            self.same_lines(t, "metadata", method="GET", caps=caps)

    def test_query_parquet_format_downloads_every_file(self):
        n = 0
        for t in ("parts", "ckpt", "multi"):
            s3, local = self.same_lines(t, "query")
            fa = {f["file"]["id"]: f["file"]["url"] for f in s3 if "file" in f}
            fb = {f["file"]["id"]: f["file"]["url"] for f in local if "file" in f}
            self.assertEqual(set(fa), set(fb))
            self.assertTrue(fa)
            for i, url in fa.items():
                self.check_url(t, url, fb[i])
                n += 1
        self.assertGreater(n, 10)

    def test_partition_predicate_and_by_url(self):
        hint = {"op": "equal", "children": [
            {"op": "column", "name": "year", "valueType": "string"},
            {"op": "literal", "value": "2020", "valueType": "string"}]}
        s3, _ = self.same_lines("parts", "query", {"jsonPredicateHints": json.dumps(hint)})
        files = [l["file"] for l in s3 if "file" in l]
        self.assertTrue(files)
        self.assertTrue(all(f["partitionValues"]["year"] == "2020" for f in files))
        a = self.call("s3", "byurl", "query")
        b = self.call("s3", "parts", "query")
        self.assertEqual(strip_lines(ndjson(a.text)), strip_lines(ndjson(b.text)))

    def test_changes_and_time_travel(self):
        self.same_lines("cdf", "changes", {"startingVersion": 0}, method="GET", keep_time=False)
        s3, _ = self.same_lines("cdf", "query", {"version": 1}, keep_time=False)
        self.assertTrue(any("file" in l for l in s3))
        cdf = [l["cdf"] for l in ndjson(self.call("s3", "cdf", "changes", {"startingVersion": 0},
                                                  method="GET").text) if "cdf" in l]
        self.assertTrue(cdf)
        for c in cdf:
            self.assertEqual(requests.get(c["url"]).status_code, 200)

    def test_deletion_vectors_delta_format(self):
        caps = "responseformat=delta;readerfeatures=deletionvectors"
        s3, _ = self.same_lines("dv", "query", caps=caps)
        adds = [l["file"]["deltaSingleAction"]["add"] for l in s3
                if "file" in l and "add" in l["file"].get("deltaSingleAction", {})]
        self.assertTrue(any(a.get("deletionVector") for a in adds))
        r = self.call("s3", "dv", "query")  # parquet format is refused for DV tables
        self.assertEqual(r.status_code, 400, r.text)

    def test_paging_across_requests(self):
        body = {"maxFiles": 2}
        s3_ids, token, pages = [], None, 0
        caps = "responseformat=parquet;includeendstreamaction=true"
        while True:
            if token:
                body["pageToken"] = token
            r = self.call("s3", "ckpt", "query", body, caps=caps)
            self.assertEqual(r.status_code, 200, r.text)
            lines = ndjson(r.text)
            s3_ids += [l["file"]["id"] for l in lines if "file" in l]
            end = lines[-1].get("endStreamAction", {})
            token = end.get("nextPageToken")
            pages += 1
            if not token:
                break
        local = ndjson(self.call("local", "ckpt", "query").text)
        self.assertEqual(sorted(s3_ids), sorted(l["file"]["id"] for l in local if "file" in l))
        self.assertGreater(pages, 1)

    def test_unreachable_tables_fail_cleanly(self):
        r = self.call("s3", "missing", "query")
        self.assertIn(r.status_code, (400, 404), r.text)
        self.assertIn("errorCode", r.json())
        self.assertIn("s3://other-bucket/t", self.nocred_refused["message"])
        self.assertIn("not under any registered storage location", self.nocred_refused["message"])
        # the server is still up and serving
        self.assertEqual(self.call("s3", "parts", "version", method="GET").status_code, 200)

    def test_grpc_query_of_an_s3_table(self):
        h.stubs_dir()
        from deltad.sharing.v1 import sharing_pb2 as spb, sharing_pb2_grpc as sg
        with self.server.channel() as ch:
            svc = sg.DeltaSharingServiceStub(ch)
            md = (("authorization", self.R["Authorization"]),)
            msgs = list(svc.QueryTable(spb.QueryTableRequest(share="s3", schema="main",
                                                             table="parts"), metadata=md))
        lines = [json.loads(m.line) for m in msgs]
        self.assertIn("protocol", lines[0])
        self.assertEqual(msgs[0].capabilities, "responseformat=parquet")
        rest = ndjson(self.call("s3", "parts", "query").text)
        self.assertEqual(strip_lines(lines), strip_lines(rest))
        local = {l["file"]["id"]: l["file"]["url"]
                 for l in ndjson(self.call("local", "parts", "query").text) if "file" in l}
        files = [l["file"] for l in lines if "file" in l]
        self.assertEqual(len(files), len(local))
        for f in files[:3]:
            self.check_url("parts", f["url"], local[f["id"]])

    def test_secrets_never_in_answers(self):
        for t in TABLES:
            for what, method in (("metadata", "GET"), ("query", "POST")):
                text = self.call("s3", t, what, method=method).text
                self.assertNotIn("wJalrXUtnFEMI", text)


if __name__ == "__main__":
    h.main()
