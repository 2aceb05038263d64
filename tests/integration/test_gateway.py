#!/usr/bin/python3
"""test_gateway.py: transcoding checked by a real transcoder (issue 16). grpc-gateway,
generated from deltad's protos (tests/integration/gateway, built with `cmake --build B
--target grpc-gateway` into B/tools/gateway), implements the same google.api.http rules as
Envoy's transcoder. Two fresh deltad: one answers on its own REST port, the other behind
the gateway (gRPC). The same script of requests, one or more for every annotated route
deltad's REST port serves through the generated router, must give the same status and,
for unary routes, the same JSON body (ids and times aside). Streaming routes (DeltaConnect)
must agree on the status. Routes under /shares are served by deltad's native Delta Sharing
codec (the protocol's error bodies, {"errorCode", "message"}), so on their error paths only
the statuses are compared; their successful replies are compared whole.
A missing gateway binary fails the test."""
import json
import os
import re
import subprocess
import tempfile
import threading
import unittest

import dd_harness as h

GATEWAY = os.path.join(os.environ.get("DD_TOOLS", ""), "gateway")
API_C = os.path.join(h.ROOT, "generated", "api.c")
VOLATILE = re.compile(r"(^id$|Id$|At$|Time$|^bearerToken$|^profile$|^createdBy$|^updatedBy$)")


def routes():
    """(grpc method, verb, path template, body) of every annotated route, from generated/api.c."""
    with open(API_C) as f:
        return re.findall(r'\{"(/[^"]+)", "([A-Z]+)", "([^"]+)", "([^"]*)"\}', f.read())


def scrub(v):
    """Ids and times differ between two servers; an empty `details` list is proto3 JSON's
    default (deltad writes it, the gateway leaves it out, like Envoy)."""
    if isinstance(v, dict):
        return {k: ("<v>" if VOLATILE.search(k) else scrub(x)) for k, x in v.items()
                if not (k == "details" and x == [])}
    if isinstance(v, list):
        return [scrub(x) for x in v]
    return v


def rest_names(body):
    """deltad's own REST port names a leading request field as REST sends it (catalogName:
    ...); a transcoder passes gRPC's message on (catalog_name: ...). Same words otherwise."""
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        m = re.match(r"([a-z0-9]+(?:_[a-z0-9]+)+)([: ].*)", body["message"], re.S)
        if m:
            head = re.sub(r"_([a-z0-9])", lambda x: x.group(1).upper(), m.group(1))
            body = dict(body, message=head + m.group(2))
    return body


class Gateway(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.access(GATEWAY, os.X_OK):
            raise AssertionError("grpc-gateway not found at %s: run `cmake --build BUILD --target "
                                 "grpc-gateway`" % GATEWAY)
        cls.direct = h.Server().start()
        cls.behind = h.Server(env={"DELTAD_ADMIN_TOKEN": cls.direct.token}).start()
        cls.gw = subprocess.Popen([GATEWAY, "--backend", cls.behind.grpc_target], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        line = cls.gw.stdout.readline()
        m = re.match(r"gateway: listening on (\S+)", line)
        if not m:
            cls.gw.kill()
            raise AssertionError("the gateway did not start: %s %s" % (line, cls.gw.stderr.read()))
        cls.gw_base = "http://" + m.group(1)
        threading.Thread(target=cls.gw.stdout.read, daemon=True).start()
        cls.tmp = tempfile.mkdtemp(prefix="dd-gw-")

    @classmethod
    def tearDownClass(cls):
        cls.gw.terminate()
        cls.gw.wait(timeout=10)
        for s in (cls.direct, cls.behind):
            try:
                assert s.stop() == 0
            finally:
                s.cleanup()

    def both(self, verb, path, body=None):
        """(status, body) from deltad's REST port and from the gateway."""
        out = []
        for base, srv in ((self.direct.rest, self.direct), (self.gw_base + "/api/v1", self.behind)):
            code, got = srv.curl(verb, base + path, body, token=self.direct.token)
            out.append((code, got))
        return out

    def same(self, verb, path, body=None, stream=False, native=False):
        (c1, b1), (c2, b2) = self.both(verb, path, body)
        self.assertEqual(c1, c2, "%s %s: REST %s %s, gateway %s %s" % (verb, path, c1, b1, c2, b2))
        if not stream and not native:
            self.assertEqual(scrub(b1), scrub(rest_names(b2)), "%s %s" % (verb, path))
        return c1, b1

    def test_behind_uses_the_same_token(self):
        self.assertEqual(self.behind.token, self.direct.token)

    def test_every_route_answers_alike(self):
        table = os.path.join(self.tmp, "t")
        subprocess.run(["cp", "-r", os.path.join(h.FIXTURES, "delta-rs-data", "simple_table"), table],
                       check=True)
        covered = set()
        # A script that walks every route with real objects, then the error paths.
        script = [
            ("POST", "/catalogs", {"name": "gwc", "comment": "c"}), ("GET", "/catalogs", None),
            ("GET", "/catalogs/gwc", None), ("PATCH", "/catalogs/gwc", {"comment": "d"}),
            ("POST", "/schemas", {"name": "s", "catalogName": "gwc"}),
            ("GET", "/schemas?catalogName=gwc", None), ("GET", "/schemas/gwc.s", None),
            ("PATCH", "/schemas/gwc.s", {"comment": "e"}),
            ("POST", "/tables", {"name": "t", "catalogName": "gwc", "schemaName": "s", "storageLocation": table}),
            ("GET", "/tables/gwc.s.t", None), ("GET", "/tables?catalogName=gwc&schemaName=s", None),
            ("PATCH", "/tables/gwc.s.t", {"comment": "f"}), ("DELETE", "/tables/gwc.s.t", None),
            ("GET", "/dropped-tables?catalogName=gwc&schemaName=s", None),
            ("DELETE", "/schemas/gwc.s", None),
            ("DELETE", "/catalogs/gwc", None),
            ("POST", "/credentials", {"name": "gwk", "aws": {"accessKeyId": "AKID", "secretAccessKey": "x",
                                                             "region": "eu-west-1"}}),
            ("GET", "/credentials", None), ("GET", "/credentials/gwk", None),
            ("POST", "/locations", {"name": "gwl", "url": "s3://b/p", "credential": "gwk", "type": "S3"}),
            ("GET", "/locations", None), ("GET", "/locations/gwl", None),
            ("DELETE", "/locations/gwl", None), ("DELETE", "/credentials/gwk", None),
            ("POST", "/shares", {"name": "gws"}), ("GET", "/share-infos", None),
            ("GET", "/share-infos/gws", None), ("PATCH", "/shares/gws", {"description": "x"}),
            ("POST", "/shares/gws/schemas", {"name": "sc"}),
            ("POST", "/shares/gws/schemas/sc/tables", {"name": "t", "url": "file://" + table}),
            ("PATCH", "/shares/gws/schemas/sc/tables/t", {"historyShared": True}),
            ("POST", "/recipients", {"name": "gwr"}), ("GET", "/recipients", None),
            ("GET", "/recipients/gwr", None), ("POST", "/recipients/gwr/grants/gws", None),
            ("GET", "/grants?share=gws", None), ("GET", "/grants?recipient=gwr", None),
            ("POST", "/recipients/gwr/rotate-token", {}),
            ("DELETE", "/recipients/gwr/grants/gws", None), ("DELETE", "/recipients/gwr", None),
            ("DELETE", "/shares/gws/schemas/sc/tables/t", None), ("DELETE", "/shares/gws/schemas/sc", None),
            ("DELETE", "/shares/gws", None),
            ("GET", "/system/ping", None), ("GET", "/system/info", None),
        ]
        for verb, path, body in script:
            self.same(verb, path, body)
            covered.add((verb, re.sub(r"\?.*", "", path)))
        # Streams and the protocol's native routes: the status.
        self.same("POST", "/delta/relations", {"isDeltaTable": {"path": table}}, stream=True)
        self.same("POST", "/delta/commands", {"vacuumTable": {"table": {"path": {"path": "/nonexistent"}}}},
                  stream=True)
        # Every route once more with names that do not exist (errors alike, bodies too on the
        # generated routes), and bad input.
        for method, verb, tmpl, body in routes():
            path = re.sub(r"\{[^}]+\}", "nosuch", tmpl)
            native = tmpl.startswith("/shares")  # deltad's native Delta Sharing codec
            # streams, and the audit log (each server has its own events and times): the status
            stream = method.startswith(("/deltad.connect.v1.", "/deltad.admin.v1."))
            if verb in ("GET", "DELETE") or not body:
                self.same(verb, path, None if verb in ("GET", "DELETE") else {}, stream=stream, native=native)
            else:
                self.same(verb, path, {}, stream=stream, native=native)
            covered.add((verb, tmpl))
        self.same("POST", "/catalogs", {"name": ""})
        self.same("GET", "/schemas?catalogName=")
        # a body that does not decode: the transcoder words its own message; the status agrees
        self.same("POST", "/catalogs", {"nme": "typo"}, stream=True)
        self.assertEqual(len({(v, t) for _, v, t, _ in routes()} - covered), 0)


if __name__ == "__main__":
    h.main()
