#!/usr/bin/python3
"""test_cli_contract.py: deltactl as a new user meets it (issue 16), against a real deltad:
one `table` group (every verb through the server by default and with --local, catalog
names and paths), one output contract (--output table|json|jsonl|csv before the group or
after the verb, camelCase keys, ISO 8601 times), operations that say what they did (vacuum),
help/--version/completion, the no-token hint, location types from the URL scheme,
`share add-table` with a plain path and a missing table, errors that name flags."""
import csv
import io
import json
import os
import re
import shutil
import subprocess
import tempfile

import dd_harness
from dd_harness import ServerTest

ISO = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")


def copy_fixture(name):
    d = tempfile.mkdtemp(prefix="dd-contract-")
    dst = os.path.join(d, "t")
    shutil.copytree(os.path.join(dd_harness.FIXTURES, "delta-rs-data", name), dst)
    subprocess.run(["find", dst, "-not", "-path", "*/_delta_log*", "-exec", "touch", "-m", "-d",
                    "30 days ago", "{}", "+"], check=True)
    return dst


def run(args, env=None, cwd=None):
    full = dict(os.environ)
    for k in ("DELTAD_SERVER", "DELTAD_TOKEN"):
        full.pop(k, None)
    full.update(env or {})
    p = subprocess.run([os.environ["DELTACTL_BIN"]] + list(args), capture_output=True, text=True,
                       env=full, cwd=cwd or tempfile.gettempdir(), timeout=120)
    for s in (p.stdout, p.stderr):
        if "Sanitizer" in s or "runtime error:" in s:
            raise AssertionError("sanitizer report from deltactl %s:\n%s" % (args, s))
    return p.returncode, p.stdout, p.stderr


class Contract(ServerTest):
    def ctl(self, *args, expect=0, local=False):
        pre = [] if local else ["--server", self.server.grpc_target, "--token", self.server.token]
        code, out, err = run(pre + list(args))
        self.assertEqual(code, expect, "deltactl %s -> %d\nstdout: %s\nstderr: %s"
                         % (" ".join(args), code, out, err))
        return out, err

    # ---- the table group ----
    def test_table_help_lists_every_verb(self):
        out, _ = self.ctl("table", "--help", local=True)
        verbs = re.findall(r"^  ([a-z-]+) ", out.split("verbs:\n")[1].split("options")[0], re.M)
        for v in ("history", "detail", "files", "changes", "scan", "vacuum", "restore", "clone",
                  "optimize", "upgrade", "add-feature", "drop-feature", "generate", "create",
                  "convert", "is-delta"):
            self.assertIn(v, verbs)
            # each listed verb exists: its --help answers 0
            o, _ = self.ctl("table", v, "--help", local=True)
            self.assertIn("usage", o)
        self.assertNotIn("the only mode", out)
        out2, _ = self.ctl("help", "table", local=True)
        self.assertEqual(out, out2)

    def test_history_and_detail_through_the_server(self):
        t = copy_fixture("simple_table")
        for local in (False, True):
            extra = ["--local"] if local else []
            out, err = self.ctl("table", "detail", t, *extra)
            self.assertRegex(out, r"(?m)^format: +delta$", (local, out))
            rows = json.loads(self.ctl("table", "history", t, "--limit", "1", "--output", "json", *extra)[0])
            self.assertIsInstance(rows, list)
            self.assertEqual(len(rows), 1, rows)
            self.assertEqual(rows[0]["version"], 4)
            self.assertRegex(rows[0]["timestamp"], ISO)
            all_rows = json.loads(self.ctl("--output", "json", "table", "history", t, *extra)[0])
            self.assertEqual([r["version"] for r in all_rows], [4, 3, 2, 1, 0])
        # files and changes read the table in this process, with or without --local
        files = json.loads(self.ctl("table", "files", t, "--output", "json")[0])
        self.assertTrue(files and all(ISO.match(f["modificationTime"]) for f in files), files)
        self.assertEqual(files, json.loads(self.ctl("table", "files", t, "--local", "-o", "json")[0]))
        c = copy_fixture("cdf-table")
        ch = json.loads(self.ctl("table", "changes", c, "--from", "0", "--output", "json")[0])
        self.assertTrue(ch and all(ISO.match(c["timestamp"]) for c in ch), ch)

    def test_catalog_names(self):
        t = copy_fixture("simple_table")
        code, body = self.server.curl("POST", "/catalogs", {"name": "cn"})
        self.assertEqual(code, 200, body)
        code, body = self.server.curl("POST", "/schemas", {"name": "s", "catalogName": "cn"})
        self.assertEqual(code, 200, body)
        code, body = self.server.curl("POST", self.server.http_base + "/v1/table/cn$s$tt/register",
                                      {"location": "file://" + t})
        self.assertEqual(code, 200, body)
        for extra in ([], ["--local"]):
            out, _ = self.ctl("--output", "json", "table", "detail", "cn.s.tt", *extra)
            self.assertEqual(os.path.realpath(json.loads(out)["location"]), os.path.realpath(t))
            rows = json.loads(self.ctl("table", "history", "cn.s.tt", "-o", "json", *extra)[0])
            self.assertEqual(rows[0]["version"], 4)
        out, _ = self.ctl("table", "vacuum", "cn.s.tt", "--dry-run", "--retain", "0",
                          "--allow-short-retention")
        self.assertIn("would delete", out)
        self.ctl("table", "detail", "cn.s.nope", expect=1)

    # ---- output contract ----
    def test_output_formats_everywhere(self):
        self.ctl("catalog", "create", "fmt1", "--comment", "a,b")
        a = json.loads(self.ctl("--output", "json", "catalog", "list")[0])
        b = json.loads(self.ctl("catalog", "list", "--output", "json")[0])
        self.assertEqual(a, b)
        cats = [c for c in a["catalogs"] if c["name"] == "fmt1"]
        self.assertTrue(cats)
        self.assertRegex(cats[0]["createAt"], ISO)
        self.assertFalse([k for c in a["catalogs"] for k in c if "_" in k])
        lines = self.ctl("catalog", "list", "-o", "jsonl")[0].splitlines()
        self.assertTrue(all(json.loads(l)["name"] for l in lines))
        rows = list(csv.DictReader(io.StringIO(self.ctl("catalog", "list", "--output=csv")[0])))
        self.assertEqual([r["COMMENT"] for r in rows if r["NAME"] == "fmt1"], ["a,b"])
        one = json.loads(self.ctl("catalog", "get", "fmt1", "-o", "jsonl")[0])
        self.assertEqual(one["name"], "fmt1")
        got = list(csv.DictReader(io.StringIO(self.ctl("catalog", "get", "fmt1", "-o", "csv")[0])))
        self.assertEqual(got[0]["name"], "fmt1")
        text = self.ctl("catalog", "get", "fmt1")[0]
        self.assertRegex(text, r"create_at: +\d{4}-\d\d-\d\dT")
        t = copy_fixture("simple_table")
        restore = self.ctl("table", "restore", t, "--version", "3", "-o", "json")[0]
        self.assertIn("numRemovedFiles", json.loads(restore))
        hist = self.ctl("table", "history", t, "-o", "jsonl")[0].splitlines()
        self.assertEqual(len(hist), 6)
        self.assertEqual(json.loads(hist[0])["operation"], "RESTORE")
        hcsv = list(csv.DictReader(io.StringIO(self.ctl("table", "history", t, "-o", "csv")[0])))
        self.assertEqual(hcsv[0]["operation"], "RESTORE")
        # table scan keeps its own formats; the global flag reaches it too
        for pre, post in ((["-o", "csv"], []), ([], ["--output", "csv"])):
            out, _ = self.ctl(*pre, "table", "scan", t, "--local", "--limit", "2", *post)
            self.assertEqual(out.splitlines()[0], "id", out)
            self.assertEqual(len(out.splitlines()), 3, out)
        out, _ = self.ctl("--output", "jsonl", "table", "scan", t, "--local", "--limit", "2")
        self.assertEqual(len([json.loads(l) for l in out.splitlines()]), 2)

    def test_vacuum_says_what_it_did(self):
        for local in (False, True):
            extra = ["--local"] if local else []
            t = copy_fixture("simple_table")
            out, _ = self.ctl("table", "vacuum", t, "--retain", "0", "--allow-short-retention",
                              "--dry-run", *extra)
            m = re.match(r"vacuum --dry-run: would delete (\d+) files from ", out)
            self.assertTrue(m, out)
            n = int(m.group(1))
            self.assertGreater(n, 0)
            self.assertEqual(len(out.splitlines()), n + 1)
            out, _ = self.ctl("table", "vacuum", t, "--retain", "0", "--allow-short-retention", *extra)
            m = re.match(r"vacuum: deleted (\d+) files \((\d+) bytes\) from ", out)
            self.assertTrue(m, out)
            self.assertEqual(int(m.group(1)), n)
            self.assertGreater(int(m.group(2)), 0)
            # nothing left: the dry run says so
            out, _ = self.ctl("table", "vacuum", t, "--retain", "0", "--allow-short-retention",
                              "--dry-run", *extra)
            self.assertTrue(out.startswith("vacuum --dry-run: would delete 0 files from "), out)
            self.assertEqual(json.loads(self.ctl("table", "vacuum", t, "--dry-run", "--retain", "0",
                                                 "--allow-short-retention", "-o", "json", *extra)[0]), [])
            done = json.loads(self.ctl("table", "vacuum", t, "--retain", "0", "--allow-short-retention",
                                       "-o", "json", *extra)[0])
            self.assertEqual(done["numDeletedFiles"], 0)

    def test_operations_say_what_they_did(self):
        for local in (False, True):
            extra = ["--local"] if local else []
            t = copy_fixture("simple_table")
            out, _ = self.ctl("table", "add-feature", t, "deletionVectors", *extra)
            self.assertEqual(out, "added feature deletionVectors to %s\n" % t)
            out, _ = self.ctl("table", "generate", t, *extra)
            self.assertEqual(out, "generated symlink_format_manifest for %s\n" % t)
            n = os.path.join(os.path.dirname(t), "n")
            out, _ = self.ctl("table", "create", n, "--column", "id:bigint", *extra)
            self.assertEqual(out, "created table %s (1 column)\n" % n)
            out, _ = self.ctl("table", "upgrade", n, "--reader", "1", "--writer", "3", *extra)
            self.assertEqual(out, "upgraded %s to reader version 1, writer version 3\n" % n)

    # ---- the rest of the contract ----
    def test_version_help_completion(self):
        out, _ = self.ctl("--version", local=True)
        self.assertRegex(out, r"^deltactl \d+\.\d+\.\d+\n$")
        out, _ = self.ctl("help", local=True)
        self.assertIn("groups:", out)
        for shell in ("bash", "zsh"):
            script, _ = self.ctl("completion", shell, local=True)
            p = subprocess.run([shell if shutil.which(shell) else "bash", "-n"], input=script, text=True,
                               capture_output=True)
            if shell == "bash":
                self.assertEqual(p.returncode, 0, p.stderr)
        # bash completes groups, verbs and flags from the binary's own help
        script, _ = self.ctl("completion", "bash", local=True)
        d = tempfile.mkdtemp(prefix="dd-compl-")
        with open(os.path.join(d, "c.sh"), "w") as f:
            f.write(script)
        probe = ('source %s/c.sh; deltactl() { "$DELTACTL_BIN" "$@"; }\n'
                 'COMP_WORDS=(%s tab); COMP_CWORD=1; _deltactl; echo "${COMPREPLY[*]}"\n'
                 'COMP_WORDS=(%s table va); COMP_CWORD=2; _deltactl; echo "${COMPREPLY[*]}"\n'
                 'COMP_WORDS=(%s table vacuum x --dry); COMP_CWORD=4; _deltactl; echo "${COMPREPLY[*]}"\n'
                 % ((d,) + (os.environ["DELTACTL_BIN"],) * 3))
        p = subprocess.run(["bash", "-c", probe], capture_output=True, text=True)
        self.assertEqual(p.stdout.splitlines(), ["table", "vacuum", "--dry-run"], p.stderr)
        shutil.rmtree(d)

    def test_no_token_points_at_the_variable(self):
        empty = tempfile.mkdtemp(prefix="dd-notoken-")
        code, out, err = run(["--server", self.server.grpc_target, "catalog", "list"], cwd=empty)
        self.assertEqual(code, 2, err)
        self.assertIn("DELTAD_TOKEN", err)
        self.assertIn("--token-file", err)
        shutil.rmtree(empty)

    def test_location_type_from_scheme(self):
        d = tempfile.mkdtemp(prefix="dd-loc-")
        out, _ = self.ctl("-o", "json", "location", "create", "scheme1", "file://" + d)
        self.assertEqual(json.loads(out)["type"], "LOCAL")
        self.ctl("location", "create", "scheme2", "ftp://x/y", expect=2)

    def test_add_table_plain_path_and_missing_table(self):
        t = copy_fixture("simple_table")
        self.ctl("share", "create", "pp")
        self.ctl("share", "add-schema", "pp", "s")
        out, _ = self.ctl("-o", "json", "share", "add-table", "pp", "s", "t1", "--url", t)
        self.assertEqual(json.loads(out)["url"], "file://" + t)
        _, err = self.ctl("share", "add-table", "pp", "s", "t2", "--url",
                          os.path.join(os.path.dirname(t), "missing"), expect=1)
        self.assertIn("NOT_FOUND", err)
        text, _ = self.ctl("share", "get", "pp")
        self.assertRegex(text, r"schemas: +s \[t1\]")
        self.assertNotIn("<SharingSchemaInfo>", text)

    def test_share_import_reference_yaml(self):
        t1, t2 = copy_fixture("simple_table"), copy_fixture("cdf-table")
        d = tempfile.mkdtemp(prefix="dd-import-")
        yml = os.path.join(d, "server.yaml")
        with open(yml, "w") as f:
            f.write("""# the Delta Sharing reference server's config
version: 1
shares:
- name: "imp"
  schemas:
  - name: "s1"
    tables:
    - name: "plain"
      location: "%s"
      id: "00000000-0000-0000-0000-000000000001"
    - name: "feed"
      location: "file://%s"
      cdfEnabled: true
  - name: "empty"
host: "localhost"
port: 8080
endpoint: "/delta-sharing"
""" % (t1, t2))
        out, _ = self.ctl("share", "import", yml, "--dry-run")
        self.assertEqual(out.splitlines(), [
            "would create share imp", "would create schema imp.s1",
            "would create table imp.s1.plain (file://%s)" % t1,
            "would create table imp.s1.feed (file://%s)" % t2, "would create schema imp.empty"])
        self.ctl("share", "get", "imp", expect=1)  # the dry run created nothing
        rows = json.loads(self.ctl("share", "import", yml, "-o", "json")[0])
        self.assertEqual([r["action"] for r in rows], ["created"] * 5)
        got = json.loads(self.ctl("share", "get", "imp", "-o", "json")[0])
        tables = {t["name"]: t for s in got["schemas"] for t in s.get("tables", [])}
        self.assertEqual(sorted(tables), ["feed", "plain"])
        self.assertTrue(tables["feed"].get("historyShared"))
        self.assertFalse(tables["plain"].get("historyShared", False))
        self.assertEqual(sorted(s["name"] for s in got["schemas"]), ["empty", "s1"])
        out, _ = self.ctl("share", "import", yml)  # idempotent
        self.assertTrue(all(l.startswith("exists ") for l in out.splitlines()), out)
        with open(yml, "w") as f:
            f.write("shares:\n- name: x\n  schemas:\n  - name: s\n    tables:\n    - name: t\n")
        _, err = self.ctl("share", "import", yml, "--dry-run", expect=2)
        self.assertIn("server.yaml:6: a table needs a location", err)
        with open(yml, "w") as f:
            f.write("shares: [unclosed\n")
        _, err = self.ctl("share", "import", yml, expect=2)
        self.assertIn("server.yaml:", err)
        shutil.rmtree(d)

    def test_errors_name_flags(self):
        self.ctl("catalog", "create", "full1")
        self.ctl("schema", "create", "full1", "s")
        _, err = self.ctl("catalog", "delete", "full1", expect=1)
        self.assertIn("--force", err)
        t = copy_fixture("simple_table")
        c = os.path.join(os.path.dirname(t), "c")
        self.ctl("table", "clone", t, c)
        _, err = self.ctl("table", "clone", t, c, expect=1)
        self.assertIn("--replace", err)


if __name__ == "__main__":
    dd_harness.main()
