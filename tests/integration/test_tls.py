#!/usr/bin/python3
"""test_tls.py: deltad with TLS on both ports, against real TLS clients.

Throwaway certificates come from the openssl command (tls_certs.py). Clients: python3-grpcio
with grpc.ssl_channel_credentials (with and without a client certificate), curl --cacert
(and --cert/--key), Python's ssl module to read which certificate a fresh handshake shows,
and the official delta-sharing client (PyPI, pinned in scripts/peers.txt, installed into
the build folder's venv by scripts/peers.sh; the test fails when it cannot be installed)
reading a shared DAT table over https with a profile whose endpoint is https. Also: plain
text refused on both ports, SIGHUP with a new certificate (the next handshake shows its
serial, an open channel keeps working), a broken or mismatched new certificate keeps the
old one, and start-up refused on bad files or options."""
import json
import os
import shutil
import subprocess
import tempfile
import time
import unittest

import dd_harness as h
import tls_certs
from tls_certs import Certs, peer_serial

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
DAT = os.path.join(FIX, "dat", "reader_tests", "generated", "basic_append")
VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
READER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "delta_sharing_read.py")


def catalog_stubs():
    h.stubs_dir()
    from deltad.catalog.v1 import catalog_pb2, catalog_pb2_grpc
    return catalog_pb2, catalog_pb2_grpc


def wait_line(lines, text, timeout=10, count=1):
    """True once `count` of lines contain text."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if sum(text in l for l in lines) >= count:
            return True
        time.sleep(0.05)
    return False


class TlsCase(h.ServerTest):
    """One TLS deltad per class; subclasses say which client certificate mode."""
    client_auth = None
    extra_args = []

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-tls-")
        cls.certs = Certs(cls.tmp)
        cls.rogue = Certs(cls.tmp, "rogue")
        cert, key = cls.certs.server("srv1", 1001)
        cls.cert_file, cls.key_file = os.path.join(cls.tmp, "live.pem"), os.path.join(cls.tmp, "live.key")
        shutil.copy(cert, cls.cert_file)
        shutil.copy(key, cls.key_file)
        cls.client = cls.certs.client("alice", 77)
        cls.rogue_client = cls.rogue.client("mallory", 66)
        args = ["--tls-cert-file", cls.cert_file, "--tls-key-file", cls.key_file]
        if cls.client_auth:
            cls.ca_file = os.path.join(cls.tmp, "live-ca.pem")
            shutil.copy(cls.certs.ca_cert, cls.ca_file)
            args += ["--tls-client-auth", cls.client_auth, "--tls-client-ca-file", cls.ca_file]
        cls.server_args = args + cls.extra_args
        # The harness registers its storage locations over REST: as a trusted client.
        cls.server_curl_args = ["--cacert", cls.certs.ca_cert, "--cert", cls.client[0],
                                "--key", cls.client[1]]
        super().setUpClass()
        cls.grpc_port = int(cls.server.grpc_target.rsplit(":", 1)[1])
        cls.rest_port = int(cls.server.http_base.rsplit(":", 1)[1])

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.tmp, ignore_errors=True)

    # ---- clients ----
    def secure_channel(self, client=None, ca=None):
        import grpc
        creds = grpc.ssl_channel_credentials(
            root_certificates=tls_certs.read(ca or self.certs.ca_cert),
            private_key=tls_certs.read(client[1]) if client else None,
            certificate_chain=tls_certs.read(client[0]) if client else None)
        return grpc.secure_channel(self.server.grpc_target, creds)

    def list_catalogs(self, channel):
        pb, pbg = catalog_stubs()
        return pbg.CatalogServiceStub(channel).ListCatalogs(pb.ListCatalogsRequest(),
                                                           metadata=self.server.md(), timeout=10)

    def assert_grpc_refused(self, channel):
        import grpc
        with self.assertRaises(grpc.RpcError) as e:
            self.list_catalogs(channel)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAVAILABLE, e.exception.details())

    def deltactl(self, *args):
        out = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                              "--token", self.server.token, "--timeout", "10"] + list(args) +
                             ["catalog", "list"], capture_output=True, text=True, timeout=60)
        return out.returncode, out.stderr

    def curl(self, path, *extra, scheme="https", method="GET", body=None):
        """(curl exit code, http status or 0, body text)."""
        url = "%s://127.0.0.1:%d%s" % (scheme, self.rest_port, path)
        args = ["curl", "-sS", "-X", method, "-o", "-", "-w", "\n%{http_code}",
                "-H", "Authorization: Bearer " + self.server.token] + list(extra) + [url]
        if body is not None:
            args += ["-H", "Content-Type: application/json", "--data-binary", json.dumps(body)]
        out = subprocess.run(args, capture_output=True, text=True, timeout=30)
        text, _, code = out.stdout.rpartition("\n")
        return out.returncode, int(code or 0), text

    def curl_ok(self, path, *extra, **kw):
        rc, code, text = self.curl(path, "--cacert", self.certs.ca_cert, *extra, **kw)
        self.assertEqual((rc, code), (0, 200), text)
        return json.loads(text) if text else None


class ServerCertificate(TlsCase):
    """TLS without client certificates."""

    def test_grpc_over_tls(self):
        r = self.list_catalogs(self.secure_channel())
        self.assertEqual(list(r.catalogs), [])

    def test_grpc_plaintext_and_untrusted_refused(self):
        import grpc
        self.assert_grpc_refused(grpc.insecure_channel(self.server.grpc_target))
        self.assert_grpc_refused(self.secure_channel(ca=self.rogue.ca_cert))
        self.list_catalogs(self.secure_channel())  # the server is still fine

    def test_deltactl_over_tls(self):
        rc, err = self.deltactl("--tls-ca-file", self.certs.ca_cert)
        self.assertEqual(rc, 0, err)
        rc, err = self.deltactl()  # plaintext
        self.assertEqual(rc, 1)
        self.assertIn("UNAVAILABLE", err)
        rc, err = self.deltactl("--tls-ca-file", self.rogue.ca_cert)
        self.assertEqual(rc, 1)
        rc, err = self.deltactl("--tls-ca-file", self.certs.ca_cert + ".missing")
        self.assertEqual(rc, 3)
        self.assertIn("cannot read", err)

    def test_rest_over_tls(self):
        self.assertEqual(self.curl_ok("/api/v1/catalogs"), {})

    def test_rest_plaintext_and_unverified_refused(self):
        rc, code, _ = self.curl("/api/v1/catalogs", scheme="http")
        self.assertNotEqual(rc, 0)  # curl: empty reply / connection reset, never a reply
        self.assertEqual(code, 0)
        rc, code, _ = self.curl("/api/v1/catalogs")  # no --cacert: our CA is unknown
        self.assertEqual(rc, 60)
        rc, code, _ = self.curl("/api/v1/catalogs", "--cacert", self.rogue.ca_cert)
        self.assertEqual(rc, 60)
        self.curl_ok("/api/v1/catalogs")

    def test_profile_endpoint_is_https(self):
        base = "https://127.0.0.1:%d" % self.rest_port
        self.assertEqual(self.server.http_base, base)
        r = self.curl_ok("/api/v1/recipients", method="POST", body={"name": "profile_check"})
        profile = json.loads(r["profile"])
        self.assertTrue(profile["endpoint"].startswith(base + "/"), profile)

    def test_delta_sharing_client_over_https(self):
        python = os.path.join(VENV, "bin", "python")
        inst = subprocess.run(["bash", os.path.join(h.ROOT, "scripts", "peers.sh"), VENV],
                              capture_output=True, text=True)
        self.assertEqual(inst.returncode, 0, "scripts/peers.sh failed: " + inst.stderr)
        self.curl_ok("/api/v1/shares", method="POST", body={"name": "tls_share"})
        self.curl_ok("/api/v1/shares/tls_share/schemas", method="POST", body={"name": "s"})
        self.curl_ok("/api/v1/shares/tls_share/schemas/s/tables", method="POST",
                     body={"name": "basic_append", "url": "file://" + os.path.join(DAT, "delta")})
        r = self.curl_ok("/api/v1/recipients", method="POST", body={"name": "pandas_user"})
        self.curl_ok("/api/v1/recipients/pandas_user/grants/tls_share", method="POST")
        profile = json.loads(r["profile"])
        self.assertTrue(profile["endpoint"].startswith("https://"), profile)
        path = os.path.join(self.tmp, "recipient.share")
        with open(path, "w") as f:
            json.dump(profile, f)
        env = dict(os.environ, REQUESTS_CA_BUNDLE=self.certs.ca_cert, SSL_CERT_FILE=self.certs.ca_cert)
        out = subprocess.run([python, READER, path, "tls_share.s.basic_append",
                              os.path.join(DAT, "expected", "latest", "table_content")],
                             capture_output=True, text=True, env=env, timeout=240)
        self.assertEqual(out.returncode, 0, out.stderr[-3000:])
        got = json.loads(out.stdout.strip().splitlines()[-1])
        self.assertEqual(got["tables"], ["tls_share.s.basic_append"])
        self.assertEqual(len(got["expected"]), 5)
        self.assertEqual(got["got"], got["expected"])
        # and without our CA the client refuses the server
        env = dict(os.environ)
        env.pop("REQUESTS_CA_BUNDLE", None)
        env.pop("SSL_CERT_FILE", None)
        out = subprocess.run([python, READER, path, "--probe"], capture_output=True, text=True,
                             env=env, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr[-3000:])
        err = json.loads(out.stdout.strip().splitlines()[-1]).get("error", "")
        self.assertIn("CERTIFICATE_VERIFY_FAILED", err)

    def test_sighup_reload(self):
        ca = self.certs.ca_cert
        self.assertEqual(peer_serial(self.rest_port, ca), 1001)
        self.assertEqual(peer_serial(self.grpc_port, ca, ["h2"]), 1001)
        before = self.secure_channel()
        self.list_catalogs(before)
        # a new certificate: the next handshake on either port shows it
        cert, key = self.certs.server("srv2", 2002)
        shutil.copy(cert, self.cert_file)
        shutil.copy(key, self.key_file)
        self.server.proc.send_signal(1)
        self.assertTrue(wait_line(self.server.stdout_lines, "TLS certificate reloaded (serial 07D2"),
                        self.server.stdout_lines)
        self.assertEqual(peer_serial(self.rest_port, ca), 2002)
        self.assertEqual(peer_serial(self.grpc_port, ca, ["h2"]), 2002)
        self.list_catalogs(before)  # the open connection goes on
        self.list_catalogs(self.secure_channel())
        self.curl_ok("/api/v1/catalogs")
        # a broken certificate, then a key that is not the certificate's: both refused,
        # and the certificate served stays the last good one
        with open(self.cert_file, "w") as f:
            f.write("-----BEGIN CERTIFICATE-----\nbroken\n-----END CERTIFICATE-----\n")
        self.server.proc.send_signal(1)
        self.assertTrue(wait_line(self.server.stderr_lines, "live.pem: not a PEM certificate"),
                        self.server.stderr_lines)
        cert3, _ = self.certs.server("srv3", 3003)
        shutil.copy(cert3, self.cert_file)  # live.key is still srv2's
        self.server.proc.send_signal(1)
        self.assertTrue(wait_line(self.server.stderr_lines, "live.key does not match the certificate"),
                        self.server.stderr_lines)
        failed = [l for l in self.server.stderr_lines if "TLS reload failed" in l]
        self.assertEqual(len(failed), 2, self.server.stderr_lines)
        self.assertIn("the current certificate stays", failed[0])
        self.assertEqual(peer_serial(self.rest_port, ca), 2002)
        self.assertEqual(peer_serial(self.grpc_port, ca, ["h2"]), 2002)
        self.list_catalogs(self.secure_channel())
        self.curl_ok("/api/v1/catalogs")


class RequiredClientCertificate(TlsCase):
    client_auth = "require"

    def test_grpc(self):
        self.list_catalogs(self.secure_channel(client=self.client))
        self.assert_grpc_refused(self.secure_channel())
        self.assert_grpc_refused(self.secure_channel(client=self.rogue_client))

    def test_deltactl(self):
        ca = ("--tls-ca-file", self.certs.ca_cert)
        rc, err = self.deltactl(*ca, "--tls-cert-file", self.client[0], "--tls-key-file", self.client[1])
        self.assertEqual(rc, 0, err)
        rc, err = self.deltactl(*ca)
        self.assertEqual(rc, 1)
        self.assertIn("UNAVAILABLE", err)

    def test_rest(self):
        self.curl_ok("/api/v1/catalogs", "--cert", self.client[0], "--key", self.client[1])
        rc, code, text = self.curl("/api/v1/catalogs", "--cacert", self.certs.ca_cert)
        self.assertEqual((rc, code), (0, 401), text)
        self.assertEqual(json.loads(text)["code"], 16)  # UNAUTHENTICATED
        self.assertIn("client certificate is required", text)
        rc, code, text = self.curl("/api/v1/catalogs", "--cacert", self.certs.ca_cert,
                                   "--cert", self.rogue_client[0], "--key", self.rogue_client[1])
        self.assertEqual((rc, code), (0, 401), text)
        self.assertIn("client certificate not trusted", text)
        # the refusal comes before the route: an unknown path is 401 too, not 404
        rc, code, _ = self.curl("/nowhere", "--cacert", self.certs.ca_cert)
        self.assertEqual(code, 401)

    def reload(self):
        n = sum("TLS certificate reloaded" in l for l in self.server.stdout_lines)
        self.server.proc.send_signal(1)
        self.assertTrue(wait_line(self.server.stdout_lines, "TLS certificate reloaded", count=n + 1),
                        self.server.stderr_lines)

    def test_client_ca_reload(self):
        """SIGHUP re-reads the client CA too: after swapping in the other CA, new
        connections with its certificate are served and those with the old one refused."""
        alice = ("--cert", self.client[0], "--key", self.client[1])
        mallory = ("--cert", self.rogue_client[0], "--key", self.rogue_client[1])
        shutil.copy(self.rogue.ca_cert, self.ca_file)
        try:
            self.reload()
            self.list_catalogs(self.secure_channel(client=self.rogue_client))
            self.assert_grpc_refused(self.secure_channel(client=self.client))
            self.curl_ok("/api/v1/catalogs", *mallory)
            rc, code, text = self.curl("/api/v1/catalogs", "--cacert", self.certs.ca_cert, *alice)
            self.assertEqual((rc, code), (0, 401), text)
        finally:
            shutil.copy(self.certs.ca_cert, self.ca_file)
            self.reload()
        self.list_catalogs(self.secure_channel(client=self.client))
        self.curl_ok("/api/v1/catalogs", *alice)


class OptionalClientCertificate(TlsCase):
    client_auth = "optional"

    def test_grpc(self):
        self.list_catalogs(self.secure_channel())
        self.list_catalogs(self.secure_channel(client=self.client))
        self.assert_grpc_refused(self.secure_channel(client=self.rogue_client))

    def test_rest(self):
        self.curl_ok("/api/v1/catalogs")
        self.curl_ok("/api/v1/catalogs", "--cert", self.client[0], "--key", self.client[1])
        rc, code, text = self.curl("/api/v1/catalogs", "--cacert", self.certs.ca_cert,
                                   "--cert", self.rogue_client[0], "--key", self.rogue_client[1])
        self.assertEqual((rc, code), (0, 401), text)


class ServerCertificateEpoll(ServerCertificate):
    """The same over the REST epoll pool (--http-threads 2: connections suspended and
    resumed, the sharing query streamed and file URLs served from the pool)."""
    extra_args = ["--http-threads", "2"]


class RequiredClientCertificateEpoll(RequiredClientCertificate):
    extra_args = ["--http-threads", "2"]


class PlaintextSighup(h.ServerTest):
    def test_sighup_without_tls(self):
        """SIGHUP on a plaintext deltad says there is nothing to reload and serves on."""
        self.server.proc.send_signal(1)
        self.assertTrue(wait_line(self.server.stdout_lines, "TLS is not configured, nothing to reload"))
        code, body = self.server.curl("GET", "/catalogs")
        self.assertEqual(code, 200, body)
        self.assertTrue(self.server.http_base.startswith("http://"))


class StartupRefused(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-tls-bad-")
        cls.certs = Certs(cls.tmp)
        cls.cert, cls.key = cls.certs.server("a", 1)
        cls.other_cert, cls.other_key = cls.certs.server("b", 2)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_deltad(self, *args):
        data = os.path.join(self.tmp, "data")
        out = subprocess.run([os.environ["DELTAD_BIN"], "--data-dir", data, "--grpc-listen",
                              "127.0.0.1:0", "--http-listen", "127.0.0.1:0"] + list(args),
                             capture_output=True, text=True, timeout=30)
        self.assertNotIn("Sanitizer", out.stderr)
        self.assertNotIn("ready", out.stdout)
        self.assertFalse(os.path.exists(os.path.join(data, "admin.token")))  # nothing opened
        return out.returncode, out.stderr

    def test_bad_files(self):
        rc, err = self.run_deltad("--tls-cert-file", self.cert, "--tls-key-file", self.other_key)
        self.assertEqual(rc, 1)
        self.assertIn("%s does not match the certificate in %s" % (self.other_key, self.cert), err)
        rc, err = self.run_deltad("--tls-cert-file", self.cert + ".missing", "--tls-key-file", self.key)
        self.assertEqual(rc, 1)
        self.assertIn("cannot read %s.missing: No such file or directory" % self.cert, err)
        rc, err = self.run_deltad("--tls-cert-file", self.key, "--tls-key-file", self.key)
        self.assertEqual(rc, 1)
        self.assertIn("%s: not a PEM certificate" % self.key, err)
        rc, err = self.run_deltad("--tls-cert-file", self.cert, "--tls-key-file", self.cert)
        self.assertEqual(rc, 1)
        self.assertIn("%s: not an unencrypted PEM private key" % self.cert, err)
        rc, err = self.run_deltad("--tls-cert-file", self.cert, "--tls-key-file", self.key,
                                  "--tls-client-auth", "require", "--tls-client-ca-file", self.key)
        self.assertEqual(rc, 1)
        self.assertIn("%s: no PEM certificate" % self.key, err)

    def test_bad_options(self):
        cases = [
            (["--tls-cert-file", self.cert], "tls-cert-file and tls-key-file go together"),
            (["--tls-cert-file", self.cert, "--tls-key-file", self.key, "--tls-client-auth", "require"],
             "tls-client-auth = require needs tls-client-ca-file"),
            (["--tls-cert-file", self.cert, "--tls-key-file", self.key,
              "--tls-client-ca-file", self.certs.ca_cert], "tls-client-auth is none"),
            (["--tls-client-auth", "sometimes"], "expected none, optional or require"),
            (["--tls-client-ca-file", self.certs.ca_cert, "--tls-client-auth", "optional"],
             "client certificates need TLS"),
        ]
        for args, msg in cases:
            rc, err = self.run_deltad(*args)
            self.assertEqual(rc, 2, args)
            self.assertIn(msg, err)


if __name__ == "__main__":
    h.main()
