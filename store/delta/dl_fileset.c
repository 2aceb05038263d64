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
  dl__pvtab_free(&fs->pv);
  free(fs);
}

size_t dl__fileset_memory(const dl__fileset *fs) {
  if (!fs) return 0;
  return sizeof *fs + fs->arena.bytes + fs->cap * sizeof *fs->ents +
         fs->nslots * sizeof *fs->slots + fs->pv.nslots * sizeof *fs->pv.slots;
}

/* ---------- index ---------- */

/* Transparent huge pages over the 2 MiB-aligned interior of a big table (a hint): the
 * random probes of a million-file index otherwise pay a TLB miss each. */
static void huge_hint(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  (void)dl__madvise_inner(p, n, (size_t)2 << 20, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

/* A slot is 32 bits: 0 is empty, else index + 1 in the bits under the table's mask and,
 * above them, the key hash's own bits there: a tag, so that most mismatches never touch
 * the entry. Hence at most DL__MAX_FILES entries (index + 1 under a mask of at most 32
 * bits at the load factor below 0.7). */
#define DL__MAX_FILES (((size_t)1 << 31) - 2)
static inline uint32_t slot_make(size_t nslots, uint32_t h, size_t i) {
  return (h & ~(uint32_t)(nslots - 1)) | (uint32_t)(i + 1);
}
static inline bool slot_tagged(size_t nslots, uint32_t x, uint32_t h) {
  return ((x ^ h) & ~(uint32_t)(nslots - 1)) == 0;
}
#define SLOT_INDEX(fs, x) ((size_t)((x) & (uint32_t)((fs)->nslots - 1)) - 1)

/* A new index of nslots slots holding the first n entries. */
static int rehash_n(dl__fileset *fs, size_t nslots, size_t n) {
  uint32_t *slots = calloc(nslots, sizeof *slots);
  if (!slots) return dd_err_set(DD_ENOMEM, "out of memory");
  huge_hint(slots, nslots * sizeof *slots);
  for (size_t i = 0; i < n; i++) {
    size_t s = fs->ents[i].hash & (nslots - 1);
    while (slots[s]) s = (s + 1) & (nslots - 1);
    slots[s] = slot_make(nslots, fs->ents[i].hash, i);
  }
  free(fs->slots);
  fs->slots = slots;
  fs->nslots = nslots;
  return 0;
}

static int rehash(dl__fileset *fs, size_t nslots) { return rehash_n(fs, nslots, fs->n); }

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
  if (extra > DL__MAX_FILES - fs->n) return 0; /* apply will refuse; no need to guess */
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
    if (slot_tagged(fs->nslots, fs->slots[s], h)) {
      const dl__entry *e = &fs->ents[SLOT_INDEX(fs, fs->slots[s])];
      if (e->hash == h && dv_same(dl__entry_dv(e), dv) && path_same(e->path, path)) return s;
    }
    s = (s + 1) & (fs->nslots - 1);
  }
  return s;
}

const dl__entry *dl__fileset_find(const dl__fileset *fs, const dl__entry *key) {
  if (!fs || !fs->nslots) return NULL;
  size_t s = probe(fs, key->hash, key->path, dl__entry_dv(key));
  return fs->slots[s] ? &fs->ents[SLOT_INDEX(fs, fs->slots[s])] : NULL;
}

/* ---------- interning of partition maps ---------- */

void dl__pvtab_free(dl__pvtab *t) {
  free(t->slots);
  memset(t, 0, sizeof *t);
}

static int pv_grow(dl__pvtab *t) {
  if (t->n * 2 < t->nslots) return 0;
  size_t ns = t->nslots ? t->nslots * 2 : 64;
  const char **slots = calloc(ns, sizeof *slots);
  if (!slots) return DD_ENOMEM;
  for (size_t i = 0; i < t->nslots; i++) {
    const char *p = t->slots[i];
    if (!p) continue;
    size_t s = dl__hash(p, dl__kv_size(p), 7) & (ns - 1);
    while (slots[s]) s = (s + 1) & (ns - 1);
    slots[s] = p;
  }
  free(t->slots);
  t->slots = slots;
  t->nslots = ns;
  return 0;
}

/* a NULL: pv itself is kept (a map already in an arena of the same set, merged in). */
const char *dl__pvtab_intern(dl__pvtab *t, dl__arena *a, const char *pv) {
  if (pv == t->last) return pv; /* the map this table gave last, handed back */
  size_t n = dl__kv_size(pv);
  if (n <= 1) return "";
  /* files come grouped by partition: the map interned last is the likeliest */
  if (t->last && t->last_n == n && !memcmp(t->last, pv, n)) return t->last;
  if (pv_grow(t)) return NULL;
  size_t s = dl__hash(pv, n, 7) & (t->nslots - 1);
  for (const char *p; (p = t->slots[s]); s = (s + 1) & (t->nslots - 1))
    if (dl__kv_size(p) == n && !memcmp(p, pv, n)) break;
  if (!t->slots[s]) {
    char *copy = a ? dl__arena_alloc(a, n) : (char *)pv;
    if (!copy) return NULL;
    if (a) memcpy(copy, pv, n);
    t->slots[s] = copy;
    t->n++;
  }
  t->last = t->slots[s];
  t->last_n = n;
  return t->last;
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
  dl_dv *d = (dl_dv *)dl__entry_dv(e);
  if (!d || !dv) return;
  d->cardinality = dv->cardinality;
  d->size_in_bytes = dv->size_in_bytes;
  d->max_row_index = dv->max_row_index;
}

/* Sets e's partition map and tags beside its descriptor d (a key with a descriptor has
 * its own dl__extra, updated in place; new is true for a fresh entry). */
static int set_aux(dl__entry *e, dl__arena *misc, const char *pv, const char *tags,
                   const dl_dv *d, bool fresh, const dl_file *f) {
  e->flags &= (uint8_t)~DL__F_EXTRA;
  int64_t rid = f->base_row_id, rcv = f->default_row_commit_version;
  if (!fresh && d) {
    dl__extra *x = (dl__extra *)e->aux;
    x->pv = pv;
    x->tags = tags;
    x->base_row_id = rid;
    x->row_commit_version = rcv;
    e->flags |= DL__F_EXTRA;
  } else if (d || tags || rid >= 0 || rcv >= 0) {
    dl__extra *x = dl__arena_alloc(misc, sizeof *x);
    if (!x) return dd_err_set(DD_ENOMEM, "out of memory");
    *x = (dl__extra){pv, tags, d, rid, rcv};
    e->aux = x;
    e->flags |= DL__F_EXTRA;
  } else {
    e->aux = pv;
  }
  return 0;
}

/* Fills e from an action: strings (path, stats) into a, the rest into misc, the partition
 * map interned in pt (NULL: it is an interned one). A fresh entry takes the key (path,
 * descriptor); an update keeps it. */
static int fill(dl__arena *a, dl__arena *misc, dl__pvtab *pt, dl__entry *e, int kind,
                const dl_file *f, const dl_dv *dv, uint32_t h, bool fresh, const lens *l) {
  const dl_dv *d = fresh ? NULL : dl__entry_dv(e);
  if (fresh) {
    e->path = dl__arena_strndup(a, f->path, l ? l->path : strlen(f->path));
    if (!e->path) return dd_err_set(DD_ENOMEM, "out of memory");
    e->flags = 0;
    if (dv) {
      dl_dv *c = dl__arena_alloc(misc, sizeof *c);
      if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
      *c = *dv;
      if (!(c->path_or_inline = dl__arena_strdup(misc, dv->path_or_inline)))
        return dd_err_set(DD_ENOMEM, "out of memory");
      d = c;
    }
  } else {
    refresh_dv(e, dv);
  }
  e->stats = f->stats ? dl__arena_strndup(a, f->stats, l ? l->stats : strlen(f->stats)) : NULL;
  const char *pv = !pt ? f->partition_values
                       : dl__pvtab_intern(pt, misc, f->partition_values ? f->partition_values : "");
  char *tags = NULL;
  if (f->tags && *f->tags) {
    size_t n = dl__kv_size(f->tags);
    if ((tags = dl__arena_alloc(misc, n))) memcpy(tags, f->tags, n);
  }
  if ((f->stats && !e->stats) || !pv || (f->tags && *f->tags && !tags))
    return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = set_aux(e, misc, pv, tags, d, fresh, f);
  if (rc) return rc;
  e->size = f->size;
  e->time = kind == DL__E_ADD ? f->modification_time : f->deletion_timestamp;
  e->hash = h;
  e->kind = (uint8_t)kind;
  if (f->data_change) e->flags |= DL__F_DATA_CHANGE;
  else e->flags &= (uint8_t)~DL__F_DATA_CHANGE;
  if (kind == DL__E_ADD && f->clustering_provider && !strcmp(f->clustering_provider, DL__LIQUID))
    e->flags |= DL__F_LIQUID;
  else e->flags &= (uint8_t)~DL__F_LIQUID;
  return 0;
}

static int fill_fs(dl__fileset *fs, dl__entry *e, int kind, const dl_file *f, const dl_dv *dv,
                   uint32_t h, bool fresh, const lens *l) {
  return fill(&fs->arena, &fs->arena, &fs->pv, e, kind, f, dv, h, fresh, l);
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
  int rc = fill_fs(fs, e, kind, f, dv, h, true, l);
  if (!rc) fs->n++;
  return rc;
}

void dl__fileset_bulk_begin(dl__fileset *fs) {
  if (fs->bulk) return;
  fs->bulk = true;
  fs->bulk_from = fs->bulk_r = fs->bulk_w = fs->n; /* the index holds the entries before */
}

/* Folds bulk entry b into the indexed entry e of the same key (apply's update path). The
 * same key means both have a descriptor or neither: e keeps its own, with b's fields. */
static int fold(dl__fileset *fs, dl__entry *e, const dl__entry *b) {
  int rc = count(fs, e, -1);
  if (rc) return rc;
  refresh_dv(e, dl__entry_dv(b));
  bool has_dv = dl__entry_dv(e) != NULL;
  if (has_dv) {
    dl__extra *x = (dl__extra *)e->aux;
    x->pv = dl__entry_pv(b);
    x->tags = dl__entry_tags(b);
    x->base_row_id = dl__entry_base_row_id(b);
    x->row_commit_version = dl__entry_row_commit_version(b);
  } else {
    e->aux = b->aux;
  }
  e->stats = b->stats;
  e->size = b->size;
  e->time = b->time;
  e->kind = b->kind;
  e->flags = (uint8_t)((b->flags & (DL__F_DATA_CHANGE | DL__F_LIQUID)) | (has_dv ? DL__F_EXTRA : (b->flags & DL__F_EXTRA)));
  return count(fs, e, +1);
}

#define PREFETCH_AHEAD 16

int dl__fileset_bulk_index(dl__fileset *fs, size_t upto) {
  if (!fs->bulk || upto > fs->n || upto < fs->bulk_r)
    return dd_err_set(DD_EINVAL, "file set: bulk_index past the entries");
  /* size the index for every entry there is (a larger one re-indexes those done) */
  size_t ns = fs->nslots ? fs->nslots : 1024;
  while ((fs->n + 1) * 10 >= ns * 7) ns *= 2;
  int rc = ns != fs->nslots ? rehash_n(fs, ns, fs->bulk_w) : 0;
  size_t mask = fs->nslots - 1, w = fs->bulk_w, i = fs->bulk_r;
  for (; i < upto && !rc; i++) {
    if (i + PREFETCH_AHEAD < upto)
      __builtin_prefetch(&fs->slots[fs->ents[i + PREFETCH_AHEAD].hash & mask]);
    dl__entry *b = &fs->ents[i];
    if (!b->kind) continue; /* a hole left by a parallel load */
    size_t s = probe(fs, b->hash, b->path, dl__entry_dv(b));
    if (fs->slots[s]) {
      rc = fold(fs, &fs->ents[SLOT_INDEX(fs, fs->slots[s])], b);
      continue;
    }
    if (w != i) fs->ents[w] = *b;
    fs->slots[s] = slot_make(fs->nslots, b->hash, w);
    w++;
    rc = count(fs, &fs->ents[w - 1], +1);
  }
  fs->bulk_r = i;
  fs->bulk_w = w;
  return rc;
}

int dl__fileset_bulk_end(dl__fileset *fs) {
  prefault_join(fs);
  if (!fs->bulk) return 0;
  int rc = fs->bulk_r < fs->n ? dl__fileset_bulk_index(fs, fs->n) : 0;
  fs->n = fs->bulk_w;
  fs->bulk = false;
  return rc;
}

static int check_size(int kind, const dl_file *f, size_t path_len) {
  if (kind == DL__E_ADD && f->size < 0)
    return dd_err_set(DD_ECORRUPT, "add of %.*s has a negative or missing size (%lld)",
                      (int)path_len, f->path, (long long)f->size);
  return 0;
}

static int check(const dl__fileset *fs, int kind, const dl_file *f, size_t path_len) {
  if (fs->n + 1 > DL__MAX_FILES) return dd_err_set(DD_ERANGE, "too many files");
  return check_size(kind, f, path_len);
}

/* ---------- parallel bulk loading ---------- */

int dl__fileset_bulk_room(dl__fileset *fs, size_t rows, dl__entry **out) {
  *out = NULL;
  if (!fs->bulk) return dd_err_set(DD_EINVAL, "file set: bulk_room outside bulk loading");
  if (rows > DL__MAX_FILES - fs->n) return dd_err_set(DD_ERANGE, "too many files");
  prefault_join(fs); /* the entries may move */
  size_t want = fs->n + rows;
  /* a little room past the checkpoint for the commits after it (no doubling realloc) */
  if (want > fs->cap) {
    int rc = grow_ents(fs, want + rows / 64 + 64);
    if (rc) return rc;
  }
  *out = fs->ents + fs->n;
  fs->n += rows;
  return 0;
}

void dl__fileset_bulk_commit(dl__fileset *fs, bool ok, dl__arena *arenas, dl__pvtab *pvs,
                             size_t n) {
  if (!ok) fs->n = fs->bulk_r; /* the room's entries past those indexed are dropped */
  for (size_t i = 0; i < n; i++) {
    for (int k = 0; k < 2; k++) dl__arena_splice(&fs->arena, &arenas[2 * i + k]);
    /* the threads' maps join the set's (kept where they are): later commits find them */
    for (size_t s = 0; s < pvs[i].nslots; s++)
      if (pvs[i].slots[s] && !dl__pvtab_intern(&fs->pv, NULL, pvs[i].slots[s])) break;
    dl__pvtab_free(&pvs[i]);
  }
}

int dl__fileset_bulk_fill(dl__entry *e, dl__arena *a, dl__arena *misc, dl__pvtab *pv, int kind,
                          const dl_file *f, const dl_dv *dv, size_t path_len, size_t stats_len,
                          uint64_t path_hash) {
  int rc = check_size(kind, f, path_len);
  if (rc) return rc;
  lens l = {path_len, stats_len, path_hash};
  uint32_t h;
  if (path_hash || !memchr(f->path, '%', path_len)) { /* the bytes are the key */
    h = key_hash(f->path, &l, dv);
  } else {
    char *p = strndup(f->path, path_len);
    if (!p) return dd_err_set(DD_ENOMEM, "out of memory");
    h = key_hash(p, NULL, dv);
    free(p);
  }
  memset(e, 0, sizeof *e);
  return fill(a, misc, pv, e, kind, f, dv, h, true, &l);
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
    dl__entry *e = &fs->ents[SLOT_INDEX(fs, fs->slots[s])];
    int rc = count(fs, e, -1);
    if (!rc) rc = fill_fs(fs, e, kind, f, dv, h, false, NULL);
    return rc ? rc : count(fs, e, +1);
  }
  if (fs->n == fs->cap) {
    int rc = grow_ents(fs, fs->cap ? fs->cap + fs->cap / 2 : 256);
    if (rc) return rc;
  }
  dl__entry *e = &fs->ents[fs->n];
  memset(e, 0, sizeof *e);
  rc = fill_fs(fs, e, kind, f, dv, h, true, NULL);
  if (rc) return rc;
  fs->n++;
  fs->slots[s] = slot_make(fs->nslots, h, fs->n - 1);
  return count(fs, e, +1);
}

void dl__entry_view(const dl__entry *e, dl_file *out, char *pathbuf) {
  memset(out, 0, sizeof *out);
  out->raw_path = e->path;
  out->path = strchr(e->path, '%') ? (dl__url_decode(e->path, pathbuf), pathbuf) : e->path;
  out->size = e->size;
  out->modification_time = e->kind == DL__E_ADD ? e->time : -1;
  out->deletion_timestamp = e->kind == DL__E_REMOVE ? e->time : -1;
  out->data_change = dl__entry_data_change(e);
  out->stats = e->stats;
  out->partition_values = dl__entry_pv(e);
  out->tags = dl__entry_tags(e);
  out->dv = dl__entry_dv(e);
  out->base_row_id = dl__entry_base_row_id(e);
  out->default_row_commit_version = dl__entry_row_commit_version(e);
  out->clustering_provider = e->flags & DL__F_LIQUID ? DL__LIQUID : NULL;
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
    int rc = dl__fileset_apply(fs, e->kind, &f, dl__entry_dv(e));
    if (buf != small) free(buf);
    if (rc) return rc;
  }
  return 0;
}
