"""test_sharing_azure.py: Delta Sharing of tables that live in Azure Blob Storage.

Azurite (Microsoft's Azure Storage emulator, from tests/js/azure; it stands in for Azure,
which cannot be reached here) holds copies of real fixture tables, uploaded with Microsoft's
own SDK (@azure/storage-blob). Azurite checks Shared Key and SAS signatures, so every
request deltad makes and every file URL it hands out is verified by Microsoft's code.

A real deltad shares the tables three ways: from an abfss:// location with an account-key
credential (deltad signs a SAS per request and per file), from a wasbs:// location with a
SAS credential made by the SDK (appended as it is), and from the local fixture directory.
A recipient must see the same protocol lines from all three (apart from URLs, expiry and
object times); every Azure file URL must be a SAS URL of Azurite that downloads the
fixture's bytes; an altered SAS must be refused by Azurite; tables deltad cannot reach must
fail cleanly while the server stays up. The C test of os_azure (write path) runs against
the same Azurite.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest
import urllib.parse

import requests

import dd_harness as h
from dd_stores import ndjson, strip_lines

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
RS = os.path.join(FIX, "delta-rs-data")
DAT = os.path.join(FIX, "dat", "reader_tests", "generated")
AZJS = os.path.join(h.ROOT, "tests", "js", "azure")
ACCOUNT = "devstoreaccount1"
# The emulator's published development key (not a secret, but it must not leak either).
KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

TABLES = {
    "parts": os.path.join(RS, "delta-0.8.0-partitioned"),
    "ckpt": os.path.join(RS, "checkpoint-cdf-table"),
    "cdf": os.path.join(RS, "cdf-table"),
    "dv": os.path.join(RS, "table-with-dv-small"),
    "multi": os.path.join(DAT, "multi_partitioned", "delta"),
}
SHARES = ("azkey", "azsas")


def node(*args):
    r = subprocess.run(["node", os.path.join(AZJS, "blobs.mjs")] + list(args),
                       capture_output=True, text=True, timeout=600)  # "many": 5,003 puts
    if r.returncode != 0:
        raise RuntimeError("blobs.mjs %s failed: %s" % (args[0], r.stderr))
    return r.stdout.strip()


def start_azurite(directory):
    if not os.path.isdir(os.path.join(AZJS, "node_modules", "azurite")):
        raise unittest.SkipTest("azurite is not installed (run scripts/setup.sh)")
    p = subprocess.Popen(["node", os.path.join(AZJS, "azurite.mjs"), directory],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = p.stdout.readline()
    m = re.match(r"PORT (\d+)", line)
    if not m:
        p.kill()
        raise RuntimeError("azurite did not start: %r %r" % (line, p.stderr.read()))
    return p, "http://127.0.0.1:%s/%s" % (m.group(1), ACCOUNT)


class SharingAzure(h.ServerTest):
    server_args = ["--url-expiry-seconds", "600"]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-azure-")
        cls.azurite, cls.endpoint = start_azurite(os.path.join(cls.tmp, "store"))
        try:
            out = node("upload", cls.endpoint, "lake", "tables",
                       *["%s=%s" % (n, d) for n, d in TABLES.items()])
            cls.nobjects = int(out.split()[-1])
            cls.sas = node("sas", cls.endpoint, "lake", "rl", "2")
            super().setUpClass()
            cls.setup_shares()
        except BaseException:
            cls.azurite.kill()
            raise

    @classmethod
    def tearDownClass(cls):
        cls.azurite.kill()
        cls.azurite.wait()
        cls.azurite.stdout.close()
        cls.azurite.stderr.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    @classmethod
    def admin(cls, method, path, body, expect=200):
        r = requests.request(method, cls.server.rest + path, json=body, headers=cls.A)
        assert r.status_code == expect, (path, r.status_code, r.text)
        return r.json()

    @classmethod
    def setup_shares(cls):
        s = cls.server
        cls.A = {"Authorization": "Bearer " + s.token}
        cls.admin("POST", "/credentials", {"name": "azkey", "azure": {
            "accountKey": {"accountName": ACCOUNT, "accountKey": KEY}}})
        cls.admin("POST", "/credentials", {"name": "azsas", "azure": {
            "sas": {"accountName": ACCOUNT, "sasToken": cls.sas}}})
        zeros = "A" * 86 + "=="  # a well-formed key that is not the account's
        cls.admin("POST", "/credentials", {"name": "azwrong", "azure": {
            "accountKey": {"accountName": ACCOUNT, "accountKey": zeros}}})
        ep = {"endpoint": cls.endpoint}
        dead = {"endpoint": "http://127.0.0.1:9/" + ACCOUNT}  # nothing listens on port 9
        for name, url, cred, props in (
                ("lake", "abfss://lake@%s.dfs.core.windows.net/tables" % ACCOUNT, "azkey", ep),
                ("lakesas", "wasbs://lake@%s.blob.core.windows.net/tables" % ACCOUNT, "azsas",
                 dict(ep, sas_to_recipients="true")),
                ("sasnoopt", "wasbs://lake@%s.blob.core.windows.net/tables" % ACCOUNT, "azsas", ep),
                ("wrongkey", "az://lake/tables", "azwrong", ep),
                ("down", "azure://lake/tables", "azkey", dead)):
            cls.admin("POST", "/locations", {"name": name, "url": url, "type": "AZURE",
                                             "credential": cred, "properties": props})
        for share in SHARES + ("local",):
            cls.admin("POST", "/shares", {"name": share})
            cls.admin("POST", "/shares/%s/schemas" % share, {"name": "main"})
        for name, d in TABLES.items():
            for share, loc in (("azkey", "lake"), ("azsas", "lakesas")):
                cls.admin("POST", "/shares/%s/schemas/main/tables" % share,
                          {"name": name, "location": loc, "path": name, "historyShared": True})
            cls.admin("POST", "/shares/local/schemas/main/tables",
                      {"name": name, "url": "file://" + d, "historyShared": True})
        # added by URL: the location is found by prefix
        cls.admin("POST", "/shares/azkey/schemas/main/tables",
                  {"name": "byurl", "historyShared": True,
                   "url": "abfss://lake@%s.dfs.core.windows.net/tables/parts" % ACCOUNT})
        for name, body in (
                ("missing", {"location": "lake", "path": "nothing-here"}),
                ("wrongkey", {"location": "wrongkey", "path": "parts"}),
                ("down", {"location": "down", "path": "parts"}),
                ("sasnoopt", {"location": "sasnoopt", "path": "parts"})):
            body["name"] = name
            cls.admin("POST", "/shares/azkey/schemas/main/tables", body)
        # a URL no storage location covers is refused when it is added
        cls.nocred_refused = cls.admin("POST", "/shares/azkey/schemas/main/tables", {
            "name": "nocred", "url": "abfss://other@%s.dfs.core.windows.net/t" % ACCOUNT},
            expect=403)
        r = cls.admin("POST", "/recipients", {"name": "bob"})
        cls.R = {"Authorization": "Bearer " + r["bearerToken"]}
        for share in SHARES + ("local",):
            cls.admin("POST", "/recipients/bob/grants/%s" % share, None)

    def test_sas_token_not_handed_out_without_opt_in(self):
        # a stored SAS would travel in every file URL as it is: refused unless the location
        # says sas_to_recipients=true; reading the log with it is fine
        r = self.call("azkey", "sasnoopt", "query")
        self.assertEqual(r.status_code, 400, r.text)
        self.assertIn("sas_to_recipients=true", r.json()["message"])
        self.assertNotIn("sig=", r.text)
        r = self.call("azkey", "sasnoopt", "changes", {"startingVersion": 0}, method="GET")
        self.assertEqual(r.status_code, 400, r.text)
        self.assertIn("sas_to_recipients=true", r.json()["message"])
        self.assertEqual(self.call("azkey", "sasnoopt", "metadata", method="GET").status_code, 200)

    def call(self, share, table, what, body=None, caps=None, method="POST", token=None):
        hd = dict(self.R) if token is None else {"Authorization": "Bearer " + token}
        if caps:
            hd["delta-sharing-capabilities"] = caps
        url = "%s/shares/%s/schemas/main/tables/%s/%s" % (self.server.rest, share, table, what)
        if method == "GET":
            return requests.get(url, headers=hd, params=body or {})
        return requests.post(url, data=json.dumps(body or {}), headers=hd)

    def same_lines(self, table, what, body=None, caps=None, method="POST", keep_time=True):
        """The lines of every Azure share compared with the local share's; returns them."""
        b = self.call("local", table, what, body, caps, method)
        self.assertEqual(b.status_code, 200, b.text)
        got = {}
        for share in SHARES:
            a = self.call(share, table, what, body, caps, method)
            self.assertEqual(a.status_code, 200, (share, a.text))
            self.assertEqual(a.headers.get("Delta-Table-Version"),
                             b.headers.get("Delta-Table-Version"))
            self.assertEqual(strip_lines(ndjson(a.text), keep_time),
                             strip_lines(ndjson(b.text), keep_time), share)
            got[share] = ndjson(a.text)
        return got, ndjson(b.text)

    def check_url(self, share, table, url, local_url):
        """url is a SAS URL of Azurite for a blob of the table, with the bytes of local_url."""
        u = urllib.parse.urlparse(url)
        self.assertEqual("%s://%s" % (u.scheme, u.netloc) + "/" + ACCOUNT, self.endpoint)
        self.assertTrue(u.path.startswith("/%s/lake/tables/%s/" % (ACCOUNT, table)), u.path)
        q = urllib.parse.parse_qs(u.query)
        if share == "azkey":  # a blob SAS signed by deltad, read-only, for the URL lifetime
            self.assertEqual(q["sv"], ["2020-12-06"])
            self.assertEqual(q["sr"], ["b"])
            self.assertEqual(q["sp"], ["r"])
            se = time.mktime(time.strptime(q["se"][0], "%Y-%m-%dT%H:%M:%SZ")) - time.timezone
            self.assertLess(abs(se - (time.time() + 600)), 120)
        else:  # the stored SAS as it is
            self.assertEqual(u.query, self.sas)
        self.assertRegex(q["sig"][0], r"^[A-Za-z0-9+/]{43}=$")
        got = requests.get(url)
        self.assertEqual(got.status_code, 200, url)
        want = requests.get(local_url)
        self.assertEqual(want.status_code, 200)
        self.assertEqual(got.content, want.content)
        return got.content

    def test_version_and_metadata(self):
        for t in TABLES:
            b = self.call("local", t, "version", method="GET")
            for share in SHARES:
                a = self.call(share, t, "version", method="GET")
                self.assertEqual(a.status_code, 200, a.text)
                self.assertEqual(a.headers["Delta-Table-Version"], b.headers["Delta-Table-Version"])
            caps = "responseformat=delta;readerfeatures=deletionvectors" if t == "dv" else None
            self.same_lines(t, "metadata", method="GET", caps=caps)

    def test_query_parquet_format_downloads_every_file(self):
        n = 0
        for t in ("parts", "ckpt", "multi"):
            got, local = self.same_lines(t, "query")
            fb = {f["file"]["id"]: f["file"]["url"] for f in local if "file" in f}
            for share, lines in got.items():
                fa = {f["file"]["id"]: f["file"]["url"] for f in lines if "file" in f}
                self.assertEqual(set(fa), set(fb))
                self.assertTrue(fa)
                for i, url in fa.items():
                    self.check_url(share, t, url, fb[i])
                    n += 1
        self.assertGreater(n, 20)

    def test_altered_sas_is_refused_by_azurite(self):
        got, _ = self.same_lines("parts", "query")
        for share, lines in got.items():
            url = next(l["file"]["url"] for l in lines if "file" in l)
            self.assertEqual(requests.get(url).status_code, 200)
            base, _, query = url.partition("?")
            q = urllib.parse.parse_qsl(query)
            sig = [v for k, v in q if k == "sig"][0]
            forged = sig[:5] + ("A" if sig[5] != "A" else "B") + sig[6:]
            bad = base + "?" + urllib.parse.urlencode([(k, forged if k == "sig" else v)
                                                       for k, v in q])
            r = requests.get(bad)
            self.assertEqual(r.status_code, 403, (share, r.text))
            self.assertRegex(r.text, "AuthorizationFailure|AuthenticationFailed")
            # a wider permission than was signed
            wider = base + "?" + urllib.parse.urlencode([(k, "rw" if k == "sp" else v)
                                                         for k, v in q])
            self.assertEqual(requests.get(wider).status_code, 403, share)
        # deltad's blob SAS is bound to its blob: it does not open another one
        url = next(l["file"]["url"] for l in got["azkey"] if "file" in l)
        base, _, query = url.partition("?")
        other = base.rsplit("/", 1)[0] + "/other.parquet?" + query
        self.assertEqual(requests.get(other).status_code, 403)

    def test_partition_predicate_and_by_url(self):
        hint = {"op": "equal", "children": [
            {"op": "column", "name": "year", "valueType": "string"},
            {"op": "literal", "value": "2020", "valueType": "string"}]}
        got, _ = self.same_lines("parts", "query", {"jsonPredicateHints": json.dumps(hint)})
        files = [l["file"] for l in got["azkey"] if "file" in l]
        self.assertTrue(files)
        self.assertTrue(all(f["partitionValues"]["year"] == "2020" for f in files))
        a = self.call("azkey", "byurl", "query")
        b = self.call("azkey", "parts", "query")
        self.assertEqual(a.status_code, 200, a.text)
        self.assertEqual(strip_lines(ndjson(a.text)), strip_lines(ndjson(b.text)))

    def test_changes_and_time_travel(self):
        self.same_lines("cdf", "changes", {"startingVersion": 0}, method="GET", keep_time=False)
        got, _ = self.same_lines("cdf", "query", {"version": 1}, keep_time=False)
        self.assertTrue(any("file" in l for l in got["azkey"]))
        for share in SHARES:
            cdf = [l["cdf"] for l in ndjson(self.call(share, "cdf", "changes", {"startingVersion": 0},
                                                      method="GET").text) if "cdf" in l]
            self.assertTrue(cdf)
            for c in cdf:
                self.assertEqual(requests.get(c["url"]).status_code, 200)

    def test_deletion_vectors_delta_format(self):
        caps = "responseformat=delta;readerfeatures=deletionvectors"
        got, _ = self.same_lines("dv", "query", caps=caps)
        for lines in got.values():
            adds = [l["file"]["deltaSingleAction"]["add"] for l in lines
                    if "file" in l and "add" in l["file"].get("deltaSingleAction", {})]
            self.assertTrue(any(a.get("deletionVector") for a in adds))
        r = self.call("azkey", "dv", "query")  # parquet format is refused for DV tables
        self.assertEqual(r.status_code, 400, r.text)

    def test_paging_across_requests(self):
        body = {"maxFiles": 2}
        ids, token, pages = [], None, 0
        caps = "responseformat=parquet;includeendstreamaction=true"
        while True:
            if token:
                body["pageToken"] = token
            r = self.call("azsas", "ckpt", "query", body, caps=caps)
            self.assertEqual(r.status_code, 200, r.text)
            lines = ndjson(r.text)
            ids += [l["file"]["id"] for l in lines if "file" in l]
            token = lines[-1].get("endStreamAction", {}).get("nextPageToken")
            pages += 1
            if not token:
                break
        local = ndjson(self.call("local", "ckpt", "query").text)
        self.assertEqual(sorted(ids), sorted(l["file"]["id"] for l in local if "file" in l))
        self.assertGreater(pages, 1)

    def test_unreachable_tables_fail_cleanly(self):
        r = self.call("azkey", "missing", "query")
        self.assertIn(r.status_code, (400, 404), r.text)
        self.assertIn("errorCode", r.json())
        self.assertIn("abfss://other@", self.nocred_refused["message"])
        self.assertIn("not under any registered storage location", self.nocred_refused["message"])
        # Azurite refuses the wrong key's signatures: a permission error naming the 403 (for
        # the admin; the recipient gets a request id, the log the detail)
        r = self.call("azkey", "wrongkey", "query", token=self.server.token)
        self.assertEqual(r.status_code, 403, r.text)
        self.assertIn("403", r.json()["message"])
        self.assertRegex(r.json()["message"], "AuthorizationFailure|AuthenticationFailed")
        r = self.call("azkey", "wrongkey", "query")
        self.assertEqual(r.status_code, 403, r.text)
        self.assertIn("request id", r.json()["message"])
        self.assertNotRegex(r.json()["message"], "AuthorizationFailure|AuthenticationFailed")
        # nobody listening: an error, after bounded retries
        t0 = time.time()
        r = self.call("azkey", "down", "version", method="GET", token=self.server.token)
        self.assertEqual(r.status_code, 503, r.text)
        self.assertEqual(r.json()["errorCode"], "TEMPORARILY_UNAVAILABLE")
        self.assertIn("127.0.0.1", r.json()["message"])  # names the store (to the admin) ...
        self.assertNotIn("sig=", r.json()["message"])    # ... never a signature
        r = self.call("azkey", "down", "version", method="GET")
        self.assertEqual(r.status_code, 503, r.text)
        self.assertNotIn("127.0.0.1", r.json()["message"])  # a recipient: a request id only
        self.assertIn("request id", r.json()["message"])
        # gRPC says what happened: the store is unavailable, and where
        import grpc
        h.stubs_dir()
        from deltad.sharing.v1 import sharing_pb2 as spb, sharing_pb2_grpc as sg
        with self.server.channel() as ch:
            with self.assertRaises(grpc.RpcError) as e:
                sg.DeltaSharingServiceStub(ch).GetTableVersion(
                    spb.GetTableVersionRequest(share="azkey", schema="main", table="down"),
                    metadata=self.server.md())
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE)
        self.assertIn("127.0.0.1:9/%s/lake" % ACCOUNT, e.exception.details())
        self.assertNotIn("sig=", e.exception.details())
        self.assertLess(time.time() - t0, 30)
        # the server is still up and serving
        self.assertEqual(self.call("azkey", "parts", "version", method="GET").status_code, 200)

    def test_secrets_never_in_answers(self):
        for share in SHARES:
            for t in TABLES:
                for what, method in (("metadata", "GET"), ("query", "POST")):
                    text = self.call(share, t, what, method=method).text
                    self.assertNotIn(KEY[:20], text)
        r = requests.get(self.server.rest + "/credentials/azkey", headers=self.A)
        self.assertNotIn(KEY[:20], r.text)

    def test_os_azure_write_path(self):
        """The C test of os_azure (put, put_if_absent twice, ranges, list, delete, rmdir,
        a listing of two pages) with an account key and with an SDK-made SAS, against this
        Azurite."""
        prog = os.environ.get("DD_OS_AZURE_TEST")
        if not prog:
            self.skipTest("DD_OS_AZURE_TEST is not set (run through ctest)")
        node("container", self.endpoint, "ctest")
        node("many", self.endpoint, "ctest", "many", "5003")  # a listing of two pages
        env = dict(os.environ, DD_AZURE_ENDPOINT=self.endpoint, DD_AZURE_CONTAINER="ctest",
                   DD_AZURE_SAS=node("sas", self.endpoint, "ctest", "rcwdl", "1"),
                   DD_AZURE_MANY="many:5003")
        r = subprocess.run([prog], env=env, capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        out = r.stdout + r.stderr
        self.assertIn("PASSED  ] 7 test(s)", out)
        self.assertNotIn("SKIPPED", out)


if __name__ == "__main__":
    h.main()
