#!/usr/bin/python3
"""test_http_framing.py: the REST port refuses ambiguous request framing (RFC 9112 §6.3,
§5.2) on every kind of route (generated, native Delta Sharing, Lance, signed files, and
unknown paths): two Content-Lengths, Content-Length with Transfer-Encoding, a transfer
coding other than chunked, obs-fold lines, NUL and control characters in fields. Each is
answered 400 (501 for an unsupported coding) with Connection: close, the connection is
closed, and a request smuggled after it is never served. Raw sockets, since real clients
cannot send these."""
import json
import socket
import time
import unittest

import dd_harness
from dd_harness import ServerTest

ROUTES = [
    ("POST", "/api/v1/catalogs"),             # generated route
    ("POST", "/api/v1/shares/s1/schemas/x/tables/t/query"),  # native Delta Sharing
    ("POST", "/v1/namespace/ns/list"),        # native Lance Namespace
    ("GET", "/api/v1/files/abc"),             # signed-file server
    ("POST", "/no/such/route"),               # no route at all
]


def read_all(sock, timeout=5.0):
    """Everything the server sends until it closes (or timeout); (bytes, closed)."""
    sock.settimeout(timeout)
    out = b""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            b = sock.recv(65536)
        except socket.timeout:
            return out, False
        except ConnectionResetError:
            return out, True
        if not b:
            return out, True
        out += b
    return out, False


class Framing(ServerTest):
    def port(self):
        return int(self.server.http_base.rsplit(":", 1)[1])

    def raw(self, data):
        s = socket.create_connection(("127.0.0.1", self.port()))
        try:
            s.sendall(data)
            return read_all(s)
        finally:
            s.close()

    def head(self, method, path, extra):
        return (("%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
                 "Content-Type: application/json\r\n" % (method, path, self.server.token))
                .encode() + extra)

    def smuggled(self, name):
        body = json.dumps({"name": name}).encode()
        return self.head("POST", "/api/v1/catalogs",
                         b"Content-Length: %d\r\n\r\n" % len(body)) + body

    def catalogs(self):
        code, out = self.server.curl("GET", "/catalogs")
        self.assertEqual(code, 200)
        return {c["name"] for c in out.get("catalogs", [])}

    def assert_refused(self, data, status=400, what=""):
        out, closed = self.raw(data)
        self.assertTrue(out.startswith(b"HTTP/1.1 %d " % status), (what, out[:300]))
        self.assertEqual(out.count(b"HTTP/1.1 "), 1, (what, out))  # nothing smuggled answered
        self.assertIn(b"\r\nConnection: close\r\n", out, what)
        self.assertTrue(closed, "connection left open after a refusal: %s" % what)
        return out

    def cases(self, method, path, smuggle):
        body = b'{"name":"framing-body"}'
        n = len(body)
        return {
            "two different Content-Length": (self.head(method, path, b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (n, n + 5)) + body + smuggle, 400),
            "two equal Content-Length": (self.head(method, path, b"Content-Length: %d\r\nContent-Length: %d\r\n\r\n" % (n, n)) + body + smuggle, 400),
            "Content-Length and Transfer-Encoding": (self.head(method, path, b"Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n%x\r\n" % n + body + b"\r\n0\r\n\r\n") + smuggle, 400),
            "Transfer-Encoding gzip": (self.head(method, path, b"Transfer-Encoding: gzip\r\n\r\n") + body + smuggle, 400),
            "Transfer-Encoding gzip, chunked": (self.head(method, path, b"Transfer-Encoding: gzip, chunked\r\n\r\n0\r\n\r\n") + smuggle, 501),
            "two Transfer-Encoding": (self.head(method, path, b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n") + smuggle, 400),
            "obs-fold": (self.head(method, path, b"X-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n") + smuggle, 400),
            "obs-fold of Transfer-Encoding": (self.head(method, path, b"Transfer-Encoding:\r\n chunked\r\nContent-Length: %d\r\n\r\n" % n) + body + smuggle, 400),
            "NUL in a value": (self.head(method, path, b"X-Nul: a\x00b\r\nContent-Length: 0\r\n\r\n") + smuggle, 400),
            "NUL in the last value": (self.head(method, path, b"Content-Length: 0\r\nX-Nul: a\x00b\r\n\r\n") + smuggle, 400),
            "control character": (self.head(method, path, b"X-Ctl: a\x01b\r\nContent-Length: 0\r\n\r\n") + smuggle, 400),
            "bare CR": (self.head(method, path, b"X-Cr: a\rb\r\nContent-Length: 0\r\n\r\n") + smuggle, 400),
            "space in a field name": (self.head(method, path, b"X Bad: a\r\nContent-Length: 0\r\n\r\n") + smuggle, 400),
        }

    def test_every_route_refuses_ambiguous_framing(self):
        i = 0
        for method, path in ROUTES:
            for what, (data, status) in self.cases(method, path, self.smuggled("smug%d" % i)).items():
                with self.subTest(route=path, case=what):
                    self.assert_refused(data, status, "%s %s" % (what, path))
                i += 1
        names = self.catalogs()
        self.assertFalse([n for n in names if n.startswith("smug")], names)
        self.assertNotIn("framing-body", names)

    def test_http10_with_transfer_encoding(self):
        data = (b"POST /api/v1/catalogs HTTP/1.0\r\nAuthorization: Bearer %s\r\n"
                b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n" % self.server.token.encode())
        self.assert_refused(data, 400)

    def test_clean_requests_still_served(self):
        # chunked body, bare-LF lines, a large header, and two pipelined requests
        body = b'{"name":"framing-ok"}'
        chunked = self.head("POST", "/api/v1/catalogs",
                            b"Connection: close\r\nTransfer-Encoding: chunked\r\n\r\n") + \
            b"%x\r\n%s\r\n0\r\n\r\n" % (len(body), body)
        out, _ = self.raw(chunked)
        self.assertTrue(out.startswith(b"HTTP/1.1 200 "), out[:300])
        bare_lf = ("GET /api/v1/catalogs HTTP/1.1\nHost: x\nConnection: close\n"
                   "Authorization: Bearer %s\n\n"
                   % self.server.token).encode()
        out, _ = self.raw(bare_lf)
        self.assertTrue(out.startswith(b"HTTP/1.1 200 "), out[:300])
        big = self.head("GET", "/api/v1/catalogs",
                        b"Connection: close\r\nX-Big: " + b"a" * 6000 + b"\r\n\r\n")
        out, _ = self.raw(big)
        self.assertTrue(out.startswith(b"HTTP/1.1 200 "), out[:300])
        # a 20 KB header arriving in pieces (MHD grows its read buffer while parsing)
        big = self.head("GET", "/api/v1/catalogs",
                        b"Connection: close\r\nX-Big: " + b"b" * 20000 + b"\r\n\r\n")
        sock = socket.create_connection(("127.0.0.1", self.port()))
        for i in range(0, len(big), 4000):
            sock.sendall(big[i:i + 4000])
            time.sleep(0.05)
        out, _ = read_all(sock)
        sock.close()
        self.assertTrue(out.startswith(b"HTTP/1.1 200 "), out[:300])
        two = self.head("GET", "/api/v1/catalogs", b"\r\n") + \
            self.head("GET", "/api/v1/catalogs", b"Connection: close\r\n\r\n")
        out, _ = self.raw(two)
        self.assertEqual(out.count(b"HTTP/1.1 200 "), 2, out)
        self.assertIn("framing-ok", self.catalogs())


class FramingPool(Framing):
    """The same with the REST epoll pool (--http-threads 2)."""
    server_args = ["--http-threads", "2"]


if __name__ == "__main__":
    dd_harness.main()
