/* grpc_int.h: inside the gRPC transport: objects, threads and the life of a call.
 *
 * Threads and queues. The server owns N worker threads (opts.threads, default: cores).
 * Worker i owns two completion queues:
 *   cq     a NEXT queue registered with the server: new-call notifications for every
 *          request this worker posted, and the batches of asynchronous calls;
 * A server-streaming call has a PLUCK queue of its own (c->pluck, made when its slot is
 * posted and bound to the call then), and its handler runs on a thread of its own
 * (grpc_stream.c), which blocks while it sends: each send is one batch plucked by tag (one
 * SEND_MESSAGE in flight, ever). The worker threads never block in a handler that streams:
 * gRPC hands every new call of a connection to the queue that connection was accepted on
 * first (Server::RealRequestMatcher tries the connection's cq index before the others), so
 * a worker blocked in a stream used to hold every later call of its client connection,
 * matched to its posted slots, until the stream ended (a Spark Connect Interrupt behind
 * the ExecutePlan it should stop). Stream threads are as many as the streams running,
 * bounded by admission (req_guard.h: a refused stream returns at once) and the
 * connection's max_concurrent_streams; shutdown waits for them before destroying the
 * server (srv__teardown).
 *
 * Slots. A dd_grpc__call is allocated when a request is posted (a "slot") and becomes the
 * call's state when the request is matched. Each worker starts with `prepost` slots posted
 * per method (1 for the table's methods) plus a few for unknown methods, and re-posts a
 * fresh slot as soon as one is matched, before serving the call, so the count never drops.
 * A method that is called grows: each matched call also posts one more slot until the
 * method holds `prepost_max` (64) a worker. Few slots for the methods nobody calls keep a
 * queue's outstanding operations few: Debian's gRPC checks every completion against the
 * queue's list of outstanding tags, a linear scan (with 64 slots for each of the ~100
 * methods that cost about a quarter of a GetCatalog call's CPU).
 *
 * Tags. Every completion carries &call->t_<op>: a dd_grpc__tag names the op and its call.
 * The worker dispatches on (method kind, op):
 *   UNARY    NEW: auth, decode, handler, encode, then ONE batch {initial metadata, message,
 *            status, close} tagged DONE; DONE frees the call. Nothing blocks.
 *   STREAM   NEW: hand the call to a new stream thread, which does: auth, decode,
 *            RECV_CLOSE batch (tag CLOSE, for cancellation), handler (send = SEND_MESSAGE
 *            batch plucked on c->pluck), status batch plucked; then CLOSE plucked and the
 *            call freed.
 *   WATCH    health Watch, asynchronous: {metadata, message} tagged SEND and {close}
 *            tagged CLOSE; stays open until the client goes away or shutdown.
 *   REFLECT  reflection, asynchronous bidi: RECV -> reply SEND -> RECV ... ; client
 *            half-close -> status OK.
 *   UNKNOWN  a method not in the table: UNIMPLEMENTED, tagged DONE.
 * WATCH and REFLECT calls count their outstanding batches in `refs` (guarded by `mu`) and
 * sit in the server's stream list (guarded by the server's `mu`) so shutdown can end
 * them; the call is freed by whoever drops refs to 0 (it sets `finished` first; lock
 * order: server mu, then call mu).
 *
 * Drain and shutdown (grpc_server.c). Draining sets `draining`: from then on a worker
 * answers every call it is handed UNAVAILABLE "server shutting down" without running the
 * handler (dd_grpc__serve_refused), while calls already being served go on; the grace
 * counts from here. Shutdown then waits until DD_GRPC__GOAWAY_DELAY_MS after the drain
 * before grpc_server_shutdown_and_notify: gRPC core 1.51 sends a graceful GOAWAY, so
 * the client may still open streams until it has seen it, and the server surface
 * cancels every call that reaches it after shutdown was called (Server::CallData's
 * "zombie" path: the client sees CANCELLED). That window is what made a call begun just
 * before SIGTERM end CANCELLED; during the delay such calls get our UNAVAILABLE instead.
 * Then: set `stopping`, shutdown_and_notify (tag on a queue of its own), end the streams
 * with UNAVAILABLE, wait for the notification until the grace ends, else
 * grpc_server_cancel_all_calls and wait again; destroy the server, shut the queues down,
 * the workers drain them (failed slots are freed) and are joined. A worker never posts
 * after its last call ended, so nothing touches the destroyed server. */
#ifndef DD_SERVER_GRPC_GRPC_INT_H
#define DD_SERVER_GRPC_GRPC_INT_H

#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "server/grpc/grpc_server.h"
#include "server/call/call.h"

#define DD_GRPC__PREPOST_START 1    /* slots per table method per worker at start */
#define DD_GRPC__PREPOST 64         /* ... grown to as its calls arrive (see Slots) */
#define DD_GRPC__PREPOST_BUILTIN 8  /* health, reflection */
#define DD_GRPC__PREPOST_UNKNOWN 8  /* calls to methods nobody registered */
#define DD_GRPC__DEFAULT_MAX_MSG (16u << 20)
#define DD_GRPC__GOAWAY_DELAY_MS 200 /* from drain to GOAWAY (see Drain and shutdown) */

typedef enum {
  DD_GRPC__K_UNARY,
  DD_GRPC__K_STREAM,
  DD_GRPC__K_WATCH,
  DD_GRPC__K_REFLECT,
  DD_GRPC__K_UNKNOWN,
} dd_grpc__kind;

typedef enum {
  DD_GRPC__T_NEW,      /* a posted slot was matched (or failed at shutdown) */
  DD_GRPC__T_DONE,     /* the final batch of a unary/unknown call */
  DD_GRPC__T_SEND,     /* SEND_MESSAGE (with initial metadata the first time) */
  DD_GRPC__T_RECV,     /* RECV_MESSAGE (reflection) */
  DD_GRPC__T_CLOSE,    /* RECV_CLOSE_ON_SERVER */
  DD_GRPC__T_STATUS,   /* SEND_STATUS_FROM_SERVER of a stream */
  DD_GRPC__T_SHUTDOWN, /* grpc_server_shutdown_and_notify completed */
} dd_grpc__op;

typedef struct dd_grpc__call dd_grpc__call;
typedef struct dd_grpc__worker dd_grpc__worker;

typedef struct dd_grpc__tag {
  dd_grpc__op op;
  dd_grpc__call *call; /* NULL for T_SHUTDOWN */
} dd_grpc__tag;

typedef struct dd_grpc__method {
  const dd_method *m; /* the registry's own entry, or a builtin's static one (borrowed) */
  dd_grpc__kind kind;
  void *handle; /* grpc_server_register_method */
  int prepost, prepost_max; /* slots per worker at start, and grown to (see Slots) */
  atomic_int grown;         /* slots posted beyond prepost, all workers together */
} dd_grpc__method;

struct dd_grpc__worker {
  dd_grpc_server *srv;
  grpc_completion_queue *cq;
  pthread_t thread;
  bool started;
};

struct dd_grpc__call {
  dd_grpc_server *srv;
  dd_grpc__worker *w;
  const dd_grpc__method *method; /* NULL: unknown method */
  /* Filled by gRPC when the slot is matched. */
  grpc_call *call;
  grpc_completion_queue *pluck; /* streams only: the queue the call is bound to */
  gpr_timespec deadline; /* GPR_CLOCK_MONOTONIC as received */
  grpc_metadata_array md;
  grpc_byte_buffer *payload;
  grpc_call_details details; /* unknown methods only */
  dd_grpc__tag t_new, t_done, t_send, t_recv, t_close, t_status;
  /* The call's view (call.h). */
  int64_t deadline_ms; /* epoch ms, 0: none */
  dd_principal principal;
  rg_ticket admit; /* admission (req_guard.h), held from authentication until freed */
  char **hdr; /* 2*n_hdr strings: name, value, ...; one allocation */
  size_t n_hdr;
  char request_id[DD_REQUEST_ID_LEN + 1]; /* sent in the trailing metadata x-request-id */
  grpc_metadata trailer;                  /* static slices over the key and request_id */
  /* The reply memo (dd_call_memo): the key a handler asked under and missed (the method's
   * path, a NUL, its key; empty: none), kept with the reply it packs. */
  dd_call_buf memo_key;
  /* In flight. */
  grpc_byte_buffer *send_bb; /* message being sent; destroyed when its batch completes */
  grpc_byte_buffer *recv_bb; /* reflection: message being received */
  grpc_slice status_details;
  bool has_status_details;
  int cancelled; /* RECV_CLOSE_ON_SERVER result */
  bool md_sent, status_sent, closed;
  /* Asynchronous streams (WATCH, REFLECT): guarded by mu. */
  pthread_mutex_t mu;
  bool has_mu;
  int refs;      /* batches outstanding */
  bool finished; /* refs reached 0: being freed */
  dd_grpc__call *prev, *next; /* server stream list, guarded by srv->mu */
};

struct dd_grpc_server {
  dd_grpc_opts opts;
  const dd_call_registry *reg; /* the methods, app and auth (borrowed) */
  char *listen;
  grpc_server *gs;
  int port;
  dd_grpc__method *methods; /* table methods, then builtins */
  size_t n_methods;
  char **services; /* service names served, for health */
  size_t n_services;
  dd_grpc__worker *workers;
  int n_workers;
  dd_call_memotab *memo; /* unary replies kept by key (dd_call_memo), packed protobuf */
  grpc_completion_queue *shutdown_cq; /* receives t_shutdown only */
  dd_grpc__tag t_shutdown;
  bool grpc_inited, started;
  atomic_bool stopping; /* set (under mu) once shutdown begins: no more posts */
  atomic_bool draining; /* set by drain: new calls are refused */
  gpr_timespec drain_at; /* GPR_CLOCK_MONOTONIC, when draining was set (under mu) */
  pthread_mutex_t mu;   /* guards the fields below */
  pthread_cond_t cv;
  int state; /* 0 running, 1 shutting down, 2 done */
  dd_grpc__call *streams;
  int stream_threads; /* grpc_stream.c threads running; cv is broadcast when one ends */
  /* TLS (grpc_tls.c) */
  bool tls_on;
  dd_tls_client_auth tls_client_auth;
  pthread_mutex_t tls_mu;                        /* guards tls_next */
  grpc_ssl_server_certificate_config *tls_next; /* handed to gRPC at the next handshake */
};

/* ---- grpc_tls.c: TLS credentials with a certificate fetcher ---- */
/* *out: server credentials for the listening port (the caller releases them once the port
 * is added): insecure when tls is NULL, else SSL credentials whose certificate config is
 * fetched before each handshake. Called once, before the port is added. */
int dd_grpc__credentials(dd_grpc_server *s, const dd_tls_pem *tls, grpc_server_credentials **out);
void dd_grpc__tls_free(dd_grpc_server *s);

/* ---- grpc_worker.c: slots, the worker loop ---- */
int dd_grpc__post(dd_grpc__worker *w, const dd_grpc__method *method);
void dd_grpc__call_free(dd_grpc__call *c);
void *dd_grpc__worker_main(void *arg);

/* ---- grpc_call.c: the per-call context and the unary path ---- */
int dd_grpc__ctx_init(dd_grpc__call *c);
int dd_grpc__authenticate(dd_grpc__call *c);
int dd_grpc__decode(dd_grpc__call *c, ProtobufCMessage **out);
int dd_grpc__encode(dd_grpc__call *c, const ProtobufCMessage *msg, grpc_byte_buffer **out);
/* Authenticates, decodes and runs the call through dd_call_run; send packs and sends
 * each reply (the unary one, or each streamed message); memo (NULL: none) is the sink's
 * dd_call_memo. 0 or the call's code. */
int dd_grpc__run(dd_grpc__call *c, int (*send)(void *cls, const ProtobufCMessage *msg),
                 int (*memo)(void *cls, const void *key, size_t len, uint64_t *pb_bytes));
bool dd_grpc__deadline_passed(const dd_grpc__call *c);
/* Fills op with SEND_STATUS_FROM_SERVER for rc (message from dd_err_msg()). */
void dd_grpc__status_op(dd_grpc__call *c, int rc, grpc_op *op);
void dd_grpc__status_op_code(dd_grpc__call *c, grpc_status_code code, const char *msg, grpc_op *op);
void dd_grpc__serve_unary(dd_grpc__call *c);
void dd_grpc__serve_unknown(dd_grpc__call *c);
void dd_grpc__serve_refused(dd_grpc__call *c);

/* ---- grpc_stream.c: server-streaming calls (each on a thread of its own) ---- */
void dd_grpc__serve_stream(dd_grpc__call *c);
/* Blocks until no stream thread runs. */
void dd_grpc__stream_wait_all(dd_grpc_server *s);

/* ---- grpc_astream.c: asynchronous streams (health Watch, reflection) ---- */
void dd_grpc__serve_watch(dd_grpc__call *c);
void dd_grpc__serve_reflect(dd_grpc__call *c);
void dd_grpc__astream_event(dd_grpc__call *c, dd_grpc__op op, bool ok);
void dd_grpc__astream_end_all(dd_grpc_server *s);

/* ---- grpc_health.c ---- */
extern const dd_method dd_grpc__health_check_method;
extern const dd_method dd_grpc__health_watch_method;
/* grpc.health.v1 ServingStatus for service name (SERVICE_UNKNOWN for an unknown one). */
int dd_grpc__health_status(dd_grpc_server *s, const char *service);

/* ---- grpc_reflection.c ---- */
#define DD_GRPC__REFLECTION_PATH "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"
/* v1 has the same messages on the wire: one handler serves both paths. */
#define DD_GRPC__REFLECTION_V1_PATH "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
/* Answers one serialized ServerReflectionRequest with a packed ServerReflectionResponse
 * (malloc'ed, *out_len bytes). DD_EINVAL when the request does not parse. */
int dd_grpc__reflection_reply(const uint8_t *req, size_t len, uint8_t **out, size_t *out_len);

#endif
