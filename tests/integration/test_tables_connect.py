"""test_tables_connect.py: a table registered in the catalog with `deltactl table register`
is reached by its name from the real Delta Connect client (pyspark's Spark Connect client
with delta-spark's delta.connect, pinned in scripts/peers.txt; the test fails when they
cannot be installed): DeltaTable.forName(spark, "cat.sch.t") for history, detail and its
rows, spark.table (a NamedTable) and spark.sql("... FROM cat.sch.t"). The client sends a
token only over TLS, so deltad runs with a test certificate (tls_certs.py)."""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dd_harness  # noqa: E402
from connect_tls import ConnectTlsTest  # noqa: E402

CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "delta_connect_forname.py")


class TablesConnect(ConnectTlsTest):
    tmp_prefix = "dd-tconnect-"
    cert_serial = 4243

    def ctl(self, *args):
        p = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                            "--tls-ca-file", self.certs.ca_cert, "--token", self.server.token] + list(args),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(p.returncode, 0, (args, p.stdout, p.stderr))
        return p.stdout

    def test_for_name(self):
        table = os.path.join(self.tmp, "people")
        dd_harness.write_people_table(table)
        self.assertEqual(self.server.curl("POST", "/catalogs", {"name": "main"})[0], 200)
        self.assertEqual(self.server.curl("POST", "/schemas", {"name": "crm", "catalogName": "main"})[0], 200)
        self.ctl("table", "register", "main.crm.people", table)
        got = json.loads(self.run_client(CLIENT, "main.crm.people"))
        self.assertEqual(got["history"], {"ok": ["WRITE"]}, got)
        self.assertEqual(got["detail"], {"ok": "delta"}, got)
        self.assertEqual(got["toDF"], {"ok": [1, 2, 3]}, got)
        self.assertEqual(got["table"], {"ok": [1, 2, 3]}, got)
        self.assertEqual(got["sql"], {"ok": [2, 3]}, got)
        self.assertIn("not registered", got["missing"].get("error", ""), got)


if __name__ == "__main__":
    dd_harness.main()
