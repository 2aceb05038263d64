#!/usr/bin/python3
"""test_connect_delta.py: deltad.connect.v1.DeltaConnectService over gRPC (Debian's
python3-grpcio with stubs built from this project's .proto files) and over REST (curl,
NDJSON), on copies of the fixture tables. Commits written by the operations are read back
with Python's json module, independently of the C engine."""
import glob
import json
import os
import shutil
import subprocess
import tempfile

import grpc

import dd_harness
from dd_harness import ServerTest

FIX = os.environ.get("DD_FIXTURES", os.path.join(dd_harness.ROOT, "..", "shared", "fixtures"))


def pb():
    dd_harness.stubs_dir()
    from delta.connect import base_pb2, commands_pb2, relations_pb2
    from deltad.connect.v1 import connect_pb2, connect_pb2_grpc
    return base_pb2, commands_pb2, relations_pb2, connect_pb2, connect_pb2_grpc


def copy_fixture(name):
    d = tempfile.mkdtemp(prefix="dd-connect-")
    dst = os.path.join(d, "t")
    shutil.copytree(os.path.join(FIX, "delta-rs-data", name), dst)
    return dst


def commit(path, version):
    with open(os.path.join(path, "_delta_log", "%020d.json" % version)) as f:
        return [json.loads(l) for l in f if l.strip()]


def commit_info(path, version):
    return [a["commitInfo"] for a in commit(path, version) if "commitInfo" in a][0]


def latest(path):
    return max(int(os.path.basename(p)[:20]) for p in glob.glob(os.path.join(path, "_delta_log", "*.json")))


def age(path, days):
    subprocess.run(["find", path, "-not", "-path", "*/_delta_log*", "-exec", "touch", "-m", "-d",
                    "%d days ago" % days, "{}", "+"], check=True)


class ConnectDelta(ServerTest):
    def setUp(self):
        self.base, self.cmd, self.rel, self.cpb, cg = pb()
        self.stub = cg.DeltaConnectServiceStub(self.server.channel())
        self.md = self.server.md()

    def table(self, path):
        return self.base.DeltaTable(path=self.base.DeltaTable.Path(path=path))

    def run_rel(self, rel, md=None):
        msgs = list(self.stub.ExecuteRelation(rel, metadata=md or self.md, timeout=30))
        self.assertEqual(msgs[0].WhichOneof("result"), "schema")
        for m in msgs[1:]:
            self.assertEqual(m.WhichOneof("result"), "row")
        return msgs[0].schema, [m.row for m in msgs[1:]]

    def run_cmd(self, cmd, md=None):
        msgs = list(self.stub.ExecuteCommand(cmd, metadata=md or self.md, timeout=30))
        self.assertEqual(msgs[0].WhichOneof("result"), "schema")
        return msgs[0].schema, [m.row for m in msgs[1:]]

    def code_of(self, fn, req, md=None):
        with self.assertRaises(grpc.RpcError) as cm:
            list(fn(req, metadata=md or self.md, timeout=30))
        return cm.exception.code(), cm.exception.details()

    def test_history_and_detail(self):
        t = copy_fixture("simple_table")
        schema, rows = self.run_rel(self.rel.DeltaRelation(
            describe_history=self.rel.DescribeHistory(table=self.table(t))))
        names = [c.name for c in schema.columns]
        self.assertEqual(names[:6], ["version", "timestamp", "userId", "userName", "operation",
                                     "operationParameters"])
        self.assertEqual(schema.columns[5].type, "map<string,string>")
        self.assertEqual([r.values[0].int64_value for r in rows], [4, 3, 2, 1, 0])
        self.assertEqual(rows[0].values[4].string_value, "DELETE")
        self.assertTrue(rows[0].values[1].timestamp_ms > 1500000000000)
        self.assertIn("predicate", json.loads(rows[0].values[5].json))
        schema, rows = self.run_rel(self.rel.DeltaRelation(
            describe_detail=self.rel.DescribeDetail(table=self.base.DeltaTable(
                table_or_view_name="delta.`%s`" % t))))
        d = {c.name: v for c, v in zip(schema.columns, rows[0].values)}
        self.assertEqual(d["format"].string_value, "delta")
        self.assertEqual(d["location"].string_value, t)
        self.assertEqual(d["minWriterVersion"].int64_value, 2)
        self.assertEqual(json.loads(d["tableFeatures"].json), ["appendOnly", "invariants"])
        schema, rows = self.run_rel(self.rel.DeltaRelation(is_delta_table=self.rel.IsDeltaTable(path=t)))
        self.assertTrue(rows[0].values[0].bool_value)
        schema, rows = self.run_rel(self.rel.DeltaRelation(
            is_delta_table=self.rel.IsDeltaTable(path=os.path.dirname(t))))
        self.assertFalse(rows[0].values[0].bool_value)

    def test_catalog_name_resolves_to_registered_location(self):
        t = copy_fixture("simple_table")
        srv = self.server
        self.assertEqual(srv.curl("POST", "/catalogs", {"name": "reg"})[0], 200)
        self.assertEqual(srv.curl("POST", "/schemas", {"name": "s", "catalogName": "reg"})[0], 200)
        code, body = srv.curl("POST", srv.http_base + "/v1/table/reg$s$events/register",
                              {"location": "file://" + t})
        self.assertEqual(code, 200, body)
        schema, rows = self.run_rel(self.rel.DeltaRelation(
            describe_detail=self.rel.DescribeDetail(table=self.base.DeltaTable(
                table_or_view_name="reg.s.events"))))
        d = {c.name: v for c, v in zip(schema.columns, rows[0].values)}
        self.assertEqual(d["location"].string_value, t)
        code, _ = self.code_of(self.stub.ExecuteRelation, self.rel.DeltaRelation(
            describe_detail=self.rel.DescribeDetail(table=self.base.DeltaTable(
                table_or_view_name="reg.s.missing"))))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_vacuum_retention_and_commits(self):
        t = copy_fixture("simple_table")
        age(t, 30)
        before = sorted(os.listdir(t))
        req = self.cmd.DeltaCommand(vacuum_table=self.cmd.VacuumTable(table=self.table(t), retention_hours=0))
        code, msg = self.code_of(self.stub.ExecuteCommand, req)
        self.assertEqual(code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("retention", msg)
        self.assertEqual(latest(t), 4)
        self.assertEqual(sorted(os.listdir(t)), before)
        md = self.md + (("x-delta-retention-duration-check", "false"),)
        schema, rows = self.run_cmd(req, md=md)
        self.assertEqual([c.name for c in schema.columns], ["path"])
        self.assertEqual(rows[0].values[0].string_value, t)
        start, end = commit_info(t, 5), commit_info(t, 6)
        self.assertEqual(start["operation"], "VACUUM START")
        self.assertEqual(start["operationParameters"]["specifiedRetentionMillis"], 0)
        self.assertIs(start["operationParameters"]["retentionCheckEnabled"], False)
        self.assertEqual(end["operation"], "VACUUM END")
        self.assertEqual(end["operationParameters"]["status"], "COMPLETED")
        self.assertEqual(end["operationMetrics"]["numDeletedFiles"], start["operationMetrics"]["numFilesToDelete"])
        # every file of the latest snapshot (replayed here in Python) still exists
        active = set()
        for v in range(latest(t) + 1):
            for a in commit(t, v):
                if "add" in a:
                    active.add(a["add"]["path"])
                if "remove" in a:
                    active.discard(a["remove"]["path"])
        for p in active:
            self.assertTrue(os.path.exists(os.path.join(t, p)), p)
        left = [f for f in os.listdir(t) if f.endswith(".parquet")]
        self.assertEqual(sorted(left), sorted(active))

    def test_restore_and_clone(self):
        t = copy_fixture("simple_table")
        schema, rows = self.run_rel(self.rel.DeltaRelation(
            restore_table=self.rel.RestoreTable(table=self.table(t), version=1)))
        names = [c.name for c in schema.columns]
        self.assertEqual(names, ["table_size_after_restore", "num_of_files_after_restore",
                                 "num_removed_files", "num_restored_files", "removed_files_size",
                                 "restored_files_size"])
        ci = commit_info(t, 5)
        self.assertEqual(ci["operation"], "RESTORE")
        self.assertEqual(ci["operationMetrics"]["numRestoredFiles"], str(rows[0].values[3].int64_value))
        self.assertEqual(ci["operationParameters"]["version"], "1")
        target = t + "-clone"
        schema, rows = self.run_cmd(self.cmd.DeltaCommand(clone_table=self.cmd.CloneTable(
            table=self.table(t), target=target, version=3, is_shallow=True,
            properties={"delta.logRetentionDuration": "interval 60 days"})))
        self.assertEqual(schema.columns[0].name, "source_table_size")
        acts = commit(target, 0)
        meta = [a["metaData"] for a in acts if "metaData" in a][0]
        self.assertEqual(meta["configuration"]["delta.logRetentionDuration"], "interval 60 days")
        adds = [a["add"]["path"] for a in acts if "add" in a]
        self.assertEqual(len(adds), rows[0].values[1].int64_value)
        self.assertTrue(all(p.startswith("file://" + t + "/") for p in adds))
        self.assertEqual(commit_info(target, 0)["operation"], "CLONE")

    def test_checkpoint_read_by_hyparquet(self):
        """DropFeature with truncate_history writes a checkpoint; hyparquet (JS, independent
        of the C writer) reads its protocol row."""
        js = os.path.join(dd_harness.ROOT, "tests", "js")
        if not shutil.which("node") or not os.path.isdir(os.path.join(js, "node_modules", "hyparquet")):
            self.skipTest("node/hyparquet not installed (run scripts/setup.sh)")
        t = copy_fixture("simple_table")
        C = self.cmd
        self.run_cmd(C.DeltaCommand(add_feature_support=C.AddFeatureSupport(
            table=self.table(t), feature_name="deletionVectors")))
        self.run_cmd(C.DeltaCommand(drop_feature_support=C.DropFeatureSupport(
            table=self.table(t), feature_name="deletionVectors", truncate_history=True)))
        v = latest(t)
        self.assertEqual(commit_info(t, v)["operation"], "DROP FEATURE")
        cp = os.path.join(t, "_delta_log", "%020d.checkpoint.parquet" % v)
        self.assertTrue(os.path.exists(cp))
        out = subprocess.run(["node", os.path.join(js, "pq_dump.mjs"), cp], capture_output=True,
                             text=True, check=True, cwd=js).stdout
        rows = [json.loads(l) for l in out.splitlines() if l.strip()]
        proto = [r["protocol"] for r in rows if r.get("protocol")][0]
        self.assertEqual((proto["minReaderVersion"], proto["minWriterVersion"]), (1, 2))
        adds = sorted(r["add"]["path"] for r in rows if r.get("add"))
        active = set()
        for ver in range(v + 1):
            for a in commit(t, ver):
                if "add" in a:
                    active.add(a["add"]["path"])
                if "remove" in a:
                    active.discard(a["remove"]["path"])
        self.assertEqual(adds, sorted(active))

    def test_bad_input(self):
        t = copy_fixture("simple_table")
        C, R = self.cmd, self.rel
        cases = [
            (self.stub.ExecuteRelation, R.DeltaRelation(describe_history=R.DescribeHistory(
                table=self.table(os.path.join(os.path.dirname(t), "nonexistent")))), grpc.StatusCode.NOT_FOUND),
            (self.stub.ExecuteRelation, R.DeltaRelation(describe_history=R.DescribeHistory(
                table=self.table("/nonexistent/table"))), grpc.StatusCode.PERMISSION_DENIED),
            (self.stub.ExecuteRelation, R.DeltaRelation(describe_history=R.DescribeHistory(
                table=self.table(os.path.dirname(t)))), grpc.StatusCode.NOT_FOUND),
            (self.stub.ExecuteRelation, R.DeltaRelation(describe_detail=R.DescribeDetail(
                table=self.base.DeltaTable(table_or_view_name="main.default.sales"))), grpc.StatusCode.NOT_FOUND),
            (self.stub.ExecuteRelation, R.DeltaRelation(restore_table=R.RestoreTable(
                table=self.table(t), version=99)), grpc.StatusCode.OUT_OF_RANGE),
            (self.stub.ExecuteCommand, C.DeltaCommand(add_feature_support=C.AddFeatureSupport(
                table=self.table(t), feature_name="fancyFeature")), grpc.StatusCode.INVALID_ARGUMENT),
            (self.stub.ExecuteCommand, C.DeltaCommand(upgrade_table_protocol=C.UpgradeTableProtocol(
                table=self.table(t), reader_version=1, writer_version=1)), grpc.StatusCode.FAILED_PRECONDITION),
            (self.stub.ExecuteCommand, C.DeltaCommand(vacuum_table=C.VacuumTable(
                table=self.table(t), retention_hours=1)), grpc.StatusCode.FAILED_PRECONDITION),
            (self.stub.ExecuteCommand, C.DeltaCommand(), grpc.StatusCode.INVALID_ARGUMENT),
            (self.stub.ExecuteRelation, R.DeltaRelation(merge_into_table=R.MergeIntoTable()),
             grpc.StatusCode.INVALID_ARGUMENT),  # no target
        ]
        for fn, req, want in cases:
            code, msg = self.code_of(fn, req)
            self.assertEqual(code, want, "%s -> %s: %s" % (req, code, msg))
            self.assertTrue(msg)
        self.assertEqual(latest(t), 4)
        code, msg = self.code_of(self.stub.ExecuteRelation, R.DeltaRelation(
            describe_history=R.DescribeHistory(table=self.table(t))), md=self.server.md("wrong"))
        self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)

    def test_rest_ndjson(self):
        t = copy_fixture("delta-0.8.0-partitioned")
        code, body = self.server.curl("POST", "/delta/relations",
                                      {"describeDetail": {"table": {"path": {"path": t}}}})
        self.assertEqual(code, 200, body)
        lines = [json.loads(l) for l in body.splitlines()] if isinstance(body, str) else [body]
        self.assertIn("schema", lines[0])
        self.assertEqual(lines[0]["schema"]["columns"][0]["name"], "format")
        self.assertEqual(lines[1]["row"]["values"][0]["stringValue"], "delta")
        code, body = self.server.curl("POST", "/delta/commands",
                                      {"generate": {"table": {"path": {"path": t}},
                                                    "mode": "symlink_format_manifest"}})
        self.assertEqual(code, 200, body)
        self.assertTrue(glob.glob(os.path.join(t, "_symlink_format_manifest", "year=*", "month=*", "day=*", "manifest")))
        code, body = self.server.curl("POST", "/delta/commands",
                                      {"addFeatureSupport": {"table": {"path": {"path": t}}, "featureName": "nope"}})
        self.assertEqual(code, 400, body)
        code, body = self.server.curl("POST", "/delta/relations",
                                      {"describeDetail": {"table": {"path": {"path": t + "/no/such"}}}})
        self.assertEqual(code, 404, body)
        code, body = self.server.curl("POST", "/delta/relations",
                                      {"describeDetail": {"table": {"path": {"path": "/no/such"}}}})
        self.assertEqual(code, 403, body)


if __name__ == "__main__":
    dd_harness.main()
