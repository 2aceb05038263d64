"""test_sharing_badinput.py: malformed and out-of-range requests to the Delta Sharing
server, over native REST (requests and curl) and over gRPC, against a real deltad.

Every bad input must answer HTTP 400 with {"errorCode":"INVALID_PARAMETER_VALUE",
"message":...} naming the problem (gRPC: INVALID_ARGUMENT), and the server must stay up
and exit cleanly (the harness fails on any sanitizer report): invalid JSON bodies,
jsonPredicateHints with an unknown op or wrong value types or arity, huge maxResults, bad
page tokens, versions beyond the latest. What the protocol calls best effort stays an
answer with every file: a JSON predicate on a column the table does not have, and SQL
predicateHints that do not parse. limitHint composes with maxFiles paging.
"""
import json
import os

import grpc
import requests

import dd_harness as h

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
RS = os.path.join(FIX, "delta-rs-data")
Q = "/shares/s1/schemas/sc/tables/%s/query"


def col(name, vt="string"):
    return {"op": "column", "name": name, "valueType": vt}


def lit(value, vt="string"):
    return {"op": "literal", "value": value, "valueType": vt}


def node(op, *kids):
    return {"op": op, "children": list(kids)}


# (jsonPredicateHints value, a word the error message must contain)
BAD_PREDICATES = [
    (node("like", col("year"), lit("2020")), "like"),
    (node("foo", col("year"), lit("2020")), "foo"),
    ({"children": [col("year"), lit("2020")]}, "op"),
    ({"op": 7, "children": [col("year"), lit("2020")]}, "op"),
    (node("equal", col("year", "int"), lit("abc", "int")), "abc"),
    (node("equal", col("year", "date"), lit("2020-13-45", "date")), "date"),
    (node("equal", col("year", "bool"), lit("maybe", "bool")), "bool"),
    (node("equal", col("year", "long"), lit("99999999999999999999", "long")), "long"),
    (node("equal", col("year", "varchar"), lit("2020", "varchar")), "varchar"),
    ({"op": "equal", "children": {"a": col("year")}}, "children"),
    ({"op": "equal", "children": "x"}, "children"),
    ({"op": "equal", "children": [col("year"), 5]}, "object"),
    (node("equal", col("year")), "two"),
    (node("equal", col("year"), lit("1"), lit("2")), "two"),
    (node("lessThan"), "two"),
    (node("and", node("equal", col("year"), lit("2020"))), "and"),
    (node("not", col("year"), col("month")), "not"),
    (node("isNull", lit("2020")), "isNull"),
    (node("equal", node("and", col("a"), col("b")), lit("1")), "leaf"),
    ({"op": "column", "valueType": "string"}, "name"),
    ({"op": "literal", "valueType": "string"}, "value"),
    ({"op": "literal", "value": 5, "valueType": "int"}, "value"),
    ({"op": "column", "name": "year"}, "valueType"),
    ([col("year")], "object"),
]


class SharingBadInput(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        s = cls.server
        cls.B = s.rest
        A = {"Authorization": "Bearer " + s.token}

        def admin(method, path, body):
            r = requests.request(method, cls.B + path, json=body, headers=A)
            assert r.status_code == 200, (path, r.status_code, r.text)
            return r.json()
        admin("POST", "/shares", {"name": "s1"})
        admin("POST", "/shares/s1/schemas", {"name": "sc"})
        for name, d, hist in (("parts", "delta-0.8.0-partitioned", False),
                              ("simple", "simple_table", True),
                              ("prims", "partition-type-primitives", True),
                              ("cdf", "cdf-table", True)):
            admin("POST", "/shares/s1/schemas/sc/tables",
                  {"name": name, "url": "file://" + os.path.join(RS, d), "historyShared": hist})
        r = admin("POST", "/recipients", {"name": "rita"})
        cls.token = r["bearerToken"]
        admin("POST", "/recipients/rita/grants/s1", None)
        cls.R = {"Authorization": "Bearer " + cls.token}
        h.stubs_dir()
        from deltad.sharing.v1 import sharing_pb2, sharing_pb2_grpc
        cls.pb = sharing_pb2
        cls.ch = s.channel()
        cls.svc = sharing_pb2_grpc.DeltaSharingServiceStub(cls.ch)
        cls.rmd = s.md(cls.token)

    @classmethod
    def tearDownClass(cls):
        cls.ch.close()
        super().tearDownClass()

    # ---- helpers ---------------------------------------------------------------------------

    def post(self, table, body, caps=None):
        hd = dict(self.R)
        if caps:
            hd["delta-sharing-capabilities"] = caps
        data = body if isinstance(body, (str, bytes)) else json.dumps(body)
        return requests.post(self.B + Q % table, data=data, headers=hd)

    def assert_400(self, r, word=None, what=None):
        self.assertEqual(r.status_code, 400, (what, r.text))
        self.assertTrue(r.headers["Content-Type"].startswith("application/json"), what)
        j = r.json()
        self.assertEqual(set(j), {"errorCode", "message"}, what)
        self.assertEqual(j["errorCode"], "INVALID_PARAMETER_VALUE", (what, j))
        self.assertTrue(j["message"], what)
        if word:
            self.assertIn(word.lower(), j["message"].lower(), (what, j))

    def assert_up(self):
        self.assertEqual(requests.get(self.B + "/shares", headers=self.R).status_code, 200)

    def files(self, r):
        self.assertEqual(r.status_code, 200, r.text)
        return [json.loads(l)["file"] for l in r.text.splitlines() if "file" in json.loads(l)]

    def grpc_query(self, **kw):
        req = self.pb.QueryTableRequest(share="s1", schema="sc", **kw)
        return list(self.svc.QueryTable(req, metadata=self.rmd))

    def assert_grpc_invalid(self, fn, word=None):
        with self.assertRaises(grpc.RpcError) as e:
            fn()
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, e.exception.details())
        if word:
            self.assertIn(word.lower(), e.exception.details().lower())

    # ---- invalid JSON bodies -------------------------------------------------------------------

    def test_invalid_json_body(self):
        for body in ("{", "{\"version\":", "not json", "[1]", "\"str\"", "42", "null",
                     "{\"version\":1,\"version\":2}", b"{\"timestamp\":\"\xff\"}",
                     "{\"version\":\"x\"}", "{\"limitHint\":true}", "{\"maxFiles\":1.5}",
                     "{\"predicateHints\":\"x = 1\"}", "{\"predicateHints\":[1]}",
                     "{\"jsonPredicateHints\":5}", "{\"version\":-1}", "{\"maxFiles\":0}",
                     "{\"limitHint\":-3}", "{\"includeRefreshToken\":\"yes\"}"):
            self.assert_400(self.post("parts", body), what=body)
        st, out = self.server.curl("POST", Q % "parts", body="{", token=self.token)
        self.assertEqual(st, 400)
        self.assertEqual(out["errorCode"], "INVALID_PARAMETER_VALUE")
        self.assert_up()

    # ---- jsonPredicateHints ----------------------------------------------------------------------

    def test_bad_json_predicates_rest(self):
        for pred, word in BAD_PREDICATES:
            # as the protocol's string, and as an embedded object
            self.assert_400(self.post("parts", {"jsonPredicateHints": json.dumps(pred)}), word, pred)
            if isinstance(pred, dict):
                self.assert_400(self.post("parts", {"jsonPredicateHints": pred}), word, pred)
        self.assert_400(self.post("parts", {"jsonPredicateHints": "{\"op\":"}), "jsonPredicateHints")
        self.assert_400(self.post("parts", {"jsonPredicateHints": "\"equal\""}), "object")
        deep = col("year")
        for _ in range(200):
            deep = node("not", deep)
        self.assert_400(self.post("parts", {"jsonPredicateHints": json.dumps(deep)}), "deep")
        # rejected before anything else: also with startingVersion, paging and on the
        # table whose history is shared
        self.assert_400(self.post("simple", {"jsonPredicateHints": json.dumps(BAD_PREDICATES[0][0]),
                                             "startingVersion": 0}), "like")
        self.assert_400(self.post("parts", {"jsonPredicateHints": json.dumps(BAD_PREDICATES[0][0]),
                                            "maxFiles": 2}), "like")
        self.assert_up()

    def test_bad_json_predicates_grpc(self):
        for pred, word in BAD_PREDICATES:
            self.assert_grpc_invalid(
                lambda: self.grpc_query(table="parts", json_predicate_hints=json.dumps(pred)), word)
        self.assert_grpc_invalid(lambda: self.grpc_query(table="parts", json_predicate_hints="{"))
        self.assert_up()

    def test_best_effort_predicates_still_answer(self):
        every = len(self.files(self.post("parts", {})))
        self.assertEqual(every, 6)
        # a column the table does not have: ignored
        p = node("equal", col("nosuch"), lit("1"))
        self.assertEqual(len(self.files(self.post("parts", {"jsonPredicateHints": json.dumps(p)}))), every)
        # a valid predicate whose column type does not match the data: kept, not an error
        p = node("equal", col("year", "date"), lit("2020-01-01", "date"))
        self.assertEqual(len(self.files(self.post("parts", {"jsonPredicateHints": json.dumps(p)}))), every)
        # SQL hints are best effort, garbage included
        for sql in ("garbage ((", "year LIKE '2%'", "nosuch = 1", ""):
            self.assertEqual(len(self.files(self.post("parts", {"predicateHints": [sql]}))), every, sql)
        # and a good predicate still filters
        p = node("equal", col("year"), lit("2021"))
        some = self.files(self.post("parts", {"jsonPredicateHints": json.dumps(p)}))
        self.assertTrue(0 < len(some) < every)
        msgs = self.grpc_query(table="parts", json_predicate_hints=json.dumps(node("equal", col("nosuch"), lit("1"))))
        self.assertEqual(len([m for m in msgs if "\"file\"" in m.line]), every)

    # ---- maxResults ------------------------------------------------------------------------------

    def test_huge_max_results(self):
        paths = ("/shares", "/shares/s1/schemas", "/shares/s1/schemas/sc/tables",
                 "/shares/s1/all-tables")
        for p in paths:
            for v in ("501", "100000", "2147483647", "2147483648", "9223372036854775807",
                      "99999999999999999999999", "1e9", "-1", "x", ""):
                r = requests.get(self.B + p, params={"maxResults": v}, headers=self.R)
                self.assert_400(r, "maxResults" if v.lstrip("-").isdigit() else None, (p, v))
        for fn, req in ((self.svc.ListShares, self.pb.ListSharesRequest(max_results=2147483647)),
                        (self.svc.ListSchemas, self.pb.ListSchemasRequest(share="s1", max_results=100000)),
                        (self.svc.ListTables, self.pb.ListTablesRequest(share="s1", schema="sc", max_results=501)),
                        (self.svc.ListAllTables, self.pb.ListAllTablesRequest(share="s1", max_results=-5))):
            self.assert_grpc_invalid(lambda: fn(req, metadata=self.rmd), "maxResults")
        self.assert_up()

    # ---- page tokens -----------------------------------------------------------------------------

    def page_token(self, table, body):
        r = self.post(table, body)
        self.assertEqual(r.status_code, 200, r.text)
        return json.loads(r.text.splitlines()[-1])["endStreamAction"]["nextPageToken"]

    def test_bad_page_tokens(self):
        tok = self.page_token("prims", {"maxFiles": 2})
        forged = tok[:5] + ("A" if tok[5] != "A" else "B") + tok[6:]
        other = self.page_token("parts", {"maxFiles": 2})
        cases = [("nope", "page token"), ("", None), ("a.b", "page token"), ("@@@.###", "page token"),
                 (forged, "page token"), (tok.split(".")[0], "page token"),
                 (tok + "x" * 70000, "page token"), (other, "table")]
        for t, word in cases:
            if t == "":
                continue
            self.assert_400(self.post("prims", {"maxFiles": 2, "pageToken": t}), word, t[:20])
        # the query must not change between pages
        self.assert_400(self.post("prims", {"maxFiles": 2, "pageToken": tok, "limitHint": 3}), "page token")
        self.assert_400(self.post("prims", {"maxFiles": 3, "pageToken": tok,
                                            "predicateHints": ["year = '2020'"]}), "page token")
        # a list token is not a query token, and the other way round
        lt = requests.get(self.B + "/shares/s1/schemas/sc/tables", params={"maxResults": 1},
                          headers=self.R).json()["nextPageToken"]
        self.assert_400(self.post("prims", {"maxFiles": 2, "pageToken": lt}), "page token")
        r = requests.get(self.B + "/shares", params={"pageToken": tok}, headers=self.R)
        self.assert_400(r)
        # the changes endpoint
        r = requests.get(self.B + "/shares/s1/schemas/sc/tables/cdf/changes",
                         params={"startingVersion": 0, "maxFiles": 1, "pageToken": "garbage"},
                         headers=self.R)
        self.assert_400(r, "page token")
        self.assert_grpc_invalid(lambda: self.grpc_query(table="prims", max_files=2, page_token="nope"),
                                 "page token")
        self.assert_grpc_invalid(lambda: self.grpc_query(table="prims", max_files=2, page_token=forged),
                                 "page token")
        self.assert_up()

    # ---- versions --------------------------------------------------------------------------------

    def test_version_beyond_latest(self):
        latest = int(requests.get(self.B + "/shares/s1/schemas/sc/tables/simple/version",
                                  headers=self.R).headers["Delta-Table-Version"])
        self.assertEqual(latest, 4)
        for body, word in (({"version": 5}, "version"), ({"version": 99}, "version"),
                           ({"version": 9223372036854775806}, "version"),
                           ({"version": "9223372036854775807"}, None),
                           ({"version": 99999999999999999999999}, None),
                           ({"startingVersion": 5}, "version"),
                           ({"startingVersion": 9223372036854775806}, "version"),
                           ({"startingVersion": 0, "endingVersion": 99}, "version"),
                           ({"timestamp": "2999-01-01T00:00:00Z"}, None),
                           ({"timestamp": "not a time"}, "timestamp")):
            self.assert_400(self.post("simple", body), word, body)
        self.assertEqual(self.post("simple", {"version": 4}).status_code, 200)
        for params in ({"startingVersion": 99}, {"startingVersion": "9223372036854775806"},
                       {"startingVersion": "99999999999999999999"},
                       {"startingTimestamp": "2999-01-01 00:00:00"}):
            r = requests.get(self.B + "/shares/s1/schemas/sc/tables/cdf/changes", params=params,
                             headers=self.R)
            self.assert_400(r, None, params)
        # an endingVersion after the latest is "up to now" for the change feed, as the
        # reference server reads it (Query Table's startingVersion form refuses it, above)
        r = requests.get(self.B + "/shares/s1/schemas/sc/tables/cdf/changes",
                         params={"startingVersion": 0, "endingVersion": 99}, headers=self.R)
        self.assertEqual(r.status_code, 200, r.text)
        V = "/shares/s1/schemas/sc/tables/simple/version"
        for ts in ("garbage", "2999-01-01T00:00:00Z", "2020-02-30T00:00:00Z"):
            self.assert_400(requests.get(self.B + V, params={"startingTimestamp": ts},
                                         headers=self.R), None, ts)
        C = "/shares/s1/schemas/sc/tables/cdf/changes"
        for params in ({"startingVersion": 0, "maxFiles": 0}, {"startingVersion": 0, "maxFiles": "-1"},
                       {"startingVersion": 0, "maxFiles": "x"}, {"startingVersion": "1.5"},
                       {"startingVersion": 0, "includeHistoricalMetadata": "maybe"},
                       {"startingVersion": 2, "endingVersion": 1}, {}):
            self.assert_400(requests.get(self.B + C, params=params, headers=self.R), None, params)
        self.assert_grpc_invalid(lambda: self.grpc_query(table="simple", version=99), "version")
        self.assert_grpc_invalid(lambda: self.grpc_query(table="simple", starting_version=99), "version")
        self.assert_grpc_invalid(lambda: list(self.svc.GetTableChanges(
            self.pb.GetTableChangesRequest(share="s1", schema="sc", table="cdf", starting_version=99),
            metadata=self.rmd)))
        self.assert_up()

    # ---- limitHint with maxFiles -----------------------------------------------------------------

    def pages(self, table, body, grpc_too=False):
        """Every page of a query: a list of lists of file ids, following nextPageToken."""
        out, tok = [], None
        while True:
            b = dict(body)
            if tok:
                b["pageToken"] = tok
            r = self.post(table, b)
            self.assertEqual(r.status_code, 200, r.text)
            lines = [json.loads(l) for l in r.text.splitlines()]
            out.append([l["file"]["id"] for l in lines if "file" in l])
            tok = lines[-1]["endStreamAction"].get("nextPageToken")
            if not tok:
                return out

    def test_limit_hint_with_paging(self):
        every = self.pages("prims", {"maxFiles": 4})  # 16 files of one record each
        self.assertEqual([len(p) for p in every], [4, 4, 4, 4])
        for limit, size, want in ((5, 2, [2, 2, 1]), (4, 2, [2, 2]), (3, 5, [3]), (1, 1, [1]),
                                  (0, 3, [0]), (100, 7, [7, 7, 2]), (16, 4, [4, 4, 4, 4])):
            got = self.pages("prims", {"maxFiles": size, "limitHint": limit})
            self.assertEqual([len(p) for p in got], want, (limit, size))
            # the same pages as without the limit, the last one cut to the limit
            full = self.pages("prims", {"maxFiles": size})
            for i, page in enumerate(got):
                if i + 1 < len(got):
                    self.assertEqual(sorted(page), sorted(full[i]))
                else:
                    self.assertTrue(set(page) <= set(full[i]), (limit, size, i))
        # without maxFiles the limit still applies
        self.assertEqual(len(self.files(self.post("prims", {"limitHint": 5}))), 5)
        # with a predicate: the limit counts matching files only
        p = json.dumps(node("equal", col("category"), lit("A")))
        got = self.pages("prims", {"maxFiles": 2, "limitHint": 3, "jsonPredicateHints": p})
        self.assertEqual([len(x) for x in got], [2, 1])


if __name__ == "__main__":
    h.main()
