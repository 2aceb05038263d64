#!/usr/bin/python3
"""test_connect_ddl.py: column types of DeltaConnectService CreateDeltaTable go through the
DDL type parser (store/deltaops/dop_ddl.c). A type nested past its bound of 64 levels
(10x the bound, and the 200,000-level text that used to overflow the server's stack) is
INVALID_ARGUMENT over gRPC and 400 over REST, writes nothing, and the server stays up; a
struct field name with a backtick reaches the table's schema intact. Commits are read back
with Python's json module."""
import json
import os
import shutil
import tempfile

import grpc

import dd_harness
from dd_harness import ServerTest

BOUND = 64


def nested(levels, inner="int"):
    return "array<" * levels + inner + ">" * levels


class ConnectDdl(ServerTest):
    def setUp(self):
        dd_harness.stubs_dir()
        from delta.connect import commands_pb2
        from deltad.connect.v1 import connect_pb2_grpc
        from spark.connect import types_pb2
        self.C, self.T = commands_pb2, types_pb2
        self.stub = connect_pb2_grpc.DeltaConnectServiceStub(self.server.channel())
        self.dir = tempfile.mkdtemp(prefix="dd-ddl-")
        self.addCleanup(shutil.rmtree, self.dir, True)

    def create(self, name, column_type):
        loc = os.path.join(self.dir, name)
        col = self.C.CreateDeltaTable.Column(name="c", data_type=column_type, nullable=True)
        cmd = self.C.DeltaCommand(create_delta_table=self.C.CreateDeltaTable(
            mode=self.C.CreateDeltaTable.MODE_CREATE, location=loc, columns=[col]))
        return loc, lambda: list(self.stub.ExecuteCommand(cmd, metadata=self.server.md(), timeout=60))

    def unparsed(self, text):
        return self.T.DataType(unparsed=self.T.DataType.Unparsed(data_type_string=text))

    def schema_of(self, loc):
        with open(os.path.join(loc, "_delta_log", "%020d.json" % 0)) as f:
            for line in f:
                a = json.loads(line)
                if "metaData" in a:
                    return json.loads(a["metaData"]["schemaString"])
        self.fail("no metaData in the first commit")

    def test_grpc_too_deep_is_invalid_argument(self):
        for levels in (BOUND, 10 * BOUND, 200000):
            loc, run = self.create("deep%d" % levels, self.unparsed(nested(levels)))
            with self.assertRaises(grpc.RpcError) as cm:
                run()
            self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, levels)
            self.assertIn("nested more than 64 levels", cm.exception.details())
            self.assertFalse(os.path.exists(loc), "nothing is written for a refused create")
        # the server is still up, and the deepest accepted type creates a table
        loc, run = self.create("at_bound", self.unparsed(nested(BOUND - 1)))
        run()
        t = self.schema_of(loc)["fields"][0]["type"]
        depth = 1
        while isinstance(t, dict):
            t, depth = t["elementType"], depth + 1
        self.assertEqual((t, depth), ("integer", BOUND))

    def test_rest_too_deep_is_400(self):
        for levels in (10 * BOUND, 200000):
            loc = os.path.join(self.dir, "rest%d" % levels)
            body = {"createDeltaTable": {"mode": "MODE_CREATE", "location": loc, "columns": [
                {"name": "c", "nullable": True,
                 "dataType": {"unparsed": {"dataTypeString": nested(levels)}}}]}}
            code, reply = self.server.curl("POST", "/delta/commands", body)
            self.assertEqual(code, 400, reply)
            self.assertIn("nested more than 64 levels", json.dumps(reply))
            self.assertFalse(os.path.exists(loc))
        code, _ = self.server.curl("GET", "/catalogs")
        self.assertEqual(code, 200)

    def test_backtick_in_struct_field_name(self):
        T = self.T
        names = ["a`b", "``", "plain", "sp ace"]
        st = T.DataType(struct=T.DataType.Struct(fields=[
            T.DataType.StructField(name=n, data_type=T.DataType(integer=T.DataType.Integer()), nullable=True)
            for n in names]))
        loc, run = self.create("ticks", st)
        run()
        fields = self.schema_of(loc)["fields"][0]["type"]["fields"]
        self.assertEqual([f["name"] for f in fields], names)
        self.assertEqual([f["type"] for f in fields], ["integer"] * len(names))


if __name__ == "__main__":
    dd_harness.main()
