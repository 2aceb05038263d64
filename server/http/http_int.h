/* http_int.h: the REST listener's insides, shared by its files and nothing else.
 *
 * Life of a request (libmicrohttpd calls http_server.c's access handler several times):
 *  1. first call (headers complete): an dd_http__req is made and counted in srv->in_flight;
 *     a draining server answers 503, ambiguous framing (http_framing.c) 400 or 501, both
 *     with Connection: close; a declared Content-Length over the limit is answered 413 at
 *     once (an answer in the first call makes MHD close the connection after it);
 *  2. upload calls: the body is appended to rq->body (past the limit it is dropped and
 *     413 is answered at the end);
 *  3. last call: the request goes to a native handler (http_native.c) when a registered
 *     prefix matches, else to the generated routes (http_dispatch.c), which answer with
 *     one queued MHD response;
 *  4. MHD's completion callback frees the dd_http__req and signals stop() waiting for
 *     in-flight requests.
 * Alongside, http_conn.c tracks each connection's phase (headers, body, busy) for the
 * header and body deadlines the watchdog enforces; the steps above move it along.
 * Every generated route runs through the call core (call.h): streaming methods on the
 * runner's producer threads, pulled by MHD (http_stream.c); unary handlers through
 * dd_call_run on the connection's own thread in thread-per-connection mode, and in the
 * epoll pool on the runner's workers while the connection is suspended, so a slow
 * handler holds up no other connection (a DD_METHOD_QUICK one runs on the pool thread). A grpc-timeout header sets the call's deadline.
 * URL unescaping by MHD is switched off: paths and query strings arrive raw and are
 * decoded here, so "%2F" inside a path variable is not taken for a separator. */
#ifndef DD_SERVER_HTTP_HTTP_INT_H
#define DD_SERVER_HTTP_HTTP_INT_H

#include <microhttpd.h>
#include <pthread.h>
#include <stdatomic.h>

#include "server/call/call.h"
#include "server/http/http_server.h"
#include "server/call/req_guard.h"

typedef struct dd_http__stream dd_http__stream; /* http_stream.c */
typedef struct dd_http__tls_keys dd_http__tls_keys; /* http_tls.c */
typedef struct dd_http__conn dd_http__conn;     /* http_conn.c */

/* Where a connection is in its current request (http_conn.c). */
typedef enum { DD_HTTP__PH_HEAD, DD_HTTP__PH_BODY, DD_HTTP__PH_BUSY } dd_http__phase;

typedef struct dd_http__native {
  char *prefix;
  size_t len;
  dd_http_native_fn fn;
  void *ctx;
} dd_http__native;

struct dd_http_server {
  dd_http_opts opts;
  char *listen;    /* owned copy of opts.listen */
  char *base_path; /* owned, without a trailing '/' */
  const dd_call_registry *reg; /* methods, routes, app and auth (borrowed) */
  dd_call_runner *runner;       /* producer threads and the epoll pool's workers */
  dd_call_memotab *memo;          /* unary replies kept by key (dd_call_memo) */
  dd_http__native *natives;
  size_t n_natives;
  struct MHD_Daemon *mhd;
  int port;
  int listen_fd;  /* bound by dd_http_server_bind until MHD takes it at start; -1 */
  int listen_v6;
  pthread_mutex_t mu;  /* guards in_flight */
  pthread_cond_t idle; /* signalled when in_flight drops to 0 */
  int in_flight;       /* requests between their first call and completion */
  /* TLS (http_tls.c); tls_keys is NULL on a plaintext server */
  dd_http__tls_keys *tls_keys; /* the current set; replaced under http_tls.c's lock */
  dd_tls_client_auth tls_client_auth;
  char *tls_ca_pem; /* the client CA at start, for MHD's certificate request */
  /* connections, caps and deadlines (http_conn.c) */
  pthread_mutex_t conns_mu; /* guards conns, n_conns, watchdog_stop, each conn's phase */
  pthread_cond_t conns_cv;
  dd_http__conn *conns;
  long n_conns;
  atomic_int draining; /* drain() began: new requests get 503 and close */
  struct timespec drain_until; /* CLOCK_MONOTONIC end of the grace, set by drain() */
  int drained; /* drain() ran (owner's thread only, like start and stop) */
  MHD_socket quiesced_fd; /* the listening socket MHD gave back at drain(); closed at stop */
  pthread_t watchdog;
  int watchdog_started, watchdog_stop;
};

typedef struct dd_http__req {
  dd_http_server *srv;
  struct MHD_Connection *conn;
  const char *method; /* MHD's, valid for the request */
  const char *url;    /* raw path: MHD's, or url_own */
  char *url_own;      /* the path without its trailing '/' (a trailing slash is tolerated) */
  const ProtobufCMessageDescriptor *req_desc; /* the route's request message, once matched */
  char *body;
  size_t len, cap;
  int too_large;
  int answered;    /* dispatched (or answered early): later calls only drain uploads */
  dd_http__stream *st; /* a streaming call waiting for its first line (see http_stream.c) */
  rg_ticket admit; /* admission (req_guard.h), held until the request completes */
  char request_id[DD_REQUEST_ID_LEN + 1]; /* sent as x-request-id; the call core logs it */
} dd_http__req;

/* The connection and request id the calling thread is answering: copied by the access
 * handler on each entry (MHD queues a reply on the thread that runs the handler). A value,
 * never a pointer into a request, so a stale entry is harmless: dd_http__queue only
 * compares its connection pointer. */
typedef struct dd_http__cur {
  struct MHD_Connection *conn;
  char request_id[DD_REQUEST_ID_LEN + 1];
} dd_http__cur;
extern _Thread_local dd_http__cur dd_http__current;
/* Every reply goes out through this: MHD_queue_response with x-request-id added. */
enum MHD_Result dd_http__queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r);

/* http_tls.c: TLS key sets, the certificate callback, client certificate checks. */
int dd_http__tls_init(dd_http_server *s, const dd_tls_pem *pem); /* pem NULL: plaintext */
/* Fills items (room for 3) with the daemon's TLS options, END-terminated; adds MHD_USE_TLS. */
int dd_http__tls_options(dd_http_server *s, struct MHD_OptionItem *items, unsigned *flags);
/* 0, or DD_EUNAUTH when the request's connection lacks a client certificate that the
 * mode requires, or presents one that does not verify. */
int dd_http__tls_check_client(dd_http_server *s, struct MHD_Connection *c);
void dd_http__tls_stop(dd_http_server *s);
void dd_http__tls_free(dd_http_server *s);

/* http_dispatch.c: serves a generated route; path is relative to the base path. */
enum MHD_Result dd_http__dispatch_route(dd_http__req *rq, const char *path);
/* http_native.c: serves a native handler. */
enum MHD_Result dd_http__dispatch_native(dd_http__req *rq, const dd_http__native *nat);

/* http_stream.c: how a native codec (http_native.c) answers a method over MHD. The
 * request is decoded by the codec; the method runs through the call core's stream runner
 * (so it holds no pool thread while it produces) with these hooks, and the reply is
 * streamed from the queue. All hooks but encode/encode_error run on the MHD thread. */
typedef struct dd_http__codec {
  void *cls; /* the codec's state; freed by free_cls when the request ends */
  /* producer thread: see dd_call_stream_hooks (content_type is the reply's) */
  int (*encode)(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out);
  int (*encode_error)(void *cls, int code, const char *msg, dd_call_buf *out);
  /* Once the first bytes or the end are there: rc 0 -> set the reply's status and headers
   * (the streamed bytes, the unary reply's bytes, or the handler's file, already set with
   * dd_http_reply_file, are its body); rc != 0 (nothing was sent) -> fill reply with the
   * protocol's error for rc, msg and res->detail. 0 or DD_ENOMEM. */
  int (*head)(void *cls, int rc, const char *msg, const dd_call_result *res, dd_http_reply *reply);
  void (*free_cls)(void *cls);
  const char *content_type; /* added to a successful streamed reply ("application/x-ndjson");
                             * NULL: head sets it */
  /* Non-NULL: a unary reply's bytes depend on the reply message alone (encode keeps no
   * state that head reads), so they may be kept and sent again for a handler's
   * dd_call_memo; the tag names the encoding in the memo's key. */
  const char *memo_tag;
} dd_http__codec;
/* Runs m on req (taken) for who with the request's deadline (grpc-timeout) and answers
 * over MHD through codec (copied; its cls is freed by free_cls once both the producer and
 * the HTTP side are done, also on failure). The access handler calls
 * dd_http__stream_answer again once resumed. */
enum MHD_Result dd_http__run_codec(dd_http__req *rq, const dd_method *m, ProtobufCMessage *req,
                                   const dd_principal *who, const dd_http__codec *codec);

/* http_stream.c: runs m on req (taken) through the runner with codec (copied; its cls is
 * freed by codec->free_cls once the stream is done, also on failure) and answers: NDJSON
 * or a codec's stream for a streaming method, one reply for a unary one.
 * dd_http__stream_answer is called again when the connection was suspended waiting for
 * the first bytes; request_done lets go of a stream never answered. */
enum MHD_Result dd_http__stream_start(dd_http__req *rq, const dd_method *m, ProtobufCMessage *req,
                                   const dd_principal *who, int64_t deadline_ms,
                                   const dd_http__codec *codec);
enum MHD_Result dd_http__stream_answer(dd_http__req *rq);
void dd_http__stream_request_done(dd_http__req *rq);
/* The generated routes' codec: proto3 JSON, one line per message for a streaming method. */
const dd_http__codec *dd_http__json_codec(const dd_method *m);
/* A codec's answer once ready (takes st). */
enum MHD_Result dd_http__codec_answer(dd_http__req *rq, dd_http__stream *st, int rc, const char *msg,
                                   bool queued, dd_call_result *res);
/* http_native.c: fills a reply with fill (0, or a DD_E* code for the standard JSON error)
 * and queues it. */
enum MHD_Result dd_http__native_reply(dd_http__req *rq, int (*fill)(void *cls, dd_http_reply *rep),
                                   void *cls);

/* http_dispatch.c: the JSON text of a unary reply (malloc'ed) into *body; 0 or
 * DD_EINTERNAL (no reply, or it cannot be encoded). */
int dd_http__reply_json(const ProtobufCMessage *out, char **body);
/* http_dispatch.c: the error body {"code","message","details":[]} (malloc'ed) for a
 * DD_E* code, or NULL. */
char *dd_http__error_json(int code, const char *msg);
/* http_dispatch.c: queues {"code","message","details"} for a DD_E* code. http_status 0
 * means dd_call_status_http(code). */
enum MHD_Result dd_http__queue_error(struct MHD_Connection *c, int code, int http_status,
                                  const char *msg);
/* Queues a malloc'ed body (ownership passes to MHD) with a content type. */
enum MHD_Result dd_http__queue_body(struct MHD_Connection *c, int status, const char *ctype,
                                 char *body, size_t len);
/* Authenticates the request's token (Authorization: Bearer, else x-api-key) through the
 * registry and admits it into *ticket, which keeps the call's read view
 * (dd_call_authenticate_admit). */
int dd_http__authenticate_admit(dd_http_server *srv, struct MHD_Connection *c, dd_principal *out,
                                rg_ticket *ticket);

/* http_conn.c: MHD's connection notification (tracks every connection), the accept
 * policy (the total cap), phase changes from the access handler, the timeout re-arm after
 * a blocking callback, closing idle connections when draining, and the watchdog. */
void dd_http__conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code);
enum MHD_Result dd_http__conn_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen);
void dd_http__conn_phase(dd_http_server *s, struct MHD_Connection *c, dd_http__phase phase);
/* Re-arms c's idle timeout if a callback blocked its thread since since_ms for 1 s or
 * more. */
void dd_http__conn_touch(dd_http_server *s, struct MHD_Connection *c, int64_t since_ms);
int64_t dd_http__mono_ms(void); /* CLOCK_MONOTONIC in ms */
void dd_http__conns_close_idle(dd_http_server *s);
/* Fills o (room for 4) with the MHD options of the caps and the idle timeout, ending
 * with MHD_OPTION_END, for MHD_OPTION_ARRAY; returns how many. */
size_t dd_http__conn_options(const dd_http_server *s, struct MHD_OptionItem *o);
int dd_http__conns_start(dd_http_server *s);
void dd_http__conns_stop(dd_http_server *s);

/* http_framing.c: 0 when the request's framing and header block are unambiguous, else a
 * DD_E* code (message set) with the HTTP status to answer in *status (400 or 501).
 * method and version are the access handler's (they anchor the header block). */
int dd_http__framing_check(struct MHD_Connection *c, const char *method, const char *version,
                        int *status);
/* Queues the JSON error with "Connection: close": nothing after it on the connection is
 * read. */
enum MHD_Result dd_http__refuse_close(struct MHD_Connection *c, int code, int http_status,
                                   const char *msg);

/* Appends n bytes to a growing buffer; 0 or DD_ENOMEM. */
int dd_http__append(char **buf, size_t *len, size_t *cap, const void *data, size_t n);

/* msg as a REST client should read it: a leading request field name ("catalog_name: must
 * not be empty") becomes the name the client sent (its JSON name, "catalogName"). Returns
 * msg itself or buf (cap bytes). */
const char *dd_http__rest_msg(const dd_http__req *rq, const char *msg, char *buf, size_t cap);

#endif
