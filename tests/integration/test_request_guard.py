#!/usr/bin/python3
"""test_request_guard.py: what a request must pass before it is decoded (issue 10 items 1, 4,
11, 13, 14), against the real server with real clients (python3-grpcio with raw request
bytes built here by hand, curl, raw sockets): methods are authorized before their request is
decoded; nesting depth, element count and decoded size are bounded on every transport;
strings are UTF-8 without NUL; predicate hints are bounded; concurrent requests are capped
per principal; 413 carries RESOURCE_EXHAUSTED. After every refusal the server is still up."""
import json
import os
import re
import socket
import threading

import grpc

import dd_harness as h

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
RS = os.path.join(FIX, "delta-rs-data")


# ---- protobuf wire encoding, by hand (deep messages are beyond what the Python library nests) ----

def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def ld(field, payload):
    """A length-delimited field."""
    return varint(field << 3 | 2) + varint(len(payload)) + payload


def nest(inner, path, depth):
    """Wraps inner depth times in the fields of path (outermost last)."""
    for _ in range(depth):
        for f in path:
            inner = ld(f, inner)
    return inner


def spark_deep_plan(levels):
    """ExecutePlanRequest{session_id, plan{root: Relation.project.input ... levels deep}}."""
    rel = nest(b"", (1, 3), levels)  # Project.input = 1 inside Relation.project = 3
    return ld(1, b"00112233-4455-6677-8899-aabbccddeeff") + ld(3, ld(1, rel))


def delta_deep_alias(levels):
    """DeltaRelation{delete_from_table{condition: Expression.alias.expr ... levels deep}}."""
    expr = nest(b"", (1, 6), levels)  # Alias.expr = 1 inside Expression.alias = 6
    return ld(7, ld(2, expr))


def delta_deep_datatype(levels):
    """DeltaRelation{convert_to_delta{partition_schema_struct: DataType.array.element_type ...}}."""
    dt = nest(b"", (1, 20), levels)  # Array.element_type = 1 inside DataType.array = 20
    return ld(4, ld(1, b"parquet.`/nowhere`") + ld(3, dt))


def spark_any_plan(delta_relation_bytes):
    """ExecutePlanRequest whose root relation is extension = Any(DeltaRelation)."""
    anyb = ld(1, b"type.googleapis.com/delta.connect.DeltaRelation")
    if delta_relation_bytes is not None:
        anyb += ld(2, delta_relation_bytes)
    rel = ld(998, anyb)  # Relation.extension
    return ld(1, b"00112233-4455-6677-8899-aabbccddeeff") + ld(3, ld(1, rel))


def raw_unary(ch, path):
    return ch.unary_unary(path, request_serializer=lambda b: b, response_deserializer=lambda b: b)


def raw_stream(ch, path):
    return ch.unary_stream(path, request_serializer=lambda b: b, response_deserializer=lambda b: b)


SPARK = "/spark.connect.SparkConnectService/"
DELTA = "/deltad.connect.v1.DeltaConnectService/"


class RequestGuard(h.ServerTest):
    server_args = ["--max-requests-per-principal", "1"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        h.stubs_dir()
        from deltad.sharing.v1 import sharing_pb2 as s, sharing_pb2_grpc as sg
        cls.s = s
        cls.ch = cls.server.channel()
        cls.md = cls.server.md()
        ext = sg.DeltaSharingExtensionServiceStub(cls.ch)
        ext.CreateShare(s.CreateShareRequest(name="g1"), metadata=cls.md)
        ext.CreateSharingSchema(s.CreateSharingSchemaRequest(share="g1", name="sc"), metadata=cls.md)
        ext.AddTable(s.AddTableRequest(share="g1", schema="sc", name="parts",
                                       url="file://" + os.path.join(RS, "delta-0.8.0-partitioned")),
                     metadata=cls.md)
        cls.rtoken = ext.CreateRecipient(s.CreateRecipientRequest(name="eve"), metadata=cls.md).bearer_token
        ext.GrantShare(s.GrantShareRequest(share="g1", recipient="eve"), metadata=cls.md)
        cls.rmd = cls.server.md(cls.rtoken)
        cls.svc = sg.DeltaSharingServiceStub(cls.ch)

    @classmethod
    def tearDownClass(cls):
        cls.ch.close()
        super().tearDownClass()

    def assert_alive(self):
        self.assertIsNone(self.server.proc.poll(), "deltad died")
        code, body = self.server.curl("GET", "/catalogs")
        self.assertEqual(code, 200, body)

    def call_code(self, path, body, md, stream=False):
        try:
            if stream:
                for _ in raw_stream(self.ch, path)(body, metadata=md, timeout=60):
                    pass
            else:
                raw_unary(self.ch, path)(body, metadata=md, timeout=60)
        except grpc.RpcError as e:
            return e.code(), e.details()
        return grpc.StatusCode.OK, ""

    # ---- item 1 / 13: deep messages, by a recipient and by an administrator ----

    def check_deep(self, path, body, stream):
        code, msg = self.call_code(path, body, self.rmd, stream)
        self.assertEqual(code, grpc.StatusCode.PERMISSION_DENIED, msg)
        self.assertIn("is not an administrator", msg)
        self.assert_alive()
        code, msg = self.call_code(path, body, self.md, stream)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
        self.assertIn("nested too deeply", msg)
        self.assert_alive()

    def test_spark_plan_5000_deep(self):
        self.check_deep(SPARK + "ExecutePlan", spark_deep_plan(5000), True)

    def test_spark_plan_10x_bound(self):
        self.check_deep(SPARK + "ExecutePlan", spark_deep_plan(640), True)  # 1,280 levels

    def test_delta_alias_20000_deep(self):
        self.check_deep(DELTA + "ExecuteRelation", delta_deep_alias(20000), True)

    def test_spark_datatype_6000_deep(self):
        self.check_deep(DELTA + "ExecuteRelation", delta_deep_datatype(6000), True)

    def test_deep_any_inside_a_shallow_plan(self):
        # the outer plan is shallow; the Any's own bytes nest 20,000 deep
        code, msg = self.call_code(SPARK + "ExecutePlan", spark_any_plan(delta_deep_alias(20000)), self.md, True)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
        self.assertIn("nested too deeply", msg)
        self.assert_alive()
        # an Any with no value field (found by fuzz.request_decode: a NULL buffer)
        code, msg = self.call_code(SPARK + "ExecutePlan", spark_any_plan(None), self.md, True)
        self.assertNotIn(code, (grpc.StatusCode.OK, grpc.StatusCode.UNKNOWN, grpc.StatusCode.UNAVAILABLE), msg)
        self.assert_alive()

    def test_under_the_bound_is_decoded(self):
        # 60 alias levels = 121 message levels: decoded; the handler answers about the table
        code, msg = self.call_code(DELTA + "ExecuteRelation", delta_deep_alias(60), self.md, True)
        self.assertNotIn("nested too deeply", msg)
        self.assert_alive()

    def test_recipient_refused_before_decoding(self):
        # bytes that are no valid message: an admin-only method answers PERMISSION_DENIED
        # to a recipient (the method is authorized first), INVALID_ARGUMENT to an admin
        for path in ("/deltad.catalog.v1.CatalogService/CreateCatalog",
                     "/deltad.sharing.v1.DeltaSharingExtensionService/CreateShare"):
            code, msg = self.call_code(path, b"\xff\xff", self.rmd)
            self.assertEqual(code, grpc.StatusCode.PERMISSION_DENIED, msg)
            self.assertIn("'eve' is not an administrator", msg)
            code, msg = self.call_code(path, b"\xff\xff", self.md)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
        code, _ = self.call_code("/deltad.sharing.v1.DeltaSharingService/ListShares", b"", self.rmd)
        self.assertEqual(code, grpc.StatusCode.OK)

    def all_methods(self):
        import importlib
        mods = ["deltad.catalog.v1.catalog_pb2", "deltad.credentials.v1.credentials_pb2",
                "deltad.sharing.v1.sharing_pb2", "deltad.lance.v1.lance_pb2",
                "deltad.system.v1.system_pb2", "deltad.connect.v1.connect_pb2", "spark.connect.base_pb2"]
        out = []
        for name in mods:
            for svc in importlib.import_module(name).DESCRIPTOR.services_by_name.values():
                for m in svc.methods:
                    out.append(("/%s/%s" % (svc.full_name, m.name), m.server_streaming, svc.full_name))
        return out

    def test_method_matrix(self):
        # every served gRPC method x {no token, wrong token, recipient, admin}, with an empty
        # request and with bytes that are no message: the auth outcome comes first
        open_to_recipients = {"deltad.sharing.v1.DeltaSharingService", "deltad.system.v1.SystemService"}
        methods = self.all_methods()
        self.assertEqual(len(methods), 69)  # ExecuteQuery joined DeltaConnectService
        for path, stream, svc in methods:
            for body in (b"", b"\xff\xff"):
                for md in ((), self.server.md("0" * 64)):
                    code, msg = self.call_code(path, body, md, stream)
                    self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED, (path, msg))
                code, msg = self.call_code(path, body, self.rmd, stream)
                if svc in open_to_recipients:
                    self.assertNotIn(code, (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.PERMISSION_DENIED),
                                     (path, msg))
                else:
                    self.assertEqual(code, grpc.StatusCode.PERMISSION_DENIED, (path, msg))
                    self.assertEqual(msg, "permission denied: 'eve' is not an administrator")
                code, msg = self.call_code(path, body, self.md, stream)
                self.assertNotEqual(code, grpc.StatusCode.UNAUTHENTICATED, (path, msg))
                if svc not in open_to_recipients:
                    self.assertNotEqual(code, grpc.StatusCode.PERMISSION_DENIED, (path, msg))
        self.assert_alive()

    def test_rest_deep_json(self):
        deep = "[" * 1280 + "]" * 1280  # 10x the bound
        code, body = self.server.curl("POST", "/catalogs", '{"name":"x","properties":%s}' % deep)
        self.assertEqual(code, 400, body)
        self.assertEqual(body["code"], 3)
        self.assertIn("nested too deeply", body["message"])
        code, body = self.server.curl("POST", "/shares/g1/schemas/sc/tables/parts/query",
                                      '{"jsonPredicateHints":%s}' % deep, token=self.rtoken)
        self.assertEqual(code, 400, body)
        self.assertIn("nested too deeply", body["message"])
        code, body = self.server.curl("POST", "/catalogs", '{"name":"x","properties":%s}' % deep,
                                      token=self.rtoken)
        self.assertEqual(code, 403, body)  # authorized before the body is parsed
        self.assert_alive()

    def test_rest_too_many_json_values(self):
        body = '{"name":"x","comment":"","properties":{},"z":[%s]}' % ",".join(["0"] * 1100000)
        code, r = self.server.curl("POST", "/catalogs", body)
        self.assertEqual(code, 400, r)
        self.assertIn("more than 1000000 JSON values", r["message"])
        self.assert_alive()

    # ---- item 11 / 14: strings are UTF-8 without NUL ----

    def test_nul_in_a_name_over_grpc(self):
        body = ld(1, b"nul\x00cat")
        code, msg = self.call_code("/deltad.catalog.v1.CatalogService/CreateCatalog", body, self.md)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
        self.assertIn("UTF-8 without NUL", msg)
        code, _ = self.call_code("/deltad.catalog.v1.CatalogService/GetCatalog", ld(1, b"nul"), self.md)
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_invalid_utf8_session_id(self):
        for m in ("Interrupt", "ReleaseSession", "ReleaseExecute"):
            code, msg = self.call_code(SPARK + m, ld(1, b"\xc3\x28-bad"), self.md)
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
            self.assertIn("UTF-8", msg)

    def test_nul_in_a_rest_path(self):
        # a decoded %00 (or a control character) in a path segment is 400, never a shorter name
        for p, tok in (("/shares/g1%00x", self.rtoken), ("/shares/g1%00x/schemas", self.rtoken),
                       ("/catalogs/c%00x", "admin")):
            code, body = self.server.curl("GET", p, token=tok)
            self.assertEqual(code, 400, (p, body))
        code, body = self.server.curl("POST", "/catalogs", {"name": "c\u0001x"})
        self.assertEqual(code, 400, body)
        code, body = self.server.curl("GET", "/catalogs/c%01x")
        self.assertEqual(code, 400, body)

    # ---- item 4: predicate hints and memory ----

    def hwm_kb(self):
        with open("/proc/%d/status" % self.server.proc.pid) as f:
            return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))

    def test_eight_million_empty_hints(self):
        head = ld(1, b"g1") + ld(2, b"sc") + ld(3, b"parts")
        body = head + b"\x22\x00" * 8000000  # predicate_hints = 4, empty: 16 MB
        before = self.hwm_kb()
        code, msg = self.call_code("/deltad.sharing.v1.DeltaSharingService/QueryTable", body, self.rmd, True)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, msg)
        self.assertIn("more than 1000000 fields", msg)
        grown = (self.hwm_kb() - before) // 1024
        print("VmHWM grew by %d MiB (8M empty hints over gRPC)" % grown)
        self.assertLess(grown, 200)
        self.assert_alive()

    def test_hint_bounds(self):
        s = self.s
        with self.assertRaises(grpc.RpcError) as e:
            for _ in self.svc.QueryTable(s.QueryTableRequest(share="g1", schema="sc", table="parts",
                                                             predicate_hints=["a = 1"] * 101),
                                         metadata=self.rmd):
                pass
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("at most 100", e.exception.details())
        with self.assertRaises(grpc.RpcError) as e:
            for _ in self.svc.QueryTable(s.QueryTableRequest(share="g1", schema="sc", table="parts",
                                                             predicate_hints=["a" * 5000]),
                                         metadata=self.rmd):
                pass
        self.assertEqual(e.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        q = "/shares/g1/schemas/sc/tables/parts/query"
        code, body = self.server.curl("POST", q, {"predicateHints": ["a = 1"] * 101}, token=self.rtoken)
        self.assertEqual(code, 400, body)
        self.assertIn("at most 100", body["message"])
        code, body = self.server.curl("POST", q, {"predicateHints": ["a = 1"] * 5}, token=self.rtoken)
        self.assertEqual(code, 200, body)

    def test_rest_eight_million_hints(self):
        body = b'{"predicateHints":[' + b",".join([b'""'] * 4000000) + b"]}"
        before = self.hwm_kb()
        code, r = self.server.curl("POST", "/shares/g1/schemas/sc/tables/parts/query", body,
                                   token=self.rtoken)
        self.assertEqual(code, 400, r)
        grown = (self.hwm_kb() - before) // 1024
        print("VmHWM grew by %d MiB (4M empty hints over REST)" % grown)
        self.assertLess(grown, 100)
        self.assert_alive()

    # ---- item 14: 413 is RESOURCE_EXHAUSTED ----

    def test_413_code(self):
        big = '{"name":"x","comment":"%s"}' % ("a" * (17 << 20))
        code, body = self.server.curl("POST", "/catalogs", big)
        self.assertEqual(code, 413, body)
        self.assertEqual(body["code"], 8)

    # ---- item 4: concurrent requests per principal ----

    def test_concurrent_requests_capped(self):
        answers = self.burst("/api/v1/shares/g1/schemas/sc/tables/parts/metadata", self.rtoken)
        statuses = [a.split(b" ", 2)[1] for a in answers]
        self.assertTrue(set(statuses) <= {b"200", b"429"}, statuses)
        self.assertIn(b"429", statuses)
        busy = [a for a in answers if a.split(b" ", 2)[1] == b"429"][0]
        self.assertIn(b"retry-after: 1", busy.lower())
        self.assertIn(b"RESOURCE_EXHAUSTED", busy)
        code, _ = self.server.curl("GET", "/shares/g1/schemas/sc/tables/parts/metadata", token=self.rtoken)
        self.assertEqual(code, 200)
        # the administrator is held only by the process-wide cap (256)
        answers = self.burst("/api/v1/catalogs", self.server.token)
        self.assertEqual({a.split(b" ", 2)[1] for a in answers}, {b"200"})

    def test_concurrent_grpc_calls_capped(self):
        s = self.s
        codes = []

        def one():
            try:
                for _ in self.svc.GetTableMetadata(s.GetTableMetadataRequest(share="g1", schema="sc", table="parts"),
                                                   metadata=self.rmd, timeout=60):
                    pass
                codes.append(grpc.StatusCode.OK)
            except grpc.RpcError as e:
                codes.append(e.code())
                if e.code() == grpc.StatusCode.RESOURCE_EXHAUSTED:
                    self.assertIn("max-requests-per-principal", e.details())

        # gRPC serves a worker's calls one at a time: the recipient's REST requests in
        # flight at the same moment hold its one slot
        rest = threading.Thread(target=self.burst,
                                args=("/api/v1/shares/g1/schemas/sc/tables/parts/metadata", self.rtoken))
        rest.start()
        while rest.is_alive():
            ts = [threading.Thread(target=one) for _ in range(8)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        rest.join()
        self.assertTrue(set(codes) <= {grpc.StatusCode.OK, grpc.StatusCode.RESOURCE_EXHAUSTED}, codes)
        self.assertIn(grpc.StatusCode.RESOURCE_EXHAUSTED, codes)
        self.assertIn(grpc.StatusCode.OK, codes)

    def burst(self, path, token):
        """5 rounds of 24 simultaneous raw HTTP requests; the answers."""
        port = int(self.server.http_base.rsplit(":", 1)[1])
        req = ("GET %s HTTP/1.1\r\nHost: x\r\n"
               "Authorization: Bearer %s\r\nConnection: close\r\n\r\n" % (path, token)).encode()
        answers = []

        def one():
            s = socket.create_connection(("127.0.0.1", port))
            s.sendall(req)
            data = b""
            while True:
                b = s.recv(65536)
                if not b:
                    break
                data += b
            s.close()
            answers.append(data)

        for _ in range(5):
            ts = [threading.Thread(target=one) for _ in range(24)]
            for t in ts:
                t.start()
            for t in ts:
                t.join()
        return answers


if __name__ == "__main__":
    h.main()
