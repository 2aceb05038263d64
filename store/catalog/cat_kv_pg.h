/* cat_kv_pg.h: what the two files of the PostgreSQL backend share (cat_kv_pg.c: the
 * key-value operations; cat_kv_pg_conn.c: pool, connections, schema, errors). */
#ifndef DD_STORE_CATALOG_CAT_KV_PG_H
#define DD_STORE_CATALOG_CAT_KV_PG_H

#include <pthread.h>
#include <stdbool.h>

#include <libpq-fe.h>

#include "store/catalog/cat_internal.h"

typedef struct pg__slot {
  PGconn *c; /* NULL until first used, and after it broke */
} pg__slot;

typedef struct pg__state {
  char *url, *schema;
  bool migrated; /* connections made after the migration prepare the statements */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  pg__slot *slots;  /* n_slots, in the same block as the state */
  pg__slot **free;  /* stack of n_free idle slots */
  int n_slots, n_free;
} pg__state;

int pg__state_open(pg__state **out, const char *url, int pool_size, const char *schema);
void pg__state_close(pg__state *st);
/* Takes an idle slot (waiting up to 10 s), connected. DD_EIO when it cannot connect. */
int pg__borrow(pg__state *st, pg__slot **out);
/* Gives the slot back; broken: close its connection (the next borrower reconnects). */
void pg__release(pg__state *st, pg__slot *slot, bool broken);
/* DD_E* for a failed libpq call (res may be NULL): a lost connection is DD_EIO. */
int pg__err(PGconn *c, const PGresult *res, const char *what);
int pg__exec(PGconn *c, const char *sql, ExecStatusType want, const char *what);

#endif
