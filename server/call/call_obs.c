/* call_obs.c: the call core's metrics and access log (call_obs.h), and their exposition
 * (dd_call_metrics_write in call.h). */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "server/call/call_obs.h"

static const char *const obs__codes[DD_CALL__CODES] = {
    "OK",        "CANCELLED",         "UNKNOWN",        "INVALID_ARGUMENT",  "DEADLINE_EXCEEDED",
    "NOT_FOUND", "ALREADY_EXISTS",    "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",   "UNIMPLEMENTED",     "INTERNAL",
    "UNAVAILABLE", "DATA_LOSS",       "UNAUTHENTICATED"};

int dd_call__obs_new(dd_call__obs **out, size_t n_methods) {
  *out = calloc(1, sizeof **out);
  if (*out && n_methods && !((*out)->method = calloc(n_methods, sizeof *(*out)->method))) {
    free(*out);
    *out = NULL;
  }
  if (!*out) return dd_err_set(DD_ENOMEM, "out of memory");
  (*out)->n = n_methods;
  return 0;
}

void dd_call__obs_free(dd_call__obs *o) {
  if (!o) return;
  free(o->method);
  free(o);
}

int64_t dd_call__now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

void dd_call__obs_begin(const dd_call_registry *r, dd_call__span *sp, const char *request_id) {
  sp->t0_us = dd_call__now_us();
  if (request_id && strlen(request_id) == DD_REQUEST_ID_LEN) memcpy(sp->request_id, request_id, DD_REQUEST_ID_LEN + 1);
  else dd_request_id(sp->request_id);
  atomic_fetch_add_explicit(&dd_call__registry_obs(r)->in_flight, 1, memory_order_relaxed);
}

static const char *obs__principal(const dd_principal *who) {
  if (!who || who->kind == DD_PRINCIPAL_NONE) return "anonymous";
  return who->kind == DD_PRINCIPAL_ADMIN ? "admin" : who->name;
}

void dd_call__obs_end(const dd_call_registry *r, const dd_method *m, const dd_principal *who,
                      int rc, const dd_call__span *sp, uint64_t bytes, size_t messages) {
  dd_call__obs *o = dd_call__registry_obs(r);
  int64_t us = dd_call__now_us() - sp->t0_us;
  if (us < 0) us = 0;
  atomic_fetch_sub_explicit(&o->in_flight, 1, memory_order_relaxed);
  int code = rc ? dd_call_status_grpc(rc) : 0;
  if (code < 0 || code >= DD_CALL__CODES) code = 2; /* UNKNOWN */
  size_t i = dd_call__method_index(r, m);
  if (i < o->n) {
    dd_call__method_obs *mo = &o->method[i];
    atomic_fetch_add_explicit(&mo->code[code], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&mo->bytes, bytes, memory_order_relaxed);
    atomic_fetch_add_explicit(&mo->messages, messages, memory_order_relaxed);
    dd_hist_observe(&mo->latency, (uint64_t)us);
  }
  if (who && who->kind == DD_PRINCIPAL_RECIPIENT) dd_metrics_names_add(&o->recipients, who->name);
  dd_log_level level = rc && code == 13 ? DD_LOG_WARN : DD_LOG_INFO;
  if (!dd_log_enabled(level)) return;
  dd_log_field f[] = {
      DD_LOG_STR("request_id", sp->request_id),
      DD_LOG_STR("principal", obs__principal(who)),
      DD_LOG_STR("method", m->path),
      DD_LOG_STR("code", obs__codes[code]),
      DD_LOG_INT("http_status", rc ? dd_call_status_http(rc) : 200),
      DD_LOG_NUM("duration_ms", (double)us / 1000.0),
      DD_LOG_INT("bytes", bytes),
      DD_LOG_INT("messages", messages),
  };
  dd_log_fields(level, "request", f, sizeof f / sizeof f[0]);
}

void dd_call__obs_memo_hit(const dd_call_registry *r, const dd_method *m) {
  dd_call__obs *o = dd_call__registry_obs(r);
  size_t i = dd_call__method_index(r, m);
  if (i < o->n) atomic_fetch_add_explicit(&o->method[i].memo_hits, 1, memory_order_relaxed);
}

/* ---- exposition ---- */

/* service="pkg.Service",method="Method" of a gRPC path. */
static void obs__method_labels(dd_buf *l, const char *path) {
  const char *slash = strrchr(path, '/');
  char svc[256];
  size_t n = slash && slash > path ? (size_t)(slash - path - 1) : 0;
  if (n >= sizeof svc) n = sizeof svc - 1;
  memcpy(svc, path + 1, n);
  svc[n] = '\0';
  dd_metrics_label(l, "service", svc);
  dd_metrics_label(l, "method", slash ? slash + 1 : path);
}

static void obs__requests(dd_buf *b, const dd_call_registry *r, const dd_call__obs *o) {
  dd_metrics_head(b, "deltad_requests_total", "counter",
                  "Calls of every transport by method and gRPC status code.");
  for (size_t i = 0; i < o->n; i++)
    for (int c = 0; c < DD_CALL__CODES; c++) {
      uint64_t v = atomic_load_explicit(&o->method[i].code[c], memory_order_relaxed);
      if (!v) continue;
      dd_buf l = {0};
      obs__method_labels(&l, dd_call_registry_method(r, i)->path);
      dd_metrics_label(&l, "code", obs__codes[c]);
      dd_metrics_sample_u64(b, "deltad_requests_total", l.p, v);
      dd_buf_free(&l);
    }
}

/* One counter per method that was called (name: metric; which: 0 bytes, 1 messages,
 * 2 the latency histogram, 3 memo hits). */
static void obs__per_method(dd_buf *b, const dd_call_registry *r, const dd_call__obs *o,
                            const char *name, const char *help, int which) {
  dd_metrics_head(b, name, which == 2 ? "histogram" : "counter", help);
  for (size_t i = 0; i < o->n; i++) {
    const dd_call__method_obs *mo = &o->method[i];
    if (!atomic_load_explicit(&mo->latency.count, memory_order_relaxed)) continue;
    dd_buf l = {0};
    obs__method_labels(&l, dd_call_registry_method(r, i)->path);
    const atomic_uint_fast64_t *c = which == 0 ? &mo->bytes : which == 1 ? &mo->messages : &mo->memo_hits;
    if (which == 2) dd_metrics_hist(b, name, l.p, &mo->latency);
    else dd_metrics_sample_u64(b, name, l.p, atomic_load_explicit(c, memory_order_relaxed));
    dd_buf_free(&l);
  }
}

int dd_call_metrics_write(const dd_call_registry *r, dd_buf *b) {
  const dd_call__obs *o = dd_call__registry_obs(r);
  obs__requests(b, r, o);
  obs__per_method(b, r, o, "deltad_request_duration_seconds",
                  "Time from the handler's start to its reply (or from the token check, for a call refused there).", 2);
  obs__per_method(b, r, o, "deltad_response_bytes_total",
                  "Bytes of reply messages (protobuf size) and files sent, by method.", 0);
  obs__per_method(b, r, o, "deltad_response_messages_total",
                  "Reply messages sent (a streamed reply counts each message), by method.", 1);
  obs__per_method(b, r, o, "deltad_reply_memo_hits_total",
                  "Unary replies the transport sent again from the bytes it kept for the same key (REST list calls), by method.", 3);
  dd_metrics_head(b, "deltad_requests_in_flight", "gauge", "Calls whose handler is running.");
  dd_metrics_sample(b, "deltad_requests_in_flight", NULL,
                    (double)atomic_load_explicit(&o->in_flight, memory_order_relaxed));
  dd_metrics_head(b, "deltad_recipient_requests_total", "counter",
                  "Calls made by each Delta Sharing recipient (the first 64 names seen; later ones count as _other).");
  dd_metrics_names_write(b, "deltad_recipient_requests_total", "recipient", &o->recipients);
  return b->oom ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}
