#!/usr/bin/python3
"""test_server_policy.py: what the server lets an admin touch, and how it says no.

Maintenance (DeltaConnectService over gRPC and REST) and shared tables (AddTable) work only
on tables under a registered storage location, never on the data directory (inside it or
containing it; real paths, so symlinks do not help); catalog names resolve to their
registered location and pass the same check. Durations that would overflow are
INVALID_ARGUMENT; storage locations holding user:password@ are refused; the start-up line
about DELTAD_ADMIN_TOKEN shows only when the variable was used.
"""
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import unittest

import grpc
import requests

import dd_harness as h

FIX = h.FIXTURES
INT64_MAX = 9223372036854775807


def pb():
    h.stubs_dir()
    from delta.connect import base_pb2, commands_pb2, relations_pb2
    from deltad.connect.v1 import connect_pb2_grpc
    from deltad.sharing.v1 import sharing_pb2, sharing_pb2_grpc
    return base_pb2, commands_pb2, relations_pb2, connect_pb2_grpc, sharing_pb2, sharing_pb2_grpc


def copy_fixture(parent, name="simple_table"):
    dst = os.path.join(parent, name)
    shutil.copytree(os.path.join(FIX, "delta-rs-data", name), dst)
    return dst


class Confinement(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="dd-policy-")
        cls.t = copy_fixture(cls.tmp)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def setUp(self):
        self.base, self.cmd, self.rel, cg, self.spb, sg = pb()
        self.stub = cg.DeltaConnectServiceStub(self.server.channel())
        self.ext = sg.DeltaSharingExtensionServiceStub(self.server.channel())
        self.md = self.server.md()

    def table(self, path):
        return self.base.DeltaTable(path=self.base.DeltaTable.Path(path=path))

    def detail(self, path):
        return self.rel.DeltaRelation(describe_detail=self.rel.DescribeDetail(table=self.table(path)))

    def vacuum_dry(self, path):
        conf = self.base.DeltaTable.Path(path=path, hadoop_conf={"deltad.vacuum.dryRun": "true"})
        return self.cmd.DeltaCommand(vacuum_table=self.cmd.VacuumTable(
            table=self.base.DeltaTable(path=conf)))

    def code_of(self, fn, req):
        with self.assertRaises(grpc.RpcError) as cm:
            list(fn(req, metadata=self.md, timeout=30))
        return cm.exception.code(), cm.exception.details()

    def denied(self, fn, req, needle):
        code, msg = self.code_of(fn, req)
        self.assertEqual(code, grpc.StatusCode.PERMISSION_DENIED, msg)
        self.assertIn(needle, msg)
        return msg

    def test_registered_location_works(self):
        rows = list(self.stub.ExecuteRelation(self.detail(self.t), metadata=self.md, timeout=30))
        self.assertEqual(rows[0].WhichOneof("result"), "schema")

    def test_path_outside_every_location(self):
        msg = self.denied(self.stub.ExecuteCommand, self.vacuum_dry("/etc"), "file:///etc")
        self.assertIn("storage location", msg)
        self.denied(self.stub.ExecuteRelation, self.detail("/etc"), "file:///etc")
        self.denied(self.stub.ExecuteRelation, self.rel.DeltaRelation(
            is_delta_table=self.rel.IsDeltaTable(path="file:///usr")), "file:///usr")
        code, body = self.server.curl("POST", "/delta/relations",
                                      {"describeDetail": {"table": {"path": {"path": "/etc"}}}})
        self.assertEqual(code, 403, body)

    def test_data_directory_is_never_a_table(self):
        data = os.path.realpath(self.server.data_dir)
        for req in (self.vacuum_dry(data), self.vacuum_dry(data + "/catalog.mdb"),
                    self.vacuum_dry(os.path.dirname(data))):
            self.denied(self.stub.ExecuteCommand, req, "data directory")
        # a shallow clone into the data directory (or over it) is refused before writing
        for target in (data + "/clone", os.path.dirname(data)):
            req = self.cmd.DeltaCommand(clone_table=self.cmd.CloneTable(
                table=self.table(self.t), target=target, is_shallow=True))
            self.denied(self.stub.ExecuteCommand, req, "data directory")
        self.assertFalse(os.path.exists(data + "/clone"))
        self.assertTrue(os.path.exists(os.path.join(data, "secret.key")))

    def test_symlink_out_of_a_location(self):
        d = tempfile.mkdtemp(prefix="dd-policy-link-")
        self.addCleanup(shutil.rmtree, d, True)
        os.symlink("/etc", os.path.join(d, "etc"))
        os.symlink(os.path.realpath(self.server.data_dir), os.path.join(d, "data"))
        self.denied(self.stub.ExecuteCommand, self.vacuum_dry(os.path.join(d, "etc")), "file:///etc")
        self.denied(self.stub.ExecuteCommand, self.vacuum_dry(os.path.join(d, "data")),
                    "data directory")
        self.denied(self.stub.ExecuteRelation, self.detail(os.path.join(d, "etc", "..", "..", "etc")),
                    "file:///etc")

    def test_catalog_name_passes_the_same_check(self):
        srv = self.server
        self.assertEqual(srv.curl("POST", "/catalogs", {"name": "pol"})[0], 200)
        self.assertEqual(srv.curl("POST", "/schemas", {"name": "s", "catalogName": "pol"})[0], 200)
        for name, loc in (("etc", "file:///etc"), ("data", "file://" + srv.data_dir)):
            code, body = srv.curl("POST", srv.http_base + "/v1/table/pol$s$%s/register" % name,
                                  {"location": loc})
            self.assertEqual(code, 200, body)
            req = self.rel.DeltaRelation(describe_detail=self.rel.DescribeDetail(
                table=self.base.DeltaTable(table_or_view_name="pol.s." + name)))
            self.denied(self.stub.ExecuteRelation, req, "file:///etc" if name == "etc" else "data directory")

    def test_add_table_is_confined(self):
        srv = self.server
        self.assertEqual(srv.curl("POST", "/shares", {"name": "pol"})[0], 200)
        self.assertEqual(srv.curl("POST", "/shares/pol/schemas", {"name": "s"})[0], 200)
        d = tempfile.mkdtemp(prefix="dd-policy-share-")
        self.addCleanup(shutil.rmtree, d, True)
        os.symlink("/etc", os.path.join(d, "etc"))
        self.assertEqual(srv.curl("POST", "/locations", {"name": "pol-loc", "url": "file://" + d})[0], 200)
        for body in ({"name": "a", "url": "file:///etc"},
                     {"name": "b", "url": "file://" + srv.data_dir},
                     {"name": "c", "url": "file://" + os.path.join(srv.data_dir, "tables", "x")},
                     {"name": "d", "location": "pol-loc", "path": "etc"}):
            code, got = srv.curl("POST", "/shares/pol/schemas/s/tables", body)
            self.assertEqual(code, 403, (body, got))
        code, got = srv.curl("POST", "/shares/pol/schemas/s/tables",
                             {"name": "ok", "url": "file://" + self.t})
        self.assertEqual(code, 200, got)
        info = self.ext.GetShareInfo(self.spb.GetShareInfoRequest(name="pol"), metadata=self.md)
        self.assertEqual([t.name for t in info.schemas[0].tables], ["ok"])


class Unregistered(h.ServerTest):
    """Without a storage location nothing is reachable; registering one opens exactly it."""

    register_locations = False

    def test_needs_a_location(self):
        base, cmd, rel, cg, _, _ = pb()
        stub = cg.DeltaConnectServiceStub(self.server.channel())
        tmp = tempfile.mkdtemp(prefix="dd-policy-unreg-")
        self.addCleanup(shutil.rmtree, tmp, True)
        t = copy_fixture(tmp)
        req = rel.DeltaRelation(describe_detail=rel.DescribeDetail(
            table=base.DeltaTable(path=base.DeltaTable.Path(path=t))))
        with self.assertRaises(grpc.RpcError) as cm:
            list(stub.ExecuteRelation(req, metadata=self.server.md(), timeout=30))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        self.assertIn("file://" + os.path.realpath(t), cm.exception.details())
        code, body = self.server.curl("POST", "/locations", {"name": "mine", "url": "file://" + tmp,
                                                             "type": "LOCAL"})
        self.assertEqual(code, 200, body)
        rows = list(stub.ExecuteRelation(req, metadata=self.server.md(), timeout=30))
        self.assertEqual(rows[0].WhichOneof("result"), "schema")


class CloneRoots(h.ServerTest):
    """A clone follows absolute paths of its source's log only under a local storage
    location, and never into the data directory (even under a location containing it)."""
    register_locations = False

    def setUp(self):
        self.base, self.cmd, _, cg, _, _ = pb()
        self.stub = cg.DeltaConnectServiceStub(self.server.channel())
        self.tmp = tempfile.mkdtemp(prefix="dd-policy-roots-")
        self.addCleanup(shutil.rmtree, self.tmp, True)
        for d in ("a", "b", "c"):
            os.mkdir(os.path.join(self.tmp, d))
            with open(os.path.join(self.tmp, d, "x.parquet"), "w") as f:
                f.write("x")
        for d in ("a", "b"):
            name = "%s-%s" % (os.path.basename(self.tmp), d)
            code, body = self.server.curl("POST", "/locations", {
                "name": name, "url": "file://" + os.path.join(self.tmp, d), "type": "LOCAL"})
            self.assertEqual(code, 200, body)
            self.addCleanup(self.server.curl, "DELETE", "/locations/" + name)

    def clone(self, abs_path, target):
        src = os.path.join(self.tmp, "a", "src%d" % len(os.listdir(os.path.join(self.tmp, "a"))))
        shutil.copytree(os.path.join(FIX, "delta-rs-data", "simple_table"), src)
        log = os.path.join(src, "_delta_log")
        v = max(int(n[:20]) for n in os.listdir(log) if n.endswith(".json")) + 1
        with open(os.path.join(log, "%020d.json" % v), "w") as f:
            f.write(json.dumps({"commitInfo": {"timestamp": int(time.time() * 1000)}}) + "\n")
            f.write(json.dumps({"add": {"path": abs_path, "partitionValues": {}, "size": 1,
                                        "modificationTime": 1, "dataChange": True}}) + "\n")
        req = self.cmd.DeltaCommand(clone_table=self.cmd.CloneTable(
            table=self.base.DeltaTable(path=self.base.DeltaTable.Path(path=src)),
            target=target, is_shallow=True))
        return list(self.stub.ExecuteCommand(req, metadata=self.server.md(), timeout=30))

    def test_roots_are_the_locations(self):
        self.clone("file://" + os.path.join(self.tmp, "b", "x.parquet"),
                   os.path.join(self.tmp, "a", "t1"))
        with self.assertRaises(grpc.RpcError) as cm:
            self.clone("file://" + os.path.join(self.tmp, "c", "x.parquet"),
                       os.path.join(self.tmp, "a", "t2"))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "a", "t2", "_delta_log")))

    def test_never_into_the_data_directory(self):
        data = os.path.realpath(self.server.data_dir)
        code, body = self.server.curl("POST", "/locations", {
            "name": "roots-all", "url": "file://" + os.path.dirname(data), "type": "LOCAL"})
        self.assertIn(code, (200, 409), body)
        self.addCleanup(self.server.curl, "DELETE", "/locations/roots-all")
        with self.assertRaises(grpc.RpcError) as cm:
            self.clone("file://" + os.path.join(data, "secret.key"),
                       os.path.join(self.tmp, "a", "t3"))
        self.assertEqual(cm.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        self.assertFalse(os.path.exists(os.path.join(self.tmp, "a", "t3", "_delta_log")))


class Limits(h.ServerTest):
    def setUp(self):
        self.base, self.cmd, self.rel, cg, self.spb, sg = pb()
        self.ext = sg.DeltaSharingExtensionServiceStub(self.server.channel())
        self.connect = cg.DeltaConnectServiceStub(self.server.channel())
        self.md = self.server.md()

    def invalid(self, fn, req):
        with self.assertRaises(grpc.RpcError) as cm:
            r = fn(req, metadata=self.md, timeout=30)
            if not hasattr(r, "ByteSize"):
                list(r)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, cm.exception.details())
        return cm.exception.details()

    def test_rotate_with_huge_expiry(self):
        p = self.spb
        made = self.ext.CreateRecipient(p.CreateRecipientRequest(name="big"), metadata=self.md)
        old = made.bearer_token
        msg = self.invalid(self.ext.RotateRecipientToken, p.RotateRecipientTokenRequest(
            name="big", existing_token_expire_in_seconds=INT64_MAX))
        self.assertIn("existing_token_expire_in_seconds", msg)
        self.invalid(self.ext.RotateRecipientToken, p.RotateRecipientTokenRequest(
            name="big", existing_token_expire_in_seconds=-1))
        self.invalid(self.ext.RotateRecipientToken, p.RotateRecipientTokenRequest(
            name="big", token_lifetime_seconds=INT64_MAX))
        self.invalid(self.ext.CreateRecipient, p.CreateRecipientRequest(
            name="big2", token_lifetime_seconds=INT64_MAX))
        # the old token was not cut off
        r = requests.get(self.server.rest + "/shares", headers={"Authorization": "Bearer " + old})
        self.assertEqual(r.status_code, 200, r.text)
        # a long but valid overlap keeps the old token too
        self.ext.RotateRecipientToken(p.RotateRecipientTokenRequest(
            name="big", existing_token_expire_in_seconds=50 * 365 * 24 * 3600), metadata=self.md)
        r = requests.get(self.server.rest + "/shares", headers={"Authorization": "Bearer " + old})
        self.assertEqual(r.status_code, 200, r.text)

    def test_vacuum_retention_bounds(self):
        tmp = tempfile.mkdtemp(prefix="dd-policy-ret-")
        self.addCleanup(shutil.rmtree, tmp, True)
        t = copy_fixture(tmp)
        for hours in (1e300, float("inf"), float("nan"), -1.0):
            req = self.cmd.DeltaCommand(vacuum_table=self.cmd.VacuumTable(
                table=self.base.DeltaTable(path=self.base.DeltaTable.Path(path=t)),
                retention_hours=hours))
            self.invalid(self.connect.ExecuteCommand, req)

    def test_location_with_userinfo_refused(self):
        srv = self.server
        code, body = srv.curl("POST", "/credentials", {"name": "ui-aws", "aws": {
            "accessKeyId": "AKID", "secretAccessKey": "s", "region": "us-east-1"}})
        self.assertEqual(code, 200, body)
        for loc in ({"name": "u1", "url": "s3://user:hunter2@bucket/x", "credential": "ui-aws"},
                    {"name": "u2", "url": "s3://bucket/x", "credential": "ui-aws",
                     "properties": {"endpoint": "http://user:hunter2@127.0.0.1:9000"}},
                    {"name": "u3", "url": "s3://bucket/x", "credential": "ui-aws",
                     "properties": {"endpoint": "http://user@127.0.0.1:9000"}},
                    {"name": "u4", "url": "file://me:pw@localhost/tmp", "type": "LOCAL"}):
            code, body = srv.curl("POST", "/locations", loc)
            self.assertEqual(code, 400, (loc, body))
            self.assertNotIn("hunter2", str(body))
        code, body = srv.curl("POST", "/locations", {"name": "u5", "url": "s3://bucket/x",
                                                     "credential": "ui-aws", "properties": {
                                                         "endpoint": "http://127.0.0.1:9000"}})
        self.assertEqual(code, 200, body)


class SignedUrlsFollowTheGrant(h.ServerTest):
    """A local signed file URL works only while the grant it was made under exists: revoke,
    re-grant (a new grant does not revive old URLs) and DeleteRecipient end it before its
    expiry. Rotating the recipient's token does not (URLs are bound to the grant)."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.tmp = tempfile.mkdtemp(prefix="dd-policy-url-")
        cls.t = copy_fixture(cls.tmp)
        s = cls.server
        for path, body in (("/shares", {"name": "u"}), ("/shares/u/schemas", {"name": "s"}),
                           ("/shares/u/schemas/s/tables", {"name": "t", "url": "file://" + cls.t})):
            code, got = s.curl("POST", path, body)
            assert code == 200, (path, got)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def recipient(self, name):
        code, got = self.server.curl("POST", "/recipients", {"name": name})
        self.assertEqual(code, 200, got)
        self.assertEqual(self.server.curl("POST", "/recipients/%s/grants/u" % name)[0], 200)
        return got["bearerToken"]

    def file_url(self, token):
        r = requests.post(self.server.rest + "/shares/u/schemas/s/tables/t/query", json={},
                          headers={"Authorization": "Bearer " + token})
        self.assertEqual(r.status_code, 200, r.text)
        urls = [json.loads(l)["file"]["url"] for l in r.text.splitlines() if '"file"' in l]
        self.assertTrue(urls)
        return urls[0]

    def fetch(self, url):
        return requests.get(url).status_code

    def test_revoke_and_regrant(self):
        tok = self.recipient("ua")
        url = self.file_url(tok)
        self.assertEqual(self.fetch(url), 200)
        self.assertEqual(self.server.curl("DELETE", "/recipients/ua/grants/u")[0], 200)
        self.assertEqual(self.fetch(url), 404)
        self.assertEqual(self.server.curl("POST", "/recipients/ua/grants/u")[0], 200)
        self.assertEqual(self.fetch(url), 404)  # a new grant, not the old one
        self.assertEqual(self.fetch(self.file_url(tok)), 200)

    def test_delete_recipient(self):
        url = self.file_url(self.recipient("ub"))
        self.assertEqual(self.fetch(url), 200)
        self.assertEqual(self.server.curl("DELETE", "/recipients/ub")[0], 200)
        self.assertEqual(self.fetch(url), 404)

    def test_rotation_keeps_urls(self):
        url = self.file_url(self.recipient("uc"))
        code, got = self.server.curl("POST", "/recipients/uc/rotate-token",
                                     {"existingTokenExpireInSeconds": "0"})
        self.assertEqual(code, 200, got)
        self.assertEqual(self.fetch(url), 200)

    def test_admin_urls(self):
        url = self.file_url(self.server.token)
        self.assertEqual(self.fetch(url), 200)
        # the binding is signed: another recipient id in the same URL is a bad signature
        parts = url.split("/files/", 1)
        tid, rest = parts[1].split("/", 1)
        forged = tid.split(".")
        forged[2] = "00000000-0000-4000-8000-000000000000"
        self.assertEqual(self.fetch(parts[0] + "/files/" + ".".join(forged) + "/" + rest), 403)


class RecipientErrors(h.ServerTest):
    """A recipient sees a generic message and a request id for what goes wrong on the
    provider's side (a shared table that is not a Delta table, a store that cannot be
    reached); the log has the detail under the same id; an admin sees the detail.
    Missing and ungranted shares still answer the same 404."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        s = cls.server
        cls.tmp = tempfile.mkdtemp(prefix="dd-policy-err-")
        cls.notdelta = os.path.join(cls.tmp, "plain")
        os.mkdir(cls.notdelta)
        # AddTable refuses a folder without _delta_log: it has one when added, and loses it
        # after (a table deleted under its share)
        os.mkdir(os.path.join(cls.notdelta, "_delta_log"))
        for path, body in (
                ("/credentials", {"name": "e-aws", "aws": {"accessKeyId": "AKID",
                                                           "secretAccessKey": "s3cr3tvalue",
                                                           "region": "us-east-1"}}),
                ("/locations", {"name": "e-dead", "url": "s3://bucket/t", "credential": "e-aws",
                                "properties": {"endpoint": "http://127.0.0.1:1",
                                               "path_style": "true"}}),
                ("/shares", {"name": "e"}), ("/shares", {"name": "e-other"}),
                ("/shares/e/schemas", {"name": "s"}),
                ("/shares/e/schemas/s/tables", {"name": "plain", "url": "file://" + cls.notdelta}),
                ("/shares/e/schemas/s/tables", {"name": "dead", "location": "e-dead",
                                                "path": "x"})):
            code, got = s.curl("POST", path, body)
            assert code == 200, (path, got)
        os.rmdir(os.path.join(cls.notdelta, "_delta_log"))
        code, got = s.curl("POST", "/recipients", {"name": "erin"})
        assert code == 200, got
        cls.rt = got["bearerToken"]
        assert s.curl("POST", "/recipients/erin/grants/e")[0] == 200

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)
        super().tearDownClass()

    def rest(self, token, table, what="version"):
        url = "%s/shares/e/schemas/s/tables/%s/%s" % (self.server.rest, table, what)
        hd = {"Authorization": "Bearer " + token}
        return requests.post(url, json={}, headers=hd) if what == "query" else requests.get(url, headers=hd)

    def logged(self, rid):
        for _ in range(50):
            lines = [l for l in self.server.stderr_lines if rid in l]
            if lines:
                return " ".join(lines)
            time.sleep(0.05)
        self.fail("request id %s not in the log" % rid)

    def generic(self, msg, secret_bits):
        m = re.search(r"request id ([0-9a-f]{16})", msg)
        self.assertTrue(m, msg)
        for bit in secret_bits:
            self.assertNotIn(bit, msg)
        return m.group(1)

    def test_rest_recipient_gets_request_id(self):
        for table, what, detail in (("plain", "version", "not a Delta table"),
                                    ("plain", "query", "not a Delta table"),
                                    ("plain", "metadata", "not a Delta table"),
                                    ("dead", "version", "127.0.0.1:1"),
                                    ("dead", "query", "127.0.0.1:1")):
            with self.subTest(table=table, what=what):
                r = self.rest(self.rt, table, what)
                self.assertGreaterEqual(r.status_code, 400, r.text)
                body = r.json()
                rid = self.generic(body["message"], [self.notdelta, "127.0.0.1", "bucket"])
                self.assertIn(detail, self.logged(rid))
                # the admin keeps the detail
                a = self.rest(self.server.token, table, what)
                self.assertIn(detail, a.json()["message"])

    def test_grpc_recipient_gets_request_id(self):
        from deltad.sharing.v1 import sharing_pb2 as p, sharing_pb2_grpc as g
        stub = g.DeltaSharingServiceStub(self.server.channel())
        for table in ("plain", "dead"):
            with self.assertRaises(grpc.RpcError) as cm:
                stub.GetTableVersion(p.GetTableVersionRequest(share="e", schema="s", table=table),
                                     metadata=self.server.md(self.rt), timeout=30)
            rid = self.generic(cm.exception.details(), [self.notdelta, "127.0.0.1"])
            self.logged(rid)
            with self.assertRaises(grpc.RpcError) as cm:
                list(stub.QueryTable(p.QueryTableRequest(share="e", schema="s", table=table),
                                     metadata=self.server.md(self.rt), timeout=30))
            self.generic(cm.exception.details(), [self.notdelta, "127.0.0.1"])
            with self.assertRaises(grpc.RpcError) as cm:
                stub.GetTableVersion(p.GetTableVersionRequest(share="e", schema="s", table=table),
                                     metadata=self.server.md(), timeout=30)
            self.assertNotIn("request id", cm.exception.details())

    def test_missing_and_ungranted_still_alike(self):
        miss = self.rest(self.rt, "plain").url.replace("/shares/e/", "/shares/nope/")
        r1 = requests.get(miss, headers={"Authorization": "Bearer " + self.rt})
        r2 = requests.get(miss.replace("/shares/nope/", "/shares/e-other/"),
                          headers={"Authorization": "Bearer " + self.rt})
        self.assertEqual(r1.status_code, 404)
        self.assertEqual(r2.status_code, 404)
        self.assertEqual(r1.json()["message"].replace("nope", "X"),
                         r2.json()["message"].replace("e-other", "X"))


class CatalogDiskFull(h.ServerTest):
    """The data directory on a small tmpfs, filled up: writes are refused saying the disk is
    full, nothing partial is stored, the server stays up, and works again once space is
    freed. Needs root (mount); skipped otherwise."""

    @classmethod
    def setUpClass(cls):
        h.stubs_dir()
        cls.mnt = tempfile.mkdtemp(prefix="dd-policy-tmpfs-")
        r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", cls.mnt],
                           capture_output=True)
        if r.returncode != 0:
            os.rmdir(cls.mnt)
            raise unittest.SkipTest("cannot mount a tmpfs: %s" % r.stderr.decode().strip())
        cls.server = h.Server(data_dir=os.path.join(cls.mnt, "data")).start()

    @classmethod
    def tearDownClass(cls):
        try:
            super().tearDownClass()
        finally:
            subprocess.run(["umount", cls.mnt], check=False)
            os.rmdir(cls.mnt)

    def test_full_then_freed(self):
        from deltad.catalog.v1 import catalog_pb2 as c, catalog_pb2_grpc as cg
        stub = cg.CatalogServiceStub(self.server.channel())
        md = self.server.md()
        filler = os.path.join(self.mnt, "filler")
        with open(filler, "wb") as f:  # everything but about 1 MiB
            try:
                while True:
                    f.write(b"x" * 65536)
                    f.flush()
            except OSError:
                pass
        os.truncate(filler, max(0, os.path.getsize(filler) - (1 << 20)))
        big = {"k%d" % i: "v" * 4000 for i in range(60)}
        failed = None
        for i in range(200):
            try:
                stub.CreateCatalog(c.CreateCatalogRequest(name="full%d" % i, properties=big),
                                   metadata=md, timeout=30)
            except grpc.RpcError as e:
                failed = ("full%d" % i, e.code(), e.details())
                break
        self.assertIsNotNone(failed, "the disk never filled")
        name, code, msg = failed
        self.assertEqual(code, grpc.StatusCode.UNAVAILABLE, msg)
        self.assertIn("no space left", msg)
        with self.assertRaises(grpc.RpcError) as cm:  # nothing partial was stored
            stub.GetCatalog(c.GetCatalogRequest(name=name), metadata=md, timeout=30)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.NOT_FOUND)
        os.unlink(filler)
        stub.CreateCatalog(c.CreateCatalogRequest(name=name, properties=big), metadata=md,
                           timeout=30)
        got = stub.GetCatalog(c.GetCatalogRequest(name=name), metadata=md, timeout=30)
        self.assertEqual(len(got.properties), 60)


class AdminTokenLine(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        h.stubs_dir()

    @classmethod
    def tearDownClass(cls):
        pass

    def test_env_line_only_when_used(self):
        env = {"DELTAD_ADMIN_TOKEN": "policy-token-0123456789abcdef"}
        s = h.Server(env=env)
        try:
            s.start()
            self.assertTrue(any("taken from DELTAD_ADMIN_TOKEN" in l for l in s.stdout_lines))
            self.assertEqual(s.stop(), 0)
            n = len(s.stdout_lines)
            s.start()  # same data directory, variable still set: not read again
            again = s.stdout_lines[n:]
            self.assertFalse(any("DELTAD_ADMIN_TOKEN" in l for l in again), again)
            self.assertTrue(any("kept from an earlier start" in l for l in again), again)
            self.assertEqual(s.stop(), 0)
        finally:
            s.cleanup()


if __name__ == "__main__":
    h.main()
