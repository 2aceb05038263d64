/* deltad_forward.c: the transport of --spark-connect (server/service/connect_forward.h):
 * the forwarder's calls to the Spark Connect server go through dd_client (cmd/client.h),
 * one client (channel) per call, with the forwarder's deadline; UNAVAILABLE and
 * DEADLINE_EXCEEDED keep their own codes so the forwarder can name the endpoint. */
#include "cmd/deltad_forward.h"

#include <grpc/grpc.h>

#include "cmd/client.h"
#include "common/err.h"
#include "server/service/connect_forward.h"

/* The DD_E* code of the call's gRPC status: a deadline is DD_EDEADLINE, not CANCELLED. */
static int fwd__code(const dd_client *c, int rc) {
  if (rc && dd_client_last_status(c) == GRPC_STATUS_DEADLINE_EXCEEDED) return DD_EDEADLINE;
  return rc;
}

static int fwd__open(dd_client **c, const char *endpoint, int64_t timeout_ms) {
  dd_client_opts o = DD_CLIENT_OPTS_INIT;
  o.target = endpoint;
  o.timeout_ms = timeout_ms;
  return dd_client_open(c, &o);
}

static int fwd__stream(void *ctx, const char *endpoint, int64_t timeout_ms, const char *method,
                       const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp,
                       connect_fwd_msg_fn fn, void *ud) {
  (void)ctx;
  dd_client *c = NULL;
  int rc = fwd__open(&c, endpoint, timeout_ms);
  if (!rc) rc = fwd__code(c, dd_client_stream(c, method, req, resp, fn, ud));
  dd_client_free(c);
  return rc;
}

static int fwd__unary(void *ctx, const char *endpoint, int64_t timeout_ms, const char *method,
                      const ProtobufCMessage *req, const ProtobufCMessageDescriptor *resp,
                      ProtobufCMessage **out) {
  (void)ctx;
  dd_client *c = NULL;
  int rc = fwd__open(&c, endpoint, timeout_ms);
  if (!rc) rc = fwd__code(c, dd_client_call(c, method, req, resp, out));
  dd_client_free(c);
  return rc;
}

int dd_forward_start(const dd_config *cfg) {
  connect_fwd_opts o = CONNECT_FWD_OPTS_INIT;
  o.target = cfg->spark_connect;
  o.ops = cfg->spark_forward;
  o.min_bytes = cfg->spark_forward_min_bytes;
  o.timeout_ms = cfg->spark_forward_timeout_s * 1000;
  o.rpc.stream = fwd__stream;
  o.rpc.unary = fwd__unary;
  return connect_forward_configure(&o);
}

void dd_forward_stop(void) { connect_forward_shutdown(); }
