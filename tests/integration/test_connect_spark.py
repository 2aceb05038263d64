#!/usr/bin/python3
"""test_connect_spark.py: spark.connect.SparkConnectService as a Delta Connect client sees
it, with requests built by Debian's python3-grpcio/protobuf from this project's .proto
files: ExecutePlan with Plan.root.extension = Any(DeltaRelation) and Plan.command.extension
= Any(DeltaCommand) (schema, Arrow IPC batch decoded by the apache-arrow JS reader under
tests/js/arrow, result_complete; session/operation/response ids), AnalyzePlan (a mutating
relation runs once per session and plan), Config, ReattachExecute, ReleaseExecute,
ReleaseSession, Interrupt, and the errors (not a Delta operation, malformed Any)."""
import glob
import json
import os
import shutil
import subprocess
import tempfile
import unittest
import uuid

import grpc

import dd_harness
from dd_harness import ServerTest

FIX = os.environ.get("DD_FIXTURES", os.path.join(dd_harness.ROOT, "..", "shared", "fixtures"))
ARROW_JS = os.path.join(dd_harness.ROOT, "tests", "js", "arrow")
RETENTION = "spark.databricks.delta.retentionDurationCheck.enabled"


def pb():
    dd_harness.stubs_dir()
    from delta.connect import base_pb2, commands_pb2, relations_pb2
    from spark.connect import base_pb2 as sb, base_pb2_grpc as sg, relations_pb2 as sr, commands_pb2 as sc
    return base_pb2, commands_pb2, relations_pb2, sb, sg, sr, sc


def copy_fixture(name):
    d = tempfile.mkdtemp(prefix="dd-spark-")
    dst = os.path.join(d, "t")
    shutil.copytree(os.path.join(FIX, "delta-rs-data", name), dst)
    subprocess.run(["find", dst, "-not", "-path", "*/_delta_log*", "-exec", "touch", "-m", "-d",
                    "30 days ago", "{}", "+"], check=True)
    return dst


def latest(path):
    return max(int(os.path.basename(p)[:20]) for p in glob.glob(os.path.join(path, "_delta_log", "*.json")))


def read_arrow(data):
    """Decodes an Arrow IPC stream with apache-arrow (JS); None when node or it is missing."""
    if not shutil.which("node") or not os.path.isdir(os.path.join(ARROW_JS, "node_modules", "apache-arrow")):
        return None
    with tempfile.NamedTemporaryFile(suffix=".arrows", delete=False) as f:
        f.write(data)
    try:
        out = subprocess.run(["node", os.path.join(ARROW_JS, "read_stream.js"), f.name],
                             capture_output=True, text=True, check=True, cwd=ARROW_JS).stdout
        return json.loads(out)
    finally:
        os.unlink(f.name)


class ConnectSpark(ServerTest):
    def setUp(self):
        self.base, self.cmd, self.rel, self.sb, sg, self.sr, self.sc = pb()
        self.stub = sg.SparkConnectServiceStub(self.server.channel())
        self.md = self.server.md()
        self.session = str(uuid.uuid4())

    def table(self, path):
        return self.base.DeltaTable(path=self.base.DeltaTable.Path(path=path))

    def rel_plan(self, rel):
        r = self.sr.Relation()
        r.extension.Pack(rel)
        return self.sb.Plan(root=r)

    def cmd_plan(self, cmd):
        c = self.sc.Command()
        c.extension.Pack(cmd)
        return self.sb.Plan(command=c)

    def execute(self, plan, op_id=None, session=None):
        req = self.sb.ExecutePlanRequest(session_id=session or self.session, plan=plan,
                                         user_context=self.sb.UserContext(user_id="u"))
        if op_id:
            req.operation_id = op_id
        return list(self.stub.ExecutePlan(req, metadata=self.md, timeout=30))

    def code_of(self, fn, *a):
        with self.assertRaises(grpc.RpcError) as cm:
            fn(*a)
        return cm.exception.code(), cm.exception.details()

    def test_history_arrow(self):
        t = copy_fixture("simple_table")
        op = str(uuid.uuid4())
        resps = self.execute(self.rel_plan(self.rel.DeltaRelation(
            describe_history=self.rel.DescribeHistory(table=self.table(t)))), op_id=op)
        self.assertEqual(len(resps), 3)
        schema, batch, done = resps
        self.assertEqual([f.name for f in schema.schema.struct.fields][:5],
                         ["version", "timestamp", "userId", "userName", "operation"])
        self.assertEqual(schema.schema.struct.fields[0].data_type.WhichOneof("kind"), "long")
        self.assertEqual(schema.schema.struct.fields[5].data_type.WhichOneof("kind"), "map")
        self.assertEqual(batch.WhichOneof("response_type"), "arrow_batch")
        self.assertEqual(batch.arrow_batch.row_count, 5)
        self.assertEqual(done.WhichOneof("response_type"), "result_complete")
        ids = set()
        for r in resps:
            self.assertEqual(r.session_id, self.session)
            self.assertEqual(r.operation_id, op)
            self.assertTrue(r.server_side_session_id)
            ids.add(r.response_id)
        self.assertEqual(len(ids), 3)
        self.assertEqual(len({r.server_side_session_id for r in resps}), 1)
        decoded = read_arrow(batch.arrow_batch.data)
        if decoded is None:
            self.skipTest("node/apache-arrow not installed (run scripts/setup.sh)")
        self.assertEqual([f["name"] for f in decoded["schema"]][:5],
                         ["version", "timestamp", "userId", "userName", "operation"])
        rows = decoded["rows"]
        self.assertEqual([r["version"] for r in rows], ["4", "3", "2", "1", "0"])
        self.assertEqual(rows[0]["operation"], "DELETE")
        self.assertIn(["predicate", json.loads(json.dumps(rows[0]["operationParameters"][0][1]))],
                      [list(p) for p in rows[0]["operationParameters"]])

        # Reattach after the first response: the other two again; released: gone.
        again = list(self.stub.ReattachExecute(self.sb.ReattachExecuteRequest(
            session_id=self.session, operation_id=op, last_response_id=resps[0].response_id),
            metadata=self.md, timeout=30))
        self.assertEqual([r.response_id for r in again], [r.response_id for r in resps[1:]])
        rel = self.stub.ReleaseExecute(self.sb.ReleaseExecuteRequest(
            session_id=self.session, operation_id=op, release_all=self.sb.ReleaseExecuteRequest.ReleaseAll()),
            metadata=self.md)
        self.assertEqual(rel.operation_id, op)
        code, msg = self.code_of(lambda: list(self.stub.ReattachExecute(self.sb.ReattachExecuteRequest(
            session_id=self.session, operation_id=op), metadata=self.md, timeout=30)))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        self.assertIn("OPERATION_NOT_FOUND", msg)

    def test_detail_arrow_nested(self):
        t = copy_fixture("delta-0.8.0-partitioned")
        resps = self.execute(self.rel_plan(self.rel.DeltaRelation(
            describe_detail=self.rel.DescribeDetail(table=self.table(t)))))
        decoded = read_arrow(resps[1].arrow_batch.data)
        if decoded is None:
            self.skipTest("node/apache-arrow not installed")
        row = decoded["rows"][0]
        self.assertEqual(row["format"], "delta")
        self.assertEqual(row["partitionColumns"], ["year", "month", "day"])
        self.assertEqual(row["minReaderVersion"], 1)

    def test_config_and_vacuum_command(self):
        t = copy_fixture("simple_table")
        vac = self.cmd_plan(self.cmd.DeltaCommand(vacuum_table=self.cmd.VacuumTable(
            table=self.table(t), retention_hours=0)))
        code, msg = self.code_of(self.execute, vac)
        self.assertEqual(code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(latest(t), 4)
        Op = self.sb.ConfigRequest.Operation
        cfg = lambda op: self.stub.Config(self.sb.ConfigRequest(session_id=self.session, operation=op),
                                          metadata=self.md)
        got = cfg(Op(get=self.sb.ConfigRequest.Get(keys=[RETENTION])))
        self.assertEqual((got.pairs[0].key, got.pairs[0].value), (RETENTION, "true"))
        cfg(Op(set=self.sb.ConfigRequest.Set(pairs=[self.sb.KeyValue(key=RETENTION, value="false")])))
        got = cfg(Op(get_all=self.sb.ConfigRequest.GetAll(prefix="spark.databricks")))
        self.assertEqual({p.key: p.value for p in got.pairs}, {RETENTION: "false"})
        got = cfg(Op(get_option=self.sb.ConfigRequest.GetOption(keys=["no.such.key"])))
        self.assertFalse(got.pairs[0].HasField("value"))
        got = cfg(Op(get_with_default=self.sb.ConfigRequest.GetWithDefault(
            pairs=[self.sb.KeyValue(key="no.such.key", value="d")])))
        self.assertEqual(got.pairs[0].value, "d")
        code, _ = self.code_of(cfg, Op(get=self.sb.ConfigRequest.Get(keys=["no.such.key"])))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        resps = self.execute(vac)
        self.assertEqual(resps[-1].WhichOneof("response_type"), "result_complete")
        self.assertEqual(latest(t), 6)
        # Another session still has the check on.
        code, _ = self.code_of(self.execute, vac, None, str(uuid.uuid4()))
        self.assertEqual(code, grpc.StatusCode.FAILED_PRECONDITION)

    def test_mutating_relation_runs_once(self):
        t = copy_fixture("simple_table")
        plan = self.rel_plan(self.rel.DeltaRelation(restore_table=self.rel.RestoreTable(
            table=self.table(t), version=1)))
        an = self.stub.AnalyzePlan(self.sb.AnalyzePlanRequest(
            session_id=self.session, schema=self.sb.AnalyzePlanRequest.Schema(plan=plan)), metadata=self.md)
        self.assertEqual(an.schema.schema.struct.fields[0].name, "table_size_after_restore")
        self.assertEqual(latest(t), 5)
        an = self.stub.AnalyzePlan(self.sb.AnalyzePlanRequest(
            session_id=self.session, schema=self.sb.AnalyzePlanRequest.Schema(plan=plan)), metadata=self.md)
        self.assertEqual(latest(t), 5)
        resps = self.execute(plan)
        self.assertEqual(resps[1].arrow_batch.row_count, 1)
        self.assertEqual(latest(t), 5)  # ran once for analyze + execute
        self.execute(plan)              # a second execute is a new run
        self.assertEqual(latest(t), 6)
        v = self.stub.AnalyzePlan(self.sb.AnalyzePlanRequest(
            session_id=self.session, spark_version=self.sb.AnalyzePlanRequest.SparkVersion()), metadata=self.md)
        self.assertTrue(v.spark_version.version)

    def test_errors_and_session(self):
        t = copy_fixture("simple_table")
        # a statement outside deltad's SQL names itself; bad SQL is Spark's syntax error
        sql = self.sb.Plan(root=self.sr.Relation(sql=self.sr.SQL(query="DROP TABLE t")))
        code, msg = self.code_of(self.execute, sql)
        self.assertEqual(code, grpc.StatusCode.UNIMPLEMENTED)
        self.assertIn("DROP", msg)
        sql = self.sb.Plan(root=self.sr.Relation(sql=self.sr.SQL(query="SELECT FROM WHERE")))
        code, msg = self.code_of(self.execute, sql)
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("PARSE_SYNTAX_ERROR", msg)
        # a relation deltad does not run names itself
        code, msg = self.code_of(self.execute, self.sb.Plan(root=self.sr.Relation(
            tail=self.sr.Tail(input=self.sr.Relation(range=self.sr.Range(end=3, step=1)), limit=1))))
        self.assertEqual(code, grpc.StatusCode.UNIMPLEMENTED)
        self.assertIn("'tail'", msg)
        r = self.sr.Relation()
        r.extension.type_url = "type.googleapis.com/delta.connect.DeltaRelation"
        r.extension.value = b"\xff\xff\xff"
        code, msg = self.code_of(self.execute, self.sb.Plan(root=r))
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("malformed", msg)
        r.extension.type_url = "type.googleapis.com/other.Thing"
        code, _ = self.code_of(self.execute, self.sb.Plan(root=r))
        self.assertEqual(code, grpc.StatusCode.UNIMPLEMENTED)
        # a Delta Scan streams the table's rows (schema, arrow batch, result_complete)
        resps = self.execute(self.rel_plan(self.rel.DeltaRelation(scan=self.rel.Scan(table=self.table(t)))))
        self.assertEqual([r.WhichOneof("response_type") for r in resps][-1], "result_complete")
        self.assertEqual(sum(r.arrow_batch.row_count for r in resps if r.WhichOneof("response_type") == "arrow_batch"), 3)
        code, _ = self.code_of(self.execute, self.rel_plan(self.rel.DeltaRelation(
            describe_history=self.rel.DescribeHistory(table=self.table(t + "/no/such/table")))))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        code, _ = self.code_of(self.execute, self.rel_plan(self.rel.DeltaRelation(
            describe_history=self.rel.DescribeHistory(table=self.table("/no/such/table")))))
        self.assertEqual(code, grpc.StatusCode.PERMISSION_DENIED)
        self.assertEqual(latest(t), 4)
        intr = self.stub.Interrupt(self.sb.InterruptRequest(
            session_id=self.session, interrupt_type=self.sb.InterruptRequest.INTERRUPT_TYPE_ALL), metadata=self.md)
        self.assertEqual(list(intr.interrupted_ids), [])
        ssid = intr.server_side_session_id
        rs = self.stub.ReleaseSession(self.sb.ReleaseSessionRequest(session_id=self.session), metadata=self.md)
        self.assertEqual(rs.server_side_session_id, ssid)
        # The old server-side session is gone: a client that observed it is told so.
        code, msg = self.code_of(lambda: self.stub.Config(self.sb.ConfigRequest(
            session_id=self.session, client_observed_server_side_session_id=ssid,
            operation=self.sb.ConfigRequest.Operation(get_all=self.sb.ConfigRequest.GetAll())), metadata=self.md))
        self.assertEqual(code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("SESSION_CHANGED", msg)


if __name__ == "__main__":
    dd_harness.main()
