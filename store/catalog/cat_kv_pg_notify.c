/* cat_kv_pg_notify.c: pushed invalidation of the PostgreSQL read cache (--catalog-cache
 * notify, docs/scaling.md).
 *
 * Every write txn ends with NOTIFY deltad_gen, '<its generation>' before COMMIT when the
 * database has NOTIFY (PostgreSQL delivers it at commit, to every listening session). With
 * push on, one thread per replica keeps its own connection (not a pooled one) listening:
 * LISTEN deltad_gen, then SELECT gen (so nothing committed in between is missed), then
 * each notification raises st->known. A read txn then begins at st->known with no round
 * trip at all, and the read cache answers it; its first miss still takes a snapshot
 * (cat_kv_pg.c), whose generation is checked against what it read.
 *
 * What a replica serves is then as old as the notification's delivery: a commit of
 * another replica is seen here once its notification arrived (a fraction of a millisecond
 * on one host; docs/scaling.md has the measured figure), a commit of this replica at once
 * (pg__notify_committed). The listener asks SELECT gen every second: when an answer is
 * late by more than PG__LATE_MS, or the connection fails, it is not live, and read txns go
 * back to one round trip each until it has reconnected and caught up. So a replica cut
 * off from the database serves nothing older than about PG__LATE_MS + 1 s.
 * Databases without LISTEN/NOTIFY (CockroachDB) keep one round trip per read txn. */
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "store/catalog/cat_kv_pg.h"

#define PG__PING_MS 1000
#define PG__LATE_MS 1000

static int64_t pg__ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void pg__raise(pg__state *st, uint64_t gen) {
  uint64_t was = atomic_load(&st->known);
  while (gen > was && !atomic_compare_exchange_weak(&st->known, &was, gen)) {
  }
}

void pg__notify_committed(pg__state *st, uint64_t gen) { pg__raise(st, gen); }

uint64_t pg__schema_tag(const pg__state *st) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (const char *p = st->schema ? st->schema : ""; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  return h;
}

bool pg__notify_gen(pg__state *st, uint64_t *gen) {
  if (!st->push || !atomic_load(&st->live)) return false;
  *gen = atomic_load(&st->known);
  return true;
}

/* LISTEN, then the generation now: from here on every commit is heard of. */
static int pg__listen(pg__state *st, PGconn *c) {
  int rc = pg__exec(c, "LISTEN deltad_gen", PGRES_COMMAND_OK, "listen");
  PGresult *r = rc ? NULL : PQexecPrepared(c, "dd_gen", 0, NULL, NULL, NULL, 0);
  if (!rc && (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1))
    rc = pg__err(c, r, "listen: read the generation");
  else if (!rc)
    pg__raise(st, strtoull(PQgetvalue(r, 0, 0), NULL, 10));
  PQclear(r);
  return rc;
}

/* Reads what arrived: notifications and the answer to a ping. -1 when the connection
 * failed; else 1 when the ping was answered. */
static int pg__drain(pg__state *st, PGconn *c) {
  if (!PQconsumeInput(c)) return -1;
  PGnotify *n;
  while ((n = PQnotifies(c)) != NULL) {
    char *end = NULL;
    uint64_t gen = strtoull(n->extra, &end, 10);
    /* another schema's commit (same database, same channel): not this catalog's */
    if (!(end && *end == ' ' && strtoull(end + 1, NULL, 16) != pg__schema_tag(st)))
      pg__raise(st, gen);
    PQfreemem(n);
  }
  int answered = 0;
  while (!PQisBusy(c)) {
    PGresult *r = PQgetResult(c);
    if (!r) break;
    if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1)
      pg__raise(st, strtoull(PQgetvalue(r, 0, 0), NULL, 10)), answered = 1;
    else if (PQresultStatus(r) != PGRES_TUPLES_OK)
      answered = -1;
    PQclear(r);
  }
  return answered;
}

/* One connection's life: listen, then wait for notifications, pinging every second. */
static void pg__listen_on(pg__state *st, PGconn *c) {
  int64_t sent = 0, last_ok = pg__ms();
  atomic_store(&st->live, true);
  while (!atomic_load(&st->stop)) {
    int64_t now = pg__ms();
    if (!sent && now - last_ok >= PG__PING_MS) {
      if (!PQsendQueryPrepared(c, "dd_gen", 0, NULL, NULL, NULL, 0)) break;
      sent = now;
    }
    if (sent && now - sent > PG__LATE_MS) atomic_store(&st->live, false); /* too late */
    struct pollfd p = {.fd = PQsocket(c), .events = POLLIN};
    if (p.fd < 0 || poll(&p, 1, 200) < 0) break;
    int got = pg__drain(st, c);
    if (got < 0) break;
    if (got > 0) {
      sent = 0;
      last_ok = pg__ms();
      atomic_store(&st->live, true);
    }
  }
  atomic_store(&st->live, false);
}

static void *pg__listener(void *arg) {
  pg__state *st = arg;
  while (!atomic_load(&st->stop)) {
    PGconn *c = NULL;
    if (pg__connect(st, &c, false) == 0 && pg__listen(st, c) == 0) pg__listen_on(st, c);
    if (c) PQfinish(c);
    for (int i = 0; i < 5 && !atomic_load(&st->stop); i++) usleep(200000); /* then again */
  }
  return NULL;
}

int pg__notify_start(pg__state *st) {
  PGconn *c = NULL;
  int rc = pg__connect(st, &c, false);
  if (rc) return rc;
  /* NOTIFY outside a transaction is delivered at once to nobody: a harmless probe */
  PGresult *r = PQexec(c, "NOTIFY deltad_gen, '0'");
  st->can_notify = PQresultStatus(r) == PGRES_COMMAND_OK;
  PQclear(r);
  PQfinish(c);
  if (!st->can_notify || !st->push) return 0;
  if (pthread_create(&st->listener, NULL, pg__listener, st) != 0)
    return dd_err_set(DD_EINTERNAL, "catalog database: cannot start the listener thread");
  st->listening = true;
  return 0;
}

void pg__notify_stop(pg__state *st) {
  if (!st->listening) return;
  atomic_store(&st->stop, true);
  pthread_join(st->listener, NULL);
  st->listening = false;
}
