/* cat_internal.h: what the catalog store keeps, and the helpers its files share.
 *
 * The layout below is the same on both backends (cat_kv.h): on LMDB each sub-database is a
 * named LMDB database; on PostgreSQL it is the rows of the table deltad_kv whose `db` is the
 * CAT__DB_* number below (cat_kv_pg.c), with the same keys and values.
 *
 * FILES (LMDB)
 *   <data_dir>/catalog.mdb/data.mdb, lock.mdb   the LMDB environment (a directory env)
 *   <data_dir>/secret.key                       32 random bytes, mode 0600: the AES-256-GCM
 *                                               key for credential secrets
 *
 * The environment is opened with MDB_NOTLS (transactions are not tied to threads: the
 * transports run handlers on thread pools) and default durability: every commit is synced
 * before it returns, so a crash (kill -9, power loss) leaves exactly the last committed
 * state. cat_store_close syncs once more. Every mutating call is one write transaction
 * that is either committed or aborted as a whole.
 *
 * NAMED SUB-DATABASES (all keys compare bytewise, LMDB's default)
 *
 *   meta          "format" -> "1"                      layout version, checked on open
 *
 *   catalogs      id -> CatalogInfo (packed protobuf)   id is a 36-char UUID v4 string
 *   catalog_names lname -> id                           lname: the name, ASCII lower-cased
 *
 *   schemas       schema_id -> SchemaInfo (packed)      catalog_name/full_name hold the
 *                                                       catalog's current display name and
 *                                                       are rewritten when it is renamed
 *   schema_names  catalog_id "/" lname -> schema_id     keyed by the catalog's id, so a
 *                                                       catalog rename leaves them alone;
 *                                                       a prefix scan lists one catalog
 *
 *   credentials   id -> Credential (packed), its secret fields blanked ("")
 *   credential_secrets
 *                 id -> 0x01 | nonce[12] | AES-256-GCM(packed full Credential) | tag[16]
 *                 AAD is the 36-byte id, so a value moved to another id fails to decrypt
 *   credential_names
 *                 lname -> id
 *
 *   locations     id -> StorageLocation (packed); `credential` holds the credential's
 *                 display name as stored on the credential
 *   location_names lname -> id
 *   credential_uses
 *                 credential_id "/" location_id -> ""   which locations use a credential
 *                                                       (checked by credential delete)
 *
 *   tokens        SHA-256(token)[32] -> token record:
 *                   u8 version (1) | u8 kind | i64 expiry_ms (big-endian) |
 *                   hash[32] (compared with CRYPTO_memcmp on lookup) |
 *                   u8 name_len | name | u8 id_len | id
 *
 *   -- Delta Sharing (cat_share.c, cat_recipient.c) --
 *   shares        id -> ShareInfo (packed), the whole share: its schemas, each with its
 *                 shared tables, nested (schemas and tables sorted by lname); a share is
 *                 small configuration, read and rewritten as one record
 *   share_names   lname -> id
 *   recipients    id -> Recipient (packed); token_hashes lists the SHA-256 of its live
 *                 tokens, whose records are in `tokens` (kind RECIPIENT, id = recipient id)
 *   recipient_names lname -> id
 *   share_grants  share_id "/" recipient_id -> recipient_id   who may read a share
 *   recipient_grants
 *                 recipient_id "/" share_lname -> share_id    what a recipient may read,
 *                                                             in share-name order (paging);
 *                                                             rewritten when a share is renamed
 *   grant_gens    share_id "/" recipient_id -> generation    a fresh UUID per grant, written
 *                 when a grant is made (a revoke deletes it): signed file URLs carry it, so
 *                 a URL dies with its grant and does not come back with a new one. Entries
 *                 left by deleted shares or recipients match no live grant.
 *   (Lance Namespace API, cat_namespace.c / cat_table.c; levels 1 and 2 of a Lance path are
 *   the catalogs and schemas above, so these hold only what lies below or beside them)
 *   namespaces    id -> NamespaceInfo (packed)          a namespace at level 3 or deeper
 *   namespace_names
 *                 parent_id "/" lname -> id            parent_id: the schema's id (level 3)
 *                                                       or the parent namespace's id; keyed
 *                                                       by id so renames leave them alone
 *   lance_tables  id -> TableInfo (packed)              a registered Lance table
 *   lance_table_names
 *                 namespace_id "/" lname -> id         namespace_id: the id of the catalog,
 *                                                       schema or namespace holding it
 *   Lance lists page with the plain last name as the token (the LanceDB client passes a
 *   table name as `page_token` for its startAfter), not base64; order is by lname as below.
 *   A cascade drop walks these scopes depth first inside the one write transaction.
 *
 *   -- Delta tables (cat_dtable.c, cat_dtable_drop.c) --
 *   delta_tables  id -> TableInfo (packed, deltad.tables.v1) without what GetTable reads
 *                 from the snapshot (columns, version, ...) and without catalog_name /
 *                 schema_name / full_name, which are filled from the schema on the way
 *                 out (so renaming a catalog or schema leaves table records alone);
 *                 schema_id names the schema holding it
 *   delta_table_names
 *                 schema_id "/" lname -> id        one namespace with lance_table_names
 *                                                  under the same schema id: a name taken
 *                                                  in one is refused (DD_EEXISTS) in the
 *                                                  other (cat__table_name_taken)
 *   delta_dropped id -> id                         dropped MANAGED tables (record kept,
 *                                                  deleted_at set, name index entry gone)
 *                                                  until undropped or purged
 *
 *   -- the audit log (cat_audit.c) --
 *   audit         be64(time_ms) | be64(seq) -> AuditEvent (packed)
 *                 seq is a process counter starting at a random multiple of 2^39 (so
 *                 replicas sharing a PostgreSQL catalog do not collide): keys are unique
 *                 and sort by time; the
 *                 event's id is "<time_ms>-<seq>" in decimal. An append deletes a bounded
 *                 number of the oldest events past the retention in the same transaction.
 *
 * READ VIEWS
 *   Every read runs inside a read view (struct cat_view below, cat_view.c): one read-only
 *   transaction. A handler opens one per request (cat_view_open) and makes all its lookups
 *   through it; the per-call read functions (cat_share_get, cat_location_get, ...) open a
 *   view of their own on the stack around the same cat_view_* function, so each lookup has
 *   one implementation. Walks over locations are one cursor walk inside the view, not pages.
 *   cat_store_stats_get counts the transactions begun (cat__txn_begin).
 *
 * NAMES AND PAGINATION
 *   Display names are kept as given; uniqueness is by lname. Names never contain '/' or
 *   control characters, so "/" is a safe separator in composite keys. A list walks a names
 *   sub-DB in key order within its prefix; the page token is base64url (no padding) of the
 *   last returned lname. The next page starts at the first key strictly greater, so items
 *   present across both pages are neither skipped nor repeated whatever changed between.
 *
 * ADDING A KIND
 *   Add its sub-DBs to the enum below and to cat__dbi_names (cat_env.c), keep a names index
 *   beside the by-id records, and reuse cat__rec_* / cat__name_* / cat__list. */
#ifndef DD_STORE_CATALOG_CAT_INTERNAL_H
#define DD_STORE_CATALOG_CAT_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "store/catalog/cat_kv.h"
#include "store/catalog/cat_store.h"

enum {
  CAT__DB_META,
  CAT__DB_CATALOGS,
  CAT__DB_CATALOG_NAMES,
  CAT__DB_SCHEMAS,
  CAT__DB_SCHEMA_NAMES,
  CAT__DB_CREDENTIALS,
  CAT__DB_CREDENTIAL_SECRETS,
  CAT__DB_CREDENTIAL_NAMES,
  CAT__DB_LOCATIONS,
  CAT__DB_LOCATION_NAMES,
  CAT__DB_CREDENTIAL_USES,
  CAT__DB_TOKENS,
  /* Delta Sharing (added by the sharing branch) */
  CAT__DB_SHARES,
  CAT__DB_SHARE_NAMES,
  CAT__DB_RECIPIENTS,
  CAT__DB_RECIPIENT_NAMES,
  CAT__DB_SHARE_GRANTS,
  CAT__DB_RECIPIENT_GRANTS,
  CAT__DB_GRANT_GENS,
  /* Lance Namespace API (cat_namespace.c, cat_table.c) */
  CAT__DB_NAMESPACES,
  CAT__DB_NAMESPACE_NAMES,
  CAT__DB_LANCE_TABLES,
  CAT__DB_LANCE_TABLE_NAMES,
  /* the audit log (cat_audit.c) */
  CAT__DB_AUDIT,
  /* Delta tables (cat_dtable*.c); after the audit log so PostgreSQL's db numbers stay */
  CAT__DB_DELTA_TABLES,
  CAT__DB_DELTA_TABLE_NAMES,
  CAT__DB_DELTA_DROPPED,
  CAT__DB_COUNT
};

#define CAT__ID_LEN 36          /* "xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx" */
#define CAT__NAME_MAX 255
#define CAT__KEY_MAX (CAT__ID_LEN + 1 + CAT__NAME_MAX + 1)
#define CAT__DEFAULT_PAGE 100
#define CAT__MAX_PAGE 1000

struct cat_store {
  const cat__backend *be;     /* LMDB or PostgreSQL (cat_kv.h) */
  void *be_state;             /* the backend's own, freed by be->close */
  unsigned char key[32];      /* secrets key; cleansed on close */
  char *data_real;            /* realpath of the data directory (cat_confine.c) */
  atomic_uint_fast64_t read_txns, write_txns; /* begun so far (cat__txn_begin) */
  uint64_t serial;            /* this open's number in the process (a memo key: never reused) */
};

/* ---- read views (cat_view.c) ------------------------------------------------------------ */

/* The public cat_view: one read-only transaction of store s. The per-call read functions
 * keep one on the stack between cat__view_begin and cat__view_end. While a view is bound
 * to a thread (cat_view_bind), every read transaction of s begun on that thread is a share
 * of its txn (cat__txn_begin), so a call's token check, its handler's views and its
 * per-call reads are one transaction. */
struct cat_view {
  cat_store *s;
  cat_txn *txn; /* NULL once ended (cat_view_end, or a write on its thread) */
};
int cat__view_begin(cat_store *s, cat_view *v);
/* Ends the view (aborts its read transaction, or gives its share back; begun or not) and
 * returns rc unchanged. */
int cat__view_end(cat_view *v, int rc);
/* The view of s bound to this thread with its transaction still open, or NULL. */
cat_view *cat__view_bound(const cat_store *s);
/* The generation read transaction t reads (cat_kv.h's backend generation); DD_EUNSUPPORTED
 * on a backend without one (PostgreSQL). */
int cat__txn_generation(cat_txn *t, uint64_t *out);
/* A write transaction is about to begin on the bound view v's thread: unbinds v, and ends
 * its transaction when no read shares it. */
void cat__view_unbind_for_write(cat_view *v);

/* ---- small utilities (cat_util.c) ------------------------------------------------------ */

int64_t cat__now_ms(void);
/* Writes a fresh UUID v4 string (37 bytes with NUL). */
int cat__uuid(char out[CAT__ID_LEN + 1]);
/* Writes "<scope>/"? + lower(name) into buf; returns its length. scope may be NULL. */
size_t cat__name_key(char buf[CAT__KEY_MAX], const char *scope, const char *name);
/* Page arguments: checks max_results, decodes the token into after (a lname, "" when no
 * token). */
int cat__page_args(int32_t max_results, const char *token, int *out_max,
                   char after[CAT__NAME_MAX + 1]);
/* base64url of lname, malloc'ed. */
char *cat__page_token(const char *lname, size_t len);
/* strdup that returns protobuf_c_empty_string for "" / NULL is not used: always mallocs. */
char *cat__strdup(const char *s);
/* Replaces *slot (a string owned by a heap message) with a copy of s. */
int cat__str_replace(char **slot, const char *s);

/* ---- records and name indexes (cat_record.c) ------------------------------------------- */

/* Reads and unpacks the record under id. DD_ENOTFOUND (no message) when absent. */
int cat__rec_get(cat_store *s, cat_txn *txn, int db, const char *id,
                 const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out);
/* Packs msg and puts it under id. When copy is not NULL, *copy receives a heap tree
 * unpacked from the stored bytes (so msg may be a view of borrowed pointers). */
int cat__rec_put(cat_store *s, cat_txn *txn, int db, const char *id,
                 const ProtobufCMessage *msg, ProtobufCMessage **copy);
/* Looks up name (case-insensitively, under scope) in a names DB; writes the id.
 * DD_ENOTFOUND (no message) when absent. */
int cat__name_get(cat_store *s, cat_txn *txn, int db, const char *scope, const char *name,
                  char id[CAT__ID_LEN + 1]);
/* Puts name -> id; DD_EEXISTS (no message) when the name is taken. */
int cat__name_put(cat_store *s, cat_txn *txn, int db, const char *scope, const char *name,
                  const char *id);
int cat__name_del(cat_store *s, cat_txn *txn, int db, const char *scope, const char *name);
/* Deletes key (bytes) from db; absent is not an error. */
int cat__key_del(cat_store *s, cat_txn *txn, int db, const void *key, size_t len);
/* Finds name, then unpacks its record: the usual "get by name". */
int cat__get_by_name(cat_store *s, cat_txn *txn, int names_db, int recs_db, const char *scope,
                     const char *name, const ProtobufCMessageDescriptor *desc,
                     ProtobufCMessage **out, char id[CAT__ID_LEN + 1]);

/* Calls fn for each entry of names DB db under scope, in key order, with the key without
 * the scope (a lname) and the id. fn may change or delete entries: the walk re-seeks past
 * the last key after every call. A non-zero return from fn stops the walk and is returned. */
typedef int (*cat__walk_fn)(cat_store *s, cat_txn *txn, const char *lname, const char *id,
                            void *arg);
int cat__scope_walk(cat_store *s, cat_txn *txn, int db, const char *scope, cat__walk_fn fn,
                    void *arg);

/* One page of records listed through a names DB. items/n are a malloc'ed array of heap
 * messages; next is "" (malloc'ed) on the last page. */
typedef struct cat__page {
  ProtobufCMessage **items;
  size_t n;
  char *next;
} cat__page;
int cat__list(cat_store *s, int names_db, int recs_db, const char *scope,
              const ProtobufCMessageDescriptor *desc, int32_t max_results, const char *token,
              cat__page *out);
void cat__page_free(cat__page *page);

/* ---- map<string,string> views (cat_record.c) ------------------------------------------ */

/* Every generated *_PropertiesEntry has this layout. */
typedef struct cat__kv {
  ProtobufCMessage base;
  char *key;
  char *value;
} cat__kv;
/* DD_EINVAL naming field when a key is empty. src is any *_PropertiesEntry array. */
int cat__props_check(const char *field, size_t n, void *const *src);
/* A borrowed view of src as entries of desc (keys and values are not copied); one
 * malloc'ed block, freed with free(*out). *out is NULL when n is 0. */
int cat__props_view(cat__kv ***out, const ProtobufCMessageDescriptor *desc, size_t n,
                    void *const *src);

/* ---- audit events (cat_audit.c, cat_audit_armed.c) ------------------------------------ */

/* Puts ev (its id and time assigned here) in txn, and purges events past retention_ms. */
int cat__audit_put(cat_txn *txn, const Deltad__Admin__V1__AuditEvent *ev, int64_t retention_ms);
/* Marks this thread's transactions as not joined by an armed event (nested counts). */
void cat__audit_hold(bool on);
/* Called by cat__txn_commit before a write transaction commits: puts the event armed on
 * this thread for t's store, if any (a failure fails the commit: nothing is written). */
int cat__audit_on_commit(cat_txn *t);
/* ... and after the commit returned rc: the armed event counts as written when rc is 0. */
void cat__audit_committed(const cat_txn *t, int rc);
/* The record layer's note of a record id written (or deleted) while an event is armed. */
void cat__audit_note(const cat_txn *t, int db, const void *key, size_t len, bool deleted);

/* ---- secrets (cat_secret.c) ------------------------------------------------------------ */

/* Loads key_file (when not NULL: it must exist, mode 0600, 32 bytes; never created) or
 * <data_dir>/secret.key (created 0600 on first use) into s->key. */
int cat__secret_key_load(cat_store *s, const char *data_dir, const char *key_file);
/* AES-256-GCM of plain with AAD aad; *out (malloc'ed) is version|nonce|ciphertext|tag. */
int cat__seal(const cat_store *s, unsigned char **out, size_t *out_len, const void *plain,
              size_t len, const void *aad, size_t aad_len);
/* Inverse of cat__seal; DD_ECORRUPT when it does not authenticate. */
int cat__open_sealed(const cat_store *s, unsigned char **out, size_t *out_len,
                     const void *sealed, size_t len, const void *aad, size_t aad_len);

/* ---- Lance namespaces (cat_namespace.c), shared with cat_table.c -------------------------- */

/* A resolved namespace: its level (0 root, 1 catalog, 2 schema, 3+) and id ("" for root). */
typedef struct cat__ns_node {
  size_t level;
  char id[CAT__ID_LEN + 1];
} cat__ns_node;

/* Writes path[0..depth) joined by '$' into buf (truncated to cap). */
void cat__ns_path_str(char *buf, size_t cap, const char *const *path, size_t depth);
/* Resolves path to its node; DD_ENOTFOUND "namespace '<path>' not found". */
int cat__ns_resolve(cat_store *s, cat_txn *txn, const char *const *path, size_t depth,
                    cat__ns_node *out);
/* A page of display names from names DB db under scope (NULL: whole DB), records in recs_db
 * of type desc (which must have a string field "name"). limit/token as cat_ns_list. *names
 * is a malloc'ed array of malloc'ed strings; *next is malloc'ed ("" on the last page). */
int cat__name_page(cat_store *s, cat_txn *txn, int db, int recs_db,
                   const ProtobufCMessageDescriptor *desc, const char *scope, int32_t limit,
                   const char *token, char ***names, size_t *n, char **next);

/* For the catalog API's deletes (cat_catalog_delete, cat_schema_delete): what the Lance API
 * keeps below the catalog (level 1) or schema (level 2) with this
 * id -- tables, namespaces below level 2, and the same for each schema of a catalog, but not
 * the schemas themselves. Without force DD_EPRECOND "namespace '<what>' is not empty";
 * with force all of it is deleted inside txn. */
int cat__lance_below_drop(cat_store *s, cat_txn *txn, size_t level, const char *id,
                          const char *what, int force);

/* For the schema deletes: the Delta tables of schema schema_id (DD_EPRECOND naming what
 * without force; with force EXTERNAL ones are deregistered and MANAGED ones dropped as
 * cat_dtable_delete does). */
int cat__dtable_below_drop(cat_store *s, cat_txn *txn, const char *schema_id, const char *what,
                           int force);
/* The live Delta table record full_name (names filled), in txn. DD_ENOTFOUND naming it. */
int cat__dtable_find_any(cat_store *s, cat_txn *txn, const char *full_name, cat_dtable **out);
/* DD_EEXISTS "table '<full>' already exists" when lname is taken under schema_id by a
 * Delta or a Lance table; 0 when free. */
int cat__table_name_taken(cat_store *s, cat_txn *txn, const char *schema_id, const char *name,
                          const char *full);

#endif
