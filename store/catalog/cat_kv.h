/* cat_kv.h: the key-value transaction interface beneath the catalog's record layer, and the
 * two backends behind it: LMDB (cat_kv_lmdb.c, the embedded default) and PostgreSQL through
 * libpq (cat_kv_pg.c). Every catalog operation is written once over this interface, so both
 * backends keep the same keys, the same packed protobuf values and the same paging.
 *
 * A store holds CAT__DB_COUNT ordered maps ("sub-databases", cat_internal.h); keys compare
 * bytewise (memcmp, then the shorter first), as LMDB's default and PostgreSQL's bytea do.
 *
 * TRANSACTIONS
 *   A read transaction is a consistent snapshot: LMDB's read txn, taken when it begins;
 *   on PostgreSQL the generation read at begin, the read cache's answers for it, and a
 *   REPEATABLE READ READ ONLY snapshot from the first miss (cat_kv_pg.c: a state no older
 *   than the begin; DD_ECONFLICT when a commit between two reads changed the first's rows).
 *   Write transactions are serialized (LMDB's one writer; on PostgreSQL each write
 *   transaction first updates the single row of deltad_lock, so writers on every replica
 *   take turns) and see every commit made before they began.
 *   A txn is used by one thread at a time; commit and abort free it.
 *
 * VALUES
 *   A value returned by get stays valid until the next put or del on the transaction (on a
 *   write transaction of PostgreSQL also until the next get; a read transaction keeps every
 *   value to its end, as nested reads may share it: cat_view_bind); a
 *   row returned by seek / next until the next call on that cursor (a get between two
 *   cursor calls leaves the cursor's row alone); none outlives its transaction.
 *
 * CODES (besides DD_E* failures with a message)
 *   get, del: DD_ENOTFOUND without a message when the key is absent.
 *   put with no_overwrite: DD_EEXISTS without a message when the key is present.
 *   seek, next: DD_ENOTFOUND without a message past the last key.
 *   A lost database connection is DD_EIO ("catalog database unavailable"), UNAVAILABLE. */
#ifndef DD_STORE_CATALOG_CAT_KV_H
#define DD_STORE_CATALOG_CAT_KV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct cat_store cat_store;

typedef struct cat__bytes {
  const void *p;
  size_t n;
} cat__bytes;

/* The part of every backend's transaction the generic code reads. */
typedef struct cat_txn {
  cat_store *s;
  bool write;
  int borrows; /* read txns: how many cat__txn_begin of the bound view's thread share it
                * (cat_view_bind); their abort or commit gives the share back */
} cat_txn;

/* A cursor over one sub-database of a transaction. */
typedef struct cat__cur {
  cat_txn *txn;
  int db;
} cat__cur;

typedef struct cat__backend {
  const char *name; /* "lmdb", "postgresql" */
  int (*begin)(cat_store *s, cat_txn **out, bool write);
  int (*commit)(cat_txn *t);
  void (*abort)(cat_txn *t);
  int (*get)(cat_txn *t, int db, cat__bytes k, cat__bytes *v);
  int (*put)(cat_txn *t, int db, cat__bytes k, cat__bytes v, bool no_overwrite);
  int (*del)(cat_txn *t, int db, cat__bytes k);
  int (*cur_open)(cat_txn *t, int db, cat__cur **out);
  /* Positions on the first key >= from (from.n == 0: the first key of the db). The rows a
   * cursor returns after a seek are those present at the seek: after a write in the same
   * transaction, seek again to see it (cat__scope_walk does). */
  int (*cur_seek)(cat__cur *c, cat__bytes from, cat__bytes *k, cat__bytes *v);
  int (*cur_next)(cat__cur *c, cat__bytes *k, cat__bytes *v);
  void (*cur_close)(cat__cur *c);
  /* Flushes and frees the backend's state (s->be_state). */
  void (*close)(cat_store *s);
  /* Map size and bytes used (LMDB); DD_EUNSUPPORTED where it means nothing. */
  int (*usage)(cat_store *s, uint64_t *map_bytes, uint64_t *used_bytes);
  /* A consistent copy of the key-value data into dir/catalog.mdb (created by the caller);
   * DD_EUNSUPPORTED with a message saying what to use instead. */
  int (*backup)(cat_store *s, const char *dir);
  /* Optional (NULL: the caller uses a write transaction). Adds k -> v to db, a key unique
   * by construction (the audit log's time and sequence), outside the serialized writers:
   * it takes no writer lock and changes no generation, so appending invalidates no
   * replica's read cache and waits for no other writer; the backend never caches reads of
   * db. below.n > 0: also deletes db's keys below it (retention). Autocommitted. */
  int (*append)(cat_store *s, int db, cat__bytes k, cat__bytes v, cat__bytes below);
  /* Optional (NULL: DD_EUNSUPPORTED). The number of the committed state read txn t reads:
   * equal numbers on one store mean the same state, and every commit makes a new one that
   * no earlier state had (LMDB: the snapshot's transaction id). */
  int (*generation)(cat_txn *t, uint64_t *out);
} cat__backend;

extern const cat__backend cat__lmdb_backend;
extern const cat__backend cat__pg_backend;

/* Opens the backend state for s (s->be, s->be_state). LMDB: <data_dir>/catalog.mdb with a
 * map of map_bytes (0: 1 GiB). PostgreSQL: url, a pool of pool_size connections, schema
 * migrated on open; push: read txns trust the generation LISTEN/NOTIFY pushes
 * (cat_kv_pg_notify.c) instead of reading it. */
int cat__lmdb_open(cat_store *s, const char *data_dir, size_t map_bytes);
int cat__pg_open(cat_store *s, const char *url, int pool_size, const char *schema, bool push);

/* ---- calls through the store's backend (cat_kv.c) ---------------------------------------- */

/* Begins a transaction (counted in cat_store_stats). A read transaction begun on a thread
 * with a call view of s bound (cat_view_bind) is that view's, shared (not counted): its
 * abort or commit only gives the share back. A write transaction on such a thread unbinds
 * the view first (the call's later reads see what it writes) and ends the view's
 * transaction when nothing shares it (its connection goes back to the pool). */
int cat__txn_begin(cat_store *s, cat_txn **out, bool write);
/* Commits; the txn is gone afterwards either way. */
int cat__txn_commit(cat_txn *t);
/* Aborts; accepts NULL. */
void cat__txn_abort(cat_txn *t);
int cat__kv_get(cat_txn *t, int db, const void *k, size_t kn, cat__bytes *v);
int cat__kv_put(cat_txn *t, int db, const void *k, size_t kn, const void *v, size_t vn,
                bool no_overwrite);
int cat__kv_del(cat_txn *t, int db, const void *k, size_t kn);
int cat__cur_open(cat_txn *t, int db, cat__cur **out);
int cat__cur_seek(cat__cur *c, const void *from, size_t n, cat__bytes *k, cat__bytes *v);
int cat__cur_next(cat__cur *c, cat__bytes *k, cat__bytes *v);
/* Accepts NULL. */
void cat__cur_close(cat__cur *c);
/* Positions c on the first key that starts with prefix and comes strictly after
 * prefix+after (after "" : the first key of prefix); DD_ENOTFOUND when there is none. */
int cat__cur_seek_after(cat__cur *c, const char *prefix, size_t plen, const char *after,
                        cat__bytes *k, cat__bytes *v);
/* k starts with prefix. */
bool cat__in_prefix(const cat__bytes *k, const char *prefix, size_t plen);

#endif
