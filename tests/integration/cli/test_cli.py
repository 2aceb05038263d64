#!/usr/bin/python3
"""test_cli.py: deltactl end to end. Starts the real deltad (through the integration
harness, tests/integration/dd_harness.py: free loopback ports, a fresh data directory) and
runs every catalog, schema, credential, location and server command of deltactl against
it, checking text and JSON output, exit codes and error messages (NOT_FOUND,
UNAUTHENTICATED, ALREADY_EXISTS; usage errors exit 2; local failures 3), and every way of
giving the server address and the token.

usage: test_cli.py --deltactl PATH [--deltad PATH]
Without --deltad only the checks that need no server run (help, usage errors, an
unreachable server)."""
import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))  # tests/integration: dd_harness

DELTACTL = None
DELTAD = None


def run(args, env=None, cwd=None, server=None, token=None, timeout=60):
    """Runs deltactl; returns (exit code, stdout, stderr). server/token become global flags."""
    pre = []
    if server:
        pre += ["--server", server]
    if token:
        pre += ["--token", token]
    full_env = dict(os.environ)
    for k in ("DELTAD_SERVER", "DELTAD_TOKEN"):
        full_env.pop(k, None)
    full_env.update(env or {})
    p = subprocess.run([DELTACTL] + pre + list(args), capture_output=True, text=True,
                       env=full_env, cwd=cwd or tempfile.gettempdir(), timeout=timeout)
    for stream in (p.stdout, p.stderr):
        if "Sanitizer" in stream or "runtime error:" in stream:
            raise AssertionError("sanitizer report from deltactl %s:\n%s" % (args, stream))
    return p.returncode, p.stdout, p.stderr


def closed_port():
    """A loopback port nothing listens on (bound, then released)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def kv_lines(text):
    """Parses `key: value` output into a dict."""
    out = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            out[key.strip()] = value.strip()
    return out


def table_rows(text):
    """Parses an aligned table into (header, rows), cutting at the header's column starts."""
    lines = [l for l in text.splitlines() if l.strip()]
    header = lines[0]
    starts = [i for i, ch in enumerate(header) if ch != " " and (i == 0 or header[i - 1] == " ")]
    names = header.split()

    def cut(line):
        cells = []
        for j, s in enumerate(starts):
            e = starts[j + 1] if j + 1 < len(starts) else None
            cells.append(line[s:e].strip() if e else line[s:].strip())
        return dict(zip(names, cells))

    return names, [cut(l) for l in lines[1:]]


class Offline(unittest.TestCase):
    """What deltactl does before it reaches a server."""

    def test_help_at_every_level(self):
        for args in (["--help"], ["-h"], ["catalog", "--help"], ["schema", "--help"],
                     ["credential", "--help"], ["location", "--help"], ["server", "--help"],
                     ["catalog", "create", "--help"], ["catalog", "list", "-h"],
                     ["schema", "update", "--help"], ["credential", "create", "--help"],
                     ["location", "create", "--help"], ["server", "ping", "--help"],
                     ["--server", "127.0.0.1:1", "catalog", "get", "--help"]):
            code, out, err = run(args)
            self.assertEqual(code, 0, args)
            self.assertIn("usage: deltactl", out, args)
            self.assertEqual(err, "", args)
        code, out, _ = run(["--help"])
        for word in ("catalog", "schema", "credential", "location", "server", "table",
                     "--token-file", "--output", "exit status"):
            self.assertIn(word, out)
        code, out, _ = run(["credential", "create", "--help"])
        for word in ("--azure-account-key", "--azure-sas", "--azure-client", "--aws",
                     "--region", "--session-token"):
            self.assertIn(word, out)

    def test_usage_errors_exit_2(self):
        cases = [
            ([], "missing GROUP"),
            (["bogus"], "unknown group 'bogus'"),
            (["catalog"], "missing verb"),
            (["catalog", "frob"], "unknown verb 'frob'"),
            (["catalog", "create"], "missing arguments"),
            (["catalog", "get", "a", "b"], "unexpected argument 'b'"),
            (["catalog", "create", "x", "--nope"], "unknown option '--nope'"),
            (["catalog", "create", "x", "--comment"], "option --comment needs 1 value"),
            (["catalog", "list", "--max-results", "zero"], "bad --max-results 'zero'"),
            (["catalog", "delete", "x", "--force=yes"], "takes no value"),
            (["--output", "xml", "catalog", "list"], "--output must be table, json, jsonl or csv"),
            (["catalog", "list", "--output", "xml"], "--output must be table, json, jsonl or csv"),
            (["--timeout", "-3", "catalog", "list"], "bad --timeout"),
            (["--server"], "needs a value"),
            (["--frob", "1", "catalog", "list"], "unknown global flag '--frob'"),
            (["schema", "create", "cat"], "missing arguments"),
            (["credential", "create", "c"], "exactly one of"),
            (["credential", "create", "c", "--aws", "only-one"], "--aws needs 2 values"),
            (["credential", "create", "c", "--aws", "a", "b", "--azure-sas", "c", "d"],
             "exactly one of"),
            (["credential", "create", "c", "--azure-sas", "a", "b", "--region", "x"],
             "--region, --session-token, --role-arn and --external-id go with --aws"),
            (["location", "create", "l", "ftp://x"], "--type is required"),
            (["location", "create", "l", "file:///x", "--type", "ftp"], "unknown --type 'ftp'"),
            (["catalog", "create", "x", "--property", "novalue"], "not KEY=VALUE"),
            (["server", "ping", "extra"], "unexpected argument"),
        ]
        for args, text in cases:
            code, out, err = run(args)
            self.assertEqual(code, 2, (args, out, err))
            self.assertIn(text, err, args)
            self.assertEqual(out, "", args)

    def test_unreachable_server_is_unavailable(self):
        target = "127.0.0.1:%d" % closed_port()
        code, out, err = run(["--timeout", "10", "catalog", "get", "x"], server=target, token="t")
        self.assertEqual(code, 1, err)
        self.assertTrue(err.startswith("deltactl: UNAVAILABLE: "), err)
        self.assertEqual(out, "")
        # A deadline that passes first is reported as such.
        code, out, err = run(["--timeout", "0.001", "server", "ping"], server=target, token="t")
        self.assertEqual(code, 1, err)
        self.assertRegex(err, r"^deltactl: (DEADLINE_EXCEEDED|UNAVAILABLE): ")

    def test_unreadable_token_file_exits_3(self):
        code, out, err = run(["--token-file", "/nonexistent/token", "catalog", "list"],
                             server="127.0.0.1:%d" % closed_port())
        self.assertEqual(code, 3)
        self.assertIn("cannot read token file '/nonexistent/token'", err)


class WithServer(unittest.TestCase):
    """Every command against the real deltad."""

    @classmethod
    def setUpClass(cls):
        import dd_harness
        os.environ["DELTAD_BIN"] = DELTAD
        cls.srv = dd_harness.Server().start()
        cls.target = cls.srv.grpc_target
        cls.token = cls.srv.token

    @classmethod
    def tearDownClass(cls):
        try:
            code = cls.srv.stop()
            assert code == 0, "deltad exited with %r" % code
        finally:
            cls.srv.cleanup()

    def ctl(self, *args, expect=0, **kw):
        kw.setdefault("server", self.target)
        kw.setdefault("token", self.token)
        code, out, err = run(args, **kw)
        self.assertEqual(code, expect, "deltactl %s -> %d\nstdout: %s\nstderr: %s" %
                         (" ".join(args), code, out, err))
        return out, err

    def json(self, *args, **kw):
        out, _ = self.ctl("--output", "json", *args, **kw)
        return json.loads(out)

    # ---- server ----
    def test_server_ping_and_info(self):
        out, _ = self.ctl("server", "ping")
        self.assertRegex(out, r"^pong in [0-9.]+ ms\n$")
        self.assertEqual(self.json("server", "ping"), {})
        info = self.json("server", "info")
        self.assertEqual(info["principal"], "admin")
        self.assertTrue(info["version"])
        kv = kv_lines(self.ctl("server", "info")[0])
        self.assertEqual(kv["principal"], "admin")
        self.assertEqual(kv["version"], info["version"])

    # ---- catalogs ----
    def test_catalog_lifecycle(self):
        out, _ = self.ctl("catalog", "create", "cli_cat", "--comment", "made by the cli",
                          "--property", "team=data", "--property", "tier=gold")
        kv = kv_lines(out)
        self.assertEqual(kv["name"], "cli_cat")
        self.assertEqual(kv["comment"], "made by the cli")
        self.assertIn("team=data", kv["properties"])
        self.assertIn("tier=gold", kv["properties"])
        self.assertRegex(kv["create_at"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")
        self.assertTrue(kv["id"])

        got = self.json("catalog", "get", "cli_cat")
        self.assertEqual(got["name"], "cli_cat")
        self.assertEqual(got["id"], kv["id"])
        self.assertEqual(got["comment"], "made by the cli")
        self.assertEqual(got["properties"], {"team": "data", "tier": "gold"})
        self.assertIsInstance(got["createAt"], str)  # int64 is a string in proto3 JSON

        out, _ = self.ctl("catalog", "list", "--all")
        names, rows = table_rows(out)
        self.assertEqual(names[:4], ["NAME", "ID", "COMMENT", "CREATED"])
        row = [r for r in rows if r["NAME"] == "cli_cat"]
        self.assertEqual(len(row), 1)
        self.assertEqual(row[0]["ID"], kv["id"])
        self.assertEqual(row[0]["COMMENT"], "made by the cli")

        code, out, err = run(["catalog", "create", "cli_cat"], server=self.target, token=self.token)
        self.assertEqual(code, 1)
        self.assertTrue(err.startswith("deltactl: ALREADY_EXISTS: "), err)

        upd = self.json("catalog", "update", "cli_cat", "--new-name", "cli_cat2",
                        "--comment", "renamed", "--property", "k=v")
        self.assertEqual(upd["name"], "cli_cat2")
        self.assertEqual(upd["comment"], "renamed")
        self.assertEqual(upd["properties"], {"k": "v"})
        self.assertEqual(upd["id"], kv["id"])

        code, out, err = run(["catalog", "get", "cli_cat"], server=self.target, token=self.token)
        self.assertEqual(code, 1)
        self.assertEqual(out, "")
        self.assertTrue(err.startswith("deltactl: NOT_FOUND: "), err)
        self.assertIn("cli_cat", err)

        out, _ = self.ctl("catalog", "delete", "cli_cat2")
        self.assertEqual(out, "deleted catalog cli_cat2\n")
        self.ctl("catalog", "get", "cli_cat2", expect=1)
        code, _, err = run(["catalog", "delete", "cli_cat2"], server=self.target, token=self.token)
        self.assertEqual(code, 1)
        self.assertIn("NOT_FOUND", err)

    def test_catalog_paging(self):
        made = ["page_%02d" % i for i in range(7)]
        for n in made:
            self.ctl("catalog", "create", n)
        first = self.json("catalog", "list", "--max-results", "3")
        self.assertEqual(len(first["catalogs"]), 3)
        self.assertTrue(first.get("nextPageToken"))
        second = self.json("catalog", "list", "--max-results", "3",
                           "--page-token", first["nextPageToken"])
        got = [c["name"] for c in first["catalogs"] + second["catalogs"]]
        self.assertEqual(len(set(got)), 6)
        out, err = self.ctl("catalog", "list", "--max-results", "3")
        self.assertEqual(len(table_rows(out)[1]), 3)
        self.assertIn("--page-token", err)
        every = self.json("catalog", "list", "--all", "--max-results", "2")
        names = [c["name"] for c in every["catalogs"]]
        for n in made:
            self.assertIn(n, names)
        self.assertEqual(len(names), len(set(names)))
        self.assertFalse(every.get("nextPageToken"))
        out, err = self.ctl("catalog", "list", "--all", "--max-results", "2")
        self.assertEqual(sorted(r["NAME"] for r in table_rows(out)[1]), sorted(names))
        self.assertEqual(err, "")
        for n in made:
            self.ctl("catalog", "delete", n)

    # ---- schemas ----
    def test_schema_lifecycle(self):
        self.ctl("catalog", "create", "sch_cat")
        kv = kv_lines(self.ctl("schema", "create", "sch_cat", "raw", "--comment", "landing",
                               "--property", "owner=etl")[0])
        self.assertEqual(kv["full_name"], "sch_cat.raw")
        self.assertEqual(kv["catalog_name"], "sch_cat")
        self.assertEqual(kv["comment"], "landing")
        self.ctl("schema", "create", "sch_cat", "gold")
        names, rows = table_rows(self.ctl("schema", "list", "sch_cat")[0])
        self.assertEqual(names[0], "NAME")
        self.assertEqual(sorted(r["NAME"] for r in rows), ["sch_cat.gold", "sch_cat.raw"])
        got = self.json("schema", "get", "sch_cat.raw")
        self.assertEqual(got["name"], "raw")
        self.assertEqual(got["properties"], {"owner": "etl"})
        upd = self.json("schema", "update", "sch_cat.raw", "--new-name", "bronze",
                        "--comment", "renamed")
        self.assertEqual(upd["fullName"], "sch_cat.bronze")
        self.assertEqual(upd["comment"], "renamed")
        self.ctl("schema", "get", "sch_cat.raw", expect=1)
        lst = self.json("schema", "list", "sch_cat", "--all")
        self.assertEqual(sorted(s["fullName"] for s in lst["schemas"]),
                         ["sch_cat.bronze", "sch_cat.gold"])
        out, _ = self.ctl("schema", "delete", "sch_cat.gold")
        self.assertEqual(out, "deleted schema sch_cat.gold\n")
        _, err = self.ctl("schema", "get", "sch_cat.gold", expect=1)
        self.assertTrue(err.startswith("deltactl: NOT_FOUND: "), err)
        _, err = self.ctl("schema", "list", "no_such_catalog", expect=1)
        self.assertIn("NOT_FOUND", err)
        # A catalog with a schema is deleted only with --force.
        _, err = self.ctl("catalog", "delete", "sch_cat", expect=1)
        self.assertRegex(err, r"^deltactl: [A-Z_]+: ")
        self.json("catalog", "get", "sch_cat")
        self.assertEqual(self.json("catalog", "delete", "sch_cat", "--force"), {})
        self.ctl("catalog", "get", "sch_cat", expect=1)

    # ---- credentials and locations ----
    def test_credentials_never_show_secrets(self):
        secrets = {"az_key": "S3cretAccountKey==", "az_sas": "sv=2022&sig=S3cretSas",
                   "az_cli": "S3cretClientSecret", "aws": "S3cretAwsKey", "sess": "S3cretSession"}
        kinds = [
            ("cred_key", ["--azure-account-key", "acct1", secrets["az_key"]], "azure-account-key"),
            ("cred_sas", ["--azure-sas", "acct2", secrets["az_sas"]], "azure-sas"),
            ("cred_cli", ["--azure-client", "tenant-1", "client-1", secrets["az_cli"]],
             "azure-client"),
            ("cred_aws", ["--aws", "AKIAEXAMPLE", secrets["aws"], "--region", "eu-west-1",
                          "--session-token", secrets["sess"]], "aws"),
        ]
        for name, flags, _ in kinds:
            out, _ = self.ctl("credential", "create", name, *flags, "--comment", "c " + name)
            self.assertEqual(kv_lines(out)["name"], name)
            for s in secrets.values():
                self.assertNotIn(s, out)
        got = self.json("credential", "get", "cred_aws")
        self.assertEqual(got["aws"]["accessKeyId"], "AKIAEXAMPLE")
        self.assertEqual(got["aws"]["region"], "eu-west-1")
        self.assertEqual(got["comment"], "c cred_aws")
        got = self.json("credential", "get", "cred_cli")
        self.assertEqual(got["azure"]["client"]["tenantId"], "tenant-1")
        kv = kv_lines(self.ctl("credential", "get", "cred_key")[0])
        self.assertEqual(kv["azure.account_key.account_name"], "acct1")
        out, _ = self.ctl("credential", "list")
        names, rows = table_rows(out)
        self.assertEqual(names[:3], ["NAME", "ID", "TYPE"])
        types = {r["NAME"]: r["TYPE"] for r in rows}
        for name, _, kind in kinds:
            self.assertEqual(types[name], kind)
        lst = self.ctl("--output", "json", "credential", "list", "--all")[0]
        for s in secrets.values():
            self.assertNotIn(s, lst)
        self.assertEqual(len(json.loads(lst)["credentials"]), 4)

        loc = self.json("location", "create", "loc_s3", "s3://bucket/prefix", "--type", "s3",
                        "--credential", "cred_aws", "--description", "the lake")
        self.assertEqual(loc["type"], "S3")
        self.assertEqual(loc["url"], "s3://bucket/prefix")
        self.assertEqual(loc["credential"], "cred_aws")
        kv = kv_lines(self.ctl("location", "create", "loc_local", "file:///tmp/lake",
                               "--type", "local")[0])
        self.assertEqual(kv["type"], "LOCAL")
        self.assertEqual(kv["url"], "file:///tmp/lake")
        names, rows = table_rows(self.ctl("location", "list")[0])
        self.assertEqual(names, ["NAME", "TYPE", "URL", "CREDENTIAL", "CREATED"])
        by = {r["NAME"]: r for r in rows}
        self.assertEqual(by["loc_s3"]["TYPE"], "S3")
        self.assertEqual(by["loc_s3"]["CREDENTIAL"], "cred_aws")
        self.assertEqual(by["loc_local"]["URL"], "file:///tmp/lake")
        got = self.json("location", "get", "loc_s3")
        self.assertEqual(got["description"], "the lake")
        self.assertEqual(self.ctl("location", "delete", "loc_s3")[0], "deleted location loc_s3\n")
        self.assertEqual(self.json("location", "delete", "loc_local"), {})
        _, err = self.ctl("location", "get", "loc_s3", expect=1)
        self.assertTrue(err.startswith("deltactl: NOT_FOUND: "), err)
        for name, _, _ in kinds:
            self.ctl("credential", "delete", name)
        _, err = self.ctl("credential", "get", "cred_aws", expect=1)
        self.assertTrue(err.startswith("deltactl: NOT_FOUND: "), err)
        self.assertEqual(self.json("credential", "list").get("credentials", []), [])

    # ---- addressing and tokens ----
    def test_bad_or_missing_token_is_unauthenticated(self):
        code, out, err = run(["catalog", "list"], server=self.target, token="not-the-token")
        self.assertEqual(code, 1)
        self.assertEqual(out, "")
        self.assertTrue(err.startswith("deltactl: UNAUTHENTICATED: "), err)
        empty = tempfile.mkdtemp(prefix="dctl-notoken-")
        try:
            # no token anywhere: deltactl says where one comes from instead of calling
            code, _, err = run(["server", "info"], server=self.target, cwd=empty)
            self.assertEqual(code, 2)
            self.assertIn("DELTAD_TOKEN", err)
        finally:
            shutil.rmtree(empty)

    def test_token_and_server_sources(self):
        work = tempfile.mkdtemp(prefix="dctl-token-")
        try:
            path = os.path.join(work, "tok")
            with open(path, "w") as f:
                f.write(self.token + "\n")
            code, out, err = run(["--token-file", path, "server", "info"], server=self.target)
            self.assertEqual((code, kv_lines(out).get("principal")), (0, "admin"), err)
            code, out, err = run(["server", "info"], server=self.target,
                                 env={"DELTAD_TOKEN": self.token})
            self.assertEqual(code, 0, err)
            code, out, err = run(["server", "info"], env={"DELTAD_TOKEN": self.token,
                                                          "DELTAD_SERVER": self.target})
            self.assertEqual(code, 0, err)
            # --token wins over the environment.
            code, _, err = run(["--token", "wrong", "server", "info"],
                               env={"DELTAD_TOKEN": self.token, "DELTAD_SERVER": self.target})
            self.assertEqual(code, 1)
            self.assertIn("UNAUTHENTICATED", err)
            # ./data/admin.token in the working directory, as deltad writes it.
            os.makedirs(os.path.join(work, "data"))
            shutil.copy(os.path.join(self.srv.data_dir, "admin.token"),
                        os.path.join(work, "data", "admin.token"))
            code, out, err = run(["--server=" + self.target, "--output=json", "server", "info"],
                                 cwd=work)
            self.assertEqual(code, 0, err)
            self.assertEqual(json.loads(out)["principal"], "admin")
        finally:
            shutil.rmtree(work)


def main():
    global DELTACTL, DELTAD
    ap = argparse.ArgumentParser()
    ap.add_argument("--deltactl", required=True)
    ap.add_argument("--deltad")
    args, rest = ap.parse_known_args()
    DELTACTL = os.path.abspath(args.deltactl)
    DELTAD = os.path.abspath(args.deltad) if args.deltad else None
    loader = unittest.TestLoader()
    suite = unittest.TestSuite([loader.loadTestsFromTestCase(Offline)])
    if DELTAD:
        suite.addTests(loader.loadTestsFromTestCase(WithServer))
    result = unittest.TextTestRunner(verbosity=2).run(suite)
    failed = len(result.failures) + len(result.errors)
    print("%d passed, %d failed" % (result.testsRun - failed - len(result.skipped), failed))
    sys.exit(0 if result.wasSuccessful() and result.testsRun > 0 else 1)


if __name__ == "__main__":
    main()
