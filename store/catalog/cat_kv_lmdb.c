/* cat_kv_lmdb.c: the LMDB backend of the catalog's key-value interface (cat_kv.h): the
 * environment <data_dir>/catalog.mdb with one named sub-database per CAT__DB_* (the names
 * below are the on-disk layout), transactions, cursors, LMDB error translation, map usage
 * and the compacting copy behind cat_store_backup. The only file that includes lmdb.h. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <lmdb.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__DEFAULT_MAP (1024u * 1024u * 1024u)

typedef struct lm__txn {
  cat_txn base;
  MDB_txn *txn;
} lm__txn;

/* Read transactions that ended are kept reset (mdb_txn_reset: their reader slot held, no
 * snapshot) and renewed by the next reader: mdb_txn_begin allocates and zeroes a
 * transaction of maxdbs sub-databases each time, most of a small read's cost. MDB_NOTLS
 * lets any thread renew one. At most LM__POOL are kept; the rest are aborted. */
#define LM__POOL 32

typedef struct lm__state {
  MDB_env *env;
  MDB_dbi dbi[CAT__DB_COUNT]; /* opened once in cat__lmdb_open; read-only afterwards */
  pthread_mutex_t pool_mu;
  bool pool_init;
  size_t npool;
  lm__txn *pool[LM__POOL];
} lm__state;

typedef struct lm__cur {
  cat__cur base;
  MDB_cursor *cur;
} lm__cur;

static const char *const cat__dbi_names[CAT__DB_COUNT] = {
    [CAT__DB_META] = "meta",
    [CAT__DB_CATALOGS] = "catalogs",
    [CAT__DB_CATALOG_NAMES] = "catalog_names",
    [CAT__DB_SCHEMAS] = "schemas",
    [CAT__DB_SCHEMA_NAMES] = "schema_names",
    [CAT__DB_CREDENTIALS] = "credentials",
    [CAT__DB_CREDENTIAL_SECRETS] = "credential_secrets",
    [CAT__DB_CREDENTIAL_NAMES] = "credential_names",
    [CAT__DB_LOCATIONS] = "locations",
    [CAT__DB_LOCATION_NAMES] = "location_names",
    [CAT__DB_CREDENTIAL_USES] = "credential_uses",
    [CAT__DB_TOKENS] = "tokens",
    /* Delta Sharing */
    [CAT__DB_SHARES] = "shares",
    [CAT__DB_SHARE_NAMES] = "share_names",
    [CAT__DB_RECIPIENTS] = "recipients",
    [CAT__DB_RECIPIENT_NAMES] = "recipient_names",
    [CAT__DB_SHARE_GRANTS] = "share_grants",
    [CAT__DB_RECIPIENT_GRANTS] = "recipient_grants",
    [CAT__DB_GRANT_GENS] = "grant_gens",
    /* Lance Namespace API (cat_namespace.c, cat_table.c) */
    [CAT__DB_NAMESPACES] = "namespaces",
    [CAT__DB_NAMESPACE_NAMES] = "namespace_names",
    [CAT__DB_LANCE_TABLES] = "lance_tables",
    [CAT__DB_LANCE_TABLE_NAMES] = "lance_table_names",
    [CAT__DB_AUDIT] = "audit",
    /* Delta tables (cat_dtable*.c) */
    [CAT__DB_DELTA_TABLES] = "delta_tables",
    [CAT__DB_DELTA_TABLE_NAMES] = "delta_table_names",
    [CAT__DB_DELTA_DROPPED] = "delta_dropped",
};

/* ---- errors and transactions ------------------------------------------------------------ */

static int cat__mdb_err(int rc, const char *what) {
  const char *why = mdb_strerror(rc);
  switch (rc) {
  case 0: return 0;
  case MDB_NOTFOUND: return dd_err_set(DD_ENOTFOUND, "%s: %s", what, why);
  case MDB_MAP_FULL:
    return dd_err_set(DD_ENOMEM, "%s: catalog store is full (raise the LMDB map size)", what);
  case MDB_CORRUPTED:
  case MDB_PAGE_NOTFOUND:
  case MDB_INVALID:
  case MDB_VERSION_MISMATCH:
  case MDB_BAD_TXN: return dd_err_set(DD_ECORRUPT, "%s: %s", what, why);
  case ENOMEM: return dd_err_set(DD_ENOMEM, "%s: %s", what, why);
  case EACCES:
  case EIO:
  case ENOSPC:
  case EROFS:
  case ENOENT:
  case EAGAIN: return dd_err_set(DD_EIO, "%s: %s", what, why);
  default: return dd_err_set(DD_EINTERNAL, "%s: %s", what, why);
  }
}

/* Below this much free space a failed write is reported as a full disk: LMDB needs room
 * for the pages a commit copies, more than the few bytes a file system may have left. */
#define CAT__DISK_LOW_BYTES (4u * 1024u * 1024u)

static int cat__mdb_env_err(MDB_env *env, int rc, const char *what) {
  const char *path = NULL;
  struct statvfs vfs;
  if ((rc == EIO || rc == ENOSPC) && env && mdb_env_get_path(env, &path) == 0 && path &&
      statvfs(path, &vfs) == 0 &&
      (rc == ENOSPC || (unsigned long long)vfs.f_bavail * vfs.f_frsize < CAT__DISK_LOW_BYTES))
    return dd_err_set(DD_EIO, "%s: no space left on the disk holding the catalog store (%s: "
                      "%llu bytes free); nothing was written, free some space and retry",
                      what, path, (unsigned long long)vfs.f_bavail * vfs.f_frsize);
  return cat__mdb_err(rc, what);
}

static lm__state *lm__st(cat_store *s) { return s->be_state; }
static MDB_txn *lm__t(cat_txn *t) { return ((lm__txn *)t)->txn; }
static MDB_dbi lm__dbi(cat_txn *t, int db) { return lm__st(t->s)->dbi[db]; }

/* ---- transactions ------------------------------------------------------------------------- */

/* A reset read transaction from the pool, renewed; NULL when there is none (or it would
 * not renew: then it is aborted and a new one begun). */
static lm__txn *lm__pool_take(lm__state *st) {
  lm__txn *t = NULL;
  pthread_mutex_lock(&st->pool_mu);
  if (st->npool) t = st->pool[--st->npool];
  pthread_mutex_unlock(&st->pool_mu);
  if (t && mdb_txn_renew(t->txn)) {
    mdb_txn_abort(t->txn);
    free(t);
    t = NULL;
  }
  return t;
}

static int lm__begin(cat_store *s, cat_txn **out, bool write) {
  lm__state *st = lm__st(s);
  lm__txn *t = write ? NULL : lm__pool_take(st);
  if (t) {
    *out = &t->base;
    return 0;
  }
  if (!(t = malloc(sizeof *t))) return dd_err_set(DD_ENOMEM, "out of memory");
  t->base.s = s;
  t->base.write = write;
  int rc = mdb_txn_begin(st->env, NULL, write ? 0 : MDB_RDONLY, &t->txn);
  if (rc) {
    free(t);
    return cat__mdb_env_err(st->env, rc, "catalog store: begin transaction");
  }
  *out = &t->base;
  return 0;
}

/* Ends a read transaction: reset into the pool, or aborted when the pool is full. */
static void lm__read_end(cat_txn *t) {
  lm__state *st = lm__st(t->s);
  mdb_txn_reset(lm__t(t));
  pthread_mutex_lock(&st->pool_mu);
  bool kept = st->npool < LM__POOL;
  if (kept) st->pool[st->npool++] = (lm__txn *)t;
  pthread_mutex_unlock(&st->pool_mu);
  if (kept) return;
  mdb_txn_abort(lm__t(t));
  free(t);
}

static int lm__commit(cat_txn *t) {
  if (!t->write) {
    lm__read_end(t);
    return 0;
  }
  MDB_env *env = lm__st(t->s)->env;
  int rc = mdb_txn_commit(lm__t(t));
  free(t);
  return rc ? cat__mdb_env_err(env, rc, "catalog store: commit") : 0;
}

static void lm__abort(cat_txn *t) {
  if (!t->write) {
    lm__read_end(t);
    return;
  }
  mdb_txn_abort(lm__t(t));
  free(t);
}

/* ---- records ------------------------------------------------------------------------------ */

static int lm__get(cat_txn *t, int db, cat__bytes k, cat__bytes *v) {
  MDB_val mk = {k.n, (void *)k.p}, mv;
  int rc = mdb_get(lm__t(t), lm__dbi(t, db), &mk, &mv);
  if (rc == MDB_NOTFOUND) return DD_ENOTFOUND;
  if (rc) return cat__mdb_err(rc, "catalog store: read");
  *v = (cat__bytes){mv.mv_data, mv.mv_size};
  return 0;
}

static int lm__put(cat_txn *t, int db, cat__bytes k, cat__bytes v, bool no_overwrite) {
  MDB_val mk = {k.n, (void *)k.p}, mv = {v.n, (void *)v.p};
  int rc = mdb_put(lm__t(t), lm__dbi(t, db), &mk, &mv, no_overwrite ? MDB_NOOVERWRITE : 0);
  if (rc == MDB_KEYEXIST) return DD_EEXISTS;
  return rc ? cat__mdb_env_err(lm__st(t->s)->env, rc, "catalog store: write") : 0;
}

static int lm__del(cat_txn *t, int db, cat__bytes k) {
  MDB_val mk = {k.n, (void *)k.p};
  int rc = mdb_del(lm__t(t), lm__dbi(t, db), &mk, NULL);
  if (rc == MDB_NOTFOUND) return DD_ENOTFOUND;
  return rc ? cat__mdb_err(rc, "catalog store: delete") : 0;
}

/* ---- cursors ------------------------------------------------------------------------------ */

static int lm__cur_open(cat_txn *t, int db, cat__cur **out) {
  lm__cur *c = malloc(sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  c->base.txn = t;
  c->base.db = db;
  int rc = mdb_cursor_open(lm__t(t), lm__dbi(t, db), &c->cur);
  if (rc) {
    free(c);
    return cat__mdb_err(rc, "catalog store: open cursor");
  }
  *out = &c->base;
  return 0;
}

static int lm__cur_result(int rc, const MDB_val *mk, const MDB_val *mv, cat__bytes *k,
                          cat__bytes *v) {
  if (rc == MDB_NOTFOUND) return DD_ENOTFOUND;
  if (rc) return cat__mdb_err(rc, "catalog store: scan");
  *k = (cat__bytes){mk->mv_data, mk->mv_size};
  *v = (cat__bytes){mv->mv_data, mv->mv_size};
  return 0;
}

static int lm__cur_seek(cat__cur *c, cat__bytes from, cat__bytes *k, cat__bytes *v) {
  MDB_val mk = {from.n, (void *)from.p}, mv;
  /* LMDB refuses an empty key: an empty `from` starts at the first key */
  int rc = mdb_cursor_get(((lm__cur *)c)->cur, &mk, &mv, from.n ? MDB_SET_RANGE : MDB_FIRST);
  return lm__cur_result(rc, &mk, &mv, k, v);
}

static int lm__cur_next(cat__cur *c, cat__bytes *k, cat__bytes *v) {
  MDB_val mk, mv;
  int rc = mdb_cursor_get(((lm__cur *)c)->cur, &mk, &mv, MDB_NEXT);
  return lm__cur_result(rc, &mk, &mv, k, v);
}

static void lm__cur_close(cat__cur *c) {
  mdb_cursor_close(((lm__cur *)c)->cur);
  free(c);
}

/* ---- open / close / usage / backup ------------------------------------------------------ */

static int lm__open_dbis(cat_store *s) {
  lm__state *st = lm__st(s);
  MDB_txn *txn = NULL;
  int rc = mdb_txn_begin(st->env, NULL, 0, &txn);
  if (rc) return cat__mdb_env_err(st->env, rc, "catalog store: begin transaction");
  for (int i = 0; i < CAT__DB_COUNT && !rc; i++)
    rc = mdb_dbi_open(txn, cat__dbi_names[i], MDB_CREATE, &st->dbi[i]);
  if (rc) {
    mdb_txn_abort(txn);
    return cat__mdb_err(rc, "catalog store: open sub-database");
  }
  rc = mdb_txn_commit(txn);
  return rc ? cat__mdb_env_err(st->env, rc, "catalog store: commit") : 0;
}

int cat__lmdb_open(cat_store *s, const char *data_dir, size_t map_bytes) {
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/catalog.mdb", data_dir) >= sizeof path)
    return dd_err_set(DD_EINVAL, "data directory path too long");
  if (mkdir(path, 0700) != 0 && errno != EEXIST)
    return dd_err_set(DD_EIO, "create %s: %s", path, strerror(errno));
  lm__state *st = calloc(1, sizeof *st);
  if (!st) return dd_err_set(DD_ENOMEM, "out of memory");
  s->be = &cat__lmdb_backend;
  s->be_state = st;
  st->pool_init = pthread_mutex_init(&st->pool_mu, NULL) == 0;
  if (!st->pool_init) return dd_err_set(DD_ENOMEM, "catalog store: cannot create a mutex");
  int rc = mdb_env_create(&st->env);
  if (rc) return cat__mdb_err(rc, "catalog store: create environment");
  rc = mdb_env_set_mapsize(st->env, map_bytes ? map_bytes : CAT__DEFAULT_MAP);
  if (!rc) rc = mdb_env_set_maxdbs(st->env, 64);
  if (!rc) rc = mdb_env_set_maxreaders(st->env, 512);
  if (!rc) rc = mdb_env_open(st->env, path, MDB_NOTLS, 0600);
  if (rc) return cat__mdb_err(rc, "catalog store: open environment");
  int dead = 0;
  mdb_reader_check(st->env, &dead); /* clear slots of readers that died */
  return lm__open_dbis(s);
}

static void lm__close(cat_store *s) {
  lm__state *st = lm__st(s);
  if (!st) return;
  for (size_t i = 0; i < st->npool; i++) { /* no transaction is open at close: all are here */
    mdb_txn_abort(st->pool[i]->txn);
    free(st->pool[i]);
  }
  st->npool = 0;
  if (st->pool_init) pthread_mutex_destroy(&st->pool_mu);
  if (st->env) {
    mdb_env_sync(st->env, 1);
    mdb_env_close(st->env);
  }
  free(st);
  s->be_state = NULL;
}

static int lm__usage(cat_store *s, uint64_t *map_bytes, uint64_t *used_bytes) {
  MDB_envinfo info;
  MDB_stat st;
  int rc = mdb_env_info(lm__st(s)->env, &info);
  if (!rc) rc = mdb_env_stat(lm__st(s)->env, &st);
  if (rc) return cat__mdb_err(rc, "catalog store: environment info");
  *map_bytes = (uint64_t)info.me_mapsize;
  *used_bytes = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
  return 0;
}

static int lm__backup(cat_store *s, const char *dir) {
  int rc = mdb_env_copy2(lm__st(s)->env, dir, MDB_CP_COMPACT);
  return rc ? cat__mdb_env_err(lm__st(s)->env, rc, "backup: copy the catalog") : 0;
}

/* A read txn's snapshot id: LMDB numbers every committed write transaction, and a
 * read txn carries the id of the one it sees (also one another process committed). */
static int lm__generation(cat_txn *t, uint64_t *out) {
  *out = (uint64_t)mdb_txn_id(((lm__txn *)t)->txn);
  return 0;
}

const cat__backend cat__lmdb_backend = {
    .name = "lmdb",
    .begin = lm__begin,
    .commit = lm__commit,
    .abort = lm__abort,
    .get = lm__get,
    .put = lm__put,
    .del = lm__del,
    .cur_open = lm__cur_open,
    .cur_seek = lm__cur_seek,
    .cur_next = lm__cur_next,
    .cur_close = lm__cur_close,
    .close = lm__close,
    .usage = lm__usage,
    .backup = lm__backup,
    .generation = lm__generation,
};
