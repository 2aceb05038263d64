"""test_sharing_cli.py: deltactl's share, recipient and grant commands against a real
deltad, ending with a recipient reading the share through the profile file deltactl
wrote (what a Delta Sharing client does with it)."""
import json
import os
import stat
import subprocess
import tempfile

import requests

import dd_harness as h

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
TABLE = os.path.join(FIX, "delta-rs-data", "delta-0.8.0-partitioned")


class SharingCli(h.ServerTest):
    def ctl(self, *args, expect=0):
        p = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                            "--token", self.server.token] + list(args),
                           capture_output=True, text=True, cwd=self.dir)
        self.assertEqual(p.returncode, expect, (args, p.stdout, p.stderr))
        return p.stdout

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="dd-ctl-")

    def test_share_lifecycle_and_profile(self):
        self.ctl("share", "create", "cli", "--description", "from the CLI")
        self.ctl("share", "add-schema", "cli", "s")
        self.ctl("share", "add-table", "cli", "s", "t", "--url", "file://" + TABLE)
        self.ctl("share", "add-table", "cli", "s", "t", "--url", "file://" + TABLE, expect=1)
        got = json.loads(self.ctl("--output", "json", "share", "get", "cli"))
        self.assertEqual(got["schemas"][0]["tables"][0]["name"], "t")
        self.ctl("recipient", "create", "ann", "--lifetime", "600")
        prof_path = os.path.join(self.dir, "ann.share")
        self.assertEqual(stat.S_IMODE(os.stat(prof_path).st_mode), 0o600)
        with open(prof_path) as f:
            prof = json.load(f)
        self.assertEqual(prof["shareCredentialsVersion"], 1)
        hd = {"Authorization": "Bearer " + prof["bearerToken"]}
        self.assertEqual(requests.get(prof["endpoint"] + "/shares", headers=hd).json(), {"items": []})
        self.ctl("grant", "add", "cli", "ann")
        self.assertIn("ann", self.ctl("grant", "list", "--share", "cli"))
        r = requests.get(prof["endpoint"] + "/shares/cli/all-tables", headers=hd).json()
        self.assertEqual([t["name"] for t in r["items"]], ["t"])
        q = requests.post(prof["endpoint"] + "/shares/cli/schemas/s/tables/t/query", json={},
                          headers=hd)
        self.assertEqual(q.status_code, 200)
        out = json.loads(self.ctl("--output", "json", "share", "update-table", "cli", "s", "t",
                                  "--history", "true", "--start-version", "0"))
        self.assertTrue(out["historyShared"])
        self.ctl("share", "update", "cli", "--new-name", "Cli2")
        r = requests.get(prof["endpoint"] + "/shares", headers=hd).json()
        self.assertEqual([s["name"] for s in r["items"]], ["Cli2"])  # the grant followed
        self.ctl("share", "update", "cli2", "--new-name", "cli")
        self.ctl("recipient", "rotate", "ann", "--profile", "new.share")
        self.assertEqual(requests.get(prof["endpoint"] + "/shares", headers=hd).status_code, 401)
        self.ctl("grant", "remove", "cli", "ann")
        self.ctl("share", "remove-table", "cli", "s", "t")
        self.ctl("share", "remove-schema", "cli", "s")
        self.ctl("share", "delete", "cli")
        self.ctl("recipient", "delete", "ann")
        self.ctl("share", "get", "cli", expect=1)
        self.ctl("share", "add-table", "x", "s", "t", expect=2)


if __name__ == "__main__":
    h.main()
