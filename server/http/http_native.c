/* http_native.c: native handlers (protocols that control their bytes exactly): the
 * request view and reply builder of http_server.h, turning a reply into an MHD
 * response (buffered, a file sent by the kernel, or streamed from a callback), and the
 * native codecs' way into the call core (dd_native__run, server/http/native/native_int.h):
 * the call a handler asks for is made once it returns, through dd_http__run_codec. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "server/http/http_int.h"
#include "server/http/native/native_int.h"

#define NATIVE_MAX_HEADERS 32

struct dd_http_request {
  dd_http__req *rq;
  const char *path;
  char *decoded[16]; /* decoded query values handed out, freed after the call */
  size_t n_decoded;
  /* the call dd_native__run asked for (run_m NULL: none), made after the handler */
  const dd_method *run_m;
  ProtobufCMessage *run_msg; /* owned until handed to dd_http__run_codec */
  dd_principal run_who;
  dd_http__codec run_codec;
};

struct dd_http_reply {
  int status;
  char *names[NATIVE_MAX_HEADERS], *values[NATIVE_MAX_HEADERS];
  size_t n_headers;
  char *body;
  size_t len, cap;
  dd_http_stream_fn stream;
  void *stream_cls;
  void (*stream_free)(void *);
  int fd; /* a file body (fd_len bytes at fd_off), owned; -1 (set by dispatch) when none */
  uint64_t fd_off, fd_len;
};

/* ---- request view -------------------------------------------------------------------- */

const char *dd_http_req_method(const dd_http_request *r) { return r->rq->method; }
const char *dd_http_req_path(const dd_http_request *r) { return r->path; }

const char *dd_http_req_query(const dd_http_request *r, const char *name) {
  /* MHD keeps the raw query; the key is compared raw, which is fine for the plain
   * ASCII parameter names protocols use. */
  const char *raw = MHD_lookup_connection_value(r->rq->conn, MHD_GET_ARGUMENT_KIND, name);
  if (!raw) return NULL;
  dd_http_request *w = (dd_http_request *)r; /* the cache is not part of the view */
  if (w->n_decoded == sizeof w->decoded / sizeof w->decoded[0]) return NULL;
  char *v = strdup(raw);
  if (!v || dd_call_pct_decode(v, 1) != 0) {
    free(v);
    return NULL;
  }
  w->decoded[w->n_decoded++] = v;
  return v;
}

const char *dd_http_req_header(const dd_http_request *r, const char *name) {
  return MHD_lookup_connection_value(r->rq->conn, MHD_HEADER_KIND, name);
}

const uint8_t *dd_http_req_body(const dd_http_request *r, size_t *len) {
  *len = r->rq->len;
  return (const uint8_t *)(r->rq->body ? r->rq->body : "");
}

int dd_http_req_auth(const dd_http_request *r, dd_principal *out) {
  return dd_http__authenticate_admit(r->rq->srv, r->rq->conn, out, &r->rq->admit);
}

/* ---- the call (native_int.h) ---------------------------------------------------------- */

const dd_method *dd_native__method(const dd_http_request *r, const char *path) {
  return dd_call_find(r->rq->srv->reg, path, strlen(path));
}

int dd_native__run(const dd_http_request *r, const dd_method *m, ProtobufCMessage *msg,
                   const dd_principal *who, const dd_http__codec *codec) {
  dd_http_request *w = (dd_http_request *)r; /* the pending call is not part of the view */
  assert(!w->run_m); /* one call per request */
  if (w->run_m || !m) {
    protobuf_c_message_free_unpacked(msg, NULL);
    if (codec->free_cls) codec->free_cls(codec->cls);
    return dd_err_set(DD_EINTERNAL, w->run_m ? "a second call for one request" : "no method");
  }
  w->run_m = m;
  w->run_msg = msg;
  w->run_who = *who;
  w->run_codec = *codec;
  return 0;
}

int dd_native__append_json(dd_call_buf *out, json_t *j) {
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = dd_call_buf_append(out, s, strlen(s));
  free(s);
  return rc;
}

/* ---- reply builder ------------------------------------------------------------------- */

int dd_http_reply_status(dd_http_reply *r, int status) {
  r->status = status;
  return 0;
}

int dd_http_reply_header(dd_http_reply *r, const char *name, const char *value) {
  if (r->n_headers == NATIVE_MAX_HEADERS) return dd_err_set(DD_EINVAL, "too many reply headers");
  char *n = strdup(name), *v = strdup(value);
  if (!n || !v) {
    free(n);
    free(v);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  r->names[r->n_headers] = n;
  r->values[r->n_headers++] = v;
  return 0;
}

int dd_http_reply_body(dd_http_reply *r, const void *data, size_t len) {
  return dd_http__append(&r->body, &r->len, &r->cap, data, len);
}

int dd_http_reply_file(dd_http_reply *r, int fd, uint64_t off, uint64_t len) {
  if (r->fd >= 0) close(r->fd);
  r->fd = fd;
  r->fd_off = off;
  r->fd_len = len;
  return 0;
}

int dd_native__reply_file_range(dd_http_reply *r, uint64_t off, uint64_t len) {
  if (r->fd < 0 || off < r->fd_off || len > r->fd_len - (off - r->fd_off))
    return dd_err_set(DD_EINTERNAL, "file range outside the reply's file");
  r->fd_off = off;
  r->fd_len = len;
  return 0;
}

void dd_native__reply_drop_file(dd_http_reply *r) {
  if (r->fd >= 0) close(r->fd);
  r->fd = -1;
}

int dd_http_reply_stream(dd_http_reply *r, dd_http_stream_fn fn, void *cls, void (*free_cls)(void *)) {
  if (r->stream_free) r->stream_free(r->stream_cls);
  r->stream = fn;
  r->stream_cls = cls;
  r->stream_free = free_cls;
  return 0;
}

static void reply_clear(dd_http_reply *r) {
  for (size_t i = 0; i < r->n_headers; i++) {
    free(r->names[i]);
    free(r->values[i]);
  }
  free(r->body);
  if (r->stream_free) r->stream_free(r->stream_cls);
  if (r->fd >= 0) close(r->fd);
}

/* ---- dispatch ------------------------------------------------------------------------ */

typedef struct stream_state {
  dd_http_stream_fn fn;
  void *cls;
  void (*free_cls)(void *);
  dd_http_server *srv;
  struct MHD_Connection *conn;
} stream_state;

static ssize_t stream_reader(void *cls, uint64_t pos, char *buf, size_t max) {
  stream_state *st = cls;
  int64_t t0 = dd_http__mono_ms();
  ssize_t n = st->fn(st->cls, pos, buf, max);
  dd_http__conn_touch(st->srv, st->conn, t0); /* a slow producer is not an idle client */
  if (n == DD_HTTP_STREAM_END) return MHD_CONTENT_READER_END_OF_STREAM;
  if (n < 0) return MHD_CONTENT_READER_END_WITH_ERROR;
  return n; /* 0: the call core's reader suspended the connection (http_stream.c) */
}

static void stream_free(void *cls) {
  stream_state *st = cls;
  if (st->free_cls) st->free_cls(st->cls);
  free(st);
}

/* The MHD response for a filled reply; the stream (if any) moves into it. */
static struct MHD_Response *make_response(dd_http__req *rq, dd_http_reply *rep) {
  struct MHD_Response *resp;
  if (rep->stream) {
    stream_state *st = malloc(sizeof *st);
    if (!st) return NULL;
    *st = (stream_state){rep->stream, rep->stream_cls, rep->stream_free, rq->srv, rq->conn};
    rep->stream_free = NULL;
    /* 256 KiB a read: a 56 MB Delta Sharing answer in 220 sends, not 880 (12% of the
     * query's CPU); only the touched part of the block is resident for a short reply */
    resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 256 * 1024, stream_reader, st, stream_free);
    if (!resp) stream_free(st);
  } else if (rep->fd >= 0) { /* the kernel sends the file (sendfile where it can) */
    resp = MHD_create_response_from_fd_at_offset64(rep->fd_len, rep->fd, rep->fd_off);
    if (resp) rep->fd = -1; /* MHD closes it */
  } else if (rep->body) { /* the body moves into the response: no copy */
    resp = MHD_create_response_from_buffer(rep->len, rep->body, MHD_RESPMEM_MUST_FREE);
    if (resp) rep->body = NULL;
  } else {
    resp = MHD_create_response_from_buffer(0, (void *)"", MHD_RESPMEM_PERSISTENT);
  }
  for (size_t i = 0; resp && i < rep->n_headers; i++)
    MHD_add_response_header(resp, rep->names[i], rep->values[i]);
  if (resp && rep->status == 429 && !MHD_get_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER))
    MHD_add_response_header(resp, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  return resp;
}

/* Queues the filled reply, or the standard JSON error when rc != 0; clears rep. */
static enum MHD_Result native_queue(dd_http__req *rq, int rc, dd_http_reply *rep) {
  enum MHD_Result r;
  if (rc != 0) {
    r = dd_http__queue_error(rq->conn, rc, 0, dd_err_msg());
  } else {
    struct MHD_Response *resp = make_response(rq, rep);
    r = resp ? dd_http__queue(rq->conn, (unsigned)rep->status, resp) : MHD_NO;
    if (resp) MHD_destroy_response(resp);
  }
  reply_clear(rep);
  return r;
}

enum MHD_Result dd_http__dispatch_native(dd_http__req *rq, const dd_http__native *nat) {
  dd_http_request req = {.rq = rq, .path = rq->url + nat->len};
  dd_http_reply rep = {.status = 200, .fd = -1};
  dd_err_clear();
  int rc = nat->fn(nat->ctx, &req, &rep);
  enum MHD_Result r;
  if (req.run_m) { /* a codec's call: its reply comes from its head hook */
    reply_clear(&rep);
    r = dd_http__run_codec(rq, req.run_m, req.run_msg, &req.run_who, &req.run_codec);
  } else {
    r = native_queue(rq, rc, &rep);
  }
  for (size_t i = 0; i < req.n_decoded; i++) free(req.decoded[i]);
  return r;
}

enum MHD_Result dd_http__native_reply(dd_http__req *rq, int (*fill)(void *cls, dd_http_reply *rep),
                                   void *cls) {
  dd_http_reply rep = {.status = 200, .fd = -1};
  dd_err_clear();
  int rc = fill(cls, &rep);
  return native_queue(rq, rc, &rep);
}
