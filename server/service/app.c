/* app.c: the application object (app.h): opens the data directory and the catalog store,
 * creates the admin token on first start, serves the one method table, and authenticates
 * bearer tokens against the hashes in the store (auth.c holds the token logic). */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <openssl/crypto.h>

#include "common/err.h"
#include "server/service/app.h"
#include "server/service/auth.h"
#include "server/service/sharing_files.h"
#include "server/service/sharing_int.h"
#include "store/catalog/cat_store.h"
#include "store/delta/dl.h"
#include "store/sign/sign.h"

struct dd_app {
  dd_app_opts opts; /* strings owned (copied in dd_app_open) */
  cat_store *store;
  sign_local_key url_key; /* Delta Sharing file URLs */
  dl_cache *delta_cache;  /* latest snapshots of shared tables */
  shr_list_cache *share_lists; /* ListShares answers by catalog generation */
  int admin_token_from_env; /* DELTAD_ADMIN_TOKEN created the admin token at this open */
};

#define APP_DELTA_CACHE_BYTES (1024u * 1024u * 1024u)

/* ---- data directory ------------------------------------------------------------------------ */

/* mkdir -p with mode 0700 for every directory it creates. */
static int app_mkdirs(const char *path) {
  char buf[4096];
  size_t n = strlen(path);
  if (n == 0 || n >= sizeof buf) return dd_err_set(DD_EINVAL, "data_dir: bad path '%s'", path);
  memcpy(buf, path, n + 1);
  for (size_t i = 1; i <= n; i++) {
    if (buf[i] != '/' && buf[i] != '\0') continue;
    char c = buf[i];
    buf[i] = '\0';
    if (mkdir(buf, 0700) != 0 && errno != EEXIST)
      return dd_err_set(DD_EIO, "create %s: %s", buf, strerror(errno));
    buf[i] = c;
  }
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
    return dd_err_set(DD_EIO, "data_dir: '%s' is not a directory", path);
  return 0;
}

/* ---- open / close ------------------------------------------------------------------------- */

static int app_copy_opts(dd_app_opts *dst, const dd_app_opts *src) {
  dst->lmdb_map_bytes = src->lmdb_map_bytes;
  dst->url_expiry_seconds = src->url_expiry_seconds > 0 ? src->url_expiry_seconds : 3600;
  dst->audit_retention_days = src->audit_retention_days > 0 ? src->audit_retention_days : 90;
  dst->managed_retention_s = src->managed_retention_s >= 0 ? src->managed_retention_s : 604800;
  dst->base_path = strdup(src->base_path ? src->base_path : "");
  if (!dst->base_path) return dd_err_set(DD_ENOMEM, "out of memory");
  dst->data_dir = strdup(src->data_dir);
  dst->version = strdup(src->version ? src->version : "0.1.0");
  dst->public_url = src->public_url ? strdup(src->public_url) : NULL;
  if (!dst->data_dir || !dst->version || (src->public_url && !dst->public_url))
    return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

/* Loads (or creates) the key of Delta Sharing's signed file URLs; a key file given in the
 * options is loaded, never created. */
static int app_url_key(dd_app *app, const char *key_file) {
  char path[4096];
  if (key_file && *key_file) return sign_local_key_load(&app->url_key, key_file);
  if ((size_t)snprintf(path, sizeof path, "%s/url_signing.key", app->opts.data_dir) >= sizeof path)
    return dd_err_set(DD_EINVAL, "data_dir: path too long");
  return sign_local_key_load_or_create(&app->url_key, path);
}

int dd_app_open(dd_app **out, const dd_app_opts *opts, char **out_admin_token_path) {
  *out = NULL;
  if (out_admin_token_path) *out_admin_token_path = NULL;
  if (!opts || !opts->data_dir || !*opts->data_dir)
    return dd_err_set(DD_EINVAL, "data_dir: must be set");
  dd_app *app = calloc(1, sizeof *app);
  if (!app) return dd_err_set(DD_ENOMEM, "out of memory");
  cat_store_opts so = CAT_STORE_OPTS_INIT;
  so.map_bytes = opts->lmdb_map_bytes;
  so.catalog_url = opts->catalog_url;
  so.pg_schema = opts->catalog_schema && *opts->catalog_schema ? opts->catalog_schema : NULL;
  so.pool_size = opts->catalog_pool;
  so.pg_push = opts->catalog_push;
  so.secret_key_file = opts->secret_key_file && *opts->secret_key_file ? opts->secret_key_file : NULL;
  int rc = app_copy_opts(&app->opts, opts);
  if (!rc && opts->catalog_url && *opts->catalog_url &&
      (!so.secret_key_file || !opts->url_key_file || !*opts->url_key_file))
    rc = dd_err_set(DD_EINVAL, "catalog on PostgreSQL: --secret-key-file and "
                    "--url-signing-key-file are required (every replica must load the same keys)");
  if (!rc) rc = app_mkdirs(opts->data_dir);
  if (!rc) rc = cat_store_open(&app->store, opts->data_dir, &so);
  if (!rc) rc = dd_auth_bootstrap(app->store, opts->data_dir, out_admin_token_path,
                                   &app->admin_token_from_env);
  if (!rc) rc = app_url_key(app, opts->url_key_file);
  if (!rc) rc = dl_cache_new(&app->delta_cache, APP_DELTA_CACHE_BYTES);
  if (!rc) rc = shr_list_cache_new(&app->share_lists);
  if (!rc) os_set_opener(shr_store_opener, app->store); /* tables by URL: the catalog's */
  if (!rc) dd_tables_purge(app); /* dropped MANAGED tables past their window */
  if (rc) {
    dd_app_close(app);
    return rc;
  }
  *out = app;
  return 0;
}

void dd_app_close(dd_app *app) {
  if (!app) return;
  os_clear_opener(app->store);
  cat_store_close(app->store);
  dl_cache_free(app->delta_cache);
  shr_list_cache_free(app->share_lists);
  free((char *)app->opts.data_dir);
  free((char *)app->opts.version);
  free((char *)app->opts.public_url);
  free((char *)app->opts.base_path);
  OPENSSL_cleanse(&app->url_key, sizeof app->url_key);
  free(app);
}

/* ---- accessors ------------------------------------------------------------------------------ */

const dd_app_opts *dd_app_options(const dd_app *app) { return &app->opts; }

cat_store *dd_app_store(const dd_app *app) { return app->store; }

const sign_local_key *dd_app_url_key(const dd_app *app) { return &app->url_key; }
int dd_app_url_expiry_s(const dd_app *app) { return app->opts.url_expiry_seconds; }
const char *dd_app_base_path(const dd_app *app) { return app->opts.base_path; }
dl_cache *dd_app_delta_cache(const dd_app *app) { return app->delta_cache; }
shr_list_cache *dd_app_share_list_cache(const dd_app *app) { return app->share_lists; }

int dd_app_auth(void *app, const char *token, size_t len, dd_principal *out) {
  return dd_auth_check(((dd_app *)app)->store, token, len, out);
}

/* ---- the method table ------------------------------------------------------------------------ */

static pthread_once_t app_methods_once = PTHREAD_ONCE_INIT;
static dd_method *app_methods;   /* written once under app_methods_once, then read-only */
static size_t app_methods_len;

static void app_methods_build(void) {
  const struct {
    const dd_method *m;
    size_t n;
  } parts[] = {
      {dd_system_methods, dd_system_methods_len},
      {dd_admin_methods, dd_admin_methods_len}, /* audit log and backup (audit_svc.c) */
      {dd_catalog_methods, dd_catalog_methods_len},
      {dd_tables_methods, dd_tables_methods_len}, /* Delta tables in the catalog (tables_svc.c) */
      {dd_credential_methods, dd_credential_methods_len},
      {dd_sharing_methods, dd_sharing_methods_len},
      {dd_sharing_ext_methods, dd_sharing_ext_methods_len},
      {dd_sharing_file_methods, dd_sharing_file_methods_len}, /* sharing_files.c */
      {dd_lance_methods, dd_lance_methods_len}, /* Lance Namespace API (lance_svc.c) */
      {dd_connect_delta_methods, dd_connect_delta_methods_len},
      {dd_connect_spark_methods, dd_connect_spark_methods_len},
  };
  size_t total = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) total += parts[i].n;
  dd_method *t = malloc(total * sizeof *t);
  if (!t) return; /* dd_app_methods reports an empty table */
  size_t o = 0;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    memcpy(t + o, parts[i].m, parts[i].n * sizeof *t);
    o += parts[i].n;
  }
  app_methods = t;
  app_methods_len = total;
}

const dd_method *dd_app_methods(size_t *out_len) {
  pthread_once(&app_methods_once, app_methods_build);
  *out_len = app_methods_len;
  return app_methods;
}

/* Called once by main after the REST port is bound and before any handler reads the URL
 * (handlers that build URLs are not served until then). */
void dd_app_set_public_url(dd_app *app, const char *url) {
  char *copy = strdup(url);
  if (!copy) return;
  free((char *)app->opts.public_url);
  app->opts.public_url = copy;
}

bool dd_app_admin_token_from_env(const dd_app *app) { return app->admin_token_from_env != 0; }
