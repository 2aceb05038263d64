#!/usr/bin/python3
"""test_grpcurl.py: grpcurl (fullstorydev/grpcurl, the tool users reach for first; built
with `cmake --build B --target grpcurl` into B/tools) against the real deltad, through
server reflection only (no .proto files): it lists every service, describes every method
and its messages, and calls one method of every service with a JSON request; reflection
answers at v1 and v1alpha alike. A missing grpcurl fails the test (build the target)."""
import json
import os
import subprocess

import dd_harness
from dd_harness import ServerTest

GRPCURL = os.path.join(os.environ.get("DD_TOOLS", ""), "grpcurl")

SERVICES = [
    "deltad.admin.v1.AdminService", "deltad.catalog.v1.CatalogService", "deltad.connect.v1.DeltaConnectService",
    "deltad.credentials.v1.CredentialService", "deltad.lance.v1.NamespaceService",
    "deltad.sharing.v1.DeltaSharingExtensionService", "deltad.sharing.v1.DeltaSharingFileService",
    "deltad.sharing.v1.DeltaSharingService", "deltad.system.v1.SystemService",
    "deltad.tables.v1.TablesService",
    "grpc.health.v1.Health", "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection", "spark.connect.SparkConnectService",
]

# One call a service: (method, request JSON, what the answer must hold). A status other than
# Unimplemented proves the request was built from the reflected descriptors and served.
CALLS = [
    ("deltad.admin.v1.AdminService/ListAuditEvents", {}, "ok"),
    ("deltad.catalog.v1.CatalogService/ListCatalogs", {}, "ok"),
    ("deltad.connect.v1.DeltaConnectService/ExecuteRelation", {"isDeltaTable": {"path": "/nonexistent"}}, "status"),
    ("deltad.credentials.v1.CredentialService/ListCredentials", {}, "ok"),
    ("deltad.lance.v1.NamespaceService/ListNamespaces", {"id": []}, "ok"),
    ("deltad.sharing.v1.DeltaSharingExtensionService/ListShareInfos", {}, "ok"),
    ("deltad.sharing.v1.DeltaSharingFileService/OpenFile", {}, "status"),
    ("deltad.sharing.v1.DeltaSharingService/ListShares", {}, "ok"),
    ("deltad.system.v1.SystemService/GetServerInfo", {}, "ok"),
    ("deltad.tables.v1.TablesService/GetTable", {"fullName": "no.such.table"}, "status"),
    ("grpc.health.v1.Health/Check", {}, "ok"),
    ("grpc.reflection.v1.ServerReflection/ServerReflectionInfo", {"listServices": ""}, "ok"),
    ("grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", {"listServices": ""}, "ok"),
    ("spark.connect.SparkConnectService/Config",
     {"sessionId": "00112233-4455-6677-8899-aabbccddeeff",
      "operation": {"get": {"keys": ["spark.sql.ansi.enabled"]}}}, "status"),
]


class Grpcurl(ServerTest):
    def grpcurl(self, *args, token=True):
        if not os.access(GRPCURL, os.X_OK):
            self.fail("grpcurl not found at %s: run `cmake --build BUILD --target grpcurl`" % GRPCURL)
        pre = ["-plaintext"]
        if token:
            pre += ["-H", "authorization: Bearer " + self.server.token]
        p = subprocess.run([GRPCURL] + pre + list(args), capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def test_lists_and_describes_every_service(self):
        code, out, err = self.grpcurl(self.server.grpc_target, "list", token=False)
        self.assertEqual(code, 0, err)
        self.assertEqual(sorted(out.split()), sorted(SERVICES))
        for svc in SERVICES:
            code, out, err = self.grpcurl(self.server.grpc_target, "list", svc, token=False)
            self.assertEqual(code, 0, (svc, err))
            methods = out.split()
            self.assertTrue(methods, svc)
            for m in methods:
                code, desc, err = self.grpcurl(self.server.grpc_target, "describe", m, token=False)
                self.assertEqual(code, 0, (m, err))
                self.assertIn("rpc ", desc, m)

    def test_calls_every_service(self):
        seen = set()
        for method, body, want in CALLS:
            seen.add(method.split("/")[0])
            code, out, err = self.grpcurl("-d", json.dumps(body), self.server.grpc_target, method)
            self.assertNotIn("Unimplemented", err, method)
            self.assertNotIn("Failed to", err, (method, err))  # reflection or request-building failures
            if want == "ok":
                self.assertEqual(code, 0, (method, err))
                self.assertTrue(out.strip().startswith("{"), (method, out))
            else:
                self.assertTrue(code == 0 or "Code:" in err, (method, code, out, err))
        self.assertEqual(seen, set(SERVICES))
        code, out, _ = self.grpcurl("-d", "{}", self.server.grpc_target,
                                    "deltad.system.v1.SystemService/GetServerInfo")
        self.assertEqual(json.loads(out)["principal"], "admin")
        code, out, _ = self.grpcurl("-d", '{"listServices": ""}', self.server.grpc_target,
                                    "grpc.reflection.v1.ServerReflection/ServerReflectionInfo")
        names = [s["name"] for s in json.loads(out)["listServicesResponse"]["service"]]
        self.assertEqual(sorted(names), sorted(SERVICES))

    def test_health_needs_no_token(self):
        code, out, err = self.grpcurl(self.server.grpc_target, "grpc.health.v1.Health/Check", token=False)
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(out)["status"], "SERVING")


if __name__ == "__main__":
    dd_harness.main()
