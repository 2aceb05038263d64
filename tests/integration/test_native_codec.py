"""test_native_codec.py: the native Delta Sharing codec (server/http/native) on a REST pool.

The server runs with `--http-threads 1`: one epoll thread serves every REST connection.
- A QueryTable of a 30,000-file table not read before (its log takes over a second to
  replay here), read slowly by its client, must not stall the other requests of that
  thread: a list call made meanwhile is answered in well under a second (the reply waits
  for its first line and for more lines with its connection suspended, not on the pool
  thread).
- QueryTable's body is decoded once, into the request message: a bad body gets the same
  400 and message as ever, before the table is looked up; the bound on predicate hints,
  which the handler checks, still applies (also before the table is looked up).
- Errors carry the errorCode of the call core's status table: a table with deletion
  vectors asked for without that capability is UNSUPPORTED_OPERATION (400).
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import requests

import dd_harness as h

GEN = os.path.join(h.ROOT, "tests", "bench", "sharing_rest", "gen_table.py")
FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
DV = os.path.join(FIX, "delta-rs-data", "table-with-dv-small")
NFILES = 30000


class NativeCodecPool(h.ServerTest):
    server_args = ["--http-threads", "1"]

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="dd-codec-")
        cls.A = {"Authorization": "Bearer " + cls.server.token}
        B = cls.server.rest
        for path, body in (("/shares", {"name": "s"}), ("/shares/s/schemas", {"name": "m"})):
            r = requests.post(B + path, json=body, headers=cls.A)
            assert r.status_code == 200, r.text
        cls.tables = []
        for name in ("big1", "big2", "slow"):
            table = os.path.join(cls.tmp, name)
            subprocess.run(["/usr/bin/python3", GEN, table, str(NFILES), "10"], check=True)
            r = requests.post(B + "/shares/s/schemas/m/tables",
                              json={"name": name, "url": "file://" + table}, headers=cls.A)
            assert r.status_code == 200, r.text
        r = requests.post(B + "/shares/s/schemas/m/tables",
                          json={"name": "dv", "url": "file://" + DV}, headers=cls.A)
        assert r.status_code == 200, r.text
        cls.base = B + "/shares/s/schemas/m/tables/"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def query(self, table, body):
        return requests.post(self.base + table + "/query", data=body, headers=self.A)

    # ---- a streamed reply does not hold the pool thread ----------------------------------

    def slow_query(self, table, got, stop):
        """POSTs a query on a raw socket and reads it 4 KiB at a time, slowly."""
        host, port = self.server.rest.split("//")[1].split("/")[0].split(":")
        s = socket.create_connection((host, int(port)))
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        path = "/" + self.base.split("/", 3)[3] + table + "/query"
        s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                   "Content-Length: 2\r\n\r\n{}" % (path, self.server.token)).encode())
        try:
            while not stop.is_set():
                b = s.recv(4096)
                if not b:
                    break
                got.append(len(b))
                time.sleep(0.02)
        finally:
            s.close()

    def test_slow_streamed_reply_does_not_stall_the_pool(self):
        got, stop = [], threading.Event()
        t = threading.Thread(target=self.slow_query, args=("slow", got, stop))
        t.start()
        try:
            # the reply must be streaming before the pool is probed (a loaded machine with
            # sanitizers can take seconds to open the table)
            start = time.monotonic() + 60
            while not got and time.monotonic() < start:
                time.sleep(0.05)
            self.assertTrue(got, "the streamed reply sent nothing in 60 s")
            worst = 0.0
            deadline = time.monotonic() + 4
            n = 0
            while time.monotonic() < deadline:
                t0 = time.monotonic()
                r = requests.get(self.server.rest + "/shares", headers=self.A, timeout=30)
                worst = max(worst, time.monotonic() - t0)
                self.assertEqual(r.status_code, 200, r.text)
                n += 1
                time.sleep(0.05)
            streamed = sum(got)
            self.assertTrue(got, "the streamed reply sent nothing")
        finally:
            stop.set()
            t.join()
        # the server is still whole: the same table answers completely
        r = self.query("slow", "{}")
        self.assertEqual(r.status_code, 200)
        self.assertEqual(len(r.text.splitlines()), NFILES + 2)
        # Every list call was answered while the slow reply was still being streamed (its
        # reader had not got it all), and none waited long: a pool thread held by the stream
        # would make a call wait for the rest of the reply (tens of seconds at this pace), so
        # the bound is loose enough for a loaded machine and not a speed measurement.
        self.assertLess(streamed, len(r.content), "the slow reply ended before the list calls")
        self.assertGreater(n, 10)
        self.assertLess(worst, 2.5, "a list call waited %.2f s behind a streamed reply "
                        "(%d calls)" % (worst, n))

    def test_streamed_replies_complete_on_the_pool(self):
        """Two big queries at once on the one pool thread both come back whole."""
        out = {}

        def run(name):
            out[name] = self.query(name, '{"limitHint": 1000000}')

        ts = [threading.Thread(target=run, args=(n,)) for n in ("big1", "big2")]
        for t in ts:
            t.start()
        for t in ts:
            t.join()
        for name, r in out.items():
            self.assertEqual(r.status_code, 200, r.text)
            self.assertEqual(r.headers["Delta-Table-Version"], "0")
            lines = r.text.splitlines()
            self.assertIn("protocol", json.loads(lines[0]))
            self.assertEqual(len(lines), NFILES + 2)

    # ---- QueryTable's body, decoded once ---------------------------------------------------

    def assert_bad_body(self, body, message, table="big1"):
        r = self.query(table, body)
        self.assertEqual(r.status_code, 400, r.text)
        self.assertEqual(r.headers["Content-Type"], "application/json; charset=utf-8")
        self.assertEqual(r.json(), {"errorCode": "INVALID_PARAMETER_VALUE", "message": message})

    def test_bad_bodies_keep_their_messages(self):
        cases = [
            ('{"limitHint": "x"}', "Invalid QueryTable request: field 'limitHint' must be an integer"),
            ('{"version": true}', "Invalid QueryTable request: field 'version' must be an integer"),
            ('{"timestamp": 5}', "Invalid QueryTable request: field 'timestamp' must be a string"),
            ('{"predicateHints": "a"}',
             "Invalid QueryTable request: field 'predicateHints' must be an array of strings"),
            ('{"predicateHints": [1]}',
             "Invalid QueryTable request: field 'predicateHints' must be a string"),
            ('{"includeRefreshToken": 1}',
             "Invalid QueryTable request: field 'includeRefreshToken' must be a boolean"),
            ('{"includeHistoricalProtocol": "yes"}',
             "Invalid QueryTable request: field 'includeHistoricalProtocol' must be a boolean"),
            ('[1]', "Invalid QueryTable request: the body must be a JSON object"),
            ('{"limitHint": -1}', "limitHint cannot be negative."),
            ('{"version": "-2"}', "table version cannot be negative."),
            ('{"endingVersion": -1}', "endingVersion cannot be negative."),
            ('{"maxFiles": 0}', "maxFiles must be positive."),
        ]
        for body, message in cases:
            with self.subTest(body=body):
                self.assert_bad_body(body, message)
                # decoded before the table is looked up
                self.assert_bad_body(body, message, table="nosuch")
        r = self.query("big1", '{"a": 1, "a": 2}')
        self.assertEqual(r.status_code, 400)
        self.assertTrue(r.json()["message"].startswith("Invalid QueryTable request: "), r.text)

    def test_engine_errors_keep_their_codes(self):
        r = self.query("dv", "{}")
        self.assertEqual(r.status_code, 400, r.text)
        self.assertEqual(r.json()["errorCode"], "UNSUPPORTED_OPERATION", r.text)
        self.assertTrue(r.json()["message"].startswith("Unsupported Delta Table Properties: "), r.text)
        self.assertIn("readerfeatures=deletionvectors", r.json()["message"])
        r = requests.head(self.base + "nosuch/version", headers=self.A)
        self.assertEqual(r.status_code, 404)
        self.assertEqual(r.content, b"")

    def test_hint_bounds_still_apply(self):
        too_many = json.dumps({"predicateHints": ["id = %d" % i for i in range(101)]})
        msg = "predicateHints: 101 hints; at most 100 are accepted"
        self.assert_bad_body(too_many, msg)
        self.assert_bad_body(too_many, msg, table="nosuch")
        self.assert_bad_body(json.dumps({"predicateHints": ["x" * 4097]}),
                             "predicateHints: a hint of more than 4096 bytes", table="nosuch")
        self.assert_bad_body(json.dumps({"jsonPredicateHints": "x" * (64 * 1024 + 1)}),
                             "jsonPredicateHints: more than 65536 bytes")
        ok = json.dumps({"predicateHints": ["part = 'p001'"] * 100, "limitHint": 1})
        r = self.query("big1", ok)
        self.assertEqual(r.status_code, 200, r.text)
        # an empty body and whitespace are an empty query
        for body in ("", "  \n"):
            r = self.query("big1", body)
            self.assertEqual(r.status_code, 200, r.text)
            self.assertEqual(len(r.text.splitlines()), NFILES + 2)


if __name__ == "__main__":
    h.main()
