/* sharing_stream.c: the producer thread and bounded queue behind streamed Delta Sharing
 * NDJSON replies (see sharing_stream.h). */
#include "server/http/native/sharing_stream.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "common/err.h"
#include "deltad/sharing/v1/sharing.pb-c.h"
#include "server/http/http_server.h"

struct srs_stream {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *buf; /* unsent bytes are buf[off..len) */
  size_t len, cap, off;
  int lines, done, rc, cancelled;
  int64_t version;
  char caps_out[128];
  char errmsg[1024];
  pthread_t th;
  /* what the handler reads, owned here */
  const dd_method *m;
  ProtobufCMessage *req;
  dd_principal who;
  char *caps_in;
  dd_call call;
};

static const char *srs_header(dd_call *call, const char *name) {
  srs_stream *s = call->transport;
  return strcasecmp(name, "delta-sharing-capabilities") == 0 ? s->caps_in : NULL;
}

/* Appends under s->mu, moving unsent bytes to the front once half the buffer is sent. */
static int srs_append(srs_stream *s, const char *p, size_t n) {
  if (s->off == s->len) s->off = s->len = 0;
  if (s->off > 0 && s->off >= s->cap / 2) {
    memmove(s->buf, s->buf + s->off, s->len - s->off);
    s->len -= s->off;
    s->off = 0;
  }
  if (s->len + n > s->cap) {
    size_t cap = s->cap ? s->cap : 64 * 1024;
    while (cap < s->len + n) cap *= 2;
    char *g = realloc(s->buf, cap);
    if (!g) return dd_err_set(DD_ENOMEM, "out of memory");
    s->buf = g;
    s->cap = cap;
  }
  memcpy(s->buf + s->len, p, n);
  s->len += n;
  return 0;
}

static int srs_send(dd_call *call, const ProtobufCMessage *msg) {
  srs_stream *s = call->transport;
  const Deltad__Sharing__V1__TableLine *l = (const void *)msg;
  pthread_mutex_lock(&s->mu);
  while (!s->cancelled && s->len - s->off > SRS_HIGH_WATER) pthread_cond_wait(&s->cv, &s->mu);
  int rc = s->cancelled ? dd_err_set(DD_ECANCELLED, "the client went away") : 0;
  if (!rc && s->lines == 0) {
    s->version = l->version;
    snprintf(s->caps_out, sizeof s->caps_out, "%s", l->capabilities ? l->capabilities : "");
  }
  if (!rc) rc = srs_append(s, l->line, strlen(l->line));
  if (!rc) rc = srs_append(s, "\n", 1);
  if (!rc) s->lines++;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

/* A failure after the first line (the 200 is out) reaches a client that asked for an
 * endStreamAction as the protocol says: a last line {"endStreamAction":{"errorMessage":..}},
 * after which the reply ends normally. Other clients see the stream cut (no last chunk).
 * Called under s->mu; returns 0 when the error line went out. */
static int srs_error_line(srs_stream *s, const char *msg) {
  if (s->lines == 0 || !strstr(s->caps_out, "includeendstreamaction=true")) return -1;
  json_t *j = json_pack("{s:{s:s}}", "endStreamAction", "errorMessage", msg);
  if (!j) j = json_pack("{s:{s:s}}", "endStreamAction", "errorMessage", "the query failed");
  char *line = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  int rc = line ? srs_append(s, line, strlen(line)) : -1;
  if (!rc) rc = srs_append(s, "\n", 1);
  free(line);
  return rc;
}

static void *srs_main(void *arg) {
  srs_stream *s = arg;
  ProtobufCMessage *out = NULL;
  dd_err_clear();
  int rc = s->m->fn(&s->call, s->req, &out);
  protobuf_c_message_free_unpacked(out, NULL);
  pthread_mutex_lock(&s->mu);
  s->done = 1;
  if (rc && rc != DD_ECANCELLED && !s->cancelled && srs_error_line(s, dd_err_msg()) == 0) rc = 0;
  s->rc = rc;
  if (rc) snprintf(s->errmsg, sizeof s->errmsg, "%s", dd_err_msg());
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

static void srs_free(srs_stream *s) {
  if (s->req) protobuf_c_message_free_unpacked(s->req, NULL);
  free(s->caps_in);
  free(s->buf);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  free(s);
}

/* An owned copy of req (pack, then unpack). */
static int srs_copy(ProtobufCMessage **out, const dd_method *m, const ProtobufCMessage *req) {
  size_t n = protobuf_c_message_get_packed_size(req);
  uint8_t *b = malloc(n ? n : 1);
  if (!b) return dd_err_set(DD_ENOMEM, "out of memory");
  protobuf_c_message_pack(req, b);
  *out = protobuf_c_message_unpack(m->input, NULL, n, b);
  free(b);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "cannot copy the request");
}

int srs_start(srs_stream **out, const dd_method *m, const ProtobufCMessage *req,
              const dd_principal *who, void *app, const char *caps) {
  *out = NULL;
  srs_stream *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  s->m = m;
  s->who = *who;
  int rc = srs_copy(&s->req, m, req);
  if (!rc && caps && !(s->caps_in = strdup(caps))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  s->call = (dd_call){.principal = &s->who, .app = app, .send = srs_send, .header = srs_header, .transport = s};
  if (!rc && pthread_create(&s->th, NULL, srs_main, s) != 0)
    rc = dd_err_set(DD_ENOMEM, "cannot start a thread for the reply");
  if (rc) {
    srs_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int srs_wait_first(srs_stream *s, int64_t *version, char *caps, size_t caps_cap, int *lines) {
  pthread_mutex_lock(&s->mu);
  while (!s->done && s->lines == 0) pthread_cond_wait(&s->cv, &s->mu);
  int rc = 0;
  if (s->lines == 0 && s->rc) rc = dd_err_set(s->rc, "%s", s->errmsg);
  *lines = s->lines;
  *version = s->version;
  snprintf(caps, caps_cap, "%s", s->caps_out);
  pthread_mutex_unlock(&s->mu);
  return rc;
}

ssize_t srs_read(void *cls, uint64_t pos, char *buf, size_t max) {
  srs_stream *s = cls;
  (void)pos;
  pthread_mutex_lock(&s->mu);
  while (s->off == s->len && !s->done && !s->cancelled) pthread_cond_wait(&s->cv, &s->mu);
  ssize_t n;
  if (s->off < s->len) {
    size_t k = s->len - s->off < max ? s->len - s->off : max;
    memcpy(buf, s->buf + s->off, k);
    s->off += k;
    n = (ssize_t)k;
    pthread_cond_broadcast(&s->cv); /* room for the producer */
  } else {
    n = s->rc || s->cancelled ? DD_HTTP_STREAM_ERROR : DD_HTTP_STREAM_END;
  }
  pthread_mutex_unlock(&s->mu);
  return n;
}

void srs_release(void *cls) {
  srs_stream *s = cls;
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  s->cancelled = 1;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  pthread_join(s->th, NULL);
  srs_free(s);
}
