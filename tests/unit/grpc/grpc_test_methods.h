/* grpc_test_methods.h: a small method table that exercises the gRPC runtime (unary,
 * streaming, errors, deadlines, metadata, public methods) and a fake authenticator, shared
 * by the C unit test and the grpc_test_server used by the Python interop test.
 *
 *   /deltad.system.v1.SystemService/Ping           PingRequest -> PingResponse
 *   /deltad.system.v1.SystemService/GetServerInfo  version = metadata "x-echo" (or "none"),
 *                                                  principal = the caller's name
 *   /dd.test.v1.Test/Echo     GetCatalogRequest{name} -> CatalogInfo{name}; name "notfound"
 *                             fails NOT_FOUND; "big:N" replies with an N-byte comment
 *   /dd.test.v1.Test/Sleep    GetCatalogRequest{name = ms} sleeps, -> CatalogInfo{name}
 *   /dd.test.v1.Test/Deadline GetCatalogRequest -> CatalogInfo{comment = deadline_ms}
 *   /dd.test.v1.Test/Public   (no token) GetCatalogRequest -> CatalogInfo{name = principal
 *                             kind: "none" or "admin"}
 *   /dd.test.v1.Test/Count    (streaming) ListCatalogsRequest{max_results = N,
 *                             page_token "slow" = 20 ms apart} -> N x CatalogInfo{"item-i"}
 *   /dd.test.v1.Test/Hold     (streaming) ListCatalogsRequest -> one CatalogInfo, "released"
 *                             once a Release call ran, "timed-out" if none came in 30 s
 *   /dd.test.v1.Test/Release  GetCatalogRequest -> CatalogInfo{"released"}: opens Hold's gate */
#ifndef DD_TESTS_UNIT_GRPC_TEST_METHODS_H
#define DD_TESTS_UNIT_GRPC_TEST_METHODS_H

#include <stdatomic.h>

#include "server/call/call.h"

#define GT_TOKEN "test-token"
#define GT_PRINCIPAL "tester"

extern const dd_method gt_methods[];
extern const size_t gt_methods_len;

/* Handler calls so far, and streaming sends that returned DD_ECANCELLED. */
extern atomic_long gt_handler_calls;
extern atomic_long gt_stream_cancelled;
/* Hold handlers that are waiting for their gate. */
extern atomic_long gt_holding;

/* Accepts GT_TOKEN as an admin named GT_PRINCIPAL. */
int gt_auth(void *app, const char *token, size_t len, dd_principal *out);
/* The call registry of gt_methods with gt_auth, built once (lives for the process). */
const dd_call_registry *gt_registry(void);

#endif
