#!/usr/bin/python3
"""test_metrics.py: /metrics, scraped by a real Prometheus (Debian's `prometheus`) started on
loopback, and the structured access log: every request made here appears as one JSON line
with the request id the client got back (REST header x-request-id, gRPC trailing metadata),
its principal, method, code, duration and bytes."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
import urllib.request

import grpc

import dd_harness
from dd_harness import ServerTest


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def access_lines(server):
    out = []
    for line in list(server.stderr_lines):
        line = line.strip()
        if line.startswith("{"):
            rec = json.loads(line)  # every JSON-looking line must parse
            if rec.get("msg") == "request":
                out.append(rec)
    return out


class Metrics(ServerTest):
    server_args = ["--log-format", "json", "--metrics-listen", "127.0.0.1:0"]
    register_locations = False

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        for line in cls.server.stdout_lines:
            if "metrics listening on " in line:
                cls.metrics_url = line.split("metrics listening on ", 1)[1].strip()

    def rest_get(self, path, token):
        req = urllib.request.Request(self.server.rest + path)
        if token:
            req.add_header("Authorization", "Bearer " + token)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, dict(r.headers), r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers), e.read().decode()

    def test_metrics_auth_on_rest_port(self):
        base = self.server.http_base
        for token, want in ((None, 401), ("wrong", 401), (self.server.token, 200)):
            req = urllib.request.Request(base + "/metrics")
            if token:
                req.add_header("Authorization", "Bearer " + token)
            try:
                with urllib.request.urlopen(req, timeout=10) as r:
                    code, body = r.status, r.read().decode()
                    self.assertTrue(r.headers["Content-Type"].startswith("text/plain; version=0.0.4"))
            except urllib.error.HTTPError as e:
                code, body = e.code, ""
            self.assertEqual(code, want, (token, body))
        self.assertIn("deltad_build_info{", body)
        self.assertIn("deltad_lmdb_map_size_bytes ", body)
        # the separate listener needs no token
        with urllib.request.urlopen(self.metrics_url, timeout=10) as r:
            self.assertIn("deltad_requests_total", r.read().decode())
        # a recipient may not read them (they name recipients), and its calls are counted
        code, out = self.server.curl("POST", "/recipients", {"name": "metrics_r"})
        self.assertEqual(code, 200, out)
        rtok = json.loads(out["profile"])["bearerToken"]
        code, _ = self.server.curl("GET", self.server.http_base + "/metrics", token=rtok)
        self.assertEqual(code, 403)
        code, _ = self.server.curl("GET", "/system/info", token=rtok)
        self.assertEqual(code, 200)
        with urllib.request.urlopen(self.metrics_url, timeout=10) as r:
            self.assertIn('deltad_recipient_requests_total{recipient="metrics_r"} 1', r.read().decode())

    def test_refused_call_logged_under_its_header_id(self):
        code, headers, _ = self.rest_get("/catalogs", "not-a-token")
        self.assertEqual(code, 401)
        rid = headers["x-request-id"]
        deadline = time.time() + 10
        rec = None
        while time.time() < deadline and rec is None:
            rec = next((r for r in access_lines(self.server) if r["request_id"] == rid), None)
            time.sleep(0.05)
        self.assertIsNotNone(rec, rid)
        self.assertEqual((rec["principal"], rec["code"], rec["http_status"]),
                         ("anonymous", "UNAUTHENTICATED", 401))

    def test_prometheus_counts_and_logs(self):
        prom = shutil.which("prometheus")
        self.assertIsNotNone(prom, "Debian's prometheus is not installed (scripts/setup.sh)")
        dd_harness.stubs_dir()
        from deltad.catalog.v1 import catalog_pb2 as c, catalog_pb2_grpc as cg
        stub = cg.CatalogServiceStub(self.server.channel())
        md = self.server.md()
        stub.CreateCatalog(c.CreateCatalogRequest(name="metrics_cat"), metadata=md)
        ids = []
        # 7 over REST (ids from the header), 5 over gRPC (ids from trailing metadata), 2 misses
        for _ in range(7):
            code, headers, _ = self.rest_get("/catalogs/metrics_cat", self.server.token)
            self.assertEqual(code, 200)
            ids.append(("rest", headers["x-request-id"], "OK"))
        for _ in range(5):
            _, call = stub.GetCatalog.with_call(c.GetCatalogRequest(name="metrics_cat"), metadata=md)
            trailer = dict(call.trailing_metadata())
            ids.append(("grpc", trailer["x-request-id"], "OK"))
        for _ in range(2):
            with self.assertRaises(grpc.RpcError) as cm:
                stub.GetCatalog(c.GetCatalogRequest(name="nope"), metadata=md)
            ids.append(("grpc", dict(cm.exception.trailing_metadata())["x-request-id"], "NOT_FOUND"))
        self.assertEqual(len({i for _, i, _ in ids}), len(ids))

        # the access log: one line per request, with the id the client saw
        deadline = time.time() + 10
        while time.time() < deadline:
            by_id = {r["request_id"]: r for r in access_lines(self.server)}
            if all(i in by_id for _, i, _ in ids):
                break
            time.sleep(0.1)
        for kind, rid, code in ids:
            rec = by_id.get(rid)
            self.assertIsNotNone(rec, (kind, rid))
            self.assertEqual(rec["principal"], "admin")
            self.assertEqual(rec["method"], "/deltad.catalog.v1.CatalogService/GetCatalog")
            self.assertEqual(rec["code"], code)
            self.assertEqual(rec["http_status"], 200 if code == "OK" else 404)
            self.assertGreaterEqual(rec["duration_ms"], 0)
            self.assertEqual(rec["level"], "info")
            if code == "OK":
                self.assertGreater(rec["bytes"], 0)
        log_text = "".join(self.server.stderr_lines)
        self.assertNotIn(self.server.token, log_text)  # never a token

        # a real Prometheus scrapes the token-less listener; PromQL returns our counts
        tmp = tempfile.mkdtemp(prefix="dd-prom-")
        target = urllib.parse.urlparse(self.metrics_url)
        with open(os.path.join(tmp, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n"
                    "  - job_name: deltad\n    metrics_path: /metrics\n"
                    "    static_configs:\n      - targets: ['%s']\n" % target.netloc)
        port = free_port()
        p = subprocess.Popen([prom, "--config.file=" + os.path.join(tmp, "prometheus.yml"),
                              "--storage.tsdb.path=" + os.path.join(tmp, "data"),
                              "--web.listen-address=127.0.0.1:%d" % port],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            q = ('sum(deltad_requests_total{service="deltad.catalog.v1.CatalogService",'
                 'method="GetCatalog",code="OK"})')
            got, hist = None, None
            deadline = time.time() + 60
            while time.time() < deadline and (got != 12 or not hist):
                time.sleep(0.5)
                try:
                    got = self.promql(port, q)
                    hist = self.promql(port, 'sum(deltad_request_duration_seconds_count{method="GetCatalog"})')
                except OSError:
                    continue
            self.assertEqual(got, 12, "Prometheus saw %r GetCatalog OK calls" % got)
            self.assertEqual(hist, 14)  # every call has a latency, the misses too
            self.assertEqual(self.promql(port, 'sum(deltad_requests_total{method="GetCatalog",code="NOT_FOUND"})'), 2)
            self.assertEqual(self.promql(port, 'up{job="deltad"}'), 1)
        finally:
            p.send_signal(signal.SIGTERM)
            p.wait(timeout=30)
            shutil.rmtree(tmp, ignore_errors=True)

    @staticmethod
    def promql(port, q):
        url = "http://127.0.0.1:%d/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
        with urllib.request.urlopen(url, timeout=5) as r:
            res = json.loads(r.read())
        assert res["status"] == "success", res
        rows = res["data"]["result"]
        return int(float(rows[0]["value"][1])) if rows else None


if __name__ == "__main__":
    dd_harness.main()
