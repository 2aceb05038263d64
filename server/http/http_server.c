/* http_server.c: the REST listener's lifecycle (new, add_native, start, stop, free) and
 * libmicrohttpd's access handler, which gathers a request and hands it to the native or
 * generated dispatch (see http_int.h for the life of a request). */
#include <arpa/inet.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "server/http/http_int.h"

/* ---- small helpers ------------------------------------------------------------------- */

int dd_http__append(char **buf, size_t *len, size_t *cap, const void *data, size_t n) {
  if (*len + n + 1 > *cap) {
    size_t nc = *cap ? *cap : 1024;
    while (nc < *len + n + 1) nc *= 2;
    char *nb = realloc(*buf, nc);
    if (!nb) return dd_err_set(DD_ENOMEM, "out of memory");
    *buf = nb;
    *cap = nc;
  }
  memcpy(*buf + *len, data, n);
  *len += n;
  (*buf)[*len] = '\0';
  return 0;
}

/* MHD must not unescape: paths and queries are decoded by the router (http_int.h). */
static size_t http_no_unescape(void *cls, struct MHD_Connection *c, char *s) {
  (void)cls;
  (void)c;
  return strlen(s);
}

static const dd_http__native *find_native(const dd_http_server *s, const char *url) {
  const dd_http__native *best = NULL;
  for (size_t i = 0; i < s->n_natives; i++) {
    const dd_http__native *n = &s->natives[i];
    if (strncmp(url, n->prefix, n->len) == 0 && (!best || n->len > best->len)) best = n;
  }
  return best;
}

/* ---- the access handler -------------------------------------------------------------- */

_Thread_local dd_http__cur dd_http__current;

enum MHD_Result dd_http__queue(struct MHD_Connection *c, unsigned status, struct MHD_Response *r) {
  if (dd_http__current.conn == c && dd_http__current.request_id[0])
    MHD_add_response_header(r, "x-request-id", dd_http__current.request_id);
  return MHD_queue_response(c, status, r);
}

static void req_current(const dd_http__req *rq) {
  dd_http__current.conn = rq->conn;
  memcpy(dd_http__current.request_id, rq->request_id, sizeof rq->request_id);
}

static dd_http__req *req_new(dd_http_server *s, struct MHD_Connection *c, const char *method,
                         const char *url) {
  dd_http__req *rq = calloc(1, sizeof *rq);
  if (!rq) return NULL;
  rq->srv = s;
  rq->conn = c;
  rq->method = method;
  rq->url = url;
  dd_request_id(rq->request_id);
  size_t n = strlen(url);
  if (n > 1 && url[n - 1] == '/' && url[n - 2] != '/') { /* "/api/v1/catalogs/" is "/api/v1/catalogs" */
    if (!(rq->url_own = strndup(url, n - 1))) {
      free(rq);
      return NULL;
    }
    rq->url = rq->url_own;
  }
  pthread_mutex_lock(&s->mu);
  s->in_flight++;
  pthread_mutex_unlock(&s->mu);
  return rq;
}

static void req_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                          enum MHD_RequestTerminationCode toe) {
  (void)toe;
  dd_http_server *s = cls;
  dd_http__req *rq = *con_cls;
  dd_http__conn_phase(s, c, DD_HTTP__PH_HEAD); /* the next request's headers are due */
  if (!rq) return;
  dd_http__stream_request_done(rq);
  rg_release(&rq->admit);
  free(rq->body);
  free(rq->url_own);
  free(rq);
  *con_cls = NULL;
  pthread_mutex_lock(&s->mu);
  if (--s->in_flight == 0) pthread_cond_broadcast(&s->idle);
  pthread_mutex_unlock(&s->mu);
}

/* First call: a request on a draining server, ambiguous framing, or a declared body over
 * the limit is refused before the body is read. Answering now makes MHD close the
 * connection after the reply, so nothing after the request is parsed. */
static enum MHD_Result first_call(dd_http__req *rq, const char *version) {
  int status = 0;
  if (atomic_load(&rq->srv->draining)) {
    rq->answered = 1;
    dd_http__conn_phase(rq->srv, rq->conn, DD_HTTP__PH_BUSY);
    return dd_http__refuse_close(rq->conn, DD_EIO, 503, "server shutting down");
  }
  if (dd_http__framing_check(rq->conn, rq->method, version, &status) != 0) {
    rq->answered = 1;
    dd_http__conn_phase(rq->srv, rq->conn, DD_HTTP__PH_BUSY);
    return dd_http__refuse_close(rq->conn, status == 501 ? DD_EUNSUPPORTED : DD_EINVAL, status, dd_err_msg());
  }
  dd_http__conn_phase(rq->srv, rq->conn, DD_HTTP__PH_BODY);
  const char *cl = MHD_lookup_connection_value(rq->conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
  if (cl && strtoull(cl, NULL, 10) > rq->srv->opts.max_body_bytes) {
    rq->answered = 1;
    return dd_http__queue_error(rq->conn, DD_ENOMEM, 413, "request body too large");
  }
  return MHD_YES;
}

static enum MHD_Result take_upload(dd_http__req *rq, const char *data, size_t n) {
  if (rq->too_large || rq->len + n > rq->srv->opts.max_body_bytes) {
    rq->too_large = 1;
    return MHD_YES;
  }
  return dd_http__append(&rq->body, &rq->len, &rq->cap, data, n) == 0 ? MHD_YES : MHD_NO;
}

static enum MHD_Result dispatch(dd_http__req *rq) {
  dd_http_server *s = rq->srv;
  if (rq->too_large) return dd_http__queue_error(rq->conn, DD_ENOMEM, 413, "request body too large");
  const dd_http__native *nat = find_native(s, rq->url);
  if (nat) return dd_http__dispatch_native(rq, nat);
  size_t bl = strlen(s->base_path);
  if (strncmp(rq->url, s->base_path, bl) != 0 || (rq->url[bl] != '/' && rq->url[bl] != '\0')) {
    dd_err_set(DD_ENOTFOUND, "no route for %.200s", rq->url);
    return dd_http__queue_error(rq->conn, DD_ENOTFOUND, 0, dd_err_msg());
  }
  return dd_http__dispatch_route(rq, rq->url[bl] ? rq->url + bl : "/");
}

/* The request is complete: serve it. A handler that held the connection's thread for
 * long must not make MHD take the connection for idle (dd_http__conn_touch). */
static enum MHD_Result serve(dd_http__req *rq) {
  rq->answered = 1;
  dd_http__conn_phase(rq->srv, rq->conn, DD_HTTP__PH_BUSY);
  int64_t t0 = dd_http__mono_ms();
  enum MHD_Result r = dispatch(rq);
  dd_http__conn_touch(rq->srv, rq->conn, t0);
  return r;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *c, const char *url,
                                      const char *method, const char *version,
                                      const char *upload, size_t *upload_size, void **con_cls) {
  dd_http__req *rq = *con_cls;
  if (!rq) {
    if (!(rq = req_new(cls, c, method, url))) return MHD_NO;
    *con_cls = rq;
    req_current(rq);
    if (dd_http__tls_check_client(rq->srv, c) != 0) { /* before anything else is looked at */
      rq->answered = 1;
      return dd_http__queue_error(c, DD_EUNAUTH, 401, dd_err_msg());
    }
    return first_call(rq, version);
  }
  req_current(rq);
  if (rq->answered) {
    if (rq->st) return dd_http__stream_answer(rq); /* resumed while waiting for a stream */
    *upload_size = 0;
    return MHD_YES;
  }
  if (*upload_size > 0) {
    enum MHD_Result r = take_upload(rq, upload, *upload_size);
    *upload_size = 0;
    return r;
  }
  return serve(rq);
}

/* ---- lifecycle ----------------------------------------------------------------------- */

int dd_http_server_new(dd_http_server **out, const dd_http_opts *opts, const dd_call_registry *reg) {
  *out = NULL;
  dd_http_server *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  pthread_mutex_init(&s->mu, NULL);
  pthread_condattr_t ca; /* timed waits run on CLOCK_MONOTONIC: a wall-clock step moves none */
  pthread_condattr_init(&ca);
  pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
  pthread_cond_init(&s->idle, &ca);
  pthread_mutex_init(&s->conns_mu, NULL);
  pthread_cond_init(&s->conns_cv, &ca);
  pthread_condattr_destroy(&ca);
  s->opts = *opts;
  s->reg = reg;
  s->port = -1;
  s->listen_fd = -1;
  s->quiesced_fd = MHD_INVALID_SOCKET;
  s->listen = strdup(opts->listen ? opts->listen : "127.0.0.1:8080");
  s->base_path = strdup(opts->base_path ? opts->base_path : "");
  int rc = (!s->listen || !s->base_path) ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
  if (rc == 0) {
    size_t bl = strlen(s->base_path);
    while (bl > 0 && s->base_path[bl - 1] == '/') s->base_path[--bl] = '\0';
    if (s->opts.max_body_bytes == 0) s->opts.max_body_bytes = 16u << 20;
  }
  if (rc == 0) rc = dd_call_memotab_new(&s->memo);
  if (rc == 0) rc = dd_http__tls_init(s, opts->tls);
  s->opts.tls = NULL; /* borrowed for _new only */
  if (rc != 0) {
    dd_http_server_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int dd_http_add_native(dd_http_server *s, const char *prefix, dd_http_native_fn fn, void *ctx) {
  if (s->mhd) return dd_err_set(DD_EINVAL, "dd_http_add_native after start");
  if (!prefix || prefix[0] != '/' || !fn) return dd_err_set(DD_EINVAL, "bad native prefix");
  dd_http__native *nn = realloc(s->natives, (s->n_natives + 1) * sizeof *nn);
  if (!nn) return dd_err_set(DD_ENOMEM, "out of memory");
  s->natives = nn;
  dd_http__native *n = &s->natives[s->n_natives];
  if (!(n->prefix = strdup(prefix))) return dd_err_set(DD_ENOMEM, "out of memory");
  n->len = strlen(prefix);
  n->fn = fn;
  n->ctx = ctx;
  s->n_natives++;
  return 0;
}

/* "host:port", "[v6]:port" or ":port" -> a socket address. */
static int resolve_listen(const char *listen, struct sockaddr_storage *ss, socklen_t *sl) {
  char host[256];
  const char *colon = strrchr(listen, ':');
  if (!colon || (size_t)(colon - listen) >= sizeof host)
    return dd_err_set(DD_EINVAL, "bad listen address \"%s\" (want host:port)", listen);
  size_t hl = (size_t)(colon - listen);
  memcpy(host, listen, hl);
  host[hl] = '\0';
  if (hl >= 2 && host[0] == '[' && host[hl - 1] == ']') {
    memmove(host, host + 1, hl - 2);
    host[hl - 2] = '\0';
  }
  struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE};
  struct addrinfo *res = NULL;
  if (getaddrinfo(host[0] ? host : NULL, colon + 1, &hints, &res) != 0 || !res)
    return dd_err_set(DD_EINVAL, "cannot resolve listen address \"%s\"", listen);
  memcpy(ss, res->ai_addr, res->ai_addrlen);
  *sl = res->ai_addrlen;
  freeaddrinfo(res);
  return 0;
}

int dd_http_server_bind(dd_http_server *s) {
  if (s->listen_fd >= 0) return 0;
  struct sockaddr_storage ss;
  socklen_t sl = 0;
  int rc = resolve_listen(s->listen, &ss, &sl);
  if (rc != 0) return rc;
  int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
  struct sockaddr_storage bound;
  socklen_t bl = sizeof bound;
  if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) != 0 ||
      bind(fd, (struct sockaddr *)&ss, sl) != 0 || listen(fd, SOMAXCONN) != 0 ||
      getsockname(fd, (struct sockaddr *)&bound, &bl) != 0) {
    if (fd >= 0) close(fd);
    return dd_err_set(DD_EIO, "cannot listen on %s", s->listen);
  }
  s->listen_fd = fd;
  s->listen_v6 = ss.ss_family == AF_INET6;
  s->port = ntohs(bound.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&bound)->sin6_port
                                              : ((struct sockaddr_in *)&bound)->sin_port);
  return 0;
}

int dd_http_server_start(dd_http_server *s) {
  int rc = dd_http_server_bind(s);
  if (rc != 0) return rc;
  unsigned flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_ITC;
  if (s->opts.threads > 0) flags |= MHD_ALLOW_SUSPEND_RESUME;
  if (s->listen_v6) flags |= MHD_USE_IPv6;
  flags |= s->opts.threads > 0 ? MHD_USE_EPOLL : (MHD_USE_THREAD_PER_CONNECTION | MHD_USE_POLL);
  unsigned pool = s->opts.threads > 0 ? (unsigned)s->opts.threads : 0;
  struct MHD_OptionItem tls[3];
  if ((rc = dd_http__tls_options(s, tls, &flags)) != 0) return rc;
  struct MHD_OptionItem limits[4];
  dd_http__conn_options(s, limits);
  s->mhd = MHD_start_daemon(flags, 0, dd_http__conn_accept, s, access_handler, s,
                            MHD_OPTION_ARRAY, tls,
                            MHD_OPTION_LISTEN_SOCKET, s->listen_fd,
                            MHD_OPTION_NOTIFY_COMPLETED, req_completed, s,
                            MHD_OPTION_NOTIFY_CONNECTION, dd_http__conn_notify, s,
                            MHD_OPTION_UNESCAPE_CALLBACK, http_no_unescape, NULL,
                            MHD_OPTION_ARRAY, limits,
                            pool ? MHD_OPTION_THREAD_POOL_SIZE : MHD_OPTION_END, pool,
                            MHD_OPTION_END);
  if (!s->mhd) {
    dd_http__tls_stop(s);
    return dd_err_set(DD_EIO, "cannot serve on %s", s->listen);
  }
  s->listen_fd = -1; /* MHD's now (closed by MHD_stop_daemon, or returned by quiesce) */
  /* the epoll pool runs unary handlers on 4 workers per pool thread (http_stream.c) */
  if ((rc = dd_call_runner_new(&s->runner, 4 * (size_t)pool)) != 0 || (rc = dd_http__conns_start(s)) != 0) {
    MHD_stop_daemon(s->mhd);
    dd_http__tls_stop(s);
    s->mhd = NULL;
    dd_call_runner_free(s->runner);
    s->runner = NULL;
    return rc;
  }
  return 0;
}

int dd_http_server_port(const dd_http_server *s) { return s->port; }

/* Waits (s->mu held) until *count is 0 or the deadline passes (deadline NULL: forever). */
static void wait_zero(dd_http_server *s, const int *count, const struct timespec *deadline) {
  while (*count > 0) {
    if (!deadline) pthread_cond_wait(&s->idle, &s->mu);
    else if (pthread_cond_timedwait(&s->idle, &s->mu, deadline) != 0) break;
  }
}

void dd_http_server_drain(dd_http_server *s) {
  if (!s || !s->mhd || s->drained) return;
  s->drained = 1;
  s->quiesced_fd = MHD_quiesce_daemon(s->mhd);
  /* Closing the descriptor must wait for stop (MHD's threads may still hold it), but on
   * Linux shutdown() makes it stop listening now: new clients are refused at once
   * instead of waiting in the backlog until the grace ends. */
  if (s->quiesced_fd != MHD_INVALID_SOCKET) (void)shutdown(s->quiesced_fd, SHUT_RDWR);
  clock_gettime(CLOCK_MONOTONIC, &s->drain_until);
  int grace = s->opts.shutdown_grace_ms > 0 ? s->opts.shutdown_grace_ms : 0;
  s->drain_until.tv_sec += grace / 1000;
  s->drain_until.tv_nsec += (long)(grace % 1000) * 1000000L;
  if (s->drain_until.tv_nsec >= 1000000000L) {
    s->drain_until.tv_sec++;
    s->drain_until.tv_nsec -= 1000000000L;
  }
  atomic_store(&s->draining, 1);
  dd_http__conns_close_idle(s);
}

void dd_http_server_stop(dd_http_server *s) {
  if (!s || !s->mhd) return;
  dd_http_server_drain(s);
  /* Requests being served finish (bounded by the grace counted from the drain, so a
   * stuck handler or a client that stopped reading cannot hang shutdown); then streams
   * still running are cancelled and their connections resumed, since MHD must not be
   * stopped with suspended connections; MHD_stop_daemon closes what is left; last,
   * streaming handler threads are waited for, as they use the application object the
   * caller frees next. */
  pthread_mutex_lock(&s->mu);
  wait_zero(s, &s->in_flight, &s->drain_until);
  pthread_mutex_unlock(&s->mu);
  dd_call_runner_cancel_all(s->runner);
  MHD_stop_daemon(s->mhd);
  s->mhd = NULL;
  dd_http__tls_stop(s);
  if (s->quiesced_fd != MHD_INVALID_SOCKET) close(s->quiesced_fd);
  s->quiesced_fd = MHD_INVALID_SOCKET;
  dd_http__conns_stop(s);
  dd_call_runner_free(s->runner); /* waits for every handler */
  s->runner = NULL;
}

void dd_http_server_free(dd_http_server *s) {
  if (!s) return;
  dd_http_server_stop(s);
  if (s->listen_fd >= 0) close(s->listen_fd); /* bound, never started */
  for (size_t i = 0; i < s->n_natives; i++) free(s->natives[i].prefix);
  free(s->natives);
  free(s->listen);
  free(s->base_path);
  dd_http__tls_free(s);
  dd_call_memotab_free(s->memo);
  pthread_mutex_destroy(&s->mu);
  pthread_cond_destroy(&s->idle);
  pthread_mutex_destroy(&s->conns_mu);
  pthread_cond_destroy(&s->conns_cv);
  free(s);
}
