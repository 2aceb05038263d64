/* cat_kv_pg.c: the PostgreSQL backend of the catalog's key-value interface (cat_kv.h):
 * each sub-database is the rows of deltad_kv with its db number, so keys, values and their
 * order (bytea compares bytewise) are LMDB's. A transaction holds one pooled connection
 * (cat_kv_pg_conn.c) from begin to commit or abort:
 *   read:  BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; SELECT gen FROM deltad_lock
 *          (one round trip: the snapshot is taken now, as LMDB's read transaction, and its
 *          generation tells the read cache, cat_kv_pg_cache.c, what it may answer);
 *          ended by a ROLLBACK sent without waiting (read by the next borrower).
 *   write: BEGIN (READ COMMITTED); UPDATE deltad_lock SET gen = gen + 1 (one round trip):
 *          the row lock makes writers of every replica take turns, each seeing all that
 *          committed before it got the lock, so a write transaction behaves as LMDB's
 *          single writer.
 * Cursors fetch rows in batches (WHERE k >= / > $key ORDER BY k LIMIT n). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_kv_pg.h"

#define PG__SEEK_BATCH 16   /* first batch after a seek (walks re-seek often) */
#define PG__NEXT_BATCH 256

enum { PG__GET, PG__SEEK, PG__AFTER }; /* the cached queries */
static const char *const pg__stmt_names[] = {"dd_get", "dd_seek", "dd_after"};

typedef struct pg__txn {
  cat_txn base;
  pg__slot *slot;
  pg__rows *last; /* holds the value of the last get */
  pg__rows **held; /* read txns: the values of earlier gets, kept to the end (a bound
                    * call view's txn is shared by nested reads, cat_kv.h) */
  int n_held, cap_held;
  uint64_t gen;   /* read txns: the generation of the snapshot */
  bool broken;    /* the connection failed: drop it on release */
} pg__txn;

typedef struct pg__cur {
  cat__cur base;
  pg__rows *rows;
  int row, limit;
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

/* The rows of a read query: from the cache when this read txn's generation has them, else
 * from the database (and then cached). Write txns always ask the database. */
static int pg__rows_query(cat_txn *base, int stmt, int db, cat__bytes k, int limit,
                          pg__rows **out) {
  pg__txn *t = (pg__txn *)base;
  pg__cache *cache = &pg__st(base->s)->cache;
  *out = base->write ? NULL : pg__cache_get(cache, t->gen, stmt, db, k, limit);
  if (*out) return 0;
  int rc = 0;
  PGresult *r = pg__run(base, pg__stmt_names[stmt], db, k, NULL, 0, limit, PGRES_TUPLES_OK, &rc);
  if (!r) return rc;
  *out = pg__rows_from(r);
  PQclear(r);
  if (!*out) return dd_err_set(DD_ENOMEM, "out of memory");
  if (!base->write) pg__cache_put(cache, t->gen, stmt, db, k, limit, *out);
  return 0;
}

/* ---- transactions ------------------------------------------------------------------------- */

static int pg__begin_on(pg__txn *t, bool write) {
  PGconn *c = t->slot->c;
  PGresult *r = PQexec(c, write ? "BEGIN; UPDATE deltad_lock SET gen = gen + 1 WHERE id = 1 "
                                  "RETURNING gen"
                                : "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY; "
                                  "SELECT gen FROM deltad_lock WHERE id = 1");
  int rc = 0;
  if (PQresultStatus(r) != PGRES_TUPLES_OK)
    rc = pg__err(c, r, write ? "take the write lock" : "begin");
  else if (PQntuples(r) != 1)
    rc = dd_err_set(DD_ECORRUPT, "catalog database: the deltad_lock row is missing");
  else
    t->gen = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  if (rc && PQstatus(c) == CONNECTION_OK) PQclear(PQexec(c, "ROLLBACK"));
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

/* Lets go of the last get's value: freed (write txns), or kept to the end (read txns). */
static void pg__drop_last(pg__txn *t) {
  if (t->last && !t->base.write && t->n_held == t->cap_held) {
    int cap = t->cap_held ? 2 * t->cap_held : 8;
    pg__rows **h = realloc(t->held, (size_t)cap * sizeof *h);
    if (h) {
      t->held = h;
      t->cap_held = cap;
    }
  }
  if (t->last && !t->base.write && t->n_held < t->cap_held) t->held[t->n_held++] = t->last;
  else free(t->last);
  t->last = NULL;
}

static void pg__end(pg__txn *t) {
  free(t->last);
  for (int i = 0; i < t->n_held; i++) free(t->held[i]);
  free(t->held);
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
  if (t->broken) {
  } else if (!base->write && PQsendQuery(t->slot->c, "ROLLBACK")) {
    t->slot->pending = true; /* a read-only txn: nothing to wait for */
  } else if (pg__exec(t->slot->c, "ROLLBACK", PGRES_COMMAND_OK, "rollback") != 0) {
    t->broken = true;
  }
  pg__end(t);
}

/* ---- records ------------------------------------------------------------------------------ */

static int pg__get(cat_txn *base, int db, cat__bytes k, cat__bytes *v) {
  pg__txn *t = (pg__txn *)base;
  pg__drop_last(t);
  int rc = pg__rows_query(base, PG__GET, db, k, 0, &t->last);
  if (rc) return rc;
  if (t->last->n == 0) return DD_ENOTFOUND;
  *v = pg__rows_val(t->last, 0);
  return 0;
}

static int pg__put(cat_txn *base, int db, cat__bytes k, cat__bytes v, bool no_overwrite) {
  pg__txn *t = (pg__txn *)base;
  int rc = 0;
  free(t->last);
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
  free(t->last);
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
  if (!c->rows || c->row >= c->rows->n) return DD_ENOTFOUND;
  *k = pg__rows_key(c->rows, c->row);
  *v = pg__rows_val(c->rows, c->row);
  return 0;
}

/* Replaces the batch with the rows from `from` (inclusive or not), limit at a time. */
static int pg__cur_fetch(pg__cur *c, cat__bytes from, bool inclusive, int limit) {
  pg__rows *rows = NULL;
  int rc = pg__rows_query(c->base.txn, inclusive ? PG__SEEK : PG__AFTER, c->base.db, from,
                          limit, &rows);
  free(c->rows);
  c->rows = rows;
  c->row = 0;
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
  if (!c->rows) return DD_ENOTFOUND;
  if (++c->row < c->rows->n) return pg__cur_row(c, k, v);
  if (c->rows->n < c->limit) return DD_ENOTFOUND; /* the batch was the last */
  cat__bytes lk = pg__rows_key(c->rows, c->rows->n - 1);
  unsigned char *last = malloc(lk.n ? lk.n : 1);
  if (!last) return dd_err_set(DD_ENOMEM, "out of memory");
  memcpy(last, lk.p, lk.n);
  int rc = pg__cur_fetch(c, (cat__bytes){last, lk.n}, false, PG__NEXT_BATCH);
  free(last);
  return rc ? rc : pg__cur_row(c, k, v);
}

static void pg__cur_close(cat__cur *base) {
  free(((pg__cur *)base)->rows);
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
