/* http_conn.c: the REST listener's connections: the caps on how many are open (in all
 * and per client address), the deadlines MHD's inactivity timeout cannot give, and
 * closing idle ones when the server drains.
 *
 * MHD's connection timeout (opts.idle_timeout_s) closes a connection on which no byte
 * moved for that long; a client trickling one header byte every few seconds defeats it.
 * So every connection is also tracked here (MHD_OPTION_NOTIFY_CONNECTION) with the phase
 * it is in and since when:
 *   HEAD  waiting for a request line and headers, since the accept or the end of the
 *         previous reply: closed after opts.header_timeout_s;
 *   BODY  headers read, the body being received: closed after opts.body_timeout_s;
 *   BUSY  the request is being served or its reply sent: only the idle timeout applies,
 *         so a reply to a slow client that keeps reading is never cut.
 * The access handler moves a connection HEAD -> BODY -> BUSY and the completion callback
 * back to HEAD. A watchdog thread looks at the list a few times a second and shuts the
 * socket of a late connection down (shutdown(2), which makes MHD's next read see the end
 * and close it on its own thread). MHD reports a connection closed before it closes the
 * socket, and that report takes conns_mu, so shutdown never touches a reused descriptor.
 *
 * The total cap is enforced by the accept policy (refused at accept: closed at once);
 * MHD's own limit is set above it, since at its limit MHD stops accepting and new
 * clients would wait in the backlog instead of being refused. The per-address cap is
 * MHD's (also refused at accept). Lock order: srv->mu, then conns_mu. */
#include <errno.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <time.h>

#include "common/err.h"
#include "server/http/http_int.h"

#define CONN_TICK_MS 200

struct dd_http__conn {
  int fd;
  dd_http__phase phase;
  int64_t since_ms; /* monotonic */
  int killed;
  dd_http__conn *prev, *next;
};

int64_t dd_http__mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* With conns_mu held. */
static void conn_kill(dd_http__conn *k) {
  if (k->killed) return;
  k->killed = 1;
  (void)shutdown(k->fd, SHUT_RDWR);
}

void dd_http__conn_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                       enum MHD_ConnectionNotificationCode code) {
  dd_http_server *s = cls;
  dd_http__conn *k = *socket_context;
  if (code == MHD_CONNECTION_NOTIFY_STARTED) {
    const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
    if (!ci || !(k = calloc(1, sizeof *k))) return; /* untracked: only MHD's timeout applies */
    k->fd = ci->connect_fd;
    k->phase = DD_HTTP__PH_HEAD;
    k->since_ms = dd_http__mono_ms();
    pthread_mutex_lock(&s->conns_mu);
    k->next = s->conns;
    if (s->conns) s->conns->prev = k;
    s->conns = k;
    s->n_conns++;
    if (s->draining) conn_kill(k);
    pthread_mutex_unlock(&s->conns_mu);
    *socket_context = k;
    return;
  }
  if (!k) return;
  pthread_mutex_lock(&s->conns_mu);
  if (k->prev) k->prev->next = k->next;
  else s->conns = k->next;
  if (k->next) k->next->prev = k->prev;
  s->n_conns--;
  pthread_mutex_unlock(&s->conns_mu);
  free(k);
  *socket_context = NULL;
}

enum MHD_Result dd_http__conn_accept(void *cls, const struct sockaddr *addr, socklen_t addrlen) {
  (void)addr;
  (void)addrlen;
  dd_http_server *s = cls;
  if (s->opts.max_connections == 0) return MHD_YES;
  pthread_mutex_lock(&s->conns_mu);
  int full = s->n_conns >= (long)s->opts.max_connections;
  pthread_mutex_unlock(&s->conns_mu);
  return full ? MHD_NO : MHD_YES;
}

void dd_http__conn_phase(dd_http_server *s, struct MHD_Connection *c, dd_http__phase phase) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
  dd_http__conn *k = ci ? ci->socket_context : NULL;
  if (!k) return;
  pthread_mutex_lock(&s->conns_mu);
  k->phase = phase;
  k->since_ms = dd_http__mono_ms();
  pthread_mutex_unlock(&s->conns_mu);
}

/* A handler or a stream callback may block on the thread serving the connection (its own
 * thread, or in the epoll pool a native handler); MHD counts that time as inactivity and
 * would close the connection as soon as the callback returns. Re-arming the timeout
 * restarts the count (MHD sets the last activity when a timeout is set on a connection
 * that had none). Called on the connection's thread, from inside MHD's callbacks. */
void dd_http__conn_touch(dd_http_server *s, struct MHD_Connection *c, int64_t since_ms) {
  if (s->opts.idle_timeout_s <= 0 || !c) return;
  if (dd_http__mono_ms() - since_ms < 1000) return; /* too short to matter; spare MHD's lock */
  MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, 0u);
  MHD_set_connection_option(c, MHD_CONNECTION_OPTION_TIMEOUT, (unsigned)s->opts.idle_timeout_s);
}

void dd_http__conns_close_idle(dd_http_server *s) {
  pthread_mutex_lock(&s->conns_mu);
  s->draining = 1;
  for (dd_http__conn *k = s->conns; k; k = k->next)
    if (k->phase == DD_HTTP__PH_HEAD) conn_kill(k);
  pthread_mutex_unlock(&s->conns_mu);
}

size_t dd_http__conn_options(const dd_http_server *s, struct MHD_OptionItem *o) {
  size_t n = 0;
  unsigned cap = s->opts.max_connections;
  o[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_TIMEOUT,
                                   s->opts.idle_timeout_s > 0 ? s->opts.idle_timeout_s : 0, NULL};
  if (cap > 0) /* MHD's own limit stays above ours (see the top of the file) */
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_CONNECTION_LIMIT, (intptr_t)cap + cap / 4 + 16, NULL};
  if (s->opts.max_connections_per_ip > 0)
    o[n++] = (struct MHD_OptionItem){MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                                     (intptr_t)s->opts.max_connections_per_ip, NULL};
  o[n++] = (struct MHD_OptionItem){MHD_OPTION_END, 0, NULL};
  return n;
}

/* ---- the watchdog -------------------------------------------------------------------- */

static void conns_sweep(dd_http_server *s, int64_t now) {
  int64_t head = (int64_t)s->opts.header_timeout_s * 1000, body = (int64_t)s->opts.body_timeout_s * 1000;
  for (dd_http__conn *k = s->conns; k; k = k->next) {
    int64_t age = now - k->since_ms;
    if (k->phase == DD_HTTP__PH_HEAD && head > 0 && age > head) conn_kill(k);
    else if (k->phase == DD_HTTP__PH_BODY && body > 0 && age > body) conn_kill(k);
  }
}

static void *watchdog_main(void *arg) {
  dd_http_server *s = arg;
  pthread_mutex_lock(&s->conns_mu);
  while (!s->watchdog_stop) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += CONN_TICK_MS * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    int rc = pthread_cond_timedwait(&s->conns_cv, &s->conns_mu, &until);
    if (rc == ETIMEDOUT) conns_sweep(s, dd_http__mono_ms());
  }
  pthread_mutex_unlock(&s->conns_mu);
  return NULL;
}

int dd_http__conns_start(dd_http_server *s) {
  if (s->opts.header_timeout_s <= 0 && s->opts.body_timeout_s <= 0) return 0;
  if (pthread_create(&s->watchdog, NULL, watchdog_main, s) != 0)
    return dd_err_set(DD_EINTERNAL, "cannot start the HTTP connection watchdog");
  s->watchdog_started = 1;
  return 0;
}

void dd_http__conns_stop(dd_http_server *s) {
  if (!s->watchdog_started) return;
  pthread_mutex_lock(&s->conns_mu);
  s->watchdog_stop = 1;
  pthread_cond_broadcast(&s->conns_cv);
  pthread_mutex_unlock(&s->conns_mu);
  pthread_join(s->watchdog, NULL);
  s->watchdog_started = 0;
  s->watchdog_stop = 0;
}
