/* app.h: the application object: everything the handlers share (the catalog store, the
 * data directory, configuration) and the one table of methods both transports serve.
 * One dd_app per process (the server singleton); all of it is safe to use from every
 * transport thread once dd_app_open has returned. */
#ifndef DD_SERVER_SERVICE_APP_H
#define DD_SERVER_SERVICE_APP_H

#include <stdbool.h>

#include "server/call/handler.h"

typedef struct dd_app dd_app;

typedef struct dd_app_opts {
  const char *data_dir;      /* created if missing (mode 0700) */
  const char *version;       /* server version string reported by GetServerInfo */
  const char *public_url;    /* base URL clients use, e.g. "http://127.0.0.1:8080" */
  size_t lmdb_map_bytes;     /* LMDB map size; 0 = default (1 GiB) */
  /* Delta Sharing (sharing branch): */
  const char *base_path;     /* REST base path, "/api/v1" (profile endpoint, file URLs) */
  int url_expiry_seconds;    /* lifetime of signed file URLs; 0 = 3600 */
  int audit_retention_days;  /* audit events older than this are purged; 0 = 90 */
  /* A dropped MANAGED table can be undropped this long; then its data is deleted (at the
   * next drop, undrop or dropped-list call, or at start). < 0 = 604800 (7 days). */
  long managed_retention_s;
  /* The catalog on PostgreSQL (docs/scaling.md): read at open only. With catalog_url set,
   * both key files are required (every replica must load the same keys). */
  const char *catalog_url;     /* "postgresql://..."; NULL = LMDB in data_dir */
  const char *catalog_schema;  /* PostgreSQL schema of the deltad_* tables; NULL = default */
  int catalog_pool;            /* connections per process; 0 = 8 */
  const char *secret_key_file; /* credentials' encryption key; NULL = data_dir/secret.key */
  const char *url_key_file;    /* signed-URL key; NULL = data_dir/url_signing.key */
  int catalog_push;            /* 1: read views trust LISTEN/NOTIFY (cat_store_opts.pg_push) */
} dd_app_opts;
#define DD_APP_OPTS_INIT {NULL, "0.1.0", NULL, 0, "/api/v1", 0, 90, 604800, NULL, NULL, 0, NULL, NULL, 0}

/* Opens (or creates) the data directory and its store. On first start it creates the admin
 * token: from DELTAD_ADMIN_TOKEN when set, else random; only its SHA-256 is stored; a
 * random token is written to <data_dir>/admin.token (mode 0600). *out_admin_token_path is
 * set to that path when a token file was written this time (else NULL); caller frees. */
int dd_app_open(dd_app **out, const dd_app_opts *opts, char **out_admin_token_path);
/* True when this open created the admin token from DELTAD_ADMIN_TOKEN (the variable is
 * read at the first start of a data directory only). */
bool dd_app_admin_token_from_env(const dd_app *app);
/* Flushes and closes the store. Accepts NULL. */
void dd_app_close(dd_app *app);

/* The method table (every service), valid for the life of the process. */
const dd_method *dd_app_methods(size_t *out_len);
/* The dd_auth_fn the transports call; app is the dd_app*. */
int dd_app_auth(void *app, const char *token, size_t len, dd_principal *out);

/* Sets the base URL clients use (known once the REST port is bound). Call before serving. */
void dd_app_set_public_url(dd_app *app, const char *url);

/* Accessors used by handlers. */
const dd_app_opts *dd_app_options(const dd_app *app);
/* The catalog store (store/catalog/cat_store.h); borrowed, valid until dd_app_close. */
typedef struct cat_store cat_store;
cat_store *dd_app_store(const dd_app *app);

/* Delta Sharing: the HMAC key of local file URLs (<data_dir>/url_signing.key, created on
 * first start), the URL lifetime in seconds, and the REST base path (never NULL). */
typedef struct sign_local_key sign_local_key;
const sign_local_key *dd_app_url_key(const dd_app *app);
int dd_app_url_expiry_s(const dd_app *app);
const char *dd_app_base_path(const dd_app *app);
/* The process-wide cache of latest Delta snapshots (store/delta dl_cache, keyed by table
 * location, internally locked), so repeated queries of a table replay only new commits. */
typedef struct dl_cache dl_cache;
dl_cache *dd_app_delta_cache(const dd_app *app);
/* The ListShares answers kept by catalog generation (sharing_int.h), internally locked. */
typedef struct shr_list_cache shr_list_cache;
shr_list_cache *dd_app_share_list_cache(const dd_app *app);

/* Appends the engine's metrics (snapshot cache, Delta commits, object-store requests, the
 * LMDB map) in Prometheus' text format to out (common/buf.h). 0 or a DD_E* code. */
typedef struct dd_buf dd_buf;
int dd_app_metrics_write(dd_app *app, dd_buf *out);

/* The audit log (audit_svc.c). Every successful administrator call that changes something
 * is recorded as an admin_change: dd_app_audit_before (the registry's pre-observer) arms
 * the event, so a change to the catalog writes it in its own transaction (cat_audit_arm:
 * both commit or neither); dd_app_audit_observe (the observer) records on its own the
 * changes that wrote nothing to the catalog (maintenance of a table). dd_app_audit_access
 * records a recipient's data access (share, schema, table, the version served and the
 * number of files signed). Recording failures outside a catalog change are logged and never
 * fail the call. */
void dd_app_audit_before(const dd_call *call, const dd_method *m, const ProtobufCMessage *req);
void dd_app_audit_observe(const dd_call *call, const dd_method *m, const ProtobufCMessage *req,
                          const ProtobufCMessage *out, int rc);
void dd_app_audit_access(const dd_call *call, const char *share, const char *schema,
                         const char *table, int64_t version, int64_t files);
/* A table change deltad forwarded to Spark (--spark-connect; the ExecutePlan that carried
 * it is not a change verb): an admin_change with action "SparkForward" and object
 * "op=... location=... spark=sc://...". */
void dd_app_audit_forward(const dd_call *call, const char *op, const char *location, const char *spark);
extern const dd_method dd_admin_methods[]; /* deltad.admin.v1.AdminService */
extern const size_t dd_admin_methods_len;

/* Per-service method tables, concatenated by dd_app_methods(). */
extern const dd_method dd_system_methods[];
extern const size_t dd_system_methods_len;
extern const dd_method dd_catalog_methods[];
extern const size_t dd_catalog_methods_len;
extern const dd_method dd_tables_methods[]; /* TablesService (tables_svc.c) */
extern const size_t dd_tables_methods_len;
/* Deletes the files and records of dropped MANAGED tables past managed_retention_s
 * (tables_svc.c); failures are logged and retried at the next purge. */
void dd_tables_purge(dd_app *app);
extern const dd_method dd_credential_methods[];
extern const size_t dd_credential_methods_len;
extern const dd_method dd_sharing_methods[];     /* DeltaSharingService (sharing_list.c) */
extern const size_t dd_sharing_methods_len;
extern const dd_method dd_sharing_ext_methods[]; /* DeltaSharingExtensionService */
extern const size_t dd_sharing_ext_methods_len;
/* Lance Namespace API (lance_svc.c; indexed by lance_method_index in lance_svc.h) */
extern const dd_method dd_lance_methods[];
extern const size_t dd_lance_methods_len;
extern const dd_method dd_connect_delta_methods[];
extern const size_t dd_connect_delta_methods_len;
extern const dd_method dd_connect_spark_methods[];
extern const size_t dd_connect_spark_methods_len;

#endif
