#!/usr/bin/python3
"""test_objstore_ops.py: every Delta operation on tables in object storage, through a real
deltad (`deltactl table VERB URL`, i.e. DeltaConnectService), judged by delta-rs.

Stores: moto's S3 server (it honours If-None-Match: *, so deltad commits there), Azurite
(Azure Blob, checks Shared Key and SAS signatures), and s3rver, which ignores
If-None-Match: deltad must read from it but refuse to commit there, saying why. Tables are
copies of fixture tables; a local copy of the same table gets the same operation and the
results must agree (versions, files, rows as delta-rs reads them). Clones cross stores: S3
to Azure, local to S3, S3 to local."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time

import requests

import dd_harness as h
from dd_stores import (AZ_ACCOUNT, AZ_KEY, admin, az_node, s3rver_put_tree, start_azurite,
                       start_moto, start_s3, stop_procs)

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
RS = os.path.join(FIX, "delta-rs-data")
SIMPLE = os.path.join(RS, "simple_table")        # version 4, 5 active files
PARTS = os.path.join(RS, "delta-0.8.0-partitioned")
AZ_URL = "abfss://lake@%s.dfs.core.windows.net/tables" % AZ_ACCOUNT
VACUUM_GRACE_S = 11  # deltad never deletes files younger than 10 s


class ObjstoreOps(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-objops-")
        cls.procs = []
        try:
            cls.start_stores()
            super().setUpClass()
            cls.setup_catalog()
        except BaseException:
            cls.stop_stores()
            raise

    @classmethod
    def start_stores(cls):
        orphan_dir = os.path.join(cls.tmp, "orphan")
        os.makedirs(orphan_dir)
        with open(os.path.join(orphan_dir, "part-99999-orphan.snappy.parquet"), "wb") as f:
            f.write(b"not referenced by any version")
        parquet_only = os.path.join(cls.tmp, "parquet-only")
        shutil.copytree(PARTS, parquet_only, ignore=shutil.ignore_patterns("_delta_log"))
        cls.moto, cls.s3 = start_moto(["lake", "lake/tables/simple=" + SIMPLE,
                                       "lake/tables/vac=" + SIMPLE, "lake/tables/vac=" + orphan_dir,
                                       "lake/tables/parts=" + PARTS,
                                       "lake/tables/restore=" + SIMPLE,
                                       "lake/tables/race=" + SIMPLE,
                                       "lake/tables/dml=" + SIMPLE,
                                       "lake/tables/raw=" + parquet_only])
        cls.uploaded = time.time()
        cls.procs.append(cls.moto)
        cls.s3rver, cls.s3old = start_s3(os.path.join(cls.tmp, "s3rver"))
        cls.procs.append(cls.s3rver)
        assert requests.put(cls.s3old + "/old").status_code == 200
        s3rver_put_tree(cls.s3old, "old", "tables/simple", SIMPLE)
        cls.azurite, cls.az = start_azurite(os.path.join(cls.tmp, "azurite"))
        cls.procs.append(cls.azurite)
        az_node("upload", cls.az, "lake", "tables", "simple=" + SIMPLE, "restore=" + SIMPLE,
                "dml=" + SIMPLE, "vac=" + SIMPLE, "vac=" + orphan_dir)
        az_node("many", cls.az, "lake", "tables/vac/junk", "300")  # vacuum's Blob Batch deletes
        cls.az_uploaded = time.time()

    @classmethod
    def stop_stores(cls):
        stop_procs(cls.procs)

    @classmethod
    def tearDownClass(cls):
        cls.stop_stores()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    @classmethod
    def setup_catalog(cls):
        cls.admin("POST", "/credentials", {"name": "moto", "aws": {
            "accessKeyId": "test", "secretAccessKey": "test", "region": "us-east-1"}})
        cls.admin("POST", "/credentials", {"name": "s3rver", "aws": {
            "accessKeyId": "S3RVER", "secretAccessKey": "S3RVER", "region": "us-east-1"}})
        cls.admin("POST", "/credentials", {"name": "azkey", "azure": {
            "accountKey": {"accountName": AZ_ACCOUNT, "accountKey": AZ_KEY}}})
        for name, url, cred, ep in (("lake", "s3://lake/tables", "moto", cls.s3),
                                    ("old", "s3://old/tables", "s3rver", cls.s3old),
                                    ("az", AZ_URL, "azkey", cls.az)):
            cls.admin("POST", "/locations", {"name": name, "url": url, "credential": cred,
                                             "properties": {"endpoint": ep, "path_style": "true"}})

    # ---- helpers ----

    @classmethod
    def admin(cls, method, path, body, expect=200):
        return admin(cls.server, method, path, body, expect)

    def ctl(self, *args, ok=True):
        p = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                            "--token", self.server.token] + list(args),
                           capture_output=True, text=True, timeout=120)
        if ok:
            self.assertEqual(p.returncode, 0, (args, p.stdout, p.stderr))
        return p

    def requests_made(self):
        """deltad's object-store HTTP requests so far (its /metrics counter)."""
        out = subprocess.run(["curl", "-s", "-H", "Authorization: Bearer " + self.server.token,
                              self.server.rest.rsplit("/api/", 1)[0] + "/metrics"],
                             capture_output=True, text=True, check=True).stdout
        return int(re.search(r"^deltad_objstore_http_requests_total (\d+)$", out, re.M).group(1))

    def js(self, *args):
        return json.loads(self.ctl("--output", "json", *args).stdout)

    def local_copy(self, src=SIMPLE):
        d = os.path.join(tempfile.mkdtemp(dir=self.tmp), "t")
        shutil.copytree(src, d)
        return d

    def delta_rs(self, *urls):
        """delta-rs's view of each table: version, rows and file names (base names)."""
        s3 = {"AWS_ENDPOINT_URL": self.s3, "AWS_ACCESS_KEY_ID": "test",
              "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1", "AWS_ALLOW_HTTP": "true"}
        az = {"account_name": AZ_ACCOUNT, "account_key": AZ_KEY, "use_emulator": "true",
              "azurite_url": self.az.rsplit("/", 1)[0]}
        tables = []
        for u in urls:
            opts = s3 if u.startswith("s3://") else az if u.startswith("abfss://") else {}
            if u.startswith("abfss://"):  # delta-rs names Azurite's container as az://
                u = "az://lake/" + u.split("/", 3)[3]
            tables.append([u, opts])
        venv = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
        p = subprocess.run([os.path.join(venv, "bin", "python"),
                            os.path.join(h.ROOT, "tests", "integration", "peers", "delta_rs_stores.py")],
                           input=json.dumps({"tables": tables}), capture_output=True, text=True,
                           timeout=300)
        self.assertEqual(p.returncode, 0, p.stderr)
        got = json.loads(p.stdout)
        out = []
        for u, _ in tables:
            r = got[u]
            self.assertNotIn("error", r, (u, r))
            r["files"] = sorted(f.rsplit("/", 1)[1] for f in r["files"])
            out.append(r)
        return out

    # ---- tests ----

    def test_read_verbs_agree_with_local(self):
        local = self.js("table", "detail", self.local_copy())
        for url in ("s3://lake/tables/simple", AZ_URL + "/simple", "s3://old/tables/simple"):
            d = self.js("table", "detail", url)
            self.assertEqual((d["version"], d["numFiles"], d["sizeInBytes"]),
                             (local["version"], local["numFiles"], local["sizeInBytes"]), url)
            self.assertEqual(d["location"], url)
            hist = self.js("table", "history", url)
            self.assertEqual([x["version"] for x in hist], [4, 3, 2, 1, 0])
            self.assertTrue(self.js("table", "is-delta", url)["value"])
        self.assertFalse(self.js("table", "is-delta", "s3://lake/tables/nothing")["value"])

    def test_outside_locations_refused(self):
        p = self.ctl("table", "history", "s3://elsewhere/t", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("PERMISSION_DENIED", p.stderr)
        p = self.ctl("table", "history", "s3://lake/tables/../../x", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("INVALID_ARGUMENT", p.stderr)

    def test_restore_and_features_on_s3_and_azure(self):
        local = self.local_copy()
        s3 = "s3://lake/tables/restore"
        self.ctl("table", "restore", local, "--version", "2")
        for url in (s3, AZ_URL + "/restore"):
            out = self.js("table", "restore", url, "--version", "2")
            self.assertEqual((out["numRestoredFiles"], out["numRemovedFiles"]), (2, 1))
            self.ctl("table", "add-feature", url, "changeDataFeed")
            d = self.js("table", "detail", url)
            self.assertEqual(d["minWriterVersion"], 7)
            self.assertIn("changeDataFeed", d["tableFeatures"])
        want_files = sorted(os.path.basename(x["path"]) for x in self.js("table", "files", local))
        rs = self.delta_rs(s3, AZ_URL + "/restore", local)
        self.assertEqual(rs[0]["version"], 6)       # 4 + restore + add-feature
        self.assertEqual(rs[1]["version"], 6)
        self.assertEqual(rs[0]["files"], want_files)
        self.assertEqual(rs[1]["files"], want_files)
        self.assertEqual(rs[0]["rows"], rs[2]["rows"])
        self.assertEqual(rs[1]["rows"], rs[2]["rows"])

    def test_clone_across_stores(self):
        local = self.local_copy()
        cases = [("s3://lake/tables/simple", AZ_URL + "/deep-from-s3", ["--deep"]),
                 (local, "s3://lake/tables/deep-from-local", ["--deep"]),
                 ("s3://lake/tables/simple", "s3://lake/tables/shallow", []),
                 (AZ_URL + "/simple", os.path.join(os.path.dirname(local), "from-azure"), ["--deep"])]
        for src, dst, flags in cases:
            out = self.js("table", "clone", src, dst, *flags)
            self.assertEqual(out["sourceNumOfFiles"], 5, (src, dst))
            self.assertEqual(out["numCopiedFiles"], 5 if flags else 0, (src, dst))
        p = self.ctl("table", "clone", "s3://lake/tables/simple", AZ_URL + "/deep-from-s3", ok=False)
        self.assertIn("ALREADY_EXISTS", p.stderr)
        # delta-rs reads no absolute object-store paths (a shallow clone's, as Delta writes
        # them): deltad's scan judges that one
        rs = self.delta_rs(local, *[dst for _, dst, flags in cases if flags])
        for r in rs[1:]:
            self.assertEqual((r["version"], r["rows"], r["files"]), (0, rs[0]["rows"], rs[0]["files"]))
        # a deep clone's files live in the target, a shallow clone's in the source
        self.assertEqual(self.js("table", "detail", "s3://lake/tables/shallow")["numFiles"], 5)
        scan = self.ctl("--output", "jsonl", "table", "scan", "s3://lake/tables/shallow").stdout
        self.assertEqual(len(scan.splitlines()), rs[0]["rows"])
        files = self.js("table", "files", os.path.join(os.path.dirname(local), "from-azure"))
        self.assertTrue(all(not f["path"].startswith(("/", "abfss:")) for f in files), files)

    def test_create_generate_convert(self):
        url = AZ_URL + "/created"
        self.ctl("table", "create", url, "--column", "id:bigint:not null", "--column", "name:string",
                 "--property", "delta.appendOnly=true")
        p = self.ctl("table", "create", url, "--column", "id:bigint", ok=False)
        self.assertIn("ALREADY_EXISTS", p.stderr)
        self.ctl("table", "upgrade", url, "--reader", "1", "--writer", "4")
        d = self.js("table", "detail", url)
        self.assertEqual((d["version"], d["minWriterVersion"]), (1, 4))
        self.ctl("table", "generate", "s3://lake/tables/parts")
        self.ctl("table", "convert", "s3://lake/tables/raw", "--partition-schema",
                 "year STRING, month STRING, day STRING")
        rs = self.delta_rs(url, "s3://lake/tables/raw", "s3://lake/tables/parts")
        self.assertEqual((rs[0]["version"], rs[0]["rows"]), (1, 0))
        self.assertEqual((rs[1]["version"], rs[1]["rows"]), (0, rs[2]["rows"]))
        self.assertEqual(len(rs[1]["files"]), len(rs[2]["files"]))

    def test_commits_refused_where_conditional_put_is_ignored(self):
        """s3rver accepts a second PUT with If-None-Match: *: deltad reads there but writes no
        commit, and says why; the table is unchanged."""
        url = "s3://old/tables/simple"
        for args in (("restore", url, "--version", "1"), ("add-feature", url, "changeDataFeed"),
                     ("clone", "s3://lake/tables/simple", "s3://old/tables/clone", "--deep")):
            p = self.ctl("table", *args, ok=False)
            self.assertEqual(p.returncode, 1, args)
            self.assertIn("FAILED_PRECONDITION", p.stderr)
            self.assertIn("ignores If-None-Match", p.stderr)
        self.assertEqual(self.js("table", "detail", url)["version"], 4)
        self.assertFalse(self.js("table", "is-delta", "s3://old/tables/clone")["value"])

    def test_racing_commits_lose_nothing(self):
        """Commits racing on one S3 table: each one that succeeds has its own version."""
        url = "s3://lake/tables/race"
        base = [os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target, "--token",
                self.server.token, "table", "restore", url, "--version", "0"]
        procs = [subprocess.Popen(base, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(6)]
        results = [(p.wait(timeout=120), p.communicate()) for p in procs]
        ok = sum(1 for code, _ in results if code == 0)
        for code, (_, err) in results:
            self.assertTrue(code == 0 or "ABORTED" in err, err)
        self.assertGreaterEqual(ok, 1)
        hist = self.js("table", "history", url)
        self.assertEqual(hist[0]["version"], 4 + ok)
        self.assertEqual(sum(1 for x in hist if x["operation"] == "RESTORE"), ok)
        self.assertEqual(self.delta_rs(url)[0]["version"], 4 + ok)

    def test_optimize_delete_update_on_s3_and_azure(self):
        """The data plane writes new data files into the store and commits there; delta-rs
        sees the rows a local copy gets from the same statements."""
        local = self.local_copy()
        urls = ["s3://lake/tables/dml", AZ_URL + "/dml"]
        for t in [local] + urls:
            self.ctl("table", "delete", t, "--where", "id = 5")
            self.ctl("table", "update", t, "--set", "id=id+100", "--where", "id = 7")
            self.ctl("table", "optimize", t)
        rs = self.delta_rs(local, *urls)
        for r in rs[1:]:
            self.assertEqual((r["version"], r["rows"], len(r["files"])),
                             (rs[0]["version"], rs[0]["rows"], len(rs[0]["files"])))
        want = sorted(self.ctl("--output", "jsonl", "table", "scan", local).stdout.splitlines())
        for u in urls:
            self.assertEqual(sorted(self.ctl("--output", "jsonl", "table", "scan", u).stdout.splitlines()),
                             want, u)
        self.assertIn('{"id": 107}', want)

    def test_scan_s3_and_azure(self):
        want = self.ctl("--output", "jsonl", "table", "scan", self.local_copy()).stdout.splitlines()
        for url in ("s3://lake/tables/simple", AZ_URL + "/simple", "s3://old/tables/simple"):
            got = self.ctl("--output", "jsonl", "table", "scan", url).stdout.splitlines()
            self.assertEqual(sorted(got), sorted(want), url)

    def test_z_vacuum_s3(self):
        url = "s3://lake/tables/vac"
        wait = self.uploaded + VACUUM_GRACE_S - time.time()
        if wait > 0:
            time.sleep(wait)
        dry = [r["path"] for r in self.js("table", "vacuum", url, "--retain", "0",
                                           "--allow-short-retention", "--dry-run")]
        self.assertIn(url + "/part-99999-orphan.snappy.parquet", dry)
        self.ctl("table", "vacuum", url, "--retain", "0", "--allow-short-retention")
        self.assertEqual(self.js("table", "vacuum", url, "--retain", "0", "--allow-short-retention",
                                 "--dry-run"), [])
        rs = self.delta_rs(url, self.local_copy())
        self.assertEqual((rs[0]["version"], rs[0]["rows"], rs[0]["files"]),
                         (6, rs[1]["rows"], rs[1]["files"]))
        hist = [x["operation"] for x in self.js("table", "history", url, "--limit", "2")]
        self.assertEqual(hist, ["VACUUM END", "VACUUM START"])

    def test_z_vacuum_azure(self):
        """Vacuum on Azure deletes 300 orphans and the tombstoned files with Blob Batch
        requests (at most 256 deletes each; Azurite checks every subrequest's SAS)."""
        url = AZ_URL + "/vac"
        wait = self.az_uploaded + VACUUM_GRACE_S - time.time()
        if wait > 0:
            time.sleep(wait)
        dry = [r["path"] for r in self.js("table", "vacuum", url, "--retain", "0",
                                           "--allow-short-retention", "--dry-run")]
        self.assertIn(url + "/part-99999-orphan.snappy.parquet", dry)
        self.assertEqual(len([p for p in dry if "/junk/" in p]), 300)
        before = self.requests_made()
        self.ctl("table", "vacuum", url, "--retain", "0", "--allow-short-retention")
        made = self.requests_made() - before
        self.assertEqual(self.js("table", "vacuum", url, "--retain", "0", "--allow-short-retention",
                                 "--dry-run"), [])
        # one by one this would be one request per file on top of the listing and the log
        # (about 51 here: every directory listed, the log, 2 batches, 2 commits)
        self.assertLess(made, len(dry) // 4, "object-store requests of the vacuum of %d files" % len(dry))
        rs = self.delta_rs(url, self.local_copy())
        self.assertEqual((rs[0]["version"], rs[0]["rows"], rs[0]["files"]),
                         (6, rs[1]["rows"], rs[1]["files"]))


if __name__ == "__main__":
    h.main()
