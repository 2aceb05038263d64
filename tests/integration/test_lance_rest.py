#!/usr/bin/python3
"""test_lance_rest.py: the Lance Namespace REST API (/v1/namespace/..., /v1/table/...) with
real curl against a real deltad: every Lance error code the server can produce with its
HTTP status, nested namespaces, sibling isolation, root rules, modes, properties shared
with the catalog API, special characters in ids, paging while namespaces are added, bad
input that must write nothing, and the same operations over gRPC."""
import json
import urllib.parse

import grpc

import dd_harness
from dd_harness import ServerTest


def q(*parts, delim="$"):
    """The {id} path segment for parts, percent-encoded the way the LanceDB client does."""
    if not parts:
        return urllib.parse.quote(delim, safe="")
    return urllib.parse.quote_plus(delim.join(parts))


class LanceRest(ServerTest):
    def L(self, method, path, body=None, token="admin", headers=()):
        return self.server.curl(method, self.server.http_base + path, body, token, headers)

    def post(self, op, *parts, body=None, **kw):
        return self.L("POST", "/v1/namespace/%s/%s" % (q(*parts), op), {} if body is None else body, **kw)

    def tpost(self, op, *parts, body=None, **kw):
        return self.L("POST", "/v1/table/%s/%s" % (q(*parts), op), {} if body is None else body, **kw)

    def ls(self, *parts, query=""):
        code, body = self.L("GET", "/v1/namespace/%s/list%s" % (q(*parts), query))
        self.assertEqual(code, 200, body)
        return body["namespaces"]

    def tables(self, *parts):
        code, body = self.L("GET", "/v1/namespace/%s/table/list" % q(*parts))
        self.assertEqual(code, 200, body)
        return body["tables"]

    def create(self, *parts, props=None, mode=None):
        body = {}
        if props is not None:
            body["properties"] = props
        if mode is not None:
            body["mode"] = mode
        code, resp = self.post("create", *parts, body=body)
        self.assertEqual(code, 200, resp)
        return resp

    def assertLanceError(self, resp, status, code, text=None):
        got_status, body = resp
        self.assertEqual(got_status, status, body)
        self.assertIsInstance(body, dict, body)
        self.assertEqual(body["code"], code, body)
        self.assertIsInstance(body["error"], str)
        self.assertTrue(body["error"], body)
        self.assertTrue(body["instance"].startswith("/v1/"), body)
        if text:
            self.assertIn(text, body["error"])

    # ---- error codes ----------------------------------------------------------------------

    def test_every_error_code(self):
        self.create("ec")
        self.create("ec", "s")
        # 2 NamespaceAlreadyExists / 409
        self.assertLanceError(self.post("create", "ec"), 409, 2, "already exists")
        self.assertLanceError(self.post("create", "ec", "s"), 409, 2)
        # 1 NamespaceNotFound / 404, on every namespace operation and for a table's namespace
        self.assertLanceError(self.post("describe", "ec", "nope"), 404, 1, "ec$nope")
        self.assertLanceError(self.post("exists", "ec", "nope"), 404, 1)
        self.assertLanceError(self.post("drop", "ec", "nope"), 404, 1)
        self.assertLanceError(self.post("create", "ec", "nope", "child"), 404, 1)
        self.assertLanceError(self.L("GET", "/v1/namespace/%s/list" % q("ec", "nope")), 404, 1)
        self.assertLanceError(self.L("GET", "/v1/namespace/%s/table/list" % q("nope")), 404, 1)
        self.assertLanceError(self.tpost("describe", "ec", "nope", "t"), 404, 1)
        self.assertLanceError(self.tpost("register", "ec", "nope", "t",
                                         body={"location": "/x"}), 404, 1)
        self.assertLanceError(self.tpost("drop", "ec", "nope", "t"), 404, 1)
        # 4 TableNotFound / 404
        self.assertLanceError(self.tpost("describe", "ec", "s", "t"), 404, 4, "ec$s$t")
        self.assertLanceError(self.tpost("exists", "ec", "s", "t"), 404, 4)
        self.assertLanceError(self.tpost("deregister", "ec", "s", "t"), 404, 4)
        self.assertLanceError(self.tpost("drop", "ec", "s", "t"), 404, 4)
        # 5 TableAlreadyExists / 409
        self.assertEqual(self.tpost("register", "ec", "s", "t", body={"location": "/d/t"})[0], 200)
        self.assertLanceError(self.tpost("register", "ec", "s", "t", body={"location": "/d/u"}),
                              409, 5, "already exists")
        # 3 NamespaceNotEmpty / 409: a table, then a child namespace
        self.assertLanceError(self.post("drop", "ec", "s"), 409, 3, "not empty")
        self.assertLanceError(self.post("drop", "ec"), 409, 3, "not empty")
        self.assertEqual(self.ls("ec"), ["s"])
        # 13 InvalidInput / 400
        self.assertLanceError(self.post("create", "ec2", body="{not json"), 400, 13, "JSON")
        self.assertLanceError(self.post("create", "ec2", body={"mode": "Sometimes"}), 400, 13, "mode")
        self.assertLanceError(self.post("create", "ec2", body={"id": ["other"]}), 400, 13, "id")
        # 16 Unauthenticated / 401: no token, a wrong bearer token, a wrong x-api-key
        self.assertLanceError(self.post("describe", "ec", token=None), 401, 16)
        self.assertLanceError(self.post("describe", "ec", token="wrong"), 401, 16)
        self.assertLanceError(self.post("describe", "ec", token=None,
                                        headers=["x-api-key: wrong"]), 401, 16)
        self.assertLanceError(self.L("GET", "/v1/namespace/%24/list", token=None), 401, 16)
        # 0 Unsupported / 406: operations deltad does not serve
        self.assertLanceError(self.tpost("create", "ec", "s", "t"), 406, 0)
        self.assertLanceError(self.L("GET", "/v1/table"), 406, 0)
        self.assertLanceError(self.tpost("describe", "ec", "s", "t", body={
            "load_detailed_metadata": True}), 406, 0)
        self.assertNotIn("ec2", self.ls())

    # ---- hierarchy ------------------------------------------------------------------------

    def test_three_levels_and_sibling_isolation(self):
        self.create("h1", props={"l": "1"})
        self.create("h1", "a", props={"l": "2a"})
        self.create("h1", "b", props={"l": "2b"})
        self.create("h1", "a", "x", props={"l": "3"})
        self.create("h1", "a", "x", "y")
        self.create("h2")
        self.create("h2", "a")
        self.assertEqual(self.ls("h1"), ["a", "b"])
        self.assertEqual(self.ls("h1", "a"), ["x"])
        self.assertEqual(self.ls("h1", "b"), [])
        self.assertEqual(self.ls("h2", "a"), [])
        self.assertEqual(self.ls("h1", "a", "x"), ["y"])
        for parts, l in [(("h1",), "1"), (("h1", "a"), "2a"), (("h1", "b"), "2b"),
                         (("h1", "a", "x"), "3")]:
            code, body = self.post("describe", *parts)
            self.assertEqual((code, body["properties"]), (200, {"l": l}))
        self.assertEqual(self.tpost("register", "h1", "a", "t", body={"location": "/d/a"})[0], 200)
        self.assertEqual(self.tpost("register", "h1", "a", "x", "t", body={"location": "/d/x"})[0], 200)
        self.assertEqual(self.tables("h1", "a"), ["t"])
        self.assertEqual(self.tables("h1", "b"), [])
        self.assertEqual(self.tables("h2", "a"), [])
        self.assertEqual(self.tpost("describe", "h1", "a", "x", "t")[1]["location"], "/d/x")
        self.assertLanceError(self.tpost("describe", "h2", "a", "t"), 404, 4)
        # dropping a sibling leaves the other alone; cascade takes the whole subtree
        code, body = self.post("drop", "h1", "b")
        self.assertEqual((code, body["properties"]), (200, {"l": "2b"}))
        self.assertEqual(self.ls("h1"), ["a"])
        self.assertEqual(self.post("drop", "h1", body={"behavior": "Cascade"})[0], 200)
        self.assertNotIn("h1", self.ls())
        self.assertEqual(self.ls("h2"), ["a"])
        self.assertLanceError(self.tpost("describe", "h1", "a", "x", "t"), 404, 1)
        self.assertEqual(self.L("GET", "/api/v1/catalogs/h1")[0], 404)

    def test_catalog_api_delete_respects_lance_content(self):
        # A schema (level 2) holding a Lance namespace is "not empty" for the catalog API too.
        self.create("cdel")
        self.create("cdel", "s")
        self.create("cdel", "s", "deep")
        self.assertEqual(self.tpost("register", "cdel", "s", "deep", "t",
                                    body={"location": "/d/t"})[0], 200)
        code, body = self.server.curl("DELETE", "/schemas/cdel.s")
        self.assertEqual((code, body["code"]), (400, 9), body)
        self.assertEqual(self.ls("cdel", "s"), ["deep"])  # nothing was deleted
        code, body = self.server.curl("DELETE", "/catalogs/cdel?force=true")
        self.assertEqual(code, 200, body)
        self.assertLanceError(self.post("describe", "cdel", "s", "deep"), 404, 1)
        self.assertLanceError(self.tpost("describe", "cdel", "s", "deep", "t"), 404, 1)
        # Re-creating the same names starts empty: nothing unreachable was left behind.
        self.create("cdel")
        self.create("cdel", "s")
        self.assertEqual(self.ls("cdel", "s"), [])
        self.assertEqual(self.tables("cdel", "s"), [])

    def test_root_namespace(self):
        self.create("r1")
        self.assertIn("r1", self.ls())
        code, body = self.post("describe")
        self.assertEqual((code, body), (200, {"properties": {}}))
        code, body = self.post("exists")
        self.assertEqual((code, body), (200, None))  # the status is the answer: no body
        self.assertLanceError(self.post("create"), 409, 2)
        self.assertEqual(self.post("create", body={"mode": "ExistOk"})[0], 200)
        self.assertLanceError(self.post("create", body={"mode": "Overwrite"}), 400, 13)
        self.assertLanceError(self.post("drop"), 400, 13, "root")
        self.assertLanceError(self.post("drop", body={"mode": "Skip", "behavior": "Cascade"}), 400, 13)
        self.assertLanceError(self.tpost("register", "t", body={"location": "/d"}), 400, 13, "root")
        self.assertLanceError(self.tpost("describe", "t"), 404, 4)
        self.assertEqual(self.tables(), [])
        # the root under another delimiter is that delimiter
        code, body = self.L("GET", "/v1/namespace/%3A%3A/list?delimiter=%3A%3A")
        self.assertEqual(code, 200, body)
        self.assertIn("r1", body["namespaces"])
        self.assertIn("r1", self.ls())

    # ---- modes --------------------------------------------------------------------------------

    def test_create_modes(self):
        self.create("m1", props={"v": "1"})
        self.create("m1", "child")
        for mode in ("ExistOk", "exist_ok", "EXISTOK", "Exist_Ok", "existok"):
            code, body = self.post("create", "m1", body={"mode": mode, "properties": {"v": "2"}})
            self.assertEqual((code, body["properties"]), (200, {"v": "1"}), mode)
        for mode in ("Create", "create", "CREATE"):
            self.assertLanceError(self.post("create", "m1", body={"mode": mode}), 409, 2)
        code, body = self.post("create", "m1", body={"mode": "overwrite", "properties": {"v": "3"}})
        self.assertEqual((code, body["properties"]), (200, {"v": "3"}))
        self.assertEqual(self.ls("m1"), [])  # a new, empty namespace
        for bad in ("exists_ok", "Replace", "ex-istok", "x" * 100):
            self.assertLanceError(self.post("create", "m1", body={"mode": bad}), 400, 13, "mode")
        self.assertEqual(self.post("describe", "m1")[1]["properties"], {"v": "3"})

    def test_drop_modes(self):
        for mode in ("Skip", "skip", "SKIP"):
            code, body = self.post("drop", "d0", body={"mode": mode})
            self.assertEqual(code, 200, body)
        for mode in ("Fail", "fail", ""):
            self.assertLanceError(self.post("drop", "d0", body={"mode": mode}), 404, 1)
        self.create("d1")
        self.create("d1", "s")
        self.create("d1", "s", "deep")
        for behavior in ("Restrict", "restrict", "RESTRICT"):
            self.assertLanceError(self.post("drop", "d1", body={"behavior": behavior}), 409, 3)
        self.assertLanceError(self.post("drop", "d1", body={"behavior": "Cascading"}), 400, 13)
        self.assertLanceError(self.post("drop", "d1", body={"mode": "Ignore"}), 400, 13)
        self.assertEqual(self.ls("d1", "s"), ["deep"])
        self.assertEqual(self.post("drop", "d1", body={"behavior": "CASCADE", "mode": "skip"})[0], 200)
        self.assertNotIn("d1", self.ls())

    # ---- the catalog API sees the same objects --------------------------------------------------

    def test_properties_shared_with_catalog_api(self):
        self.create("dual", props={"owner": "ralph", "k": "v"})
        self.create("dual", "gold", props={"tier": "1"})
        code, cat = self.server.curl("GET", "/catalogs/dual")
        self.assertEqual((code, cat["properties"]), (200, {"owner": "ralph", "k": "v"}))
        code, sch = self.server.curl("GET", "/schemas/dual.gold")
        self.assertEqual((code, sch["properties"]), (200, {"tier": "1"}))
        # and the reverse: the catalog API's objects are Lance namespaces
        self.assertEqual(self.server.curl("POST", "/catalogs", {"name": "fromcat",
                                                                "properties": {"a": "b"}})[0], 200)
        self.assertEqual(self.server.curl("POST", "/schemas", {"name": "silver", "catalogName": "fromcat",
                                                               "properties": {"c": "d"}})[0], 200)
        self.assertIn("fromcat", self.ls())
        self.assertEqual(self.ls("fromcat"), ["silver"])
        self.assertEqual(self.post("describe", "fromcat")[1]["properties"], {"a": "b"})
        self.assertEqual(self.post("describe", "fromcat", "silver")[1]["properties"], {"c": "d"})
        # an update through the catalog API is what Lance describes next
        self.assertEqual(self.server.curl("PATCH", "/catalogs/fromcat", {"properties": {"a": "z"}})[0], 200)
        self.assertEqual(self.post("describe", "FROMCAT")[1]["properties"], {"a": "z"})
        # names are case-insensitive as in the catalog API, and keep their spelling
        self.assertLanceError(self.post("create", "DUAL"), 409, 2)
        self.create("dual", "gold", "Deep.Name")
        self.assertEqual(self.ls("dual", "GOLD"), ["Deep.Name"])

    # ---- identifiers --------------------------------------------------------------------------

    def test_special_characters(self):
        self.create("sp")
        self.create("sp", "s")
        names = ["a b", "über", "100%", "x&y", "q?r", "h#1", "p+q", "a.b.c", "t\u00e9\u4e2d", "~!*()'"]
        for n in names:
            self.create("sp", "s", n, props={"name": n})
        self.assertEqual(sorted(self.ls("sp", "s")), sorted(names))
        for n in names:
            code, body = self.post("describe", "sp", "s", n)
            self.assertEqual((code, body["properties"]), (200, {"name": n}), n)
        # %20 and + are both a space; %24 is the delimiter
        code, body = self.L("POST", "/v1/namespace/sp%24s%24a%20b/describe", {})
        self.assertEqual(code, 200, body)
        code, body = self.L("POST", "/v1/namespace/sp$s$a+b/describe", {})
        self.assertEqual(code, 200, body)
        # a name holding '$' needs another delimiter
        code, body = self.L("POST", "/v1/namespace/sp%3A%3As%3A%3Ad%24l/create?delimiter=%3A%3A",
                            {"properties": {}})
        self.assertEqual(code, 200, body)
        self.assertIn("d$l", self.ls("sp", "s"))
        code, body = self.L("POST", "/v1/namespace/sp%3A%3As%3A%3Ad%24l/describe?delimiter=%3A%3A",
                            {"id": ["sp", "s", "d$l"]})
        self.assertEqual(code, 200, body)
        # ...and in the default delimiter the body's id disagrees with the path's: 400
        self.assertLanceError(self.L("POST", "/v1/namespace/sp%24s%24d%24l/describe",
                                     {"id": ["sp", "s", "d$l"]}), 400, 13, "id")
        # a body id that agrees is accepted
        self.assertEqual(self.post("describe", "sp", "s", body={"id": ["sp", "s"]})[0], 200)
        # catalog and schema names keep the catalog API's rules: no '.'; '/' nowhere
        self.assertLanceError(self.post("create", "a.b"), 400, 13, "'.'")
        self.assertLanceError(self.post("create", "sp", "x.y"), 400, 13, "'.'")
        self.assertLanceError(self.post("create", "sp", "s", "a/b"), 400, 13, "'/'")
        self.assertLanceError(self.post("create", "sp", "s", "bad\x01"), 400, 13, "control")
        self.assertEqual(len(self.ls("sp", "s")), len(names) + 1)

    def test_bad_input_writes_nothing(self):
        self.create("bi")
        before = self.ls("bi")
        bad = [
            ("POST", "/v1/namespace/bi$n/create", "{oops", "JSON"),
            ("POST", "/v1/namespace/bi$n/create", "[1,2]", "object"),
            ("POST", "/v1/namespace/bi$n/create", {"mode": "Never"}, "mode"),
            ("POST", "/v1/namespace/bi$n/create", {"mode": 3}, "mode"),
            ("POST", "/v1/namespace/bi$n/create", {"properties": {"k": 1}}, "properties"),
            ("POST", "/v1/namespace/bi$n/create", {"properties": {"": "v"}}, "properties"),
            ("POST", "/v1/namespace/bi$n/create", {"properties": ["k"]}, "properties"),
            ("POST", "/v1/namespace/bi$n/create", {"id": "bi$n"}, "id"),
            ("POST", "/v1/namespace/bi$n/create", {"id": ["bi", "m"]}, "id"),
            ("POST", "/v1/namespace/bi$$n/create", {}, "empty"),
            ("POST", "/v1/namespace/$bi$n/create", {}, "empty"),
            ("POST", "/v1/namespace/bi$n$/create", {}, "empty"),
            ("POST", "/v1/namespace/bi$%ZZ/create", {}, "percent"),
            ("POST", "/v1/namespace/bi$n%00x/create", {}, "percent"),
            ("POST", "/v1/namespace/bi$" + "n" * 256 + "/create", {}, "255"),
            ("POST", "/v1/namespace/bi$" + "$".join(["n"] * 2100) + "/create", {}, "4096"),
            ("POST", "/v1/namespace/bi$" + "$".join(["n"] * 300) + "/create", {}, "deeper"),
            ("POST", "/v1/namespace/bi$n/create?delimiter=", {}, "delimiter"),
            ("GET", "/v1/namespace/bi$n/create", None, "POST"),
            ("POST", "/v1/table/bi$t/register", {}, "location"),
            ("POST", "/v1/table/bi$t/register", {"location": "/x", "mode": "ExistOk"}, "mode"),
            ("POST", "/v1/table/bi$t/register", {"location": "/x\n"}, "location"),
            ("POST", "/v1/table/bi$t/register", {"location": 7}, "location"),
        ]
        for method, path, body, text in bad:
            resp = self.L(method, path, body)
            self.assertLanceError(resp, 400, 13, text)
        self.assertEqual(self.ls("bi"), before)
        self.assertEqual(self.tables("bi"), [])
        self.assertLanceError(self.post("describe", "bi", "n"), 404, 1)

    # ---- paging ---------------------------------------------------------------------------------

    def test_paging_while_adding(self):
        self.create("pg")
        first = ["n%02d" % i for i in range(0, 20, 2)]  # n00, n02, ... n18
        for n in first:
            self.create("pg", n)
        seen, token, pages, made = [], None, 0, []
        added = iter(["n01", "n19", "n03", "n17", "m"])
        while True:
            query = "?limit=3" + ("&page_token=" + urllib.parse.quote(token) if token else "")
            code, body = self.L("GET", "/v1/namespace/pg/list" + query)
            self.assertEqual(code, 200, body)
            self.assertLessEqual(len(body["namespaces"]), 3)
            seen += body["namespaces"]
            pages += 1
            nxt = next(added, None)
            if nxt:
                self.create("pg", nxt)  # both before and after the page boundary
                made.append(nxt)
            token = body.get("page_token")
            if not token:
                break
            self.assertEqual(token, body["namespaces"][-1])
        self.assertEqual(len(seen), len(set(seen)), seen)  # nothing twice
        for n in first:
            self.assertIn(n, seen)  # nothing that stayed is skipped
        self.assertEqual(seen, sorted(seen))
        self.assertGreaterEqual(pages, 4)
        # limit is inclusive; the last page carries no token; bad limits are refused
        code, body = self.L("GET", "/v1/namespace/pg/list?limit=100")
        self.assertEqual(sorted(body["namespaces"]), sorted(first + made))
        self.assertIn("n19", seen)  # added after the boundary: still listed
        self.assertNotIn("page_token", body)
        self.assertLanceError(self.L("GET", "/v1/namespace/pg/list?limit=-1"), 400, 13, "limit")
        self.assertLanceError(self.L("GET", "/v1/namespace/pg/list?limit=abc"), 400, 13, "limit")
        # tables page the same way
        for t in ("t1", "t2", "t3"):
            self.tpost("register", "pg", "n00", t, body={"location": "/d/" + t})
        code, body = self.L("GET", "/v1/namespace/pg$n00/table/list?limit=2")
        self.assertEqual((body["tables"], body["page_token"]), (["t1", "t2"], "t2"))
        code, body = self.L("GET", "/v1/namespace/pg$n00/table/list?limit=2&page_token=t2")
        self.assertEqual(body, {"tables": ["t3"]})

    # ---- tables ---------------------------------------------------------------------------------

    def test_table_lifecycle(self):
        self.create("tb")
        self.create("tb", "s")
        code, body = self.tpost("register", "tb", "s", "events", body={
            "location": "/data/events.lance", "properties": {"fmt": "lance"}, "mode": "create"})
        self.assertEqual((code, body), (200, {"location": "/data/events.lance",
                                              "properties": {"fmt": "lance"}}))
        code, body = self.L("POST", "/v1/table/tb$s$events/describe?with_table_uri=true&check_declared=true", {})
        self.assertEqual(code, 200, body)
        self.assertEqual(body["location"], "/data/events.lance")
        self.assertEqual(body["table_uri"], "file:///data/events.lance")
        self.assertEqual(body["properties"], {"fmt": "lance"})
        self.assertIs(body["is_only_declared"], False)
        code, body = self.tpost("describe", "tb", "s", "events")
        self.assertNotIn("table_uri", body)
        self.assertEqual(self.tpost("exists", "tb", "s", "events"), (200, None))
        self.assertEqual(self.tables("tb", "s"), ["events"])
        code, body = self.tpost("register", "tb", "s", "events", body={
            "location": "s3://b/events", "mode": "Overwrite"})
        self.assertEqual((code, body["location"]), (200, "s3://b/events"))
        code, body = self.L("POST", "/v1/table/tb$s$events/describe?with_table_uri=true", {})
        self.assertEqual((body["location"], body["table_uri"], body["properties"]),
                         ("s3://b/events", "s3://b/events", {}))
        code, body = self.tpost("deregister", "tb", "s", "events")
        self.assertEqual((code, body["location"], body["id"]), (200, "s3://b/events", ["tb", "s", "events"]))
        self.assertEqual(self.tables("tb", "s"), [])
        self.tpost("register", "tb", "s", "e2", body={"location": "/d/e2"})
        code, body = self.L("POST", "/v1/table/tb$s$e2/drop")  # no body, as the spec allows
        self.assertEqual((code, body["location"]), (200, "/d/e2"))
        self.assertLanceError(self.tpost("exists", "tb", "s", "e2"), 404, 4)
        # tables may sit in a catalog (level 1) and deep namespaces, with dots in their names
        self.assertEqual(self.tpost("register", "tb", "v1.2", body={"location": "/d/v"})[0], 200)
        self.assertEqual(self.tables("tb"), ["v1.2"])

    def test_headers(self):
        self.create("hd")
        tok = self.server.token
        code, body = self.post("describe", "hd", token=None, headers=["x-api-key: " + tok])
        self.assertEqual(code, 200, body)
        code, body = self.post("describe", "hd", headers=[
            "x-lance-ctx-trace_id: abc", "x-request-id: r1", "header.x: y"])
        self.assertEqual(code, 200, body)
        code, body = self.post("describe", "hd", body={"identity": {"api_key": "ignored"},
                                                       "context": {"k": "v"}, "future_field": 1})
        self.assertEqual(code, 200, body)

    def test_concurrent_creates(self):
        """Racing creates of one namespace: exactly one wins, the others get code 2; racing
        table lookups on other threads keep their own error subject (code 4 vs 1)."""
        import threading
        self.create("cc")
        self.create("cc", "s")
        results, lock = [], threading.Lock()

        def worker(i):
            if i % 2:
                r = self.post("create", "cc", "s", "same")
            else:
                r = self.tpost("describe", "cc", "s" if i % 4 else "nope", "t%d" % i)
            with lock:
                results.append((i, r))
        threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        creates = [r for i, r in results if i % 2]
        self.assertEqual(sum(1 for code, _ in creates if code == 200), 1, creates)
        for code, body in creates:
            if code != 200:
                self.assertEqual((code, body["code"]), (409, 2))
        for i, (code, body) in results:
            if i % 2 == 0:
                self.assertEqual((code, body["code"]), (404, 4 if i % 4 else 1), body)
        self.assertEqual(self.ls("cc", "s"), ["same"])

    # ---- gRPC: the same handlers ----------------------------------------------------------------

    def test_grpc_service(self):
        dd_harness.stubs_dir()
        from deltad.lance.v1 import lance_pb2 as lp, lance_pb2_grpc as lg
        stub = lg.NamespaceServiceStub(self.server.channel())
        md = self.server.md()
        r = stub.CreateNamespace(lp.CreateNamespaceRequest(id=["gq"], properties={"p": "1"}), metadata=md)
        self.assertEqual(dict(r.properties), {"p": "1"})
        stub.CreateNamespace(lp.CreateNamespaceRequest(id=["gq", "s"], mode="exist_ok"), metadata=md)
        self.assertEqual(list(stub.ListNamespaces(lp.ListNamespacesRequest(id=["gq"]), metadata=md).namespaces), ["s"])
        stub.RegisterTable(lp.RegisterTableRequest(id=["gq", "s", "t"], location="/d/t"), metadata=md)
        d = stub.DescribeTable(lp.DescribeTableRequest(id=["gq", "s", "t"]), metadata=md)
        self.assertEqual(d.location, "/d/t")
        self.assertEqual(self.tables("gq", "s"), ["t"])  # visible over REST at once
        for fn, req, code in [
                (stub.CreateNamespace, lp.CreateNamespaceRequest(id=["gq"]), grpc.StatusCode.ALREADY_EXISTS),
                (stub.DescribeNamespace, lp.DescribeNamespaceRequest(id=["nope"]), grpc.StatusCode.NOT_FOUND),
                (stub.DropNamespace, lp.DropNamespaceRequest(id=["gq"]), grpc.StatusCode.FAILED_PRECONDITION),
                (stub.CreateNamespace, lp.CreateNamespaceRequest(id=["gq2"], mode="bogus"), grpc.StatusCode.INVALID_ARGUMENT)]:
            with self.assertRaises(grpc.RpcError) as cm:
                fn(req, metadata=md, timeout=10)
            self.assertEqual(cm.exception.code(), code)
        with self.assertRaises(grpc.RpcError) as cm:
            stub.ListNamespaces(lp.ListNamespacesRequest(), timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        stub.DropNamespace(lp.DropNamespaceRequest(id=["gq"], behavior="Cascade"), metadata=md)
        self.assertNotIn("gq", self.ls())


if __name__ == "__main__":
    dd_harness.main()
