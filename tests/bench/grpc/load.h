/* load.h: the gRPC load generator of tests/bench/grpc (dd_grpc_load). load_worker.c drives
 * many unary calls in flight on gRPC core and measures them; load_main.c parses options,
 * builds the requests and prints Markdown. */
#ifndef DD_BENCH_GRPC_LOAD_H
#define DD_BENCH_GRPC_LOAD_H

#include <stddef.h>
#include <stdint.h>

typedef struct load_opts {
  const char *target;   /* HOST:PORT */
  const char *auth;     /* "Bearer <token>" or NULL */
  int threads;          /* client threads, one channel (own TCP connection) and CQ each */
  int concurrency;      /* calls in flight per thread */
  double warmup_s;      /* calls completed during warm-up are not counted */
  double duration_s;    /* measured time */
  int server_pid;       /* > 0: measure this process's CPU time during the window */
} load_opts;

/* What one measured run produced. */
typedef struct load_result {
  uint64_t ok;          /* calls completed with status OK inside the window */
  uint64_t errors;      /* calls that ended with another status (whole run) */
  double seconds;       /* length of the measured window */
  uint64_t *lat_ns;     /* latency of each counted call (ok entries), unsorted */
  double server_cpu_s;  /* CPU time (user + system) of opts.server_pid in the window */
  char first_error[256];
} load_result;

/* Runs method with the packed request req (len bytes) under opts. Returns 0, or -1 with a
 * message in out->first_error when the run could not start. out->lat_ns is malloc'ed. */
int load_run(load_result *out, const load_opts *opts, const char *method, const uint8_t *req,
             size_t len);

#endif
