/* call_obs.h: what the call core observes of every call (internal to server/call):
 * per-method request counts by status code, latency histograms, reply bytes and messages,
 * calls in flight and per-recipient request counts (metrics), and the one access-log line
 * per call (common/log.h). dd_call_run and dd_call_authenticate report each call here
 * once; dd_call_metrics_write (call.h) exposes the counters.
 *
 * Label cardinality is bounded by construction: method labels come from the registry's
 * table (fixed at start), codes are the 17 gRPC codes, recipients go through a
 * dd_metrics_names table of 64 names plus "_other". Counters are atomics; no lock. */
#ifndef DD_SERVER_CALL_CALL_OBS_H
#define DD_SERVER_CALL_CALL_OBS_H

#include "common/metrics.h"
#include "server/call/call.h"

enum { DD_CALL__CODES = 17 };

typedef struct dd_call__method_obs {
  atomic_uint_fast64_t code[DD_CALL__CODES];
  atomic_uint_fast64_t bytes, messages;
  atomic_uint_fast64_t memo_hits; /* replies the transport sent from its memo */
  dd_hist latency;
} dd_call__method_obs;

typedef struct dd_call__obs {
  size_t n;                      /* one per registered method */
  dd_call__method_obs *method;
  atomic_int_fast64_t in_flight;
  dd_metrics_names recipients;
} dd_call__obs;

int dd_call__obs_new(dd_call__obs **out, size_t n_methods);
void dd_call__obs_free(dd_call__obs *o);
/* The registry's observer and the table index of m (a transport's copy of a method is
 * found by its path); SIZE_MAX when m is not registered. */
dd_call__obs *dd_call__registry_obs(const dd_call_registry *r);
dd_call_observe_fn dd_call__registry_observer(const dd_call_registry *r);
dd_call_pre_observe_fn dd_call__registry_pre_observer(const dd_call_registry *r);
size_t dd_call__method_index(const dd_call_registry *r, const dd_method *m);
/* Counts a reply m's transport answered from its memo (dd_call_memo). */
void dd_call__obs_memo_hit(const dd_call_registry *r, const dd_method *m);

/* A call in progress, between _begin and _end (on the caller's stack). */
typedef struct dd_call__span {
  int64_t t0_us;
  char request_id[DD_REQUEST_ID_LEN + 1];
} dd_call__span;
int64_t dd_call__now_us(void);
/* Starts a span; takes the transport's request id when it has one (else makes one). */
void dd_call__obs_begin(const dd_call_registry *r, dd_call__span *sp, const char *request_id);
/* Ends it: counts the call and writes its access-log line. */
void dd_call__obs_end(const dd_call_registry *r, const dd_method *m, const dd_principal *who,
                      int rc, const dd_call__span *sp, uint64_t bytes, size_t messages);

#endif
