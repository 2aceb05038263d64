"""test_pg_replicas.py: three deltad replicas on one PostgreSQL (Debian's, started here by
dd_pg.py), each with its own data directory and the same catalog, key files and admin token.

- Writes through one replica are seen by the others at once: a recipient token made on A
  works on B and C, a recipient deleted on B stops on A and C, a file URL signed by A is
  served by B (the shared --url-signing-key-file).
- kill -9 of one replica in the middle of a write load: the others go on, and every write
  a replica acknowledged (HTTP 200) is in the catalog afterwards.
- PostgreSQL restarted during a load: calls fail with 503 (UNAVAILABLE) meanwhile, none
  hangs (every call returns within the bound below), and every replica recovers.
"""
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import unittest

import requests

import dd_harness as h
import dd_pg

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
TABLE = os.path.join(FIX, "delta-rs-data", "simple_table")
ADMIN = "replica-admin-token-" + "7" * 24
CALL_BOUND_S = 25  # no call may take longer, whatever the database is doing


class Replicas(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        h.stubs_dir()
        cls.pg = dd_pg.Postgres().start()
        cls.keys = tempfile.mkdtemp(prefix="dd-replica-keys-")
        cls.servers = []
        cls.servers = [cls.start_replica() for _ in range(3)]
        cls.A, cls.B, cls.C = cls.servers
        cls.H = {"Authorization": "Bearer " + ADMIN}

    @classmethod
    def start_replica(cls, data_dir=None):
        args = ["--catalog", cls.pg.url, "--catalog-schema", "replicas", "--catalog-pool", "4",
                "--secret-key-file", h.make_key_file(os.path.join(cls.keys, "secret.key")),
                "--url-signing-key-file", h.make_key_file(os.path.join(cls.keys, "url.key"))]
        # check (a round trip per call) unless the test asks for notify, deltad's default
        args += ["--catalog-cache", os.environ.get("DD_CATALOG_CACHE", "check")]
        s = h.Server(data_dir=data_dir, env={"DELTAD_ADMIN_TOKEN": ADMIN}, extra_args=args)
        s.owns_dir = True
        return s.start()

    @classmethod
    def tearDownClass(cls):
        try:
            for s in cls.servers:
                if s.proc is not None:
                    code = s.stop()
                    assert code == 0, "deltad exited with %r after SIGTERM" % code
        finally:
            for s in cls.servers:
                s.cleanup()
            cls.pg.cleanup()
            shutil.rmtree(cls.keys, ignore_errors=True)

    def call(self, s, method, path, body=None, token=ADMIN):
        hd = {"Authorization": "Bearer " + token}
        return requests.request(method, s.rest + path, json=body, headers=hd, timeout=CALL_BOUND_S)

    def ok(self, s, method, path, body=None):
        r = self.call(s, method, path, body)
        self.assertEqual(r.status_code, 200, (path, r.text))
        return r.json()

    # ---- bad configuration: refused with a clear message -------------------------------------

    def deltad_fails(self, args, config=None):
        d = tempfile.mkdtemp(prefix="dd-replica-bad-")
        try:
            if config is not None:
                with open(os.path.join(d, "deltad.conf"), "w") as f:
                    f.write(config)
                args = args + ["--config", os.path.join(d, "deltad.conf")]
            r = subprocess.run([os.environ["DELTAD_BIN"], "--data-dir", os.path.join(d, "data"),
                                "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"]
                               + args, capture_output=True, text=True, timeout=60)
            return r.returncode, r.stderr
        finally:
            shutil.rmtree(d, ignore_errors=True)

    def test_0_bad_configuration(self):
        key = h.make_key_file(os.path.join(self.keys, "secret.key"))
        code, err = self.deltad_fails(["--catalog", self.pg.url])
        self.assertEqual(code, 2, err)
        self.assertIn("needs --secret-key-file and --url-signing-key-file", err)
        code, err = self.deltad_fails(["--catalog", self.pg.url, "--secret-key-file", key,
                                       "--url-signing-key-file", "/nonexistent/url.key"])
        self.assertEqual(code, 1, err)
        self.assertIn("/nonexistent/url.key", err)
        code, err = self.deltad_fails(["--catalog", "mysql://x"])
        self.assertEqual(code, 2, err)
        self.assertIn("expected a postgresql:// URL", err)
        # a database that does not answer: refused at start within the connect timeout
        t0 = time.time()
        code, err = self.deltad_fails([], "catalog = postgresql://deltad@127.0.0.1:1/postgres\n"
                                      "secret-key-file = %s\nurl-signing-key-file = %s\n" % (key, key))
        self.assertEqual(code, 1, err)
        self.assertIn("catalog database unavailable", err)
        self.assertLess(time.time() - t0, 30)
        code, err = self.deltad_fails(["--catalog", self.pg.url, "--secret-key-file", key,
                                       "--url-signing-key-file", key, "--restore-from", "/tmp"])
        self.assertEqual(code, 1, err)
        self.assertIn("pg_restore", err)

    # ---- one catalog, seen at once everywhere ----------------------------------------------

    def at_once(self, check):
        """Runs check (it asserts). With --catalog-cache notify a change made through another
        replica is seen once its notification arrived (docs/scaling.md: milliseconds), so
        there check may be retried for up to 1 s; with check it must hold at once."""
        until = time.time() + (1.0 if os.environ.get("DD_CATALOG_CACHE") == "notify" else 0)
        while True:
            try:
                return check()
            except AssertionError:
                if time.time() >= until:
                    raise
                time.sleep(0.005)

    def test_1_tokens_and_urls_across_replicas(self):
        A, B, C = self.A, self.B, self.C
        self.ok(A, "POST", "/shares", {"name": "rs"})
        self.ok(A, "POST", "/shares/rs/schemas", {"name": "m"})
        self.ok(A, "POST", "/shares/rs/schemas/m/tables", {"name": "t", "url": "file://" + TABLE})
        tok = self.ok(A, "POST", "/recipients", {"name": "eve"})["bearerToken"]
        self.ok(A, "POST", "/recipients/eve/grants/rs", None)
        def valid(s):
            r = self.call(s, "GET", "/shares", token=tok)
            self.assertEqual(r.status_code, 200, r.text)
            self.assertEqual([x["name"] for x in r.json()["items"]], ["rs"])
        for s in (A, B, C):  # made on A, valid on every replica at once
            self.at_once(lambda: valid(s))
        # a URL signed by A is served by B
        q = requests.post(A.rest + "/shares/rs/schemas/m/tables/t/query", data="{}",
                          headers={"Authorization": "Bearer " + tok}, timeout=CALL_BOUND_S)
        self.assertEqual(q.status_code, 200, q.text)
        files = [json.loads(l)["file"] for l in q.text.splitlines() if '"file"' in l]
        self.assertTrue(files)
        url_a = files[0]["url"]
        self.assertTrue(url_a.startswith(A.http_base), url_a)
        url_b = B.http_base + url_a[len(A.http_base):]
        got = requests.get(url_b, timeout=CALL_BOUND_S)
        self.assertEqual(got.status_code, 200)
        self.assertEqual(got.content[:4], b"PAR1")
        # a credential made on B is on C
        self.ok(B, "POST", "/credentials", {"name": "k", "aws": {
            "accessKeyId": "AKIAREPLICA", "secretAccessKey": "replica-secret"}})
        self.at_once(lambda: self.assertEqual(self.ok(C, "GET", "/credentials/k")["name"], "k"))
        # deleted on B: refused on A and C at once
        self.ok(B, "DELETE", "/recipients/eve")
        for s in (A, B, C):
            self.at_once(lambda: self.assertEqual(
                self.call(s, "GET", "/shares", token=tok).status_code, 401))
        # a name taken through one replica is taken on all
        self.at_once(lambda: self.assertEqual(
            self.call(C, "POST", "/shares", {"name": "RS"}).status_code, 409))
        # backup is PostgreSQL's job: refused, nothing written; metrics say where the catalog is
        bdir = os.path.join(self.keys, "backup")
        r = self.call(A, "POST", "/admin/backup", {"dir": bdir})
        self.assertEqual(r.status_code, 501, r.text)
        self.assertIn("pg_dump", r.json()["message"])
        self.assertFalse(os.path.exists(bdir))
        m = requests.get(A.http_base + "/metrics", headers=self.H, timeout=CALL_BOUND_S).text
        self.assertIn("deltad_catalog_postgresql 1", m)
        self.assertNotIn("deltad_lmdb_map_size_bytes", m)
        # one audit log: the changes made through A and through B, read on C
        ev = self.ok(C, "GET", "/audit/events?kind=admin_change&max_results=1000")["events"]
        acts = [(e["action"], e.get("object", "")) for e in ev]
        self.assertIn(("CreateShare", "name=rs"), acts)        # through A
        self.assertIn(("CreateCredential", "name=k"), acts)    # through B
        self.assertIn(("DeleteRecipient", "name=eve"), acts)   # through B
        self.assertEqual(len({e["id"] for e in ev}), len(ev))

    # ---- kill -9 one replica mid-load --------------------------------------------------------

    def load(self, writers, prefix, n, acked, errors, stop=None):
        """Each writer replica creates catalogs prefix-<w>-<i>; acknowledged names go to
        acked, other outcomes (status or exception name) to errors with their duration."""
        def run(w, s):
            for i in range(n):
                if stop is not None and stop.is_set():
                    return
                name = "%s_%d_%04d" % (prefix, w, i)
                t0 = time.time()
                try:
                    r = self.call(s, "POST", "/catalogs", {"name": name})
                    code = r.status_code
                except requests.RequestException as e:
                    code = type(e).__name__
                took = time.time() - t0
                if code == 200:
                    acked.append(name)
                else:
                    errors.append((s, code, took, name))
        ts = [threading.Thread(target=run, args=(w, s)) for w, s in enumerate(writers)]
        for t in ts:
            t.start()
        return ts

    def all_catalogs(self, s):
        names, token = [], ""
        while True:
            r = self.ok(s, "GET", "/catalogs?maxResults=1000&pageToken=" + token)
            names += [c["name"] for c in r.get("catalogs", [])]
            token = r.get("nextPageToken", "")
            if not token:
                return names

    def test_2_kill_one_replica_mid_load(self):
        acked, errors = [], []
        ts = self.load([self.A, self.B, self.C], "k", 150, acked, errors)
        while len(acked) < 60:
            time.sleep(0.05)
        self.B.proc.send_signal(signal.SIGKILL)  # B dies with calls in flight
        self.B.proc.wait()
        self.B.proc = None
        for t in ts:
            t.join()
        # only B's calls may fail (connection errors), A's and C's all succeed
        self.assertTrue(all(s is self.B for s, _, _, _ in errors), errors[:5])
        self.assertEqual(len([a for a in acked if a.startswith("k_0_")]), 150)
        self.assertEqual(len([a for a in acked if a.startswith("k_2_")]), 150)
        on_c = set(self.all_catalogs(self.C))
        self.assertEqual([a for a in acked if a not in on_c], [])
        # B comes back on its data directory and sees everything too
        i = self.servers.index(self.B)
        self.servers[i] = type(self).B = self.start_replica(self.B.data_dir)
        self.B = self.servers[i]
        self.assertTrue(set(acked) <= set(self.all_catalogs(self.B)))

    # ---- PostgreSQL restarted under load -------------------------------------------------

    def test_3_database_restart_under_load(self):
        acked, errors = [], []
        stop = threading.Event()
        ts = self.load([self.A, self.B, self.C], "r", 100000, acked, errors, stop)
        while len(acked) < 30:
            time.sleep(0.05)
        before = len(acked)
        # gRPC too: GetCatalog through B in a loop while the database is down
        grpc_codes, grpc_stop = [], threading.Event()

        def grpc_probe():
            import grpc
            h.stubs_dir()
            from deltad.catalog.v1 import catalog_pb2 as c, catalog_pb2_grpc as cg
            stub = cg.CatalogServiceStub(self.B.channel())
            md = (("authorization", "Bearer " + ADMIN),)
            while not grpc_stop.is_set():
                t0 = time.time()
                try:
                    stub.GetCatalog(c.GetCatalogRequest(name="r_0_0000"), metadata=md,
                                    timeout=CALL_BOUND_S)
                    grpc_codes.append(("OK", time.time() - t0))
                except grpc.RpcError as e:
                    grpc_codes.append((e.code().name, time.time() - t0))
                time.sleep(0.02)
        probe = threading.Thread(target=grpc_probe)
        probe.start()
        self.pg.restart(down_seconds=3)
        restarted = time.time()
        # every replica recovers: writes succeed again on each within seconds
        deadline = restarted + 30
        while time.time() < deadline:
            recent = [a for a in acked[before:]]
            if all(any(a.startswith("r_%d_" % w) for a in recent) for w in range(3)) and \
                    len(acked) > before + 30:
                break
            time.sleep(0.2)
        stop.set()
        grpc_stop.set()
        probe.join(CALL_BOUND_S + 5)
        self.assertFalse(probe.is_alive(), "a gRPC call hung")
        self.assertIn("UNAVAILABLE", {c for c, _ in grpc_codes}, grpc_codes[:5])
        self.assertEqual({c for c, _ in grpc_codes} - {"OK", "UNAVAILABLE"}, set())
        self.assertEqual(grpc_codes[-1][0], "OK")  # recovered
        self.assertLess(max(t for _, t in grpc_codes), CALL_BOUND_S)
        for t in ts:
            t.join(CALL_BOUND_S + 5)
            self.assertFalse(t.is_alive(), "a call hung")
        # while it was down, calls failed with 503 (UNAVAILABLE) and none hung
        self.assertTrue(errors, "no call failed while PostgreSQL was down")
        self.assertEqual(sorted({code for _, code, _, _ in errors}), [503], errors[:5])
        self.assertLess(max(took for _, _, took, _ in errors), CALL_BOUND_S)
        for w in range(3):
            self.assertTrue(any(a.startswith("r_%d_" % w) for a in acked[before:]),
                            "replica %d did not recover" % w)
        on_a = set(self.all_catalogs(self.A))
        self.assertEqual([a for a in acked if a not in on_a], [])
        for s in self.servers:  # and each serves reads afterwards
            self.assertEqual(self.call(s, "GET", "/catalogs?maxResults=1").status_code, 200)
        r = self.call(self.A, "POST", "/catalogs", {"name": "after_restart"})
        self.assertEqual(r.status_code, 200)
        print("restart: %d calls failed with 503 (longest %.2f s), %d acknowledged writes kept"
              % (len(errors), max(t for _, _, t, _ in errors), len(acked)))


if __name__ == "__main__":
    h.main()
