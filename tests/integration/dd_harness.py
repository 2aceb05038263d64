"""dd_harness.py: starts a real deltad for integration tests and gives tests real clients.

Every test file imports this. A Server runs the deltad binary (path in $DELTAD_BIN) on
free loopback ports (it is started on 127.0.0.1:0 and the ports are read from what it
prints), with a fresh data directory, and stops it with SIGTERM, asserting a clean exit
(exit code 0 and no sanitizer report on stderr). Python gRPC stubs are generated from
proto/ into a scratch folder with Debian's grpc_tools the first time they are needed.

deltad touches tables only under registered storage locations (never inside its data
directory), so a started Server registers two LOCAL locations, for the temporary directory
(where tests make their tables) and the fixtures: `dd-test-tmp` and `dd-test-fixtures`
(register_locations=False starts without them).

With DD_CATALOG_BACKEND=postgresql in the environment (the ctests integration.X.pg), every
Server keeps its catalog on one PostgreSQL the process starts once (dd_pg.py), in a schema
named after its data directory (so each Server starts empty and a restart on the same data
directory finds its catalog), with key files made in the data directory and passed as
--secret-key-file / --url-signing-key-file, as a replica would run.
"""
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import unittest
import urllib.request

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROTO_DIR = os.path.join(ROOT, "proto")
_STUBS = None


def install_peers(venv):
    """scripts/peers.sh into venv (pyspark, delta-spark, ...): AssertionError when it fails,
    so a test that needs the peers fails rather than skips."""
    inst = subprocess.run(["bash", os.path.join(ROOT, "scripts", "peers.sh"), venv],
                          capture_output=True, text=True)
    if inst.returncode != 0:
        raise AssertionError("scripts/peers.sh failed (the test needs pyspark): " + inst.stderr)


def stubs_dir():
    """Generates Python stubs for every .proto under proto/ once per process."""
    global _STUBS
    if _STUBS is None:
        out = tempfile.mkdtemp(prefix="dd-stubs-")
        protos = []
        for base, _, files in os.walk(PROTO_DIR):
            for f in files:
                if f.endswith(".proto"):
                    protos.append(os.path.relpath(os.path.join(base, f), PROTO_DIR))
        from grpc_tools import protoc
        args = ["protoc", "-I" + PROTO_DIR, "-I/usr/include", "--python_out=" + out,
                "--grpc_python_out=" + out] + sorted(protos)
        if protoc.main(args) != 0:
            raise RuntimeError("grpc_tools.protoc failed")
        sys.path.insert(0, out)
        _STUBS = out
    return _STUBS


def load_pb2(relpath):
    """Loads one generated *_pb2.py by file path. Needed for the grpc.health and
    grpc.reflection stubs, whose package name `grpc` is taken by grpcio itself."""
    import importlib.util
    path = os.path.join(stubs_dir(), relpath)
    name = "dd_" + relpath.replace("/", "_").replace(".py", "")
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FIXTURES = os.path.realpath(os.environ.get("DD_FIXTURES",
                                           os.path.join(ROOT, "..", "shared", "fixtures")))
TEST_LOCATIONS = (("dd-test-tmp", os.path.realpath(tempfile.gettempdir())),
                  ("dd-test-fixtures", FIXTURES))


_PG = None


def shared_postgres():
    """The process's PostgreSQL (dd_pg.Postgres), started on first use, stopped at exit."""
    global _PG
    if _PG is None:
        import atexit
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        import dd_pg
        _PG = dd_pg.Postgres().start()
        atexit.register(_PG.cleanup)
    return _PG


def make_key_file(path):
    """32 random bytes, mode 0600 (a replica's shared key file), unless it exists."""
    if not os.path.exists(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(os.urandom(32))
    return path


def write_people_table(path):
    """Writes a small Delta table (id bigint 1..3, name string) at path with delta-rs, the
    venv's peer (scripts/peers.sh); raises when it cannot."""
    py = os.path.join(os.environ.get("DD_VENV", os.path.join(ROOT, "build-test", "venv")), "bin", "python")
    p = subprocess.run([py, "-c", "import sys, deltalake, pyarrow as pa; deltalake.write_deltalake("
                        "sys.argv[1], pa.table({'id': pa.array([1, 2, 3], pa.int64()), "
                        "'name': ['ann', 'bob', 'cy']}))", path], capture_output=True, text=True)
    if p.returncode != 0:
        raise AssertionError("deltalake (the venv's peer) cannot write a table: " + p.stderr)


def catalog_args(data_dir, pg=None, schema=None):
    """deltad flags putting the catalog of data_dir on PostgreSQL (pg: a dd_pg.Postgres,
    default the shared one; schema: default from data_dir's name)."""
    pg = pg or shared_postgres()
    keys = os.path.join(data_dir, "replica-keys")
    os.makedirs(keys, mode=0o700, exist_ok=True)
    pool = ["--catalog-pool", os.environ["DD_CATALOG_POOL"]] if os.environ.get("DD_CATALOG_POOL") else []
    # check (a round trip per call) unless the test asks for notify, deltad's default
    pool += ["--catalog-cache", os.environ.get("DD_CATALOG_CACHE", "check")]
    return pool + ["--catalog", pg.url, "--catalog-schema",
            schema or "t_" + re.sub(r"[^A-Za-z0-9_]", "_", os.path.basename(data_dir)),
            "--secret-key-file", make_key_file(os.path.join(keys, "secret.key")),
            "--url-signing-key-file", make_key_file(os.path.join(keys, "url_signing.key"))]


class Server:
    def __init__(self, data_dir=None, env=None, extra_args=None, register_locations=True,
                 curl_args=None):
        self.register_locations = register_locations
        self.curl_args = list(curl_args or [])  # e.g. --cacert for a TLS server
        self.owns_dir = data_dir is None
        self.data_dir = data_dir or tempfile.mkdtemp(prefix="deltad-test-")
        self.env = dict(os.environ)
        self.env.update(env or {})
        self.extra_args = list(extra_args or [])
        if os.environ.get("DD_CATALOG_BACKEND") == "postgresql" and "--catalog" not in self.extra_args:
            self.extra_args += catalog_args(self.data_dir)
        self.proc = None
        self.stderr_lines = []
        self.stdout_lines = []

    def start(self, timeout=30):
        binary = os.environ["DELTAD_BIN"]
        args = [binary, "--data-dir", self.data_dir, "--grpc-listen", "127.0.0.1:0",
                "--http-listen", "127.0.0.1:0", "--threads", "2"] + self.extra_args
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     env=self.env, text=True)
        threading.Thread(target=self._drain, args=(self.proc.stderr, self.stderr_lines),
                         daemon=True).start()
        deadline = time.time() + timeout
        while time.time() < deadline:
            line = self.proc.stdout.readline()
            if not line:
                break
            self.stdout_lines.append(line)
            m = re.match(r"deltad: gRPC listening on ([\d.]+):(\d+)", line)
            if m:
                self.grpc_target = "%s:%s" % (m.group(1), m.group(2))
            m = re.match(r"deltad: REST listening on (https?://[\d.]+:\d+)(\S*)", line)
            if m:
                self.http_base = m.group(1)
                self.rest = m.group(1) + m.group(2)
            if line.startswith("deltad: ready"):
                threading.Thread(target=self._drain, args=(self.proc.stdout, self.stdout_lines),
                                 daemon=True).start()
                self.token = self.read_token()
                if self.register_locations:
                    self.add_test_locations()
                return self
        self.proc.kill()
        raise RuntimeError("deltad did not start: %s %s" % (self.stdout_lines,
                                                           self.stderr_lines))

    def add_test_locations(self):
        """Registers the LOCAL storage locations tests put their tables in (kept on a restart
        with the same data directory)."""
        for name, path in TEST_LOCATIONS:
            code, body = self.curl("POST", "/locations", {"name": name, "url": "file://" + path,
                                                          "type": "LOCAL"})
            if code not in (200, 409):
                raise RuntimeError("cannot register location %s: %s %s" % (name, code, body))

    def read_token(self):
        if "DELTAD_ADMIN_TOKEN" in self.env:
            return self.env["DELTAD_ADMIN_TOKEN"]
        with open(os.path.join(self.data_dir, "admin.token")) as f:
            return f.read().strip()

    @staticmethod
    def _drain(stream, sink):
        for line in stream:
            sink.append(line)

    def stop(self, sig=signal.SIGTERM, timeout=30):
        """Stops deltad and returns its exit code; raises if a sanitizer reported."""
        if self.proc is None:
            return None
        self.proc.send_signal(sig)
        code = self.proc.wait(timeout=timeout)
        time.sleep(0.05)
        self.proc = None
        err = "".join(self.stderr_lines)
        if "Sanitizer" in err or "runtime error:" in err:
            raise AssertionError("sanitizer report from deltad:\n" + err)
        return code

    def cleanup(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
        if self.owns_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)

    # ---- clients ----
    def channel(self):
        import grpc
        return grpc.insecure_channel(self.grpc_target)

    def md(self, token=None):
        return (("authorization", "Bearer " + (token or self.token)),)

    def curl(self, method, path, body=None, token="admin", headers=()):
        """Runs real curl against the REST port; returns (status, parsed JSON or text)."""
        url = self.rest + path if path.startswith("/") else path
        args = ["curl", "-sS", "-X", method, "-o", "-", "-w", "\n%{http_code}", url] + self.curl_args
        if token == "admin":
            token = self.token
        if token:
            args += ["-H", "Authorization: Bearer " + token]
        for h in headers:
            args += ["-H", h]
        if body is not None:
            data = body if isinstance(body, (str, bytes)) else json.dumps(body)
            args += ["-H", "Content-Type: application/json", "--data-binary", "@-"]
        else:
            data = None
        out = subprocess.run(args, input=data.encode() if isinstance(data, str) else data,
                             capture_output=True, check=True).stdout.decode()
        text, _, code = out.rpartition("\n")
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = text
        return int(code), parsed


class ServerTest(unittest.TestCase):
    """A TestCase with one deltad for the whole class."""
    server_env = None
    server_args = None
    register_locations = True  # the LOCAL locations dd-test-tmp and dd-test-fixtures
    server_curl_args = None    # extra curl arguments of Server.curl (TLS servers)

    @classmethod
    def setUpClass(cls):
        stubs_dir()
        cls.server = Server(env=cls.server_env, extra_args=cls.server_args,
                            register_locations=cls.register_locations,
                            curl_args=cls.server_curl_args).start()

    @classmethod
    def tearDownClass(cls):
        try:
            code = cls.server.stop()
            assert code == 0, "deltad exited with %r after SIGTERM" % code
        finally:
            cls.server.cleanup()


def main():
    result = unittest.main(exit=False, verbosity=2).result
    run = result.testsRun
    failed = len(result.failures) + len(result.errors)
    print("%d passed, %d failed" % (run - failed - len(result.skipped), failed))
    sys.exit(0 if result.wasSuccessful() and run > 0 else 1)
