/* call_stream.c: the stream runner (call.h): a handler on a producer thread, its
 * messages encoded by the transport's hook into a bounded byte queue, read by the
 * transport as the connection can take them.
 *
 * Producers: a streaming call gets a detached thread of its own (a stream may run for
 * long); a unary call goes to the runner's worker pool when it has one (a thread per call
 * cost three quarters of the throughput), else gets a thread too.
 *
 * Waiting: a blocking transport waits on the stream's condition variable; a non-blocking
 * one is suspended through its hook (under the stream's lock) and resumed by the producer
 * (under the same lock, only while `suspended` says so, exactly once per suspend).
 *
 * Lifetime: two references, the producer's and the transport's (dropped by
 * dd_call_stream_release, which also cancels: the handler's next send fails with
 * DD_ECANCELLED, and the hooks are never called again). Live streams are listed in the
 * runner so cancel_all reaches them. Lock order: runner mu, then stream mu. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "server/call/call.h"

struct dd_call_runner {
  pthread_mutex_t mu; /* guards producers, streams, each stream's refs */
  pthread_cond_t idle; /* producers dropped to 0 */
  int producers;       /* handlers started and not finished (queued jobs included) */
  dd_call_stream *streams;
  pthread_t *workers;
  size_t n_workers;
  pthread_mutex_t jobs_mu; /* guards jobs_head, jobs_tail, jobs_stop */
  pthread_cond_t jobs_cv;
  dd_call_stream *jobs_head, *jobs_tail;
  int jobs_stop;
};

struct dd_call_stream {
  dd_call_runner *rn;
  const dd_call_registry *reg;
  const dd_method *m;
  ProtobufCMessage *req;
  dd_principal who;
  char **hdr; /* 2 * n_hdr strings: name, value, ... */
  size_t n_hdr;
  int64_t deadline_ms;
  char request_id[DD_REQUEST_ID_LEN + 1]; /* made at start: the transport sends it first */
  dd_call_stream_hooks hooks;
  pthread_mutex_t mu; /* guards everything below */
  pthread_cond_t cv;
  dd_call_buf q; /* unsent bytes are q.data[off..q.len) */
  size_t off, n_msgs;
  int64_t woke_ms; /* when a send last woke the transport (stream__send_wakes) */
  bool queued_any, done, cancelled, released, suspended, cut, unary;
  bool producer_waits; /* the producer sleeps until the unsent bytes drop to the low water */
  int rc;
  char errmsg[1024];
  dd_call_result res; /* res.file_fd is the stream's until dd_call_stream_status */
  int refs;           /* guarded by rn->mu */
  dd_call_stream *prev, *next, *job_next;
};

int dd_call_buf_append(dd_call_buf *b, const void *data, size_t n) {
  if (b->len + n > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return dd_err_set(DD_ENOMEM, "out of memory");
    b->data = p;
    b->cap = cap;
  }
  if (n) memcpy(b->data + b->len, data, n);
  b->len += n;
  return 0;
}

/* ---- references ---- */

static void stream__free(dd_call_stream *s) {
  if (s->who.view) dd_call_registry_view_ops(s->reg)->unref(s->who.view);
  protobuf_c_message_free_unpacked(s->req, NULL);
  for (size_t i = 0; i < 2 * s->n_hdr; i++) free(s->hdr[i]);
  free(s->hdr);
  free(s->q.data);
  if (s->res.file_fd >= 0) close(s->res.file_fd);
  if (s->hooks.release_cls) s->hooks.release_cls(s->hooks.cls);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->cv);
  free(s);
}

static void stream__unref(dd_call_stream *s) {
  dd_call_runner *rn = s->rn;
  pthread_mutex_lock(&rn->mu);
  bool last = --s->refs == 0;
  if (last) {
    if (s->prev) s->prev->next = s->next;
    else rn->streams = s->next;
    if (s->next) s->next->prev = s->prev;
  }
  pthread_mutex_unlock(&rn->mu);
  if (last) stream__free(s);
}

/* With s->mu held: wakes waiters and resumes a suspended transport. */
static void stream__wake(dd_call_stream *s) {
  pthread_cond_broadcast(&s->cv);
  if (s->suspended && !s->released) {
    s->suspended = false;
    s->hooks.resume(s->hooks.cls);
  }
}

/* With s->mu held: moves the unsent bytes to the front once half the buffer has been
 * sent, so the queue stays within about twice the high-water mark. */
static void stream__compact(dd_call_stream *s) {
  if (s->off > 0 && s->off >= s->q.cap / 2) {
    memmove(s->q.data, s->q.data + s->off, s->q.len - s->off);
    s->q.len -= s->off;
    s->off = 0;
  }
}

static int stream__append(dd_call_stream *s, const char *data, size_t n) {
  stream__compact(s);
  return dd_call_buf_append(&s->q, data, n);
}

/* ---- the producer ---- */

static const char *stream__header(void *cls, const char *name) {
  dd_call_stream *s = cls;
  for (size_t i = 0; i < s->n_hdr; i++)
    if (strcasecmp(s->hdr[2 * i], name) == 0) return s->hdr[2 * i + 1];
  return NULL;
}

static int64_t stream__coarse_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* With s->mu held, after a message was queued: whether it wakes the transport. The first
 * message does, then one once DD_CALL_STREAM_WAKE_BYTES are unsent or a tick of the
 * coarse clock (a few ms; reading it costs little on every line) has passed since the
 * last wake, so a producer of many small messages (NDJSON lines) hands them over in
 * batches, not with a thread switch each; the end always wakes. A message may thus wait,
 * unsent, until the producer's next send or its end. */
static bool stream__send_wakes(dd_call_stream *s) {
  if (s->n_msgs > 1 && s->q.len - s->off < DD_CALL_STREAM_WAKE_BYTES) {
    int64_t now = stream__coarse_ms();
    if (now - s->woke_ms < 1) return false;
    s->woke_ms = now;
    return true;
  }
  s->woke_ms = stream__coarse_ms();
  return true;
}

/* The message is encoded straight into the queue, under the lock (an NDJSON line is a
 * copy of a few hundred bytes): one copy a message fewer than through a buffer of its own. */
static int stream__send(void *cls, const ProtobufCMessage *msg) {
  dd_call_stream *s = cls;
  pthread_mutex_lock(&s->mu);
  /* over the high water the producer sleeps until half of it is left: one wake per half
   * megabyte sent, not one per read of the transport */
  if (s->q.len - s->off > DD_CALL_STREAM_HIGH_WATER)
    while (!s->cancelled && s->q.len - s->off > DD_CALL_STREAM_HIGH_WATER / 2) {
      s->producer_waits = true;
      pthread_cond_wait(&s->cv, &s->mu);
    }
  int rc = s->cancelled ? dd_err_set(DD_ECANCELLED, "client went away or server stopping") : 0;
  if (!rc) {
    stream__compact(s);
    size_t at = s->q.len;
    rc = s->hooks.encode(s->hooks.cls, msg, s->n_msgs, &s->q);
    if (rc) {
      s->q.len = at; /* nothing of a message that failed to encode */
    } else {
      s->n_msgs++;
      s->queued_any = s->queued_any || s->q.len > at;
      /* a unary reply is complete only at the end */
      if (!s->unary && stream__send_wakes(s)) stream__wake(s);
    }
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

static void stream__run(dd_call_stream *s) {
  dd_call_sink sink = {.cls = s, .header = stream__header, .send = stream__send, .request_id = s->request_id};
  dd_call_result res;
  dd_err_clear();
  int rc = dd_call_run(s->reg, s->m, s->req, &s->who, s->deadline_ms, &sink, &res);
  pthread_mutex_lock(&s->mu);
  s->done = true;
  s->rc = rc;
  s->res = res;
  if (rc) snprintf(s->errmsg, sizeof s->errmsg, "%s", dd_err_msg());
  if (rc && s->queued_any && !s->cancelled) {
    /* bytes are out (or queued): the failure is told in the stream, or the stream is cut */
    dd_call_buf b = {0};
    if (!s->hooks.encode_error || s->hooks.encode_error(s->hooks.cls, rc, s->errmsg, &b) != 0 ||
        stream__append(s, b.data, b.len) != 0)
      s->cut = true;
    free(b.data);
  }
  stream__wake(s);
  pthread_mutex_unlock(&s->mu);
  dd_call_runner *rn = s->rn;
  stream__unref(s);
  pthread_mutex_lock(&rn->mu);
  if (--rn->producers == 0) pthread_cond_broadcast(&rn->idle);
  pthread_mutex_unlock(&rn->mu);
}

static void *stream__thread(void *arg) {
  stream__run(arg);
  return NULL;
}

/* ---- the runner ---- */

static void *runner__worker(void *arg) {
  dd_call_runner *rn = arg;
  pthread_mutex_lock(&rn->jobs_mu);
  for (;;) {
    while (!rn->jobs_head && !rn->jobs_stop) pthread_cond_wait(&rn->jobs_cv, &rn->jobs_mu);
    dd_call_stream *s = rn->jobs_head;
    if (!s) break;
    rn->jobs_head = s->job_next;
    if (!rn->jobs_head) rn->jobs_tail = NULL;
    pthread_mutex_unlock(&rn->jobs_mu);
    stream__run(s);
    pthread_mutex_lock(&rn->jobs_mu);
  }
  pthread_mutex_unlock(&rn->jobs_mu);
  return NULL;
}

static void runner__push(dd_call_runner *rn, dd_call_stream *s) {
  pthread_mutex_lock(&rn->jobs_mu);
  s->job_next = NULL;
  if (rn->jobs_tail) rn->jobs_tail->job_next = s;
  else rn->jobs_head = s;
  rn->jobs_tail = s;
  pthread_cond_signal(&rn->jobs_cv);
  pthread_mutex_unlock(&rn->jobs_mu);
}

int dd_call_runner_new(dd_call_runner **out, size_t workers) {
  *out = NULL;
  dd_call_runner *rn = calloc(1, sizeof *rn);
  if (!rn) return dd_err_set(DD_ENOMEM, "out of memory");
  pthread_mutex_init(&rn->mu, NULL);
  pthread_condattr_t ca; /* wait_idle's until_ms is a dd_call_now_ms() (monotonic) time */
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&rn->idle, &ca);
  pthread_condattr_destroy(&ca);
  pthread_mutex_init(&rn->jobs_mu, NULL);
  pthread_cond_init(&rn->jobs_cv, NULL);
  if (workers && !(rn->workers = calloc(workers, sizeof *rn->workers))) {
    dd_call_runner_free(rn);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  for (; rn->n_workers < workers; rn->n_workers++) {
    if (pthread_create(&rn->workers[rn->n_workers], NULL, runner__worker, rn) != 0) {
      dd_call_runner_free(rn);
      return dd_err_set(DD_EINTERNAL, "cannot start call worker threads");
    }
  }
  *out = rn;
  return 0;
}

void dd_call_runner_cancel_all(dd_call_runner *rn) {
  pthread_mutex_lock(&rn->mu);
  for (dd_call_stream *s = rn->streams; s; s = s->next) {
    pthread_mutex_lock(&s->mu);
    s->cancelled = true;
    stream__wake(s);
    pthread_mutex_unlock(&s->mu);
  }
  pthread_mutex_unlock(&rn->mu);
}

int dd_call_runner_wait_idle(dd_call_runner *rn, int64_t until_ms) {
  struct timespec ts = {.tv_sec = until_ms / 1000, .tv_nsec = (long)(until_ms % 1000) * 1000000L};
  int rc = 0;
  pthread_mutex_lock(&rn->mu);
  while (rn->producers > 0 && !rc) {
    if (!until_ms) pthread_cond_wait(&rn->idle, &rn->mu);
    else if (pthread_cond_timedwait(&rn->idle, &rn->mu, &ts) != 0 && rn->producers > 0)
      rc = DD_EDEADLINE;
  }
  pthread_mutex_unlock(&rn->mu);
  return rc ? dd_err_set(rc, "handlers still running") : 0;
}

void dd_call_runner_free(dd_call_runner *rn) {
  if (!rn) return;
  dd_call_runner_cancel_all(rn);
  dd_call_runner_wait_idle(rn, 0);
  pthread_mutex_lock(&rn->jobs_mu);
  rn->jobs_stop = 1;
  pthread_cond_broadcast(&rn->jobs_cv);
  pthread_mutex_unlock(&rn->jobs_mu);
  for (size_t i = 0; i < rn->n_workers; i++) pthread_join(rn->workers[i], NULL);
  free(rn->workers);
  pthread_mutex_destroy(&rn->mu);
  pthread_cond_destroy(&rn->idle);
  pthread_mutex_destroy(&rn->jobs_mu);
  pthread_cond_destroy(&rn->jobs_cv);
  free(rn);
}

/* ---- the transport's side ---- */

static int stream__copy_headers(dd_call_stream *s, const char *const *headers, size_t n) {
  if (!n) return 0;
  if (!(s->hdr = calloc(2 * n, sizeof *s->hdr))) return dd_err_set(DD_ENOMEM, "out of memory");
  for (; s->n_hdr < n; s->n_hdr++) {
    s->hdr[2 * s->n_hdr] = strdup(headers[2 * s->n_hdr]);
    s->hdr[2 * s->n_hdr + 1] = strdup(headers[2 * s->n_hdr + 1] ? headers[2 * s->n_hdr + 1] : "");
    if (!s->hdr[2 * s->n_hdr] || !s->hdr[2 * s->n_hdr + 1]) {
      s->n_hdr++; /* freed with the others */
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
  }
  return 0;
}

int dd_call_stream_start(dd_call_stream **out, dd_call_runner *rn, const dd_call_registry *r,
                         const dd_method *m, ProtobufCMessage *req, const dd_principal *who,
                         const char *const *headers, size_t n_headers, int64_t deadline_ms,
                         const dd_call_stream_hooks *hooks) {
  *out = NULL;
  dd_call_stream *s = calloc(1, sizeof *s);
  if (!s) {
    protobuf_c_message_free_unpacked(req, NULL);
    if (hooks->release_cls) hooks->release_cls(hooks->cls);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  *s = (dd_call_stream){.rn = rn, .reg = r, .m = m, .req = req, .who = *who, .deadline_ms = deadline_ms,
                        .hooks = *hooks, .res = {.file_fd = -1}, .unary = !(m->flags & DD_METHOD_STREAMING)};
  if (s->who.view) dd_call_registry_view_ops(r)->ref(s->who.view); /* the call's read view */
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  if (hooks->request_id && strlen(hooks->request_id) == DD_REQUEST_ID_LEN)
    memcpy(s->request_id, hooks->request_id, sizeof s->request_id);
  else
    dd_request_id(s->request_id);
  int rc = stream__copy_headers(s, headers, n_headers);
  if (rc) {
    stream__free(s);
    return rc;
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_mutex_lock(&rn->mu);
  s->refs = 2;
  s->next = rn->streams;
  if (rn->streams) rn->streams->prev = s;
  rn->streams = s;
  rn->producers++;
  pthread_t t;
  bool failed = false;
  if (s->unary && rn->n_workers > 0) runner__push(rn, s); /* rn->mu, then jobs_mu */
  else failed = pthread_create(&t, &attr, stream__thread, s) != 0;
  if (failed) {
    rn->producers--;
    s->refs = 1;
  }
  pthread_mutex_unlock(&rn->mu);
  pthread_attr_destroy(&attr);
  if (failed) {
    dd_call_stream_release(s);
    return dd_err_set(DD_ENOMEM, "cannot start a call thread");
  }
  *out = s;
  return 0;
}

/* With s->mu held: suspends a non-blocking transport (true), or waits (false). */
static bool stream__pause(dd_call_stream *s) {
  if (s->hooks.suspend) {
    s->suspended = true;
    s->hooks.suspend(s->hooks.cls);
    return true;
  }
  pthread_cond_wait(&s->cv, &s->mu);
  return false;
}

int dd_call_stream_wait(dd_call_stream *s) {
  pthread_mutex_lock(&s->mu);
  int rc = DD_CALL_STREAM_READY;
  while (!s->done && !s->cancelled && (s->unary || s->q.len == s->off)) {
    if (stream__pause(s)) {
      rc = DD_CALL_STREAM_SUSPENDED;
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
  return rc;
}

int dd_call_stream_status(dd_call_stream *s, char *msg, size_t msg_cap, bool *bytes_queued,
                          dd_call_result *res) {
  pthread_mutex_lock(&s->mu);
  int rc = s->done ? s->rc : 0;
  const char *m = s->done ? s->errmsg : "";
  if (!s->done && s->cancelled) {
    rc = DD_EIO;
    m = "server stopping";
  }
  if (msg_cap) snprintf(msg, msg_cap, "%s", m);
  *bytes_queued = s->queued_any;
  *res = s->res;
  memcpy(res->request_id, s->request_id, sizeof res->request_id);
  s->res.file_fd = -1; /* the caller's now */
  pthread_mutex_unlock(&s->mu);
  if (rc) dd_err_set(rc, "%s", msg_cap ? msg : m);
  return rc;
}

ssize_t dd_call_stream_read(dd_call_stream *s, char *buf, size_t max) {
  pthread_mutex_lock(&s->mu);
  ssize_t n;
  for (;;) {
    if (s->q.len > s->off) {
      n = (ssize_t)(s->q.len - s->off < max ? s->q.len - s->off : max);
      memcpy(buf, s->q.data + s->off, (size_t)n);
      s->off += (size_t)n;
      if (s->producer_waits && s->q.len - s->off <= DD_CALL_STREAM_HIGH_WATER / 2) {
        s->producer_waits = false;
        pthread_cond_broadcast(&s->cv); /* room for the producer */
      }
      break;
    }
    if (s->cancelled || s->cut) {
      n = DD_CALL_STREAM_CUT;
      break;
    }
    if (s->done) {
      n = s->rc && !s->queued_any ? DD_CALL_STREAM_CUT : DD_CALL_STREAM_EOF;
      break;
    }
    if (stream__pause(s)) {
      n = 0;
      break;
    }
  }
  pthread_mutex_unlock(&s->mu);
  return n;
}

void dd_call_stream_release(dd_call_stream *s) {
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  s->cancelled = true;
  s->released = true;
  s->suspended = false;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  stream__unref(s);
}
