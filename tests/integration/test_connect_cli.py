#!/usr/bin/python3
"""test_connect_cli.py: `deltactl table <maintenance verb>` against a real deltad (--server,
through DeltaConnectService) and in-process (--local): output formats, the vacuum dry run
and retention flags, and exit codes (0 only on success)."""
import json
import os
import shutil
import subprocess
import tempfile

import dd_harness
from dd_harness import ServerTest

FIX = os.environ.get("DD_FIXTURES", os.path.join(dd_harness.ROOT, "..", "shared", "fixtures"))


def copy_fixture(name):
    d = tempfile.mkdtemp(prefix="dd-cli-")
    dst = os.path.join(d, "t")
    shutil.copytree(os.path.join(FIX, "delta-rs-data", name), dst)
    subprocess.run(["find", dst, "-not", "-path", "*/_delta_log*", "-exec", "touch", "-m", "-d",
                    "30 days ago", "{}", "+"], check=True)
    return dst


class ConnectCli(ServerTest):
    def ctl(self, *args, local=False):
        base = [os.environ["DELTACTL_BIN"]]
        if not local:
            base += ["--server", self.server.grpc_target, "--token", self.server.token]
        p = subprocess.run(base + list(args), capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def test_vacuum_server_and_local(self):
        for local in (False, True):
            t = copy_fixture("simple_table")
            extra = ["--local"] if local else []
            code, out, err = self.ctl("table", "vacuum", t, "--retain", "0", *extra, local=local)
            self.assertEqual(code, 1, err)
            self.assertIn("FAILED_PRECONDITION", err)
            code, out, err = self.ctl("--output", "jsonl", "table", "vacuum", t, "--retain", "0",
                                      "--allow-short-retention", "--dry-run", *extra, local=local)
            self.assertEqual(code, 0, err)
            paths = [json.loads(l)["path"] for l in out.splitlines()]
            self.assertTrue(paths and all(os.path.exists(p) for p in paths))
            code, out, err = self.ctl("table", "vacuum", t, "--retain", "0", "--allow-short-retention",
                                      *extra, local=local)
            self.assertEqual(code, 0, err)
            self.assertFalse(any(os.path.exists(p) for p in paths))
            code, out, err = self.ctl("--output", "jsonl", "table", "history", t)
            self.assertEqual(code, 0, err)
            ops = [json.loads(l)["operation"] for l in out.splitlines()]
            self.assertEqual(ops[:2], ["VACUUM END", "VACUUM START"])

    def test_verbs_over_server(self):
        t = copy_fixture("simple_table")
        code, out, err = self.ctl("table", "restore", t, "--version", "1")
        self.assertEqual(code, 0, err)
        self.assertIn("num_restored_files", out)
        code, out, err = self.ctl("table", "restore", t, "--version", "99")
        self.assertEqual(code, 1)
        self.assertIn("OUT_OF_RANGE", err)
        code, out, err = self.ctl("table", "add-feature", t, "deletionVectors")
        self.assertEqual(code, 0, err)
        code, out, err = self.ctl("--output", "json", "table", "detail", t)
        d = json.loads(out)
        self.assertEqual((d["minReaderVersion"], d["minWriterVersion"]), (3, 7))
        self.assertIn("deletionVectors", d["tableFeatures"])
        code, out, err = self.ctl("table", "drop-feature", t, "deletionVectors")
        self.assertEqual(code, 1)
        code, out, err = self.ctl("table", "drop-feature", t, "deletionVectors", "--truncate-history")
        self.assertEqual(code, 0, err)
        code, out, err = self.ctl("table", "upgrade", t, "--reader", "1", "--writer", "1")
        self.assertEqual(code, 1)
        c2 = t + "-c"
        code, out, err = self.ctl("table", "clone", t, c2, "--deep")
        self.assertEqual(code, 0, err)
        code, out, err = self.ctl("--output", "json", "table", "is-delta", c2)
        self.assertEqual(json.loads(out)["value"], True)
        n = t + "-new"
        code, out, err = self.ctl("table", "create", n, "--column", "id:bigint:not null",
                                  "--column", "price:decimal(10,2)", "--partition", "id",
                                  "--property", "delta.appendOnly=true")
        self.assertEqual(code, 0, err)
        code, out, err = self.ctl("table", "create", n, "--column", "id:bigint")
        self.assertEqual(code, 1)
        self.assertIn("ALREADY_EXISTS", err)
        code, out, err = self.ctl("table", "generate", t)
        self.assertEqual(code, 0, err)
        self.assertTrue(os.path.exists(os.path.join(t, "_symlink_format_manifest", "manifest")))
        code, out, err = self.ctl("table", "history", os.path.join(os.path.dirname(t), "nonexistent"))
        self.assertEqual(code, 1)
        self.assertIn("NOT_FOUND", err)
        # outside every storage location: refused by the server (not by --local)
        code, out, err = self.ctl("table", "history", "/nonexistent/x")
        self.assertEqual(code, 1)
        self.assertIn("PERMISSION_DENIED", err)
        code, out, err = self.ctl("table", "restore", t)
        self.assertEqual(code, 2)

    def test_detail_same_fields_both_paths(self):
        """`table detail` over the server and with --local: one engine builds the fields and
        one printer prints them, so both paths print the same JSON object and the same text."""
        t = copy_fixture("simple_table")
        got = {}
        for local in (False, True):
            extra = ["--local"] if local else []
            code, js, err = self.ctl("table", "detail", t, "--output", "json", *extra, local=local)
            self.assertEqual(code, 0, err)
            code, text, err = self.ctl("table", "detail", t, *extra, local=local)
            self.assertEqual(code, 0, err)
            got[local] = (json.loads(js), text)
        self.assertEqual(got[False][0], got[True][0])
        self.assertEqual(got[False][1], got[True][1])
        d = got[True][0]
        self.assertEqual((d["format"], d["location"], d["version"], d["numFiles"]), ("delta", t, 4, 5))
        self.assertEqual((d["minReaderVersion"], d["minWriterVersion"]), (1, 2))
        self.assertIn("num files:        5\n", got[True][1])
        # --version reads an older snapshot, in this process only
        code, js, err = self.ctl("table", "detail", t, "--version", "1", "--output", "json", "--local",
                                 local=True)
        self.assertEqual(code, 0, err)
        self.assertEqual(json.loads(js)["version"], 1)
        code, js, err = self.ctl("table", "detail", t, "--version", "1")
        self.assertEqual(code, 2)
        self.assertIn("--local", err)

    def test_convert_local(self):
        t = copy_fixture("delta-0.8.0-partitioned")
        shutil.rmtree(os.path.join(t, "_delta_log"))
        code, out, err = self.ctl("table", "convert", t, "--partition-schema",
                                  "year STRING, month STRING, day STRING", "--local", local=True)
        self.assertEqual(code, 0, err)
        self.assertIn("delta.`%s`" % t, out)


if __name__ == "__main__":
    dd_harness.main()
