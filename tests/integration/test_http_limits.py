#!/usr/bin/python3
"""test_http_limits.py: the REST port's connection timeouts and caps, against slowloris-
style clients on raw sockets: idle sockets, headers trickled one byte at a time, a body
that stalls; all are closed within the configured timeouts (2 s here) while a normal
client is still served and the server's thread count (/proc/PID/status) stays bounded.
Over the connection cap (in all, and per client address) new connections are closed at
once and the server stays up."""
import os
import socket
import subprocess
import tempfile
import time
import unittest

import dd_harness
from dd_harness import Server

N = 60  # sockets of each kind


def threads(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                return int(line.split()[1])
    raise AssertionError("no Threads line")


def closed_by_peer(sock):
    """True when the server closed sock (EOF or reset), without blocking."""
    sock.setblocking(False)
    try:
        data = sock.recv(4096)
        return data == b"" or data.startswith(b"HTTP/1.1 ")  # EOF, or a final error reply
    except BlockingIOError:
        return False
    except (ConnectionResetError, BrokenPipeError):
        return True


class Harness(unittest.TestCase):
    args = []

    def setUp(self):
        dd_harness.stubs_dir()
        self.server = Server(extra_args=self.args).start()
        self.port = int(self.server.http_base.rsplit(":", 1)[1])
        self.socks = []

    def tearDown(self):
        for s in self.socks:
            s.close()
        try:
            self.assertEqual(self.server.stop(), 0)
        finally:
            self.server.cleanup()

    def connect(self, source=None):
        s = socket.create_connection(("127.0.0.1", self.port), timeout=5,
                                     source_address=(source, 0) if source else None)
        self.socks.append(s)
        return s

    def normal_request_ok(self):
        code, out = self.server.curl("GET", "/catalogs")
        self.assertEqual(code, 200, out)

    def wait_all_closed(self, socks, limit, trickle=None):
        """Waits (at most limit seconds) until the server closed every socket; trickle(s)
        is called on the open ones every 0.5 s. Returns the seconds it took."""
        t0 = time.time()
        open_ = list(socks)
        while open_ and time.time() - t0 < limit:
            if trickle:
                for s in open_:
                    try:
                        trickle(s)
                    except OSError:
                        pass
            time.sleep(0.5)
            open_ = [s for s in open_ if not closed_by_peer(s)]
        self.assertEqual(open_, [], "%d of %d connections still open after %.1f s"
                         % (len(open_), len(socks), time.time() - t0))
        return time.time() - t0


class Timeouts(Harness):
    args = ["--http-idle-timeout-seconds", "2", "--http-header-timeout-seconds", "2",
            "--http-body-timeout-seconds", "2"]

    def test_idle_partial_header_and_stalled_body_are_closed(self):
        pid = self.server.proc.pid
        base = threads(pid)
        idle = [self.connect("127.0.0.2") for _ in range(N)]  # each kind from its own
        trickled = [self.connect("127.0.0.3") for _ in range(N)]  # address: under the
        stalled = [self.connect("127.0.0.4") for _ in range(N)]  # default per-address cap
        req = b"GET /api/v1/catalogs HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 1000
        pos = {s: 0 for s in trickled}

        def one_byte(s):  # one more header byte every 0.5 s: never idle for MHD
            s.send(req[pos[s] % len(req):pos[s] % len(req) + 1])
            pos[s] += 1
        for s in trickled:
            one_byte(s)
        for s in stalled:
            s.sendall(("POST /api/v1/catalogs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                       "Content-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"na"
                       % self.server.token).encode())
        time.sleep(0.5)
        peak = threads(pid)
        self.assertLessEqual(peak, base + 3 * N + 8)
        self.normal_request_ok()  # served while 3N slow clients hold connections
        took = self.wait_all_closed(idle + trickled + stalled, 8, trickle=None)
        # the trickled ones kept sending until closed: run them again with trickling
        self.assertLess(took, 8)
        more = [self.connect("127.0.0.5") for _ in range(N)]
        for s in more:
            pos[s] = 0
            one_byte(s)
        took = self.wait_all_closed(more, 8, trickle=one_byte)
        self.assertLess(took, 5.5, "a header trickled byte by byte outlived the 2 s deadline")
        bodies = [self.connect("127.0.0.6") for _ in range(N)]
        for s in bodies:
            s.sendall(("POST /api/v1/catalogs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n"
                       "Content-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                       % self.server.token).encode())
        took = self.wait_all_closed(bodies, 8, trickle=lambda s: s.send(b" "))
        self.assertLess(took, 5.5, "a body trickled byte by byte outlived the 2 s deadline")
        self.normal_request_ok()
        deadline = time.time() + 5
        while threads(pid) > base + 4 and time.time() < deadline:
            time.sleep(0.2)
        self.assertLessEqual(threads(pid), base + 4, "connection threads not released")

    def test_keepalive_connection_reused_within_timeout(self):
        s = self.connect()
        req = ("GET /api/v1/catalogs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n"
               % self.server.token).encode()
        for _ in range(3):
            s.sendall(req)
            s.settimeout(5)
            self.assertTrue(s.recv(65536).startswith(b"HTTP/1.1 200 "))
            time.sleep(1)  # below the 2 s timeouts
        self.wait_all_closed([s], 5)  # then idle: closed


class TimeoutsPool(Timeouts):
    """The same with the epoll pool (--http-threads 2) instead of a thread per connection."""
    args = Timeouts.args + ["--http-threads", "2"]


class Caps(Harness):
    args = ["--http-max-connections", "40", "--http-max-connections-per-ip", "30"]

    def test_total_and_per_ip_caps(self):
        pid = self.server.proc.pid
        base = threads(pid)
        held = [self.connect() for _ in range(30)]
        time.sleep(0.3)
        # the 31st from 127.0.0.1 is refused at once
        extra = self.connect()
        self.wait_all_closed([extra], 2)
        # another address still gets in, up to the total cap of 40
        other = [self.connect("127.0.0.2") for _ in range(10)]
        time.sleep(0.3)
        self.assertFalse(any(closed_by_peer(s) for s in held + other))
        over = [self.connect("127.0.0.3") for _ in range(10)]
        self.wait_all_closed(over, 2)
        self.assertLessEqual(threads(pid), base + 40 + 4)
        for s in held + other:
            s.close()
        deadline = time.time() + 5
        while time.time() < deadline:
            try:
                self.normal_request_ok()
                break
            except AssertionError:
                time.sleep(0.2)
        self.normal_request_ok()


class Options(unittest.TestCase):
    def test_bad_values_refused(self):
        binary = os.environ["DELTAD_BIN"]
        for flag, val in (("--http-max-connections", "-1"), ("--http-idle-timeout-seconds", "soon"),
                          ("--grpc-max-concurrent-streams", "99999999999")):
            out = subprocess.run([binary, flag, val], capture_output=True, text=True)
            self.assertEqual(out.returncode, 2, (flag, out.stderr))
            self.assertIn(flag[2:], out.stderr)
        out = subprocess.run([binary, "--help"], capture_output=True, text=True)
        self.assertIn("--http-header-timeout-seconds", out.stdout)
        self.assertIn("--grpc-max-connection-idle-seconds", out.stdout)


class ConfigFile(Harness):
    """The limits are read from the config file like every option."""
    cfg = tempfile.NamedTemporaryFile("w", suffix=".conf", delete=False)
    cfg.write("http-max-connections-per-ip = 1\nhttp-header-timeout-seconds = 1\n")
    cfg.close()
    args = ["--config", cfg.name]

    def test_limits_from_config_file(self):
        first = self.connect()
        second = self.connect()
        self.wait_all_closed([second], 2)  # over the per-address cap of 1
        self.wait_all_closed([first], 4)  # no headers within 1 s


if __name__ == "__main__":
    dd_harness.main()
