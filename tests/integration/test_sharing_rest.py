"""test_sharing_rest.py: the Delta Sharing server over native REST, end to end.

A real deltad; shares are made through the admin routes (POST /shares ...), recipients
through /recipients, and the fixture tables are read back as a recipient with `requests`
and curl: every protocol endpoint, paging, predicates, time travel, CDF, deletion-vector
tables in both formats, 401/403/404, expired and forged file URLs, and every returned
file URL downloaded and compared byte for byte with the file on disk (also with Range).
"""
import json
import os
import shutil
import tempfile
import time
import unittest
import urllib.parse

import requests

import dd_harness as h

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
RS = os.path.join(FIX, "delta-rs-data")


def ndjson(text):
    return [json.loads(l) for l in text.splitlines() if l]


class SharingRest(h.ServerTest):
    server_args = ["--url-expiry-seconds", "2"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        s = cls.server
        cls.B = s.rest
        cls.A = {"Authorization": "Bearer " + s.token}
        cls.tmp = tempfile.mkdtemp(prefix="dd-share-")
        # a copy for the tables a test rewrites (mtimes for time travel)
        cls.simple = os.path.join(cls.tmp, "simple_table")
        shutil.copytree(os.path.join(RS, "simple_table"), cls.simple)
        cls.admin("POST", "/shares", {"name": "Sales", "description": "d"})
        cls.admin("POST", "/shares/sales/schemas", {"name": "Main"})
        tables = {
            "simple": ("file://" + cls.simple, True),
            "parts": ("file://" + os.path.join(RS, "delta-0.8.0-partitioned"), False),
            "cdf": ("file://" + os.path.join(RS, "cdf-table"), True),
            "dv": ("file://" + os.path.join(RS, "table-with-dv-small"), True),
        }
        for name, (url, hist) in tables.items():
            cls.admin("POST", "/shares/sales/schemas/main/tables",
                      {"name": name, "url": url, "historyShared": hist})
        for i in range(5):
            cls.admin("POST", "/shares", {"name": "extra%d" % i})
        r = cls.admin("POST", "/recipients", {"name": "bob"})
        cls.token = r["bearerToken"]
        cls.profile = json.loads(r["profile"])
        cls.admin("POST", "/recipients/bob/grants/SALES", None)
        cls.R = {"Authorization": "Bearer " + cls.token}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    @classmethod
    def admin(cls, method, path, body):
        r = requests.request(method, cls.B + path, json=body, headers=cls.A)
        assert r.status_code == 200, (path, r.status_code, r.text)
        return r.json()

    def get(self, path, headers=None, **params):
        return requests.get(self.B + path, headers=headers or self.R, params=params)

    def query(self, table, body=None, caps=None, token=None):
        hd = dict(self.R if token is None else {"Authorization": "Bearer " + token})
        if caps:
            hd["delta-sharing-capabilities"] = caps
        return requests.post(self.B + "/shares/sales/schemas/main/tables/%s/query" % table,
                             data=json.dumps(body or {}), headers=hd)

    # ---- lists -------------------------------------------------------------------------

    def test_profile(self):
        self.assertEqual(self.profile["shareCredentialsVersion"], 1)
        self.assertEqual(self.profile["endpoint"], self.B)
        self.assertEqual(self.profile["bearerToken"], self.token)
        self.assertIn("expirationTime", self.profile)

    def test_list_shares_recipient_sees_grants_only(self):
        r = self.get("/shares")
        self.assertEqual(r.status_code, 200)
        self.assertTrue(r.headers["Content-Type"].startswith("application/json"))
        self.assertNotIn("\n", r.text.strip())
        self.assertEqual([s["name"] for s in r.json()["items"]], ["Sales"])
        self.assertNotIn("nextPageToken", r.json())

    def test_list_shares_follows_every_change(self):
        """ListShares answers are kept per caller and catalog state: each grant, revoke,
        new or dropped share, rotated token and dropped recipient shows in the next list,
        and one recipient never sees another's list, nor the admin's."""
        def names(tok, **params):
            r = requests.get(self.B + "/shares", params=params,
                             headers={"Authorization": "Bearer " + tok})
            self.assertEqual(r.status_code, 200, r.text)
            return [x["name"] for x in r.json().get("items", [])], r.json().get("nextPageToken")

        def twice(tok, **params):  # the second answer may come from what the first kept
            first = names(tok, **params)
            self.assertEqual(names(tok, **params), first)
            return first[0]

        erin = self.admin("POST", "/recipients", {"name": "erin"})["bearerToken"]
        frank = self.admin("POST", "/recipients", {"name": "frank"})["bearerToken"]
        try:
            self.assertEqual(twice(erin), [])
            self.admin("POST", "/recipients/erin/grants/extra0", None)
            self.admin("POST", "/recipients/frank/grants/extra1", None)
            self.assertEqual(twice(erin), ["extra0"])
            self.assertEqual(twice(frank), ["extra1"])
            self.assertEqual(len(twice(self.server.token)), 6)
            self.admin("POST", "/recipients/erin/grants/extra2", None)
            self.assertEqual(twice(erin), ["extra0", "extra2"])
            self.assertEqual(twice(frank), ["extra1"])
            # pages: the same state, another key
            page, tok = names(erin, maxResults=1)
            self.assertEqual((page, bool(tok)), (["extra0"], True))
            self.assertEqual(twice(erin, maxResults=1, pageToken=tok), ["extra2"])
            requests.delete(self.B + "/recipients/erin/grants/extra0", headers=self.A)
            self.assertEqual(twice(erin), ["extra2"])
            self.assertEqual(twice(erin, maxResults=1, pageToken=tok), ["extra2"])
            self.admin("POST", "/shares", {"name": "zcache"})
            self.admin("POST", "/recipients/erin/grants/zcache", None)
            self.assertEqual(twice(erin), ["extra2", "zcache"])
            requests.delete(self.B + "/recipients/erin/grants/zcache", headers=self.A)
            r = requests.delete(self.B + "/shares/zcache", headers=self.A)
            self.assertEqual(r.status_code, 200, r.text)
            self.assertEqual(twice(erin), ["extra2"])
            self.assertEqual(len(twice(self.server.token)), 6)
            new = self.admin("POST", "/recipients/erin/rotate-token",
                             {"existingTokenExpireInSeconds": "0"})["bearerToken"]
            r = requests.get(self.B + "/shares", headers={"Authorization": "Bearer " + erin})
            self.assertEqual(r.status_code, 401)
            self.assertEqual(twice(new), ["extra2"])
            requests.delete(self.B + "/recipients/erin", headers=self.A)
            r = requests.get(self.B + "/shares", headers={"Authorization": "Bearer " + new})
            self.assertEqual(r.status_code, 401)
            self.assertEqual(twice(frank), ["extra1"])
        finally:
            requests.delete(self.B + "/recipients/erin", headers=self.A)
            requests.delete(self.B + "/recipients/frank", headers=self.A)
            requests.delete(self.B + "/shares/zcache", headers=self.A)

    def memo_hits(self, method="ListShares"):
        r = requests.get(self.server.http_base + "/metrics", headers=self.A)
        self.assertEqual(r.status_code, 200, r.text)
        for line in r.text.splitlines():
            if line.startswith("deltad_reply_memo_hits_total{") and 'method="%s"' % method in line \
                    and "DeltaSharingService" in line:
                return int(float(line.rsplit(" ", 1)[1]))
        return 0

    def assert_memo_moved(self, before, method, at_least):
        if os.environ.get("DD_CATALOG_BACKEND") == "postgresql":
            # no catalog generation to key on: every answer is built from the catalog
            self.assertEqual(self.memo_hits(method) - before, 0)
        else:
            self.assertGreaterEqual(self.memo_hits(method) - before, at_least)

    def test_lists_memo_follow_changes(self):
        """GetShare, ListSchemas, ListTables and ListAllTables are kept like ListShares:
        repeated answers are the same bytes from the memo; a new table or schema in the
        share (a new catalog generation) shows in the next answer."""
        self.admin("POST", "/shares", {"name": "memo_s"})
        self.admin("POST", "/shares/memo_s/schemas", {"name": "m1"})
        self.admin("POST", "/shares/memo_s/schemas/m1/tables",
                   {"name": "t1", "url": "file://" + self.simple})
        self.admin("POST", "/recipients/bob/grants/memo_s", None)
        try:
            paths = {"GetShare": "/shares/memo_s", "ListSchemas": "/shares/memo_s/schemas",
                     "ListTables": "/shares/memo_s/schemas/m1/tables",
                     "ListAllTables": "/shares/memo_s/all-tables"}
            first = {}
            for method, path in paths.items():
                first[method] = self.get(path)
                self.assertEqual(first[method].status_code, 200, first[method].text)
                before = self.memo_hits(method)
                for _ in range(2):
                    self.assertEqual(self.get(path).content, first[method].content)
                self.assert_memo_moved(before, method, 2)
            self.assertEqual([t["name"] for t in first["ListTables"].json()["items"]], ["t1"])
            self.admin("POST", "/shares/memo_s/schemas/m1/tables",
                       {"name": "t2", "url": "file://" + self.simple})
            self.admin("POST", "/shares/memo_s/schemas", {"name": "m2"})
            self.assertEqual([t["name"] for t in self.get(paths["ListTables"]).json()["items"]],
                             ["t1", "t2"])
            self.assertEqual([t["name"] for t in self.get(paths["ListAllTables"]).json()["items"]],
                             ["t1", "t2"])
            self.assertEqual([x["name"] for x in self.get(paths["ListSchemas"]).json()["items"]],
                             ["m1", "m2"])
            # another recipient's view of the same state is its own key: not granted
            self.assertEqual(self.get(paths["ListTables"], headers=self.A).status_code, 200)
            requests.delete(self.B + "/recipients/bob/grants/memo_s", headers=self.A)
            self.assertEqual(self.get(paths["ListTables"]).status_code, 404)
            self.assertEqual(self.get(paths["GetShare"]).status_code, 404)
        finally:
            requests.delete(self.B + "/recipients/bob/grants/memo_s", headers=self.A)
            r = requests.delete(self.B + "/shares/memo_s?force=true", headers=self.A)
            self.assertEqual(r.status_code, 200, r.text)

    def test_list_shares_memo_same_bytes(self):
        """A repeated ListShares is sent from the bytes REST kept (the memo hit counter
        moves) and they equal the first answer's; a grant changes the catalog generation,
        so the next list is built again and shows it."""
        gina = self.admin("POST", "/recipients", {"name": "gina"})["bearerToken"]
        G = {"Authorization": "Bearer " + gina}
        try:
            self.admin("POST", "/recipients/gina/grants/extra3", None)
            first = self.get("/shares", headers=G)
            hits = self.memo_hits()
            again = [self.get("/shares", headers=G) for _ in range(3)]
            for r in [first] + again:
                self.assertEqual(r.status_code, 200)
                self.assertTrue(r.headers["Content-Type"].startswith("application/json"))
            self.assertEqual({r.content for r in again}, {first.content})
            self.assertEqual([x["name"] for x in first.json()["items"]], ["extra3"])
            self.assert_memo_moved(hits, "ListShares", 3)
            # pages are keys of their own: a page of one is not the full list's bytes
            page = self.get("/shares", headers=G, maxResults=1)
            self.assertEqual(page.content, self.get("/shares", headers=G, maxResults=1).content)
            self.assertEqual(page.json()["items"], first.json()["items"])
            self.admin("POST", "/recipients/gina/grants/extra4", None)
            after = self.get("/shares", headers=G)
            self.assertEqual([x["name"] for x in after.json()["items"]], ["extra3", "extra4"])
            self.assertEqual(self.get("/shares", headers=G).content, after.content)
            # the admin's list of the same state is another caller's key
            admin = self.get("/shares", headers=self.A)
            self.assertEqual(self.get("/shares", headers=self.A).content, admin.content)
            self.assertGreater(len(admin.json()["items"]), 2)
        finally:
            requests.delete(self.B + "/recipients/gina", headers=self.A)

    def test_admin_paging(self):
        names, token, pages = [], None, 0
        while True:
            params = {"maxResults": 2}
            if token:
                params["pageToken"] = token
            r = self.get("/shares", headers=self.A, **params).json()
            names += [s["name"] for s in r.get("items", [])]
            pages += 1
            token = r.get("nextPageToken")
            if not token:
                break
        self.assertEqual(names, ["extra0", "extra1", "extra2", "extra3", "extra4", "Sales"])
        self.assertEqual(pages, 3)

    def test_tables_and_all_tables(self):
        r = self.get("/shares/SALES/schemas/MAIN/tables", maxResults=3).json()
        self.assertEqual([t["name"] for t in r["items"]], ["cdf", "dv", "parts"])
        r2 = self.get("/shares/sales/schemas/main/tables", pageToken=r["nextPageToken"]).json()
        self.assertEqual([t["name"] for t in r2["items"]], ["simple"])
        a = self.get("/shares/sales/all-tables").json()["items"]
        self.assertEqual(len(a), 4)
        self.assertEqual(set(a[0]), {"name", "schema", "share", "shareId", "id"})
        s = self.get("/shares/sales/schemas").json()
        self.assertEqual(s, {"items": [{"name": "Main", "share": "sales"}]})
        self.assertEqual(self.get("/shares/sales").json()["share"]["name"], "Sales")

    def test_bad_paging(self):
        for params in ({"maxResults": 100000}, {"maxResults": -1}, {"maxResults": "x"},
                       {"pageToken": "garbage!"}):
            r = self.get("/shares", **params)
            self.assertEqual(r.status_code, 400, params)
            self.assertEqual(r.json()["errorCode"], "INVALID_PARAMETER_VALUE")
        # a token of another list is refused too
        tok = self.get("/shares/sales/schemas/main/tables", maxResults=1).json()["nextPageToken"]
        self.assertEqual(self.get("/shares", pageToken=tok).status_code, 400)

    # ---- access ----------------------------------------------------------------------------

    def test_unauthenticated(self):
        for hd in ({}, {"Authorization": "Bearer nope"}):
            r = requests.get(self.B + "/shares", headers=hd)
            self.assertEqual(r.status_code, 401)
            self.assertEqual(r.json()["errorCode"], "UNAUTHENTICATED")

    def test_not_granted_is_not_found(self):
        a = self.get("/shares/extra1")
        b = self.get("/shares/nothere")
        self.assertEqual((a.status_code, b.status_code), (404, 404))
        self.assertEqual(a.json()["errorCode"], "RESOURCE_DOES_NOT_EXIST")
        self.assertEqual(a.json()["message"].replace("extra1", "X"),
                         b.json()["message"].replace("nothere", "X"))

    def test_recipient_cannot_manage(self):
        r = requests.post(self.B + "/shares", json={"name": "mine"}, headers=self.R)
        self.assertEqual(r.status_code, 403)
        self.assertEqual(r.json()["errorCode"], "PERMISSION_DENIED")

    def test_odd_paths(self):
        for p in ("/shares/%ff%fe", "/sharesX", "/shares//schemas", "/shares/sales/x",
                  "/shares/a/schemas/b/tables/t/x/y/z/w"):
            r = self.get(p)
            self.assertEqual(r.status_code, 404, p)
            self.assertEqual(r.json()["errorCode"], "RESOURCE_DOES_NOT_EXIST")
        r = requests.put(self.B + "/shares/sales", headers=self.A)
        self.assertEqual(r.status_code, 404)
        r = self.get("/shares", maxResults=0).json()
        self.assertEqual(r["items"], [])
        self.assertEqual(len(self.get("/shares", pageToken=r["nextPageToken"]).json()["items"]), 1)

    def test_missing_table(self):
        r = self.get("/shares/sales/schemas/main/tables/zzz/version")
        self.assertEqual(r.status_code, 404)
        self.assertIn("[Share/Schema/Table]", r.json()["message"])

    # ---- version / metadata -------------------------------------------------------------------

    def test_version_get_and_head(self):
        r = self.get("/shares/sales/schemas/main/tables/simple/version")
        self.assertEqual((r.status_code, r.headers["Delta-Table-Version"]), (200, "4"))
        r = requests.head(self.B + "/shares/sales/schemas/main/tables/Simple", headers=self.R)
        self.assertEqual((r.status_code, r.headers["Delta-Table-Version"]), (200, "4"))

    def test_version_by_timestamp(self):
        log = os.path.join(self.simple, "_delta_log")
        base = 1_600_000_000
        for v in range(5):
            p = os.path.join(log, "%020d.json" % v)
            os.utime(p, (base + 100 * v, base + 100 * v))
        ts = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(base + 150))
        r = self.get("/shares/sales/schemas/main/tables/simple/version", startingTimestamp=ts)
        self.assertEqual((r.status_code, r.headers.get("Delta-Table-Version")), (200, "2"), r.text)
        r = self.get("/shares/sales/schemas/main/tables/parts/version", startingTimestamp=ts)
        self.assertEqual(r.status_code, 400)  # history not shared

    def test_metadata(self):
        r = self.get("/shares/sales/schemas/main/tables/parts/metadata")
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.headers["Content-Type"], "application/x-ndjson; charset=utf-8")
        lines = ndjson(r.text)
        self.assertEqual(list(lines[0]), ["protocol"])
        self.assertIn("metaData", lines[1])
        self.assertIn("Delta-Table-Version", r.headers)
        self.assertEqual(r.headers["delta-sharing-capabilities"], "responseformat=parquet")

    # ---- query ------------------------------------------------------------------------------

    def files_of(self, text):
        return [l["file"] for l in ndjson(text) if "file" in l]

    def check_download(self, table_dir, f):
        rel = None
        path = urllib.parse.urlparse(f["url"]).path
        # the local path is everything after the table id segment
        rel = urllib.parse.unquote(path.split("/files/", 1)[1].split("/", 1)[1])
        with open(os.path.join(table_dir, rel), "rb") as fh:
            disk = fh.read()
        d = requests.get(f["url"])
        self.assertEqual(d.status_code, 200)
        self.assertEqual(d.content, disk)
        self.assertEqual(f["size"], len(disk))
        r = requests.get(f["url"], headers={"Range": "bytes=4-9"})
        self.assertEqual(r.status_code, 206)
        self.assertEqual(r.content, disk[4:10])
        self.assertEqual(r.headers["Content-Range"], "bytes 4-9/%d" % len(disk))
        self.assertEqual(r.headers["Accept-Ranges"], "bytes")
        r = requests.get(f["url"], headers={"Range": "bytes=-7"})  # the last 7 bytes
        self.assertEqual(r.status_code, 206)
        self.assertEqual(r.content, disk[-7:])
        r = requests.head(f["url"])
        self.assertEqual(r.status_code, 200)
        self.assertEqual(int(r.headers["Content-Length"]), len(disk))
        self.assertEqual(r.content, b"")

    def test_query_and_download_everything(self):
        for name, d in (("simple", self.simple),
                        ("parts", os.path.join(RS, "delta-0.8.0-partitioned"))):
            r = self.query(name)
            self.assertEqual(r.status_code, 200, r.text)
            lines = ndjson(r.text)
            self.assertIn("protocol", lines[0])
            self.assertIn("metaData", lines[1])
            files = self.files_of(r.text)
            self.assertTrue(files)
            for f in files:
                self.check_download(d, f)

    def test_query_with_curl(self):
        st, text = self.server.curl("POST", "/shares/sales/schemas/main/tables/simple/query",
                                    body={}, token=self.token)
        self.assertEqual(st, 200)

    def test_partition_predicate(self):
        full = self.files_of(self.query("parts").text)
        hint = {"op": "equal", "children": [
            {"op": "column", "name": "year", "valueType": "string"},
            {"op": "literal", "value": "2020", "valueType": "string"}]}
        some = self.files_of(self.query("parts", {"jsonPredicateHints": json.dumps(hint)}).text)
        self.assertTrue(0 < len(some) < len(full), (len(some), len(full)))
        self.assertTrue(all(f["partitionValues"]["year"] == "2020" for f in some))
        sql = self.files_of(self.query("parts", {"predicateHints": ["year = '2021'"]}).text)
        self.assertTrue(all(f["partitionValues"]["year"] == "2021" for f in sql))

    def test_time_travel_and_limits(self):
        v0 = self.files_of(self.query("simple", {"version": 0}).text)
        v4 = self.files_of(self.query("simple").text)
        self.assertNotEqual(sorted(f["id"] for f in v0), sorted(f["id"] for f in v4))
        r = self.query("simple", {"version": 99})
        self.assertEqual(r.status_code, 400)
        r = self.query("parts", {"version": 0})
        self.assertEqual(r.status_code, 400)  # history not shared

    def test_query_paging(self):
        caps = "includeendstreamaction=true"
        r = self.query("parts", {"maxFiles": 2}, caps=caps)
        lines = ndjson(r.text)
        self.assertEqual(len([l for l in lines if "file" in l]), 2)
        self.assertIn("endStreamAction", lines[-1])
        tok = lines[-1]["endStreamAction"].get("nextPageToken")
        self.assertTrue(tok)
        r2 = self.query("parts", {"maxFiles": 2, "pageToken": tok}, caps=caps)
        self.assertEqual(r2.status_code, 200, r2.text)
        self.assertIn("includeendstreamaction=true", r.headers["delta-sharing-capabilities"])

    def test_bad_query_bodies(self):
        for body in ("{", '{"version": "x"}', '{"limitHint": true}', "[1]",
                     '{"pageToken": "nope"}'):
            r = requests.post(self.B + "/shares/sales/schemas/main/tables/simple/query",
                              data=body, headers=self.R)
            self.assertEqual(r.status_code, 400, body)
            self.assertIn(r.json()["errorCode"], ("INVALID_PARAMETER_VALUE", "MALFORMED_REQUEST"))
        self.assertEqual(self.get("/shares").status_code, 200)  # still up

    # ---- CDF ----------------------------------------------------------------------------------

    def test_changes(self):
        r = self.get("/shares/sales/schemas/main/tables/cdf/changes", startingVersion=0,
                     endingVersion=3)
        self.assertEqual(r.status_code, 200, r.text)
        lines = ndjson(r.text)
        self.assertIn("protocol", lines[0])
        kinds = {k for l in lines[2:] for k in l}
        self.assertTrue(kinds & {"add", "cdf", "remove"}, kinds)
        for l in lines[2:]:
            for k in ("add", "cdf", "remove"):
                if k in l:
                    self.assertIn("version", l[k])
        r = self.get("/shares/sales/schemas/main/tables/cdf/changes", startingVersion="x")
        self.assertEqual(r.status_code, 400)
        r = self.get("/shares/sales/schemas/main/tables/parts/changes", startingVersion=0)
        self.assertEqual(r.status_code, 400)

    # ---- deletion vectors -------------------------------------------------------------------------

    def test_deletion_vectors(self):
        r = self.query("dv")
        self.assertEqual(r.status_code, 400)
        r = self.query("dv", caps="responseformat=delta;readerfeatures=deletionvectors")
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.headers["delta-sharing-capabilities"].split(";")[0],
                         "responseformat=delta")
        lines = ndjson(r.text)
        self.assertIn("deltaMetadata", lines[1]["metaData"])
        files = [l["file"] for l in lines if "file" in l]
        self.assertTrue(any("deletionVector" in f["deltaSingleAction"]["add"] for f in files))

    # ---- file URLs ----------------------------------------------------------------------------------

    def test_forged_and_expired_urls(self):
        f = self.files_of(self.query("simple").text)[0]
        u = f["url"]
        self.assertEqual(requests.get(u).status_code, 200)
        for bad in (u.replace("sig=", "sig=x"), u.replace("expires=", "expires=9"),
                    u.replace(".parquet", ".parquetx"), u.split("?")[0],
                    u.replace("/part-", "/../../etc/part-")):
            r = requests.get(bad)
            self.assertIn(r.status_code, (403, 404), bad)
            self.assertNotIn(b"PAR1", r.content)
        time.sleep(2.2)
        r = requests.get(u)
        self.assertEqual(r.status_code, 403)

    # ---- recipients ------------------------------------------------------------------------------

    def test_rotate_and_revoke(self):
        r = self.admin("POST", "/recipients", {"name": "carol", "tokenLifetimeSeconds": "3600"})
        old = r["bearerToken"]
        self.admin("POST", "/recipients/carol/grants/sales", None)
        hd = {"Authorization": "Bearer " + old}
        self.assertEqual(requests.get(self.B + "/shares/sales", headers=hd).status_code, 200)
        new = self.admin("POST", "/recipients/carol/rotate-token",
                         {"existingTokenExpireInSeconds": "0"})["bearerToken"]
        self.assertEqual(requests.get(self.B + "/shares", headers=hd).status_code, 401)
        hd = {"Authorization": "Bearer " + new}
        self.assertEqual(requests.get(self.B + "/shares/sales", headers=hd).status_code, 200)
        requests.delete(self.B + "/recipients/carol/grants/sales", headers=self.A)
        self.assertEqual(requests.get(self.B + "/shares/sales", headers=hd).status_code, 404)
        g = requests.get(self.B + "/grants", params={"share": "sales"}, headers=self.A).json()
        self.assertEqual([x["recipient"] for x in g["grants"]], ["bob"])
        requests.delete(self.B + "/recipients/carol", headers=self.A)
        self.assertEqual(requests.get(self.B + "/shares", headers=hd).status_code, 401)

    def test_expired_token(self):
        r = self.admin("POST", "/recipients", {"name": "dave", "tokenLifetimeSeconds": "1"})
        time.sleep(1.2)
        hd = {"Authorization": "Bearer " + r["bearerToken"]}
        self.assertEqual(requests.get(self.B + "/shares", headers=hd).status_code, 401)

    def test_admin_errors(self):
        r = requests.post(self.B + "/shares", data="{", headers=self.A)
        self.assertEqual(r.status_code, 400)
        r = requests.post(self.B + "/shares", json={"name": "Sales"}, headers=self.A)
        self.assertEqual(r.status_code, 409)
        r = requests.delete(self.B + "/shares/sales", headers=self.A)
        self.assertEqual(r.status_code, 400)  # has schemas
        r = requests.post(self.B + "/shares/sales/schemas/main/tables",
                          json={"name": "x", "url": "file:///a", "location": "l"}, headers=self.A)
        self.assertEqual(r.status_code, 400)


if __name__ == "__main__":
    h.main()
