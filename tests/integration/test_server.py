#!/usr/bin/python3
"""test_server.py: deltad as a process: first start (admin token file and mode, the
DELTAD_ADMIN_TOKEN variable), restart persistence, SIGTERM/SIGINT shutdown with exit 0,
health and reflection without a token, malformed and oversized protobuf messages, and
configuration errors."""
import os
import shutil
import signal
import stat
import subprocess
import tempfile
import unittest

import grpc

import dd_harness
from dd_harness import Server


def stubs():
    dd_harness.stubs_dir()
    from deltad.catalog.v1 import catalog_pb2 as c, catalog_pb2_grpc as cg
    return c, cg


class ServerProcess(unittest.TestCase):
    def setUp(self):
        dd_harness.stubs_dir()
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.cleanup()

    def start(self, **kw):
        s = Server(**kw)
        self.servers.append(s)
        return s.start()

    def test_admin_token_file_and_persistence(self):
        c, cg = stubs()
        data = tempfile.mkdtemp(prefix="deltad-persist-")
        s = self.start(data_dir=data)
        path = os.path.join(data, "admin.token")
        mode = stat.S_IMODE(os.stat(path).st_mode)
        self.assertEqual(mode, 0o600)
        self.assertTrue(any("admin token written to" in l for l in s.stdout_lines))
        token = s.token
        self.assertGreaterEqual(len(token), 32)
        cat = cg.CatalogServiceStub(s.channel())
        made = cat.CreateCatalog(c.CreateCatalogRequest(name="persist"), metadata=s.md())
        self.assertEqual(s.stop(), 0)
        # The token is stored hashed only.
        raw = b""
        for base, _, files in os.walk(data):
            for f in files:
                if f != "admin.token":
                    with open(os.path.join(base, f), "rb") as fh:
                        raw += fh.read()
        self.assertNotIn(token.encode(), raw)
        s2 = self.start(data_dir=data)
        self.assertEqual(s2.token, token)
        self.assertFalse(any("admin token written to" in l for l in s2.stdout_lines))
        got = cg.CatalogServiceStub(s2.channel()).GetCatalog(
            c.GetCatalogRequest(name="persist"), metadata=s2.md())
        self.assertEqual(got.id, made.id)
        self.assertEqual(s2.stop(signal.SIGINT), 0)

    def test_env_admin_token(self):
        c, cg = stubs()
        s = self.start(env={"DELTAD_ADMIN_TOKEN": "env-token-0123456789abcdef"})
        self.assertFalse(os.path.exists(os.path.join(s.data_dir, "admin.token")))
        cat = cg.CatalogServiceStub(s.channel())
        cat.ListCatalogs(c.ListCatalogsRequest(),
                         metadata=(("authorization", "Bearer env-token-0123456789abcdef"),))
        self.assertEqual(s.stop(), 0)

    def test_health_and_reflection_need_no_token(self):
        s = self.start()
        health_pb2 = dd_harness.load_pb2("grpc/health/v1/health_pb2.py")
        ch = s.channel()
        check = ch.unary_unary("/grpc.health.v1.Health/Check",
                               request_serializer=lambda m: m.SerializeToString(),
                               response_deserializer=health_pb2.HealthCheckResponse.FromString)
        r = check(health_pb2.HealthCheckRequest(service=""), timeout=10)
        self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING)
        r = check(health_pb2.HealthCheckRequest(service="deltad.catalog.v1.CatalogService"))
        self.assertEqual(r.status, health_pb2.HealthCheckResponse.SERVING)
        with self.assertRaises(grpc.RpcError) as cm:
            check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)
        rp = dd_harness.load_pb2("grpc/reflection/v1alpha/reflection_pb2.py")
        info = ch.stream_stream(
            "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
            request_serializer=lambda m: m.SerializeToString(),
            response_deserializer=rp.ServerReflectionResponse.FromString)
        reqs = [rp.ServerReflectionRequest(list_services=""),
                rp.ServerReflectionRequest(
                    file_containing_symbol="deltad.catalog.v1.CatalogService")]
        resps = list(info(iter(reqs), timeout=10))
        self.assertEqual(len(resps), 2)
        names = [x.name for x in resps[0].list_services_response.service]
        self.assertIn("deltad.catalog.v1.CatalogService", names)
        self.assertIn("deltad.credentials.v1.CredentialService", names)
        from google.protobuf import descriptor_pb2
        files = [descriptor_pb2.FileDescriptorProto.FromString(b)
                 for b in resps[1].file_descriptor_response.file_descriptor_proto]
        self.assertIn("deltad/catalog/v1/catalog.proto", [f.name for f in files])
        self.assertIn("google/api/http.proto", [f.name for f in files])  # dependencies too
        self.assertEqual(s.stop(), 0)

    def test_malformed_and_oversized_messages(self):
        c, cg = stubs()
        s = self.start(extra_args=["--max-message-bytes", "65536"])
        ch = s.channel()
        raw = ch.unary_unary("/deltad.catalog.v1.CatalogService/CreateCatalog",
                             request_serializer=lambda b: b,
                             response_deserializer=lambda b: b)
        with self.assertRaises(grpc.RpcError) as cm:
            raw(b"\x0a\xff\xff\xff\xff\x0f", metadata=s.md(), timeout=10)  # bad length
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(grpc.RpcError) as cm:
            raw(b"\x0a\x03abc" + b"\x12" + b"\x80\x80\x04" + b"x" * 70000, metadata=s.md(),
                timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        unknown = ch.unary_unary("/deltad.catalog.v1.CatalogService/NoSuchMethod",
                                 request_serializer=lambda b: b,
                                 response_deserializer=lambda b: b)
        with self.assertRaises(grpc.RpcError) as cm:
            unknown(b"", metadata=s.md(), timeout=10)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNIMPLEMENTED)
        lst = cg.CatalogServiceStub(ch).ListCatalogs(c.ListCatalogsRequest(), metadata=s.md())
        self.assertEqual(len(lst.catalogs), 0)  # nothing was written
        self.assertEqual(s.stop(), 0)

    def test_demo_objects_and_table(self):
        base = tempfile.mkdtemp(prefix="deltad-demo-")
        self.addCleanup(shutil.rmtree, base, True)
        s = self.start(data_dir=os.path.join(base, "data"), extra_args=["--demo"])
        code, body = s.curl("GET", "/catalogs/demo")
        self.assertEqual(code, 200, body)
        code, body = s.curl("GET", "/schemas/demo.default")
        self.assertEqual(code, 200, body)
        code, body = s.curl("GET", "/locations/demo-tables")
        self.assertEqual((code, body["type"]), (200, "LOCAL"))
        # the demo table lies beside the data directory, under the location demo-tables
        self.assertEqual(body["url"], "file://" + os.path.realpath(os.path.join(base, "lake")))
        table = os.path.join(base, "lake", "trips")
        out = subprocess.run([os.environ["DELTACTL_BIN"], "table", "detail", table, "--local",
                              "--output", "json"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        import json
        detail = json.loads(out.stdout)
        self.assertEqual(detail["version"], 1)
        self.assertEqual(detail["numFiles"], 3)
        self.assertEqual(s.stop(), 0)
        s2 = self.start(data_dir=s.data_dir, extra_args=["--demo"])  # second start keeps all
        out = subprocess.run([os.environ["DELTACTL_BIN"], "table", "history", table, "--local"],
                             capture_output=True, text=True)
        self.assertEqual(out.returncode, 0, out.stderr)
        self.assertEqual(len([l for l in out.stdout.splitlines() if l[:1].isdigit()]), 2)
        self.assertEqual(s2.stop(), 0)

    def test_config_errors_and_help(self):
        binary = os.environ["DELTAD_BIN"]
        out = subprocess.run([binary, "--help"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 0)
        for flag in ("--data-dir", "--grpc-listen", "--http-listen", "--threads", "--config"):
            self.assertIn(flag, out.stdout)
        out = subprocess.run([binary, "--threads", "lots"], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("threads", out.stderr)
        cfg = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
        cfg.write("# comment\nbogus-key = 1\n")
        cfg.close()
        out = subprocess.run([binary, "--config", cfg.name], capture_output=True, text=True)
        self.assertEqual(out.returncode, 2)
        self.assertIn("bogus-key", out.stderr)
        os.unlink(cfg.name)

    def test_config_file_is_read(self):
        data = tempfile.mkdtemp(prefix="deltad-cfg-")
        cfg = os.path.join(data, "deltad.conf")
        with open(cfg, "w") as f:
            f.write("threads = 1\nbase-path = /custom\n")
        s = self.start(data_dir=data, extra_args=["--config", cfg])
        self.assertTrue(s.rest.endswith("/custom"), s.rest)
        code, body = s.curl("GET", "/catalogs")
        self.assertEqual(code, 200, body)
        self.assertEqual(s.stop(), 0)


if __name__ == "__main__":
    dd_harness.main()
