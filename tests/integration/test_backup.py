#!/usr/bin/python3
"""test_backup.py: operations. `deltactl admin backup DIR` while a writer creates catalogs,
then `deltad --restore-from DIR` into a new data directory: every object compares equal
(catalogs, schemas, credentials, locations, shares, recipients, grants), the writer's
catalogs are a prefix (one consistent moment), the admin and recipient tokens work, and a
restore into a non-empty directory is refused. SIGHUP re-reads the config file (log level
applies, an option that cannot change is logged as needing a restart) while a streaming call is open,
and the call completes."""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import urllib.request

import dd_harness as h

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
DAT = os.path.join(FIX, "dat", "reader_tests", "generated")


def wait_line(lines, text, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if any(text in l for l in list(lines)):
            return True
        time.sleep(0.05)
    return False


class Backup(h.ServerTest):
    def ok(self, method, path, body=None, server=None, token="admin"):
        code, out = (server or self.server).curl(method, path, body, token=token)
        self.assertEqual(code, 200, (path, out))
        return out

    def snapshot(self, server):
        """Every object, as the REST API shows it (timestamps and ids included)."""
        s = {}
        s["catalogs"] = self.ok("GET", "/catalogs?max_results=1000", server=server).get("catalogs", [])
        s["schemas"] = self.ok("GET", "/schemas?catalog_name=bk_main", server=server).get("schemas", [])
        s["credentials"] = self.ok("GET", "/credentials", server=server).get("credentials", [])
        s["locations"] = self.ok("GET", "/locations", server=server).get("storageLocations", [])
        s["shares"] = [self.ok("GET", "/share-infos/bk_share", server=server)]
        s["recipients"] = [self.ok("GET", "/recipients/bk_reader", server=server)]
        s["grants"] = self.ok("GET", "/grants?share=bk_share", server=server)
        return s

    def test_backup_restore_while_writing(self):
        self.ok("POST", "/catalogs", {"name": "bk_main", "comment": "kept", "properties": {"k": "v"}})
        self.ok("POST", "/schemas", {"name": "s1", "catalog_name": "bk_main", "comment": "c"})
        self.ok("POST", "/credentials", {"name": "bk_aws", "aws": {
            "access_key_id": "AKIABACKUPTEST", "secret_access_key": "never-shown", "region": "us-east-1"}})
        self.ok("POST", "/shares", {"name": "bk_share"})
        self.ok("POST", "/shares/bk_share/schemas", {"name": "s"})
        self.ok("POST", "/shares/bk_share/schemas/s/tables",
                {"name": "t", "url": "file://" + os.path.join(DAT, "basic_append", "delta")})
        prof = json.loads(self.ok("POST", "/recipients", {"name": "bk_reader"})["profile"])
        self.ok("POST", "/recipients/bk_reader/grants/bk_share")

        made, stop = [], threading.Event()

        def writer():
            i = 0
            while not stop.is_set() and i < 2000:
                code, _ = self.server.curl("POST", "/catalogs", {"name": "wr%05d" % i})
                if code != 200:
                    break
                made.append(i)
                i += 1

        t = threading.Thread(target=writer)
        t.start()
        while len(made) < 5:
            time.sleep(0.01)
        tmp = tempfile.mkdtemp(prefix="dd-backup-")
        bdir = os.path.join(tmp, "backup")
        out = subprocess.run([os.environ["DELTACTL_BIN"], "--server", self.server.grpc_target,
                              "--token", self.server.token, "admin", "backup", bdir, "--output", "json"],
                             capture_output=True, text=True, timeout=60)
        n_during = len(made)
        time.sleep(0.2)
        stop.set()
        t.join()
        self.assertEqual(out.returncode, 0, out.stderr)
        info = json.loads(out.stdout)
        self.assertEqual(sorted(info["files"]), ["catalog.mdb/data.mdb", "secret.key", "url_signing.key"])
        self.assertGreater(len(made), n_during, "the writer must run on after the backup")
        before = self.snapshot(self.server)

        # a restore refuses a data directory that holds anything
        busy = os.path.join(tmp, "busy")
        os.makedirs(busy)
        open(os.path.join(busy, "x"), "w").close()
        r = subprocess.run([os.environ["DELTAD_BIN"], "--data-dir", busy, "--restore-from", bdir,
                            "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"],
                           capture_output=True, text=True, timeout=60)
        self.assertNotEqual(r.returncode, 0)
        self.assertIn("is not empty", r.stderr)
        self.assertEqual(os.listdir(busy), ["x"])

        new_dir = os.path.join(tmp, "restored")
        env = {"DELTAD_ADMIN_TOKEN": "must-not-be-used"}
        srv = h.Server(data_dir=new_dir, env=env, extra_args=["--restore-from", bdir],
                       register_locations=False)
        srv.read_token = lambda: self.server.token  # the restored catalog keeps the old admin
        srv.start()
        try:
            self.assertTrue(any("restored the backup" in l for l in srv.stdout_lines), srv.stdout_lines)
            after = self.snapshot(srv)
            # the writer's catalogs: a prefix of what it made, at least what preceded the backup
            wr = sorted(c["name"] for c in after["catalogs"] if c["name"].startswith("wr"))
            self.assertEqual(wr, ["wr%05d" % i for i in range(len(wr))])
            self.assertGreaterEqual(len(wr), 5)
            self.assertLessEqual(len(wr), n_during + 1)
            keep = lambda cats: [c for c in cats if not c["name"].startswith("wr")]
            self.assertEqual(keep(after.pop("catalogs")), keep(before.pop("catalogs")))
            self.assertEqual(after, before)
            # the admin token of the old data directory works, the variable made no new one
            code, _ = srv.curl("GET", "/catalogs", token="must-not-be-used")
            self.assertEqual(code, 401)
            # the recipient's token works: its share, and a query of the table
            ep = prof["endpoint"].replace(self.server.http_base, srv.http_base)
            code, body = srv.curl("GET", ep + "/shares", token=prof["bearerToken"])
            self.assertEqual(code, 200, body)
            self.assertIn("bk_share", json.dumps(body))
            code, body = srv.curl("POST", ep + "/shares/bk_share/schemas/s/tables/t/query", {},
                                  token=prof["bearerToken"])
            self.assertEqual(code, 200, body)
            self.assertEqual(str(body).count('"file"') + str(body).count("'file'"), 2, body)
            # the secrets key came along byte for byte, so credential secrets decrypt
            # (unit.catalog.audit decrypts a backup's credential)
            for k in ("secret.key", "url_signing.key"):
                with open(os.path.join(self.server.data_dir, k), "rb") as a, \
                        open(os.path.join(new_dir, k), "rb") as b:
                    self.assertEqual(a.read(), b.read(), k)
                self.assertEqual(os.stat(os.path.join(new_dir, k)).st_mode & 0o777, 0o600)
            code, body = srv.curl("GET", srv.http_base + "/readyz", token=None)
            self.assertEqual(code, 200, body)
            # the backup itself is audited, on the server that made it
            ev = self.ok("GET", "/audit/events?kind=admin_change&max_results=1000")["events"]
            self.assertIn("Backup", [e["action"] for e in ev])
        finally:
            self.assertEqual(srv.stop(), 0)
            srv.cleanup()
            shutil.rmtree(tmp, ignore_errors=True)


class Sighup(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="dd-sighup-")
        cls.conf = os.path.join(cls.tmp, "deltad.conf")
        with open(cls.conf, "w") as f:
            f.write("log-level = info\nlog-format = json\n")
        cls.server_args = ["--config", cls.conf]
        super().setUpClass()

    @classmethod
    def tearDownClass(cls):
        super().tearDownClass()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_readyz_checks_the_keys(self):
        key = os.path.join(self.server.data_dir, "url_signing.key")
        os.rename(key, key + ".away")
        try:
            code, body = self.server.curl("GET", self.server.http_base + "/readyz", token=None)
            self.assertEqual(code, 503, body)
            self.assertIn("key url_signing.key", body["reason"])
            code, _ = self.server.curl("GET", self.server.http_base + "/healthz", token=None)
            self.assertEqual(code, 200)  # liveness does not depend on it
        finally:
            os.rename(key + ".away", key)
        code, body = self.server.curl("GET", self.server.http_base + "/readyz", token=None)
        self.assertEqual(code, 200, body)

    def requests_logged(self):
        return sum(1 for l in list(self.server.stderr_lines) if '"msg":"request"' in l)

    def test_reload_with_open_stream(self):
        import grpc
        h.stubs_dir()
        from deltad.sharing.v1 import sharing_pb2 as sp, sharing_pb2_grpc as sg
        self.server.curl("POST", "/shares", {"name": "hup"})
        self.server.curl("POST", "/shares/hup/schemas", {"name": "s"})
        self.server.curl("POST", "/shares/hup/schemas/s/tables",
                         {"name": "t", "url": "file://" + os.path.join(DAT, "basic_partitioned", "delta")})
        prof = json.loads(self.server.curl("POST", "/recipients", {"name": "hup_r"})[1]["profile"])
        self.server.curl("POST", "/recipients/hup_r/grants/hup")
        stub = sg.DeltaSharingServiceStub(self.server.channel())
        stream = stub.QueryTable(sp.QueryTableRequest(share="hup", schema="s", table="t"),
                                 metadata=(("authorization", "Bearer " + prof["bearerToken"]),), timeout=30)
        first = next(stream)
        self.assertTrue(first.line)
        # request lines reach stderr from the logger's writer thread (every 20 ms): let the
        # setup calls' lines arrive before counting, or one of them is counted as new below
        time.sleep(0.2)
        n0 = self.requests_logged()
        with open(self.conf, "w") as f:
            f.write("log-level = warn\nlog-format = json\nurl-expiry-seconds = 60\n")
        self.server.proc.send_signal(signal.SIGHUP)
        self.assertTrue(wait_line(self.server.stderr_lines, "url-expiry-seconds changed"), self.server.stderr_lines)
        rest = list(stream)  # the open call completes after the reload
        self.assertGreater(len(rest), 1)
        self.assertEqual(stream.code(), grpc.StatusCode.OK)
        # warn: no more request lines; the server still serves on its old port
        code, _ = self.server.curl("GET", "/catalogs")
        self.assertEqual(code, 200)
        time.sleep(0.2)
        self.assertLessEqual(self.requests_logged(), n0 + 1)  # at most the stream's own line
        # back to info: request lines again
        with open(self.conf, "w") as f:
            f.write("log-level = info\nlog-format = json\n")
        self.server.proc.send_signal(signal.SIGHUP)
        self.assertTrue(wait_line(self.server.stderr_lines, "SIGHUP: log level info"))
        n1 = self.requests_logged()
        self.server.curl("GET", "/catalogs")
        deadline = time.time() + 5
        while self.requests_logged() == n1 and time.time() < deadline:
            time.sleep(0.05)
        self.assertEqual(self.requests_logged(), n1 + 1)


if __name__ == "__main__":
    h.main()
