/* http_stream.c: server-streaming methods over REST as NDJSON, without buffering the
 * whole stream; and, in the epoll pool, unary methods too (so a slow handler does not
 * hold up the other connections of its pool thread).
 *
 * The handler runs on its own (detached) producer thread; each call->send appends one
 * JSON line to a queue, waiting while more than STREAM_HIGH_WATER bytes are unsent. MHD
 * pulls the queue through a response-from-callback. The status is decided once the first
 * line or the end arrives: an error before any line is a normal JSON error response,
 * after lines it becomes a last {"error": {...}} line. A unary call ("unary" set) puts its
 * whole JSON reply in the queue when the handler returns and is answered as a normal
 * JSON response.
 *
 * Waiting depends on the threading mode: with a thread per connection the access handler
 * and the reader simply block on the condition variable; in the epoll pool they must not
 * block, so they suspend the connection (MHD_suspend_connection, under st->mu) and the
 * producer resumes it (under st->mu, only when st->suspended says it is suspended, since
 * resuming a connection that is not suspended is undefined).
 *
 * Threads: a streaming call gets a thread of its own (a stream may run for long); a unary
 * call in the epoll pool goes to a fixed set of workers (starting a thread per call cost
 * three quarters of the throughput).
 *
 * Lifetime: two references, the producer's and the HTTP side's (held by http_req until the
 * response is queued, then by the MHD response, released by its free callback, which also
 * cancels the producer: its next send returns DD_ECANCELLED). Live streams are listed in
 * the server so stop() can cancel them and resume suspended connections before
 * MHD_stop_daemon (stopping with suspended connections is not allowed). Lock order:
 * srv->mu, then st->mu. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/http/http_int.h"
#include "server/http/pbjson.h"

#define STREAM_HIGH_WATER (1u << 20)

struct http_stream {
  dd_http_server *srv;
  struct MHD_Connection *conn; /* NULL once the HTTP side is gone */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *buf; /* unsent NDJSON bytes are buf[off..len) */
  size_t len, cap, off;
  int sent_any, done, rc, cancelled, suspended, blocking, unary;
  char errmsg[1024];
  int refs; /* guarded by srv->mu */
  http_stream *prev, *next; /* srv->streams, guarded by srv->mu */
  http_stream *job_next;     /* srv->jobs queue, guarded by srv->jobs_mu */
  const dd_method *method;
  ProtobufCMessage *req;
  dd_principal who;
  char **hnames, **hvalues; /* request headers, copied for the producer thread */
  size_t n_headers;
  dd_call call;
};

/* ---- references ---------------------------------------------------------------------- */

static void stream_free(http_stream *st) {
  protobuf_c_message_free_unpacked(st->req, NULL);
  for (size_t i = 0; i < st->n_headers; i++) {
    free(st->hnames[i]);
    free(st->hvalues[i]);
  }
  free(st->hnames);
  free(st->hvalues);
  free(st->buf);
  pthread_mutex_destroy(&st->mu);
  pthread_cond_destroy(&st->cv);
  free(st);
}

static void stream_release(http_stream *st) {
  dd_http_server *s = st->srv;
  pthread_mutex_lock(&s->mu);
  int last = --st->refs == 0;
  if (last) {
    if (st->prev) st->prev->next = st->next;
    else s->streams = st->next;
    if (st->next) st->next->prev = st->prev;
  }
  pthread_mutex_unlock(&s->mu);
  if (last) stream_free(st);
}

/* With st->mu held: wakes waiters and resumes a suspended connection. */
static void stream_wake(http_stream *st) {
  pthread_cond_broadcast(&st->cv);
  if (st->suspended) {
    st->suspended = 0;
    MHD_resume_connection(st->conn);
  }
}

/* The HTTP side lets go (response freed, or request ended before one was queued). */
static void stream_drop_http(http_stream *st) {
  pthread_mutex_lock(&st->mu);
  st->cancelled = 1;
  st->conn = NULL;
  st->suspended = 0;
  pthread_cond_broadcast(&st->cv);
  pthread_mutex_unlock(&st->mu);
  stream_release(st);
}

void http__streams_cancel_all(dd_http_server *s) {
  pthread_mutex_lock(&s->mu);
  for (http_stream *st = s->streams; st; st = st->next) {
    pthread_mutex_lock(&st->mu);
    st->cancelled = 1;
    stream_wake(st);
    pthread_mutex_unlock(&st->mu);
  }
  pthread_mutex_unlock(&s->mu);
}

/* ---- the producer -------------------------------------------------------------------- */

/* Appends to the unsent bytes, first moving them to the front once half the buffer has
 * been sent, so the buffer stays within about twice the high-water mark. */
static int stream_append(http_stream *st, const char *data, size_t n) {
  if (st->off > 0 && st->off >= st->cap / 2) {
    memmove(st->buf, st->buf + st->off, st->len - st->off);
    st->len -= st->off;
    st->off = 0;
  }
  return http__append(&st->buf, &st->len, &st->cap, data, n);
}

static int stream_send(dd_call *call, const ProtobufCMessage *msg) {
  http_stream *st = call->transport;
  json_t *j = pbjson_from_msg(msg);
  char *line = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  if (!line) return dd_err_set(DD_ENOMEM, "cannot encode streamed message");
  pthread_mutex_lock(&st->mu);
  while (!st->cancelled && st->len - st->off > STREAM_HIGH_WATER) pthread_cond_wait(&st->cv, &st->mu);
  int rc = st->cancelled ? dd_err_set(DD_ECANCELLED, "client went away or server stopping") : 0;
  if (rc == 0) rc = stream_append(st, line, strlen(line));
  if (rc == 0) rc = stream_append(st, "\n", 1);
  if (rc == 0) st->sent_any = 1;
  stream_wake(st);
  pthread_mutex_unlock(&st->mu);
  free(line);
  return rc;
}

static const char *stream_header(dd_call *call, const char *name) {
  http_stream *st = call->transport;
  for (size_t i = 0; i < st->n_headers; i++)
    if (strcasecmp(st->hnames[i], name) == 0) return st->hvalues[i];
  return NULL;
}

static void *stream_main(void *arg) {
  http_stream *st = arg;
  dd_http_server *s = st->srv;
  ProtobufCMessage *out = NULL;
  dd_err_clear();
  int rc = st->method->fn(&st->call, st->req, &out);
  char *reply = NULL;
  if (rc == 0 && st->unary && (rc = http__reply_json(out, &reply)) == 0) {
    pthread_mutex_lock(&st->mu);
    rc = stream_append(st, reply, strlen(reply));
    pthread_mutex_unlock(&st->mu);
  }
  free(reply);
  protobuf_c_message_free_unpacked(out, NULL);
  pthread_mutex_lock(&st->mu);
  st->done = 1;
  st->rc = rc;
  if (rc != 0) snprintf(st->errmsg, sizeof st->errmsg, "%s", dd_err_msg());
  if (rc != 0 && st->sent_any && !st->cancelled) {
    char *err = http__error_json(rc, st->errmsg);
    if (err) {
      stream_append(st, "{\"error\":", 9);
      stream_append(st, err, strlen(err));
      stream_append(st, "}\n", 2);
      free(err);
    }
  }
  stream_wake(st);
  pthread_mutex_unlock(&st->mu);
  stream_release(st);
  pthread_mutex_lock(&s->mu);
  if (--s->producers == 0) pthread_cond_broadcast(&s->idle);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

/* ---- workers for unary calls (epoll pool) -------------------------------------------- */

static void *worker_main(void *arg) {
  dd_http_server *s = arg;
  pthread_mutex_lock(&s->jobs_mu);
  for (;;) {
    while (!s->jobs_head && !s->jobs_stop) pthread_cond_wait(&s->jobs_cv, &s->jobs_mu);
    http_stream *st = s->jobs_head;
    if (!st) break;
    s->jobs_head = st->job_next;
    if (!s->jobs_head) s->jobs_tail = NULL;
    pthread_mutex_unlock(&s->jobs_mu);
    stream_main(st);
    pthread_mutex_lock(&s->jobs_mu);
  }
  pthread_mutex_unlock(&s->jobs_mu);
  return NULL;
}

static void worker_push(dd_http_server *s, http_stream *st) {
  pthread_mutex_lock(&s->jobs_mu);
  st->job_next = NULL;
  if (s->jobs_tail) s->jobs_tail->job_next = st;
  else s->jobs_head = st;
  s->jobs_tail = st;
  pthread_cond_signal(&s->jobs_cv);
  pthread_mutex_unlock(&s->jobs_mu);
}

int http__workers_start(dd_http_server *s) {
  size_t n = (size_t)s->opts.threads * 4;
  if (!(s->workers = calloc(n, sizeof *s->workers))) return dd_err_set(DD_ENOMEM, "out of memory");
  for (; s->n_workers < n; s->n_workers++) {
    if (pthread_create(&s->workers[s->n_workers], NULL, worker_main, s) != 0) {
      http__workers_stop(s);
      return dd_err_set(DD_EINTERNAL, "cannot start HTTP worker threads");
    }
  }
  return 0;
}

void http__workers_stop(dd_http_server *s) {
  pthread_mutex_lock(&s->jobs_mu);
  s->jobs_stop = 1;
  pthread_cond_broadcast(&s->jobs_cv);
  pthread_mutex_unlock(&s->jobs_mu);
  for (size_t i = 0; i < s->n_workers; i++) pthread_join(s->workers[i], NULL);
  free(s->workers);
  s->workers = NULL;
  s->n_workers = 0;
  s->jobs_stop = 0;
}

/* ---- the HTTP side ------------------------------------------------------------------- */

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  http_stream *st = cls;
  int64_t t0 = http__mono_ms();
  pthread_mutex_lock(&st->mu);
  for (;;) {
    if (st->len > st->off) {
      size_t n = st->len - st->off < max ? st->len - st->off : max;
      memcpy(buf, st->buf + st->off, n);
      st->off += n;
      pthread_cond_broadcast(&st->cv); /* room for the producer */
      struct MHD_Connection *conn = st->blocking ? st->conn : NULL;
      pthread_mutex_unlock(&st->mu);
      if (conn) http__conn_touch(st->srv, conn, t0); /* a slow producer is not an idle client */
      return (ssize_t)n;
    }
    if (st->cancelled) break;
    if (st->done) {
      pthread_mutex_unlock(&st->mu);
      return MHD_CONTENT_READER_END_OF_STREAM;
    }
    if (!st->blocking) {
      st->suspended = 1;
      MHD_suspend_connection(st->conn);
      pthread_mutex_unlock(&st->mu);
      return 0;
    }
    pthread_cond_wait(&st->cv, &st->mu);
  }
  pthread_mutex_unlock(&st->mu);
  return MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_response_free(void *cls) { stream_drop_http(cls); }

/* With st->mu held (released here): the reply of a finished (or cancelled) unary call. */
static enum MHD_Result answer_unary(http_req *rq, http_stream *st) {
  int rc = st->done ? st->rc : DD_EIO;
  char *body = NULL, msg[sizeof st->errmsg];
  snprintf(msg, sizeof msg, "%s", st->done ? st->errmsg : "server stopping");
  if (rc == 0) body = strndup(st->buf ? st->buf : "", st->len);
  pthread_mutex_unlock(&st->mu);
  rq->st = NULL;
  stream_drop_http(st);
  if (rc != 0) return http__queue_error(rq->conn, rc, 0, msg);
  if (!body) return MHD_NO;
  return http__queue_body(rq->conn, 200, "application/json", body, strlen(body));
}

enum MHD_Result http__stream_answer(http_req *rq) {
  http_stream *st = rq->st;
  pthread_mutex_lock(&st->mu);
  /* a unary reply is only complete when done (stream_main appends it, then sets done) */
#define STREAM_READY(st) ((!(st)->unary && (st)->len > (st)->off) || (st)->done || (st)->cancelled)
  while (st->blocking && !STREAM_READY(st)) pthread_cond_wait(&st->cv, &st->mu);
  if (!STREAM_READY(st)) {
    st->suspended = 1;
    MHD_suspend_connection(st->conn);
    pthread_mutex_unlock(&st->mu);
    return MHD_YES; /* called again once resumed */
  }
  if (st->unary) return answer_unary(rq, st); /* unlocks */
  int failed = st->done && st->rc != 0 && !st->sent_any;
  int rc = st->rc;
  char msg[sizeof st->errmsg];
  memcpy(msg, st->errmsg, sizeof msg);
  pthread_mutex_unlock(&st->mu);
  rq->st = NULL;
  if (failed) {
    stream_drop_http(st);
    return http__queue_error(rq->conn, rc, 0, msg);
  }
  struct MHD_Response *r =
      MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, stream_read, st, stream_response_free);
  if (!r) {
    stream_drop_http(st);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-ndjson");
  enum MHD_Result ok = MHD_queue_response(rq->conn, MHD_HTTP_OK, r);
  MHD_destroy_response(r);
  return ok;
}

void http__stream_request_done(http_req *rq) {
  if (rq->st) stream_drop_http(rq->st);
  rq->st = NULL;
}

static enum MHD_Result copy_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                   const char *value) {
  (void)kind;
  http_stream *st = cls;
  char **n = realloc(st->hnames, (st->n_headers + 1) * sizeof *n);
  if (n) st->hnames = n;
  char **v = realloc(st->hvalues, (st->n_headers + 1) * sizeof *v);
  if (v) st->hvalues = v;
  if (!n || !v) return MHD_NO;
  st->hnames[st->n_headers] = strdup(key);
  st->hvalues[st->n_headers] = strdup(value ? value : "");
  if (!st->hnames[st->n_headers] || !st->hvalues[st->n_headers]) {
    free(st->hnames[st->n_headers]);
    free(st->hvalues[st->n_headers]);
    return MHD_NO;
  }
  st->n_headers++;
  return MHD_YES;
}

static int send_refused(dd_call *call, const ProtobufCMessage *msg) {
  (void)call;
  (void)msg;
  return dd_err_set(DD_EINTERNAL, "send() called by a unary handler");
}

enum MHD_Result http__stream_start(http_req *rq, const dd_method *method, const dd_principal *who,
                                   ProtobufCMessage *req) {
  dd_http_server *s = rq->srv;
  http_stream *st = calloc(1, sizeof *st);
  if (!st) {
    protobuf_c_message_free_unpacked(req, NULL);
    return http__queue_error(rq->conn, DD_ENOMEM, 0, "out of memory");
  }
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->cv, NULL);
  st->srv = s;
  st->conn = rq->conn;
  st->blocking = s->opts.threads <= 0;
  st->method = method;
  st->req = req;
  st->who = *who;
  st->unary = !(method->flags & DD_METHOD_STREAMING);
  st->call = (dd_call){.principal = &st->who, .app = s->opts.app, .send = st->unary ? send_refused : stream_send,
                       .header = stream_header, .transport = st};
  MHD_get_connection_values(rq->conn, MHD_HEADER_KIND, copy_header, st);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_mutex_lock(&s->mu);
  st->refs = 2;
  st->next = s->streams;
  if (s->streams) s->streams->prev = st;
  s->streams = st;
  s->producers++;
  pthread_t t;
  int failed = 0;
  if (st->unary && s->n_workers > 0) worker_push(s, st); /* s->mu, then jobs_mu */
  else failed = pthread_create(&t, &attr, stream_main, st) != 0;
  if (failed) {
    s->producers--;
    st->refs = 1;
  }
  pthread_mutex_unlock(&s->mu);
  pthread_attr_destroy(&attr);
  if (failed) {
    stream_drop_http(st);
    return http__queue_error(rq->conn, DD_ENOMEM, 0, "cannot start a stream thread");
  }
  rq->st = st;
  return http__stream_answer(rq);
}
