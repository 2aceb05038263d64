#!/usr/bin/python3
"""Interop test of deltad's gRPC runtime with a different gRPC implementation (Debian's
grpcio, Python): starts grpc_test_server (the C runtime serving the test method table of
tests/unit/grpc/grpc_test_methods.h) and calls it through stubs generated at test time.

usage: test_grpc_interop.py SERVER_BINARY PROTO_DIR STUB_DIR
Run with Debian's /usr/bin/python3 (grpcio 1.51, grpc_tools, protobuf 4.21).
"""
import os
import shutil
import subprocess
import sys
import unittest

SERVER, PROTO_DIR, STUB_DIR = sys.argv[1:4]
TOKEN = "test-token"


def generate_stubs():
    """Generates Python stubs into STUB_DIR. The grpc.* protos are copied to top-level
    names first: a generated package named `grpc` would hide grpcio itself."""
    shutil.rmtree(STUB_DIR, ignore_errors=True)
    flat = os.path.join(STUB_DIR, "flat")
    os.makedirs(flat)
    shutil.copy(os.path.join(PROTO_DIR, "grpc/health/v1/health.proto"), flat)
    shutil.copy(os.path.join(PROTO_DIR, "grpc/reflection/v1alpha/reflection.proto"), flat)
    from grpc_tools import protoc
    common = ["protoc", "-I", PROTO_DIR, "-I", "/usr/include", "--python_out=" + STUB_DIR,
              "--grpc_python_out=" + STUB_DIR]
    for args in (common + ["deltad/system/v1/system.proto", "deltad/catalog/v1/catalog.proto",
                           "google/api/annotations.proto", "google/api/http.proto"],
                 ["protoc", "-I", flat, "--python_out=" + STUB_DIR, "--grpc_python_out=" + STUB_DIR,
                  os.path.join(flat, "health.proto"), os.path.join(flat, "reflection.proto")]):
        if protoc.main(args) != 0:
            raise RuntimeError("protoc failed: %s" % " ".join(args))
    sys.path.insert(0, STUB_DIR)


generate_stubs()

import grpc  # noqa: E402
from google.protobuf import descriptor_pb2, descriptor_pool  # noqa: E402

import health_pb2  # noqa: E402
import health_pb2_grpc  # noqa: E402
import reflection_pb2  # noqa: E402
import reflection_pb2_grpc  # noqa: E402
from deltad.catalog.v1 import catalog_pb2  # noqa: E402
from deltad.system.v1 import system_pb2, system_pb2_grpc  # noqa: E402


class Server:
    """The C test server; stopped by closing its stdin (graceful shutdown)."""

    def __init__(self):
        self.proc = subprocess.Popen([SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     text=True)
        line = self.proc.stdout.readline().split()
        if len(line) != 2 or line[0] != "port":
            self.proc.kill()
            raise RuntimeError("grpc_test_server did not report its port: %r" % line)
        self.port = int(line[1])

    def stop(self):
        self.proc.stdin.close()
        return self.proc.wait(timeout=60)


class Interop(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.channel = grpc.insecure_channel("127.0.0.1:%d" % cls.server.port)
        grpc.channel_ready_future(cls.channel).result(timeout=30)

    @classmethod
    def tearDownClass(cls):
        cls.channel.close()
        # Exit status 0: graceful shutdown finished and (under ASan) nothing leaked.
        assert cls.server.stop() == 0, "grpc_test_server exited with an error"

    def unary(self, method, req, resp_cls, **kw):
        call = self.channel.unary_unary(method, request_serializer=req.SerializeToString,
                                        response_deserializer=resp_cls.FromString)
        return call(req, **kw)

    # ---- health ----

    def test_health_check(self):
        stub = health_pb2_grpc.HealthStub(self.channel)
        serving = health_pb2.HealthCheckResponse.SERVING
        for name in ("", "dd.test.v1.Test", "deltad.system.v1.SystemService", "grpc.health.v1.Health"):
            self.assertEqual(stub.Check(health_pb2.HealthCheckRequest(service=name)).status, serving)
        with self.assertRaises(grpc.RpcError) as e:
            stub.Check(health_pb2.HealthCheckRequest(service="no.such.Service"))
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertIn("no.such.Service", e.exception.details())

    def test_health_watch(self):
        stub = health_pb2_grpc.HealthStub(self.channel)
        stream = stub.Watch(health_pb2.HealthCheckRequest(service=""))
        first = next(stream)
        self.assertEqual(first.status, health_pb2.HealthCheckResponse.SERVING)
        stream.cancel()
        with self.assertRaises(grpc.RpcError) as e:
            next(stream)
        self.assertEqual(e.exception.code(), grpc.StatusCode.CANCELLED)

    # ---- reflection ----

    def reflect(self, *requests):
        stub = reflection_pb2_grpc.ServerReflectionStub(self.channel)
        return list(stub.ServerReflectionInfo(iter(requests), timeout=30))

    def test_reflection_list_services(self):
        (resp,) = self.reflect(reflection_pb2.ServerReflectionRequest(list_services="*"))
        names = {s.name for s in resp.list_services_response.service}
        for want in ("deltad.system.v1.SystemService", "grpc.health.v1.Health",
                     "grpc.reflection.v1alpha.ServerReflection"):
            self.assertIn(want, names)

    def test_reflection_file_containing_symbol(self):
        req = reflection_pb2.ServerReflectionRequest
        resps = self.reflect(req(file_containing_symbol="deltad.system.v1.SystemService"),
                             req(file_containing_symbol="no.such.Symbol"),
                             req(file_by_filename="grpc/health/v1/health.proto"))
        self.assertEqual(len(resps), 3)
        files = [descriptor_pb2.FileDescriptorProto.FromString(b)
                 for b in resps[0].file_descriptor_response.file_descriptor_proto]
        self.assertEqual(files[0].name, "deltad/system/v1/system.proto")
        self.assertIn("google/api/http.proto", {f.name for f in files})
        # The files with their imports build a working descriptor pool.
        pool = descriptor_pool.DescriptorPool()
        by_name = {f.name: f for f in files}
        added = set()

        def add(name):
            if name in added:
                return
            for dep in by_name[name].dependency:
                add(dep)
            pool.Add(by_name[name])
            added.add(name)

        add("deltad/system/v1/system.proto")
        svc = pool.FindServiceByName("deltad.system.v1.SystemService")
        self.assertEqual({m.name for m in svc.methods}, {"Ping", "GetServerInfo"})
        self.assertEqual(resps[1].error_response.error_code, grpc.StatusCode.NOT_FOUND.value[0])
        health = descriptor_pb2.FileDescriptorProto.FromString(
            resps[2].file_descriptor_response.file_descriptor_proto[0])
        self.assertEqual(health.package, "grpc.health.v1")

    # ---- the test methods ----

    def test_unary_with_token_and_metadata(self):
        stub = system_pb2_grpc.SystemServiceStub(self.channel)
        md = (("authorization", "Bearer " + TOKEN), ("x-echo", "from python"))
        info = stub.GetServerInfo(system_pb2.GetServerInfoRequest(), metadata=md)
        self.assertEqual(info.principal, "tester")
        self.assertEqual(info.version, "from python")

    def test_compressed_request(self):
        md = (("authorization", "Bearer " + TOKEN),)
        resp = self.unary("/dd.test.v1.Test/Echo", catalog_pb2.GetCatalogRequest(name="z" * 5000),
                          catalog_pb2.CatalogInfo, metadata=md, compression=grpc.Compression.Gzip)
        self.assertEqual(resp.name, "z" * 5000)

    def test_unauthenticated(self):
        stub = system_pb2_grpc.SystemServiceStub(self.channel)
        for md in ((), (("authorization", "Bearer nope"),)):
            with self.assertRaises(grpc.RpcError) as e:
                stub.Ping(system_pb2.PingRequest(), metadata=md)
            self.assertEqual(e.exception.code(), grpc.StatusCode.UNAUTHENTICATED)

    def test_error_status_and_message(self):
        md = (("authorization", "Bearer " + TOKEN),)
        with self.assertRaises(grpc.RpcError) as e:
            self.unary("/dd.test.v1.Test/Echo", catalog_pb2.GetCatalogRequest(name="notfound"),
                       catalog_pb2.CatalogInfo, metadata=md)
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)
        self.assertEqual(e.exception.details(), "catalog 'notfound' does not exist")

    def test_streaming(self):
        md = (("authorization", "Bearer " + TOKEN),)
        call = self.channel.unary_stream(
            "/dd.test.v1.Test/Count", request_serializer=catalog_pb2.ListCatalogsRequest.SerializeToString,
            response_deserializer=catalog_pb2.CatalogInfo.FromString)
        names = [c.name for c in call(catalog_pb2.ListCatalogsRequest(max_results=50), metadata=md)]
        self.assertEqual(names, ["item-%d" % i for i in range(50)])

    def test_deadline_exceeded(self):
        md = (("authorization", "Bearer " + TOKEN),)
        with self.assertRaises(grpc.RpcError) as e:
            self.unary("/dd.test.v1.Test/Sleep", catalog_pb2.GetCatalogRequest(name="700"),
                       catalog_pb2.CatalogInfo, metadata=md, timeout=0.2)
        self.assertEqual(e.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)

    def test_oversize_request(self):
        md = (("authorization", "Bearer " + TOKEN),)
        with self.assertRaises(grpc.RpcError) as e:
            self.unary("/dd.test.v1.Test/Echo", catalog_pb2.GetCatalogRequest(name="n" * (70 << 10)),
                       catalog_pb2.CatalogInfo, metadata=md)
        self.assertEqual(e.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)

    def test_unknown_method(self):
        with self.assertRaises(grpc.RpcError) as e:
            self.unary("/dd.test.v1.Test/Nope", catalog_pb2.GetCatalogRequest(), catalog_pb2.CatalogInfo)
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNIMPLEMENTED)


if __name__ == "__main__":
    unittest.main(argv=[sys.argv[0], "-v"])
