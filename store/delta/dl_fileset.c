/* dl_fileset.c: the compact set of logical files of a snapshot, keyed by (URL-decoded path,
 * deletion-vector unique id). Entries live in one array, strings in a chunked arena,
 * partition-value maps are interned, and an open-addressing table of 32-bit indexes finds a
 * key. Applying an action upserts its key, so replaying actions oldest to newest leaves the
 * newest reference of every logical file: adds are the table, removes are tombstones. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

/* ---------- keys ---------- */

/* Decoded path of raw: returns raw itself when it has no escapes, else fills buf (or a
 * malloc'ed *heap when buf is too small). */
static const char *decoded(const char *raw, char *buf, size_t cap, char **heap) {
  *heap = NULL;
  if (!strchr(raw, '%')) return raw;
  size_t n = strlen(raw) + 1;
  char *out = n <= cap ? buf : (*heap = malloc(n));
  if (!out) return raw;
  dl__url_decode(raw, out);
  return out;
}

/* Lengths of a sized action's path and stats (not NUL-terminated, see
 * dl__fileset_apply_sized); NULL for C strings. */
typedef struct lens {
  size_t path, stats;
  uint64_t path_hash; /* 0: not known */
} lens;

/* The key's hash; l (or NULL) gives the path's length, for a path without escapes. */
static uint32_t key_hash(const char *raw_path, const lens *l, const dl_dv *dv) {
  char buf[512], *heap = NULL;
  uint64_t h;
  if (l) {
    h = l->path_hash ? l->path_hash : dl__hash(raw_path, l->path, 0);
  } else {
    const char *p = decoded(raw_path, buf, sizeof buf, &heap);
    h = dl__hash(p, strlen(p), 0);
  }
  free(heap);
  if (dv) {
    h = dl__hash(&dv->storage_type, 1, h);
    h = dl__hash(dv->path_or_inline, strlen(dv->path_or_inline), h);
    if (dv->offset >= 0) h = dl__hash(&dv->offset, sizeof dv->offset, h);
  }
  return (uint32_t)(h ^ (h >> 32));
}

static bool dv_same(const dl_dv *a, const dl_dv *b) {
  if (!a || !b) return a == b;
  return a->storage_type == b->storage_type && a->offset == b->offset &&
         !strcmp(a->path_or_inline, b->path_or_inline);
}

static bool path_same(const char *a, const char *b) {
  if (!strchr(a, '%') && !strchr(b, '%')) return !strcmp(a, b);
  char ba[512], bb[512], *ha, *hb;
  const char *da = decoded(a, ba, sizeof ba, &ha), *db = decoded(b, bb, sizeof bb, &hb);
  bool same = !strcmp(da, db);
  free(ha);
  free(hb);
  return same;
}

/* ---------- lifecycle ---------- */

int dl__fileset_new(dl__fileset **out) {
  *out = calloc(1, sizeof **out);
  if (!*out) return dd_err_set(DD_ENOMEM, "out of memory");
  atomic_init(&(*out)->refs, 1);
  return 0;
}

dl__fileset *dl__fileset_ref(dl__fileset *fs) {
  if (fs) atomic_fetch_add(&fs->refs, 1);
  return fs;
}

static void prefault_join(dl__fileset *fs) {
  if (!fs->pf_on) return;
  atomic_store(&fs->pf_stop, true);
  pthread_join(fs->pf_thread, NULL);
  fs->pf_on = false;
}

void dl__fileset_unref(dl__fileset *fs) {
  if (!fs || atomic_fetch_sub(&fs->refs, 1) != 1) return;
  prefault_join(fs);
  dl__arena_free(&fs->arena);
  free(fs->ents);
  free(fs->slots);
  free(fs->pv_slots);
  free(fs);
}

size_t dl__fileset_memory(const dl__fileset *fs) {
  if (!fs) return 0;
  return sizeof *fs + fs->arena.bytes + fs->cap * sizeof *fs->ents +
         fs->nslots * sizeof *fs->slots + fs->pv_nslots * sizeof *fs->pv_slots;
}

/* ---------- index ---------- */

/* Transparent huge pages over the 2 MiB-aligned interior of a big table (a hint): the
 * random probes of a million-file index otherwise pay a TLB miss each. */
static void huge_hint(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  uintptr_t s = ((uintptr_t)p + huge - 1) & ~(huge - 1), e = ((uintptr_t)p + n) & ~(huge - 1);
  if (p && e > s) (void)madvise((void *)s, e - s, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

/* A slot is (hash << 32 | index + 1); 0 is empty. */
#define SLOT_INDEX(x) ((size_t)(uint32_t)(x) - 1)

static int rehash(dl__fileset *fs, size_t nslots) {
  uint64_t *slots = calloc(nslots, sizeof *slots);
  if (!slots) return dd_err_set(DD_ENOMEM, "out of memory");
  huge_hint(slots, nslots * sizeof *slots);
  for (size_t i = 0; i < fs->n; i++) {
    size_t s = fs->ents[i].hash & (nslots - 1);
    while (slots[s]) s = (s + 1) & (nslots - 1);
    slots[s] = (uint64_t)fs->ents[i].hash << 32 | (uint32_t)(i + 1);
  }
  free(fs->slots);
  fs->slots = slots;
  fs->nslots = nslots;
  return 0;
}

static int grow_ents(dl__fileset *fs, size_t cap) {
  dl__entry *n = realloc(fs->ents, cap * sizeof *n);
  if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
  huge_hint(n, cap * sizeof *n);
  fs->ents = n;
  fs->cap = cap;
  return 0;
}

#define PREFAULT_MIN ((size_t)8 << 20)
#define PREFAULT_STEP ((size_t)1 << 20)

/* Populates the reserved regions front to back, a slice at a time, until told to stop. */
static void *prefault_main(void *arg) {
  dl__fileset *fs = arg;
#ifdef MADV_POPULATE_WRITE
  const uintptr_t pg = 4096;
  for (int r = 0; r < 2; r++) {
    uintptr_t s = ((uintptr_t)fs->pf_p[r] + pg - 1) & ~(pg - 1);
    uintptr_t e = ((uintptr_t)fs->pf_p[r] + fs->pf_n[r]) & ~(pg - 1);
    for (; s < e && !atomic_load(&fs->pf_stop); s += PREFAULT_STEP) {
      size_t n = e - s < PREFAULT_STEP ? e - s : PREFAULT_STEP;
      if (madvise((void *)s, n, MADV_POPULATE_WRITE)) break; /* unsupported: give up */
    }
  }
#else
  (void)fs;
#endif
  return NULL;
}

int dl__fileset_reserve(dl__fileset *fs, size_t extra, size_t bytes) {
  if (extra > UINT32_MAX - 1 - fs->n) return 0; /* apply will refuse; no need to guess */
  size_t want = fs->n + extra, ns = fs->nslots ? fs->nslots : 1024;
  while ((want + 1) * 10 >= ns * 7) ns *= 2;
  int rc = ns != fs->nslots && !fs->bulk ? rehash(fs, ns) : 0; /* bulk: indexed at the end */
  if (!rc && want > fs->cap) rc = grow_ents(fs, want);
  if (rc || fs->pf_on || extra * sizeof *fs->ents + bytes < PREFAULT_MIN) return rc;
  void *blk = bytes >= PREFAULT_MIN ? dl__arena_reserve(&fs->arena, bytes) : NULL;
  fs->pf_p[0] = fs->ents + fs->n;
  fs->pf_n[0] = (fs->cap - fs->n) * sizeof *fs->ents;
  fs->pf_p[1] = blk;
  fs->pf_n[1] = blk ? bytes : 0;
  atomic_store(&fs->pf_stop, false);
  fs->pf_on = pthread_create(&fs->pf_thread, NULL, prefault_main, fs) == 0;
  return 0;
}

/* Slot holding the key, or the empty slot where it would go. */
static size_t probe(const dl__fileset *fs, uint32_t h, const char *path, const dl_dv *dv) {
  size_t s = h & (fs->nslots - 1);
  while (fs->slots[s]) {
    /* the slot keeps the hash beside the index: mismatches never touch the entry */
    if ((uint32_t)(fs->slots[s] >> 32) == h) {
      const dl__entry *e = &fs->ents[SLOT_INDEX(fs->slots[s])];
      if (dv_same(e->dv, dv) && path_same(e->path, path)) return s;
    }
    s = (s + 1) & (fs->nslots - 1);
  }
  return s;
}

const dl__entry *dl__fileset_find(const dl__fileset *fs, const dl__entry *key) {
  if (!fs || !fs->nslots) return NULL;
  size_t s = probe(fs, key->hash, key->path, key->dv);
  return fs->slots[s] ? &fs->ents[SLOT_INDEX(fs->slots[s])] : NULL;
}

/* ---------- interning of partition maps ---------- */

static const char *intern_pv(dl__fileset *fs, const char *pv) {
  size_t n = dl__kv_size(pv);
  if (n <= 1) return "";
  if (fs->pv_n * 2 >= fs->pv_nslots) {
    size_t ns = fs->pv_nslots ? fs->pv_nslots * 2 : 64;
    const char **slots = calloc(ns, sizeof *slots);
    if (!slots) return NULL;
    for (size_t i = 0; i < fs->pv_nslots; i++) {
      const char *p = fs->pv_slots[i];
      if (!p) continue;
      size_t s = dl__hash(p, dl__kv_size(p), 7) & (ns - 1);
      while (slots[s]) s = (s + 1) & (ns - 1);
      slots[s] = p;
    }
    free(fs->pv_slots);
    fs->pv_slots = slots;
    fs->pv_nslots = ns;
  }
  /* files come grouped by partition: the map interned last is the likeliest */
  if (fs->pv_last && fs->pv_last_n == n && !memcmp(fs->pv_last, pv, n)) return fs->pv_last;
  size_t s = dl__hash(pv, n, 7) & (fs->pv_nslots - 1);
  while (fs->pv_slots[s]) {
    const char *p = fs->pv_slots[s];
    if (dl__kv_size(p) == n && !memcmp(p, pv, n)) {
      fs->pv_last = p;
      fs->pv_last_n = n;
      return p;
    }
    s = (s + 1) & (fs->pv_nslots - 1);
  }
  char *copy = dl__arena_alloc(&fs->arena, n);
  if (!copy) return NULL;
  memcpy(copy, pv, n);
  fs->pv_slots[s] = copy;
  fs->pv_n++;
  fs->pv_last = copy;
  fs->pv_last_n = n;
  return copy;
}

/* ---------- upsert ---------- */

/* Counts e in (sign +1) or out (-1) of the totals. Sizes come from the log: the sum of
 * the adds' sizes must fit int64 (a removal only takes back what was counted in). */
static int count(dl__fileset *fs, const dl__entry *e, int sign) {
  if (e->kind != DL__E_ADD) {
    fs->n_remove += (size_t)sign;
    return 0;
  }
  int64_t size = e->size > 0 ? e->size : 0;
  if (sign < 0) size = -size;
  if (__builtin_add_overflow(fs->add_bytes, size, &fs->add_bytes))
    return dd_err_set(DD_ECORRUPT, "the sizes of the table's files add up to more than %lld bytes",
                      (long long)INT64_MAX);
  fs->n_add += (size_t)sign;
  return 0;
}

/* Same key: the descriptor's non-key fields come from the newer action. */
static void refresh_dv(dl__entry *e, const dl_dv *dv) {
  if (!e->dv || !dv) return;
  ((dl_dv *)e->dv)->cardinality = dv->cardinality;
  ((dl_dv *)e->dv)->size_in_bytes = dv->size_in_bytes;
  ((dl_dv *)e->dv)->max_row_index = dv->max_row_index;
}

static int fill(dl__fileset *fs, dl__entry *e, int kind, const dl_file *f, const dl_dv *dv,
                uint32_t h, bool fresh, const lens *l) {
  dl__arena *a = &fs->arena;
  if (fresh) {
    e->path = dl__arena_strndup(a, f->path, l ? l->path : strlen(f->path));
    if (!e->path) return dd_err_set(DD_ENOMEM, "out of memory");
    e->dv = NULL;
    if (dv) {
      dl_dv *d = dl__arena_alloc(a, sizeof *d);
      if (!d) return dd_err_set(DD_ENOMEM, "out of memory");
      *d = *dv;
      if (!(d->path_or_inline = dl__arena_strdup(a, dv->path_or_inline)))
        return dd_err_set(DD_ENOMEM, "out of memory");
      e->dv = d;
    }
  } else {
    refresh_dv(e, dv);
  }
  e->stats = f->stats ? dl__arena_strndup(a, f->stats, l ? l->stats : strlen(f->stats)) : NULL;
  e->pv = intern_pv(fs, f->partition_values ? f->partition_values : "");
  e->tags = NULL;
  if (f->tags && *f->tags) {
    size_t n = dl__kv_size(f->tags);
    char *t = dl__arena_alloc(a, n);
    if (t) memcpy(t, f->tags, n);
    e->tags = t;
  }
  if ((f->stats && !e->stats) || !e->pv || (f->tags && *f->tags && !e->tags))
    return dd_err_set(DD_ENOMEM, "out of memory");
  e->size = f->size;
  e->time = kind == DL__E_ADD ? f->modification_time : f->deletion_timestamp;
  e->hash = h;
  e->kind = (uint8_t)kind;
  e->data_change = f->data_change;
  return 0;
}

/* Bulk mode: a new entry at the end, neither indexed nor counted yet. */
static int append(dl__fileset *fs, int kind, const dl_file *f, const dl_dv *dv, uint32_t h,
                  const lens *l) {
  if (fs->n == fs->cap) {
    int rc = grow_ents(fs, fs->cap ? fs->cap + fs->cap / 2 : 256);
    if (rc) return rc;
  }
  dl__entry *e = &fs->ents[fs->n];
  memset(e, 0, sizeof *e);
  int rc = fill(fs, e, kind, f, dv, h, true, l);
  if (!rc) fs->n++;
  return rc;
}

void dl__fileset_bulk_begin(dl__fileset *fs) {
  if (fs->bulk) return;
  fs->bulk = true;
  fs->bulk_from = fs->n;
}

/* Folds bulk entry b into the indexed entry e of the same key (apply's update path). */
static int fold(dl__fileset *fs, dl__entry *e, const dl__entry *b) {
  int rc = count(fs, e, -1);
  if (rc) return rc;
  refresh_dv(e, b->dv);
  e->stats = b->stats;
  e->pv = b->pv;
  e->tags = b->tags;
  e->size = b->size;
  e->time = b->time;
  e->kind = b->kind;
  e->data_change = b->data_change;
  return count(fs, e, +1);
}

#define PREFETCH_AHEAD 16

int dl__fileset_bulk_end(dl__fileset *fs) {
  prefault_join(fs);
  if (!fs->bulk) return 0;
  size_t n = fs->n, w = fs->bulk_from;
  fs->bulk = false;
  /* size the index for every entry (those before the bulk are re-indexed) */
  size_t ns = fs->nslots ? fs->nslots : 1024;
  while ((n + 1) * 10 >= ns * 7) ns *= 2;
  fs->n = w;
  int rc = rehash(fs, ns); /* a fresh index of the entries before the bulk */
  size_t mask = fs->nslots - 1;
  for (size_t i = w; i < n && !rc; i++) {
    if (i + PREFETCH_AHEAD < n) __builtin_prefetch(&fs->slots[fs->ents[i + PREFETCH_AHEAD].hash & mask]);
    dl__entry *b = &fs->ents[i];
    size_t s = probe(fs, b->hash, b->path, b->dv);
    if (fs->slots[s]) {
      rc = fold(fs, &fs->ents[SLOT_INDEX(fs->slots[s])], b);
      continue;
    }
    if (w != i) fs->ents[w] = *b;
    fs->slots[s] = (uint64_t)b->hash << 32 | (uint32_t)(w + 1);
    w++;
    fs->n = w;
    rc = count(fs, &fs->ents[w - 1], +1);
  }
  return rc;
}

static int check(const dl__fileset *fs, int kind, const dl_file *f, size_t path_len) {
  if (fs->n + 1 > UINT32_MAX - 1) return dd_err_set(DD_ERANGE, "too many files");
  if (kind == DL__E_ADD && f->size < 0)
    return dd_err_set(DD_ECORRUPT, "add of %.*s has a negative or missing size (%lld)",
                      (int)path_len, f->path, (long long)f->size);
  return 0;
}

int dl__fileset_apply_sized(dl__fileset *fs, int kind, const dl_file *f, const dl_dv *dv,
                            size_t path_len, size_t stats_len, uint64_t path_hash) {
  int rc = check(fs, kind, f, path_len);
  if (rc) return rc;
  lens l = {path_len, stats_len, path_hash};
  if (fs->bulk && (path_hash || !memchr(f->path, '%', path_len))) /* the bytes are the key */
    return append(fs, kind, f, dv, key_hash(f->path, &l, dv), &l);
  /* decoding and index lookups work on C strings: terminate them */
  dl_file t = *f;
  char *p = strndup(f->path, path_len), *st = f->stats ? strndup(f->stats, stats_len) : NULL;
  t.path = t.raw_path = p;
  t.stats = st;
  rc = !p || (f->stats && !st) ? dd_err_set(DD_ENOMEM, "out of memory")
                               : dl__fileset_apply(fs, kind, &t, dv);
  free(p);
  free(st);
  return rc;
}

int dl__fileset_apply(dl__fileset *fs, int kind, const dl_file *f, const dl_dv *dv) {
  int rc = check(fs, kind, f, strlen(f->path));
  if (rc) return rc;
  uint32_t h = key_hash(f->path, NULL, dv);
  if (fs->bulk) return append(fs, kind, f, dv, h, NULL);
  if ((fs->n + 1) * 10 >= fs->nslots * 7) {
    int rc = rehash(fs, fs->nslots ? fs->nslots * 2 : 1024);
    if (rc) return rc;
  }
  size_t s = probe(fs, h, f->path, dv);
  if (fs->slots[s]) {
    dl__entry *e = &fs->ents[SLOT_INDEX(fs->slots[s])];
    int rc = count(fs, e, -1);
    if (!rc) rc = fill(fs, e, kind, f, dv, h, false, NULL);
    return rc ? rc : count(fs, e, +1);
  }
  if (fs->n == fs->cap) {
    int rc = grow_ents(fs, fs->cap ? fs->cap + fs->cap / 2 : 256);
    if (rc) return rc;
  }
  dl__entry *e = &fs->ents[fs->n];
  memset(e, 0, sizeof *e);
  rc = fill(fs, e, kind, f, dv, h, true, NULL);
  if (rc) return rc;
  fs->n++;
  fs->slots[s] = (uint64_t)h << 32 | (uint32_t)fs->n;
  return count(fs, e, +1);
}

void dl__entry_view(const dl__entry *e, dl_file *out, char *pathbuf) {
  memset(out, 0, sizeof *out);
  out->raw_path = e->path;
  out->path = strchr(e->path, '%') ? (dl__url_decode(e->path, pathbuf), pathbuf) : e->path;
  out->size = e->size;
  out->modification_time = e->kind == DL__E_ADD ? e->time : -1;
  out->deletion_timestamp = e->kind == DL__E_REMOVE ? e->time : -1;
  out->data_change = e->data_change;
  out->stats = e->stats;
  out->partition_values = e->pv;
  out->tags = e->tags;
  out->dv = e->dv;
  out->base_row_id = -1;
  out->default_row_commit_version = -1;
}

int dl__fileset_merge(dl__fileset *fs, const dl__fileset *src) {
  char small[1024];
  for (size_t i = 0; i < src->n; i++) {
    const dl__entry *e = &src->ents[i];
    dl_file f;
    size_t need = strlen(e->path) + 1;
    char *buf = need <= sizeof small ? small : malloc(need);
    if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
    dl__entry_view(e, &f, buf);
    f.path = e->path; /* keep raw */
    int rc = dl__fileset_apply(fs, e->kind, &f, e->dv);
    if (buf != small) free(buf);
    if (rc) return rc;
  }
  return 0;
}
