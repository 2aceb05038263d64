#!/usr/bin/python3
"""test_drain.py: SIGTERM under load. Concurrent gRPC unary CreateCatalog calls and REST
creates on kept-alive connections run while deltad gets SIGTERM. Both ports stop taking
new calls at once: every call acknowledged OK is in the catalog after a restart, no gRPC
call that started before the signal ends CANCELLED, no REST request sent once the server
said it is shutting down is acknowledged as created, and the exit code is 0."""
import http.client
import json
import signal
import tempfile
import threading
import time
import unittest

import grpc

import dd_harness
from dd_harness import Server

GRPC_THREADS = 6
REST_THREADS = 6


class Drain(unittest.TestCase):
    args = []

    def setUp(self):
        dd_harness.stubs_dir()
        from deltad.catalog.v1 import catalog_pb2, catalog_pb2_grpc
        self.pb, self.pbg = catalog_pb2, catalog_pb2_grpc
        self.data = tempfile.mkdtemp(prefix="deltad-drain-")
        self.servers = []

    def tearDown(self):
        for s in self.servers:
            s.cleanup()

    def start(self):
        s = Server(data_dir=self.data, extra_args=self.args).start()
        self.servers.append(s)
        return s

    def grpc_worker(self, srv, tid, stop, out):
        ch = srv.channel()
        stub = self.pbg.CatalogServiceStub(ch)
        i = 0
        while not stop.is_set():
            name = "g%d_%d" % (tid, i)
            i += 1
            t0 = time.time()
            try:
                stub.CreateCatalog(self.pb.CreateCatalogRequest(name=name), metadata=srv.md(),
                                   timeout=20)
                out.append((name, "OK", t0, time.time()))
            except grpc.RpcError as e:
                out.append((name, e.code().name, t0, time.time()))
                if e.code() == grpc.StatusCode.UNAVAILABLE:
                    break
        ch.close()

    def rest_worker(self, srv, tid, stop, out):
        host, port = srv.http_base[len("http://"):].rsplit(":", 1)
        conn = http.client.HTTPConnection(host, int(port), timeout=20)
        i = 0
        while not stop.is_set():
            name = "r%d_%d" % (tid, i)
            i += 1
            t0 = time.time()
            try:
                conn.request("POST", "/api/v1/catalogs", body=json.dumps({"name": name}),
                             headers={"Authorization": "Bearer " + srv.token,
                                      "Content-Type": "application/json"})
                resp = conn.getresponse()
                resp.read()
                out.append((name, resp.status, t0, resp.getheader("Connection")))
                if resp.status != 200:
                    break
            except (OSError, http.client.HTTPException) as e:
                out.append((name, type(e).__name__, t0, None))
                break  # the old connection is gone: no reconnect, we test kept-alive ones
        conn.close()

    def test_sigterm_under_load(self):
        srv = self.start()
        stop = threading.Event()
        g_out, r_out = [], []
        workers = [threading.Thread(target=self.grpc_worker, args=(srv, t, stop, g_out))
                   for t in range(GRPC_THREADS)]
        workers += [threading.Thread(target=self.rest_worker, args=(srv, t, stop, r_out))
                    for t in range(REST_THREADS)]
        for w in workers:
            w.start()
        time.sleep(1.5)
        said = {}

        def watch():  # when deltad printed that it stops taking calls
            while "t" not in said:
                if any("shutting down" in l for l in srv.stdout_lines):
                    said["t"] = time.time()
                time.sleep(0.001)
        watcher = threading.Thread(target=watch)
        watcher.start()
        t_sig = time.time()
        srv.proc.send_signal(signal.SIGTERM)
        code = srv.proc.wait(timeout=30)
        stop.set()
        for w in workers:
            w.join(timeout=30)
        said.setdefault("t", time.time())
        watcher.join()
        self.assertEqual(code, 0, "".join(srv.stderr_lines))
        err = "".join(srv.stderr_lines)
        self.assertNotIn("Sanitizer", err)
        srv.proc = None
        self.assertTrue(any(r[1] == "OK" and r[2] < t_sig for r in g_out))
        self.assertTrue(any(r[1] == 200 and r[2] < t_sig for r in r_out))

        # no gRPC call begun before the signal ends CANCELLED (they finish in the 5 s grace)
        cancelled = [r for r in g_out if r[1] == "CANCELLED" and r[2] < t_sig]
        self.assertEqual(cancelled, [], "gRPC calls cancelled by the shutdown")
        # nothing sent on an old keep-alive connection after the drain began is created
        late = [r for r in r_out if r[2] > said["t"] and r[1] == 200]
        self.assertEqual(late, [], "REST creates acknowledged after the drain began")
        refused = [r for r in r_out if r[1] == 503]
        for r in refused:
            self.assertEqual(r[3], "close", r)

        # every acknowledged create is in the catalog after a restart
        s2 = self.start()
        stub = self.pbg.CatalogServiceStub(s2.channel())
        names, token = set(), ""
        while True:
            page = stub.ListCatalogs(self.pb.ListCatalogsRequest(page_token=token, max_results=1000),
                                     metadata=s2.md())
            names.update(c.name for c in page.catalogs)
            token = page.next_page_token
            if not token:
                break
        acked = [r[0] for r in g_out if r[1] == "OK"] + [r[0] for r in r_out if r[1] == 200]
        missing = [n for n in acked if n not in names]
        self.assertEqual(missing, [], "acknowledged creates lost")
        self.assertEqual(s2.stop(), 0)


class DrainPool(Drain):
    """The same with the REST epoll pool (--http-threads 2)."""
    args = ["--http-threads", "2"]


if __name__ == "__main__":
    dd_harness.main()
