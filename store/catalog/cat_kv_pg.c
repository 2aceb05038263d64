/* cat_kv_pg.c: the PostgreSQL backend of the catalog's key-value interface (cat_kv.h):
 * each sub-database is the rows of deltad_kv with its db number, so keys, values and their
 * order (bytea compares bytewise) are LMDB's. A transaction holds one pooled connection
 * (cat_kv_pg_conn.c) while it has a database transaction:
 *   read:  begins with one prepared SELECT gen FROM deltad_lock (one small round trip, no
 *          transaction, the connection given back at once): the catalog's generation g
 *          now. Every query the read cache (cat_kv_pg_cache.c) holds for g is answered from
 *          it, so a read while the catalog is unchanged costs that one round trip. On the
 *          first miss the txn takes a connection and a snapshot: BEGIN ISOLATION LEVEL
 *          REPEATABLE READ READ ONLY; SELECT gen (one round trip). When the snapshot's
 *          generation is still g, it is the state the cached answers came from; when a
 *          commit came between, the queries already answered from the cache are asked again
 *          in the snapshot: the same rows, and the txn goes on at the new generation (what
 *          it read is also what the snapshot holds); other rows, and the read fails with
 *          DD_ECONFLICT (the catalog changed under the call: retry). So a read txn is a
 *          consistent state no older than its begin, as LMDB's. The snapshot ends with a
 *          ROLLBACK sent without waiting (read by the next borrower).
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

/* A query a read txn answered from the cache before it had a snapshot (pg__rows_query). */
typedef struct pg__seen {
  int stmt, db, limit;
  size_t kn;
  unsigned char *key;
  pg__rows *rows;
} pg__seen;

typedef struct pg__txn {
  cat_txn base;
  pg__slot *slot; /* write txns: always; read txns: once they have a snapshot (snap) */
  bool snap;
  pg__seen *seen; /* read txns without a snapshot yet: what the cache answered */
  int n_seen, cap_seen;
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

/* The rows of query (stmt, db, k, limit) from the database, in t's transaction. */
static int pg__rows_db(cat_txn *t, int stmt, int db, cat__bytes k, int limit, pg__rows **out) {
  int rc = 0;
  *out = NULL;
  PGresult *r = pg__run(t, pg__stmt_names[stmt], db, k, NULL, 0, limit, PGRES_TUPLES_OK, &rc);
  if (!r) return rc;
  *out = pg__rows_from(r);
  PQclear(r);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* Remembers a query the cache answered (a copy of rows) for pg__snapshot's check. */
static int pg__see(pg__txn *t, int stmt, int db, cat__bytes k, int limit, const pg__rows *rows) {
  if (t->n_seen == t->cap_seen) {
    int cap = t->cap_seen ? 2 * t->cap_seen : 8;
    pg__seen *n = realloc(t->seen, (size_t)cap * sizeof *n);
    if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
    t->seen = n;
    t->cap_seen = cap;
  }
  pg__seen *e = &t->seen[t->n_seen];
  *e = (pg__seen){.stmt = stmt, .db = db, .limit = limit, .kn = k.n};
  e->key = malloc(k.n ? k.n : 1);
  e->rows = e->key ? malloc(rows->size) : NULL;
  if (!e->rows) {
    free(e->key);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  memcpy(e->key, k.p, k.n);
  memcpy(e->rows, rows, rows->size);
  t->n_seen++;
  return 0;
}

static void pg__seen_clear(pg__txn *t) {
  for (int i = 0; i < t->n_seen; i++) {
    free(t->seen[i].key);
    free(t->seen[i].rows);
  }
  free(t->seen);
  t->seen = NULL;
  t->n_seen = t->cap_seen = 0;
}

static int pg__attach(pg__txn *t, bool write);

static bool pg__bytes_same(cat__bytes a, cat__bytes b) {
  return a.n == b.n && (a.n == 0 || memcmp(a.p, b.p, a.n) == 0);
}

/* The same rows (keys and values; the blocks' padding is not compared). */
static bool pg__rows_same(const pg__rows *a, const pg__rows *b) {
  if (a->n != b->n) return false;
  for (int i = 0; i < a->n; i++)
    if (!pg__bytes_same(pg__rows_key(a, i), pg__rows_key(b, i)) ||
        !pg__bytes_same(pg__rows_val(a, i), pg__rows_val(b, i)))
      return false;
  return true;
}

/* A read txn's first miss: a snapshot; when its generation moved past the one the cache
 * answered at, the answers so far must still hold in it (else DD_ECONFLICT). */
static int pg__snapshot(pg__txn *t) {
  uint64_t was = t->gen;
  int rc = pg__attach(t, false);
  if (rc) return rc;
  t->snap = true;
  for (int i = 0; i < t->n_seen && t->gen != was && !rc; i++) {
    pg__seen *e = &t->seen[i];
    pg__rows *now = NULL;
    rc = pg__rows_db(&t->base, e->stmt, e->db, (cat__bytes){e->key, e->kn}, e->limit, &now);
    if (!rc && !pg__rows_same(now, e->rows))
      rc = dd_err_set(DD_ECONFLICT, "catalog database: the catalog changed during the call "
                      "(generation %llu to %llu); retry", (unsigned long long)was,
                      (unsigned long long)t->gen);
    free(now);
  }
  pg__seen_clear(t);
  return rc;
}

/* The rows of a read query: from the cache when this read txn's generation has them, else
 * from the database (and then cached). Write txns always ask the database. */
static int pg__rows_query(cat_txn *base, int stmt, int db, cat__bytes k, int limit,
                          pg__rows **out) {
  pg__txn *t = (pg__txn *)base;
  pg__cache *cache = &pg__st(base->s)->cache;
  /* the audit log is appended outside the generation (pg__append): never cached */
  bool cached = !base->write && db != CAT__DB_AUDIT;
  *out = cached ? pg__cache_get(cache, t->gen, stmt, db, k, limit) : NULL;
  if (*out && !t->snap) {
    int rc = pg__see(t, stmt, db, k, limit, *out);
    if (rc) {
      free(*out);
      *out = NULL;
    }
    return rc;
  }
  if (*out) return 0;
  int rc = base->write || t->snap ? 0 : pg__snapshot(t);
  if (!rc) rc = pg__rows_db(base, stmt, db, k, limit, out);
  if (!rc && cached) pg__cache_put(cache, t->gen, stmt, db, k, limit, *out);
  return rc;
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

/* A read txn's begin: the generation now, outside any transaction. */
static int pg__gen_on(pg__txn *t) {
  PGconn *c = t->slot->c;
  PGresult *r = PQexecPrepared(c, "dd_gen", 0, NULL, NULL, NULL, 0);
  int rc = 0;
  if (PQresultStatus(r) != PGRES_TUPLES_OK) rc = pg__err(c, r, "read the generation");
  else if (PQntuples(r) != 1)
    rc = dd_err_set(DD_ECORRUPT, "catalog database: the deltad_lock row is missing");
  else
    t->gen = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  return rc;
}

/* Takes a connection for t and runs its first round trip on it: a write txn's begin
 * (write), a read txn's snapshot (!write && t->slot kept), or a read txn's generation
 * (gen_only: the connection goes back at once). A pooled connection may have died since
 * its last use (a database restart) without libpq knowing yet: the first statement finds
 * out; then one fresh connection is tried. */
static int pg__attach_as(pg__txn *t, bool write, bool gen_only) {
  pg__state *st = pg__st(t->base.s);
  int rc = 0;
  for (int attempt = 0; attempt < 2; attempt++) {
    if ((rc = pg__borrow(st, &t->slot)) != 0) break;
    rc = gen_only ? pg__gen_on(t) : pg__begin_on(t, write);
    if (rc == 0 && !gen_only) break;
    pg__release(st, t->slot, rc == DD_EIO);
    t->slot = NULL;
    if (rc != DD_EIO) break;
  }
  return rc;
}

static int pg__attach(pg__txn *t, bool write) { return pg__attach_as(t, write, false); }

static int pg__begin(cat_store *s, cat_txn **out, bool write) {
  pg__txn *t = calloc(1, sizeof *t);
  if (!t) return dd_err_set(DD_ENOMEM, "out of memory");
  t->base.s = s;
  t->base.write = write;
  /* a read txn with a live listener: the generation is known without asking */
  int rc = !write && pg__notify_gen(pg__st(s), &t->gen) ? 0 : pg__attach_as(t, write, !write);
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
  pg__seen_clear(t);
  if (t->slot) pg__release(pg__st(t->base.s), t->slot, t->broken);
  free(t);
}

static int pg__commit(cat_txn *base) {
  pg__txn *t = (pg__txn *)base;
  if (!t->slot) { /* a read txn the cache answered: nothing was begun */
    pg__end(t);
    return 0;
  }
  /* a write announces its generation to every replica's listener (cat_kv_pg_notify.c) */
  char sql[96] = "COMMIT";
  if (base->write && pg__st(base->s)->can_notify)
    snprintf(sql, sizeof sql, "NOTIFY deltad_gen, '%llu %llx'; COMMIT", (unsigned long long)t->gen,
             (unsigned long long)pg__schema_tag(pg__st(base->s)));
  PGresult *r = PQexec(t->slot->c, sql);
  int rc = 0;
  if (PQresultStatus(r) != PGRES_COMMAND_OK) rc = pg__err(t->slot->c, r, "commit");
  else if (strcmp(PQcmdStatus(r), "COMMIT") != 0) /* the transaction had failed */
    rc = dd_err_set(DD_EINTERNAL, "catalog database: commit: the transaction was rolled back");
  PQclear(r);
  if (rc && PQtransactionStatus(t->slot->c) != PQTRANS_IDLE) t->broken = true; /* mid-txn */
  if (rc == DD_EIO) t->broken = true;
  if (!rc && base->write) pg__notify_committed(pg__st(base->s), t->gen);
  pg__end(t);
  return rc;
}

static void pg__abort(cat_txn *base) {
  pg__txn *t = (pg__txn *)base;
  if (t->broken || !t->slot) {
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

int cat__pg_open(cat_store *s, const char *url, int pool_size, const char *schema, bool push) {
  pg__state *st = NULL;
  int rc = pg__state_open(&st, url, pool_size, schema, push);
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

/* cat__backend.append: one autocommitted statement on a pooled connection, without the
 * writer lock (no deltad_lock row, no generation, no NOTIFY). ON CONFLICT DO NOTHING makes
 * the one retry on a fresh connection (the pooled one died unnoticed) harmless even when
 * the first attempt landed. */
static int pg__append(cat_store *s, int db, cat__bytes k, cat__bytes v, cat__bytes below) {
  static const char *const sql[2] = {
      "INSERT INTO deltad_kv (db, k, v) VALUES ($1::smallint, $2, $3) ON CONFLICT DO NOTHING",
      "WITH gone AS (DELETE FROM deltad_kv WHERE db = $1::smallint AND k < $4) "
      "INSERT INTO deltad_kv (db, k, v) VALUES ($1::smallint, $2, $3) ON CONFLICT DO NOTHING"};
  pg__state *st = pg__st(s);
  char dbs[8];
  snprintf(dbs, sizeof dbs, "%d", db);
  const char *vals[4] = {dbs, k.p, v.n ? v.p : "", below.n ? below.p : ""};
  int lens[4] = {0, (int)k.n, (int)v.n, (int)below.n};
  int fmts[4] = {0, 1, 1, 1};
  int rc = 0;
  for (int attempt = 0; attempt < 2; attempt++) {
    pg__slot *slot = NULL;
    if ((rc = pg__borrow(st, &slot)) != 0) break;
    PGresult *r = PQexecParams(slot->c, sql[below.n > 0], below.n ? 4 : 3, NULL, vals, lens,
                               fmts, 0);
    rc = PQresultStatus(r) == PGRES_COMMAND_OK ? 0 : pg__err(slot->c, r, "append");
    PQclear(r);
    pg__release(st, slot, rc == DD_EIO);
    if (rc != DD_EIO) break;
  }
  return rc;
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
    .append = pg__append,
};
