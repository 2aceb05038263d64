/* grpc_server.c: the server's life: options, the method table (the caller's methods plus
 * health and reflection), the gRPC server and its queues, the worker threads, graceful
 * shutdown and freeing. The calls themselves are grpc_worker.c and the files it calls. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <grpc/grpc_security.h>
#include <grpc/support/time.h>

#include "common/err.h"
#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "server/grpc/grpc_int.h"

/* ---- method table ---- */

static bool srv__path_ok(const char *p) {
  if (!p || p[0] != '/') return false;
  const char *slash = strrchr(p, '/');
  return slash > p + 1 && slash[1] != '\0';
}

static int srv__add_method(dd_grpc_server *s, const dd_method *m, dd_grpc__kind kind, int prepost,
                           int prepost_max) {
  if (!srv__path_ok(m->path))
    return dd_err_set(DD_EINVAL, "method path '%s' is not '/package.Service/Method'",
                      m->path ? m->path : "(null)");
  if (kind != DD_GRPC__K_REFLECT && (!m->input || !m->output))
    return dd_err_set(DD_EINVAL, "method %s has no message descriptors", m->path);
  if ((kind == DD_GRPC__K_UNARY || kind == DD_GRPC__K_STREAM) && !m->fn)
    return dd_err_set(DD_EINVAL, "method %s has no handler", m->path);
  for (size_t i = 0; i < s->n_methods; i++)
    if (strcmp(s->methods[i].m->path, m->path) == 0)
      return dd_err_set(DD_EINVAL, "method %s is registered twice", m->path);
  dd_grpc__method *dst = &s->methods[s->n_methods++];
  dst->m = m;
  dst->kind = kind;
  dst->prepost = prepost;
  dst->prepost_max = prepost_max;
  atomic_init(&dst->grown, 0);
  return 0;
}

static int srv__build_methods(dd_grpc_server *s) {
  size_t n = dd_call_registry_count(s->reg);
  static const dd_method reflection = {DD_GRPC__REFLECTION_PATH,
                                       &grpc__reflection__v1alpha__server_reflection_request__descriptor,
                                       &grpc__reflection__v1alpha__server_reflection_response__descriptor,
                                       NULL, DD_METHOD_PUBLIC};
  static const dd_method reflection_v1 = {DD_GRPC__REFLECTION_V1_PATH,
                                          &grpc__reflection__v1alpha__server_reflection_request__descriptor,
                                          &grpc__reflection__v1alpha__server_reflection_response__descriptor,
                                          NULL, DD_METHOD_PUBLIC};
  s->methods = calloc(n + 4, sizeof *s->methods);
  if (!s->methods) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const dd_method *m = dd_call_registry_method(s->reg, i);
    dd_grpc__kind kind = m->flags & DD_METHOD_STREAMING ? DD_GRPC__K_STREAM : DD_GRPC__K_UNARY;
    int rc = srv__add_method(s, m, kind, DD_GRPC__PREPOST_START, DD_GRPC__PREPOST);
    if (rc) return rc;
  }
  const int b = DD_GRPC__PREPOST_BUILTIN; /* they start with 1 and grow to b */
  int rc = srv__add_method(s, &dd_grpc__health_check_method, DD_GRPC__K_UNARY, 1, b);
  if (!rc) rc = srv__add_method(s, &dd_grpc__health_watch_method, DD_GRPC__K_WATCH, 1, b);
  if (!rc) rc = srv__add_method(s, &reflection, DD_GRPC__K_REFLECT, 1, b);
  if (!rc) rc = srv__add_method(s, &reflection_v1, DD_GRPC__K_REFLECT, 1, b);
  return rc;
}

/* The distinct service names ("pkg.Service") of the method table, for health checks. */
static int srv__build_services(dd_grpc_server *s) {
  s->services = calloc(s->n_methods, sizeof *s->services);
  if (!s->services) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < s->n_methods; i++) {
    const char *path = s->methods[i].m->path;
    size_t len = (size_t)(strrchr(path, '/') - path) - 1;
    bool seen = false;
    for (size_t j = 0; j < s->n_services && !seen; j++)
      seen = strlen(s->services[j]) == len && memcmp(s->services[j], path + 1, len) == 0;
    if (seen) continue;
    if (!(s->services[s->n_services] = strndup(path + 1, len)))
      return dd_err_set(DD_ENOMEM, "out of memory");
    s->n_services++;
  }
  return 0;
}

/* ---- gRPC objects ---- */

static void srv__int_arg(grpc_arg *args, size_t *n, const char *key, int value) {
  memset(&args[*n], 0, sizeof args[*n]);
  args[*n].type = GRPC_ARG_INTEGER;
  args[*n].key = (char *)key;
  args[*n].value.integer = value;
  (*n)++;
}

/* The connection limits of the options (those set, i.e. > 0): at most 7 args. */
static void srv__limit_args(const dd_grpc_opts *o, grpc_arg *args, size_t *n) {
  const struct {
    const char *key;
    int value;
  } limits[] = {
      {GRPC_ARG_KEEPALIVE_TIME_MS, o->keepalive_time_ms},
      {GRPC_ARG_KEEPALIVE_TIMEOUT_MS, o->keepalive_timeout_ms},
      {GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS, o->handshake_timeout_ms},
      {GRPC_ARG_MAX_CONNECTION_IDLE_MS, o->max_connection_idle_ms},
      {GRPC_ARG_MAX_CONNECTION_AGE_MS, o->max_connection_age_ms},
      {GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, o->max_connection_age_grace_ms},
      {GRPC_ARG_MAX_CONCURRENT_STREAMS, o->max_concurrent_streams},
  };
  for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++)
    if (limits[i].value > 0) srv__int_arg(args, n, limits[i].key, limits[i].value);
}

static int srv__create_grpc(dd_grpc_server *s) {
  grpc_arg args[12];
  size_t n = 0;
  srv__int_arg(args, &n, GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH, (int)s->opts.max_message_bytes);
  srv__int_arg(args, &n, GRPC_ARG_MAX_SEND_MESSAGE_LENGTH, (int)s->opts.max_message_bytes);
  srv__int_arg(args, &n, GRPC_ARG_ALLOW_REUSEPORT, 0); /* a port in use must fail, not be shared */
  srv__limit_args(&s->opts, args, &n);
  grpc_channel_args ca = {n, args};
  if (!(s->gs = grpc_server_create(&ca, NULL)))
    return dd_err_set(DD_EINTERNAL, "grpc_server_create failed");
  if (!(s->shutdown_cq = grpc_completion_queue_create_for_next(NULL)))
    return dd_err_set(DD_EINTERNAL, "cannot create a completion queue");
  grpc_server_register_completion_queue(s->gs, s->shutdown_cq, NULL);
  for (int i = 0; i < s->n_workers; i++) {
    dd_grpc__worker *w = &s->workers[i];
    w->srv = s;
    w->cq = grpc_completion_queue_create_for_next(NULL);
    if (!w->cq) return dd_err_set(DD_EINTERNAL, "cannot create a completion queue");
    grpc_server_register_completion_queue(s->gs, w->cq, NULL);
  }
  for (size_t i = 0; i < s->n_methods; i++) {
    dd_grpc__method *m = &s->methods[i];
    grpc_server_register_method_payload_handling payload =
        m->kind == DD_GRPC__K_REFLECT ? GRPC_SRM_PAYLOAD_NONE : GRPC_SRM_PAYLOAD_READ_INITIAL_BYTE_BUFFER;
    if (!(m->handle = grpc_server_register_method(s->gs, m->m->path, NULL, payload, 0)))
      return dd_err_set(DD_EINVAL, "cannot register method %s", m->m->path);
  }
  return 0;
}

static int srv__listen(dd_grpc_server *s) {
  grpc_server_credentials *creds = NULL;
  int rc = dd_grpc__credentials(s, s->opts.tls, &creds);
  s->opts.tls = NULL; /* borrowed for start only */
  if (rc) return rc;
  s->port = grpc_server_add_http2_port(s->gs, s->listen, creds);
  grpc_server_credentials_release(creds);
  if (s->port <= 0) return dd_err_set(DD_EIO, "cannot listen on %s (address in use or invalid)", s->listen);
  return 0;
}

/* Posts every worker's slots, then starts the threads. */
static int srv__run(dd_grpc_server *s) {
  for (int i = 0; i < s->n_workers; i++) {
    for (size_t j = 0; j < s->n_methods; j++)
      for (int k = 0; k < s->methods[j].prepost; k++) {
        int rc = dd_grpc__post(&s->workers[i], &s->methods[j]);
        if (rc) return rc;
      }
    for (int k = 0; k < DD_GRPC__PREPOST_UNKNOWN; k++) {
      int rc = dd_grpc__post(&s->workers[i], NULL);
      if (rc) return rc;
    }
  }
  for (int i = 0; i < s->n_workers; i++) {
    if (pthread_create(&s->workers[i].thread, NULL, dd_grpc__worker_main, &s->workers[i]) != 0)
      return dd_err_set(DD_EINTERNAL, "cannot start worker thread %d", i);
    s->workers[i].started = true;
  }
  return 0;
}

/* Destroys the gRPC server (its shutdown, if it was started, has completed), shuts the
 * queues down and lets each worker drain its queue (inline for a worker never started). */
static void srv__teardown(dd_grpc_server *s) {
  dd_grpc__stream_wait_all(s); /* their calls end before the server goes */
  if (s->gs) grpc_server_destroy(s->gs);
  s->gs = NULL;
  for (int i = 0; s->workers && i < s->n_workers; i++)
    if (s->workers[i].cq) grpc_completion_queue_shutdown(s->workers[i].cq);
  for (int i = 0; s->workers && i < s->n_workers; i++) {
    dd_grpc__worker *w = &s->workers[i];
    if (w->started) pthread_join(w->thread, NULL);
    else if (w->cq) dd_grpc__worker_main(w);
    w->started = false;
    if (w->cq) grpc_completion_queue_destroy(w->cq);
    w->cq = NULL;
  }
  if (s->shutdown_cq) {
    grpc_completion_queue_shutdown(s->shutdown_cq);
    while (grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL).type !=
           GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(s->shutdown_cq);
    s->shutdown_cq = NULL;
  }
}

/* ---- public API ---- */

static int srv__init_opts(dd_grpc_server *s, const dd_grpc_opts *opts) {
  s->opts = *opts;
  if (!opts->listen || !*opts->listen) return dd_err_set(DD_EINVAL, "no listen address");
  if (!(s->listen = strdup(opts->listen))) return dd_err_set(DD_ENOMEM, "out of memory");
  s->opts.listen = s->listen;
  if (s->opts.max_message_bytes == 0) s->opts.max_message_bytes = DD_GRPC__DEFAULT_MAX_MSG;
  if (s->opts.max_message_bytes > INT_MAX)
    return dd_err_set(DD_EINVAL, "max_message_bytes %zu is above %d", s->opts.max_message_bytes, INT_MAX);
  if (s->opts.shutdown_grace_ms < 0) s->opts.shutdown_grace_ms = 0;
  if (s->opts.threads < 0) return dd_err_set(DD_EINVAL, "threads must not be negative");
  if (s->opts.threads == 0) {
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    s->opts.threads = cores > 0 ? (int)cores : 1;
  }
  s->n_workers = s->opts.threads;
  if (!(s->workers = calloc((size_t)s->n_workers, sizeof *s->workers)))
    return dd_err_set(DD_ENOMEM, "out of memory");
  return dd_call_memotab_new(&s->memo);
}

static void srv__free_memory(dd_grpc_server *s) {
  for (size_t i = 0; i < s->n_services; i++) free(s->services[i]);
  free(s->services);
  free(s->methods);
  free(s->workers);
  dd_call_memotab_free(s->memo);
  free(s->listen);
  pthread_cond_destroy(&s->cv);
  pthread_mutex_destroy(&s->mu);
  dd_grpc__tls_free(s);
  if (s->grpc_inited) grpc_shutdown();
  free(s);
}

int dd_grpc_server_start(dd_grpc_server **out, const dd_grpc_opts *opts, const dd_call_registry *reg) {
  int rc = 0;
  if (!out || !opts || !reg) return dd_err_set(DD_EINVAL, "bad arguments");
  *out = NULL;
  dd_grpc_server *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  pthread_mutex_init(&s->mu, NULL);
  pthread_cond_init(&s->cv, NULL);
  pthread_mutex_init(&s->tls_mu, NULL);
  s->t_shutdown.op = DD_GRPC__T_SHUTDOWN;
  s->reg = reg;
  if ((rc = srv__init_opts(s, opts))) goto cleanup;
  if ((rc = srv__build_methods(s))) goto cleanup;
  if ((rc = srv__build_services(s))) goto cleanup;
  grpc_init();
  s->grpc_inited = true;
  if ((rc = srv__create_grpc(s))) goto cleanup;
  if ((rc = srv__listen(s))) goto cleanup;
  grpc_server_start(s->gs);
  s->started = true;
  if ((rc = srv__run(s))) goto cleanup;
  *out = s;
  return 0;
cleanup:
  if (s->started) {
    dd_grpc_server_free(s); /* the full shutdown path */
    return rc;
  }
  srv__teardown(s);
  srv__free_memory(s);
  return rc;
}

int dd_grpc_server_port(const dd_grpc_server *s) { return s ? s->port : 0; }

void dd_grpc_server_drain(dd_grpc_server *s) {
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  if (!atomic_load(&s->draining)) {
    s->drain_at = gpr_now(GPR_CLOCK_MONOTONIC);
    atomic_store(&s->draining, true);
  }
  pthread_mutex_unlock(&s->mu);
}

/* Stops the gRPC server: after the GOAWAY delay (see grpc_int.h) no new calls, streams
 * ended, in-flight calls get what is left of the grace counted from the drain, then are
 * cancelled. Returns when gRPC reports every call finished. */
static void srv__stop(dd_grpc_server *s) {
  int delay = s->opts.shutdown_grace_ms < DD_GRPC__GOAWAY_DELAY_MS ? s->opts.shutdown_grace_ms
                                                                   : DD_GRPC__GOAWAY_DELAY_MS;
  gpr_sleep_until(gpr_time_add(s->drain_at, gpr_time_from_millis(delay, GPR_TIMESPAN)));
  grpc_server_shutdown_and_notify(s->gs, s->shutdown_cq, &s->t_shutdown);
  dd_grpc__astream_end_all(s);
  gpr_timespec until =
      gpr_time_add(s->drain_at, gpr_time_from_millis(s->opts.shutdown_grace_ms, GPR_TIMESPAN));
  grpc_event ev = grpc_completion_queue_next(s->shutdown_cq, until, NULL);
  if (ev.type == GRPC_QUEUE_TIMEOUT) {
    grpc_server_cancel_all_calls(s->gs);
    ev = grpc_completion_queue_next(s->shutdown_cq, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
  }
}

void dd_grpc_server_shutdown(dd_grpc_server *s) {
  if (!s) return;
  pthread_mutex_lock(&s->mu);
  if (s->state != 0) {
    while (s->state != 2) pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    return;
  }
  s->state = 1;
  pthread_mutex_unlock(&s->mu);
  dd_grpc_server_drain(s);
  pthread_mutex_lock(&s->mu);
  atomic_store(&s->stopping, true);
  pthread_mutex_unlock(&s->mu);

  if (s->started) srv__stop(s);
  srv__teardown(s);

  pthread_mutex_lock(&s->mu);
  s->state = 2;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
}

void dd_grpc_server_free(dd_grpc_server *s) {
  if (!s) return;
  dd_grpc_server_shutdown(s);
  srv__free_memory(s);
}
