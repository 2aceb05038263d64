#!/usr/bin/python3
"""test_lance_client.py: the real LanceDB client (@lancedb/lancedb 0.31.0 from npm,
tests/js/lance) against a real deltad: connectNamespace("rest", {uri, headers}) with a
bearer token and with x-api-key, then createNamespace / listNamespaces / describeNamespace /
dropNamespace / tableNames, and a real Lance table written by LanceDB, registered in deltad
and opened through the namespace. The node script (tests/js/lance/lance_client.mjs) reports
every step; this file checks them. Skipped, saying why, when node or node_modules is
missing (install with tests/js/lance/install.sh)."""
import json
import os
import shutil
import subprocess
import tempfile
import unittest

import dd_harness
from dd_harness import ServerTest

JS_DIR = os.path.join(dd_harness.ROOT, "tests", "js", "lance")
SCRIPT = os.path.join(JS_DIR, "lance_client.mjs")
MODULES = os.path.join(JS_DIR, "node_modules", "@lancedb", "lancedb")


@unittest.skipUnless(shutil.which("node"), "node is not installed")
@unittest.skipUnless(os.path.isdir(MODULES),
                     "tests/js/lance/node_modules is missing: run tests/js/lance/install.sh")
class LanceDbClient(ServerTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.workdir = tempfile.mkdtemp(prefix="lance-js-")
        s = cls.server
        proc = subprocess.Popen(["node", SCRIPT, s.http_base, s.token, cls.workdir], cwd=JS_DIR,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        try:
            ready = proc.stdout.readline()
            if json.loads(ready or "{}").get("ready"):
                # the script wrote a Lance table with LanceDB; register it the REST way
                cls.register = s.curl("POST", s.http_base + "/v1/table/js_cat$js_sch$pts/register",
                                      {"location": os.path.join(cls.workdir, "pts.lance"),
                                       "properties": {"by": "python"}})
                cls.catalog_view = (s.curl("GET", "/catalogs/js_cat"),
                                    s.curl("GET", "/schemas/js_cat.js_sch"))
            out, err = proc.communicate("go\n", timeout=120)
        except Exception:
            proc.kill()
            raise
        cls.ready, cls.rc, cls.stderr = ready, proc.returncode, err
        lines = [line for line in out.splitlines() if line.startswith("{")]
        cls.steps = json.loads(lines[-1]) if lines else {}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.workdir, ignore_errors=True)
        super().tearDownClass()

    def ok(self, name):
        st = self.steps.get(name)
        self.assertIsNotNone(st, "step %s did not run: %s" % (name, self.stderr))
        self.assertTrue(st["ok"], "%s: %s" % (name, st))
        return st["value"]

    def fails(self, name, text):
        st = self.steps.get(name)
        self.assertIsNotNone(st, "step %s did not run: %s" % (name, self.stderr))
        self.assertFalse(st["ok"], "%s unexpectedly succeeded: %s" % (name, st))
        self.assertIn(text, st["error"])
        return st["error"]

    def test_script_ran(self):
        self.assertEqual(self.rc, 0, self.stderr)
        self.assertIn('"ready"', self.ready)
        self.assertEqual(self.register[0], 200, self.register)

    def test_create_and_modes(self):
        self.assertEqual(self.ok("create_l1"), {"properties": {"owner": "ralph"}})
        # the client names the Lance error code it read
        self.fails("create_l1_again", "Namespace already exists")
        self.assertEqual(self.ok("create_l1_exist_ok"), {"properties": {"owner": "ralph"}})
        self.assertEqual(self.ok("create_l2"), {"properties": {"tier": "gold"}})
        self.assertEqual(self.ok("create_l3"), {"properties": {}})
        self.fails("create_orphan", "Namespace not found")

    def test_list_and_describe(self):
        self.assertIn("js_cat", self.ok("list_root")["namespaces"])
        self.assertEqual(self.ok("list_l1")["namespaces"], ["js_sch"])
        self.assertEqual(self.ok("list_l2")["namespaces"], ["deep.er"])  # x-api-key client
        self.fails("list_missing", "Namespace not found")
        self.assertEqual(self.ok("describe_l1"), {"properties": {"owner": "ralph"}})
        self.assertEqual(self.ok("describe_l2"), {"properties": {"tier": "gold"}})
        self.fails("describe_missing", "Namespace not found")
        # what the client created is a catalog and a schema of the catalog API
        (ccode, cat), (scode, sch) = self.catalog_view
        self.assertEqual((ccode, cat["properties"]), (200, {"owner": "ralph"}))
        self.assertEqual((scode, sch["properties"]), (200, {"tier": "gold"}))

    def test_paging(self):
        p1 = self.ok("page1")
        self.assertEqual(p1["namespaces"], ["p1", "p2"])
        self.assertEqual(p1["pageToken"], "p2")
        p2 = self.ok("page2")
        self.assertEqual(p2["namespaces"], ["p3"])
        self.assertNotIn("pageToken", p2)

    def test_tables(self):
        self.assertEqual(self.ok("table_names_empty"), [])
        self.assertEqual(self.ok("table_names"), ["pts"])
        self.assertEqual(self.ok("table_names_after"), [])  # startAfter is our page token
        self.assertEqual(self.ok("open_count"), 3)  # LanceDB opened the registered location
        self.fails("open_missing", "Table not found")
        self.ok("drop_table")
        self.assertEqual(self.ok("table_names_dropped"), [])

    def test_drops(self):
        self.fails("drop_nonempty", "Namespace not empty")
        self.fails("drop_missing", "Namespace not found")
        self.ok("drop_missing_skip")
        self.ok("drop_l3_cascade")
        self.assertEqual(self.ok("list_l2_after")["namespaces"], [])
        self.assertEqual(self.ok("drop_l1_cascade"), {"properties": {"owner": "ralph"}})
        self.assertNotIn("js_cat", self.ok("list_root_after")["namespaces"])
        self.assertEqual(self.server.curl("GET", "/catalogs/js_cat")[0], 404)

    def test_auth(self):
        self.fails("bad_token", "Unauthenticated")


if __name__ == "__main__":
    dd_harness.main()
