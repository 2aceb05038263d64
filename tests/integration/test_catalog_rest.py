#!/usr/bin/python3
"""test_catalog_rest.py: the catalog REST surface (/catalogs, /schemas, /credentials,
/locations) with real curl against a real deltad: JSON field names as the OpenAPI spec
spells them, status codes, error bodies, and bad input that must write nothing."""
import dd_harness
from dd_harness import ServerTest


class CatalogRest(ServerTest):
    def curl(self, *a, **kw):
        return self.server.curl(*a, **kw)

    def test_catalog_crud_json_names(self):
        code, body = self.curl("POST", "/catalogs", {"name": "web", "comment": "c",
                                                     "properties": {"k": "v"}})
        self.assertEqual(code, 200, body)
        self.assertEqual(body["name"], "web")
        self.assertEqual(body["properties"], {"k": "v"})
        self.assertEqual(body["createdBy"], "admin")
        self.assertIsInstance(body["createAt"], str)  # int64 as a JSON string (proto3 JSON)
        self.assertTrue(body["createAt"].isdigit())
        cid = body["id"]
        code, body = self.curl("GET", "/catalogs/WEB")
        self.assertEqual((code, body["id"]), (200, cid))
        code, body = self.curl("PATCH", "/catalogs/web", {"newName": "site", "comment": "d"})
        self.assertEqual((code, body["name"], body["id"], body["comment"]), (200, "site", cid, "d"))
        code, body = self.curl("GET", "/catalogs?maxResults=1000")
        self.assertEqual(code, 200)
        self.assertIn("site", [c["name"] for c in body["catalogs"]])
        code, body = self.curl("DELETE", "/catalogs/site")
        self.assertEqual(code, 200)
        code, body = self.curl("GET", "/catalogs/site")
        self.assertEqual(code, 404)
        self.assertEqual(body["code"], 5)
        self.assertIn("site", body["message"])

    def test_schemas(self):
        self.assertEqual(self.curl("POST", "/catalogs", {"name": "main"})[0], 200)
        code, body = self.curl("POST", "/schemas", {"name": "gold", "catalogName": "main"})
        self.assertEqual(code, 200, body)
        self.assertEqual(body["fullName"], "main.gold")
        sid = body["schemaId"]
        code, body = self.curl("GET", "/schemas/main.gold")
        self.assertEqual((code, body["schemaId"]), (200, sid))
        code, body = self.curl("GET", "/schemas?catalogName=main")
        self.assertEqual([s["name"] for s in body["schemas"]], ["gold"])
        code, body = self.curl("PATCH", "/schemas/main.gold", {"comment": "curated"})
        self.assertEqual((code, body["comment"]), (200, "curated"))
        code, body = self.curl("DELETE", "/catalogs/main")
        self.assertEqual(code, 400)  # FAILED_PRECONDITION: not empty
        self.assertEqual(body["code"], 9)
        code, _ = self.curl("DELETE", "/schemas/main.gold")
        self.assertEqual(code, 200)
        code, _ = self.curl("DELETE", "/catalogs/main")
        self.assertEqual(code, 200)

    def test_credentials_locations(self):
        code, body = self.curl("POST", "/credentials", {
            "name": "sas", "azure": {"sas": {"accountName": "a1", "sasToken": "sv=SECRET"}}})
        self.assertEqual(code, 200, body)
        self.assertEqual(body["azure"]["sas"]["accountName"], "a1")
        self.assertNotIn("sasToken", body["azure"]["sas"])
        code, body = self.curl("GET", "/credentials/sas")
        self.assertEqual(code, 200)
        self.assertNotIn("SECRET", str(body))
        code, body = self.curl("POST", "/locations", {
            "name": "lake", "url": "abfss://c@a1.dfs.core.windows.net/x", "type": "AZURE",
            "credential": "sas"})
        self.assertEqual(code, 200, body)
        self.assertEqual(body["type"], "AZURE")
        code, body = self.curl("GET", "/locations")
        self.assertIn("lake", [x["name"] for x in body["storageLocations"]])
        code, body = self.curl("DELETE", "/credentials/sas")
        self.assertEqual(code, 400)
        self.assertEqual(self.curl("DELETE", "/locations/lake")[0], 200)
        self.assertEqual(self.curl("DELETE", "/credentials/sas")[0], 200)

    def test_auth_rest(self):
        code, body = self.curl("GET", "/catalogs", token=None)
        self.assertEqual(code, 401)
        self.assertEqual(body["code"], 16)
        code, _ = self.curl("GET", "/catalogs", token="nope")
        self.assertEqual(code, 401)

    def count_catalogs(self):
        code, body = self.curl("GET", "/catalogs?maxResults=1000")
        self.assertEqual(code, 200)
        return len(body.get("catalogs", []))

    def test_bad_input_writes_nothing(self):
        before = self.count_catalogs()
        cases = [
            ('{"name": "x",', "invalid JSON"),
            ('{"name": "x", "bogus": 1}', "unknown field"),
            ('{"name": 42}', "wrong type"),
            ('{"name": "a/b"}', "invalid name"),
            ('{"name": "ok", "properties": "notamap"}', "wrong map type"),
            ('[1,2]', "not an object"),
        ]
        for body, why in cases:
            code, resp = self.curl("POST", "/catalogs", body)
            self.assertEqual(code, 400, why)
            self.assertEqual(resp["code"], 3, why)
            self.assertTrue(resp["message"], why)
        code, resp = self.curl("GET", "/catalogs?maxResults=abc")
        self.assertEqual(code, 400)
        self.assertEqual(self.count_catalogs(), before)
        code, _ = self.curl("GET", "/nothing/here")
        self.assertEqual(code, 404)
        code, _ = self.curl("PUT", "/catalogs")
        self.assertIn(code, (404, 405))
        # still serving
        self.assertEqual(self.curl("GET", "/catalogs")[0], 200)


if __name__ == "__main__":
    dd_harness.main()
