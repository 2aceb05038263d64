/* cat_kv_pg_conn.c: the PostgreSQL backend's connections: the pool (a fixed number of
 * slots per process; a write transaction borrows one for its lifetime, a read transaction
 * for its generation read and from its first cache miss on: cat_kv_pg.c), connecting with
 * timeouts, the prepared statements, the schema migration, and libpq error translation.
 *
 * Connections are made lazily by the call that borrows an empty or broken slot, so after a
 * database restart the first call on each slot reconnects; a call never waits longer than
 * connect_timeout (5 s unless the URL says otherwise) for a connection, statement_timeout
 * (15 s) for a statement, or CAT__PG_WAIT_S for a free slot. TCP keepalives and
 * tcp_user_timeout bound a silent network. Options in the URL take precedence.
 *
 * SQL (kept to what CockroachDB and YugabyteDB accept too: no advisory locks, no PL/pgSQL):
 *   deltad_schema_version(id INT PRIMARY KEY, version INT)   one row (id 1)
 *   deltad_kv(db SMALLINT, k BYTEA, v BYTEA, PRIMARY KEY(db, k))
 *   deltad_lock(id INT PRIMARY KEY, gen BIGINT)              one row (id 1): every write
 *                                                            txn begins with UPDATE ...
 *                                                            SET gen = gen + 1 (row lock:
 *                                                            writers take turns; gen: the
 *                                                            read cache, cat_kv_pg_cache.c)
 *                                                            and ends with NOTIFY deltad_gen
 *                                                            where the database has it
 *                                                            (cat_kv_pg_notify.c) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "store/catalog/cat_kv_pg.h"

#define CAT__PG_SCHEMA_VERSION 1
#define CAT__PG_WAIT_S 10

static const struct {
  const char *name, *sql;
  int nparams;
} pg__stmts[] = {
    {"dd_gen", "SELECT gen FROM deltad_lock WHERE id = 1", 0},
    {"dd_get", "SELECT v FROM deltad_kv WHERE db = $1 AND k = $2", 2},
    {"dd_put",
     "INSERT INTO deltad_kv (db, k, v) VALUES ($1, $2, $3) "
     "ON CONFLICT (db, k) DO UPDATE SET v = excluded.v",
     3},
    {"dd_putnx",
     "INSERT INTO deltad_kv (db, k, v) VALUES ($1, $2, $3) ON CONFLICT (db, k) DO NOTHING", 3},
    {"dd_del", "DELETE FROM deltad_kv WHERE db = $1 AND k = $2", 2},
    {"dd_seek",
     "SELECT k, v FROM deltad_kv WHERE db = $1 AND k >= $2 ORDER BY k LIMIT $3", 3},
    {"dd_after",
     "SELECT k, v FROM deltad_kv WHERE db = $1 AND k > $2 ORDER BY k LIMIT $3", 3},
};

/* ---- errors --------------------------------------------------------------------------------- */

int pg__err(PGconn *c, const PGresult *res, const char *what) {
  const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
  const char *msg = res && *PQresultErrorMessage(res) ? PQresultErrorMessage(res)
                                                      : c ? PQerrorMessage(c) : "no connection";
  int len = (int)strcspn(msg, "\n");
  bool lost = !c || PQstatus(c) != CONNECTION_OK || !state ||
              !strncmp(state, "08", 2) ||                       /* connection exception */
              !strncmp(state, "57P", 3) ||                      /* shutdown, cannot connect */
              !strncmp(state, "53", 2);                         /* insufficient resources */
  if (lost) return dd_err_set(DD_EIO, "catalog database unavailable: %s: %.*s", what, len, msg);
  if (!strcmp(state, "57014"))
    return dd_err_set(DD_EIO, "catalog database unavailable: %s: statement timed out", what);
  if (!strcmp(state, "40001") || !strcmp(state, "40P01"))
    return dd_err_set(DD_ECONFLICT, "catalog database: %s: %.*s (retry)", what, len, msg);
  return dd_err_set(DD_EINTERNAL, "catalog database: %s: %.*s (SQLSTATE %s)", what, len, msg,
                    state);
}

int pg__exec(PGconn *c, const char *sql, ExecStatusType want, const char *what) {
  PGresult *r = PQexec(c, sql);
  int rc = PQresultStatus(r) == want ? 0 : pg__err(c, r, what);
  PQclear(r);
  return rc;
}

/* ---- connecting ---------------------------------------------------------------------------- */

static int pg__prepare(PGconn *c) {
  static const Oid types[3] = {21 /* int2 */, 17 /* bytea */, 17};
  static const Oid seek_types[3] = {21, 17, 23 /* int4 */};
  for (size_t i = 0; i < sizeof pg__stmts / sizeof pg__stmts[0]; i++) {
    const Oid *t = pg__stmts[i].nparams == 3 && strstr(pg__stmts[i].sql, "LIMIT") ? seek_types : types;
    PGresult *r = PQprepare(c, pg__stmts[i].name, pg__stmts[i].sql, pg__stmts[i].nparams, t);
    int rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : pg__err(c, r, "prepare");
    PQclear(r);
    if (rc) return rc;
  }
  return 0;
}

static int pg__search_path(PGconn *c, const char *schema, bool create) {
  if (!schema) return 0;
  char *id = PQescapeIdentifier(c, schema, strlen(schema));
  if (!id) return pg__err(c, NULL, "schema name");
  char sql[600];
  int rc = 0;
  if (create) {
    snprintf(sql, sizeof sql, "CREATE SCHEMA IF NOT EXISTS %s", id);
    rc = pg__exec(c, sql, PGRES_COMMAND_OK, "create schema");
  }
  snprintf(sql, sizeof sql, "SET search_path TO %s", id);
  if (!rc) rc = pg__exec(c, sql, PGRES_COMMAND_OK, "set search_path");
  PQfreemem(id);
  return rc;
}

/* A new connection with the timeouts above, search_path set, statements prepared. */
int pg__connect(pg__state *st, PGconn **out, bool create_schema) {
  static const char *const keys[] = {"connect_timeout", "keepalives",       "keepalives_idle",
                                     "keepalives_interval", "keepalives_count",
                                     "tcp_user_timeout", "options", "application_name",
                                     "dbname", NULL};
  const char *vals[] = {"5", "1", "10", "3", "3", "15000", "-c statement_timeout=15000",
                        "deltad", st->url, NULL};
  PGconn *c = PQconnectdbParams(keys, vals, 1);
  *out = NULL;
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = PQstatus(c) == CONNECTION_OK ? 0 : pg__err(c, NULL, "connect");
  if (!rc) rc = pg__search_path(c, st->schema, create_schema);
  if (!rc && st->migrated) rc = pg__prepare(c);
  if (rc) {
    PQfinish(c);
    return rc;
  }
  *out = c;
  return 0;
}

/* ---- the pool --------------------------------------------------------------------------- */

int pg__borrow(pg__state *st, pg__slot **out) {
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += CAT__PG_WAIT_S;
  *out = NULL;
  pthread_mutex_lock(&st->mu);
  while (st->n_free == 0) {
    if (pthread_cond_timedwait(&st->cv, &st->mu, &until) == ETIMEDOUT && st->n_free == 0) {
      pthread_mutex_unlock(&st->mu);
      return dd_err_set(DD_EIO, "catalog database unavailable: all %d connections busy for %d s",
                        st->n_slots, CAT__PG_WAIT_S);
    }
  }
  pg__slot *slot = st->free[st->free_head];
  st->free_head = (st->free_head + 1) % st->n_slots;
  st->n_free--;
  pthread_mutex_unlock(&st->mu);
  atomic_fetch_add(&st->borrows, 1);
  int rc = 0;
  if (slot->c && slot->pending) { /* the last user's ROLLBACK: its answer is here by now */
    PGresult *r;
    bool failed = false;
    while ((r = PQgetResult(slot->c)) != NULL) {
      failed |= PQresultStatus(r) != PGRES_COMMAND_OK;
      PQclear(r);
    }
    if (failed) { /* the connection's state is unknown: start afresh */
      PQfinish(slot->c);
      slot->c = NULL;
    }
  }
  slot->pending = false;
  if (slot->c && PQstatus(slot->c) != CONNECTION_OK) {
    PQfinish(slot->c);
    slot->c = NULL;
  }
  if (!slot->c) rc = pg__connect(st, &slot->c, false);
  if (rc) {
    pg__release(st, slot, false);
    return rc;
  }
  *out = slot;
  return 0;
}

void pg__release(pg__state *st, pg__slot *slot, bool broken) {
  if (broken && slot->c) {
    PQfinish(slot->c);
    slot->c = NULL;
  }
  pthread_mutex_lock(&st->mu);
  st->free[(st->free_head + st->n_free++) % st->n_slots] = slot;
  pthread_cond_signal(&st->cv);
  pthread_mutex_unlock(&st->mu);
}

/* ---- the schema ------------------------------------------------------------------------------ */

static int pg__migrate_txn(PGconn *c) {
  int rc = pg__exec(c, "BEGIN", PGRES_COMMAND_OK, "begin migration");
  if (!rc) rc = pg__exec(c, "CREATE TABLE IF NOT EXISTS deltad_schema_version "
                            "(id INT PRIMARY KEY, version INT NOT NULL)",
                         PGRES_COMMAND_OK, "create deltad_schema_version");
  if (!rc) rc = pg__exec(c, "INSERT INTO deltad_schema_version (id, version) VALUES (1, 0) "
                            "ON CONFLICT (id) DO NOTHING",
                         PGRES_COMMAND_OK, "schema version row");
  PGresult *r = rc ? NULL : PQexec(c, "SELECT version FROM deltad_schema_version WHERE id = 1 FOR UPDATE");
  int version = -1;
  if (!rc && (PQresultStatus(r) != PGRES_TUPLES_OK || PQntuples(r) != 1))
    rc = pg__err(c, r, "read schema version");
  else if (!rc)
    version = atoi(PQgetvalue(r, 0, 0));
  PQclear(r);
  if (!rc && version > CAT__PG_SCHEMA_VERSION)
    rc = dd_err_set(DD_ECORRUPT, "catalog database: schema version %d is newer than this "
                    "deltad's (%d): upgrade deltad", version, CAT__PG_SCHEMA_VERSION);
  if (!rc && version < 1) {
    rc = pg__exec(c, "CREATE TABLE deltad_kv (db SMALLINT NOT NULL, k BYTEA NOT NULL, "
                     "v BYTEA NOT NULL, PRIMARY KEY (db, k))",
                  PGRES_COMMAND_OK, "create deltad_kv");
    if (!rc) rc = pg__exec(c, "CREATE TABLE deltad_lock (id INT PRIMARY KEY, "
                              "gen BIGINT NOT NULL)",
                           PGRES_COMMAND_OK, "create deltad_lock");
    if (!rc) rc = pg__exec(c, "INSERT INTO deltad_lock (id, gen) VALUES (1, 0)",
                           PGRES_COMMAND_OK, "create the lock row");
    if (!rc) rc = pg__exec(c, "UPDATE deltad_schema_version SET version = 1 WHERE id = 1",
                           PGRES_COMMAND_OK, "set schema version");
  }
  if (!rc) return pg__exec(c, "COMMIT", PGRES_COMMAND_OK, "commit migration");
  PQclear(PQexec(c, "ROLLBACK"));
  return rc;
}

/* Two replicas starting at once may collide on CREATE TABLE IF NOT EXISTS (a unique
 * violation in the system catalog): the loser retries and then finds the tables. */
static int pg__migrate(pg__state *st) {
  int rc = 0;
  for (int attempt = 0; attempt < 5; attempt++) {
    PGconn *c = NULL;
    rc = pg__connect(st, &c, true);
    if (rc) return rc;
    rc = pg__migrate_txn(c);
    PQfinish(c);
    if (rc != DD_EINTERNAL && rc != DD_ECONFLICT) return rc;
    usleep(100000u * (unsigned)(attempt + 1));
  }
  return rc;
}

int pg__state_open(pg__state **out, const char *url, int pool_size, const char *schema,
                   bool push) {
  int n = pool_size > 0 ? pool_size : 8;
  pg__state *st = calloc(1, sizeof *st + (size_t)n * (sizeof(pg__slot) + sizeof(pg__slot *)));
  *out = NULL;
  if (!st) return dd_err_set(DD_ENOMEM, "out of memory");
  st->slots = (pg__slot *)(st + 1);
  st->free = (pg__slot **)(st->slots + n);
  st->n_slots = st->n_free = n;
  for (int i = 0; i < n; i++) st->free[i] = &st->slots[i];
  pthread_mutex_init(&st->mu, NULL);
  pthread_cond_init(&st->cv, NULL);
  if (pg__cache_init(&st->cache) != 0) {
    free(st);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  st->url = strdup(url);
  st->schema = schema ? strdup(schema) : NULL;
  int rc = !st->url || (schema && !st->schema) ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
  if (!rc) rc = pg__migrate(st);
  st->migrated = rc == 0;
  st->push = push;
  if (!rc) rc = pg__notify_start(st);
  if (rc) {
    pg__state_close(st);
    return rc;
  }
  *out = st;
  return 0;
}

void pg__state_close(pg__state *st) {
  if (!st) return;
  pg__notify_stop(st);
  for (int i = 0; i < st->n_slots; i++)
    if (st->slots[i].c) PQfinish(st->slots[i].c);
  pthread_mutex_destroy(&st->mu);
  pthread_cond_destroy(&st->cv);
  pg__cache_destroy(&st->cache);
  free(st->url);
  free(st->schema);
  free(st);
}
