/* cat_kv_pg_cache.c: the PostgreSQL backend's read cache and its row blocks.
 *
 * Every write transaction increments deltad_lock.gen (the UPDATE that also serializes the
 * writers), so a read snapshot that sees generation g sees exactly the commits 1..g: any
 * two snapshots with the same g read the same bytes for the same query. A read view reads
 * g when it begins (one small round trip, or none with pushed invalidation:
 * cat_kv_pg_notify.c); its gets and cursor batches are then answered from this cache when
 * an earlier view of generation g asked the same query, else from the database (a snapshot,
 * cat_kv_pg.c) and remembered under g. A newer g flushes the cache; an older one bypasses
 * it. Write transactions never use it (they see their own uncommitted writes). So a
 * replica serves a read view in at most one round trip while the catalog does not change,
 * and (checking the generation) sees a commit of any replica in the first view begun after
 * it: nothing is stale.
 *
 * Bounded: at most PG__CACHE_MAX entries and PG__CACHE_BYTES of rows; past either the
 * cache is flushed whole. Lookups copy the rows out, so no entry is shared with a caller. */
#include <stdlib.h>
#include <string.h>

#include "store/catalog/cat_kv_pg.h"

#define PG__CACHE_BUCKETS 4096
#define PG__CACHE_MAX 8192
#define PG__CACHE_BYTES (32u << 20)

struct pg__entry {
  struct pg__entry *next;
  uint64_t hash;
  int stmt, db, limit;
  size_t key_n;
  pg__rows *rows;
  unsigned char key[]; /* key_n bytes */
};

/* ---- row blocks ------------------------------------------------------------------------- */

pg__rows *pg__rows_from(const PGresult *r) {
  int n = PQntuples(r), kv = PQnfields(r) == 2;
  size_t bytes = 0;
  for (int i = 0; i < n; i++)
    bytes += (size_t)PQgetlength(r, i, 0) + (kv ? (size_t)PQgetlength(r, i, 1) : 0);
  size_t size = sizeof(pg__rows) + (size_t)n * sizeof(pg__row) + bytes;
  pg__rows *rows = malloc(size);
  if (!rows) return NULL;
  rows->size = size;
  rows->n = n;
  unsigned char *base = (unsigned char *)&rows->row[n];
  size_t o = 0;
  for (int i = 0; i < n; i++) {
    pg__row *w = &rows->row[i];
    w->kn = kv ? (size_t)PQgetlength(r, i, 0) : 0;
    w->ko = o;
    if (kv) memcpy(base + o, PQgetvalue(r, i, 0), w->kn);
    o += w->kn;
    w->vn = (size_t)PQgetlength(r, i, kv);
    w->vo = o;
    memcpy(base + o, PQgetvalue(r, i, kv), w->vn);
    o += w->vn;
  }
  return rows;
}

static pg__rows *pg__rows_dup(const pg__rows *rows) {
  pg__rows *d = malloc(rows->size);
  if (d) memcpy(d, rows, rows->size);
  return d;
}

cat__bytes pg__rows_key(const pg__rows *rows, int i) {
  const unsigned char *base = (const unsigned char *)&rows->row[rows->n];
  return (cat__bytes){base + rows->row[i].ko, rows->row[i].kn};
}

cat__bytes pg__rows_val(const pg__rows *rows, int i) {
  const unsigned char *base = (const unsigned char *)&rows->row[rows->n];
  return (cat__bytes){base + rows->row[i].vo, rows->row[i].vn};
}

/* ---- the cache ---------------------------------------------------------------------------- */

int pg__cache_init(pg__cache *c) {
  memset(c, 0, sizeof *c);
  c->buckets = calloc(PG__CACHE_BUCKETS, sizeof *c->buckets);
  if (!c->buckets) return -1;
  pthread_mutex_init(&c->mu, NULL);
  return 0;
}

/* Under c->mu. */
static void pg__cache_flush(pg__cache *c) {
  for (size_t b = 0; b < PG__CACHE_BUCKETS; b++) {
    for (struct pg__entry *e = c->buckets[b], *next; e; e = next) {
      next = e->next;
      free(e->rows);
      free(e);
    }
    c->buckets[b] = NULL;
  }
  c->n = 0;
  c->bytes = 0;
}

void pg__cache_destroy(pg__cache *c) {
  if (!c->buckets) return;
  pg__cache_flush(c);
  free(c->buckets);
  pthread_mutex_destroy(&c->mu);
}

static uint64_t pg__hash(int stmt, int db, cat__bytes key, int limit) {
  uint64_t h = 1469598103934665603ull ^ (uint64_t)(stmt * 131 + db * 7 + limit);
  const unsigned char *p = key.p;
  for (size_t i = 0; i < key.n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h ^ (h >> 29);
}

/* Under c->mu: true when generation gen may use the cache (flushing it for a newer gen). */
static bool pg__cache_gen(pg__cache *c, uint64_t gen) {
  if (gen > c->gen) {
    pg__cache_flush(c);
    c->gen = gen;
  }
  return gen == c->gen;
}

pg__rows *pg__cache_get(pg__cache *c, uint64_t gen, int stmt, int db, cat__bytes key,
                        int limit) {
  uint64_t h = pg__hash(stmt, db, key, limit);
  pg__rows *out = NULL;
  pthread_mutex_lock(&c->mu);
  if (pg__cache_gen(c, gen)) {
    for (struct pg__entry *e = c->buckets[h % PG__CACHE_BUCKETS]; e; e = e->next) {
      if (e->hash == h && e->stmt == stmt && e->db == db && e->limit == limit &&
          e->key_n == key.n && memcmp(e->key, key.p, key.n) == 0) {
        out = pg__rows_dup(e->rows);
        break;
      }
    }
  }
  pthread_mutex_unlock(&c->mu);
  return out;
}

void pg__cache_put(pg__cache *c, uint64_t gen, int stmt, int db, cat__bytes key, int limit,
                   const pg__rows *rows) {
  uint64_t h = pg__hash(stmt, db, key, limit);
  struct pg__entry *e = malloc(sizeof *e + key.n);
  pg__rows *copy = e ? pg__rows_dup(rows) : NULL;
  if (!copy) { /* out of memory: simply not cached */
    free(e);
    return;
  }
  e->hash = h;
  e->stmt = stmt;
  e->db = db;
  e->limit = limit;
  e->key_n = key.n;
  memcpy(e->key, key.p, key.n);
  e->rows = copy;
  pthread_mutex_lock(&c->mu);
  if (!pg__cache_gen(c, gen)) {
    pthread_mutex_unlock(&c->mu);
    free(copy);
    free(e);
    return;
  }
  if (c->n >= PG__CACHE_MAX || c->bytes + copy->size > PG__CACHE_BYTES) pg__cache_flush(c);
  e->next = c->buckets[h % PG__CACHE_BUCKETS];
  c->buckets[h % PG__CACHE_BUCKETS] = e;
  c->n++;
  c->bytes += copy->size;
  pthread_mutex_unlock(&c->mu);
}
