"""test_readme_tour.py: runs the README's five-minute tour, command by command, as a new
user would after `bash scripts/run.sh`.

The tour is read from README.md (the first ```sh block under "## Five-minute tour"), so an
edit of the README that breaks a command fails here. It runs in a scratch folder laid out
like a checkout (build/cmd/deltactl, ./data), against a real deltad started with --demo on
free ports: the fixed addresses of the tour (gRPC 127.0.0.1:50051, REST :8080) are
rewritten to the real ones, and /tmp/ paths go into the scratch folder. A command whose
comment says "refused" must fail; every other command must exit 0. A few outputs are
checked for what the tour promises (the demo catalog, the recipient's query lines).
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import dd_harness as h

README = os.path.join(h.ROOT, "README.md")


def tour_commands():
    """The tour's logical commands (continuation lines joined), without blank lines and
    whole-line comments, each with its trailing comment."""
    with open(README) as f:
        text = f.read()
    m = re.search(r"^## Five-minute tour\n(.*?)^```sh\n(.*?)^```", text, re.S | re.M)
    if not m:
        raise AssertionError("README.md has no ```sh block under '## Five-minute tour'")
    cmds, cur = [], ""
    for line in m.group(2).splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        cur += line + "\n"
        if not line.endswith("\\"):
            cmds.append(cur.rstrip("\n"))
            cur = ""
    return cmds


def comment_of(cmd):
    """The trailing '# ...' comment of a command, outside quotes; '' when none."""
    quote = None
    for i, ch in enumerate(cmd):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or cmd[i - 1] in " \t"):
            return cmd[i + 1:].strip()
    return ""


class ReadmeTour(unittest.TestCase):
    def setUp(self):
        self.work = tempfile.mkdtemp(prefix="dd-tour-")
        os.makedirs(os.path.join(self.work, "build", "cmd"))
        os.makedirs(os.path.join(self.work, "tmp"))
        os.symlink(os.environ["DELTACTL_BIN"], os.path.join(self.work, "build", "cmd", "deltactl"))
        self.server = h.Server(data_dir=os.path.join(self.work, "data"), extra_args=["--demo"])
        self.server.owns_dir = False
        # The demo lays its files relative to the working directory, as run.sh does.
        cwd = os.getcwd()
        os.chdir(self.work)
        try:
            self.server.start()
        finally:
            os.chdir(cwd)

    def tearDown(self):
        try:
            self.assertEqual(self.server.stop(), 0)
        finally:
            self.server.cleanup()
            shutil.rmtree(self.work, ignore_errors=True)

    def rewrite(self, cmd):
        rest = self.server.http_base  # http://127.0.0.1:PORT
        cmd = cmd.replace("http://127.0.0.1:8080", rest)
        cmd = cmd.replace("/tmp/", self.work + "/tmp/")
        return cmd

    def test_tour(self):
        cmds = tour_commands()
        self.assertGreater(len(cmds), 20, "the tour lost most of its commands")
        env = dict(os.environ, DELTAD_SERVER=self.server.grpc_target, HOME=self.work)
        env.pop("DELTAD_TOKEN", None)
        # One bash keeps the tour's exports and aliases; each command reports its status.
        script = ["shopt -s expand_aliases", "cd " + self.work]
        for i, cmd in enumerate(cmds):
            script.append("( exit 0 )")
            script.append(self.rewrite(cmd))
            script.append("printf \"\\n@@tour %%s %d\\n\" $?" % i)
        out = subprocess.run(["bash", "-c", "\n".join(script)], env=env, cwd=self.work,
                             capture_output=True, text=True, timeout=240)
        status = {}
        chunks = {}
        start = 0
        lines = out.stdout.splitlines()
        for n, line in enumerate(lines):
            m = re.match(r"^@@tour (\d+) (\d+)$", line)
            if m:
                status[int(m.group(2))] = int(m.group(1))
                chunks[int(m.group(2))] = "\n".join(lines[start:n])
                start = n + 1
        self.assertEqual(len(status), len(cmds), "the tour stopped early:\n" + out.stdout + out.stderr)
        for i, cmd in enumerate(cmds):
            if "refused" in comment_of(cmd):
                self.assertNotEqual(status[i], 0, "tour command should be refused: " + cmd)
            else:
                self.assertEqual(status[i], 0, "tour command failed: %s\n--- output:\n%s\n--- stderr:\n%s"
                                 % (cmd, chunks[i], out.stderr))
        joined = dict(zip(cmds, (chunks[i] for i in range(len(cmds)))))
        # What the tour promises, checked on its own output.
        lists = [o for c, o in joined.items() if c.startswith("deltactl catalog list")]
        self.assertTrue(lists and "demo" in lists[0], "catalog list shows no demo catalog")
        queries = [o for c, o in joined.items() if "/query" in c]
        self.assertTrue(queries, "the tour has no recipient query")
        lines = [json.loads(l) for l in queries[0].splitlines() if l.strip()]
        self.assertIn("protocol", lines[0])
        self.assertIn("metaData", lines[1])
        files = [l["file"] for l in lines if "file" in l]
        self.assertTrue(files, "the Lisbon query returned no file")
        for f in files:
            self.assertTrue(f["url"].startswith(self.server.http_base), f["url"])
        # The signed URL serves a Parquet file.
        body = subprocess.run(["curl", "-sS", "-r", "0-3", files[0]["url"]], capture_output=True,
                              check=True).stdout
        self.assertEqual(body, b"PAR1")
        # The data plane: the filtered scan returns only matching rows, and OPTIMIZE commits.
        scans = [o for c, o in joined.items() if c.startswith("deltactl table scan") and "--where" in c]
        self.assertTrue(scans, "the tour has no filtered scan")
        rows = [l.split(",") for l in scans[0].splitlines() if l.strip()]
        self.assertEqual(rows[0], ["city", "fare"])
        self.assertTrue(rows[1:], "the filtered scan returned no row")
        self.assertTrue(all(float(r[1]) > 20 for r in rows[1:]), rows)
        hist = [o for c, o in joined.items() if c.startswith("deltactl table history lake/trips_copy")]
        self.assertTrue(hist and "OPTIMIZE" in hist[0], "no OPTIMIZE commit in the copy's history")
        # The table group through the server: detail says delta, a dry run says what it would do,
        # a catalog name resolves, the probes answer without a token.
        def out_of(prefix):
            outs = [o for c, o in joined.items() if c.startswith(prefix)]
            self.assertTrue(outs, "the tour has no '%s'" % prefix)
            return outs[0]
        self.assertRegex(out_of("deltactl table detail lake/trips"), r"(?m)^format: +delta$")
        self.assertRegex(out_of("deltactl table vacuum lake/trips --dry-run"),
                         r"^vacuum --dry-run: would delete \d+ files? from ")
        self.assertEqual(len(out_of("deltactl table history lake/trips --limit 1").splitlines()), 2)
        hist_json = json.loads(out_of("deltactl --output json table history lake/trips_copy"))
        self.assertEqual(hist_json[0]["operation"], "CLONE")
        detail = json.loads(out_of("deltactl table detail demo.default.trips"))
        self.assertTrue(detail["location"].endswith("/lake/trips"), detail)
        self.assertEqual(json.loads(out_of("curl -s http://127.0.0.1:8080/healthz")), {"status": "ok"})
        self.assertEqual(json.loads(out_of("curl -s http://127.0.0.1:8080/readyz")), {"status": "ready"})
        # The demo table has no rowTracking feature, so its adds carry no row-tracking fields.
        log = os.path.join(self.work, "lake", "trips", "_delta_log")
        for name in sorted(os.listdir(log)):
            if name.endswith(".json"):
                with open(os.path.join(log, name)) as f:
                    for line in f:
                        add = json.loads(line).get("add")
                        if add:
                            self.assertNotIn("baseRowId", add, name)
                            self.assertNotIn("defaultRowCommitVersion", add, name)
        restored = out_of("deltactl table restore lake/trips_copy --version 0")
        self.assertNotRegex(restored, r"num_restored_files: +0\b", restored)


if __name__ == "__main__":
    h.main()
