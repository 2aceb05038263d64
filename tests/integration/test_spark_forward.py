"""test_spark_forward.py: `deltad --spark-connect sc://...` forwards Delta Connect work to a
real Spark Connect server. The test starts pyspark's Spark Connect server with Delta's SQL
extension (the delta-spark jars; Spark starts once for the class), one deltad forwarding
delete, update, merge, optimize and scan to it (not vacuum), and one deltad running
everything itself. The real Delta Connect client (peers/spark_forward_client.py) runs the
same operations on two copies of one table, one through each deltad: the answers and the
resulting rows must be equal, the forwarded commits must carry Spark's engineInfo and the
local ones deltad's, the vacuum (not forwarded) must be deltad's, and the metric
deltad_spark_forwarded_total{op=...}, the audit log (admin_change SparkForward) and the log
must say what went to Spark. Then, with
no Spark listening: a forwarded call fails UNAVAILABLE naming the endpoint within seconds,
writes nothing, and a non-forwarded one (or one below --spark-forward-min-bytes) still
runs in deltad; an endpoint that never answers ends the call at --spark-forward-timeout-s
with DEADLINE_EXCEEDED."""
import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402
from tls_certs import Certs  # noqa: E402

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
PY = os.path.join(VENV, "bin", "python")
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "spark_forward_client.py")
DELTA_SPARK = "io.delta:delta-spark_2.13:4.4.0"  # the delta-spark of scripts/peers.txt
FORWARDED = "delete,update,merge,optimize,scan"

MAKE_TABLES = r"""
import sys, pyarrow as pa
from deltalake import write_deltalake
t, s = sys.argv[1:3]
for k in range(4):
    ids = list(range(k * 5, k * 5 + 5))
    write_deltalake(t, pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([i * 10 for i in ids], pa.int64()),
                                 "s": pa.array(["s-%d" % i for i in ids])}), mode="append")
ids = list(range(15, 25))
write_deltalake(s, pa.table({"id": pa.array(ids, pa.int64()), "v": pa.array([i * 1000 for i in ids], pa.int64()),
                             "s": pa.array(["new-%d" % i for i in ids])}))
"""

# os._exit: deltalake's runtime may abort in its exit-time teardown once the rows are out
READ_ROWS = r"""
import json, os, sys
from deltalake import DeltaTable
print(json.dumps(sorted(DeltaTable(sys.argv[1]).to_pyarrow_table().to_pylist(), key=lambda r: r["id"])), flush=True)
os._exit(0)
"""


# A forwarded query that runs for hours on Spark, interrupted from another thread of the same
# client (pyspark sends Interrupt on the ExecutePlan's channel): the query fails as pyspark
# fails an interrupted operation and interruptAll returns the client's operation id.
INTERRUPT = r"""
import json, os, sys, threading, time
from pyspark.sql import SparkSession
spark = SparkSession.builder.remote(sys.argv[1]).getOrCreate()
t = "delta.`%s`" % sys.argv[2]  # 20 rows: 20 ** 10 rows joined, hours for Spark
from pyspark.sql.connect.dataframe import DataFrame
from pyspark.sql.connect.plan import SQL
# a SQL relation as is (spark.sql would first run it as a command, in deltad's SQL, which
# has no joins): forwarded, its tables rewritten
df = DataFrame(SQL("SELECT count(*) FROM " + " CROSS JOIN ".join("%s t%d" % (t, i) for i in range(10))), spark)
got = {}
def run():
    try:
        got["rows"] = str(df.collect())
    except Exception as e:
        got["error"] = "%s: %s" % (type(e).__name__, e)
th = threading.Thread(target=run)
th.start()
ids = []
for _ in range(600):  # until the forwarded operation runs on Spark (or the query ended)
    ids = spark.interruptAll()
    if ids or not th.is_alive():
        break
    time.sleep(0.5)
th.join(120)
print(json.dumps({"ids": ids, "alive": th.is_alive(), **got}), flush=True)
os._exit(0)
"""


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def commits(table):
    """(operation, engineInfo) of each commit of table, in version order."""
    out = []
    for p in sorted(glob.glob(os.path.join(table, "_delta_log", "*.json"))):
        with open(p) as f:
            for line in f:
                a = json.loads(line)
                if "commitInfo" in a:
                    out.append((a["commitInfo"].get("operation"), a["commitInfo"].get("engineInfo", "")))
    return out


def spark_sql(server, text, timeout=60):
    """spark.sql(text) as a raw ExecutePlan (SqlCommand) to server: its responses."""
    h.stubs_dir()
    from spark.connect import base_pb2 as sb, base_pb2_grpc as sg, relations_pb2 as sr, commands_pb2 as sc
    plan = sb.Plan(command=sc.Command(sql_command=sc.SqlCommand(input=sr.Relation(sql=sr.SQL(query=text)))))
    req = sb.ExecutePlanRequest(session_id=str(uuid.uuid4()), plan=plan, user_context=sb.UserContext(user_id="u"))
    return list(sg.SparkConnectServiceStub(server.channel()).ExecutePlan(req, metadata=server.md(), timeout=timeout))


def start_spark(port, log):
    spark_home = os.path.join(VENV, "lib", "python3.11", "site-packages", "pyspark")
    if not os.path.isdir(spark_home):
        found = glob.glob(os.path.join(VENV, "lib", "python3*", "site-packages", "pyspark"))
        spark_home = found[0] if found else spark_home
    env = dict(os.environ, SPARK_HOME=spark_home)
    args = [os.path.join(spark_home, "bin", "spark-submit"), "--class",
            "org.apache.spark.sql.connect.service.SparkConnectServer", "--packages", DELTA_SPARK,
            "--conf", "spark.sql.extensions=io.delta.sql.DeltaSparkSessionExtension",
            "--conf", "spark.sql.catalog.spark_catalog=org.apache.spark.sql.delta.catalog.DeltaCatalog",
            "--conf", "spark.connect.grpc.binding.port=%d" % port, "--conf", "spark.ui.enabled=false",
            # one machine, small tables: Delta's 50-partition snapshot rebuild and Spark's
            # default shuffle width cost seconds per operation for nothing
            "--conf", "spark.sql.shuffle.partitions=1", "--conf", "spark.default.parallelism=1",
            "--conf", "spark.databricks.delta.snapshotPartitions=1",
            "--conf", "spark.sql.adaptive.enabled=false", "--driver-memory", "1g", "spark-internal"]
    return subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)


def wait_port(port, proc, timeout=150):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if proc.poll() is not None:
            raise AssertionError("the Spark Connect server exited (%s)" % proc.returncode)
        try:
            socket.create_connection(("127.0.0.1", port), 1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise AssertionError("the Spark Connect server did not listen on %d within %d s" % (port, timeout))


class SparkForward(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        h.install_peers(VENV)
        cls.tmp = tempfile.mkdtemp(prefix="dd-sfwd-")
        cls.spark_port = free_port()
        cls.spark_log = open(os.path.join(cls.tmp, "spark.log"), "w")
        cls.spark = start_spark(cls.spark_port, cls.spark_log)
        cls.certs = Certs(cls.tmp)
        cert, key = cls.certs.server("srv", 4242)
        tls = ["--tls-cert-file", cert, "--tls-key-file", key]
        cls.server_curl_args = ["--cacert", cls.certs.ca_cert]
        cls.server_args = tls + ["--spark-connect", "sc://127.0.0.1:%d" % cls.spark_port,
                                 "--spark-forward", FORWARDED]
        super().setUpClass()  # cls.server: forwards
        cls.local = h.Server(extra_args=tls, curl_args=cls.server_curl_args).start()
        cls.down = None

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
            for s in (cls.local, cls.down):
                if s:
                    assert s.stop() == 0
                    s.cleanup()
        finally:
            os.killpg(cls.spark.pid, 15)
            cls.spark.wait(30)
            cls.spark_log.close()
            shutil.rmtree(cls.tmp, True)

    def venv(self, script, *args):
        p = subprocess.run([PY, "-c", script] + list(args), capture_output=True, text=True, timeout=120)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p.stdout

    def register(self, server, ns, table):
        """catalog name ns.s.t -> table (the Lance RegisterTable API), for spark.sql."""
        h.stubs_dir()
        from deltad.lance.v1 import lance_pb2 as lp, lance_pb2_grpc as lg
        with open(self.certs.ca_cert, "rb") as f:
            creds = grpc.ssl_channel_credentials(f.read())
        with grpc.secure_channel(server.grpc_target, creds) as ch:
            stub, md = lg.NamespaceServiceStub(ch), server.md()
            stub.CreateNamespace(lp.CreateNamespaceRequest(id=[ns]), metadata=md, timeout=10)
            stub.CreateNamespace(lp.CreateNamespaceRequest(id=[ns, "s"]), metadata=md, timeout=10)
            stub.RegisterTable(lp.RegisterTableRequest(id=[ns, "s", "t"], location=table), metadata=md, timeout=10)

    def run_client(self, server, table, source, name):
        port = server.grpc_target.rsplit(":", 1)[1]
        url = "sc://127.0.0.1:%s/;use_ssl=true;token=%s" % (port, server.token)
        env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=self.certs.ca_cert)
        p = subprocess.run([PY, CLIENT, url, table, source, name], capture_output=True, text=True,
                           timeout=240, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return json.loads(p.stdout.strip().splitlines()[-1])

    def metric(self, server, op):
        code, text = server.curl("GET", server.http_base + "/metrics")
        self.assertEqual(code, 200, text)
        want = 'deltad_spark_forwarded_total{op="%s"} ' % op
        line = [x for x in text.splitlines() if x.startswith(want)]
        self.assertEqual(len(line), 1, text[-2000:])
        return int(float(line[0].split()[-1]))

    def test_forward_equals_local(self):
        base, src = os.path.join(self.tmp, "base"), os.path.join(self.tmp, "src")
        self.venv(MAKE_TABLES, base, src)
        fw, loc = os.path.join(self.tmp, "fw"), os.path.join(self.tmp, "loc")
        shutil.copytree(base, fw)
        shutil.copytree(base, loc)
        self.register(self.server, "fc", fw)
        self.register(self.local, "lc", loc)
        wait_port(self.spark_port, self.spark)
        t0 = time.time()
        got_fw = self.run_client(self.server, fw, src, "fc.s.t")
        t1 = time.time()
        got_loc = self.run_client(self.local, loc, src, "lc.s.t")
        print("client through Spark %.1f s, through deltad alone %.1f s" % (t1 - t0, time.time() - t1))
        # Spark's error, relayed with its message and the endpoint
        bad_fw, bad_loc = got_fw.pop("bad_update"), got_loc.pop("bad_update")
        self.assertIn("error", bad_loc, bad_loc)
        self.assertIn("error", bad_fw, bad_fw)
        self.assertIn("sc://127.0.0.1:%d" % self.spark_port, bad_fw["error"])
        self.assertIn("no_such_column", bad_fw["error"])
        for k in got_loc:
            self.assertIn("ok", got_loc[k], "local %s: %s" % (k, got_loc[k]))
            self.assertIn("ok", got_fw[k], "forwarded %s: %s" % (k, got_fw[k]))
            self.assertEqual(got_fw[k], got_loc[k], k)
        self.assertEqual(got_fw["delete"]["ok"], [{"num_affected_rows": 3}])
        self.assertEqual(got_fw["optimize"]["ok"], 1)
        self.assertEqual(json.loads(self.venv(READ_ROWS, fw)), json.loads(self.venv(READ_ROWS, loc)))
        ops_fw, ops_loc = commits(fw), commits(loc)
        self.assertEqual([o for o, _ in ops_fw], [o for o, _ in ops_loc])
        for (op, eng_fw), (_, eng_loc) in zip(ops_fw[4:], ops_loc[4:]):  # after the 4 appends
            if op.startswith("VACUUM"):  # not forwarded: deltad's on both
                self.assertNotIn("Apache-Spark", eng_fw, op)
            else:
                self.assertIn("Apache-Spark", eng_fw, op)
            self.assertNotIn("Apache-Spark", eng_loc, op)
        self.assertIn("VACUUM START", [o for o, _ in ops_fw])
        for op, n in (("delete", 2), ("update", 1), ("merge", 2), ("optimize", 1), ("vacuum", 0), ("scan", 2)):
            self.assertEqual(self.metric(self.server, op), n, op)
        code, body = self.server.curl("GET", "/audit/events?kind=admin_change")
        self.assertEqual(code, 200, body)
        fwd = sorted(e["object"].split()[0] for e in body["events"] if e["action"] == "SparkForward")
        self.assertEqual(fwd, ["op=delete", "op=delete", "op=merge", "op=merge", "op=optimize", "op=update"], body)
        log = "".join(self.server.stderr_lines)
        self.assertIn("spark forward: op=merge", log)
        # the client's spark.stop() released its session: deltad released the Spark one
        self.assertRegex(log, r"spark forward: released Spark session [0-9a-f-]{36} of session [0-9a-f-]{36} at sc://")
        self.assertIn("spark=sc://127.0.0.1:%d" % self.spark_port, log)

    def test_interrupt_forwarded(self):
        table = os.path.join(self.tmp, "intr")
        self.venv(MAKE_TABLES, table, os.path.join(self.tmp, "intr-src"))
        wait_port(self.spark_port, self.spark)
        port = self.server.grpc_target.rsplit(":", 1)[1]
        url = "sc://127.0.0.1:%s/;use_ssl=true;token=%s" % (port, self.server.token)
        env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=self.certs.ca_cert)
        p = subprocess.run([PY, "-c", INTERRUPT, url, table], capture_output=True, text=True, timeout=400, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertFalse(got["alive"], got)
        self.assertNotIn("rows", got, got)
        self.assertEqual(len(got["ids"]), 1, got)
        self.assertRegex(got["ids"][0], r"^[0-9a-f-]{36}$")
        self.assertIn("OPERATION_CANCELED", got["error"], got)
        self.assertIn("spark forward: interrupt of session", "".join(self.server.stderr_lines))

    def test_spark_down(self):
        """No Spark on the endpoint: UNAVAILABLE naming it, fast; nothing written; the
        operations deltad keeps still run."""
        gone = free_port()
        type(self).down = h.Server(extra_args=["--spark-connect", "sc://127.0.0.1:%d" % gone,
                                               "--spark-forward", "delete,optimize"]).start()
        table = os.path.join(self.tmp, "down")
        self.venv(MAKE_TABLES, table, os.path.join(self.tmp, "down_src"))

        before = commits(table)
        t0 = time.time()
        with self.assertRaises(grpc.RpcError) as cm:
            spark_sql(self.down, "DELETE FROM delta.`%s` WHERE id = 1" % table)
        self.assertLess(time.time() - t0, 10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE, cm.exception.details())
        self.assertIn("sc://127.0.0.1:%d" % gone, cm.exception.details())
        self.assertEqual(commits(table), before)
        resps = spark_sql(self.down, "UPDATE delta.`%s` SET v = 0 WHERE id = 1" % table)  # update: not forwarded
        self.assertTrue(any(r.HasField("result_complete") for r in resps))
        self.assertEqual(commits(table)[-1][0], "UPDATE")
        self.assertNotIn("Apache-Spark", commits(table)[-1][1])

    def test_spark_silent(self):
        """An endpoint that accepts TCP and never answers: the forwarded call ends at
        --spark-forward-timeout-s with DEADLINE_EXCEEDED naming it, and deltad goes on."""
        silent = socket.socket()
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        port = silent.getsockname()[1]
        srv = h.Server(extra_args=["--spark-connect", "sc://127.0.0.1:%d" % port, "--spark-forward", "delete",
                                   "--spark-forward-timeout-s", "2"]).start()
        try:
            table = os.path.join(self.tmp, "silent")
            self.venv(MAKE_TABLES, table, os.path.join(self.tmp, "silent_src"))
            t0 = time.time()
            with self.assertRaises(grpc.RpcError) as cm:
                spark_sql(srv, "DELETE FROM delta.`%s` WHERE id = 1" % table)
            self.assertLess(time.time() - t0, 15)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED, cm.exception.details())
            self.assertIn("sc://127.0.0.1:%d" % port, cm.exception.details())
            code, _ = srv.curl("GET", "/catalogs")  # still serving
            self.assertEqual(code, 200)
        finally:
            self.assertEqual(srv.stop(), 0)
            srv.cleanup()
            silent.close()

    def test_min_bytes(self):
        """--spark-forward-min-bytes between two tables' sizes: the larger is forwarded (and
        fails UNAVAILABLE: no Spark there), the smaller runs in deltad."""
        big, small = os.path.join(self.tmp, "mb_big"), os.path.join(self.tmp, "mb_small")
        self.venv(MAKE_TABLES, big, small)  # 4 data files, and 1

        def size(t):
            return sum(os.path.getsize(p) for p in glob.glob(os.path.join(t, "*.parquet")))
        self.assertGreater(size(big), size(small))
        srv = h.Server(extra_args=["--spark-connect", "sc://127.0.0.1:%d" % free_port(), "--spark-forward", "all",
                                   "--spark-forward-min-bytes", str((size(big) + size(small)) // 2)]).start()
        try:
            spark_sql(srv, "DELETE FROM delta.`%s` WHERE id = 15" % small)
            self.assertEqual(commits(small)[-1][0], "DELETE")
            with self.assertRaises(grpc.RpcError) as cm:
                spark_sql(srv, "DELETE FROM delta.`%s` WHERE id = 1" % big)
            self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAVAILABLE, cm.exception.details())
            self.assertEqual(commits(big)[-1][0], "WRITE")
        finally:
            self.assertEqual(srv.stop(), 0)
            srv.cleanup()


if __name__ == "__main__":
    h.main()
