"""test_delta_connect_client.py: the real Delta Connect client judges deltad's Spark Connect
service. It is pyspark 4.2.0's Spark Connect client with delta-spark 4.4.0's
delta.connect DeltaTable (PyPI, pinned in scripts/peers.txt, installed into the build folder's
venv by scripts/peers.sh; the test fails when it cannot be installed), exactly as a user runs
it: SparkSession.builder.remote("sc://...;use_ssl=true;token=..."). The client sends a
token only over TLS, so deltad runs with a test certificate (tls_certs.py) and the client
trusts its CA through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH. On a copy of a real table it runs
isDeltaTable, history, detail and vacuum; the answers must match what deltactl reads from the
log itself. Before deltad answered the settings the client reads in a batch
(spark.sql.execution.pandas.structHandlingMode, ...) every toPandas() failed with
SQL_CONF_NOT_FOUND."""
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
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "delta_connect_client.py")
DELTACTL = os.environ.get("DELTACTL_BIN", os.path.join(h.ROOT, "build-test", "cmd", "deltactl"))


class DeltaConnectClient(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        h.install_peers(VENV)
        cls.tmp = tempfile.mkdtemp(prefix="dd-dconnect-")
        cls.certs = Certs(cls.tmp)
        cert, key = cls.certs.server("srv", 4242)
        cls.server_args = ["--tls-cert-file", cert, "--tls-key-file", key]
        cls.server_curl_args = ["--cacert", cls.certs.ca_cert]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.tmp, True)

    def deltactl(self, *args):
        p = subprocess.run([DELTACTL, "table"] + list(args) + ["--local", "--output", "jsonl"],
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        return [json.loads(line) for line in p.stdout.splitlines() if line.strip()]

    def test_real_client(self):
        table = os.path.join(self.tmp, "t")
        shutil.copytree(os.path.join(h.FIXTURES, "delta-rs-data", "simple_table"), table)
        port = self.server.grpc_target.rsplit(":", 1)[1]
        url = "sc://127.0.0.1:%s/;use_ssl=true;token=%s" % (port, self.server.token)
        env = dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=self.certs.ca_cert)
        p = subprocess.run([os.path.join(VENV, "bin", "python"), CLIENT, url, table],
                           capture_output=True, text=True, timeout=240, env=env)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        # history(n) wraps DescribeHistory in a Spark Limit relation (run by store/query)
        self.assertEqual(got["history_limit"], {"ok": 1})
        for k, v in got.items():
            self.assertIn("ok", v, "%s: %s" % (k, v))
        self.assertIs(got["isDeltaTable"]["ok"], True)
        self.assertIs(got["isDeltaTable_not"]["ok"], False)
        detail = self.deltactl("detail", table)
        detail = detail[0] if isinstance(detail, list) else detail
        self.assertEqual(got["detail"]["ok"], {"format": "delta", "numFiles": detail["numFiles"],
                                              "sizeInBytes": detail["sizeInBytes"]})
        ours = self.deltactl("history", table)  # read after the client's vacuum: drop its 2
        want = [{"version": int(c["version"]), "operation": c["operation"]} for c in ours
                if not c["operation"].startswith("VACUUM")]
        self.assertEqual(got["history"]["ok"], want)
        self.assertIs(got["vacuum"]["ok"], True)
        self.assertEqual(got["history_after"]["ok"], ["VACUUM END", "VACUUM START"])


if __name__ == "__main__":
    h.main()
