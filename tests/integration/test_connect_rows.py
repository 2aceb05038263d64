#!/usr/bin/python3
"""test_connect_rows.py: table and query rows over deltad.connect.v1.DeltaConnectService:
ExecuteRelation with a delta.connect Scan and ExecuteQuery with a spark.connect.Relation
stream one schema then one row per table row, every Delta type mapped onto Value as
connect.proto says (checked against values known from how DAT generated the table), over
gRPC and over REST as NDJSON; a deadline stops a query that never yields a row, and the
server keeps serving."""
import base64
import datetime
import json
import os
import time

import grpc

import dd_harness
from dd_harness import ServerTest

DAT = os.path.join(dd_harness.FIXTURES, "dat", "reader_tests", "generated")
PRIMS = os.path.join(DAT, "all_primitive_types", "delta")
NESTED = os.path.join(DAT, "nested_types", "delta")
NTZ = os.path.join(DAT, "timestamp_ntz", "delta")


def pb():
    dd_harness.stubs_dir()
    from delta.connect import base_pb2, relations_pb2
    from deltad.connect.v1 import connect_pb2, connect_pb2_grpc
    from spark.connect import expressions_pb2, relations_pb2 as spark_rel
    return base_pb2, relations_pb2, connect_pb2_grpc, spark_rel, expressions_pb2


def cell(v):
    kind = v.WhichOneof("kind")
    return None if kind == "null_value" else (kind, getattr(v, kind))


class ConnectRows(ServerTest):
    def setUp(self):
        self.base, self.rel, cg, self.sr, self.ex = pb()
        self.stub = cg.DeltaConnectServiceStub(self.server.channel())
        self.md = self.server.md()

    def scan_rel(self, path):
        return self.rel.DeltaRelation(scan=self.rel.Scan(table=self.base.DeltaTable(
            path=self.base.DeltaTable.Path(path=path))))

    def collect(self, msgs):
        msgs = list(msgs)
        self.assertEqual(msgs[0].WhichOneof("result"), "schema")
        self.assertTrue(all(m.WhichOneof("result") == "row" for m in msgs[1:]))
        cols = [(c.name, c.type) for c in msgs[0].schema.columns]
        return cols, [[cell(v) for v in m.row.values] for m in msgs[1:]]

    def test_scan_every_primitive_type(self):
        cols, rows = self.collect(self.stub.ExecuteRelation(self.scan_rel(PRIMS), metadata=self.md, timeout=60))
        self.assertEqual(cols, [("utf8", "string"), ("int64", "bigint"), ("int32", "int"), ("int16", "smallint"),
                                ("int8", "tinyint"), ("float32", "float"), ("float64", "double"),
                                ("bool", "boolean"), ("binary", "binary"), ("decimal", "decimal(5,3)"),
                                ("date32", "date"), ("timestamp", "timestamp")])
        self.assertEqual(len(rows), 5)
        by = {r[0][1]: r for r in rows}
        # DAT's generator: row i has i in every number, bytes of i zeros, 10 + i as decimal,
        # day i and hour i
        self.assertEqual(by["1"], [("string_value", "1"), ("int64_value", 1), ("int64_value", 1),
                                   ("int64_value", 1), ("int64_value", 1), ("double_value", 1.0),
                                   ("double_value", 1.0), ("bool_value", False), ("bytes_value", b"\x00"),
                                   ("string_value", "11.000"), ("int64_value", 1),
                                   ("timestamp_us", 3600 * 1000000)])
        self.assertEqual(by["4"][8], ("bytes_value", b"\x00" * 4))
        self.assertEqual(by["4"][11], ("timestamp_us", 4 * 3600 * 1000000))

    def test_scan_nested_as_json_and_ntz(self):
        cols, rows = self.collect(self.stub.ExecuteRelation(self.scan_rel(NESTED), metadata=self.md, timeout=60))
        self.assertEqual([c[1] for c in cols], ["int", "struct<float64:double,bool:boolean>", "array<smallint>",
                                                 "map<string,int>"])
        by = {r[0][1]: r for r in rows}
        self.assertEqual(by[1][1][0], "json")
        self.assertEqual(json.loads(by[1][1][1]), {"float64": 1.0, "bool": False})
        self.assertEqual(json.loads(by[1][2][1]), [0, 1])
        self.assertEqual(json.loads(by[1][3][1]), {"0": 0})
        cols, rows = self.collect(self.stub.ExecuteRelation(self.scan_rel(NTZ), metadata=self.md, timeout=60))
        types = dict(cols)
        self.assertEqual(types["timestampNTZ"], "timestamp_ntz")
        i = [c[0] for c in cols].index("timestampNTZ")
        # microseconds kept: 2024-04-02T20:58:52.292957 (no time zone)
        want = int(datetime.datetime(2024, 4, 2, 20, 58, 52, 292957, tzinfo=datetime.timezone.utc).timestamp()) \
            * 1000000 + 292957
        self.assertIn(("timestamp_us", want), [r[i] for r in rows])

    def query(self, rel, timeout=60):
        return self.collect(self.stub.ExecuteQuery(rel, metadata=self.md, timeout=timeout))

    def over_scan(self, path):
        from google.protobuf import any_pb2
        a = any_pb2.Any()
        a.Pack(self.scan_rel(path))
        return self.sr.Relation(extension=a)

    def test_query_filter_project_limit_over_scan(self):
        cond = self.ex.Expression(expression_string=self.ex.Expression.ExpressionString(expression="int32 >= 2"))
        col = self.ex.Expression(unresolved_attribute=self.ex.Expression.UnresolvedAttribute(
            unparsed_identifier="decimal"))
        rel = self.sr.Relation(limit=self.sr.Limit(limit=2, input=self.sr.Relation(project=self.sr.Project(
            expressions=[col], input=self.sr.Relation(filter=self.sr.Filter(
                condition=cond, input=self.over_scan(PRIMS)))))))
        cols, rows = self.query(rel)
        self.assertEqual(cols, [("decimal", "decimal(5,3)")])
        self.assertEqual(len(rows), 2)
        self.assertTrue(all(r[0][1] in ("12.000", "13.000", "14.000") for r in rows))

    def test_rest_ndjson(self):
        code, body = self.server.curl("POST", "/delta/relations",
                                      {"scan": {"table": {"path": {"path": PRIMS}}}})
        self.assertEqual(code, 200, body)
        lines = [json.loads(l) for l in body.splitlines()]
        self.assertEqual(len(lines), 6)
        self.assertEqual(lines[0]["schema"]["columns"][9], {"name": "decimal", "type": "decimal(5,3)",
                                                            "nullable": True})
        one = [l["row"]["values"] for l in lines[1:] if l["row"]["values"][0].get("stringValue") == "2"][0]
        self.assertEqual(one[8], {"bytesValue": base64.b64encode(b"\x00\x00").decode()})
        self.assertEqual(one[9], {"stringValue": "12.000"})
        self.assertEqual(int(one[11]["timestampUs"]), 2 * 3600 * 1000000)
        code, body = self.server.curl("POST", "/delta/query", {"range": {"start": 0, "end": 3, "step": 1}})
        self.assertEqual(code, 200, body)
        lines = [json.loads(l) for l in body.splitlines()]
        self.assertEqual([int(l["row"]["values"][0]["int64Value"]) for l in lines[1:]], [0, 1, 2])

    def cpu_seconds(self):
        with open("/proc/%d/stat" % self.server.proc.pid) as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def test_deadline_stops_a_query_without_rows(self):
        # a filter that keeps no row over 10^12 longs: only the deadline can end it
        cond = self.ex.Expression(expression_string=self.ex.Expression.ExpressionString(expression="id < 0"))
        rel = self.sr.Relation(filter=self.sr.Filter(condition=cond, input=self.sr.Relation(
            range=self.sr.Range(start=0, end=10 ** 12, step=1))))
        t0 = time.monotonic()
        with self.assertRaises(grpc.RpcError) as cm:
            list(self.stub.ExecuteQuery(rel, metadata=self.md, timeout=1.5))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        # the server stopped the query: it burns no CPU afterwards
        time.sleep(0.5)
        before = self.cpu_seconds()
        time.sleep(1.5)
        self.assertLess(self.cpu_seconds() - before, 0.5)
        # and a later call is answered at once
        cols, rows = self.query(self.sr.Relation(range=self.sr.Range(start=0, end=2, step=1)), timeout=5)
        self.assertEqual(rows, [[("int64_value", 0)], [("int64_value", 1)]])
        self.assertLess(time.monotonic() - t0, 10)

    def test_errors(self):
        for req, want in ((self.scan_rel("/etc"), grpc.StatusCode.PERMISSION_DENIED),
                          (self.scan_rel(os.path.join(DAT, "nope")), grpc.StatusCode.NOT_FOUND)):
            with self.assertRaises(grpc.RpcError) as cm:
                list(self.stub.ExecuteRelation(req, metadata=self.md, timeout=30))
            self.assertEqual(cm.exception.code(), want, cm.exception.details())
            self.assertTrue(cm.exception.details())
        col = self.ex.Expression(unresolved_attribute=self.ex.Expression.UnresolvedAttribute(
            unparsed_identifier="nope"))
        with self.assertRaises(grpc.RpcError) as cm:
            self.query(self.sr.Relation(project=self.sr.Project(expressions=[col], input=self.over_scan(PRIMS))))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("nope", cm.exception.details())
        with self.assertRaises(grpc.RpcError) as cm:
            list(self.stub.ExecuteRelation(self.scan_rel(PRIMS), metadata=self.server.md("wrong"), timeout=30))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAUTHENTICATED)


if __name__ == "__main__":
    dd_harness.main()
