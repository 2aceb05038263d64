"""test_call_deadline.py: every call runs with a deadline (the call core, server/call).

REST takes one from the grpc-timeout header (gRPC's wire format, as Envoy and gRPC-web
send it): a call past it ends 504 with code 4 (DEADLINE_EXCEEDED), in both REST modes
(a thread per connection, and the epoll pool of --http-threads 1); a malformed value is
400; a generous one changes nothing. gRPC ends DEADLINE_EXCEEDED too, and the server keeps
serving after all of them.
"""
import grpc

import dd_harness as h


class DeadlineTpc(h.ServerTest):
    def test_rest_deadline(self):
        s = self.server
        code, body = s.curl("GET", "/catalogs", headers=["grpc-timeout: 1n"])
        self.assertEqual(code, 504, body)
        self.assertEqual(body["code"], 4)
        self.assertIn("deadline exceeded", body["message"])
        code, body = s.curl("POST", "/catalogs", {"name": "late"}, headers=["grpc-timeout: 1n"])
        self.assertEqual(code, 504, body)
        code, body = s.curl("GET", "/catalogs/late")
        self.assertEqual(code, 404, body)  # the handler never ran: nothing was created
        code, body = s.curl("GET", "/catalogs", headers=["grpc-timeout: soon"])
        self.assertEqual(code, 400, body)
        self.assertEqual(body["code"], 3)
        code, body = s.curl("GET", "/catalogs", headers=["grpc-timeout: 30S"])
        self.assertEqual(code, 200, body)

    def test_grpc_deadline(self):
        h.stubs_dir()
        from deltad.catalog.v1 import catalog_pb2 as c, catalog_pb2_grpc as cg
        stub = cg.CatalogServiceStub(self.server.channel())
        with self.assertRaises(grpc.RpcError) as cm:
            stub.ListCatalogs(c.ListCatalogsRequest(), metadata=self.server.md(), timeout=0.000001)
        self.assertEqual(cm.exception.code(), grpc.StatusCode.DEADLINE_EXCEEDED)
        stub.ListCatalogs(c.ListCatalogsRequest(), metadata=self.server.md(), timeout=30)


class DeadlinePool(DeadlineTpc):
    """The same with the REST epoll pool (--http-threads 1)."""
    server_args = ["--http-threads", "1"]


if __name__ == "__main__":
    h.main()
