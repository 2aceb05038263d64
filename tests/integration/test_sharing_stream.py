"""test_sharing_stream.py: query and changes replies over REST are streamed, not built whole.

A generated log-only table of 30,000 files (a ~15 MB NDJSON answer, far above the 1 MiB the
server queues) is queried: the reply is chunked (no Content-Length), complete and in
order; a client that reads a little and hangs up does not hurt the server (it keeps
answering, and at shutdown no handler thread or buffer is left: the sanitizers would
report it); errors found before the first line are still ordinary 4xx replies.
"""
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import urllib.parse

import requests

import dd_harness as h

GEN = os.path.join(h.ROOT, "tests", "bench", "sharing_rest", "gen_table.py")
NFILES = 30000


class SharingStream(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="dd-stream-")
        table = os.path.join(cls.tmp, "big")
        subprocess.run(["/usr/bin/python3", GEN, table, str(NFILES), "10"], check=True)
        # turn the change data feed on, so changes can be read from version 0
        commit = os.path.join(table, "_delta_log", "%020d.json" % 0)
        with open(commit) as f:
            acts = [json.loads(l) for l in f if l.strip()]
        for a in acts:
            if "metaData" in a:
                a["metaData"].setdefault("configuration", {})["delta.enableChangeDataFeed"] = "true"
        with open(commit, "w") as f:
            f.write("".join(json.dumps(a) + "\n" for a in acts))
        A = {"Authorization": "Bearer " + cls.server.token}
        B = cls.server.rest
        for path, body in (("/shares", {"name": "s"}), ("/shares/s/schemas", {"name": "m"}),
                           ("/shares/s/schemas/m/tables",
                            {"name": "big", "url": "file://" + table, "historyShared": True})):
            r = requests.post(B + path, json=body, headers=A)
            assert r.status_code == 200, r.text
        cls.A = A
        cls.q = B + "/shares/s/schemas/m/tables/big/query"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def test_big_query_is_chunked_and_complete(self):
        r = requests.post(self.q, data="{}", headers=self.A, stream=True)
        self.assertEqual(r.status_code, 200)
        self.assertEqual(r.headers.get("Transfer-Encoding"), "chunked")
        self.assertNotIn("Content-Length", r.headers)
        self.assertEqual(r.headers["Delta-Table-Version"], "0")
        lines = [json.loads(l) for l in r.iter_lines() if l]
        self.assertIn("protocol", lines[0])
        self.assertIn("metaData", lines[1])
        files = [l["file"] for l in lines[2:]]
        self.assertEqual(len(files), NFILES)
        self.assertEqual(len({f["id"] for f in files}), NFILES)

    def test_changes_stream_too(self):
        u = self.q.replace("/query", "/changes") + "?startingVersion=0"
        r = requests.get(u, headers=self.A)
        self.assertEqual(r.status_code, 200, r.text)
        self.assertEqual(r.headers.get("Transfer-Encoding"), "chunked")
        adds = [l for l in r.text.splitlines() if l.startswith('{"add"')]
        self.assertEqual(len(adds), NFILES)

    def test_errors_before_the_first_line_are_plain_replies(self):
        r = requests.post(self.q, data='{"version": 5}', headers=self.A)
        self.assertEqual(r.status_code, 400, r.text)
        self.assertEqual(r.json()["errorCode"], "INVALID_PARAMETER_VALUE")
        self.assertIn("Content-Length", r.headers)
        r = requests.post(self.q.replace("/big/", "/nope/"), data="{}", headers=self.A)
        self.assertEqual(r.status_code, 404)

    def test_client_hangs_up_mid_stream(self):
        u = urllib.parse.urlparse(self.q)
        for _ in range(5):
            s = socket.create_connection((u.hostname, u.port))
            s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n"
                       "Content-Length: 2\r\n\r\n{}" % (u.path, self.A["Authorization"])).encode())
            got = s.recv(65536)
            self.assertIn(b"200", got.split(b"\r\n", 1)[0])
            s.close()  # gone with megabytes unsent: the producer must stop
        time.sleep(0.3)
        r = requests.post(self.q, data='{"maxFiles": 3}', headers=self.A)
        self.assertEqual(r.status_code, 200)
        self.assertEqual(len([l for l in r.text.splitlines() if l.startswith('{"file"')]), 3)


if __name__ == "__main__":
    h.main()
