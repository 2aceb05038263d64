/* cat_store.h: the catalog store, deltad's persistent state in LMDB (or PostgreSQL, shared
 * by replicas: cat_store_opts.catalog_url, docs/scaling.md): catalogs, schemas,
 * credentials (secrets encrypted at rest), storage locations and API token hashes.
 *
 * The records are the API's own protobuf messages (CatalogInfo, SchemaInfo, Credential,
 * StorageLocation), so a get returns exactly what a handler answers. Mutating calls take
 * the API request message, validate it (errors name the field), and run as one write
 * transaction: on any failure nothing is written. Names are unique case-insensitively
 * (ASCII letters fold; other bytes compare exactly) and keep the case they were given.
 *
 * Ownership: every message returned through `out` is a heap tree owned by the caller and
 * freed with protobuf_c_message_free_unpacked(&(*out)->base, NULL). `actor` is the calling
 * principal's name, recorded as owner / created_by / updated_by.
 *
 * Threads: a cat_store may be used from any number of threads at once (the environment is
 * opened with MDB_NOTLS); writers are serialized by LMDB (on PostgreSQL by a row lock
 * across all replicas), readers never block. The key
 * layout and the on-disk format are described in cat_internal.h.
 *
 * Reads: each read call below is one read transaction of its own. A request that makes
 * several lookups opens a read view (cat_view_open) and makes them through the cat_view_*
 * functions: one transaction, one consistent state for all of them. */
#ifndef DD_STORE_CATALOG_CAT_STORE_H
#define DD_STORE_CATALOG_CAT_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/credentials/v1/credentials.pb-c.h"
#include "deltad/sharing/v1/sharing.pb-c.h" /* Delta Sharing records (cat_share*.c) */
#include "deltad/lance/v1/lance.pb-c.h" /* Lance namespaces and tables (below) */
#include "deltad/admin/v1/admin.pb-c.h" /* audit events (cat_audit.c) */
#include "deltad/tables/v1/tables.pb-c.h" /* Delta tables (cat_dtable*.c) */

typedef struct cat_store cat_store;

typedef struct cat_store_opts {
  size_t map_bytes;            /* LMDB map size; 0 = 1 GiB */
  const char *catalog_url;     /* "postgresql://..." (libpq URL): the PostgreSQL backend;
                                * NULL or "": LMDB in the data directory */
  int pool_size;               /* PostgreSQL connections per process; 0 = 8 */
  const char *pg_schema;       /* PostgreSQL schema for the tables (created if absent);
                                * NULL: the connection's search_path */
  const char *secret_key_file; /* the secrets key (32 bytes, 0600, must exist); NULL:
                                * <data_dir>/secret.key, created on first open */
  int pg_push;                 /* PostgreSQL: 1 = a read view trusts the generation pushed
                                * by LISTEN/NOTIFY (no round trip while nothing changed;
                                * another replica's commit is seen once its notification
                                * arrived); 0 = one round trip per view (never stale) */
} cat_store_opts;
#define CAT_STORE_OPTS_INIT {0, NULL, 0, NULL, NULL, 0}

/* Opens or creates the store in data_dir (which must exist): the LMDB environment in
 * <data_dir>/catalog.mdb/ and the secrets key in <data_dir>/secret.key (created on first
 * open, mode 0600). DD_EPRECOND when secret.key is readable by group or others;
 * DD_ECORRUPT when it is not 32 bytes. opts may be NULL. */
int cat_store_open(cat_store **out, const char *data_dir, const cat_store_opts *opts);
/* "lmdb" or "postgresql". */
const char *cat_store_backend(const cat_store *store);
/* Flushes to disk and closes. Accepts NULL. No other call may be running. */
void cat_store_close(cat_store *store);

/* How many LMDB transactions the store has begun since it was opened (every call and every
 * read view counts, successful or not). Relaxed atomics: exact once the calls counted have
 * returned; for tests and diagnostics. */
typedef struct cat_store_stats {
  uint64_t read_txns;
  uint64_t write_txns;
} cat_store_stats;
cat_store_stats cat_store_stats_get(cat_store *store);

/* ---- the audit log (cat_audit.c) --------------------------------------------------------
 * Events in time order under their own sub-database. */

/* Appends ev (borrowed; its id and time_ms are assigned here and ignored on input) in one
 * write transaction, which also deletes up to 256 of the oldest events older than
 * retention_ms (0: keep all). Returns 0 or DD_E*. */
int cat_audit_append(cat_store *store, const Deltad__Admin__V1__AuditEvent *ev, int64_t retention_ms);
/* Arms an audit event (copied) for the change this thread is about to make in s: the first
 * write transaction of s this thread commits afterwards writes it too, so the change and
 * its record commit together or not at all (if the event cannot be written, the change
 * fails). Empty id_after / id_before are filled with the first record id that transaction
 * writes / deletes. Replaces an event still armed. 0 or DD_ENOMEM. */
int cat_audit_arm(cat_store *s, const Deltad__Admin__V1__AuditEvent *ev, int64_t retention_ms);
/* Disarms this thread's event; 1 when it was written with a change, else 0 (then the caller
 * may append it on its own: cat_audit_append). */
int cat_audit_disarm(void);
/* Lists events, oldest first, matching the request's filters (recipient: the principal
 * name of recipient events; kind; since_ms), a page at a time (max_results 1-1000, default
 * 100; page_token is the last id returned). *out is the caller's (free with
 * protobuf_c_message_free_unpacked). DD_EINVAL for a bad token or page size. */
int cat_audit_list(cat_store *store, const Deltad__Admin__V1__ListAuditEventsRequest *req,
                   Deltad__Admin__V1__ListAuditEventsResponse **out);

/* An online, consistent copy of the catalog store into dir (created 0700 if absent, must be
 * empty): LMDB through mdb_env_copy2 with compaction (one read transaction: writers go on),
 * then the secrets key. files[] (caller frees each and the array, also on error) lists what
 * was written.
 * DD_EEXISTS when dir is not empty; DD_EIO otherwise; DD_EUNSUPPORTED (saying to use
 * pg_dump, nothing written) when the catalog is on PostgreSQL. */
int cat_store_backup(cat_store *store, const char *dir, char ***files, size_t *n_files,
                     uint64_t *bytes);

/* The LMDB environment's map size and the bytes its pages use (last page + 1, times the
 * page size), for metrics. 0 or DD_E*; DD_EUNSUPPORTED on PostgreSQL. */
int cat_store_map_usage(cat_store *store, uint64_t *map_bytes, uint64_t *used_bytes);

/* ---- read views ----------------------------------------------------------------------
 * A read view is one read transaction (LMDB; on PostgreSQL the catalog generation read at
 * the open, answers from the per-replica read cache for it, and a REPEATABLE READ snapshot
 * taken at the first read the cache cannot answer, cat_kv_pg.c): every cat_view_* read sees
 * one committed state, and begins no transaction of its own. On LMDB it is the state when
 * the view was opened; on PostgreSQL a state no older than the open, fixed by the view's
 * first read (a commit between two reads that changed what the view had read fails the
 * later read with DD_ECONFLICT instead of mixing two states). Each cat_view_x behaves
 * (arguments, errors, ownership) exactly as the per-call function it is named after, which
 * is implemented over it. Results are heap messages owned by the caller and stay valid after
 * the view closes. A view is used by one thread at a time (it may move between threads) and
 * is closed before the store. Keep views short (one request's lookups, not a whole stream):
 * an open view holds one of the environment's 512 reader slots (or one of the PostgreSQL
 * pool's connections) and keeps the pages it sees from being reused by writers. */
typedef struct cat_view cat_view;
int cat_view_open(cat_store *store, cat_view **out);
/* Accepts NULL; a view ended (cat_view_end) or bound (then unbound) too. */
void cat_view_close(cat_view *view);
/* Binds view to this thread as its call view (NULL: unbinds) and returns the one bound
 * before. While bound, every read transaction of view's store begun on this thread (each
 * per-call read function, cat_view_open, the token check) shares view's transaction
 * instead of beginning one: a call reads one state in one transaction (one PostgreSQL
 * round trip while the catalog is unchanged). A write transaction begun on the thread
 * unbinds view first, so the call's later reads see its writes (and ends view's
 * transaction when no open view shares it). Unbind before the view moves to another
 * thread; a view shared by an open cat_view_open view must outlive it. */
cat_view *cat_view_bind(cat_view *view);
/* The view of store bound to this thread with its transaction still open (borrowed: the
 * binder owns it), or NULL. */
cat_view *cat_view_bound(cat_store *store);
/* Ends view's transaction now (its reader slot or connection is free again); view is
 * still closed with cat_view_close. Nothing when view is bound to this thread, or already
 * ended. Accepts NULL. */
void cat_view_end(cat_view *view);
/* The generation of the state view reads: two views of one store with the same generation
 * read the same committed state, and a commit (any write: a grant, a revoke, a new token)
 * gives later views another. For caches of answers derived from the catalog, keyed by it:
 * an answer kept for generation g is right for every view at g. 0; DD_EUNSUPPORTED (with
 * a message) on PostgreSQL, whose read views may move forward between reads (cache
 * nothing there); DD_EINTERNAL for an ended view. */
int cat_view_generation(cat_view *view, uint64_t *out);

/* ---- validation (also used by the services for early checks) ---------------------- */

/* 0 if name is a valid object name: 1..255 bytes of valid UTF-8, no '/', no control
 * characters, and no '.' when dotted_ok is 0 (catalog and schema names). Else DD_EINVAL
 * with a message naming `field`. */
int cat_name_check(const char *field, const char *name, int dotted_ok);

/* ---- catalogs ------------------------------------------------------------------------ */

typedef Deltad__Catalog__V1__CatalogInfo cat_catalog;
typedef Deltad__Catalog__V1__SchemaInfo cat_schema;

int cat_catalog_create(cat_store *s, cat_catalog **out, const char *actor,
                       const Deltad__Catalog__V1__CreateCatalogRequest *req);
int cat_catalog_get(cat_store *s, cat_catalog **out, const char *name);
/* Changes comment / name only when their oneof is set; properties replace when non-empty.
 * A rename keeps the id and renames the catalog's schemas (catalog_name, full_name). */
int cat_catalog_update(cat_store *s, cat_catalog **out, const char *actor,
                       const Deltad__Catalog__V1__UpdateCatalogRequest *req);
/* DD_EPRECOND when the catalog has schemas and force is false; with force they go too. */
int cat_catalog_delete(cat_store *s, const char *name, int force);
int cat_catalog_list(cat_store *s, Deltad__Catalog__V1__ListCatalogsResponse **out,
                     const Deltad__Catalog__V1__ListCatalogsRequest *req);

/* ---- schemas (addressed by full name "catalog.schema") ------------------------------- */

/* Splits "catalog.schema" at its one dot into the two buffers (each 256 bytes).
 * DD_EINVAL naming `field` when it is not exactly two valid names. */
int cat_full_name_split(const char *field, const char *full, char cat[256], char sch[256]);

int cat_schema_create(cat_store *s, cat_schema **out, const char *actor,
                      const Deltad__Catalog__V1__CreateSchemaRequest *req);
int cat_schema_get(cat_store *s, cat_schema **out, const char *full_name);
int cat_schema_update(cat_store *s, cat_schema **out, const char *actor,
                      const Deltad__Catalog__V1__UpdateSchemaRequest *req);
/* DD_EPRECOND when the schema holds tables (Delta or Lance) and force is false; with force
 * they go too (dropped MANAGED Delta tables wait for their purge). */
int cat_schema_delete(cat_store *s, const char *full_name, int force);
/* DD_EINVAL without catalog_name; DD_ENOTFOUND when the catalog does not exist. */
int cat_schema_list(cat_store *s, Deltad__Catalog__V1__ListSchemasResponse **out,
                    const Deltad__Catalog__V1__ListSchemasRequest *req);

/* ---- credentials ---------------------------------------------------------------------- */

typedef Deltad__Credentials__V1__Credential cat_credential;
typedef Deltad__Credentials__V1__StorageLocation cat_location;

/* Stores the credential: its public part (secrets blanked) as the record, the whole of it
 * encrypted (AES-256-GCM) beside. *out is the public part. */
int cat_credential_create(cat_store *s, cat_credential **out, const char *actor,
                          const Deltad__Credentials__V1__CreateCredentialRequest *req);
/* The public part only: secret fields are empty strings. */
int cat_credential_get(cat_store *s, cat_credential **out, const char *name);
/* Internal use (URL signing): the whole credential with its secrets, decrypted. Never
 * return it to a client. DD_ECORRUPT when the ciphertext does not authenticate. */
int cat_credential_get_secret(cat_store *s, cat_credential **out, const char *name);
int cat_view_credential_secret(cat_view *v, cat_credential **out, const char *name);
/* DD_EPRECOND naming a storage location that still uses it. */
int cat_credential_delete(cat_store *s, const char *name);
int cat_credential_list(cat_store *s, Deltad__Credentials__V1__ListCredentialsResponse **out,
                        const Deltad__Credentials__V1__ListCredentialsRequest *req);

/* ---- storage locations ---------------------------------------------------------------- */

/* The url needs a scheme (file, s3, abfss, ...) except for type LOCAL, where a plain path
 * is accepted. The credential must exist (matched case-insensitively; recorded under its
 * own spelling) unless the type is LOCAL or the url is file://...; then it is optional.
 * S3 needs an aws credential and AZURE an azure one. An unspecified type is inferred from
 * the url scheme (file, s3/s3a, abfss/abfs/az/wasbs, gs); DD_EINVAL when it cannot be. */
int cat_location_create(cat_store *s, cat_location **out, const char *actor,
                        const Deltad__Credentials__V1__CreateStorageLocationRequest *req);
int cat_location_get(cat_store *s, cat_location **out, const char *name);
int cat_view_location_get(cat_view *v, cat_location **out, const char *name);
int cat_location_delete(cat_store *s, const char *name);
int cat_location_list(cat_store *s,
                      Deltad__Credentials__V1__ListStorageLocationsResponse **out,
                      const Deltad__Credentials__V1__ListStorageLocationsRequest *req);
/* Calls fn(arg, location) for every storage location in name order (loc is borrowed for
 * the call), in one cursor walk. A non-zero return from fn stops the walk and is returned
 * (1: "found"). fn runs inside the walk's read transaction and may read through the same
 * view. */
typedef int (*cat_location_walk_fn)(void *arg, const cat_location *loc);
int cat_location_walk(cat_store *s, cat_location_walk_fn fn, void *arg);
int cat_view_location_walk(cat_view *v, cat_location_walk_fn fn, void *arg);
/* The storage location whose url is the longest prefix of url, ending at a '/' of url or
 * at its end (a trailing '/' on the location's url is ignored); among equally long ones the
 * first in name order. One walk over the locations. DD_ENOTFOUND "no storage location
 * covers '<url>'" when none does. */
int cat_view_location_covering(cat_view *v, cat_location **out, const char *url);

/* ---- confinement (cat_confine.c) ------------------------------------------------------
 * What the server may touch: a table location (an absolute path, a file:// URL or an
 * object-store URL) must lie under a registered storage location, and a local one must not
 * overlap the data directory (neither inside it nor containing it). Local paths are
 * compared by real path (the realpath of the longest existing prefix), object-store URLs
 * by text at '/' boundaries ("." and ".." segments refused). */

/* 0 when url is covered; *out_location (may be NULL) gets the covering location's name
 * (malloc'ed). DD_EPERM "<what> '<url>' is not under any registered storage location ..."
 * naming the file:// URL a LOCAL location would need to cover; DD_EPERM when it overlaps
 * the data directory; DD_EINVAL for a relative path or "."/".." in an object URL. */
int cat_location_confine(cat_store *s, char **out_location, const char *what, const char *url);
int cat_view_location_confine(cat_view *v, char **out_location, const char *what,
                              const char *url);
/* DD_EPERM when the real path `real` is inside the data directory or contains it. */
int cat_data_dir_overlap(cat_store *s, const char *real);
/* The real paths of every local storage location (NULL-terminated array of n). Free with
 * cat_roots_free. */
int cat_location_local_roots(cat_store *s, char ***out, size_t *n);
void cat_roots_free(char **roots, size_t n);
/* 1 when the absolute path (or file:// URL) lies, by real path, under one of roots (from
 * cat_location_local_roots) and away from the data directory; else 0. For checking many
 * paths (a clone's files) without walking the locations each time. */
int cat_roots_cover(cat_store *s, char *const *roots, size_t n, const char *path);
/* realpath of the longest existing prefix of the absolute path, with the missing rest
 * appended (DD_EINVAL when that rest has "." or ".."). *out malloc'ed. */
int cat_real_prefix(char **out, const char *path);

/* ---- API tokens (only SHA-256 hashes are kept) ---------------------------------------- */

enum { CAT_TOKEN_HASH_LEN = 32 };

typedef enum { CAT_TOKEN_ADMIN = 1, CAT_TOKEN_RECIPIENT = 2 } cat_token_kind;

typedef struct cat_token_rec {
  cat_token_kind kind;
  char name[256];     /* principal name */
  char id[40];        /* principal id ("" for admin) */
  int64_t expiry_ms;  /* epoch ms; 0 = never expires */
} cat_token_rec;

/* SHA-256 of a presented token (bytes, not NUL-terminated): the key tokens are kept under. */
int cat_token_hash(unsigned char out[CAT_TOKEN_HASH_LEN], const char *token, size_t len);
/* Puts (or replaces) the token whose SHA-256 is hash. */
int cat_token_put(cat_store *s, const unsigned char hash[CAT_TOKEN_HASH_LEN],
                  const cat_token_rec *rec);
/* DD_ENOTFOUND when no token has this hash. Does not check expiry. */
int cat_token_lookup(cat_store *s, cat_token_rec *out,
                     const unsigned char hash[CAT_TOKEN_HASH_LEN]);
/* DD_ENOTFOUND when absent. */
int cat_token_delete(cat_store *s, const unsigned char hash[CAT_TOKEN_HASH_LEN]);
/* Sets *out to 1 when some token of this kind is stored, else 0. */
int cat_token_has_kind(cat_store *s, int *out, cat_token_kind kind);

/* ---- Delta Sharing: shares, recipients, grants (cat_share*.c, cat_recipient*.c) ------- */

typedef Deltad__Sharing__V1__ShareInfo cat_share;
typedef Deltad__Sharing__V1__SharingSchemaInfo cat_share_schema;
typedef Deltad__Sharing__V1__SharedTable cat_shared_table;
typedef Deltad__Sharing__V1__Recipient cat_recipient;

/* A share is one record holding its schemas and their tables (sorted by lower-cased
 * name). Table names are unique within a schema, schema names within a share. */
int cat_share_create(cat_store *s, cat_share **out, const char *actor,
                     const Deltad__Sharing__V1__CreateShareRequest *req);
/* The whole share, with its schemas and tables. */
int cat_share_get(cat_store *s, cat_share **out, const char *name);
int cat_view_share_get(cat_view *v, cat_share **out, const char *name);
/* Renames (keeping the id and the grants), changes the description / properties. */
int cat_share_update(cat_store *s, cat_share **out, const char *actor,
                     const Deltad__Sharing__V1__UpdateShareRequest *req);
/* DD_EPRECOND when it has schemas and force is false. Its grants go with it. */
int cat_share_delete(cat_store *s, const char *name, int force);
int cat_share_list(cat_store *s, Deltad__Sharing__V1__ListShareInfosResponse **out,
                   const Deltad__Sharing__V1__ListShareInfosRequest *req);
int cat_share_schema_create(cat_store *s, cat_share_schema **out, const char *actor,
                            const Deltad__Sharing__V1__CreateSharingSchemaRequest *req);
/* DD_EPRECOND when it has tables and force is false. */
int cat_share_schema_delete(cat_store *s, const char *share, const char *name, int force);
/* Exactly one of url (file://..., s3://..., ...) or location (+ path) names the table. */
int cat_share_table_add(cat_store *s, cat_shared_table **out, const char *actor,
                        const Deltad__Sharing__V1__AddTableRequest *req);
int cat_share_table_update(cat_store *s, cat_shared_table **out,
                           const Deltad__Sharing__V1__UpdateTableRequest *req);
int cat_share_table_remove(cat_store *s, const char *share, const char *schema,
                           const char *name);
/* Finds a shared table by its share's id and its own id (local file URLs carry both);
 * DD_ENOTFOUND when either is gone. */
int cat_share_table_find(cat_store *s, cat_shared_table **out, const char *share_id,
                         const char *table_id);
int cat_view_share_table_find(cat_view *v, cat_shared_table **out, const char *share_id,
                              const char *table_id);

/* Calls fn(arg, share_lname, share_id) for the shares visible to a principal, in name
 * order, starting strictly after `after` (a lname; "" for the start): every share when
 * recipient_id is NULL (admin), else the shares granted to that recipient. A non-zero
 * return from fn stops the walk and is returned (1 is a conventional "enough"). */
typedef int (*cat_share_walk_fn)(void *arg, const char *lname, const char *id);
int cat_share_walk(cat_store *s, const char *recipient_id, const char *after,
                   cat_share_walk_fn fn, void *arg);
/* fn may read through v (cat_view_share_by_id) while the walk runs. */
int cat_view_share_walk(cat_view *v, const char *recipient_id, const char *after,
                        cat_share_walk_fn fn, void *arg);
/* The share by id (as cat_share_get). */
int cat_share_get_by_id(cat_store *s, cat_share **out, const char *id);
int cat_view_share_by_id(cat_view *v, cat_share **out, const char *id);

/* Recipients. The bearer token is made by the caller; only its SHA-256 is given here.
 * expiry_ms 0 means it never expires. */
int cat_recipient_create(cat_store *s, cat_recipient **out, const char *actor,
                         const char *name, const char *comment,
                         const unsigned char hash[CAT_TOKEN_HASH_LEN], int64_t expiry_ms);
/* token_hashes is blanked in what is returned by get and list. */
int cat_recipient_get(cat_store *s, cat_recipient **out, const char *name);
int cat_recipient_list(cat_store *s, Deltad__Sharing__V1__ListRecipientsResponse **out,
                       const Deltad__Sharing__V1__ListRecipientsRequest *req);
/* Deletes the recipient, its tokens and its grants. */
int cat_recipient_delete(cat_store *s, const char *name);
/* Adds a new token; the old ones expire at old_expiry_ms (<= now: deleted at once). */
int cat_recipient_rotate(cat_store *s, cat_recipient **out, const char *name,
                         const unsigned char hash[CAT_TOKEN_HASH_LEN], int64_t expiry_ms,
                         int64_t old_expiry_ms);
/* Grants: DD_EEXISTS is not returned (granting twice is a no-op); revoke of a grant that
 * does not exist is DD_ENOTFOUND. */
int cat_grant_add(cat_store *s, const char *share, const char *recipient);
int cat_grant_remove(cat_store *s, const char *share, const char *recipient);
/* The generation of the grant of share_id to recipient_id (ids, not names): a UUID made
 * when the grant was made ("0" for grants older than generations). DD_ENOTFOUND when
 * there is no such grant (revoked, or the share or recipient is gone).
 * Signed file URLs carry the generation and are checked with this. */
int cat_grant_generation(cat_store *s, const char *share_id, const char *recipient_id,
                         char gen[40]);
int cat_view_grant_generation(cat_view *v, const char *share_id, const char *recipient_id,
                              char gen[40]);
/* Grants of a share (share != "") or of a recipient. */
int cat_grant_list(cat_store *s, Deltad__Sharing__V1__ListGrantsResponse **out,
                   const char *share, const char *recipient);
/* 0 when recipient_id may read the share named share_name (and *share_id is set);
 * DD_ENOTFOUND otherwise (whether or not the share exists). */
int cat_grant_check(cat_store *s, const char *recipient_id, const char *share_name,
                    char share_id[40]);
int cat_view_grant_check(cat_view *v, const char *recipient_id, const char *share_name,
                         char share_id[40]);
/* ---- Delta tables in the catalog (cat_dtable.c, cat_dtable_drop.c) -------------------------
 * A table record (TableInfo) lives in a schema, addressed as "catalog.schema.table". Names
 * are unique case-insensitively within a schema across Delta and Lance tables (one name
 * check each way). Records hold the catalog's view (id, type, location, owner, comment,
 * properties, times); what a Delta snapshot says (columns, version, ...) is the caller's to
 * add. Every call is one transaction. Messages returned carry catalog_name, schema_name and
 * full_name as they are now. */

typedef Deltad__Tables__V1__TableInfo cat_dtable;

enum { CAT_DTABLE_LOCATION_MAX = 4096 };

/* Splits "catalog.schema.table" into three names (each 256 bytes; DD_EINVAL naming field). */
int cat_table_name_split(const char *field, const char *full, char cat[256], char sch[256],
                         char tbl[256]);

typedef struct cat_dtable_new {
  const Deltad__Tables__V1__CreateTableRequest *req; /* name, catalog/schema, comment, props */
  const char *location; /* where the data is (checked by the caller: cat_location_confine) */
  bool managed;
  const char *id;       /* the record's id (made by cat_new_id), or NULL for a fresh one */
} cat_dtable_new;

/* A fresh record id (a UUID v4 string). */
int cat_new_id(char out[37]);
/* Records the table. DD_ENOTFOUND "schema ... not found"; DD_EEXISTS when the name is taken
 * (by a Delta or Lance table); DD_EINVAL for a bad name, type or location. */
int cat_dtable_create(cat_store *s, cat_dtable **out, const char *actor, const cat_dtable_new *nw);
/* The storage root MANAGED tables of catalog.schema go under: the schema's storage_root,
 * else its catalog's (malloc'ed). DD_ENOTFOUND for an unknown schema; DD_EPRECOND when
 * neither has one. */
int cat_dtable_storage_root(cat_store *s, char **out, const char *catalog, const char *schema);
/* DD_ENOTFOUND "table ... not found" (also for an unknown catalog or schema). */
int cat_dtable_get(cat_store *s, cat_dtable **out, const char *full_name);
int cat_view_dtable_get(cat_view *v, cat_dtable **out, const char *full_name);
/* By id, dropped ones included. DD_ENOTFOUND when absent. */
int cat_dtable_get_by_id(cat_store *s, cat_dtable **out, const char *id);
/* One page of a schema's tables in name order (max_results/page_token as the other lists). */
int cat_dtable_list(cat_store *s, Deltad__Tables__V1__ListTablesResponse **out,
                    const Deltad__Tables__V1__ListTablesRequest *req);
/* Rename (same schema, keeps the id), comment, owner, properties (replace when non-empty). */
int cat_dtable_update(cat_store *s, cat_dtable **out, const char *actor,
                      const Deltad__Tables__V1__UpdateTableRequest *req);
/* EXTERNAL: the record goes (data untouched). MANAGED: the name is freed and the record kept
 * as dropped (deleted_at = now) until cat_dtable_undrop or a purge. *out (may be NULL) gets
 * what it was. */
int cat_dtable_delete(cat_store *s, cat_dtable **out, const char *full_name);
/* Gives a dropped MANAGED table its name back (the newest dropped with that name, or the one
 * with id table_id when not ""). DD_ENOTFOUND when none; DD_EEXISTS when the name is taken. */
int cat_dtable_undrop(cat_store *s, cat_dtable **out, const char *actor, const char *full_name,
                      const char *table_id);
/* The dropped tables of a schema (catalog/schema ""/"": every schema). */
int cat_dtable_list_dropped(cat_store *s, Deltad__Tables__V1__ListTablesResponse **out,
                            const char *catalog, const char *schema);
/* The dropped tables whose deleted_at is at or before cutoff_ms (at most max): their data
 * is the caller's to delete, then cat_dtable_purge_done removes each record. */
int cat_dtable_purge_due(cat_store *s, Deltad__Tables__V1__ListTablesResponse **out,
                         int64_t cutoff_ms, size_t max);
int cat_dtable_purge_done(cat_store *s, const char *id);

/* ---- Lance namespaces and tables (cat_namespace.c, cat_table.c) ----------------------------
 * Added for the Lance Namespace API (server/service/lance_svc.c). A namespace is addressed by
 * its path: depth names, one per level; depth 0 is the root, which always exists and holds
 * the catalogs. Level 1 IS a catalog and level 2 IS a schema (the records above, properties
 * included: what one API writes the other reads); levels 3 and deeper are NamespaceInfo
 * records. Names at levels 1 and 2 follow cat_name_check(.., 0); deeper namespaces and tables
 * may contain '.'. Tables live in any namespace but the root. Paths in messages are joined
 * with '$' (the Lance default delimiter). Every call is one transaction, as above. */

typedef Deltad__Lance__V1__NamespaceInfo cat_namespace;
typedef Deltad__Lance__V1__TableInfo cat_lance_table;

enum { CAT_NS_MAX_DEPTH = 256 }; /* deepest path accepted (DD_EINVAL beyond) */

typedef enum {
  CAT_NS_CREATE = 0,  /* DD_EEXISTS when it exists */
  CAT_NS_EXIST_OK,    /* an existing namespace is returned as it is */
  CAT_NS_OVERWRITE    /* an existing namespace is dropped with everything in it, then created */
} cat_ns_create_mode;

/* DD_EINVAL naming "id[i]" when a name of the path is invalid for its level, or the path is
 * deeper than CAT_NS_MAX_DEPTH. `table` is 1 when the last name is a table's. */
int cat_ns_path_check(const char *const *path, size_t depth, int table);

/* Creates the namespace at path; its parent must exist (DD_ENOTFOUND). props is any
 * *_PropertiesEntry array. The root: CAT_NS_EXIST_OK returns it, CAT_NS_CREATE gives
 * DD_EEXISTS, CAT_NS_OVERWRITE DD_EINVAL. *out is the namespace (new or existing). */
int cat_ns_create(cat_store *s, cat_namespace **out, const char *actor, const char *const *path,
                  size_t depth, cat_ns_create_mode mode, size_t n_props, void *const *props);
/* The namespace at path (level 0 for the root); DD_ENOTFOUND when absent. */
int cat_ns_get(cat_store *s, cat_namespace **out, const char *const *path, size_t depth);
/* Drops the namespace at path and returns what it was in *out (may be NULL). Without
 * cascade DD_EPRECOND when it holds namespaces or tables; with cascade they go too (tables
 * are deregistered: their data is not touched). DD_EINVAL for the root. */
int cat_ns_drop(cat_store *s, cat_namespace **out, const char *const *path, size_t depth,
                int cascade);
/* One page of the names of path's child namespaces, in case-insensitive name order. limit
 * 0 = 1000, larger values are capped at 1000, negative ones refused. page_token is "" or
 * the last name of the previous page (names strictly after it follow); the response's
 * page_token is "" on the last page. */
int cat_ns_list(cat_store *s, Deltad__Lance__V1__ListNamespacesResponse **out,
                const char *const *path, size_t depth, int32_t limit, const char *page_token);

/* Registers the table at path (namespace path + table name; depth >= 2) at location (a
 * path or URL, kept as given). DD_EEXISTS when registered unless overwrite (then the
 * registration is replaced). DD_ENOTFOUND when the namespace does not exist. */
int cat_lance_table_register(cat_store *s, cat_lance_table **out, const char *actor,
                             const char *const *path, size_t depth, const char *location,
                             int overwrite, size_t n_props, void *const *props);
/* DD_ENOTFOUND when the table (or its namespace) does not exist. */
int cat_lance_table_get(cat_store *s, cat_lance_table **out, const char *const *path,
                        size_t depth);
/* Removes the registration and returns it in *out (may be NULL); data is not touched. */
int cat_lance_table_deregister(cat_store *s, cat_lance_table **out, const char *const *path,
                               size_t depth);
/* One page of the table names in the namespace at path, as cat_ns_list. The root holds no
 * tables: its list is empty. */
int cat_lance_table_list(cat_store *s, Deltad__Lance__V1__ListTablesResponse **out,
                         const char *const *path, size_t depth, int32_t limit,
                         const char *page_token);

#endif
