#!/usr/bin/python3
"""test_catalog_grpc.py: every CatalogService and CredentialService RPC over gRPC with
Debian's python3-grpcio against a real deltad, including the error paths."""
import grpc

import dd_harness
from dd_harness import ServerTest


def pb():
    dd_harness.stubs_dir()
    from deltad.catalog.v1 import catalog_pb2 as c, catalog_pb2_grpc as cg
    from deltad.credentials.v1 import credentials_pb2 as k, credentials_pb2_grpc as kg
    return c, cg, k, kg


class CatalogGrpc(ServerTest):
    def setUp(self):
        self.c, cg, self.k, kg = pb()
        ch = self.server.channel()
        self.cat = cg.CatalogServiceStub(ch)
        self.cred = kg.CredentialServiceStub(ch)
        self.md = self.server.md()

    def code_of(self, fn, req, md=None):
        with self.assertRaises(grpc.RpcError) as cm:
            fn(req, metadata=self.md if md is None else md, timeout=10)
        return cm.exception.code(), cm.exception.details()

    def test_catalog_lifecycle(self):
        c = self.c
        info = self.cat.CreateCatalog(c.CreateCatalogRequest(
            name="Sales", comment="revenue", properties={"team": "fin"}), metadata=self.md)
        self.assertEqual(info.name, "Sales")
        self.assertEqual(len(info.id), 36)
        self.assertEqual(info.properties["team"], "fin")
        self.assertEqual(info.created_by, "admin")
        self.assertGreater(info.create_at, 1700000000000)
        got = self.cat.GetCatalog(c.GetCatalogRequest(name="sales"), metadata=self.md)
        self.assertEqual(got.id, info.id)
        # case-insensitive uniqueness
        code, msg = self.code_of(self.cat.CreateCatalog, c.CreateCatalogRequest(name="SALES"))
        self.assertEqual(code, grpc.StatusCode.ALREADY_EXISTS)
        self.assertIn("sales", msg.lower())
        # update: comment only, then rename keeps the id
        up = self.cat.UpdateCatalog(c.UpdateCatalogRequest(name="Sales", comment="new"),
                                    metadata=self.md)
        self.assertEqual(up.comment, "new")
        self.assertEqual(up.properties["team"], "fin")
        up = self.cat.UpdateCatalog(c.UpdateCatalogRequest(name="Sales", new_name="Revenue"),
                                    metadata=self.md)
        self.assertEqual((up.name, up.id, up.comment), ("Revenue", info.id, "new"))
        code, _ = self.code_of(self.cat.GetCatalog, c.GetCatalogRequest(name="Sales"))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        self.cat.DeleteCatalog(c.DeleteCatalogRequest(name="revenue"), metadata=self.md)
        code, _ = self.code_of(self.cat.GetCatalog, c.GetCatalogRequest(name="Revenue"))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_schema_lifecycle_and_nonempty_delete(self):
        c = self.c
        self.cat.CreateCatalog(c.CreateCatalogRequest(name="lake"), metadata=self.md)
        s = self.cat.CreateSchema(c.CreateSchemaRequest(name="bronze", catalog_name="LAKE",
                                                        comment="raw"), metadata=self.md)
        self.assertEqual(s.full_name, "lake.bronze")
        self.assertEqual(len(s.schema_id), 36)
        got = self.cat.GetSchema(c.GetSchemaRequest(full_name="lake.BRONZE"), metadata=self.md)
        self.assertEqual(got.schema_id, s.schema_id)
        lst = self.cat.ListSchemas(c.ListSchemasRequest(catalog_name="lake"), metadata=self.md)
        self.assertEqual([x.name for x in lst.schemas], ["bronze"])
        up = self.cat.UpdateSchema(c.UpdateSchemaRequest(full_name="lake.bronze",
                                                         new_name="raw"), metadata=self.md)
        self.assertEqual((up.full_name, up.schema_id), ("lake.raw", s.schema_id))
        code, msg = self.code_of(self.cat.DeleteCatalog, c.DeleteCatalogRequest(name="lake"))
        self.assertEqual(code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertTrue(msg)
        self.cat.GetSchema(c.GetSchemaRequest(full_name="lake.raw"), metadata=self.md)
        self.cat.DeleteCatalog(c.DeleteCatalogRequest(name="lake", force=True), metadata=self.md)
        code, _ = self.code_of(self.cat.GetSchema, c.GetSchemaRequest(full_name="lake.raw"))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        code, _ = self.code_of(self.cat.CreateSchema,
                               c.CreateSchemaRequest(name="x", catalog_name="nope"))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        code, _ = self.code_of(self.cat.ListSchemas, c.ListSchemasRequest(catalog_name="nope"))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_pagination(self):
        c = self.c
        names = ["page%02d" % i for i in range(25)]
        for n in names:
            self.cat.CreateCatalog(c.CreateCatalogRequest(name=n), metadata=self.md)
        seen, token, pages = [], "", 0
        while True:
            r = self.cat.ListCatalogs(c.ListCatalogsRequest(max_results=10, page_token=token),
                                      metadata=self.md)
            self.assertLessEqual(len(r.catalogs), 10)
            seen += [x.name for x in r.catalogs]
            pages += 1
            if pages == 1:  # insert while paging: items that stayed are neither lost nor repeated
                self.cat.CreateCatalog(c.CreateCatalogRequest(name="page00a"), metadata=self.md)
            token = r.next_page_token
            if not token:
                break
        ours = [n for n in seen if n.startswith("page")]
        self.assertEqual(len(ours), len(set(ours)))
        for n in names:
            self.assertIn(n, ours)
        code, _ = self.code_of(self.cat.ListCatalogs,
                               c.ListCatalogsRequest(page_token="!!garbage!!"))
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)
        code, _ = self.code_of(self.cat.ListCatalogs, c.ListCatalogsRequest(max_results=-1))
        self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT)

    def test_invalid_names(self):
        c = self.c
        for bad in ["", "a/b", "x" * 256, "tab\there", "dot.ted"]:
            code, msg = self.code_of(self.cat.CreateCatalog, c.CreateCatalogRequest(name=bad))
            self.assertEqual(code, grpc.StatusCode.INVALID_ARGUMENT, bad)
            self.assertTrue(msg)
        lst = self.cat.ListCatalogs(c.ListCatalogsRequest(max_results=1000), metadata=self.md)
        self.assertFalse([x for x in lst.catalogs if "/" in x.name or "." in x.name])

    def test_credentials_and_locations(self):
        k = self.k
        cred = self.cred.CreateCredential(k.CreateCredentialRequest(
            name="azkey", azure=k.AzureCredential(account_key=k.AzureKeyCredential(
                account_name="acct", account_key="SUPERSECRET=="))), metadata=self.md)
        self.assertEqual(cred.azure.account_key.account_name, "acct")
        self.assertEqual(cred.azure.account_key.account_key, "")
        got = self.cred.GetCredential(k.GetCredentialRequest(name="AZKEY"), metadata=self.md)
        self.assertEqual(got.id, cred.id)
        self.assertEqual(got.azure.account_key.account_key, "")
        aws = self.cred.CreateCredential(k.CreateCredentialRequest(
            name="s3", aws=k.AwsAccessKeyCredential(access_key_id="AKIDEXAMPLE",
                                                    secret_access_key="wJalrXUtnFEMI")),
            metadata=self.md)
        self.assertEqual(aws.aws.access_key_id, "AKIDEXAMPLE")
        self.assertEqual(aws.aws.secret_access_key, "")
        lst = self.cred.ListCredentials(k.ListCredentialsRequest(), metadata=self.md)
        self.assertEqual(sorted(x.name for x in lst.credentials), ["azkey", "s3"])
        for x in lst.credentials:
            self.assertNotIn("SUPERSECRET", str(x))
        # location needs an existing credential
        code, _ = self.code_of(self.cred.CreateStorageLocation, k.CreateStorageLocationRequest(
            name="bad", url="s3://b/p", type=k.S3, credential="missing"))
        self.assertIn(code, (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.FAILED_PRECONDITION,
                             grpc.StatusCode.INVALID_ARGUMENT))
        loc = self.cred.CreateStorageLocation(k.CreateStorageLocationRequest(
            name="raw", url="s3://bucket/raw", type=k.S3, credential="S3"), metadata=self.md)
        self.assertEqual(loc.type, k.S3)
        got = self.cred.GetStorageLocation(k.GetStorageLocationRequest(name="raw"),
                                           metadata=self.md)
        self.assertEqual(got.id, loc.id)
        lst = self.cred.ListStorageLocations(k.ListStorageLocationsRequest(), metadata=self.md)
        self.assertIn("raw", [x.name for x in lst.storage_locations])
        # a credential in use cannot be deleted
        code, msg = self.code_of(self.cred.DeleteCredential, k.DeleteCredentialRequest(name="s3"))
        self.assertEqual(code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn("raw", msg)
        self.cred.DeleteStorageLocation(k.DeleteStorageLocationRequest(name="raw"),
                                        metadata=self.md)
        self.cred.DeleteCredential(k.DeleteCredentialRequest(name="s3"), metadata=self.md)
        code, _ = self.code_of(self.cred.GetCredential, k.GetCredentialRequest(name="s3"))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)

    def test_auth(self):
        c = self.c
        code, msg = self.code_of(self.cat.ListCatalogs, c.ListCatalogsRequest(), md=())
        self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)
        code, _ = self.code_of(self.cat.ListCatalogs, c.ListCatalogsRequest(),
                               md=(("authorization", "Bearer wrong"),))
        self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)
        code, _ = self.code_of(self.cat.ListCatalogs, c.ListCatalogsRequest(),
                               md=(("authorization", self.server.token),))
        self.assertEqual(code, grpc.StatusCode.UNAUTHENTICATED)


if __name__ == "__main__":
    dd_harness.main()
