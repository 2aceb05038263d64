#!/usr/bin/python3
"""test_grpc_limits.py: the gRPC port's connection limits, seen on raw HTTP/2 sockets:
a connection that never sends the HTTP/2 preface is closed after the handshake timeout;
the server's SETTINGS carry the configured MAX_CONCURRENT_STREAMS; a connection with no
call gets GOAWAY after the max idle time, any connection after its max age; a peer that
does not answer keepalive pings is closed. Real grpc clients are still served."""
import socket
import struct
import time
import unittest

import dd_harness
from dd_harness import Server

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
SETTINGS, PING, GOAWAY = 0x4, 0x6, 0x7


def frame(ftype, flags=0, stream=0, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([ftype, flags]) + \
        struct.pack(">I", stream) + payload


class Conn:
    def __init__(self, target):
        host, port = target.rsplit(":", 1)
        self.s = socket.create_connection((host, int(port)), timeout=10)
        self.buf = b""

    def handshake(self):
        self.s.sendall(PREFACE + frame(SETTINGS))

    def next_frame(self, until):
        """(type, flags, payload), or None when the server closed the connection."""
        while True:
            if len(self.buf) >= 9:
                n = int.from_bytes(self.buf[:3], "big")
                if len(self.buf) >= 9 + n:
                    f = (self.buf[3], self.buf[4], self.buf[9:9 + n])
                    self.buf = self.buf[9 + n:]
                    return f
            self.s.settimeout(max(0.05, until - time.time()))
            try:
                b = self.s.recv(65536)
            except socket.timeout:
                if time.time() >= until:
                    raise AssertionError("no frame from the server in time")
                continue
            except ConnectionResetError:
                return None
            if not b:
                return None
            self.buf += b

    def frames(self, seconds, ack_settings=True, ack_pings=False):
        """Every frame until the server closes (or seconds pass): [(type, flags, payload)],
        closed, and when it closed."""
        out, until = [], time.time() + seconds
        while True:
            try:
                f = self.next_frame(until)
            except AssertionError:
                return out, False, time.time()
            if f is None:
                return out, True, time.time()
            out.append(f)
            if f[0] == SETTINGS and not f[1] & 1 and ack_settings:
                self.s.sendall(frame(SETTINGS, flags=1))
            if f[0] == PING and not f[1] & 1 and ack_pings:
                self.s.sendall(frame(PING, flags=1, payload=f[2]))

    def close(self):
        self.s.close()


def settings_of(frames):
    for t, flags, p in frames:
        if t == SETTINGS and not flags & 1:
            return {int.from_bytes(p[i:i + 2], "big"): int.from_bytes(p[i + 2:i + 6], "big")
                    for i in range(0, len(p), 6)}
    raise AssertionError("no SETTINGS from the server")


class Base(unittest.TestCase):
    args = []

    def setUp(self):
        dd_harness.stubs_dir()
        self.server = Server(extra_args=self.args).start()
        self.conns = []

    def tearDown(self):
        for c in self.conns:
            c.close()
        try:
            self.assertEqual(self.server.stop(), 0)
        finally:
            self.server.cleanup()

    def conn(self):
        c = Conn(self.server.grpc_target)
        self.conns.append(c)
        return c

    def grpc_call_ok(self):
        from deltad.catalog.v1 import catalog_pb2 as c, catalog_pb2_grpc as cg
        ch = self.server.channel()
        cg.CatalogServiceStub(ch).ListCatalogs(c.ListCatalogsRequest(), metadata=self.server.md(),
                                              timeout=10)
        ch.close()


class IdleHandshakeStreams(Base):
    args = ["--grpc-handshake-timeout-seconds", "2", "--grpc-max-connection-idle-seconds", "2",
            "--grpc-max-concurrent-streams", "7"]

    def test_silent_connection_closed_after_handshake_timeout(self):
        c = self.conn()
        t0 = time.time()
        _, closed, at = c.frames(8, ack_settings=False)  # an ack before the preface is an error
        self.assertTrue(closed, "a connection that never sent the preface stayed open")
        self.assertLess(at - t0, 5)
        self.grpc_call_ok()

    def test_settings_and_idle_goaway(self):
        c = self.conn()
        c.handshake()
        t0 = time.time()
        frames, closed, at = c.frames(8)
        self.assertEqual(settings_of(frames).get(0x3), 7, "SETTINGS_MAX_CONCURRENT_STREAMS")
        goaway = [f for f in frames if f[0] == GOAWAY]
        self.assertTrue(goaway, "no GOAWAY on a connection idle past the limit")
        self.assertLess(at - t0, 6)
        self.grpc_call_ok()


class AgeKeepalive(Base):
    args = ["--grpc-max-connection-age-seconds", "2", "--grpc-max-connection-age-grace-seconds", "1",
            "--grpc-keepalive-time-seconds", "1", "--grpc-keepalive-timeout-seconds", "1"]

    def test_unanswered_keepalive_pings_close_the_connection(self):
        c = self.conn()
        c.handshake()
        t0 = time.time()
        frames, closed, at = c.frames(10, ack_pings=False)
        self.assertTrue(any(f[0] == PING and not f[1] & 1 for f in frames), "no keepalive PING")
        self.assertTrue(closed)
        self.assertLess(at - t0, 6)

    def test_max_age_goaway(self):
        c = self.conn()
        c.handshake()
        t0 = time.time()
        frames, closed, at = c.frames(10, ack_pings=True)
        self.assertTrue(any(f[0] == GOAWAY for f in frames), "no GOAWAY at max age")
        self.assertTrue(closed)
        self.assertLess(at - t0, 7)
        self.grpc_call_ok()


if __name__ == "__main__":
    dd_harness.main()
