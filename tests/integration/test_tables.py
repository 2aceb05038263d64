#!/usr/bin/python3
"""test_tables.py: Delta tables in the catalog (deltad.tables.v1.TablesService) against a
real deltad: REST with real curl and gRPC with Debian's grpcio (register an EXTERNAL table,
get with its Delta schema, partitioning and version, paged list, rename keeping the id,
drop), bad input (unknown schema, location outside every storage location, a location with
no Delta table, duplicate names, also against Lance tables) writing nothing, MANAGED tables
created under a storage root with drop / undrop and the purge after the retention, the
deltactl verbs, catalog names resolving for `table detail/history/files`, and a share made
with `share add-table --table cat.sch.t` read by the official delta-sharing client
(delta_sharing.load_as_pandas)."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import grpc

import dd_harness as h

VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
PART = os.path.join(h.FIXTURES, "delta-rs-data", "delta-0.8.0-partitioned")
SHARING_READ = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "delta_sharing_read.py")
RETENTION_S = 3


def pb():
    h.stubs_dir()
    from deltad.tables.v1 import tables_pb2 as t, tables_pb2_grpc as tg
    return t, tg


class Tables(h.ServerTest):
    server_args = ["--managed-table-retention-seconds", str(RETENTION_S)]

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-tables-")
        cls.table = os.path.join(cls.tmp, "people")
        h.write_people_table(cls.table)
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            shutil.rmtree(cls.tmp, True)

    def curl(self, *a, **kw):
        return self.server.curl(*a, **kw)

    def ctl(self, *args, expect=0):
        p = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                            "--token", self.server.token] + list(args),
                           capture_output=True, text=True, cwd=self.tmp, timeout=60)
        self.assertEqual(p.returncode, expect, (args, p.stdout, p.stderr))
        return p.stdout if expect == 0 else p.stderr

    def schema(self, cat, sch, **catalog_fields):
        code, body = self.curl("POST", "/catalogs", dict(name=cat, **catalog_fields))
        self.assertEqual(code, 200, body)
        code, body = self.curl("POST", "/schemas", {"name": sch, "catalogName": cat})
        self.assertEqual(code, 200, body)

    def n_tables(self, cat, sch):
        code, body = self.curl("GET", "/tables?catalogName=%s&schemaName=%s&maxResults=1000" % (cat, sch))
        self.assertEqual(code, 200, body)
        return len(body.get("tables", []))

    # ---- REST --------------------------------------------------------------------------------

    def test_rest_external_lifecycle(self):
        self.schema("rc", "s")
        code, body = self.curl("POST", "/tables", {"name": "Part", "catalogName": "rc", "schemaName": "s",
                                                   "tableType": "EXTERNAL", "storageLocation": PART,
                                                   "comment": "fixture", "properties": {"k": "v"}})
        self.assertEqual(code, 200, body)
        tid = body["tableId"]
        self.assertEqual(body["fullName"], "rc.s.Part")
        self.assertEqual(body["storageLocation"], "file://" + PART)
        self.assertEqual(body["dataSourceFormat"], "DELTA")
        code, got = self.curl("GET", "/tables/RC.S.part")
        self.assertEqual(code, 200, got)
        self.assertEqual(got["tableId"], tid)
        self.assertEqual(got["partitionColumns"], ["year", "month", "day"])
        self.assertEqual([c["name"] for c in got["columns"]], ["value", "year", "month", "day"])
        self.assertEqual(got["columns"][0]["typeText"], "string")
        self.assertEqual(json.loads(got["columns"][0]["typeJson"])["name"], "value")
        self.assertEqual(got["columns"][1]["partitionIndex"], 0)
        self.assertEqual(got["version"], "0")
        self.assertEqual(got["properties"], {"k": "v"})
        self.assertEqual(got["owner"], "admin")
        # paging: three more, two a page
        for n in ("b", "c", "d"):
            self.assertEqual(self.curl("POST", "/tables", {"name": n, "catalogName": "rc", "schemaName": "s",
                                                           "storageLocation": PART})[0], 200)
        names, token = [], ""
        while True:
            code, page = self.curl("GET", "/tables?catalogName=rc&schemaName=s&maxResults=2&pageToken=" + token)
            self.assertEqual(code, 200, page)
            names += [t["name"] for t in page["tables"]]
            token = page.get("nextPageToken", "")
            if not token:
                break
        self.assertEqual(names, ["b", "c", "d", "Part"])
        code, body = self.curl("PATCH", "/tables/rc.s.part", {"newName": "p2", "comment": "renamed",
                                                              "owner": "ops"})
        self.assertEqual((code, body["tableId"], body["fullName"], body["owner"]), (200, tid, "rc.s.p2", "ops"))
        self.assertEqual(self.curl("GET", "/tables/rc.s.part")[0], 404)
        self.assertEqual(self.curl("DELETE", "/tables/rc.s.p2")[0], 200)
        self.assertEqual(self.curl("GET", "/tables/rc.s.p2")[0], 404)
        self.assertTrue(os.path.isdir(os.path.join(PART, "_delta_log")))  # EXTERNAL: data stays
        # the audit log has the changes
        code, ev = self.curl("GET", "/audit/events?kind=admin_change")
        self.assertEqual(code, 200, ev)
        actions = [e["action"] for e in ev.get("events", [])]
        for a in ("CreateTable", "UpdateTable", "DeleteTable"):
            self.assertIn(a, actions)

    def test_rest_bad_input_writes_nothing(self):
        self.schema("bad", "s")
        base = {"name": "t", "catalogName": "bad", "schemaName": "s", "storageLocation": self.table}
        self.assertEqual(self.curl("POST", "/tables", base)[0], 200)
        before = self.n_tables("bad", "s")
        code, body = self.curl("POST", "/tables", dict(base, name="T"))
        self.assertEqual((code, body["code"]), (409, 6), body)  # ALREADY_EXISTS
        code, body = self.curl("POST", "/tables", dict(base, schemaName="nope"))
        self.assertEqual((code, body["code"]), (404, 5), body)
        self.assertIn("schema 'bad.nope' not found", body["message"])
        code, body = self.curl("POST", "/tables", dict(base, name="out", storageLocation="/var/lib/x"))
        self.assertEqual((code, body["code"]), (403, 7), body)  # PERMISSION_DENIED, as shares answer
        code, body = self.curl("POST", "/tables", dict(base, name="nodelta", storageLocation=self.tmp))
        self.assertEqual((code, body["code"]), (400, 3), body)
        self.assertIn("no readable Delta table", body["message"])
        code, body = self.curl("POST", "/tables", dict(base, name="x", storageLocation="relative/x"))
        self.assertEqual(code, 400, body)
        code, body = self.curl("POST", "/tables", dict(base, name="x", tableType="VIEW"))
        self.assertEqual(code, 400, body)
        code, body = self.curl("POST", "/tables", dict(base, name="x", dataSourceFormat="PARQUET"))
        self.assertEqual(code, 400, body)
        self.assertEqual(self.curl("GET", "/tables/bad.s")[0], 400)
        self.assertEqual(self.n_tables("bad", "s"), before)
        # one namespace with Lance tables: a Lance table cannot take the name, nor the reverse
        lance = self.server.http_base + "/v1/table/bad%24s%24{}/register"
        code, body = self.curl("POST", lance.format("t"), {"location": "/tmp/x.lance"})
        self.assertEqual(code, 409, body)
        code, body = self.curl("POST", lance.format("vec"), {"location": "/tmp/x.lance"})
        self.assertEqual(code, 200, body)
        code, body = self.curl("POST", "/tables", dict(base, name="VEC"))
        self.assertEqual(code, 409, body)
        # a schema holding tables is not deleted without force; with force they go
        self.assertEqual(self.curl("DELETE", "/schemas/bad.s")[0], 400)
        self.assertEqual(self.curl("DELETE", "/schemas/bad.s?force=true")[0], 200)
        self.assertEqual(self.curl("GET", "/tables/bad.s.t")[0], 404)

    # ---- gRPC --------------------------------------------------------------------------------

    def test_grpc(self):
        t, tg = pb()
        stub = tg.TablesServiceStub(self.server.channel())
        md = self.server.md()
        self.schema("gc", "s")
        info = stub.CreateTable(t.CreateTableRequest(name="t", catalog_name="gc", schema_name="s",
                                                     storage_location=self.table), metadata=md, timeout=30)
        self.assertEqual(info.table_type, "EXTERNAL")
        self.assertEqual([c.name for c in info.columns], ["id", "name"])
        self.assertEqual(info.columns[0].type_text, "long")
        self.assertEqual(info.version, 0)
        got = stub.GetTable(t.GetTableRequest(full_name="gc.s.T"), metadata=md, timeout=30)
        self.assertEqual(got.table_id, info.table_id)

        def code(fn, req):
            with self.assertRaises(grpc.RpcError) as cm:
                fn(req, metadata=md, timeout=30)
            return cm.exception.code()
        self.assertEqual(code(stub.GetTable, t.GetTableRequest(full_name="gc.s.nope")), grpc.StatusCode.NOT_FOUND)
        self.assertEqual(code(stub.CreateTable, t.CreateTableRequest(
            name="t", catalog_name="gc", schema_name="s", storage_location=self.table)),
            grpc.StatusCode.ALREADY_EXISTS)
        self.assertEqual(code(stub.CreateTable, t.CreateTableRequest(
            name="u", catalog_name="gc", schema_name="s", storage_location="/etc")),
            grpc.StatusCode.PERMISSION_DENIED)
        self.assertEqual(code(stub.GenerateTemporaryTableCredential, t.GenerateTemporaryTableCredentialRequest(
            table_id=info.table_id, operation="READ")), grpc.StatusCode.FAILED_PRECONDITION)
        self.assertEqual(code(stub.GenerateTemporaryTableCredential, t.GenerateTemporaryTableCredentialRequest(
            table_id=info.table_id, operation="DELETE")), grpc.StatusCode.INVALID_ARGUMENT)
        with self.assertRaises(grpc.RpcError) as cm:  # admins only
            stub.GetTable(t.GetTableRequest(full_name="gc.s.t"), timeout=30)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.UNAUTHENTICATED)
        r = stub.ListTables(t.ListTablesRequest(catalog_name="gc", schema_name="s"), metadata=md, timeout=30)
        self.assertEqual([x.full_name for x in r.tables], ["gc.s.t"])
        stub.DeleteTable(t.DeleteTableRequest(full_name="gc.s.t"), metadata=md, timeout=30)

    # ---- MANAGED -----------------------------------------------------------------------------

    def test_managed_drop_undrop_purge(self):
        root = os.path.join(self.tmp, "managed-root")
        self.schema("mc", "s", storageRoot=root)
        out = json.loads(self.ctl("--output", "json", "table", "register", "mc.s.m", "--managed",
                                  "--column", "id:bigint:not null", "--column", "city:string",
                                  "--partition", "city", "--comment", "made here"))
        tid = out["tableId"]
        loc = os.path.join(root, "tables", tid)
        self.assertEqual(out["tableType"], "MANAGED")
        self.assertEqual(out["storageLocation"], "file://" + loc)
        self.assertTrue(os.path.isfile(os.path.join(loc, "_delta_log", "00000000000000000000.json")))
        self.assertEqual(out["partitionColumns"], ["city"])
        self.assertEqual([(c["name"], c["typeText"], c.get("nullable", False)) for c in out["columns"]],
                         [("id", "bigint" if out["columns"][0]["typeText"] == "bigint" else "long", False),
                          ("city", "string", True)])
        # a second one with the same name: refused before any file is written
        n_dirs = len(os.listdir(os.path.join(root, "tables")))
        self.ctl("table", "register", "mc.s.m", "--managed", "--column", "id:int", expect=1)
        self.assertEqual(len(os.listdir(os.path.join(root, "tables"))), n_dirs)
        # without a storage root: refused; a schema's own root (set by deltactl) wins
        self.schema("mc2", "s")
        err = self.ctl("table", "register", "mc2.s.m", "--managed", "--column", "id:int", expect=1)
        self.assertIn("storage_root", err)
        root2 = os.path.join(self.tmp, "schema-root")
        self.ctl("schema", "create", "mc2", "own", "--storage-root", root2)
        own = json.loads(self.ctl("--output", "json", "table", "register", "mc2.own.m", "--managed",
                                  "--column", "id:int"))
        self.assertTrue(own["storageLocation"].startswith("file://" + root2 + "/tables/"), own)
        # drop, list dropped, undrop within the window
        self.ctl("table", "drop", "mc.s.m")
        self.ctl("table", "get", "mc.s.m", expect=1)
        dropped = json.loads(self.ctl("--output", "json", "table", "dropped", "mc.s"))
        self.assertEqual([d["tableId"] for d in dropped["tables"]], [tid])
        back = json.loads(self.ctl("--output", "json", "table", "undrop", "mc.s.m"))
        self.assertEqual((back["tableId"], back["version"]), (tid, "0"))
        code, ev = self.curl("GET", "/audit/events?kind=admin_change")
        self.assertIn(("UndropTable", tid), [(e["action"], e.get("idAfter")) for e in ev["events"]])
        # drop again and let the retention pass: the purge deletes the files and the record
        self.ctl("table", "drop", "mc.s.m")
        self.assertTrue(os.path.isdir(loc))
        time.sleep(RETENTION_S + 1)
        self.assertEqual(json.loads(self.ctl("--output", "json", "table", "dropped", "mc.s")).get("tables", []), [])
        self.assertFalse(os.path.exists(loc))
        self.ctl("table", "undrop", "mc.s.m", expect=1)

    # ---- the CLI and names -------------------------------------------------------------------

    def test_cli_and_names(self):
        self.schema("cli", "s")
        out = json.loads(self.ctl("--output", "json", "table", "register", "cli.s.people", self.table,
                                  "--comment", "c", "--property", "team=x"))
        self.assertEqual(out["fullName"], "cli.s.people")
        got = json.loads(self.ctl("--output", "json", "table", "get", "cli.s.people"))
        self.assertEqual([c["name"] for c in got["columns"]], ["id", "name"])
        self.assertIn("cli.s.people", self.ctl("table", "list", "cli.s"))
        upd = json.loads(self.ctl("--output", "json", "table", "update", "cli.s.people", "--new-name", "folk",
                                  "--owner", "ann"))
        self.assertEqual((upd["fullName"], upd["tableId"], upd["owner"]), ("cli.s.folk", out["tableId"], "ann"))
        # the maintenance verbs resolve the catalog name through the server
        detail = json.loads(self.ctl("--output", "json", "table", "detail", "cli.s.folk"))
        detail = detail[0] if isinstance(detail, list) else detail
        self.assertEqual(detail["location"].replace("file://", ""), self.table)
        hist = json.loads(self.ctl("--output", "json", "table", "history", "cli.s.folk"))
        self.assertEqual(len(hist), 1)
        files = json.loads(self.ctl("--output", "json", "table", "files", "cli.s.folk"))
        self.assertEqual(len(files), len([f for f in os.listdir(self.table) if f.endswith(".parquet")]))
        self.ctl("table", "get", "cli.s.nope", expect=1)
        self.ctl("table", "drop", "cli.s.folk")
        self.ctl("table", "detail", "cli.s.folk", expect=1)

    def test_data_verbs_by_name(self):
        """scan, delete, update, merge (a CSV source, schema evolution) and optimize take a
        catalog name, over the server and --local, as the maintenance verbs do."""
        self.schema("dv", "s")
        copy = os.path.join(self.tmp, "people-data")
        shutil.copytree(self.table, copy)
        self.ctl("table", "register", "dv.s.people", copy)
        rows = lambda *a: [json.loads(l) for l in self.ctl("--output", "jsonl", "table", "scan", *a).splitlines()]
        self.assertEqual(sorted(r["id"] for r in rows("dv.s.people")), [1, 2, 3])
        self.assertEqual(rows("dv.s.people", "--local", "--where", "id = 2"), [{"id": 2, "name": "bob"}])
        out = json.loads(self.ctl("--output", "json", "table", "delete", "dv.s.people", "--where", "id = 1"))
        self.assertEqual(out["numAffectedRows"], 1)
        self.ctl("table", "update", "dv.s.people", "--set", "name=upper(name)", "--where", "id = 3", "--local")
        csv = os.path.join(self.tmp, "people-up.csv")
        with open(csv, "w") as f:
            f.write("id,name,team\n2,bo,x\n9,zed,y\n")
        out = json.loads(self.ctl("--output", "json", "table", "merge", "dv.s.people", "--source", csv,
                                  "--source-schema", "id BIGINT, name STRING, team STRING", "--on", "t.id = s.id",
                                  "--when-matched-update-all", "--when-not-matched-insert-all",
                                  "--schema-evolution"))
        self.assertEqual((out["numUpdatedRows"], out["numInsertedRows"]), (1, 1))
        self.ctl("table", "optimize", "dv.s.people")
        self.assertEqual(sorted((r["id"], r["name"], r.get("team")) for r in rows(copy)),
                         [(2, "bo", "x"), (3, "CY", None), (9, "zed", "y")])
        self.ctl("table", "scan", "dv.s.nope", expect=1)

    def test_share_by_catalog_name(self):
        self.schema("sh", "s")
        self.ctl("table", "register", "sh.s.people", self.table)
        self.ctl("share", "create", "byname")
        self.ctl("share", "add-schema", "byname", "x")
        self.ctl("share", "add-table", "byname", "x", "p", "--table", "sh.s.people")
        self.ctl("share", "add-table", "byname", "x", "q", "--table", "sh.s.nope", expect=1)
        self.ctl("share", "add-table", "byname", "x", "q", "--table", "sh.s.people", "--url", self.table, expect=2)
        self.ctl("recipient", "create", "reader", "--lifetime", "600")
        self.ctl("grant", "add", "byname", "reader")
        p = subprocess.run([os.path.join(VENV, "bin", "python"), SHARING_READ,
                            os.path.join(self.tmp, "reader.share"), "byname.x.p", self.table],
                           capture_output=True, text=True, timeout=180)
        self.assertEqual(p.returncode, 0, p.stderr[-3000:])
        got = json.loads(p.stdout.strip().splitlines()[-1])
        self.assertEqual(got["tables"], ["byname.x.p"])
        self.assertEqual(len(got["got"]), 3)
        self.assertEqual(got["got"], got["expected"])


if __name__ == "__main__":
    h.main()
