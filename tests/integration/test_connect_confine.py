#!/usr/bin/python3
"""test_connect_confine.py: maintenance on hostile tables through the real server
(DeltaConnectService over gRPC) and `deltactl table ... --local`: VACUUM never follows a
symlink out of the table; CLONE refuses log paths that escape the source or the target
(PERMISSION_DENIED, nothing written anywhere); a deep clone onto a full disk (a 2 MiB
tmpfs) says "No space left on device" and leaves nothing behind. Tables are copies of the
fixtures with commit files written by hand."""
import json
import os
import shutil
import subprocess
import tempfile
import time

import grpc

import dd_harness
from dd_harness import ServerTest

FIX = os.environ.get("DD_FIXTURES", os.path.join(dd_harness.ROOT, "..", "shared", "fixtures"))


def pb():
    dd_harness.stubs_dir()
    from delta.connect import base_pb2, commands_pb2
    from deltad.connect.v1 import connect_pb2_grpc
    return base_pb2, commands_pb2, connect_pb2_grpc


def age(path, days):
    subprocess.run(["find", path, "-not", "-path", "*/_delta_log*", "-exec", "touch", "-h", "-m", "-d",
                    "%d days ago" % days, "{}", "+"], check=True)


def fixture_in(base, name="simple_table"):
    dst = os.path.join(base, "src")
    shutil.copytree(os.path.join(FIX, "delta-rs-data", name), dst)
    return dst


def latest(path):
    return max(int(n[:20]) for n in os.listdir(os.path.join(path, "_delta_log")) if n.endswith(".json") and n[:20].isdigit())


def append_add(table, path, size=10):
    v = latest(table) + 1
    with open(os.path.join(table, "_delta_log", "%020d.json" % v), "w") as f:
        f.write(json.dumps({"commitInfo": {"timestamp": int(time.time() * 1000), "operation": "WRITE"}}) + "\n")
        f.write(json.dumps({"add": {"path": path, "partitionValues": {}, "size": size,
                                    "modificationTime": 1, "dataChange": True}}) + "\n")


class ConnectConfine(ServerTest):
    def setUp(self):
        self.base, self.cmd, cg = pb()
        self.stub = cg.DeltaConnectServiceStub(self.server.channel())
        self.md = self.server.md()
        self.tmp = tempfile.mkdtemp(prefix="dd-confine-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def table(self, path):
        return self.base.DeltaTable(path=self.base.DeltaTable.Path(path=path))

    def ctl_local(self, *args):
        p = subprocess.run([os.environ["DELTACTL_BIN"]] + list(args) + ["--local"],
                           capture_output=True, text=True, timeout=60)
        return p.returncode, p.stdout, p.stderr

    def vacuum(self, t):
        req = self.cmd.DeltaCommand(vacuum_table=self.cmd.VacuumTable(table=self.table(t)))
        return list(self.stub.ExecuteCommand(req, metadata=self.md, timeout=30))

    def test_vacuum_does_not_follow_symlinks(self):
        for via in ("grpc", "cli"):
            base = tempfile.mkdtemp(dir=self.tmp)
            t, out = fixture_in(base), os.path.join(base, "elsewhere")
            os.makedirs(os.path.join(out, "sub"))
            for f in ("old.parquet", "sub/old2.parquet"):
                with open(os.path.join(out, f), "w") as fh:
                    fh.write("x")
            os.symlink(out, os.path.join(t, "p=1"))
            os.symlink(os.path.join(out, "old.parquet"), os.path.join(t, "link.parquet"))
            with open(os.path.join(t, "orphan.parquet"), "w") as fh:
                fh.write("x")
            age(out, 30)
            age(t, 30)
            if via == "grpc":
                self.vacuum(t)
            else:
                code, _, err = self.ctl_local("table", "vacuum", t)
                self.assertEqual(code, 0, err)
            self.assertTrue(os.path.exists(os.path.join(out, "old.parquet")), via)
            self.assertTrue(os.path.exists(os.path.join(out, "sub", "old2.parquet")), via)
            self.assertTrue(os.path.islink(os.path.join(t, "p=1")), via)
            self.assertTrue(os.path.islink(os.path.join(t, "link.parquet")), via)
            self.assertFalse(os.path.exists(os.path.join(t, "orphan.parquet")), via)

    BAD = ["../ESC.parquet", "%2E%2E/ESC.parquet", "/etc/hostname", "file:///etc/hostname",
           "a/../../ESC.parquet", "..\\ESC.parquet", "a//b.parquet"]

    def test_clone_refuses_escaping_paths(self):
        for bad in self.BAD:
            for deep in (True, False):
                base = tempfile.mkdtemp(dir=self.tmp)
                src = fixture_in(base)
                with open(os.path.join(base, "ESC.parquet"), "w") as fh:
                    fh.write("x")
                os.makedirs(os.path.join(base, "out"))
                append_add(src, bad)
                target = os.path.join(base, "out", "t")
                req = self.cmd.DeltaCommand(clone_table=self.cmd.CloneTable(
                    table=self.table(src), target=target, is_shallow=not deep))
                with self.assertRaises(grpc.RpcError) as cm:
                    list(self.stub.ExecuteCommand(req, metadata=self.md, timeout=30))
                self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED, (bad, deep))
                self.assertEqual(os.listdir(os.path.join(base, "out")), [], (bad, deep))
                # deltactl --local says the same and writes nothing either
                args = ["table", "clone", src, target] + (["--deep"] if deep else [])
                code, _, err = self.ctl_local(*args)
                self.assertEqual(code, 1, err)
                self.assertIn("PERMISSION_DENIED", err)
                self.assertEqual(os.listdir(os.path.join(base, "out")), [], (bad, deep))

    def test_deep_clone_on_a_full_disk(self):
        mnt = os.path.join(self.tmp, "full")
        os.makedirs(mnt)
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", mnt], capture_output=True)
        if r.returncode != 0:
            self.skipTest("cannot mount a tmpfs: %s" % r.stderr.decode().strip())
        self.addCleanup(subprocess.run, ["umount", mnt])
        src = fixture_in(tempfile.mkdtemp(dir=self.tmp))
        with open(os.path.join(src, "big.bin"), "wb") as f:
            f.write(os.urandom(3 << 20))
        append_add(src, "big.bin", 3 << 20)
        target = os.path.join(mnt, "t")
        req = self.cmd.DeltaCommand(clone_table=self.cmd.CloneTable(
            table=self.table(src), target=target, is_shallow=False))
        with self.assertRaises(grpc.RpcError) as cm:
            list(self.stub.ExecuteCommand(req, metadata=self.md, timeout=30))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.RESOURCE_EXHAUSTED)
        self.assertIn("No space left on device", cm.exception.details())
        self.assertEqual(os.listdir(mnt), [])
        code, _, err = self.ctl_local("table", "clone", src, target, "--deep")
        self.assertEqual(code, 1, err)
        self.assertIn("No space left on device", err)
        self.assertEqual(os.listdir(mnt), [])


if __name__ == "__main__":
    dd_harness.main()
