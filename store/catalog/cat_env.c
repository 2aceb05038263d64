/* cat_env.c: opening and closing the catalog store over its backend (LMDB in the data
 * directory, or PostgreSQL when opts->catalog_url is set): the secrets key, the realpath of
 * the data directory, the format marker, stats, map usage. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>

#include <openssl/crypto.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__FORMAT "1"

/* Checks the layout version in meta, writing it into an empty store. */
static int cat__format_check(cat_store *s) {
  cat_txn *txn = NULL;
  cat__bytes v;
  int rc = cat__txn_begin(s, &txn, true);
  if (rc) return rc;
  rc = cat__kv_get(txn, CAT__DB_META, "format", 6, &v);
  if (rc == DD_ENOTFOUND) {
    rc = cat__kv_put(txn, CAT__DB_META, "format", 6, CAT__FORMAT, strlen(CAT__FORMAT), false);
  } else if (rc == 0 && (v.n != strlen(CAT__FORMAT) || memcmp(v.p, CAT__FORMAT, v.n) != 0)) {
    rc = dd_err_set(DD_ECORRUPT, "catalog store: unknown format version '%.*s'", (int)v.n,
                    (const char *)v.p);
  }
  if (rc) {
    cat__txn_abort(txn);
    return rc;
  }
  return cat__txn_commit(txn);
}

int cat_store_open(cat_store **out, const char *data_dir, const cat_store_opts *opts) {
  *out = NULL;
  if (!data_dir || !*data_dir) return dd_err_set(DD_EINVAL, "data directory not set");
  cat_store *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  atomic_init(&s->read_txns, 0);
  atomic_init(&s->write_txns, 0);
  static atomic_uint_fast64_t opened;
  s->serial = atomic_fetch_add(&opened, 1) + 1;
  const char *url = opts && opts->catalog_url && *opts->catalog_url ? opts->catalog_url : NULL;
  int rc = cat__secret_key_load(s, data_dir, opts ? opts->secret_key_file : NULL);
  if (!rc && !(s->data_real = realpath(data_dir, NULL)))
    rc = dd_err_set(DD_EIO, "data directory %s: %s", data_dir, strerror(errno));
  if (!rc && url) rc = cat__pg_open(s, url, opts->pool_size, opts->pg_schema, opts->pg_push);
  else if (!rc) rc = cat__lmdb_open(s, data_dir, opts ? opts->map_bytes : 0);
  if (!rc) rc = cat__format_check(s);
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

const char *cat_store_backend(const cat_store *s) { return s->be->name; }

void cat_store_close(cat_store *s) {
  if (!s) return;
  if (s->be) s->be->close(s);
  OPENSSL_cleanse(s->key, sizeof s->key);
  free(s->data_real);
  free(s);
}

int cat_store_map_usage(cat_store *s, uint64_t *map_bytes, uint64_t *used_bytes) {
  return s->be->usage(s, map_bytes, used_bytes);
}
