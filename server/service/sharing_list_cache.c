/* sharing_list_cache.c: ListShares answers kept per caller and catalog generation.
 *
 * A recipient's share list is read from the catalog on every call: the grant index, then
 * one record per share (an LMDB read and a protobuf unpack each), which is most of what the
 * call costs. The answer depends only on the catalog's committed state, who asks (a
 * recipient's id, or any admin) and the page asked for, so it is kept under exactly that
 * key: (generation, caller, page start, page size). The generation is the read view's
 * (cat_view_generation): any commit (a grant, a revoke, a new share, a dropped recipient,
 * a rotated token) gives later views another generation, and an entry is served only to a
 * view of the very generation it was read at. An entry can thus never be stale for the
 * view it answers, nor answer another caller. Where the store has no generation
 * (PostgreSQL) nothing is kept.
 *
 * The table: SHR_LC_SLOTS slots, one entry each, the slot chosen by a hash of the key;
 * a newer entry replaces an older one in its slot (an entry of an older generation never
 * replaces a newer one). Each slot has a read-write lock: hits copy the entry out under
 * the read lock (callers asking the same thing do not wait on each other), a put swaps
 * the entry under the write lock and frees the old one after it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/sharing_int.h"

#define SHR_LC_SLOTS 64
#define SHR_LC_MAX_ITEMS 100 /* larger pages are read from the catalog each time */

typedef struct shr_lc_entry {
  uint64_t gen;
  int limit;
  size_t n;        /* items */
  char *who;       /* "A" (admin) or "R" recipient id */
  char *after;     /* the page's start, as decoded from the page token */
  char *next;      /* next_page_token or NULL */
  char **names, **ids; /* n each; every string lives in the entry's one block */
} shr_lc_entry;

typedef struct shr_lc_slot {
  pthread_rwlock_t lock;
  shr_lc_entry *e; /* guarded by lock */
} shr_lc_slot;

struct shr_list_cache {
  shr_lc_slot slots[SHR_LC_SLOTS];
};

int shr_list_cache_new(shr_list_cache **out) {
  *out = NULL;
  shr_list_cache *c = calloc(1, sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  for (int i = 0; i < SHR_LC_SLOTS; i++) pthread_rwlock_init(&c->slots[i].lock, NULL);
  *out = c;
  return 0;
}

void shr_list_cache_free(shr_list_cache *c) {
  if (!c) return;
  for (int i = 0; i < SHR_LC_SLOTS; i++) {
    free(c->slots[i].e);
    pthread_rwlock_destroy(&c->slots[i].lock);
  }
  free(c);
}

/* FNV-1a over the key's strings and page size: picks the slot only (the key is compared
 * in full), so its quality matters for spread, not for safety. */
static size_t shr_lc_slot_of(const char *who, const char *after, int limit) {
  uint64_t h = 1469598103934665603ull;
  for (const char *p = who; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  h = (h ^ 0xff) * 1099511628211ull;
  for (const char *p = after; *p; p++) h = (h ^ (unsigned char)*p) * 1099511628211ull;
  h = (h ^ (uint64_t)(unsigned)limit) * 1099511628211ull;
  return (size_t)(h % SHR_LC_SLOTS);
}

static bool shr_lc_match(const shr_lc_entry *e, uint64_t gen, const char *who, const char *after,
                         int limit) {
  return e && e->gen == gen && e->limit == limit && strcmp(e->who, who) == 0 &&
         strcmp(e->after, after) == 0;
}

/* The response for e, every string copied (the caller frees it as an unpacked message). */
static int shr_lc_copy(const shr_lc_entry *e, Deltad__Sharing__V1__ListSharesResponse **out) {
  Deltad__Sharing__V1__ListSharesResponse *r = malloc(sizeof *r);
  if (!r) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__sharing__v1__list_shares_response__init(r);
  int rc = 0;
  if (!(r->items = calloc(e->n + 1, sizeof *r->items))) rc = DD_ENOMEM;
  for (size_t i = 0; !rc && i < e->n; i++) {
    Deltad__Sharing__V1__Share *m = malloc(sizeof *m);
    if (!m) {
      rc = DD_ENOMEM;
      break;
    }
    deltad__sharing__v1__share__init(m);
    r->items[r->n_items++] = m;
    if (!(m->name = strdup(e->names[i])) || !(m->id = strdup(e->ids[i]))) rc = DD_ENOMEM;
  }
  if (!rc && e->next && !(r->next_page_token = strdup(e->next))) rc = DD_ENOMEM;
  if (rc) {
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  *out = r;
  return 0;
}

int shr_list_cache_get(shr_list_cache *c, uint64_t gen, const char *who, const char *after,
                       int limit, Deltad__Sharing__V1__ListSharesResponse **out) {
  *out = NULL;
  shr_lc_slot *s = &c->slots[shr_lc_slot_of(who, after, limit)];
  int rc = DD_ENOTFOUND;
  pthread_rwlock_rdlock(&s->lock);
  if (shr_lc_match(s->e, gen, who, after, limit)) rc = shr_lc_copy(s->e, out);
  pthread_rwlock_unlock(&s->lock);
  return rc;
}

/* Appends s (with its NUL) at *at and returns where it went. */
static char *shr_lc_put_str(char **at, const char *s) {
  size_t n = strlen(s) + 1;
  char *p = memcpy(*at, s, n);
  *at += n;
  return p;
}

/* One block: the entry, the two pointer arrays, then every string. */
static shr_lc_entry *shr_lc_entry_new(uint64_t gen, const char *who, const char *after, int limit,
                                      const Deltad__Sharing__V1__ListSharesResponse *r) {
  size_t bytes = sizeof(shr_lc_entry) + 2 * r->n_items * sizeof(char *);
  bytes += strlen(who) + strlen(after) + 2;
  if (r->next_page_token) bytes += strlen(r->next_page_token) + 1;
  for (size_t i = 0; i < r->n_items; i++) {
    if (!r->items[i]->name || !r->items[i]->id) return NULL;
    bytes += strlen(r->items[i]->name) + strlen(r->items[i]->id) + 2;
  }
  shr_lc_entry *e = malloc(bytes);
  if (!e) return NULL;
  e->gen = gen;
  e->limit = limit;
  e->n = r->n_items;
  e->names = (char **)(e + 1);
  e->ids = e->names + e->n;
  char *at = (char *)(e->ids + e->n);
  e->who = shr_lc_put_str(&at, who);
  e->after = shr_lc_put_str(&at, after);
  e->next = r->next_page_token ? shr_lc_put_str(&at, r->next_page_token) : NULL;
  for (size_t i = 0; i < e->n; i++) {
    e->names[i] = shr_lc_put_str(&at, r->items[i]->name);
    e->ids[i] = shr_lc_put_str(&at, r->items[i]->id);
  }
  return e;
}

void shr_list_cache_put(shr_list_cache *c, uint64_t gen, const char *who, const char *after,
                        int limit, const Deltad__Sharing__V1__ListSharesResponse *resp) {
  if (resp->n_items > SHR_LC_MAX_ITEMS) return;
  shr_lc_entry *e = shr_lc_entry_new(gen, who, after, limit, resp);
  if (!e) return; /* a cache that cannot keep an answer still answers */
  shr_lc_slot *s = &c->slots[shr_lc_slot_of(who, after, limit)];
  pthread_rwlock_wrlock(&s->lock);
  shr_lc_entry *old = s->e;
  if (old && old->gen > gen) { /* a slower call of an older state: keep the newer entry */
    old = e;
  } else {
    s->e = e;
  }
  pthread_rwlock_unlock(&s->lock);
  free(old);
}
