/* call.h: the call core: how every transport runs every method (prefix dd_call_).
 *
 * A transport (server/grpc, server/http and the native REST codecs) does, per call:
 *   1. find the method in the registry: by gRPC path (dd_call_find) or by REST route
 *      (dd_call_route_match);
 *   2. authenticate and admit the caller (dd_call_authenticate), before decoding anything;
 *   3. decode the request into the method's input message (the transport's own codec);
 *   4. run it: dd_call_run for a call the transport serves on its own thread, or the
 *      stream runner (dd_call_stream_*) for a reply that is produced on another thread
 *      while the transport sends what is ready;
 *   5. map a failure through the one status table (dd_call_status_*).
 * A unary reply and each streamed message reach the transport the same way, through the
 * sink's send (or the runner's encode hook), so transports treat both alike. The core
 * checks what the handler may not do (a second unary reply, a send from a unary handler,
 * a reply of the wrong type) and the deadline before and after the handler.
 *
 * Deadlines are absolute CLOCK_MONOTONIC milliseconds (dd_call_now_ms), 0 for none, so a
 * step of the wall clock cannot expire a call; a call past its deadline fails with DD_EDEADLINE. REST takes one from the grpc-timeout header
 * (dd_call_parse_timeout). Threads: everything here is thread-safe; a registry is
 * read-only once built. */
#ifndef DD_SERVER_CALL_CALL_H
#define DD_SERVER_CALL_CALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/buf.h"
#include "common/log.h"
#include "generated/api.h"
#include "server/call/call_route.h"
#include "server/call/handler.h"
#include "server/call/req_guard.h"

/* ---- the registry ---------------------------------------------------------------------- */

typedef struct dd_call_registry dd_call_registry;

/* Builds the registry of methods[0..n) (borrowed: must outlive it), served with app and
 * tokens checked by auth (NULL: no tokens are accepted, only DD_METHOD_PUBLIC methods
 * run). REST routes are those of generated/api.h whose method is in the table. */
int dd_call_registry_new(dd_call_registry **out, const dd_method *methods, size_t n, void *app,
                         dd_auth_fn auth);
void dd_call_registry_free(dd_call_registry *r);
/* Called by dd_call_run after every handler returned, on its thread, with the request, the
 * unary reply (NULL for a stream or a file) and the call's code: the services' audit log
 * hangs here. Set before serving; NULL for none. */
typedef void (*dd_call_observe_fn)(const dd_call *call, const dd_method *m, const ProtobufCMessage *req,
                                   const ProtobufCMessage *out, int rc);
void dd_call_registry_set_observer(dd_call_registry *r, dd_call_observe_fn fn);
/* Called by dd_call_run just before every handler, on the thread it runs on, with the
 * decoded request (the audit log arms its event here, to be written in the change's own
 * transaction). Set before serving; NULL for none. */
typedef void (*dd_call_pre_observe_fn)(const dd_call *call, const dd_method *m,
                                       const ProtobufCMessage *req);
void dd_call_registry_set_pre_observer(dd_call_registry *r, dd_call_pre_observe_fn fn);
void *dd_call_registry_app(const dd_call_registry *r);
/* The methods, in table order (for transports that register each one). */
size_t dd_call_registry_count(const dd_call_registry *r);
const dd_method *dd_call_registry_method(const dd_call_registry *r, size_t i);

/* The method of a gRPC path ("/pkg.Service/Method", len bytes, not NUL-terminated), or
 * NULL. A hash lookup. */
const dd_method *dd_call_find(const dd_call_registry *r, const char *path, size_t len);

/* A REST route matched: its method, its route (body rule) and the path variables. */
typedef struct dd_call_route {
  const dd_method *method;
  const dd_api_route *route;
  dd_call_match match; /* release with dd_call_route_clear */
} dd_call_route;
/* Matches verb and path (relative to the base path; see call_route.h). 0, DD_ENOTFOUND,
 * DD_EUNSUPPORTED (other verbs only: out->match.allow lists them, HTTP 405), DD_EINVAL. */
int dd_call_route_match(const dd_call_registry *r, const char *verb, const char *path,
                        dd_call_route *out);
void dd_call_route_clear(dd_call_route *rt);

/* ---- the call's read view ------------------------------------------------------------- */
/* One read view per call: the services (which know the catalog; the call core does not)
 * may open a read view before the token check and keep it for the handler, so the check
 * and every read of a unary handler share one transaction: one consistent state, and on
 * PostgreSQL one round trip instead of one per read view. The view travels as
 * who->view; the transport's reference lives in the admission ticket (rg_release gives it
 * back), a stream's in the stream. dd_call_run binds it around a unary handler on the
 * handler's thread and ends its transaction when the handler returns; a streaming
 * handler (long-lived) gets none: the view ends before it starts and it opens its own.
 * All hooks are thread-safe except bind, which acts on the calling thread only. */
typedef struct dd_call_view_ops {
  /* Opens a view for a call of app and binds it to this thread: *out (NULL: none). 0 or
   * DD_E* (DD_EIO: the catalog is unavailable; the call fails with it). One reference. */
  int (*open)(void *app, void **out);
  /* Binds view to this thread (NULL: unbinds what is bound). */
  void (*bind)(void *view);
  /* The handler is done: end view's transaction now (the object lives until its last
   * reference goes). Not bound on this thread. */
  void (*done)(void *view);
  void (*ref)(void *view);
  void (*unref)(void *view); /* the last one closes it */
} dd_call_view_ops;
/* Gives every authenticated call of r a read view from ops (borrowed: outlives r). Set
 * before serving; NULL (the default): none, each read opens its own. */
void dd_call_registry_set_view_ops(dd_call_registry *r, const dd_call_view_ops *ops);
const dd_call_view_ops *dd_call_registry_view_ops(const dd_call_registry *r);

/* ---- authentication and admission ------------------------------------------------------ */

/* Transports differ only in where a token may come from and how they name it. */
typedef enum {
  DD_CALL_AUTH_GRPC = 0, /* "authorization: Bearer <token>" metadata only */
  DD_CALL_AUTH_REST = 1, /* Authorization: Bearer <token>, else x-api-key: <token> */
} dd_call_auth_kind;

/* For a call of m: parses the token from authorization / api_key (raw header values, NULL
 * when absent; api_key only for REST), checks it with the registry's auth, authorizes m
 * for the principal (dd_method_authorize) and admits the call (rg_admit into *ticket,
 * which the transport releases when the call ends). *who is filled in every case (kind
 * NONE for a public method). 0, DD_EUNAUTH, DD_EPERM or DD_ENOMEM (over a cap). A refusal is
 * counted and logged here (call_obs.h) under request_id (the transport's, sent back to the
 * client; NULL: a fresh one). With view ops (dd_call_registry_set_view_ops) the token is
 * checked in the call's read view, kept in who->view and held by *ticket (which the
 * transport releases in every case, also after a refusal). */
int dd_call_authenticate(const dd_call_registry *r, const dd_method *m, dd_call_auth_kind kind,
                         const char *authorization, const char *api_key, dd_principal *who,
                         rg_ticket *ticket, const char *request_id);
/* Only the token part of dd_call_authenticate (no read view is kept): *who from the token,
 * or DD_EUNAUTH. */
int dd_call_authenticate_token(const dd_call_registry *r, dd_call_auth_kind kind,
                               const char *authorization, const char *api_key, dd_principal *who);
/* The token and admission parts of dd_call_authenticate, with the call's read view kept as
 * there (for a native codec that authorizes by itself, once it knows the method). */
int dd_call_authenticate_admit(const dd_call_registry *r, dd_call_auth_kind kind,
                               const char *authorization, const char *api_key, dd_principal *who,
                               rg_ticket *ticket);
/* The token of a header value "Bearer <token>" (spaces trimmed; *len bytes, not
 * NUL-terminated), or NULL. */
const char *dd_call_bearer(const char *value, size_t *len);

/* ---- running a call -------------------------------------------------------------------- */

/* What the transport gives the call. header and send run on the thread of dd_call_run. */
typedef struct dd_call_sink {
  void *cls;
  /* Request metadata / header by lower-case name; NULL when absent (valid during the call). */
  const char *(*header)(void *cls, const char *name);
  /* One reply message, already checked to be the method's output type: the unary reply
   * (once; the core frees it afterwards) or one streamed message (the handler's). 0, or a
   * DD_E* code that the handler's send returns (DD_ECANCELLED: client gone). */
  int (*send)(void *cls, const ProtobufCMessage *msg);
  /* Optional (NULL: no memo): a unary handler's dd_call_memo(key). 1: the transport holds
   * the bytes of the reply it sent for (this method, key) and will send them; *pb_bytes is
   * that reply's protobuf size (for the metrics). 0: it does not, and may keep the
   * encoding of the reply sent next under key (copied here if it wants it). */
  int (*memo)(void *cls, const void *key, size_t len, uint64_t *pb_bytes);
  /* Optional: the transport's request id for this call (DD_REQUEST_ID_LEN hex digits, sent
   * back to the client), else the core makes one. Borrowed for the call. */
  const char *request_id;
} dd_call_sink;

/* What the call reports back besides its status. */
typedef struct dd_call_result {
  int detail;                  /* the handler's dd_call_set_detail, 0 none */
  int file_fd;                 /* a file reply (the transport owns it now), -1 none */
  uint64_t file_off, file_len;
  size_t sent;                 /* messages given to sink->send */
  uint64_t bytes;              /* their protobuf size, plus a file reply's length */
  char request_id[DD_REQUEST_ID_LEN + 1]; /* the call's (the sink's, or a fresh one) */
} dd_call_result;

/* Runs m's handler on req (borrowed) for who (borrowed) with the registry's app. Returns
 * 0 or the call's DD_E* code (message in dd_err_msg()); DD_EDEADLINE when deadline_ms
 * passed before or during the call. *res is filled in every case. */
int dd_call_run(const dd_call_registry *r, const dd_method *m, const ProtobufCMessage *req,
                const dd_principal *who, int64_t deadline_ms, const dd_call_sink *sink,
                dd_call_result *res);

/* ---- metrics -------------------------------------------------------------------------- */

/* Appends the call core's metrics in Prometheus' text format (requests by method and code,
 * latency histograms, reply bytes and messages, calls in flight, per-recipient counts;
 * call_obs.h says how labels stay bounded). Every call that reached dd_call_run, or was
 * refused by dd_call_authenticate, is counted once. 0 or DD_ENOMEM. */
int dd_call_metrics_write(const dd_call_registry *r, dd_buf *out);

/* ---- deadlines ------------------------------------------------------------------------- */

int64_t dd_call_now_ms(void); /* CLOCK_MONOTONIC, ms: the clock of every deadline */
/* True when deadline_ms (0: none) has passed. */
bool dd_call_deadline_passed(int64_t deadline_ms);
/* A grpc-timeout header value ("250m": 1-8 digits and a unit H M S m u n) as an absolute
 * deadline from now (*deadline_ms; 0 when value is NULL). DD_EINVAL for a malformed one. */
int dd_call_parse_timeout(const char *value, int64_t *deadline_ms);

/* ---- the one status table -------------------------------------------------------------- */

int dd_call_status_grpc(int code); /* grpc_status_code value */
int dd_call_status_http(int code); /* HTTP status of the generated REST routes */
/* Delta Sharing REST: the errorCode string and *http_status. */
const char *dd_call_status_sharing(int code, int *http_status);
/* Lance Namespace REST: the numeric error code for code and detail (DD_CALL_DETAIL_*),
 * and *http_status. */
int dd_call_status_lance(int code, int detail, int *http_status);

/* ---- the stream runner ----------------------------------------------------------------- */
/* A handler running on a producer thread (streaming methods: a thread each; unary calls:
 * the runner's worker pool) while the transport sends what is ready. Each message the
 * handler sends (or the unary reply) is encoded to bytes by the transport's encode hook on
 * the producer thread and appended to a bounded queue: the producer waits while more than
 * DD_CALL_STREAM_HIGH_WATER bytes are unsent. The transport waits (blocking, or by
 * suspending the connection through its hooks) for the first bytes or the end, decides
 * its status and headers then (dd_call_stream_status), and reads the bytes
 * (dd_call_stream_read). A failure after bytes were queued goes through encode_error (a
 * last line, or cut). Releasing the stream cancels the handler's next send. */

#define DD_CALL_STREAM_HIGH_WATER (1u << 20)
#define DD_CALL_STREAM_WAKE_BYTES (64u << 10) /* a send wakes the transport (call_stream.c) */

/* A growing byte buffer an encode hook appends to. */
typedef struct dd_call_buf {
  char *data;
  size_t len, cap;
} dd_call_buf;
int dd_call_buf_append(dd_call_buf *b, const void *data, size_t n); /* 0 or DD_ENOMEM */

/* A transport's reply memo (call_memotab.c; thread-safe): the bytes it sent for a
 * dd_call_memo key, kept in 64 slots (one entry a slot, replaced by the next put there;
 * bodies over 64 KiB not kept). get: 1 and the body kept under key copied into *body (its
 * len reset) with its protobuf size, or 0. put: keeps a copy of body under key (a large
 * body, or no memory: nothing is kept). */
typedef struct dd_call_memotab dd_call_memotab;
int dd_call_memotab_new(dd_call_memotab **out);
void dd_call_memotab_free(dd_call_memotab *m);
int dd_call_memotab_get(dd_call_memotab *m, const void *key, size_t klen, dd_call_buf *body,
                        uint64_t *pb_bytes);
/* get without the copy: on a hit, fn sees the kept body under the slot's read lock (it
 * must not call the table); its 0 makes the hit, anything else a miss. */
int dd_call_memotab_use(dd_call_memotab *m, const void *key, size_t klen,
                        int (*fn)(void *ctx, const void *body, size_t blen, uint64_t pb_bytes), void *ctx);
void dd_call_memotab_put(dd_call_memotab *m, const void *key, size_t klen, const void *body,
                         size_t blen, uint64_t pb_bytes);

typedef struct dd_call_stream_hooks {
  void *cls; /* the transport's (and codec's) state; outlives the stream */
  /* Producer thread, with the stream's lock held (out is the queue itself; what a failed
   * call appended is dropped): appends the bytes of message number index (0 first) to out.
   * It must not call back into the stream. A codec may record what it learns from the
   * first message here (version, capabilities): the transport reads it after
   * dd_call_stream_wait returned ready. 0 or a DD_E* code. */
  int (*encode)(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out);
  /* Producer thread: a failure after bytes were queued: appends its bytes (a last error
   * line) and returns 0, or returns nonzero to cut the connection instead. NULL: cut. */
  int (*encode_error)(void *cls, int code, const char *msg, dd_call_buf *out);
  /* Non-blocking transports: suspend is called (by the transport's own thread, inside
   * dd_call_stream_wait / _read) when nothing is ready; resume is called by the producer
   * (or by cancellation) once something is, exactly once per suspend. Both run with the
   * stream's lock held, so a resume never overtakes its suspend; they must not call back
   * into the stream. NULL for a blocking transport. */
  void (*suspend)(void *cls);
  void (*resume)(void *cls);
  /* Called once when the stream is freed (both the producer and the transport are done
   * with it), or when dd_call_stream_start fails; may be NULL. */
  void (*release_cls)(void *cls);
  /* The transport's request id for the call (copied), or NULL: the runner makes one. */
  const char *request_id;
} dd_call_stream_hooks;

typedef struct dd_call_runner dd_call_runner;
typedef struct dd_call_stream dd_call_stream;

/* A runner: its live streams (for cancel_all) and, with workers > 0, a pool of that many
 * threads for unary calls (streaming calls get a thread each). */
int dd_call_runner_new(dd_call_runner **out, size_t workers);
/* Cancels every live stream (their sends fail) and resumes suspended transports. */
void dd_call_runner_cancel_all(dd_call_runner *rn);
/* Waits until no handler runs, up to until_ms (epoch ms; 0: forever). 0 or DD_EDEADLINE. */
int dd_call_runner_wait_idle(dd_call_runner *rn, int64_t until_ms);
/* Cancels, waits for every handler, stops the workers and frees. Accepts NULL. */
void dd_call_runner_free(dd_call_runner *rn);

/* Starts m on req (taken: freed by the stream) for who (copied), with headers[0..2n)
 * (name, value pairs; copied), the registry's app and deadline_ms. *out is the
 * transport's reference until dd_call_stream_release. On failure req is freed and
 * hooks->release_cls called too. */
int dd_call_stream_start(dd_call_stream **out, dd_call_runner *rn, const dd_call_registry *r,
                         const dd_method *m, ProtobufCMessage *req, const dd_principal *who,
                         const char *const *headers, size_t n_headers, int64_t deadline_ms,
                         const dd_call_stream_hooks *hooks);

enum {
  DD_CALL_STREAM_READY = 0,     /* first bytes (streaming) or the end are there */
  DD_CALL_STREAM_SUSPENDED = 1, /* the transport was suspended: call again once resumed */
};
/* Waits for the first bytes of a streaming call, or for the end of any call. Blocks when
 * the hooks have no suspend; else suspends and returns DD_CALL_STREAM_SUSPENDED. */
int dd_call_stream_wait(dd_call_stream *s);
/* After READY: the call's code so far (0 while a stream is still producing), its message
 * (copied into msg), whether bytes were queued (a failure with bytes_queued 0 is answered
 * as an ordinary error), and the result slots (detail; a file reply, owned by the caller
 * from here). */
int dd_call_stream_status(dd_call_stream *s, char *msg, size_t msg_cap, bool *bytes_queued,
                          dd_call_result *res);

#define DD_CALL_STREAM_EOF ((ssize_t)-1) /* every byte was read and the call ended well */
#define DD_CALL_STREAM_CUT ((ssize_t)-2) /* cut the connection (failure, or cancelled) */
/* Copies up to max queued bytes into buf: > 0 bytes, 0 (non-blocking: suspended, call
 * again once resumed), DD_CALL_STREAM_EOF or DD_CALL_STREAM_CUT. Blocks without suspend. */
ssize_t dd_call_stream_read(dd_call_stream *s, char *buf, size_t max);
/* The transport lets go: cancels the handler's next send; the stream is freed once the
 * producer is done too. Never calls the hooks afterwards. Accepts NULL. */
void dd_call_stream_release(dd_call_stream *s);

#endif
