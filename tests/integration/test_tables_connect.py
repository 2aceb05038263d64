"""test_tables_connect.py: a table registered in the catalog with `deltactl table register`
is reached by its name from the real Delta Connect client (pyspark's Spark Connect client
with delta-spark's delta.connect, pinned in scripts/peers.txt; the test fails when they
cannot be installed): DeltaTable.forName(spark, "cat.sch.t") for history, detail and its
rows, spark.table (a NamedTable) and spark.sql("... FROM cat.sch.t"). The client sends a
token only over TLS, so deltad runs with a test certificate (tls_certs.py)."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness as h  # noqa: E402
from tls_certs import Certs  # noqa: E402

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "delta_connect_forname.py")


class TablesConnect(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        inst = subprocess.run(["bash", os.path.join(h.ROOT, "scripts", "peers.sh"), VENV],
                              capture_output=True, text=True)
        if inst.returncode != 0:
            raise AssertionError("scripts/peers.sh failed (the test needs pyspark): " + inst.stderr)
        cls.tmp = tempfile.mkdtemp(prefix="dd-tconnect-")
        cls.certs = Certs(cls.tmp)
        cert, key = cls.certs.server("srv", 4243)
        cls.server_args = ["--tls-cert-file", cert, "--tls-key-file", key]
        cls.server_curl_args = ["--cacert", cls.certs.ca_cert]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.tmp, True)

    def ctl(self, *args):
        env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=self.certs.ca_cert)
        p = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                            "--tls-ca-file", self.certs.ca_cert, "--token", self.server.token] + list(args),
                           capture_output=True, text=True, timeout=60, env=env)
        self.assertEqual(p.returncode, 0, (args, p.stdout, p.stderr))
        return p.stdout

    def test_for_name(self):
        table = os.path.join(self.tmp, "people")
        p = subprocess.run([os.path.join(VENV, "bin", "python"), "-c",
                            "import sys, deltalake, pyarrow as pa; deltalake.write_deltalake(sys.argv[1], "
                            "pa.table({'id': pa.array([1, 2, 3], pa.int64()), 'name': ['a', 'b', 'c']}))",
                            table], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(self.server.curl("POST", "/catalogs", {"name": "main"})[0], 200)
        self.assertEqual(self.server.curl("POST", "/schemas", {"name": "crm", "catalogName": "main"})[0], 200)
        self.ctl("table", "register", "main.crm.people", table)
        port = self.server.grpc_target.rsplit(":", 1)[1]
        url = "sc://127.0.0.1:%s/;use_ssl=true;token=%s" % (port, self.server.token)
        env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=self.certs.ca_cert)
        p = subprocess.run([os.path.join(VENV, "bin", "python"), CLIENT, url, "main.crm.people"],
                           capture_output=True, text=True, timeout=240, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(got["history"], {"ok": ["WRITE"]}, got)
        self.assertEqual(got["detail"], {"ok": "delta"}, got)
        self.assertEqual(got["toDF"], {"ok": [1, 2, 3]}, got)
        self.assertEqual(got["table"], {"ok": [1, 2, 3]}, got)
        self.assertEqual(got["sql"], {"ok": [2, 3]}, got)
        self.assertIn("not registered", got["missing"].get("error", ""), got)


if __name__ == "__main__":
    h.main()
