/* metrics_rest.c: GET /metrics (see metrics_rest.h). */
#include "server/http/native/metrics_rest.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

static int metrics__serve(void *ctx, const dd_http_request *req, dd_http_reply *reply) {
  const dd_native_metrics *m = ctx;
  const char *p = dd_http_req_path(req);
  if (p[0] && strcmp(p, "/")) return dd_err_set(DD_ENOTFOUND, "no route for this path");
  const char *verb = dd_http_req_method(req);
  if (strcmp(verb, "GET") && strcmp(verb, "HEAD")) return dd_err_set(DD_EUNSUPPORTED, "only GET and HEAD");
  if (m->require_admin) {
    dd_principal who;
    int rc = dd_http_req_auth(req, &who);
    if (rc) return rc;
    if (who.kind != DD_PRINCIPAL_ADMIN)
      return dd_err_set(DD_EPERM, "permission denied: metrics need the admin token");
  }
  dd_buf b = {0};
  int rc = m->fn(m->ctx, &b);
  if (!rc && b.oom) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = dd_http_reply_header(reply, "Content-Type", "text/plain; version=0.0.4; charset=utf-8");
  if (!rc) rc = dd_http_reply_body(reply, b.p ? b.p : "", b.len);
  dd_buf_free(&b);
  return rc;
}

int dd_native_metrics_register(dd_http_server *srv, const dd_native_metrics *m) {
  return dd_http_add_native(srv, "/metrics", metrics__serve, (void *)m);
}
