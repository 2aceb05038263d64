/* health_rest.c: GET /healthz and /readyz (see health_rest.h). No token: load balancers and
 * orchestrators probe them before any credential exists. */
#include "server/http/native/health_rest.h"

#include <stdio.h>
#include <string.h>

#include "common/err.h"

typedef struct health__ready {
  dd_native_ready_fn fn;
  void *ctx;
} health__ready;

static health__ready health__r;

/* "" or "/": the probe's own path; anything longer is not a route. */
static int health__path_ok(const dd_http_request *req) {
  const char *p = dd_http_req_path(req);
  return !p[0] || !strcmp(p, "/");
}

static int health__reply(dd_http_reply *reply, int status, const char *body) {
  int rc = dd_http_reply_status(reply, status);
  if (!rc) rc = dd_http_reply_header(reply, "Content-Type", "application/json");
  if (!rc) rc = dd_http_reply_body(reply, body, strlen(body));
  return rc;
}

static int health__check(const dd_http_request *req) {
  if (!health__path_ok(req)) return dd_err_set(DD_ENOTFOUND, "no route for this path");
  const char *m = dd_http_req_method(req);
  if (strcmp(m, "GET") && strcmp(m, "HEAD")) return dd_err_set(DD_EUNSUPPORTED, "only GET and HEAD");
  return 0;
}

static int health__live(void *ctx, const dd_http_request *req, dd_http_reply *reply) {
  (void)ctx;
  int rc = health__check(req);
  return rc ? rc : health__reply(reply, 200, "{\"status\":\"ok\"}\n");
}

static int health__ready_serve(void *ctx, const dd_http_request *req, dd_http_reply *reply) {
  (void)ctx;
  int rc = health__check(req);
  if (rc) return rc;
  if (health__r.fn && health__r.fn(health__r.ctx) != 0) {
    char body[600];
    char why[400];
    size_t n = 0;
    for (const char *c = dd_err_msg(); *c && n + 2 < sizeof why; c++) {
      if (*c == '"' || *c == '\\') why[n++] = '\\';
      why[n++] = (unsigned char)*c < 0x20 ? ' ' : *c;
    }
    why[n] = '\0';
    snprintf(body, sizeof body, "{\"status\":\"unavailable\",\"reason\":\"%s\"}\n", why);
    return health__reply(reply, 503, body);
  }
  return health__reply(reply, 200, "{\"status\":\"ready\"}\n");
}

int dd_native_health_register(dd_http_server *srv, dd_native_ready_fn ready, void *ctx) {
  health__r.fn = ready;
  health__r.ctx = ctx;
  int rc = dd_http_add_native(srv, "/healthz", health__live, NULL);
  if (!rc) rc = dd_http_add_native(srv, "/readyz", health__ready_serve, NULL);
  return rc;
}
