/* cat_kv_pg.h: what the files of the PostgreSQL backend share (cat_kv_pg.c: the
 * key-value operations; cat_kv_pg_conn.c: pool, connections, schema, errors;
 * cat_kv_pg_cache.c: the read cache by catalog generation, and row blocks;
 * cat_kv_pg_notify.c: the generation pushed by LISTEN/NOTIFY). */
#ifndef DD_STORE_CATALOG_CAT_KV_PG_H
#define DD_STORE_CATALOG_CAT_KV_PG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include <libpq-fe.h>

#include "store/catalog/cat_internal.h"

typedef struct pg__slot {
  PGconn *c;    /* NULL until first used, and after it broke */
  bool pending; /* a ROLLBACK was sent without waiting: its result is read on borrow */
} pg__slot;

/* Rows copied out of a PGresult or the cache: one malloc'ed block (free()). */
typedef struct pg__row {
  size_t ko, kn, vo, vn;
} pg__row;
typedef struct pg__rows {
  size_t size; /* of the whole block */
  int n;
  pg__row row[]; /* then the bytes */
} pg__rows;
/* Columns (k, v), or (v) for a one-column result. NULL when out of memory. */
pg__rows *pg__rows_from(const PGresult *r);
cat__bytes pg__rows_key(const pg__rows *rows, int i);
cat__bytes pg__rows_val(const pg__rows *rows, int i);

struct pg__entry;
typedef struct pg__cache {
  pthread_mutex_t mu;
  uint64_t gen; /* the generation every entry was read at */
  struct pg__entry **buckets;
  size_t n, bytes;
} pg__cache;
int pg__cache_init(pg__cache *c);
void pg__cache_destroy(pg__cache *c);
/* A copy of the rows of query (stmt, db, key, limit) read at generation gen; NULL when not
 * cached. */
pg__rows *pg__cache_get(pg__cache *c, uint64_t gen, int stmt, int db, cat__bytes key,
                        int limit);
void pg__cache_put(pg__cache *c, uint64_t gen, int stmt, int db, cat__bytes key, int limit,
                   const pg__rows *rows);

typedef struct pg__state {
  char *url, *schema;
  bool migrated; /* connections made after the migration prepare the statements */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pg__slot *slots;  /* n_slots, in the same block as the state */
  pg__slot **free;  /* ring of n_free idle slots from free_head: the longest idle first,
                     * so the ROLLBACK a view sent on leaving has been answered */
  int n_slots, n_free, free_head;
  atomic_uint_fast64_t borrows; /* connections lent so far: a read that needs no round trip
                                 * borrows none (the notify test counts them) */
  pg__cache cache;
  /* Pushed invalidation (cat_kv_pg_notify.c). can_notify: the database has NOTIFY, so
   * every write txn announces its generation (whatever this replica's mode). push: read
   * txns take the generation from the listener instead of a round trip while it is live. */
  bool can_notify, push;
  atomic_bool live;            /* the listener is connected, listening and answering */
  atomic_uint_fast64_t known;  /* the newest generation heard of (listener, own commits) */
  atomic_bool stop;
  bool listening;              /* the listener thread runs (joined on close) */
  pthread_t listener;
} pg__state;

int pg__state_open(pg__state **out, const char *url, int pool_size, const char *schema,
                   bool push);
void pg__state_close(pg__state *st);
/* Takes an idle slot (waiting up to 10 s), connected. DD_EIO when it cannot connect. */
int pg__borrow(pg__state *st, pg__slot **out);
/* Gives the slot back; broken: close its connection (the next borrower reconnects). */
void pg__release(pg__state *st, pg__slot *slot, bool broken);
/* DD_E* for a failed libpq call (res may be NULL): a lost connection is DD_EIO. */
int pg__err(PGconn *c, const PGresult *res, const char *what);
int pg__exec(PGconn *c, const char *sql, ExecStatusType want, const char *what);
/* A new connection with the pool's options (search_path set, statements prepared). */
int pg__connect(pg__state *st, PGconn **out, bool create_schema);

/* Whether the database has LISTEN/NOTIFY (st->can_notify); then, with st->push, starts the
 * listener. 0 or DD_E* (the thread could not start). */
int pg__notify_start(pg__state *st);
/* Stops and joins the listener (within its 200 ms poll). */
void pg__notify_stop(pg__state *st);
/* The generation a read txn may use without a round trip: true while push is on and the
 * listener is live (then *gen is the newest generation heard of). */
bool pg__notify_gen(pg__state *st, uint64_t *gen);
/* A write txn committed generation gen here: readers of this replica see it at once. */
void pg__notify_committed(pg__state *st, uint64_t gen);
/* A tag of the replica's schema sent with each notification: the channel is the
 * database's, so deployments in other schemas of one database hear each other's. */
uint64_t pg__schema_tag(const pg__state *st);

#endif
