/* metrics.h: lock-free counters and latency histograms, and a writer of Prometheus' text
 * exposition format (version 0.0.4) for them (prefix dd_metrics_ / dd_hist_).
 *
 * Counters are plain C11 atomics updated with relaxed order: a scrape reads each one on its
 * own, so a scrape taken during a call may see its count before its latency (Prometheus
 * tolerates that; every value only grows). The writer never allocates per series beyond the
 * output buffer (common/buf.h: check `oom` once at the end).
 *
 * Names follow Prometheus' naming guide: `deltad_` prefix, base units (`_seconds`,
 * `_bytes`), `_total` on counters. Label values are escaped here (\\, \" and \n). */
#ifndef DD_COMMON_METRICS_H
#define DD_COMMON_METRICS_H

#include <stdatomic.h>
#include <stdint.h>

#include "common/buf.h"

/* ---- histograms --------------------------------------------------------------------------- */

enum { DD_HIST_BUCKETS = 14 }; /* upper bounds in dd_hist_bounds_s; +Inf is count */
extern const double dd_hist_bounds_s[DD_HIST_BUCKETS];

typedef struct dd_hist {
  atomic_uint_fast64_t bucket[DD_HIST_BUCKETS]; /* not cumulative: the writer sums */
  atomic_uint_fast64_t count;
  atomic_uint_fast64_t sum_us; /* microseconds, exposed as seconds */
} dd_hist;

void dd_hist_observe(dd_hist *h, uint64_t us);

/* ---- exposition ----------------------------------------------------------------------------- */

/* "# HELP name help\n# TYPE name type\n" (type: counter, gauge, histogram). */
void dd_metrics_head(dd_buf *b, const char *name, const char *type, const char *help);
/* One sample line: name{labels} value. labels is the text between the braces, already
 * formatted with dd_metrics_label (NULL or "": none). */
void dd_metrics_sample(dd_buf *b, const char *name, const char *labels, double value);
void dd_metrics_sample_u64(dd_buf *b, const char *name, const char *labels, uint64_t value);
/* The _bucket, _sum and _count lines of histogram name with extra labels (may be ""). */
void dd_metrics_hist(dd_buf *b, const char *name, const char *labels, const dd_hist *h);
/* Appends key="value" (value escaped) to a label text, with a comma when it is not empty. */
void dd_metrics_label(dd_buf *labels, const char *key, const char *value);

/* ---- bounded label values --------------------------------------------------------------------- */

/* A fixed table of at most DD_METRICS_NAMES_MAX distinct names (recipient names), each with
 * a counter; a name beyond the table counts under DD_METRICS_NAMES_OTHER, so a label has at
 * most DD_METRICS_NAMES_MAX + 1 values whatever the number of names. Lock-free: a slot is
 * claimed with one compare-and-swap and never given back. Zero-initialised is empty. */
enum { DD_METRICS_NAMES_MAX = 64, DD_METRICS_NAME_LEN = 64 };
#define DD_METRICS_NAMES_OTHER "_other"
typedef struct dd_metrics_names {
  struct {
    atomic_int state; /* 0 free, 1 being written, 2 ready */
    char name[DD_METRICS_NAME_LEN];
    atomic_uint_fast64_t count;
  } slot[DD_METRICS_NAMES_MAX];
  atomic_uint_fast64_t other;
} dd_metrics_names;

/* Counts one event for name (names longer than DD_METRICS_NAME_LEN - 1 are cut). */
void dd_metrics_names_add(dd_metrics_names *t, const char *name);
/* One sample per name counted so far (and _other when used), labelled label="name". */
void dd_metrics_names_write(dd_buf *b, const char *metric, const char *label,
                            const dd_metrics_names *t);

#endif
