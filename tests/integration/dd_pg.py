"""dd_pg.py: a throwaway PostgreSQL for the tests, from Debian's postgresql package:
initdb into a temporary folder, pg_ctl start on a free loopback port (no Unix socket),
trust authentication for the superuser `deltad`. PostgreSQL refuses to run as root, so
when the tests run as root (CI does) the server runs as the unprivileged user `nobody`
through runuser. A missing package is an error, never a skip.

As a module: `pg = Postgres().start()`, `pg.url`, `pg.restart()`, `pg.psql(sql)`,
`pg.stop()`, `pg.cleanup()`. As a script (the ctest fixtures of unit.catalog.*.pg, the
benchmark tests/bench/catalog_pg):
  dd_pg.py start DIR   starts a server (its files in a new folder under $TMPDIR), writes
                       DIR/url, DIR/port and DIR/root, and leaves it running
  dd_pg.py stop DIR    stops it and removes both folders
"""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

PG_BIN = os.environ.get("DD_PG_BIN", "/usr/lib/postgresql/15/bin")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Postgres:
    def __init__(self, root=None):
        if not os.path.exists(os.path.join(PG_BIN, "initdb")):
            raise RuntimeError("PostgreSQL server binaries not found in %s: install Debian's "
                               "postgresql package (scripts/setup.sh does)" % PG_BIN)
        self.owns_root = root is None
        self.root = root or tempfile.mkdtemp(prefix="dd-pg-")
        self.data = os.path.join(self.root, "data")
        self.port = None
        self.as_root = os.getuid() == 0

    def _run(self, args, check=True, timeout=120):
        if self.as_root:
            args = ["runuser", "-u", "nobody", "--"] + args
        r = subprocess.run(args, timeout=timeout, capture_output=True, text=True)
        if check and r.returncode != 0:
            raise RuntimeError("%s failed (%d): %s%s (the folder and its parents must be "
                               "reachable by the user PostgreSQL runs as)"
                               % (" ".join(args), r.returncode, r.stdout, r.stderr))
        return r

    def _pg_ctl(self, *args, check=True):
        return self._run([os.path.join(PG_BIN, "pg_ctl"), "-D", self.data, "-w", "-t", "60",
                          "-l", os.path.join(self.root, "log")] + list(args), check=check)

    def start(self):
        os.chmod(self.root, 0o755)
        if self.as_root:
            shutil.chown(self.root, "nobody")
        if not os.path.exists(self.data):
            self._run([os.path.join(PG_BIN, "initdb"), "-D", self.data, "-U", "deltad",
                       "--auth=trust", "-E", "UTF8", "--no-sync"])
            with open(os.path.join(self.data, "postgresql.conf"), "a") as f:
                f.write("unix_socket_directories = ''\nlisten_addresses = '127.0.0.1'\n"
                        "fsync = off\nsynchronous_commit = off\nfull_page_writes = off\n"
                        "max_connections = 200\nshared_buffers = 64MB\n")
        self.port = self.port or _free_port()
        self._pg_ctl("-o", "-p %d" % self.port, "start")
        return self

    @property
    def url(self):
        return "postgresql://deltad@127.0.0.1:%d/postgres" % self.port

    def stop(self, mode="fast"):
        self._pg_ctl("-m", mode, "stop", check=False)

    def restart(self, down_seconds=0.0):
        """Stops the server (fast: sessions are cut), waits, starts it on the same port."""
        self.stop()
        time.sleep(down_seconds)
        self._pg_ctl("-o", "-p %d" % self.port, "start")

    def psql(self, sql):
        return subprocess.run(["psql", self.url, "-XAtqc", sql], check=True,
                              capture_output=True, text=True, timeout=60).stdout

    def cleanup(self):
        self.stop("immediate")
        if self.owns_root:
            shutil.rmtree(self.root, ignore_errors=True)


def main(argv):
    if len(argv) != 3 or argv[1] not in ("start", "stop"):
        sys.exit("usage: dd_pg.py start|stop DIR")
    d = argv[2]
    if argv[1] == "start":
        # the server's files go to a fresh folder under the temporary directory (the user
        # PostgreSQL runs as may not reach DIR, e.g. a build tree under /root); DIR gets
        # its URL, port and the folder's path
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        pg = Postgres().start()
        for name, value in (("url", pg.url), ("port", str(pg.port)), ("root", pg.root)):
            with open(os.path.join(d, name), "w") as f:
                f.write(value)
        print("PostgreSQL at", pg.url, "in", pg.root)
    else:
        try:
            with open(os.path.join(d, "root")) as f:
                root = f.read().strip()
        except OSError:
            return
        pg = Postgres(root)
        pg.stop("immediate")
        shutil.rmtree(root, ignore_errors=True)
        shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv)
