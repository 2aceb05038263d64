/* cat_env.c: opening and closing the catalog store's LMDB environment, its named
 * sub-databases and the format marker; transaction helpers and LMDB error translation. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>

#include <openssl/crypto.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__DEFAULT_MAP (1024u * 1024u * 1024u)
#define CAT__FORMAT "1"

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
};

/* ---- errors and transactions ------------------------------------------------------------ */

int cat__mdb_err(int rc, const char *what) {
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

int cat__mdb_env_err(MDB_env *env, int rc, const char *what) {
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

int cat__txn_begin(cat_store *s, MDB_txn **out, bool write) {
  atomic_fetch_add_explicit(write ? &s->write_txns : &s->read_txns, 1, memory_order_relaxed);
  int rc = mdb_txn_begin(s->env, NULL, write ? 0 : MDB_RDONLY, out);
  return rc ? cat__mdb_env_err(s->env, rc, "catalog store: begin transaction") : 0;
}

int cat__txn_commit(MDB_txn *txn) {
  MDB_env *env = mdb_txn_env(txn);
  int rc = mdb_txn_commit(txn);
  return rc ? cat__mdb_env_err(env, rc, "catalog store: commit") : 0;
}

/* ---- open / close ----------------------------------------------------------------------- */

static int cat__open_dbis(cat_store *s) {
  MDB_txn *txn = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (rc) return rc;
  for (int i = 0; i < CAT__DB_COUNT; i++) {
    int mrc = mdb_dbi_open(txn, cat__dbi_names[i], MDB_CREATE, &s->dbi[i]);
    if (mrc) {
      rc = cat__mdb_err(mrc, "catalog store: open sub-database");
      goto cleanup;
    }
  }
  MDB_val k = {6, "format"}, v;
  int mrc = mdb_get(txn, s->dbi[CAT__DB_META], &k, &v);
  if (mrc == MDB_NOTFOUND) {
    v.mv_size = strlen(CAT__FORMAT);
    v.mv_data = CAT__FORMAT;
    mrc = mdb_put(txn, s->dbi[CAT__DB_META], &k, &v, 0);
  } else if (mrc == 0 && (v.mv_size != strlen(CAT__FORMAT) ||
                          memcmp(v.mv_data, CAT__FORMAT, v.mv_size) != 0)) {
    rc = dd_err_set(DD_ECORRUPT, "catalog store: unknown format version '%.*s'",
                    (int)v.mv_size, (const char *)v.mv_data);
    goto cleanup;
  }
  if (mrc) {
    rc = cat__mdb_err(mrc, "catalog store: format marker");
    goto cleanup;
  }
  rc = cat__txn_commit(txn);
  txn = NULL;
cleanup:
  if (txn) mdb_txn_abort(txn);
  return rc;
}

static int cat__open_env(cat_store *s, const char *data_dir, size_t map_bytes) {
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/catalog.mdb", data_dir) >= sizeof path)
    return dd_err_set(DD_EINVAL, "data directory path too long");
  if (mkdir(path, 0700) != 0 && errno != EEXIST)
    return dd_err_set(DD_EIO, "create %s: %s", path, strerror(errno));
  int rc = mdb_env_create(&s->env);
  if (rc) return cat__mdb_err(rc, "catalog store: create environment");
  rc = mdb_env_set_mapsize(s->env, map_bytes ? map_bytes : CAT__DEFAULT_MAP);
  if (!rc) rc = mdb_env_set_maxdbs(s->env, 64);
  if (!rc) rc = mdb_env_set_maxreaders(s->env, 512);
  if (!rc) rc = mdb_env_open(s->env, path, MDB_NOTLS, 0600);
  if (rc) return cat__mdb_err(rc, "catalog store: open environment");
  int dead = 0;
  mdb_reader_check(s->env, &dead); /* clear slots of readers that died */
  return 0;
}

int cat_store_open(cat_store **out, const char *data_dir, const cat_store_opts *opts) {
  *out = NULL;
  if (!data_dir || !*data_dir) return dd_err_set(DD_EINVAL, "data directory not set");
  cat_store *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  atomic_init(&s->read_txns, 0);
  atomic_init(&s->write_txns, 0);
  int rc = cat__secret_key_load(s, data_dir);
  if (!rc && !(s->data_real = realpath(data_dir, NULL)))
    rc = dd_err_set(DD_EIO, "data directory %s: %s", data_dir, strerror(errno));
  if (!rc) rc = cat__open_env(s, data_dir, opts ? opts->map_bytes : 0);
  if (!rc) rc = cat__open_dbis(s);
  if (rc) {
    cat_store_close(s);
    return rc;
  }
  *out = s;
  return 0;
}

cat_store_stats cat_store_stats_get(cat_store *s) {
  cat_store_stats st = {
      .read_txns = atomic_load_explicit(&s->read_txns, memory_order_relaxed),
      .write_txns = atomic_load_explicit(&s->write_txns, memory_order_relaxed),
  };
  return st;
}

void cat_store_close(cat_store *s) {
  if (!s) return;
  if (s->env) {
    mdb_env_sync(s->env, 1);
    mdb_env_close(s->env);
  }
  OPENSSL_cleanse(s->key, sizeof s->key);
  free(s->data_real);
  free(s);
}

int cat_store_map_usage(cat_store *s, uint64_t *map_bytes, uint64_t *used_bytes) {
  MDB_envinfo info;
  MDB_stat st;
  int rc = mdb_env_info(s->env, &info);
  if (!rc) rc = mdb_env_stat(s->env, &st);
  if (rc) return cat__mdb_err(rc, "catalog store: environment info");
  *map_bytes = (uint64_t)info.me_mapsize;
  *used_bytes = ((uint64_t)info.me_last_pgno + 1) * st.ms_psize;
  return 0;
}
