#!/usr/bin/python3
"""test_catalog_grpc.py: every CatalogService and CredentialService RPC over gRPC with
Debian's python3-grpcio against a real deltad, including the error paths."""
import os
import urllib.request

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

    def memo_hits(self, method):
        req = urllib.request.Request(self.server.http_base + "/metrics",
                                     headers={"Authorization": "Bearer " + self.server.token})
        with urllib.request.urlopen(req, timeout=10) as r:
            text = r.read().decode()
        for line in text.splitlines():
            if line.startswith("deltad_reply_memo_hits_total{") and 'method="%s"' % method in line \
                    and "CatalogService" in line:
                return int(float(line.rsplit(" ", 1)[1]))
        return 0

    def test_reads_memo_follow_changes(self):
        """GetCatalog, ListCatalogs, GetSchema and ListSchemas over gRPC are sent again from
        the packed reply kept for the same catalog state, caller and request (LMDB; nothing
        is kept on PostgreSQL): repeated answers are the same bytes and count as memo hits;
        an update, a new catalog, a new schema and a delete show in the very next answer."""
        c = self.c
        pg = os.environ.get("DD_CATALOG_BACKEND") == "postgresql"
        get = lambda name: self.cat.GetCatalog(c.GetCatalogRequest(name=name), metadata=self.md)
        self.cat.CreateCatalog(c.CreateCatalogRequest(name="memo_c", comment="one"), metadata=self.md)
        before = self.memo_hits("GetCatalog")
        first = get("memo_c").SerializeToString()
        for _ in range(3):
            self.assertEqual(get("memo_c").SerializeToString(), first)
        hits = self.memo_hits("GetCatalog") - before
        self.assertEqual(hits, 0) if pg else self.assertGreaterEqual(hits, 3)
        self.cat.UpdateCatalog(c.UpdateCatalogRequest(name="memo_c", comment="two"), metadata=self.md)
        self.assertEqual(get("memo_c").comment, "two")
        self.assertEqual(get("memo_c").comment, "two")
        names = lambda: sorted(x.name for x in self.cat.ListCatalogs(
            c.ListCatalogsRequest(), metadata=self.md).catalogs)
        self.assertIn("memo_c", names())
        self.assertNotIn("memo_d", names())
        self.cat.CreateCatalog(c.CreateCatalogRequest(name="memo_d"), metadata=self.md)
        self.assertIn("memo_d", names())
        sget = lambda: self.cat.GetSchema(c.GetSchemaRequest(full_name="memo_c.s1"), metadata=self.md)
        slist = lambda: [x.name for x in self.cat.ListSchemas(
            c.ListSchemasRequest(catalog_name="memo_c"), metadata=self.md).schemas]
        self.assertEqual(slist(), [])
        self.cat.CreateSchema(c.CreateSchemaRequest(name="s1", catalog_name="memo_c", comment="x"),
                              metadata=self.md)
        self.assertEqual(slist(), ["s1"])
        self.assertEqual(sget().comment, "x")
        self.assertEqual(sget().comment, "x")
        self.cat.UpdateSchema(c.UpdateSchemaRequest(full_name="memo_c.s1", comment="y"), metadata=self.md)
        self.assertEqual(sget().comment, "y")
        self.cat.DeleteSchema(c.DeleteSchemaRequest(full_name="memo_c.s1"), metadata=self.md)
        code, _ = self.code_of(self.cat.GetSchema, c.GetSchemaRequest(full_name="memo_c.s1"))
        self.assertEqual(code, grpc.StatusCode.NOT_FOUND)
        for name in ("memo_c", "memo_d"):
            self.cat.DeleteCatalog(c.DeleteCatalogRequest(name=name), metadata=self.md)
        code, _ = self.code_of(self.cat.GetCatalog, c.GetCatalogRequest(name="memo_c"))
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
