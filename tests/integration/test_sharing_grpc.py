"""test_sharing_grpc.py: the Delta Sharing services over gRPC (python3-grpcio): shares,
recipients and grants through DeltaSharingExtensionService, then the protocol through
DeltaSharingService as the recipient, streamed one TableLine per protocol line, checked
against the REST answer for the same request."""
import json
import os

import grpc
import requests

import dd_harness as h

FIX = os.path.realpath(os.environ.get("DD_FIXTURES", os.path.join(h.ROOT, "..", "shared", "fixtures")))
RS = os.path.join(FIX, "delta-rs-data")


def pb():
    h.stubs_dir()
    from deltad.sharing.v1 import sharing_pb2 as s, sharing_pb2_grpc as sg
    return s, sg


class SharingGrpc(h.ServerTest):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        s, sg = pb()
        cls.s = s
        cls.ch = cls.server.channel()
        cls.ext = sg.DeltaSharingExtensionServiceStub(cls.ch)
        cls.svc = sg.DeltaSharingServiceStub(cls.ch)
        md = cls.server.md()
        cls.ext.CreateShare(s.CreateShareRequest(name="g1"), metadata=md)
        cls.ext.CreateSharingSchema(s.CreateSharingSchemaRequest(share="g1", name="sc"), metadata=md)
        cls.ext.AddTable(s.AddTableRequest(share="g1", schema="sc", name="parts",
                                           url="file://" + os.path.join(RS, "delta-0.8.0-partitioned")),
                         metadata=md)
        cls.ext.AddTable(s.AddTableRequest(share="g1", schema="sc", name="dv", history_shared=True,
                                           url="file://" + os.path.join(RS, "table-with-dv-small")),
                         metadata=md)
        r = cls.ext.CreateRecipient(s.CreateRecipientRequest(name="eve"), metadata=md)
        cls.token = r.bearer_token
        cls.ext.GrantShare(s.GrantShareRequest(share="g1", recipient="eve"), metadata=md)
        cls.rmd = cls.server.md(cls.token)

    @classmethod
    def tearDownClass(cls):
        cls.ch.close()
        super().tearDownClass()

    def test_lists(self):
        s = self.s
        r = self.svc.ListShares(s.ListSharesRequest(), metadata=self.rmd)
        self.assertEqual([x.name for x in r.items], ["g1"])
        r = self.svc.ListTables(s.ListTablesRequest(share="G1", schema="SC", max_results=1),
                                metadata=self.rmd)
        self.assertEqual(len(r.items), 1)
        self.assertTrue(r.next_page_token)
        r = self.svc.ListAllTables(s.ListAllTablesRequest(share="g1"), metadata=self.rmd)
        self.assertEqual(sorted(x.name for x in r.items), ["dv", "parts"])

    def test_not_found_and_denied(self):
        s = self.s
        with self.assertRaises(grpc.RpcError) as e:
            self.svc.GetShare(s.GetShareRequest(share="nope"), metadata=self.rmd)
        self.assertEqual(e.exception.code(), grpc.StatusCode.NOT_FOUND)
        with self.assertRaises(grpc.RpcError) as e:
            self.ext.CreateShare(s.CreateShareRequest(name="x"), metadata=self.rmd)
        self.assertEqual(e.exception.code(), grpc.StatusCode.PERMISSION_DENIED)
        with self.assertRaises(grpc.RpcError) as e:
            self.svc.ListShares(s.ListSharesRequest(), metadata=self.server.md("bad"))
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNAUTHENTICATED)

    def test_version(self):
        r = self.svc.GetTableVersion(self.s.GetTableVersionRequest(share="g1", schema="sc",
                                                                   table="parts"),
                                     metadata=self.rmd)
        self.assertEqual(r.version, 0)

    def test_query_stream_matches_rest(self):
        msgs = list(self.svc.QueryTable(self.s.QueryTableRequest(share="g1", schema="sc",
                                                                 table="parts"),
                                        metadata=self.rmd))
        lines = [json.loads(m.line) for m in msgs]
        self.assertIn("protocol", lines[0])
        self.assertIn("metaData", lines[1])
        self.assertEqual(msgs[0].capabilities, "responseformat=parquet")
        rest = requests.post(self.server.rest + "/shares/g1/schemas/sc/tables/parts/query",
                             json={}, headers={"Authorization": "Bearer " + self.token})
        rl = [json.loads(l) for l in rest.text.splitlines()]
        self.assertEqual(len(rl), len(lines))
        strip = lambda l: {k: ({kk: vv for kk, vv in v.items() if kk not in ("url", "expirationTimestamp")}
                               if isinstance(v, dict) else v) for k, v in l.items()}
        self.assertEqual([strip(l) for l in rl], [strip(l) for l in lines])

    def test_open_file_over_grpc_is_unimplemented(self):
        # OpenFile answers with a file, which only the REST port can send. Over gRPC, with a
        # valid signed URL and an admin token, it was INTERNAL ("answered with a file");
        # it is UNIMPLEMENTED naming the REST port, and the server stays up.
        from urllib.parse import urlsplit, parse_qs
        rest = requests.post(self.server.rest + "/shares/g1/schemas/sc/tables/parts/query",
                             json={}, headers={"Authorization": "Bearer " + self.token})
        url = [json.loads(l)["file"]["url"] for l in rest.text.splitlines() if '"file"' in l][0]
        u = urlsplit(url)
        q = parse_qs(u.query)
        path = u.path.split("/files/", 1)[1]
        s, sg = pb()
        files = sg.DeltaSharingFileServiceStub(self.ch)
        with self.assertRaises(grpc.RpcError) as e:
            files.OpenFile(s.OpenFileRequest(path=path, expires=q.get("expires", [""])[0],
                                             sig=q.get("sig", [""])[0]),
                           metadata=self.server.md())
        self.assertEqual(e.exception.code(), grpc.StatusCode.UNIMPLEMENTED, e.exception.details())
        self.assertIn("REST", e.exception.details())
        self.assertEqual(requests.get(url).status_code, 200)

    def test_metadata_and_dv_capabilities(self):
        s = self.s
        msgs = list(self.svc.GetTableMetadata(
            s.GetTableMetadataRequest(share="g1", schema="sc", table="dv"),
            metadata=self.rmd + (("delta-sharing-capabilities",
                                  "responseformat=delta;readerfeatures=deletionvectors"),)))
        self.assertEqual(msgs[0].capabilities.split(";")[0], "responseformat=delta")
        with self.assertRaises(grpc.RpcError) as e:
            list(self.svc.QueryTable(s.QueryTableRequest(share="g1", schema="sc", table="dv"),
                                     metadata=self.rmd))
        self.assertIn(e.exception.code(), (grpc.StatusCode.FAILED_PRECONDITION,
                                           grpc.StatusCode.INVALID_ARGUMENT,
                                           grpc.StatusCode.UNIMPLEMENTED))


if __name__ == "__main__":
    h.main()
