/* cat_kv_pg.c: the PostgreSQL backend of the catalog's key-value interface (cat_kv.h):
 * each sub-database is the rows of deltad_kv with its db number, so keys, values and their
 * order (bytea compares bytewise) are LMDB's. A transaction holds one pooled connection
 * (cat_kv_pg_conn.c) from begin to commit or abort:
 *   read:  BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY   (one snapshot, like LMDB's)
 *   write: BEGIN (READ COMMITTED), then SELECT ... FOR UPDATE of the one deltad_lock row:
 *          writers of every replica take turns, and each sees all that committed before it
 *          got the lock, so a write transaction behaves as LMDB's single writer.
 * Cursors fetch rows in batches (WHERE k >= / > $key ORDER BY k LIMIT n). */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_kv_pg.h"

#define PG__SEEK_BATCH 16   /* first batch after a seek (walks re-seek often) */
#define PG__NEXT_BATCH 256

typedef struct pg__txn {
  cat_txn base;
  pg__slot *slot;
  PGresult *last; /* holds the value of the last get */
  bool broken;    /* the connection failed: drop it on release */
} pg__txn;

typedef struct pg__cur {
  cat__cur base;
  PGresult *res;
  int row, n, limit;
} pg__cur;

static pg__state *pg__st(cat_store *s) { return s->be_state; }
static PGconn *pg__c(cat_txn *t) { return ((pg__txn *)t)->slot->c; }

/* Runs a prepared statement with db, key (and value or limit) as parameters; binary
 * results. Returns the result (the caller clears it) or NULL with the error set in *rc. */
static PGresult *pg__run(cat_txn *t, const char *stmt, int db, cat__bytes k, const void *v,
                         size_t vn, int limit, ExecStatusType want, int *rc) {
  char dbs[8], lims[16];
  snprintf(dbs, sizeof dbs, "%d", db);
  snprintf(lims, sizeof lims, "%d", limit);
  const char *vals[3] = {dbs, k.n ? k.p : "", v ? v : lims};
  int lens[3] = {0, (int)k.n, v ? (int)vn : 0};
  int fmts[3] = {0, 1, v ? 1 : 0};
  int np = v || limit ? 3 : 2;
  PGresult *r = PQexecPrepared(pg__c(t), stmt, np, vals, lens, fmts, 1);
  if (PQresultStatus(r) == want) return r;
  *rc = pg__err(pg__c(t), r, stmt + 3);
  if (*rc == DD_EIO) ((pg__txn *)t)->broken = true;
  PQclear(r);
  return NULL;
}

/* ---- transactions ------------------------------------------------------------------------- */

static int pg__begin_on(pg__txn *t, bool write) {
  PGconn *c = t->slot->c;
  /* PostgreSQL takes the snapshot at the first statement, not at BEGIN: a SELECT in the
   * same round trip pins it now, as LMDB's read transaction does */
  if (!write)
    return pg__exec(c, "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT 1",
                    PGRES_TUPLES_OK, "begin");
  int rc = pg__exec(c, "BEGIN", PGRES_COMMAND_OK, "begin");
  if (rc) return rc;
  PGresult *r = PQexecPrepared(c, "dd_lock", 0, NULL, NULL, NULL, 0);
  rc = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1 ? 0
       : PQresultStatus(r) == PGRES_TUPLES_OK
           ? dd_err_set(DD_ECORRUPT, "catalog database: the deltad_lock row is missing")
           : pg__err(c, r, "take the write lock");
  PQclear(r);
  if (rc) PQclear(PQexec(c, "ROLLBACK"));
  return rc;
}

static int pg__begin(cat_store *s, cat_txn **out, bool write) {
  pg__txn *t = calloc(1, sizeof *t);
  if (!t) return dd_err_set(DD_ENOMEM, "out of memory");
  t->base.s = s;
  t->base.write = write;
  int rc = 0;
  /* A pooled connection may have died since its last use (a database restart) without
   * libpq knowing yet: the first statement finds out; then one fresh connection is tried. */
  for (int attempt = 0; attempt < 2; attempt++) {
    if ((rc = pg__borrow(pg__st(s), &t->slot)) != 0) break;
    if ((rc = pg__begin_on(t, write)) == 0) break;
    pg__release(pg__st(s), t->slot, rc == DD_EIO);
    t->slot = NULL;
    if (rc != DD_EIO) break;
  }
  if (rc) {
    free(t);
    return rc;
  }
  *out = &t->base;
  return 0;
}

static void pg__end(pg__txn *t) {
  PQclear(t->last);
  pg__release(pg__st(t->base.s), t->slot, t->broken);
  free(t);
}

static int pg__commit(cat_txn *base) {
  pg__txn *t = (pg__txn *)base;
  PGresult *r = PQexec(t->slot->c, "COMMIT");
  int rc = 0;
  if (PQresultStatus(r) != PGRES_COMMAND_OK) rc = pg__err(t->slot->c, r, "commit");
  else if (strcmp(PQcmdStatus(r), "COMMIT") != 0) /* the transaction had failed */
    rc = dd_err_set(DD_EINTERNAL, "catalog database: commit: the transaction was rolled back");
  PQclear(r);
  if (rc == DD_EIO) t->broken = true;
  pg__end(t);
  return rc;
}

static void pg__abort(cat_txn *base) {
  pg__txn *t = (pg__txn *)base;
  if (!t->broken && pg__exec(t->slot->c, "ROLLBACK", PGRES_COMMAND_OK, "rollback") != 0)
    t->broken = true;
  pg__end(t);
}

/* ---- records ------------------------------------------------------------------------------ */

static int pg__get(cat_txn *base, int db, cat__bytes k, cat__bytes *v) {
  pg__txn *t = (pg__txn *)base;
  int rc = 0;
  PQclear(t->last);
  t->last = pg__run(base, "dd_get", db, k, NULL, 0, 0, PGRES_TUPLES_OK, &rc);
  if (!t->last) return rc;
  if (PQntuples(t->last) == 0) return DD_ENOTFOUND;
  *v = (cat__bytes){PQgetvalue(t->last, 0, 0), (size_t)PQgetlength(t->last, 0, 0)};
  return 0;
}

static int pg__put(cat_txn *base, int db, cat__bytes k, cat__bytes v, bool no_overwrite) {
  pg__txn *t = (pg__txn *)base;
  int rc = 0;
  PQclear(t->last);
  t->last = NULL;
  PGresult *r = pg__run(base, no_overwrite ? "dd_putnx" : "dd_put", db, k, v.n ? v.p : "", v.n,
                        0, PGRES_COMMAND_OK, &rc);
  if (!r) return rc;
  rc = no_overwrite && strcmp(PQcmdTuples(r), "0") == 0 ? DD_EEXISTS : 0;
  PQclear(r);
  return rc;
}

static int pg__del(cat_txn *base, int db, cat__bytes k) {
  pg__txn *t = (pg__txn *)base;
  int rc = 0;
  PQclear(t->last);
  t->last = NULL;
  PGresult *r = pg__run(base, "dd_del", db, k, NULL, 0, 0, PGRES_COMMAND_OK, &rc);
  if (!r) return rc;
  rc = strcmp(PQcmdTuples(r), "0") == 0 ? DD_ENOTFOUND : 0;
  PQclear(r);
  return rc;
}

/* ---- cursors ------------------------------------------------------------------------------ */

static int pg__cur_open(cat_txn *t, int db, cat__cur **out) {
  pg__cur *c = calloc(1, sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  c->base.txn = t;
  c->base.db = db;
  *out = &c->base;
  return 0;
}

static int pg__cur_row(pg__cur *c, cat__bytes *k, cat__bytes *v) {
  if (c->row >= c->n) return DD_ENOTFOUND;
  *k = (cat__bytes){PQgetvalue(c->res, c->row, 0), (size_t)PQgetlength(c->res, c->row, 0)};
  *v = (cat__bytes){PQgetvalue(c->res, c->row, 1), (size_t)PQgetlength(c->res, c->row, 1)};
  return 0;
}

/* Replaces the batch with the rows from `from` (inclusive or not), limit at a time. */
static int pg__cur_fetch(pg__cur *c, cat__bytes from, bool inclusive, int limit) {
  int rc = 0;
  PGresult *r = pg__run(c->base.txn, inclusive ? "dd_seek" : "dd_after", c->base.db, from, NULL,
                        0, limit, PGRES_TUPLES_OK, &rc);
  PQclear(c->res);
  c->res = r;
  c->row = 0;
  c->n = r ? PQntuples(r) : 0;
  c->limit = limit;
  return rc;
}

static int pg__cur_seek(cat__cur *base, cat__bytes from, cat__bytes *k, cat__bytes *v) {
  pg__cur *c = (pg__cur *)base;
  int rc = pg__cur_fetch(c, from, true, PG__SEEK_BATCH);
  return rc ? rc : pg__cur_row(c, k, v);
}

static int pg__cur_next(cat__cur *base, cat__bytes *k, cat__bytes *v) {
  pg__cur *c = (pg__cur *)base;
  if (!c->res) return DD_ENOTFOUND;
  if (++c->row < c->n) return pg__cur_row(c, k, v);
  if (c->n < c->limit) return DD_ENOTFOUND; /* the batch was the last */
  size_t n = (size_t)PQgetlength(c->res, c->n - 1, 0);
  unsigned char *last = malloc(n ? n : 1);
  if (!last) return dd_err_set(DD_ENOMEM, "out of memory");
  memcpy(last, PQgetvalue(c->res, c->n - 1, 0), n);
  int rc = pg__cur_fetch(c, (cat__bytes){last, n}, false, PG__NEXT_BATCH);
  free(last);
  return rc ? rc : pg__cur_row(c, k, v);
}

static void pg__cur_close(cat__cur *base) {
  PQclear(((pg__cur *)base)->res);
  free(base);
}

/* ---- open / close ------------------------------------------------------------------------ */

int cat__pg_open(cat_store *s, const char *url, int pool_size, const char *schema) {
  pg__state *st = NULL;
  int rc = pg__state_open(&st, url, pool_size, schema);
  if (rc) return rc;
  s->be = &cat__pg_backend;
  s->be_state = st;
  return 0;
}

static void pg__close(cat_store *s) {
  pg__state_close(pg__st(s));
  s->be_state = NULL;
}

static int pg__usage(cat_store *s, uint64_t *map_bytes, uint64_t *used_bytes) {
  (void)s;
  *map_bytes = *used_bytes = 0;
  return dd_err_set(DD_EUNSUPPORTED, "the PostgreSQL catalog has no LMDB map");
}

static int pg__backup(cat_store *s, const char *dir) {
  (void)s;
  (void)dir;
  return dd_err_set(DD_EUNSUPPORTED,
                    "backup: the catalog is in PostgreSQL; back it up with pg_dump (the "
                    "deltad_* tables) and keep the --secret-key-file with it");
}

const cat__backend cat__pg_backend = {
    .name = "postgresql",
    .begin = pg__begin,
    .commit = pg__commit,
    .abort = pg__abort,
    .get = pg__get,
    .put = pg__put,
    .del = pg__del,
    .cur_open = pg__cur_open,
    .cur_seek = pg__cur_seek,
    .cur_next = pg__cur_next,
    .cur_close = pg__cur_close,
    .close = pg__close,
    .usage = pg__usage,
    .backup = pg__backup,
};
