/* load_worker.c: the measuring part of dd_grpc_load. Each thread owns one channel (its own
 * TCP connection: a local subchannel pool), one completion queue and `concurrency` call
 * slots; every slot runs one unary call at a time as a single batch (send metadata,
 * message and close; receive metadata, message and status) and starts the next call as
 * soon as the last completes, so `concurrency` calls stay in flight per thread. Calls that
 * complete inside the measured window count towards QPS and latency. */
#include <grpc/byte_buffer.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "load.h"

typedef struct load__slot {
  grpc_call *call;
  grpc_byte_buffer *resp;
  grpc_metadata_array md_initial, md_trailing;
  grpc_status_code status;
  grpc_slice details;
  uint64_t t0;
} load__slot;

typedef struct load__worker {
  const load_opts *o;
  const char *method;
  grpc_slice req; /* shared by every call of this worker (referenced, not copied) */
  uint64_t begin_ns, end_ns;
  grpc_channel *ch;
  void *reg; /* registered method handle */
  grpc_completion_queue *cq;
  grpc_metadata auth;
  load__slot *slots;
  uint64_t ok, errors;
  uint64_t *lat;
  size_t n_lat, cap_lat;
  char first_error[256];
  pthread_t tid;
} load__worker;

static uint64_t load__now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* User + system CPU seconds of process pid (all its threads), from /proc; -1 if unknown. */
static double load__proc_cpu_s(int pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%d/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
  unsigned long long ut, st;
  if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
    return -1;
  return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

/* Sleeps until the monotonic clock reads t_ns. */
static void load__sleep_until(uint64_t t_ns) {
  struct timespec ts = {(time_t)(t_ns / 1000000000u), (long)(t_ns % 1000000000u)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0) {
  }
}

static void load__error(load__worker *w, const char *msg, int code) {
  w->errors++;
  if (!w->first_error[0]) snprintf(w->first_error, sizeof w->first_error, "%s (%d)", msg, code);
}

/* Starts the next call on slot s; returns 0, or -1 when gRPC refused it. */
static int load__start(load__worker *w, load__slot *s) {
  gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_seconds(30, GPR_TIMESPAN));
  s->call = grpc_channel_create_registered_call(w->ch, NULL, GRPC_PROPAGATE_DEFAULTS, w->cq, w->reg,
                                                deadline, NULL);
  grpc_metadata_array_init(&s->md_initial);
  grpc_metadata_array_init(&s->md_trailing);
  s->details = grpc_empty_slice();
  s->resp = NULL;
  grpc_byte_buffer *req = grpc_raw_byte_buffer_create(&w->req, 1);
  grpc_op ops[6];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = w->o->auth ? 1 : 0;
  ops[0].data.send_initial_metadata.metadata = w->o->auth ? &w->auth : NULL;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = req;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &s->md_initial;
  ops[4].op = GRPC_OP_RECV_MESSAGE;
  ops[4].data.recv_message.recv_message = &s->resp;
  ops[5].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[5].data.recv_status_on_client.trailing_metadata = &s->md_trailing;
  ops[5].data.recv_status_on_client.status = &s->status;
  ops[5].data.recv_status_on_client.status_details = &s->details;
  s->t0 = load__now_ns();
  grpc_call_error e = grpc_call_start_batch(s->call, ops, 6, s, NULL);
  grpc_byte_buffer_destroy(req); /* the call holds its own reference to the slice */
  if (e == GRPC_CALL_OK) return 0;
  load__error(w, "grpc_call_start_batch failed", e);
  return -1;
}

static void load__record(load__worker *w, uint64_t ns) {
  if (w->n_lat == w->cap_lat) {
    size_t cap = w->cap_lat ? w->cap_lat * 2 : 65536;
    uint64_t *lat = realloc(w->lat, cap * sizeof *lat);
    if (!lat) return;
    w->lat = lat;
    w->cap_lat = cap;
  }
  w->lat[w->n_lat++] = ns;
  w->ok++;
}

/* Accounts for slot s's finished call and releases it. */
static void load__finish(load__worker *w, load__slot *s, int success, uint64_t now) {
  if (!success) {
    load__error(w, "batch failed", 0);
  } else if (s->status != GRPC_STATUS_OK) {
    char msg[200];
    snprintf(msg, sizeof msg, "gRPC status: %.*s", (int)GRPC_SLICE_LENGTH(s->details),
             (const char *)GRPC_SLICE_START_PTR(s->details));
    load__error(w, msg, (int)s->status);
  } else if (!s->resp) {
    load__error(w, "no response message", 0);
  } else if (now >= w->begin_ns && now < w->end_ns) {
    load__record(w, now - s->t0);
  }
  if (s->resp) grpc_byte_buffer_destroy(s->resp);
  grpc_metadata_array_destroy(&s->md_initial);
  grpc_metadata_array_destroy(&s->md_trailing);
  grpc_slice_unref(s->details);
  grpc_call_unref(s->call);
  s->call = NULL;
}

static void *load__thread(void *arg) {
  load__worker *w = arg;
  int active = 0;
  for (int i = 0; i < w->o->concurrency; i++)
    if (load__start(w, &w->slots[i]) == 0) active++;
  while (active > 0) {
    grpc_event ev = grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
    if (ev.type != GRPC_OP_COMPLETE) break;
    load__slot *s = ev.tag;
    uint64_t now = load__now_ns();
    load__finish(w, s, ev.success, now);
    if (now >= w->end_ns || load__start(w, s) != 0) active--;
  }
  return NULL;
}

static int load__open(load__worker *w) {
  grpc_arg arg;
  arg.type = GRPC_ARG_INTEGER;
  arg.key = (char *)GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL;
  arg.value.integer = 1;
  grpc_channel_args args = {1, &arg};
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  w->ch = grpc_channel_create(w->o->target, creds, &args);
  grpc_channel_credentials_release(creds);
  w->reg = grpc_channel_register_call(w->ch, w->method, NULL, NULL);
  w->cq = grpc_completion_queue_create_for_next(NULL);
  w->slots = calloc((size_t)w->o->concurrency, sizeof *w->slots);
  if (w->o->auth) {
    w->auth.key = grpc_slice_from_static_string("authorization");
    w->auth.value = grpc_slice_from_static_string(w->o->auth);
  }
  return w->ch && w->cq && w->slots ? 0 : -1;
}

static void load__close(load__worker *w) {
  if (w->cq) {
    grpc_completion_queue_shutdown(w->cq);
    while (grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(w->cq);
  }
  if (w->ch) grpc_channel_destroy(w->ch);
  free(w->slots);
  free(w->lat);
}

/* Moves the workers' counts and latencies into out. */
static int load__collect(load_result *out, load__worker *ws, int n) {
  size_t total = 0;
  for (int i = 0; i < n; i++) total += ws[i].n_lat;
  out->lat_ns = malloc((total ? total : 1) * sizeof *out->lat_ns);
  if (!out->lat_ns) return -1;
  for (int i = 0; i < n; i++) {
    if (ws[i].n_lat) memcpy(out->lat_ns + out->ok, ws[i].lat, ws[i].n_lat * sizeof *out->lat_ns);
    out->ok += ws[i].n_lat;
    out->errors += ws[i].errors;
    if (!out->first_error[0] && ws[i].first_error[0])
      memcpy(out->first_error, ws[i].first_error, sizeof out->first_error);
  }
  return 0;
}

int load_run(load_result *out, const load_opts *o, const char *method, const uint8_t *req,
             size_t len) {
  memset(out, 0, sizeof *out);
  load__worker *ws = calloc((size_t)o->threads, sizeof *ws);
  if (!ws) return -1;
  grpc_slice shared = grpc_slice_from_copied_buffer((const char *)req, len);
  uint64_t begin = load__now_ns() + (uint64_t)(o->warmup_s * 1e9);
  uint64_t end = begin + (uint64_t)(o->duration_s * 1e9);
  int rc = 0, started = 0;
  for (int i = 0; i < o->threads; i++) {
    load__worker *w = &ws[i];
    w->o = o;
    w->method = method;
    w->req = shared;
    w->begin_ns = begin;
    w->end_ns = end;
    if (load__open(w) != 0 || pthread_create(&w->tid, NULL, load__thread, w) != 0) {
      snprintf(out->first_error, sizeof out->first_error, "cannot start worker %d", i);
      rc = -1;
      break;
    }
    started++;
  }
  if (rc == 0 && o->server_pid > 0) {
    load__sleep_until(begin);
    double c0 = load__proc_cpu_s(o->server_pid);
    load__sleep_until(end);
    double c1 = load__proc_cpu_s(o->server_pid);
    out->server_cpu_s = c0 >= 0 && c1 >= c0 ? c1 - c0 : -1;
  }
  for (int i = 0; i < started; i++) pthread_join(ws[i].tid, NULL);
  out->seconds = o->duration_s;
  if (rc == 0 && load__collect(out, ws, o->threads) != 0) rc = -1;
  for (int i = 0; i < o->threads; i++) load__close(&ws[i]);
  grpc_slice_unref(shared);
  free(ws);
  return rc;
}
