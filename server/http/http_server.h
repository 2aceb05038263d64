/* http_server.h: deltad's REST listener (libmicrohttpd).
 *
 * It serves the same dd_method table as the gRPC runtime: every route of
 * generated/api.h (the google.api.http annotations) whose method is in the table, under a
 * base path ("/api/v1"), transcoded as google.api.http says: path variables and query
 * parameters set request fields, the JSON body is the whole request (body "*") or one
 * field, and the response is the proto3 JSON of the reply (server/http/pbjson.h).
 * Streaming methods answer NDJSON, one JSON object per line, sent as the handler produces
 * them (chunked, never buffered whole; a failure after the first line becomes a last
 * {"error": {...}} line; a client that goes away makes the handler's send fail with
 * DD_ECANCELLED). Errors are
 * {"code": <grpc code>, "message": "...", "details": []} with dd_call_status_http(code)
 * (a call past the deadline of its grpc-timeout header: 504, code 4 DEADLINE_EXCEEDED);
 * unknown paths 404, a known path with another verb 405 (with Allow), a body over
 * max_body_bytes 413, bad JSON / unknown fields / wrong types 400 (the handler is not
 * called). HEAD is served as GET without the body. Authentication: "Authorization: Bearer <token>"
 * or "x-api-key: <token>" through the registry's auth, except for DD_METHOD_PUBLIC
 * methods.
 *
 * With opts.tls the port speaks HTTPS only (http_tls.c: GnuTLS through libmicrohttpd,
 * certificate swap with dd_http_server_set_tls, client certificates checked per request).
 *
 * Protocols that must control every byte (Delta Sharing, Lance Namespace) register a
 * native handler for a path prefix; it sees the raw request and writes the raw reply.
 *
 * Threads: with opts.threads == 0 every connection has its own thread and handlers run
 * on it: the default, and by far the faster mode (2-core VM, wrk 2x64 connections, real
 * app: ~32k req/s Ping and ~28k GetCatalog, against ~8.5k for threads = 2). With
 * threads > 0, that many epoll threads share the connections and unary handlers run on
 * 4 x threads workers while their connection is suspended (fewer threads for very many
 * idle connections, at a hand-off per call). Either way a slow handler holds up no
 * other request. */
#ifndef DD_SERVER_HTTP_HTTP_SERVER_H
#define DD_SERVER_HTTP_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/tls.h"
#include "server/call/call.h"

typedef struct dd_http_server dd_http_server;

typedef struct dd_http_opts {
  const char *listen;    /* "host:port"; port 0 picks a free one (see dd_http_server_port) */
  const char *base_path; /* prefix of every generated route, "/api/v1"; "" for none */
  int threads;           /* 0: a thread per connection; > 0: epoll thread pool size */
  size_t max_body_bytes; /* larger request bodies get 413 */
  int shutdown_grace_ms; /* on stop, how long requests (and replies being sent) may finish */
  const dd_tls_pem *tls; /* NULL: plaintext; else HTTPS (borrowed during _new only) */
  /* Connections: caps and timeouts (0 = none). A connection on which no byte moved for
   * idle_timeout_s is closed (a reply still being produced does not count as idle); the
   * request line and headers must arrive within header_timeout_s of the accept or of the
   * end of the previous reply (so it also bounds an idle keep-alive connection), the
   * body within body_timeout_s of the headers. Over max_connections (in all) or
   * max_connections_per_ip (from one address) a new connection is closed at accept. */
  int idle_timeout_s;
  int header_timeout_s;
  int body_timeout_s;
  unsigned max_connections;
  unsigned max_connections_per_ip;
} dd_http_opts;
#define DD_HTTP_OPTS_INIT                                                                  \
  {.listen = "127.0.0.1:8080", .base_path = "/api/v1", .threads = 0,                       \
   .max_body_bytes = 16u << 20, .shutdown_grace_ms = 30000,                                \
   .idle_timeout_s = DD_HTTP_IDLE_TIMEOUT_S, .header_timeout_s = DD_HTTP_HEADER_TIMEOUT_S, \
   .body_timeout_s = DD_HTTP_BODY_TIMEOUT_S, .max_connections = DD_HTTP_MAX_CONNECTIONS,   \
   .max_connections_per_ip = DD_HTTP_MAX_CONNECTIONS_PER_IP}
#define DD_HTTP_IDLE_TIMEOUT_S 30
#define DD_HTTP_HEADER_TIMEOUT_S 30
#define DD_HTTP_BODY_TIMEOUT_S 60
#define DD_HTTP_MAX_CONNECTIONS 512 /* below the usual open-files limit of 1024 */
#define DD_HTTP_MAX_CONNECTIONS_PER_IP 128

/* ---- native handlers ----------------------------------------------------------------- */

typedef struct dd_http_request dd_http_request; /* valid during the native call only */
typedef struct dd_http_reply dd_http_reply;

const char *dd_http_req_method(const dd_http_request *r); /* "GET", ... */
/* The path after the native prefix, still percent-encoded, without the query ("" when
 * the path equals the prefix). Split it, then decode segments with dd_call_pct_decode. */
const char *dd_http_req_path(const dd_http_request *r);
/* First value of query parameter name, decoded; NULL when absent. */
const char *dd_http_req_query(const dd_http_request *r, const char *name);
/* Request header by name (case-insensitive); NULL when absent. */
const char *dd_http_req_header(const dd_http_request *r, const char *name);
const uint8_t *dd_http_req_body(const dd_http_request *r, size_t *len);
/* Runs opts.auth on the request's bearer token / x-api-key. 0 or DD_EUNAUTH. */
int dd_http_req_auth(const dd_http_request *r, dd_principal *out);

/* Reply building. The status defaults to 200 and the body to empty. Strings and bytes are
 * copied. Returns 0 or DD_ENOMEM. */
int dd_http_reply_status(dd_http_reply *r, int status);
int dd_http_reply_header(dd_http_reply *r, const char *name, const char *value);
int dd_http_reply_body(dd_http_reply *r, const void *data, size_t len); /* appends */

/* A file body: len bytes of fd from off. The reply owns fd (closes it, also on error);
 * the kernel sends it without copies. Replaces any body. */
int dd_http_reply_file(dd_http_reply *r, int fd, uint64_t off, uint64_t len);

/* A streamed body: fn is called with the position so far and a buffer; it returns the
 * bytes written (> 0), DD_HTTP_STREAM_END when done, or DD_HTTP_STREAM_ERROR to cut the
 * connection. It may block in thread-per-connection mode (in the epoll pool it would
 * hold up that thread's other connections). free_cls runs once at the end whatever
 * happened (may be NULL). Replaces any body. */
typedef ssize_t (*dd_http_stream_fn)(void *cls, uint64_t pos, char *buf, size_t max);
#define DD_HTTP_STREAM_END ((ssize_t)-1)
#define DD_HTTP_STREAM_ERROR ((ssize_t)-2)
int dd_http_reply_stream(dd_http_reply *r, dd_http_stream_fn fn, void *cls, void (*free_cls)(void *));

/* A native handler. Returns 0 after filling reply, or a DD_E* code (dd_err_set) to send
 * the standard JSON error instead. Runs concurrently on the connection threads (in the
 * epoll pool: on the pool thread, so it should not block there). */
typedef int (*dd_http_native_fn)(void *ctx, const dd_http_request *req, dd_http_reply *reply);

/* ---- the server ---------------------------------------------------------------------- */

/* Builds a server for the routes of reg (borrowed; must outlive the server), whose app
 * and auth serve every call. */
int dd_http_server_new(dd_http_server **out, const dd_http_opts *opts, const dd_call_registry *reg);
/* Requests whose path starts with prefix (e.g. "/delta-sharing/", "/v1/namespace/") go to
 * fn, before the generated routes; the longest matching prefix wins. Call before start. */
int dd_http_add_native(dd_http_server *s, const char *prefix, dd_http_native_fn fn, void *ctx);
/* Binds and listens without serving yet, so the port is known (and, say, the public
 * URL set) before any request can arrive. DD_EIO when the address cannot be bound.
 * Optional: start binds if this was not called. */
int dd_http_server_bind(dd_http_server *s);
/* Binds (if needed) and starts serving. DD_EIO when the address cannot be bound. */
int dd_http_server_start(dd_http_server *s);
/* The bound port (after bind or start), or -1. */
int dd_http_server_port(const dd_http_server *s);
/* HTTPS (opts.tls set): replaces the certificate, key and client CA for handshakes that
 * start from now on; open connections keep theirs. The client_auth mode must be the one
 * the server was built with. PEM text is copied. DD_EINVAL for unreadable PEM (the
 * current certificate stays), a plaintext server or another mode. Any thread. One HTTPS
 * server per process (the GnuTLS certificate callback has no user pointer). */
int dd_http_server_set_tls(dd_http_server *s, const dd_tls_pem *pem);
/* Begins draining, at once: no new connections; a new request on a kept-alive
 * connection is answered 503 with "Connection: close"; connections idle between
 * requests are closed. Requests being served go on. The grace of stop() counts from
 * here. Idempotent; stop() drains first if this was not called. */
void dd_http_server_drain(dd_http_server *s);
/* Drains, waits for in-flight requests (up to the grace counted from the drain), then
 * stops. */
void dd_http_server_stop(dd_http_server *s);
/* Stops if needed and frees. Accepts NULL. */
void dd_http_server_free(dd_http_server *s);

#endif
