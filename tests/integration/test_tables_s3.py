"""test_tables_s3.py: catalog tables in S3 (moto's S3 server from build-test/venv-stores, the
stand-in that honours conditional puts): an EXTERNAL table registered at an s3:// location
answers GetTable with its Delta schema and version read through the storage location's
credential; a MANAGED table is created empty under an s3:// storage root, dropped, and its
objects deleted by the purge once the retention passed; temporary table credentials are
refused when the location's credential names no role to assume (test_tables_sts.py); an s3:// location outside every storage location is
PERMISSION_DENIED."""
import os
import shutil
import tempfile
import time

import requests

import dd_harness as h
from dd_stores import admin, start_moto

RETENTION_S = 2


class TablesS3(h.ServerTest):
    server_args = ["--managed-table-retention-seconds", str(RETENTION_S)]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-tables-s3-")
        people = os.path.join(cls.tmp, "people")
        h.write_people_table(people)
        cls.moto, cls.s3 = start_moto(["lake", "lake/tables/people=" + people])
        try:
            super().setUpClass()
            admin(cls.server, "POST", "/credentials", {"name": "moto", "aws": {
                "accessKeyId": "test", "secretAccessKey": "test", "region": "us-east-1"}})
            admin(cls.server, "POST", "/locations", {"name": "lake", "url": "s3://lake", "credential": "moto",
                                                     "properties": {"endpoint": cls.s3, "path_style": "true"}})
        except BaseException:
            cls.moto.kill()
            raise

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            cls.moto.kill()
            cls.moto.wait()
            for s in (cls.moto.stdout, cls.moto.stderr):
                if s:
                    s.close()
            shutil.rmtree(cls.tmp, True)

    def curl(self, *a, **kw):
        return self.server.curl(*a, **kw)

    def keys(self, prefix):
        r = requests.get("%s/lake?list-type=2&prefix=%s" % (self.s3, prefix))
        self.assertEqual(r.status_code, 200, r.text)
        return [k.split("</Key>")[0] for k in r.text.split("<Key>")[1:]]

    def test_external_and_managed_in_s3(self):
        self.assertEqual(self.curl("POST", "/catalogs", {"name": "s3c", "storageRoot": "s3://lake/managed"})[0], 200)
        self.assertEqual(self.curl("POST", "/schemas", {"name": "s", "catalogName": "s3c"})[0], 200)
        code, body = self.curl("POST", "/tables", {"name": "people", "catalogName": "s3c", "schemaName": "s",
                                                   "storageLocation": "s3://lake/tables/people"})
        self.assertEqual(code, 200, body)
        self.assertEqual([c["name"] for c in body["columns"]], ["id", "name"])
        self.assertEqual(body["version"], "0")
        code, body = self.curl("POST", "/tables", {"name": "out", "catalogName": "s3c", "schemaName": "s",
                                                   "storageLocation": "s3://elsewhere/t"})
        self.assertEqual((code, body["code"]), (403, 7), body)
        code, body = self.curl("POST", "/temporary-table-credentials",
                               {"tableId": self.curl("GET", "/tables/s3c.s.people")[1]["tableId"],
                                "operation": "READ"})
        self.assertEqual((code, body["code"]), (400, 9), body)  # FAILED_PRECONDITION
        self.assertIn("has no role_arn", body["message"])
        # MANAGED under the catalog's s3:// root
        code, m = self.curl("POST", "/tables", {"name": "m", "catalogName": "s3c", "schemaName": "s",
                                                "tableType": "MANAGED",
                                                "columns": [{"name": "k", "typeText": "int", "nullable": True}]})
        self.assertEqual(code, 200, m)
        prefix = "managed/tables/%s/" % m["tableId"]
        self.assertEqual(m["storageLocation"], "s3://lake/" + prefix.rstrip("/"))
        self.assertIn(prefix + "_delta_log/00000000000000000000.json", self.keys(prefix))
        self.assertEqual(m["version"], "0")
        self.assertEqual(self.curl("DELETE", "/tables/s3c.s.m")[0], 200)
        self.assertTrue(self.keys(prefix))  # kept for the undrop window
        time.sleep(RETENTION_S + 1)
        code, body = self.curl("GET", "/dropped-tables?catalogName=s3c&schemaName=s")
        self.assertEqual((code, body.get("tables", [])), (200, []), body)
        self.assertEqual(self.keys(prefix), [])
        self.assertEqual(self.keys("tables/people/_delta_log/")[:1],
                         ["tables/people/_delta_log/00000000000000000000.json"])  # EXTERNAL untouched


if __name__ == "__main__":
    h.main()
