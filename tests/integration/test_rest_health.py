#!/usr/bin/python3
"""test_rest_health.py: the REST port as probes and new users meet it (issue 16): token-less
GET /healthz and /readyz, a trailing slash tolerated on every route, and errors about query
parameters naming the parameter as sent (catalogName, not catalog_name)."""
import json
import subprocess

import dd_harness
from dd_harness import ServerTest


def get(url, token=None, method="GET"):
    args = ["curl", "-sS", "-X", method, "-o", "-", "-w", "\n%{http_code}", url]
    if token:
        args += ["-H", "Authorization: Bearer " + token]
    out = subprocess.run(args, capture_output=True, check=True, text=True).stdout
    body, _, code = out.rpartition("\n")
    return int(code), body


class RestHealth(ServerTest):
    def test_health_and_ready_need_no_token(self):
        base = self.server.http_base
        for path in ("/healthz", "/healthz/"):
            code, body = get(base + path)
            self.assertEqual(code, 200, body)
            self.assertEqual(json.loads(body), {"status": "ok"})
        for path in ("/readyz", "/readyz/"):
            code, body = get(base + path)
            self.assertEqual(code, 200, body)
            self.assertEqual(json.loads(body), {"status": "ready"})
        code, _ = get(base + "/healthz/more")
        self.assertEqual(code, 404)
        code, _ = get(base + "/readyz", method="POST")
        self.assertEqual(code, 501)

    def test_trailing_slash_on_every_route(self):
        rest, tok = self.server.rest, self.server.token
        for path in ("/catalogs", "/catalogs/", "/locations/", "/shares/", "/recipients/"):
            code, body = get(rest + path, tok)
            self.assertEqual(code, 200, (path, body))
        code, body = self.server.curl("POST", "/catalogs/", {"name": "slash1"})
        self.assertEqual(code, 200, body)
        code, body = get(rest + "/catalogs/slash1/", tok)
        self.assertEqual((code, json.loads(body)["name"]), (200, "slash1"))
        # the Delta Sharing and Lance routes too
        code, body = get(self.server.http_base + "/v1/namespace/slash1/list/", tok)
        self.assertEqual(code, 200, body)

    def test_query_parameter_errors_name_the_parameter(self):
        code, body = get(self.server.rest + "/schemas?catalogName=", self.server.token)
        self.assertEqual(code, 400, body)
        msg = json.loads(body)["message"]
        self.assertIn("catalogName", msg)
        self.assertNotIn("catalog_name", msg)


if __name__ == "__main__":
    dd_harness.main()
