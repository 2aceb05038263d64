/* grpc_server.h: deltad's gRPC transport, built on gRPC core's C API.
 *
 * It serves the methods of a call registry (server/call/call.h) over HTTP/2: it
 * authenticates each call (metadata "authorization: Bearer <token>" through the
 * registry's auth, unless the method is DD_METHOD_PUBLIC), decodes the request with
 * protobuf-c, runs it through dd_call_run on one of its worker threads and sends the
 * response or the call's status and message (DEADLINE_EXCEEDED past the deadline).
 * It also serves grpc.health.v1.Health and grpc.reflection.v1alpha.ServerReflection,
 * both public. With opts.tls it listens with TLS only (grpc_tls.c: optional client
 * certificates, certificate swap with dd_grpc_server_set_tls). How it works inside:
 * grpc_int.h.
 *
 * Threads: start, port, shutdown and free are called by the owner (one thread at a time;
 * shutdown may also race with itself). Handlers run on the server's threads: a unary
 * handler holds its worker thread for its own duration; a server-streaming handler runs on
 * a thread of its own for the whole stream (its sends block), so the worker goes on
 * serving the other calls of the same connection. */
#ifndef DD_SERVER_GRPC_GRPC_SERVER_H
#define DD_SERVER_GRPC_GRPC_SERVER_H

#include <stddef.h>

#include "common/tls.h"
#include "server/call/call.h"

typedef struct dd_grpc_server dd_grpc_server;

typedef struct dd_grpc_opts {
  const char *listen;       /* "host:port"; port 0 picks a free one (see _port) */
  int threads;              /* worker threads (one completion queue each); 0 = cores */
  size_t max_message_bytes; /* largest request or response message; 0 = 16 MiB */
  int shutdown_grace_ms;    /* how long shutdown lets calls finish before cancelling */
  const dd_tls_pem *tls;    /* NULL: plaintext; else TLS (borrowed during start only) */
  /* Connections (gRPC core channel args; 0 = gRPC's default, which for idle and age is
   * "never"). keepalive: ping a transport after keepalive_time_ms without activity and
   * close it when the ack takes over keepalive_timeout_ms; handshake: the HTTP/2 preface
   * (and TLS) must complete within handshake_timeout_ms; a connection with no call in
   * flight for max_connection_idle_ms, or older than max_connection_age_ms, gets GOAWAY
   * (calls still running get max_connection_age_grace_ms more); at most
   * max_concurrent_streams calls at once per connection. gRPC core 1.51 has no cap on
   * the number of connections. */
  int keepalive_time_ms;
  int keepalive_timeout_ms;
  int handshake_timeout_ms;
  int max_connection_idle_ms;
  int max_connection_age_ms;
  int max_connection_age_grace_ms;
  int max_concurrent_streams;
} dd_grpc_opts;
#define DD_GRPC_OPTS_INIT                                                                   \
  {.listen = "127.0.0.1:50051", .threads = 0, .max_message_bytes = 16u << 20,              \
   .shutdown_grace_ms = 5000, .keepalive_time_ms = 120000,                                 \
   .keepalive_timeout_ms = 20000, .handshake_timeout_ms = 20000,                           \
   .max_connection_idle_ms = 300000, .max_connection_age_ms = 0,                           \
   .max_connection_age_grace_ms = 60000, .max_concurrent_streams = 128}

/* Registers the methods of reg (which must outlive the server), listens on opts->listen
 * and starts the worker threads. Returns DD_EINVAL for bad options or an invalid method
 * path, DD_EIO "cannot listen on ..." when the address cannot
 * be bound (in use, bad host). On success *out belongs to the caller: dd_grpc_server_free. */
int dd_grpc_server_start(dd_grpc_server **out, const dd_grpc_opts *opts, const dd_call_registry *reg);

/* The bound TCP port (the chosen one when the listen address said port 0). */
int dd_grpc_server_port(const dd_grpc_server *s);

/* TLS (opts.tls set): replaces the certificate, key and client CA for handshakes that
 * start from now on; connections already open keep theirs. The client_auth mode must be
 * the one the server started with. The PEM text is copied. The caller checks that the
 * key matches the certificate first: gRPC only finds out at the next handshake, logs it
 * and keeps the previous certificate. DD_EINVAL when the server runs without TLS or the
 * mode differs. Any thread, any time before shutdown. */
int dd_grpc_server_set_tls(dd_grpc_server *s, const dd_tls_pem *pem);

/* Begins draining, at once and without blocking: every call that has not started yet
 * is answered UNAVAILABLE "server shutting down"; calls being served go on. The grace of
 * shutdown counts from here. Idempotent; shutdown drains first if this was not called. */
void dd_grpc_server_drain(dd_grpc_server *s);

/* Graceful shutdown: drains, sends GOAWAY 200 ms after the drain began (calls already on
 * the wire are refused, not cancelled), ends health Watch and reflection streams,
 * lets in-flight calls finish until opts.shutdown_grace_ms after the drain, then cancels the rest
 * (a streaming handler's send then returns DD_ECANCELLED), and joins the threads.
 * Idempotent; blocks until done. A handler that never returns blocks it forever, and a
 * handler must not call it (it waits for that very call and joins its thread). */
void dd_grpc_server_shutdown(dd_grpc_server *s);

/* Shuts down first if needed, then frees everything. Accepts NULL. */
void dd_grpc_server_free(dd_grpc_server *s);

#endif
