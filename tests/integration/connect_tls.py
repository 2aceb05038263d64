"""connect_tls.py: the class the tests of the real Delta Connect client start from. The
client (pyspark's Spark Connect client with delta-spark's delta.connect, installed into the
build folder's venv by scripts/peers.sh; a test fails when it cannot be installed) sends a
token only over TLS, so deltad runs with a test certificate (tls_certs.py) and the client
trusts its CA through GRPC_DEFAULT_SSL_ROOTS_FILE_PATH (client_env)."""
import os
import shutil
import subprocess
import tempfile

import dd_harness as h
from tls_certs import Certs

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))


class ConnectTlsTest(h.ServerTest):
    tmp_prefix = "dd-connect-"
    cert_serial = 4242

    @classmethod
    def setUpClass(cls):
        h.install_peers(VENV)
        cls.tmp = tempfile.mkdtemp(prefix=cls.tmp_prefix)
        cls.certs = Certs(cls.tmp)
        cert, key = cls.certs.server("srv", cls.cert_serial)
        cls.server_args = ["--tls-cert-file", cert, "--tls-key-file", key]
        cls.server_curl_args = ["--cacert", cls.certs.ca_cert]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.tmp, True)

    def connect_url(self):
        """The sc:// URL of the server for SparkSession.builder.remote."""
        port = self.server.grpc_target.rsplit(":", 1)[1]
        return "sc://127.0.0.1:%s/;use_ssl=true;token=%s" % (port, self.server.token)

    def client_env(self):
        return dict(os.environ, GRPC_DEFAULT_SSL_ROOTS_FILE_PATH=self.certs.ca_cert)

    def run_client(self, script, *args, timeout=240):
        """Runs a peer script under the venv with the URL first; returns its last JSON line's
        text after asserting it exited 0."""
        p = subprocess.run([os.path.join(VENV, "bin", "python"), script, self.connect_url()] + list(args),
                           capture_output=True, text=True, timeout=timeout, env=self.client_env())
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        return p.stdout.strip().splitlines()[-1]
