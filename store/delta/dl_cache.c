/* dl_cache.c: latest snapshots of many tables, kept warm and shared between threads.
 *
 * Keyed by table location; bounded by the approximate bytes of the cached snapshots with
 * least-recently-used eviction. A lookup lists the table's _delta_log: when new commits
 * exist it builds the next snapshot incrementally, sharing the cached snapshot's base file
 * set and copying only its small overlay before applying the new commits (dl_internal.h,
 * SNAPSHOT SHARING). One mutex guards the entry list; snapshot building runs outside it. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

typedef struct centry {
  char *key;
  dl_snapshot *snap; /* one reference held by the cache */
  size_t bytes;
  uint64_t used;
  struct centry *next;
} centry;

struct dl_cache {
  pthread_mutex_t mu; /* guards everything below */
  centry *head;
  size_t bytes, max_bytes;
  uint64_t tick;
  uint64_t hits, misses; /* dl_cache_get lookups */
};

int dl_cache_new(dl_cache **out, size_t max_bytes) {
  *out = calloc(1, sizeof **out);
  if (!*out) return dd_err_set(DD_ENOMEM, "out of memory");
  pthread_mutex_init(&(*out)->mu, NULL);
  (*out)->max_bytes = max_bytes;
  return 0;
}

static void centry_free(centry *e) {
  dl_snapshot_free(e->snap);
  free(e->key);
  free(e);
}

void dl_cache_free(dl_cache *c) {
  if (!c) return;
  for (centry *e = c->head, *n; e; e = n) {
    n = e->next;
    centry_free(e);
  }
  pthread_mutex_destroy(&c->mu);
  free(c);
}

size_t dl_cache_bytes(const dl_cache *c) {
  pthread_mutex_lock((pthread_mutex_t *)&c->mu);
  size_t b = c->bytes;
  pthread_mutex_unlock((pthread_mutex_t *)&c->mu);
  return b;
}

/* ---------- incremental refresh ---------- */

/* Builds the snapshot at `target` from `old` plus commits old->version+1..target. */
static int refresh(dl_snapshot **out, dl_table *t, dl_snapshot *old, const dl__listing *l,
                   int64_t target) {
  dl_snapshot *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  atomic_init(&s->refs, 1);
  atomic_init(&s->ext, NULL); /* nothing the old snapshot kept carries over */
  s->table = t;
  s->checkpoint_version = old->checkpoint_version;
  int rc = dl__state_copy(&s->st, &old->st);
  if (!rc) rc = dl__fileset_new(&s->over);
  if (!rc && old->over) rc = dl__fileset_merge(s->over, old->over);
  s->base = dl__fileset_ref(old->base);
  int64_t ict = -1;
  for (int64_t v = old->version + 1; v <= target && !rc; v++) {
    if (dl__listing_find(l, v) < 0)
      rc = dd_err_set(DD_ECORRUPT, "log is incomplete: commit version %lld is missing", (long long)v);
    else rc = dl__replay_commit(t, v, &s->st, s->over, &ict);
  }
  /* A large overlay is folded into a fresh base so lookups stay cheap. */
  if (!rc && (s->over->n > 8192 || (s->over->n > 1000 && s->over->n * 4 > s->base->n))) {
    dl__fileset *nb = NULL;
    rc = dl__fileset_new(&nb);
    if (!rc) rc = dl__fileset_merge(nb, s->base);
    if (!rc) rc = dl__fileset_merge(nb, s->over);
    if (!rc) {
      dl__fileset_unref(s->base);
      dl__fileset_unref(s->over);
      s->base = nb;
      s->over = NULL;
    } else {
      dl__fileset_unref(nb);
    }
  }
  if (!rc) {
    s->version = target;
    const char *on = NULL;
    dl_kv_get(s->st.md.configuration, "delta.enableInCommitTimestamps", &on);
    ssize_t i = dl__listing_find(l, target);
    s->timestamp = (on && !strcmp(on, "true") && ict >= 0) ? ict : (i >= 0 ? l->commits[i].mtime : -1);
    rc = dl__snapshot_finish(s);
  }
  if (!rc) rc = dl_protocol_check(&s->st.proto, false);
  if (rc) {
    dl_snapshot_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

/* True when the table is still at old's version: its commit file is there and the next
 * one is not. Two stats instead of listing the whole log (on an object store a listing
 * is a request per 1,000 log files; a stat is one request). Anything unexpected (an
 * error other than "not found", a vanished commit) answers false: the caller lists. */
static bool still_current(dl_table *t, const dl_snapshot *old) {
  char *cur = dl__version_path(old->version, ".json");
  char *next = dl__version_path(old->version + 1, ".json");
  os_stat sb;
  bool same = cur && next && os_stat_path(t->store, next, &sb) == DD_ENOTFOUND &&
              os_stat_path(t->store, cur, &sb) == 0 && !sb.is_dir;
  free(cur);
  free(next);
  dd_err_clear();
  return same;
}

static int bring_up_to_date(dl_snapshot **out, dl_table *t, dl_snapshot *old) {
  if (old && still_current(t, old)) {
    *out = dl_snapshot_ref(old);
    return 0;
  }
  dl__listing l;
  int rc = dl__list_log(&l, t->store);
  if (rc) return rc;
  int64_t latest = l.n_commits ? l.commits[l.n_commits - 1].version : -1;
  if (old && latest == old->version) {
    *out = dl_snapshot_ref(old);
  } else if (old && latest > old->version && dl__listing_find(&l, old->version + 1) >= 0) {
    rc = refresh(out, t, old, &l, latest);
  } else {
    rc = dl_snapshot_open(out, t, NULL);
  }
  dl__listing_free(&l);
  return rc;
}

/* ---------- lookup ---------- */

static void evict(dl_cache *c, const centry *keep) {
  while (c->bytes > c->max_bytes) {
    centry **victim = NULL;
    for (centry **pp = &c->head; *pp; pp = &(*pp)->next)
      if (*pp != keep && (!victim || (*pp)->used < (*victim)->used)) victim = pp;
    if (!victim) return;
    centry *e = *victim;
    *victim = e->next;
    c->bytes -= e->bytes;
    centry_free(e);
  }
}

int dl_cache_get(dl_cache *c, dl_table *t, dl_snapshot **out) {
  *out = NULL;
  const char *key = dl_table_location(t);
  dl_snapshot *old = NULL;
  pthread_mutex_lock(&c->mu);
  for (centry *e = c->head; e; e = e->next)
    if (!strcmp(e->key, key)) old = dl_snapshot_ref(e->snap);
  if (old) c->hits++;
  else c->misses++;
  pthread_mutex_unlock(&c->mu);
  dl_snapshot *fresh = NULL;
  int rc = bring_up_to_date(&fresh, t, old);
  dl_snapshot_free(old);
  if (rc) return rc;
  pthread_mutex_lock(&c->mu);
  centry *e = c->head;
  while (e && strcmp(e->key, key)) e = e->next;
  if (!e && (e = calloc(1, sizeof *e)) && !(e->key = strdup(key))) {
    free(e);
    e = NULL;
  }
  if (e && !e->snap) {
    e->next = c->head;
    c->head = e;
  }
  if (e && (!e->snap || e->snap->version <= fresh->version)) {
    c->bytes -= e->bytes;
    dl_snapshot_free(e->snap);
    e->snap = dl_snapshot_ref(fresh);
    e->bytes = dl_snapshot_memory(fresh) + strlen(key);
    c->bytes += e->bytes;
  }
  if (e) {
    e->used = ++c->tick;
    evict(c, e);
  }
  pthread_mutex_unlock(&c->mu);
  *out = fresh;
  return 0;
}

dl_cache_stats dl_cache_stats_get(dl_cache *c) {
  dl_cache_stats st = {0};
  pthread_mutex_lock(&c->mu);
  st.hits = c->hits;
  st.misses = c->misses;
  st.bytes = c->bytes;
  for (centry *e = c->head; e; e = e->next) st.entries++;
  pthread_mutex_unlock(&c->mu);
  return st;
}
