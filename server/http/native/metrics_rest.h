/* metrics_rest.h: GET /metrics, Prometheus' text exposition format (version 0.0.4). On the
 * REST port it takes the admin token (a recipient's is refused: metrics name recipients);
 * on a listener of its own (deltad --metrics-listen) it may be open. The text comes from
 * the program's callback (deltad: the call core's counters and the engine's). */
#ifndef DD_HTTP_NATIVE_METRICS_REST_H
#define DD_HTTP_NATIVE_METRICS_REST_H

#include <stdbool.h>

#include "common/buf.h"
#include "server/http/http_server.h"

/* Appends the exposition text to out. 0 or a DD_E* code. Runs on the connection threads. */
typedef int (*dd_native_metrics_fn)(void *ctx, dd_buf *out);

typedef struct dd_native_metrics {
  dd_native_metrics_fn fn;
  void *ctx;
  bool require_admin; /* the admin token is needed (REST port) */
} dd_native_metrics;

/* Registers /metrics on srv; m (borrowed) must outlive the server. */
int dd_native_metrics_register(dd_http_server *srv, const dd_native_metrics *m);

#endif
