/* http_stream.c: MHD glue for the call core's stream runner (call.h): a method runs on a
 * producer thread while MHD pulls its encoded bytes through a response-from-callback.
 * Used for every streaming method, for unary methods in the epoll pool (so a slow handler
 * does not hold up the other connections of its pool thread), and for the native codecs
 * (dd_http__run_codec).
 *
 * The status is decided once the first bytes or the end are there: an error before any
 * byte is an ordinary error reply (the generated routes' JSON, or the codec's), after
 * bytes the codec's encode_error writes a last line or the connection is cut. A unary
 * call is answered as one buffered reply (or a file) once it ended.
 *
 * Waiting: with a thread per connection the access handler and the reader block inside
 * the runner; in the epoll pool they must not, so the runner suspends the connection
 * through the hooks here (MHD_suspend_connection) and the producer resumes it.
 *
 * Lifetime: the dd_http__stream is the HTTP side's: held by dd_http__req until a response is
 * queued, then by the MHD response, whose free callback releases the runner's stream
 * (cancelling the handler's next send). The hooks' state (dd_http__hooks: the connection
 * and the codec) is the runner's, freed when both sides are done. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "server/http/http_int.h"
#include "server/http/pbjson.h"

/* The runner's side: what the hooks need (freed by the runner, see release_cls). */
typedef struct dd_http__hooks {
  struct MHD_Connection *conn; /* used only while the HTTP side holds the stream */
  dd_http__codec codec;
} dd_http__hooks;

struct dd_http__stream {
  dd_http_server *srv;
  struct MHD_Connection *conn;
  dd_call_stream *cs;
  dd_http__hooks *hk; /* valid while cs is held */
  int blocking, unary;
};

/* ---- hooks ---------------------------------------------------------------------------- */

static int hk_encode(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out) {
  dd_http__hooks *hk = cls;
  return hk->codec.encode(hk->codec.cls, msg, index, out);
}

static int hk_encode_error(void *cls, int code, const char *msg, dd_call_buf *out) {
  dd_http__hooks *hk = cls;
  return hk->codec.encode_error ? hk->codec.encode_error(hk->codec.cls, code, msg, out) : -1;
}

static void hk_suspend(void *cls) { MHD_suspend_connection(((dd_http__hooks *)cls)->conn); }
static void hk_resume(void *cls) { MHD_resume_connection(((dd_http__hooks *)cls)->conn); }

static void hk_release(void *cls) {
  dd_http__hooks *hk = cls;
  if (hk->codec.free_cls) hk->codec.free_cls(hk->codec.cls);
  free(hk);
}

/* ---- the JSON codec of the generated routes ---------------------------------------- */

static int json_encode(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out) {
  (void)index;
  const int *streaming = cls;
  char *text = NULL;
  int rc = dd_http__reply_json(msg, &text);
  if (!rc) rc = dd_call_buf_append(out, text, strlen(text));
  if (!rc && *streaming) rc = dd_call_buf_append(out, "\n", 1);
  free(text);
  return rc;
}

/* A failure after lines: a last {"error": {...}} line. */
static int json_encode_error(void *cls, int code, const char *msg, dd_call_buf *out) {
  (void)cls;
  char *err = dd_http__error_json(code, msg);
  int rc = err ? 0 : DD_ENOMEM;
  if (!rc) rc = dd_call_buf_append(out, "{\"error\":", 9);
  if (!rc) rc = dd_call_buf_append(out, err, strlen(err));
  if (!rc) rc = dd_call_buf_append(out, "}\n", 2);
  free(err);
  return rc;
}

static const int json_streaming = 1, json_unary = 0;

const dd_http__codec *dd_http__json_codec(const dd_method *m) {
  static const dd_http__codec stream = {.cls = (void *)&json_streaming, .encode = json_encode,
                                        .encode_error = json_encode_error,
                                        .content_type = "application/x-ndjson"};
  static const dd_http__codec unary = {.cls = (void *)&json_unary, .encode = json_encode,
                                       .content_type = "application/json"};
  return m->flags & DD_METHOD_STREAMING ? &stream : &unary;
}

/* ---- the HTTP side ------------------------------------------------------------------- */

static void stream_drop(dd_http__stream *st) {
  dd_call_stream_release(st->cs);
  free(st);
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max) {
  (void)pos;
  dd_http__stream *st = cls;
  int64_t t0 = dd_http__mono_ms();
  ssize_t n = dd_call_stream_read(st->cs, buf, max);
  if (st->blocking) dd_http__conn_touch(st->srv, st->conn, t0); /* a slow producer is not an idle client */
  if (n == DD_CALL_STREAM_EOF) return MHD_CONTENT_READER_END_OF_STREAM;
  if (n == DD_CALL_STREAM_CUT) return MHD_CONTENT_READER_END_WITH_ERROR;
  return n; /* 0: suspended, called again once resumed */
}

static void stream_response_free(void *cls) { stream_drop(cls); }

static enum MHD_Result queue_response(dd_http__req *rq, int status, struct MHD_Response *r) {
  if (!r) return MHD_NO;
  enum MHD_Result ok = dd_http__queue(rq->conn, (unsigned)status, r);
  MHD_destroy_response(r);
  return ok;
}

/* A unary call that ended well: its bytes (all queued: the call is done) or its file. */
static struct MHD_Response *unary_response(dd_http__stream *st, dd_call_result *res) {
  if (res->file_fd >= 0) {
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(res->file_len, res->file_fd, res->file_off);
    if (!r) close(res->file_fd);
    res->file_fd = -1; /* MHD's now */
    return r;
  }
  dd_call_buf b = {0};
  char chunk[16384];
  ssize_t n;
  while ((n = dd_call_stream_read(st->cs, chunk, sizeof chunk)) > 0)
    if (dd_call_buf_append(&b, chunk, (size_t)n) != 0) break;
  if (n > 0 || n == DD_CALL_STREAM_CUT) {
    free(b.data);
    return NULL;
  }
  struct MHD_Response *r = MHD_create_response_from_buffer(b.len, b.data ? b.data : (void *)"",
                                                           b.data ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
  if (!r) free(b.data);
  return r;
}

/* The generated routes' answer, once ready. Takes st. */
static enum MHD_Result answer_json(dd_http__req *rq, dd_http__stream *st, int rc, const char *msg,
                                   bool queued, dd_call_result *res) {
  if (rc && !queued) {
    char buf[1200];
    stream_drop(st);
    return dd_http__queue_error(rq->conn, rc, 0, dd_http__rest_msg(rq, msg, buf, sizeof buf));
  }
  struct MHD_Response *r;
  const char *ctype = st->unary ? "application/json" : "application/x-ndjson";
  if (st->unary) {
    r = unary_response(st, res);
    stream_drop(st);
  } else {
    r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, 32 * 1024, stream_read, st, stream_response_free);
    if (!r) stream_drop(st);
  }
  if (r) MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
  return queue_response(rq, 200, r);
}

enum MHD_Result dd_http__stream_answer(dd_http__req *rq) {
  dd_http__stream *st = rq->st;
  if (dd_call_stream_wait(st->cs) == DD_CALL_STREAM_SUSPENDED) return MHD_YES; /* called again */
  char msg[1024];
  bool queued = false;
  dd_call_result res;
  int rc = dd_call_stream_status(st->cs, msg, sizeof msg, &queued, &res);
  rq->st = NULL;
  if (!st->hk->codec.head) return answer_json(rq, st, rc, msg, queued, &res);
  return dd_http__codec_answer(rq, st, rc, msg, queued, &res);
}

void dd_http__stream_request_done(dd_http__req *rq) {
  if (rq->st) stream_drop(rq->st);
  rq->st = NULL;
}

typedef struct header_list {
  const char **kv; /* name, value, ... (MHD's strings, valid during the request) */
  size_t n, cap;
} header_list;

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value) {
  (void)kind;
  header_list *h = cls;
  if (h->n == h->cap) return MHD_NO;
  h->kv[2 * h->n] = key;
  h->kv[2 * h->n + 1] = value ? value : "";
  h->n++;
  return MHD_YES;
}

enum MHD_Result dd_http__stream_start(dd_http__req *rq, const dd_method *m, ProtobufCMessage *req,
                                   const dd_principal *who, int64_t deadline_ms,
                                   const dd_http__codec *codec) {
  dd_http_server *s = rq->srv;
  dd_http__stream *st = calloc(1, sizeof *st);
  dd_http__hooks *hk = calloc(1, sizeof *hk);
  if (!st || !hk) {
    free(st);
    free(hk);
    protobuf_c_message_free_unpacked(req, NULL);
    if (codec->free_cls) codec->free_cls(codec->cls);
    return dd_http__queue_error(rq->conn, DD_ENOMEM, 0, "out of memory");
  }
  *hk = (dd_http__hooks){.conn = rq->conn, .codec = *codec};
  *st = (dd_http__stream){.srv = s, .conn = rq->conn, .hk = hk, .blocking = s->opts.threads <= 0,
                      .unary = !(m->flags & DD_METHOD_STREAMING)};
  dd_call_stream_hooks hooks = {.cls = hk, .encode = hk_encode, .encode_error = hk_encode_error,
                                .suspend = st->blocking ? NULL : hk_suspend,
                                .resume = st->blocking ? NULL : hk_resume, .release_cls = hk_release,
                                .request_id = rq->request_id};
  header_list h = {.cap = (size_t)MHD_get_connection_values(rq->conn, MHD_HEADER_KIND, NULL, NULL)};
  int rc;
  if (!(h.kv = calloc(2 * h.cap + 1, sizeof *h.kv))) {
    protobuf_c_message_free_unpacked(req, NULL);
    hk_release(hk);
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  } else {
    MHD_get_connection_values(rq->conn, MHD_HEADER_KIND, collect_header, &h);
    rc = dd_call_stream_start(&st->cs, s->runner, s->reg, m, req, who, h.kv, h.n, deadline_ms, &hooks);
    free(h.kv); /* the stream copied the strings */
  }
  if (rc) {
    free(st);
    return dd_http__queue_error(rq->conn, rc, 0, dd_err_msg());
  }
  rq->st = st;
  return dd_http__stream_answer(rq);
}

/* ---- native codecs ------------------------------------------------------------------- */

/* A unary codec call on the connection's own thread (thread per connection): the codec
 * encodes the reply into a buffer, then fills the reply as it would from the runner. */
typedef struct codec_inline {
  dd_http__req *rq;
  const dd_http__codec *c;
  const dd_method *m;
  dd_call_buf body;
  size_t n;
  int rc;
  char msg[1024];
  dd_call_result res;
  dd_call_buf memo_key; /* a memo miss: the full key the reply is kept under */
  int memo_hit;
  uint64_t pb_bytes;    /* the reply's protobuf size, for the memo */
} codec_inline;

static const char *inline_header(void *cls, const char *name) {
  return MHD_lookup_connection_value(((codec_inline *)cls)->rq->conn, MHD_HEADER_KIND, name);
}

static int inline_send(void *cls, const ProtobufCMessage *msg) {
  codec_inline *ci = cls;
  if (ci->memo_key.len) ci->pb_bytes = protobuf_c_message_get_packed_size(msg);
  return ci->c->encode(ci->c->cls, msg, ci->n++, &ci->body);
}

/* The memo's key: method path, NUL, codec tag, NUL, the handler's key. */
static int inline_memo(void *cls, const void *key, size_t len, uint64_t *pb_bytes) {
  codec_inline *ci = cls;
  dd_call_buf *k = &ci->memo_key;
  k->len = 0;
  const char *tag = ci->c->memo_tag;
  if (dd_call_buf_append(k, ci->m->path, strlen(ci->m->path) + 1) || dd_call_buf_append(k, tag, strlen(tag) + 1) ||
      dd_call_buf_append(k, key, len)) {
    k->len = 0; /* no memory: a miss kept nowhere */
    dd_err_clear();
    return 0;
  }
  if (!dd_call_memotab_get(ci->rq->srv->memo, k->data, k->len, &ci->body, pb_bytes)) return 0;
  ci->memo_hit = 1;
  k->len = 0;
  return 1;
}

/* The part of a codec's reply both paths share: the protocol's error body when the call
 * failed before any byte (*more false), else the handler's file or nothing, then the
 * codec's head. *more: the body (bytes read from the call) is still to be added. */
static int codec_head(const dd_http__codec *c, int rc, bool queued, const char *msg,
                      dd_call_result *res, dd_http_reply *rep, bool *more) {
  *more = false;
  if (rc && !queued) return c->head(c->cls, rc, msg, res, rep);
  bool file = res->file_fd >= 0;
  int hrc = file ? dd_http_reply_file(rep, res->file_fd, res->file_off, res->file_len) : 0;
  res->file_fd = -1; /* the reply's now */
  if (!hrc) hrc = c->head(c->cls, 0, "", res, rep);
  *more = !hrc && !file;
  return hrc;
}

static int inline_fill(void *cls, dd_http_reply *rep) {
  codec_inline *ci = cls;
  bool more;
  int rc = codec_head(ci->c, ci->rc, false, ci->msg, &ci->res, rep, &more);
  return rc || !more ? rc : dd_http_reply_body(rep, ci->body.data ? ci->body.data : "", ci->body.len);
}

static enum MHD_Result codec_run_inline(dd_http__req *rq, const dd_method *m, ProtobufCMessage *req,
                                        const dd_principal *who, int64_t deadline,
                                        const dd_http__codec *codec) {
  codec_inline *ci = calloc(1, sizeof *ci);
  enum MHD_Result r;
  if (!ci) {
    r = dd_http__queue_error(rq->conn, DD_ENOMEM, 0, "out of memory");
  } else {
    *ci = (codec_inline){.rq = rq, .c = codec, .m = m};
    dd_call_sink sink = {.cls = ci, .header = inline_header, .send = inline_send, .request_id = rq->request_id,
                         .memo = codec->memo_tag ? inline_memo : NULL};
    dd_err_clear();
    ci->rc = dd_call_run(rq->srv->reg, m, req, who, deadline, &sink, &ci->res);
    if (ci->rc) snprintf(ci->msg, sizeof ci->msg, "%s", dd_err_msg());
    /* a miss the handler answered with one message (not a file): kept for the next */
    if (!ci->rc && !ci->memo_hit && ci->memo_key.len && ci->n == 1 && ci->res.file_fd < 0)
      dd_call_memotab_put(rq->srv->memo, ci->memo_key.data, ci->memo_key.len, ci->body.data, ci->body.len,
                        ci->pb_bytes);
    r = dd_http__native_reply(rq, inline_fill, ci);
    if (ci->res.file_fd >= 0) close(ci->res.file_fd);
    free(ci->body.data);
    free(ci->memo_key.data);
    free(ci);
  }
  protobuf_c_message_free_unpacked(req, NULL);
  if (codec->free_cls) codec->free_cls(codec->cls);
  return r;
}

enum MHD_Result dd_http__run_codec(dd_http__req *rq, const dd_method *m, ProtobufCMessage *req,
                                   const dd_principal *who, const dd_http__codec *codec) {
  int64_t deadline = 0;
  const char *t = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, "grpc-timeout");
  if (dd_call_parse_timeout(t, &deadline) != 0) {
    protobuf_c_message_free_unpacked(req, NULL);
    if (codec->free_cls) codec->free_cls(codec->cls);
    return dd_http__queue_error(rq->conn, DD_EINVAL, 0, dd_err_msg());
  }
  /* A unary call with a thread per connection, or a quick one (DD_METHOD_QUICK) in the
   * epoll pool, runs right here, as the generated routes' do: a producer thread per call
   * tripled the CPU of a Delta Sharing list call. */
  bool here = rq->srv->opts.threads <= 0 || (m->flags & DD_METHOD_QUICK);
  if (here && !(m->flags & DD_METHOD_STREAMING))
    return codec_run_inline(rq, m, req, who, deadline, codec);
  return dd_http__stream_start(rq, m, req, who, deadline, codec);
}

/* The reply a codec fills once ready (see dd_http__native_reply). */
typedef struct codec_fill {
  dd_http__stream *st;
  int rc;
  const char *msg;
  bool queued;
  dd_call_result *res;
  int streamed; /* the body is the stream: st moved into the reply */
} codec_fill;

static ssize_t codec_read(void *cls, uint64_t pos, char *buf, size_t max) {
  ssize_t n = stream_read(cls, pos, buf, max);
  if (n == MHD_CONTENT_READER_END_OF_STREAM) return DD_HTTP_STREAM_END;
  if (n == MHD_CONTENT_READER_END_WITH_ERROR) return DD_HTTP_STREAM_ERROR;
  return n;
}

static int codec_fill_reply(void *cls, dd_http_reply *rep) {
  codec_fill *f = cls;
  dd_http__stream *st = f->st;
  const dd_http__codec *c = &st->hk->codec;
  bool more;
  int rc = codec_head(c, f->rc, f->queued, f->msg, f->res, rep, &more);
  if (rc || !more) return rc;
  if (!st->unary) {
    f->streamed = 1;
    rc = dd_http_reply_stream(rep, codec_read, st, stream_response_free);
    if (!rc && c->content_type) rc = dd_http_reply_header(rep, MHD_HTTP_HEADER_CONTENT_TYPE, c->content_type);
    return rc;
  }
  char chunk[16384];
  ssize_t n;
  while (!rc && (n = dd_call_stream_read(st->cs, chunk, sizeof chunk)) > 0) rc = dd_http_reply_body(rep, chunk, (size_t)n);
  return rc;
}

enum MHD_Result dd_http__codec_answer(dd_http__req *rq, dd_http__stream *st, int rc, const char *msg, bool queued,
                                   dd_call_result *res) {
  codec_fill f = {.st = st, .rc = rc, .msg = msg, .queued = queued, .res = res};
  enum MHD_Result r = dd_http__native_reply(rq, codec_fill_reply, &f);
  if (res->file_fd >= 0) close(res->file_fd);
  if (!f.streamed) stream_drop(st);
  return r;
}
