/* metrics.c: histograms, the bounded name table and the Prometheus text writer (metrics.h). */
#include "common/metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

const double dd_hist_bounds_s[DD_HIST_BUCKETS] = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05,
                                                  0.1,    0.25,  0.5,    1,     2.5,  5,     10};

void dd_hist_observe(dd_hist *h, uint64_t us) {
  double s = (double)us / 1e6;
  int i = 0;
  while (i < DD_HIST_BUCKETS && s > dd_hist_bounds_s[i]) i++;
  if (i < DD_HIST_BUCKETS) atomic_fetch_add_explicit(&h->bucket[i], 1, memory_order_relaxed);
  atomic_fetch_add_explicit(&h->sum_us, us, memory_order_relaxed);
  atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

/* ---- exposition ---- */

void dd_metrics_head(dd_buf *b, const char *name, const char *type, const char *help) {
  dd_buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void metrics__name(dd_buf *b, const char *name, const char *labels) {
  dd_buf_puts(b, name);
  if (labels && *labels) dd_buf_printf(b, "{%s}", labels);
  dd_buf_putc(b, ' ');
}

void dd_metrics_sample(dd_buf *b, const char *name, const char *labels, double value) {
  metrics__name(b, name, labels);
  if (isinf(value)) dd_buf_puts(b, value > 0 ? "+Inf\n" : "-Inf\n");
  else dd_buf_printf(b, "%.17g\n", value);
}

void dd_metrics_sample_u64(dd_buf *b, const char *name, const char *labels, uint64_t value) {
  metrics__name(b, name, labels);
  dd_buf_printf(b, "%" PRIu64 "\n", value);
}

void dd_metrics_label(dd_buf *labels, const char *key, const char *value) {
  if (labels->len) dd_buf_putc(labels, ',');
  dd_buf_printf(labels, "%s=\"", key);
  for (const char *p = value ? value : ""; *p; p++) {
    if (*p == '\\' || *p == '"') dd_buf_putc(labels, '\\');
    if (*p == '\n') dd_buf_puts(labels, "\\n");
    else dd_buf_putc(labels, *p);
  }
  dd_buf_putc(labels, '"');
}

void dd_metrics_hist(dd_buf *b, const char *name, const char *labels, const dd_hist *h) {
  char line[256];
  uint64_t cum = 0;
  /* the count is read first: buckets observed since can only make +Inf look smaller */
  uint64_t count = atomic_load_explicit(&h->count, memory_order_relaxed);
  for (int i = 0; i < DD_HIST_BUCKETS; i++) {
    cum += atomic_load_explicit(&h->bucket[i], memory_order_relaxed);
    dd_buf_printf(b, "%s_bucket{%s%sle=\"%g\"} %" PRIu64 "\n", name, labels ? labels : "",
                  labels && *labels ? "," : "", dd_hist_bounds_s[i], cum);
  }
  if (count < cum) count = cum;
  dd_buf_printf(b, "%s_bucket{%s%sle=\"+Inf\"} %" PRIu64 "\n", name, labels ? labels : "",
                labels && *labels ? "," : "", count);
  snprintf(line, sizeof line, "%s_sum", name);
  dd_metrics_sample(b, line, labels,
                    (double)atomic_load_explicit(&h->sum_us, memory_order_relaxed) / 1e6);
  snprintf(line, sizeof line, "%s_count", name);
  dd_metrics_sample_u64(b, line, labels, count);
}

/* ---- bounded names ---- */

static uint32_t metrics__hash(const char *s, size_t n) {
  uint32_t h = 2166136261u; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 16777619u;
  return h;
}

void dd_metrics_names_add(dd_metrics_names *t, const char *name) {
  size_t n = strnlen(name, DD_METRICS_NAME_LEN - 1);
  uint32_t start = metrics__hash(name, n) % DD_METRICS_NAMES_MAX;
  for (uint32_t k = 0; k < DD_METRICS_NAMES_MAX; k++) {
    __typeof__(&t->slot[0]) s = &t->slot[(start + k) % DD_METRICS_NAMES_MAX];
    int st = atomic_load_explicit(&s->state, memory_order_acquire);
    if (st == 0) {
      int want = 0;
      if (atomic_compare_exchange_strong(&s->state, &want, 1)) {
        memcpy(s->name, name, n);
        s->name[n] = '\0';
        atomic_store_explicit(&s->state, 2, memory_order_release);
        atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
        return;
      }
      st = want;
    }
    while (st == 1) st = atomic_load_explicit(&s->state, memory_order_acquire); /* a few stores */
    if (!strncmp(s->name, name, n) && s->name[n] == '\0') {
      atomic_fetch_add_explicit(&s->count, 1, memory_order_relaxed);
      return;
    }
  }
  atomic_fetch_add_explicit(&t->other, 1, memory_order_relaxed);
}

void dd_metrics_names_write(dd_buf *b, const char *metric, const char *label,
                            const dd_metrics_names *t) {
  for (int i = 0; i < DD_METRICS_NAMES_MAX; i++) {
    if (atomic_load_explicit(&t->slot[i].state, memory_order_acquire) != 2) continue;
    dd_buf l = {0};
    dd_metrics_label(&l, label, t->slot[i].name);
    dd_metrics_sample_u64(b, metric, l.p, atomic_load_explicit(&t->slot[i].count, memory_order_relaxed));
    dd_buf_free(&l);
  }
  uint64_t other = atomic_load_explicit(&t->other, memory_order_relaxed);
  if (other) {
    dd_buf l = {0};
    dd_metrics_label(&l, label, DD_METRICS_NAMES_OTHER);
    dd_metrics_sample_u64(b, metric, l.p, other);
    dd_buf_free(&l);
  }
}
