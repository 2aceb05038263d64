/* health_rest.h: token-less liveness and readiness on the REST port: GET /healthz answers
 * 200 while the process serves HTTP; GET /readyz answers 200 when the program's ready
 * callback says so (deltad: the catalog opens and both ports serve), else 503 with why.
 * A trailing slash is accepted. The bodies are small JSON objects. */
#ifndef DD_HTTP_NATIVE_HEALTH_REST_H
#define DD_HTTP_NATIVE_HEALTH_REST_H

#include <stddef.h>

#include "server/http/http_server.h"

/* Returns 0 when ready, else a DD_E* code with the reason in dd_err_msg(). Runs on the
 * connection threads. */
typedef int (*dd_native_ready_fn)(void *ctx);

/* Registers /healthz and /readyz; ready and ctx must outlive the server. */
int dd_native_health_register(dd_http_server *srv, dd_native_ready_fn ready, void *ctx);

#endif
