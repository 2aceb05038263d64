#!/usr/bin/python3
"""test_audit.py: the audit log. Two recipients read shared tables through the official
delta-sharing client (delta_sharing.load_as_pandas, from build-test/venv: scripts/peers.sh);
`deltactl audit list` and the REST API list exactly those reads (recipient, share, schema,
table, version, files signed), and every administrator change made, never a token."""
import json
import os
import subprocess
import tempfile
import time

import dd_harness as h
from dd_harness import ServerTest

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
DAT = os.path.join(FIX, "dat", "reader_tests", "generated")
VENV = os.environ.get("DD_VENV", os.path.join(h.ROOT, "build-test", "venv"))
READS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "peers", "delta_sharing_reads.py")


def log_files(table):
    """(version, number of live add files) of a DAT table's latest snapshot."""
    log = os.path.join(DAT, table, "delta", "_delta_log")
    live, version = set(), -1
    for name in sorted(os.listdir(log)):
        if not name.endswith(".json"):
            continue
        version = int(name.split(".")[0])
        for line in open(os.path.join(log, name)):
            a = json.loads(line)
            if "add" in a:
                live.add(a["add"]["path"])
            if "remove" in a:
                live.discard(a["remove"]["path"])
    return version, len(live)


class Audit(ServerTest):
    def ok(self, method, path, body=None, token="admin"):
        code, out = self.server.curl(method, path, body, token=token)
        self.assertEqual(code, 200, (path, out))
        return out

    def deltactl(self, *args):
        out = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                              "--token", self.server.token] + list(args),
                             capture_output=True, text=True, timeout=60)
        self.assertEqual(out.returncode, 0, out.stderr)
        return out.stdout

    def test_two_recipients(self):
        python = os.path.join(VENV, "bin", "python")
        inst = subprocess.run(["bash", os.path.join(h.ROOT, "scripts", "peers.sh"), VENV],
                              capture_output=True, text=True)
        self.assertEqual(inst.returncode, 0, "scripts/peers.sh failed: " + inst.stderr)
        tmp = tempfile.mkdtemp(prefix="dd-audit-")
        t0 = int(time.time() * 1000)
        self.ok("POST", "/shares", {"name": "audit_share"})
        self.ok("POST", "/shares/audit_share/schemas", {"name": "s"})
        for t in ("basic_append", "basic_partitioned"):
            self.ok("POST", "/shares/audit_share/schemas/s/tables",
                    {"name": t, "url": "file://" + os.path.join(DAT, t, "delta")})
        profiles, tokens = {}, []
        for r in ("alice", "bob"):
            out = self.ok("POST", "/recipients", {"name": r})
            self.ok("POST", "/recipients/%s/grants/audit_share" % r)
            prof = json.loads(out["profile"])
            tokens.append(prof["bearerToken"])
            profiles[r] = os.path.join(tmp, r + ".share")
            with open(profiles[r], "w") as f:
                json.dump(prof, f)
        reads = [("alice", "basic_append"), ("bob", "basic_append"), ("bob", "basic_partitioned")]
        args = []
        for who, t in reads:
            args += [profiles[who], "audit_share.s." + t]
        out = subprocess.run([python, READS] + args, capture_output=True, text=True, timeout=240)
        self.assertEqual(out.returncode, 0, out.stderr[-3000:])
        self.assertEqual(len(out.stdout.strip().splitlines()), 3, out.stdout)

        # the REST API: exactly the three reads, in order, with version and files signed
        got = self.ok("GET", "/audit/events?kind=data_access")["events"]
        self.assertEqual([(e["principal"], e["table"]) for e in got], reads, got)
        for e, (who, t) in zip(got, reads):
            version, files = log_files(t)
            self.assertEqual((e["share"], e["schema"], e["action"]), ("audit_share", "s", "QueryTable"))
            self.assertEqual(int(e["version"]), version, e)
            self.assertEqual(int(e["files"]), files, e)
            self.assertGreaterEqual(int(e["timeMs"]), t0)
            self.assertEqual(len(e["requestId"]), 16)

        # deltactl audit list: --recipient, --since, --limit and the output contract
        alice = [json.loads(l) for l in self.deltactl("audit", "list", "--recipient", "alice",
                                                      "--output", "jsonl").splitlines()]
        self.assertEqual([(e["principal"], e["table"]) for e in alice], [reads[0]])
        bob = json.loads(self.deltactl("audit", "list", "--recipient", "bob", "--output", "json"))
        self.assertEqual([e["table"] for e in bob["events"]], ["basic_append", "basic_partitioned"])
        self.assertEqual(self.deltactl("audit", "list", "--since", "2999-01-01T00:00:00Z",
                                       "--output", "jsonl"), "")
        one = self.deltactl("audit", "list", "--limit", "1", "--output", "jsonl").splitlines()
        self.assertEqual(len(one), 1)
        csv = self.deltactl("audit", "list", "--recipient", "bob", "--output", "csv").splitlines()
        self.assertEqual(len(csv), 3, csv)  # header and two rows
        table = self.deltactl("audit", "list", "--kind", "data_access")
        self.assertIn("audit_share.s.basic_partitioned@", table)

        # the administrator's changes, oldest first; no token anywhere in the log
        changes = self.ok("GET", "/audit/events?kind=admin_change")["events"]
        acts = [(e["action"], e.get("object", "")) for e in changes if int(e["timeMs"]) >= t0]
        self.assertIn(("CreateShare", "name=audit_share"), acts)
        self.assertIn(("CreateRecipient", "name=alice"), acts)
        self.assertTrue(any(a == "AddTableToShare" or a.startswith("Add") for a, _ in acts), acts)
        self.assertEqual(len([a for a, _ in acts if a.startswith("Grant") or a.startswith("Create")
                              and "Recipient" in a]), 4, acts)
        everything = json.dumps(self.ok("GET", "/audit/events?max_results=1000"))
        for tok in tokens + [self.server.token]:
            self.assertNotIn(tok, everything)
        # paging: one event per page walks the same events
        seen, token = [], ""
        while True:
            page = self.ok("GET", "/audit/events?kind=data_access&max_results=1&page_token=" + token)
            seen += [e["id"] for e in page.get("events", [])]
            token = page.get("nextPageToken", "")
            if not token:
                break
        self.assertEqual(seen, [e["id"] for e in got])
        # recipients cannot read the audit log
        code, _ = self.server.curl("GET", "/audit/events", token=tokens[0])
        self.assertEqual(code, 403)


    def test_change_names_object_ids(self):
        # written in the change's own transaction: a create names the id it made, a delete
        # the id it removed (the same object), a failed create nothing
        cat = self.ok("POST", "/catalogs", {"name": "audited_cat"})
        code, _ = self.server.curl("POST", "/catalogs", {"name": "AUDITED_CAT"})
        self.assertEqual(code, 409)
        code, _ = self.server.curl("DELETE", "/catalogs/audited_cat")
        self.assertEqual(code, 200)
        evs = [e for e in self.ok("GET", "/audit/events?kind=admin_change&max_results=1000")["events"]
               if "audited_cat" in e.get("object", "").lower()]
        self.assertEqual([(e["action"], e.get("idAfter", ""), e.get("idBefore", "")) for e in evs],
                         [("CreateCatalog", cat["id"], ""), ("DeleteCatalog", "", cat["id"])], evs)

if __name__ == "__main__":
    h.main()
