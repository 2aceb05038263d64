/* dl_checkpoint_flat.c: the fast path of Parquet checkpoint reading. The add and remove
 * actions (all but a handful of a checkpoint's rows) are decoded a column at a time with
 * pq_column_read and walked level by level into dl__actions, instead of being assembled
 * as nested rows first. Only the leaves replay keeps are read (path, size, time,
 * dataChange, stats, partitionValues, tags, deletionVector). A file whose add/remove
 * columns have a shape or type this walker does not expect is left to the row reader
 * (dl_checkpoint_read.c), which answers the same for every file it accepts. Row groups are
 * shared out to one thread per core; each decodes a whole row group into its own columns
 * (buffers reused from one row group to the next) and fills that row group's entries of
 * the file set straight away, in place (row r of the file is entry r: the set is sized
 * from the footer's row counts), with its strings in the thread's own arena. No locks:
 * rows never share an entry, and the duplicates of a key are folded when the set is
 * indexed (dl__fileset_bulk_end), exactly as one-by-one upserts would. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"
#include "store/parquet/pq.h"

/* ---------- plan: which leaves, at which levels ---------- */

enum {
  C_PATH, C_SIZE, C_TIME, C_DC, C_STATS, C_CP, C_PVK, C_PVV, C_TGK, C_TGV, C_BRID, C_DRCV,
  C_DVST, C_DVP, C_DVOFF, C_DVSIZE, C_DVCARD, C_DVMAX, C_N,
};
#define C_MAP_FIRST C_PVK
#define C_DV_FIRST C_DVST

typedef struct fl_side {
  bool on;
  int16_t xdef;         /* the action's struct is present when def(path) >= xdef */
  int16_t pv_entry, tg_entry, dv_def;
  int leaf[C_N];        /* file leaf index, -1 when the file lacks it */
  int16_t maxdef[C_N];
  int dv_probe;         /* the DV leaf whose levels say whether the DV is there */
} fl_side;

struct dl__flat {
  const pq_file *pf;
  fl_side side[2];      /* 0 add, 1 remove */
};

/* Per value of a side's path and stats columns: the C-string length (cut at a NUL). */
typedef struct fl_pre {
  uint32_t *plen, *slen;
  size_t pcap, scap;
} fl_pre;

/* One row group's decoded leaves. A leaf skipped in this row group (on[] false) holds no
 * value there: the side has no path at all (then no action of that side), or no row has
 * a deletion vector (then only the probe leaf is read). */
typedef struct fl_cols {
  pq_column *c[2][C_N];
  bool on[2][C_N];
  fl_pre pre[2];
  int rc;
  char msg[512];        /* the decoding thread's error message */
} fl_cols;

/* 0: found (or absent: *leaf = -1); 1: a shape or type the walker does not handle. */
static int find_leaf(const pq_file *pf, const char *x, const char *name, int kind,
                     int *leaf, int16_t *maxdef) {
  char path[96];
  snprintf(path, sizeof path, "%s.%s", x, name);
  const pq_field *f = pq_file_find(pf, path);
  *leaf = -1;
  if (!f) return 0;
  if (f->type == PQ_T_GROUP || f->max_rep != 0) return 1;
  bool ok = kind == 'i' ? (f->type == PQ_T_INT32 || f->type == PQ_T_INT64)
            : kind == 'b' ? f->type == PQ_T_BOOLEAN : f->type == PQ_T_BYTE_ARRAY;
  if (!ok) return 1;
  *leaf = f->column;
  *maxdef = f->max_def;
  return 0;
}

static int find_map(const pq_file *pf, const char *x, const char *name, fl_side *s, int k,
                    int16_t *entry) {
  char path[96];
  snprintf(path, sizeof path, "%s.%s", x, name);
  const pq_field *m = pq_file_find(pf, path);
  s->leaf[k] = s->leaf[k + 1] = -1;
  if (!m) return 0;
  if (m->shape != PQ_SHAPE_MAP || m->max_rep != 0) return 1;
  const pq_field *r = &m->children[0], *key = &r->children[0], *val = &r->children[1];
  for (int i = 0; i < 2; i++) {
    const pq_field *l = i ? val : key;
    if (l->type != PQ_T_BYTE_ARRAY || l->max_rep != 1) return 1;
    s->leaf[k + i] = l->column;
    s->maxdef[k + i] = l->max_def;
  }
  *entry = r->max_def;
  return 0;
}

static int plan_side(const pq_file *pf, const char *x, bool add, fl_side *s) {
  memset(s, 0, sizeof *s);
  for (int i = 0; i < C_N; i++) s->leaf[i] = -1;
  const pq_field *xf = pq_file_find(pf, x);
  if (!xf) return 0;
  if (xf->shape != PQ_SHAPE_STRUCT || xf->repetition != PQ_OPTIONAL || xf->max_rep != 0)
    return 1;
  s->xdef = xf->max_def;
  int bad = find_leaf(pf, x, "path", 's', &s->leaf[C_PATH], &s->maxdef[C_PATH]);
  bad |= find_leaf(pf, x, "size", 'i', &s->leaf[C_SIZE], &s->maxdef[C_SIZE]);
  bad |= find_leaf(pf, x, add ? "modificationTime" : "deletionTimestamp", 'i',
                   &s->leaf[C_TIME], &s->maxdef[C_TIME]);
  bad |= find_leaf(pf, x, "dataChange", 'b', &s->leaf[C_DC], &s->maxdef[C_DC]);
  if (add) bad |= find_leaf(pf, x, "stats", 's', &s->leaf[C_STATS], &s->maxdef[C_STATS]);
  if (add)
    bad |= find_leaf(pf, x, "clusteringProvider", 's', &s->leaf[C_CP], &s->maxdef[C_CP]);
  bad |= find_leaf(pf, x, "baseRowId", 'i', &s->leaf[C_BRID], &s->maxdef[C_BRID]);
  bad |= find_leaf(pf, x, "defaultRowCommitVersion", 'i', &s->leaf[C_DRCV], &s->maxdef[C_DRCV]);
  bad |= find_map(pf, x, "partitionValues", s, C_PVK, &s->pv_entry);
  bad |= find_map(pf, x, "tags", s, C_TGK, &s->tg_entry);
  static const char *const DV[] = {"storageType", "pathOrInlineDv", "offset", "sizeInBytes",
                                   "cardinality", "maxRowIndex"};
  char dvx[64];
  snprintf(dvx, sizeof dvx, "%s.deletionVector", x);
  const pq_field *dv = pq_file_find(pf, dvx);
  s->dv_probe = -1;
  if (dv) {
    if (dv->shape != PQ_SHAPE_STRUCT || dv->max_rep != 0) return 1;
    s->dv_def = dv->max_def;
    for (int i = 0; i < 6; i++) {
      bad |= find_leaf(pf, dvx, DV[i], i < 2 ? 's' : 'i', &s->leaf[C_DV_FIRST + i],
                       &s->maxdef[C_DV_FIRST + i]);
      if (s->dv_probe < 0 && s->leaf[C_DV_FIRST + i] >= 0) s->dv_probe = C_DV_FIRST + i;
    }
    if (s->dv_probe < 0) return 1;
  }
  if (bad || s->leaf[C_PATH] < 0) return 1;
  s->on = true;
  return 0;
}

int dl__flat_open(dl__flat **out, const pq_file *pf) {
  *out = NULL;
  dl__flat *fl = calloc(1, sizeof *fl);
  if (!fl) return dd_err_set(DD_ENOMEM, "out of memory");
  fl->pf = pf;
  if (plan_side(pf, "add", true, &fl->side[0]) || plan_side(pf, "remove", false, &fl->side[1]) ||
      (!fl->side[0].on && !fl->side[1].on)) {
    free(fl); /* not a shape for this walker: the row reader takes the file */
    return 0;
  }
  *out = fl;
  return 0;
}

void dl__flat_free(dl__flat *fl) { free(fl); }

/* ---------- decoding a row group (thread-safe: reads pf only) ---------- */

static void cols_free(fl_cols *k) {
  for (int s = 0; s < 2; s++) {
    for (int i = 0; i < C_N; i++) {
      pq_column_free(k->c[s][i]);
      k->c[s][i] = NULL;
    }
    free(k->pre[s].plen);
    free(k->pre[s].slen);
    memset(&k->pre[s], 0, sizeof k->pre[s]);
  }
}

static int grow_u32(uint32_t **p, size_t *cap, size_t n) {
  if (n <= *cap) return 0;
  uint32_t *x = realloc(*p, n * sizeof *x);
  if (!x) return dd_err_set(DD_ENOMEM, "out of memory");
  *p = x;
  *cap = n;
  return 0;
}

static int precompute(fl_pre *pr, const pq_column *path, const pq_column *stats) {
  size_t n = path->num_values;
  int rc = grow_u32(&pr->plen, &pr->pcap, n);
  for (size_t v = 0; !rc && v < n; v++)
    pr->plen[v] = (uint32_t)strnlen((const char *)path->ba[v].ptr, path->ba[v].len);
  if (!rc && stats) rc = grow_u32(&pr->slen, &pr->scap, stats->num_values);
  for (size_t v = 0; !rc && stats && v < stats->num_values; v++)
    pr->slen[v] = (uint32_t)strnlen((const char *)stats->ba[v].ptr, stats->ba[v].len);
  return rc;
}

static int load_leaf(const dl__flat *fl, size_t rg, fl_cols *k, int s, int i) {
  const fl_side *sd = &fl->side[s];
  k->on[s][i] = true;
  return k->c[s][i] ? pq_column_reread(k->c[s][i], fl->pf, rg, (size_t)sd->leaf[i])
                    : pq_column_read(&k->c[s][i], fl->pf, rg, (size_t)sd->leaf[i]);
}

/* Whether some row of c has a value defined down to level def. */
static bool any_def(const pq_column *c, int16_t def) {
  if (!c->def) return def <= 0 && c->num_levels;
  for (size_t l = 0; l < c->num_levels; l++)
    if (c->def[l] >= def) return true;
  return false;
}

/* Decodes row group rg into k, reusing the columns k holds from an earlier row group. The
 * path leaf of each side comes first: without any path value the side has no action here
 * (a row with one is refused, as the walk would) and its other leaves are not read; nor
 * are the deletion vector's beyond the probe leaf when no row has one. */
static int cols_load(const dl__flat *fl, size_t rg, fl_cols *k) {
  memset(k->on, 0, sizeof k->on);
  for (int s = 0; s < 2; s++) {
    const fl_side *sd = &fl->side[s];
    if (!sd->on) continue;
    int rc = load_leaf(fl, rg, k, s, C_PATH);
    if (rc) return rc;
    const pq_column *path = k->c[s][C_PATH];
    if (!path->num_values) {
      if (any_def(path, sd->xdef)) return dd_err_set(DD_ECORRUPT, "checkpoint file action without path");
      continue;
    }
    if (sd->dv_probe >= 0 && (rc = load_leaf(fl, rg, k, s, sd->dv_probe))) return rc;
    bool dv = sd->dv_probe >= 0 && any_def(k->c[s][sd->dv_probe], sd->dv_def);
    for (int i = 0; i < C_N; i++) {
      if (sd->leaf[i] < 0 || i == C_PATH || i == sd->dv_probe || (i >= C_DV_FIRST && !dv))
        continue;
      if ((rc = load_leaf(fl, rg, k, s, i))) return rc;
    }
    rc = precompute(&k->pre[s], path, k->on[s][C_STATS] ? k->c[s][C_STATS] : NULL);
    if (rc) return rc;
  }
  return 0;
}

/* ---------- walking the levels ---------- */

typedef struct cur {
  const pq_column *c;
  int16_t maxdef;
  size_t lev, val;
} cur;

static int flat_bad(const char *why) {
  return dd_err_set(DD_ECORRUPT, "checkpoint columns: %s", why);
}

static inline int16_t def_of(const cur *k, size_t lev) { return k->c->def ? k->c->def[lev] : 0; }

/* One scalar entry of the current row: the value's index, or -1 when null. */
static inline ssize_t scalar(cur *k) {
  if (!k->c) return -1;
  size_t l = k->lev++;
  if (def_of(k, l) < k->maxdef) return -1;
  return (ssize_t)k->val++;
}

static const char *bytes_str(dl__arena *a, const cur *k, ssize_t v) {
  if (v < 0 || (size_t)v >= k->c->num_values) return NULL;
  const pq_bytes *b = &k->c->ba[v];
  return dl__arena_strndup(a, (const char *)b->ptr, b->len);
}

static int64_t int_val(const cur *k, ssize_t v, int64_t dflt) {
  if (v < 0 || (size_t)v >= k->c->num_values) return dflt;
  return k->c->i64 ? k->c->i64[v] : k->c->i32[v];
}

/* Partition maps met in this row group, by the pq values of their entries: a row whose
 * entries are the very values (the same pointers: dictionary-encoded maps, as writers
 * store partition values) of a map seen before takes that map's interned copy, neither
 * packed nor looked up again. */
#define MEMO_MAX 4    /* entries of a map kept */
#define MEMO_SLOTS 64 /* direct-mapped by the values' addresses */
typedef struct memo_slot {
  pq_bytes k[MEMO_MAX], v[MEMO_MAX]; /* v.ptr NULL: a null value */
  int n;                             /* -1: empty */
  const char *interned;              /* the map as the fill interned it; NULL: not yet */
} memo_slot;
typedef struct map_memo {
  memo_slot s[MEMO_SLOTS];
  memo_slot *cur; /* the slot of the row just walked; NULL: none (a longer map) */
  bool hit;       /* cur->interned is that row's map */
} map_memo;

static memo_slot *memo_find(map_memo *m, const pq_bytes *k, const pq_bytes *v, size_t n,
                            bool *hit) {
  uintptr_t h = n;
  for (size_t i = 0; i < n; i++)
    h = h * 31 + ((uintptr_t)k[i].ptr ^ ((uintptr_t)v[i].ptr << 3) ^ v[i].len);
  memo_slot *sl = &m->s[(h ^ (h >> 7) ^ (h >> 13)) & (MEMO_SLOTS - 1)];
  *hit = sl->n == (int)n && sl->interned;
  for (size_t i = 0; *hit && i < n; i++)
    *hit = k[i].ptr == sl->k[i].ptr && k[i].len == sl->k[i].len && v[i].ptr == sl->v[i].ptr &&
           v[i].len == sl->v[i].len;
  return sl;
}

static void map_put(dd_buf *b, const pq_bytes *k, const pq_bytes *v) {
  dd_buf_put(b, k->ptr, strnlen((const char *)k->ptr, k->len));
  dd_buf_putc(b, 0);
  if (v->ptr) {
    dd_buf_put(b, v->ptr, strnlen((const char *)v->ptr, v->len));
    dd_buf_putc(b, 0);
  } else {
    dd_buf_put(b, "\xff", 2);
  }
}

/* Entry i of a map row's levels at level l (value indexes *ki, *vi advanced): whether it
 * is an entry (not an empty or null map), its key and value (ptr NULL: null). */
static int map_entry(cur *kk, cur *kv, int16_t entry, size_t l, pq_bytes *k, pq_bytes *v,
                     bool *is) {
  const pq_column *ck = kk->c, *cv = kv->c;
  int16_t dk = def_of(kk, l), dvl = def_of(kv, l);
  ssize_t ki = dk >= kk->maxdef ? (ssize_t)kk->val++ : -1;
  ssize_t vi = dvl >= kv->maxdef ? (ssize_t)kv->val++ : -1;
  if ((ki >= 0 && (size_t)ki >= ck->num_values) || (vi >= 0 && (size_t)vi >= cv->num_values))
    return flat_bad("map values past the column");
  *is = dk >= entry && ki >= 0;
  if (*is) {
    *k = ck->ba[ki];
    *v = vi >= 0 ? cv->ba[vi] : (pq_bytes){NULL, 0};
  }
  return 0;
}

/* The entries of one row of a map (key cursor kk, value cursor kv) into b as a packed map;
 * when emit is false the levels are only consumed. With a memo m, a row of a map met
 * before leaves b as it is (m->hit, m->cur->interned is the map). */
static int map_row(cur *kk, cur *kv, int16_t entry, dd_buf *b, bool emit, map_memo *m) {
  if (m) {
    m->hit = false;
    m->cur = NULL;
  }
  if (!kk->c) {
    b->len = 0;
    return 0;
  }
  const pq_column *ck = kk->c, *cv = kv->c;
  if (ck->num_levels != cv->num_levels) return flat_bad("map key and value levels differ");
  size_t l = kk->lev, l0 = l, k0 = kk->val, v0 = kv->val, n = 0;
  if (l >= ck->num_levels || (ck->rep && ck->rep[l] != 0)) return flat_bad("map row misaligned");
  pq_bytes ek[MEMO_MAX], ev[MEMO_MAX], k1, v1;
  do {
    bool is = false;
    int rc = map_entry(kk, kv, entry, l, &k1, &v1, &is);
    if (rc) return rc;
    if (is && n < MEMO_MAX) {
      ek[n] = k1;
      ev[n] = v1;
    }
    n += is;
    l++;
  } while (l < ck->num_levels && ck->rep[l] != 0);
  kk->lev = kv->lev = l;
  if (!emit) return 0;
  if (m && n <= MEMO_MAX && (m->cur = memo_find(m, ek, ev, n, &m->hit)) && m->hit) return 0;
  b->len = 0;
  if (n <= MEMO_MAX) {
    for (size_t i = 0; i < n; i++) map_put(b, &ek[i], &ev[i]);
  } else { /* a long map: walked again, packed as it goes */
    size_t kl = kk->val, vl = kv->val;
    kk->val = k0;
    kv->val = v0;
    for (size_t x = l0; x < l; x++) {
      bool is = false;
      (void)map_entry(kk, kv, entry, x, &k1, &v1, &is); /* checked above */
      if (is) map_put(b, &k1, &v1);
    }
    kk->val = kl;
    kv->val = vl;
  }
  dd_buf_putc(b, 0);
  if (m && m->cur) { /* the slot now keeps this map; the fill gives its interned copy */
    m->cur->n = (int)n;
    m->cur->interned = NULL;
    memcpy(m->cur->k, ek, n * sizeof *ek);
    memcpy(m->cur->v, ev, n * sizeof *ev);
  }
  return b->oom ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

typedef struct walk {
  cur k[C_N];
  const fl_pre *pre;
  dd_buf pv, tags;
  map_memo pvm; /* of pv, for this row group's values */
  dl__arena a;
} walk;

static void walk_bind(walk *w, const fl_side *sd, fl_cols *k, int s) {
  w->pre = &k->pre[s];
  for (int i = 0; i < MEMO_SLOTS; i++) w->pvm.s[i].n = -1; /* another row group's values */
  for (int i = 0; i < C_N; i++) w->k[i] = (cur){k->on[s][i] ? k->c[s][i] : NULL, sd->maxdef[i], 0, 0};
}

/* Consumes row r of one side (fills *a when emit). A side whose struct is null in this row
 * has one level entry and no value in each of its leaves: it only steps (walk_rg checks at
 * the end of the row group that every value was consumed). */
static int side_row(walk *w, const fl_side *sd, bool here, bool emit, bool add, dl__action *a) {
  cur *k = w->k;
  if (!here) {
    for (int i = 0; i < C_N; i++) k[i].lev++;
    return 0;
  }
  ssize_t v[C_N];
  for (int i = 0; i < C_N; i++)
    if (i != C_PVK && i != C_PVV && i != C_TGK && i != C_TGV) v[i] = scalar(&k[i]);
  bool has_dv = sd->dv_probe >= 0 && k[sd->dv_probe].c &&
                def_of(&k[sd->dv_probe], k[sd->dv_probe].lev - 1) >= sd->dv_def;
  int rc = map_row(&k[C_PVK], &k[C_PVV], sd->pv_entry, &w->pv, emit, &w->pvm);
  if (!rc) rc = map_row(&k[C_TGK], &k[C_TGV], sd->tg_entry, &w->tags, emit, NULL);
  if (rc || !emit) return rc;
  dl_file *f = &a->file;
  memset(f, 0, sizeof *f);
  a->kind = add ? DL__A_ADD : DL__A_REMOVE;
  a->has_dv = false;
  a->sized = true;
  if (v[C_PATH] < 0 || (size_t)v[C_PATH] >= k[C_PATH].c->num_values)
    return dd_err_set(DD_ECORRUPT, "checkpoint file action without path");
  f->path = f->raw_path = (const char *)k[C_PATH].c->ba[v[C_PATH]].ptr;
  a->path_len = w->pre->plen[v[C_PATH]];
  a->path_hash = 0; /* worked out by the fill, on this same thread */
  f->size = int_val(&k[C_SIZE], v[C_SIZE], -1);
  f->modification_time = add ? int_val(&k[C_TIME], v[C_TIME], -1) : -1;
  f->deletion_timestamp = add ? -1 : int_val(&k[C_TIME], v[C_TIME], -1);
  f->data_change = v[C_DC] >= 0 && (size_t)v[C_DC] < k[C_DC].c->num_values && k[C_DC].c->b[v[C_DC]];
  a->stats_len = 0;
  f->stats = NULL;
  if (add && v[C_STATS] >= 0 && (size_t)v[C_STATS] < k[C_STATS].c->num_values) {
    f->stats = (const char *)k[C_STATS].c->ba[v[C_STATS]].ptr;
    a->stats_len = w->pre->slen[v[C_STATS]];
  }
  f->partition_values = w->pv.len ? w->pv.p : "";
  f->tags = w->tags.len > 1 ? w->tags.p : NULL;
  f->base_row_id = int_val(&k[C_BRID], v[C_BRID], -1);
  f->default_row_commit_version = int_val(&k[C_DRCV], v[C_DRCV], -1);
  f->clustering_provider = NULL;
  if (add && v[C_CP] >= 0 && (size_t)v[C_CP] < k[C_CP].c->num_values) {
    const pq_bytes *cp = &k[C_CP].c->ba[v[C_CP]];
    /* the file set keeps "liquid" only (dl__entry's flag) */
    if (cp->len == strlen(DL__LIQUID) && !memcmp(cp->ptr, DL__LIQUID, cp->len))
      f->clustering_provider = DL__LIQUID;
  }
  if (has_dv) {
    dl_dv *d = &a->dv;
    const char *st = bytes_str(&w->a, &k[C_DVST], v[C_DVST]);
    d->path_or_inline = bytes_str(&w->a, &k[C_DVP], v[C_DVP]);
    if (!st || strlen(st) != 1 || !strchr("uip", st[0]) || !d->path_or_inline)
      return dd_err_set(DD_ECORRUPT, "checkpoint deletionVector: bad storageType/pathOrInlineDv");
    d->storage_type = st[0];
    d->offset = int_val(&k[C_DVOFF], v[C_DVOFF], -1);
    d->size_in_bytes = (int32_t)int_val(&k[C_DVSIZE], v[C_DVSIZE], -1);
    d->cardinality = int_val(&k[C_DVCARD], v[C_DVCARD], -1);
    d->max_row_index = int_val(&k[C_DVMAX], v[C_DVMAX], -1);
    a->has_dv = true;
    f->dv = d;
  }
  return 0;
}

static bool present(const fl_cols *k, const fl_side *sd, int s, size_t r) {
  const pq_column *c = k->c[s][C_PATH];
  return sd->on && k->on[s][C_PATH] && c->num_values && (c->def ? c->def[r] : 0) >= sd->xdef;
}

/* The entries row r of a row group fills (ents[r]), and where their bytes go. */
typedef struct sink {
  dl__entry *ents;
  dl__arena *str, *misc;
  dl__pvtab *pv;
} sink;

/* Row r's action into its entry; m: the memo of its side's partition maps. */
static int sink_row(const sink *o, size_t r, dl__action *a, map_memo *m) {
  int kind = a->kind == DL__A_ADD ? DL__E_ADD : DL__E_REMOVE;
  if (m->hit) a->file.partition_values = m->cur->interned;
  int rc = dl__fileset_bulk_fill(&o->ents[r], o->str, o->misc, m->hit ? NULL : o->pv, kind,
                                 &a->file, a->has_dv ? &a->dv : NULL, a->path_len,
                                 a->stats_len, a->path_hash);
  if (!rc && m->cur && !m->hit) m->cur->interned = dl__entry_pv(&o->ents[r]);
  return rc;
}

/* Fills the entries of one decoded row group's add/remove rows; the other rows are holes
 * (kind 0) marked in other[]. */
static int walk_rg(const dl__flat *fl, fl_cols *k, size_t nrows, dl__action *a, walk w[2],
                   const sink *o, uint8_t *other, size_t *n_other) {
  for (int s = 0; s < 2; s++) walk_bind(&w[s], &fl->side[s], k, s);
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < C_N; i++) {
      const pq_column *c = w[s].k[i].c;
      if (c && c->field->max_rep == 0 && c->num_levels != nrows)
        return flat_bad("a column's row count differs from its row group's");
    }
  *n_other = 0;
  int rc = 0;
  for (size_t r = 0; r < nrows && !rc; r++) {
    bool pa = present(k, &fl->side[0], 0, r);
    bool pa_r = present(k, &fl->side[1], 1, r), pr = !pa && pa_r;
    other[r] = !pa && !pr;
    *n_other += other[r];
    for (int s = 0; s < 2 && !rc; s++)
      if (fl->side[s].on)
        rc = side_row(&w[s], &fl->side[s], s ? pa_r : pa, s ? pr : pa, s == 0, a);
    if (rc) break;
    if (pa || pr) rc = sink_row(o, r, a, &w[pr].pvm);
    else o->ents[r].kind = 0;
    if (w[0].a.bytes + w[1].a.bytes > (1u << 20)) {
      dl__arena_free(&w[0].a);
      dl__arena_free(&w[1].a);
    }
  }
  for (int s = 0; s < 2 && !rc; s++)
    for (int i = 0; i < C_N && !rc; i++) {
      const cur *c = &w[s].k[i];
      if (c->c && c->lev != c->c->num_levels)
        rc = flat_bad("a map column holds more rows than its row group");
      else if (c->c && c->val != c->c->num_values)
        rc = flat_bad("a value under a null action");
    }
  return rc;
}

/* ---------- giving consumed bytes back ---------- */

/* Byte range [*lo, *hi) of column chunk (rg, c); false when unknown. */
static bool chunk_range(const pq_file *pf, size_t rg, size_t c, uint64_t *lo, uint64_t *hi) {
  pq_chunk_info ci;
  if (pq_chunk_get(&ci, pf, rg, c)) return false;
  int64_t s = ci.dictionary_page_offset >= 0 && ci.dictionary_page_offset < ci.data_page_offset
                  ? ci.dictionary_page_offset : ci.data_page_offset;
  if (s < 0 || ci.total_compressed_size < 0) return false;
  *lo = (uint64_t)s;
  *hi = (uint64_t)s + (uint64_t)ci.total_compressed_size;
  return true;
}

/* Whether leaf f belongs to the add or remove column (the ones this reader decodes). */
static bool file_action_leaf(const pq_field *f) {
  while (f->parent && f->parent->parent) f = f->parent;
  return !strcmp(f->name, "add") || !strcmp(f->name, "remove");
}

typedef struct rg_span {
  uint64_t lo, hi;   /* every chunk of the row group; lo >= hi: unknown, never dropped */
  uint64_t flo, fhi; /* the add and remove chunks, when no other column's chunk is among
                      * them (the other rows' cursor reads those); flo >= fhi: not so */
  uint64_t after;    /* where the later row groups' chunks start (0: some unknown) */
  uint64_t before;   /* where the earlier row groups' chunks end (UINT64_MAX: some unknown) */
} rg_span;

/* Fills the ranges of row group g; false when a chunk's is unknown. */
static bool rg_ranges(const pq_file *pf, size_t g, rg_span *sp) {
  size_t nc = pq_file_num_columns(pf);
  uint64_t lo = UINT64_MAX, hi = 0, flo = UINT64_MAX, fhi = 0, l, h;
  for (size_t c = 0; c < nc; c++) {
    if (!chunk_range(pf, g, c, &l, &h)) return false;
    lo = l < lo ? l : lo;
    hi = h > hi ? h : hi;
    if (file_action_leaf(pq_file_column(pf, c))) {
      flo = l < flo ? l : flo;
      fhi = h > fhi ? h : fhi;
    }
  }
  for (size_t c = 0; c < nc && flo < fhi; c++)
    if (!file_action_leaf(pq_file_column(pf, c)) && chunk_range(pf, g, c, &l, &h) && l < fhi && h > flo)
      flo = fhi = 0;
  *sp = (rg_span){lo, hi, flo, fhi, 0, 0};
  return lo < hi;
}

/* The row groups' byte ranges, when buf is to be released (NULL otherwise, or on OOM). */
static rg_span *spans_new(const pq_file *pf, const dl__reserve_hint *hint) {
  size_t n = pq_file_num_row_groups(pf);
  if (!hint || !hint->buf || hint->len < 8 || !n) return NULL;
  rg_span *sp = calloc(n, sizeof *sp);
  for (size_t g = 0; sp && g < n; g++)
    if (!rg_ranges(pf, g, &sp[g])) memset(&sp[g], 0, sizeof sp[g]);
  uint64_t after = UINT64_MAX;
  for (size_t g = n; sp && g-- > 0;) {
    sp[g].after = after;
    after = sp[g].lo >= sp[g].hi ? 0 : sp[g].lo < after ? sp[g].lo : after;
  }
  uint64_t before = 0;
  for (size_t g = 0; sp && g < n; g++) {
    sp[g].before = before;
    before = sp[g].lo >= sp[g].hi ? UINT64_MAX : sp[g].hi > before ? sp[g].hi : before;
  }
  return sp;
}

/* Drops the whole pages of buf that hold only row group g's chunks (peak memory: a loaded
 * checkpoint's bytes go as its row groups are applied, in any order), or only its add and
 * remove chunks (files_only: its other rows are still to be read). Nothing is dropped
 * unless every later row group's chunks start after g's, every earlier one's end before
 * them (a crafted file may share bytes) and g's end before the footer, whose parsed form
 * may point into buf. */
static void release_rg(const rg_span *sp, size_t g, const dl__reserve_hint *hint, bool files_only) {
  if (!sp) return;
  uint64_t lo = files_only ? sp[g].flo : sp[g].lo, hi = files_only ? sp[g].fhi : sp[g].hi;
  uint32_t flen;
  if (lo >= hi || lo < sp[g].lo || hi > sp[g].hi) return;
  memcpy(&flen, hint->buf + hint->len - 8, 4); /* little-endian footer length */
  if (lo >= hi || hi > sp[g].after || lo < sp[g].before || (uint64_t)flen + 8 > hint->len ||
      hi > hint->len - 8 - flen)
    return;
  long psz = sysconf(_SC_PAGESIZE);
  uintptr_t pg = psz > 0 ? (uintptr_t)psz : 4096, b = (uintptr_t)hint->buf;
  uintptr_t s = (b + (uintptr_t)lo + pg - 1) & ~(pg - 1), e = (b + (uintptr_t)hi) & ~(pg - 1);
  if (e > s) (void)madvise((void *)s, e - s, MADV_DONTNEED); /* a hint: failure is fine */
}

/* ---------- row groups on every core ---------- */

/* What the threads share. Row group g's row r is entry ents[off[g] + r]; row groups are
 * taken in order from `next`, each decoded and filled by one thread. */
typedef struct fl_par {
  const dl__flat *fl;
  dl__entry *ents;
  const size_t *off;
  size_t nrg;
  uint8_t **other;      /* per row group with other actions (applied later, in order): a
                         * flag per row, 1 for another action; else NULL */
  size_t *n_other;      /* per row group */
  const rg_span *spans;
  const dl__reserve_hint *hint;
  atomic_size_t next;
  atomic_bool stop;     /* set by a failing thread: no row group is taken after it */
  pthread_mutex_t mu;   /* guards done[] and the wake-ups on cv */
  pthread_cond_t cv;
  uint8_t *done;        /* per row group: filled */
} fl_par;

/* One loading thread: its decoded columns, walk state and the arenas it fills (strings,
 * sized per row group, apart from the small allocations). */
typedef struct fl_worker {
  fl_par *p;
  fl_cols k;
  walk w[2];
  dl__action a;
  dl__arena str, misc;
  dl__pvtab pv;
  uint8_t *flags;       /* walk_rg's other[] */
  size_t flags_cap;
  pthread_t th;
  bool started;
  int rc;
  size_t fail_rg;
  char msg[512];
} fl_worker;

/* Faults n bytes at p in with one call (cheaper than a fault per page); a hint. */
static void populate(void *p, size_t n) {
#ifdef MADV_POPULATE_WRITE
  (void)dl__madvise_inner(p, n, 4096, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)n;
#endif
}

/* The file-set string bytes of decoded row group k's actions (paths and stats, each with
 * its terminator): what the thread reserves for them. */
static size_t string_bytes(const fl_cols *k) {
  size_t b = 0;
  for (int s = 0; s < 2; s++) {
    const pq_column *p = k->on[s][C_PATH] ? k->c[s][C_PATH] : NULL;
    const pq_column *st = k->on[s][C_STATS] ? k->c[s][C_STATS] : NULL;
    for (size_t v = 0; p && v < p->num_values; v++) b += k->pre[s].plen[v] + 1;
    for (size_t v = 0; st && v < st->num_values; v++) b += k->pre[s].slen[v] + 1;
  }
  return b;
}

static int worker_rg(fl_worker *wk, size_t g) {
  fl_par *p = wk->p;
  int rc = cols_load(p->fl, g, &wk->k);
  if (rc) return rc;
  size_t nrows = p->off[g + 1] - p->off[g], bytes = string_bytes(&wk->k);
  if (bytes) {
    void *blk = dl__arena_reserve(&wk->str, bytes);
    if (!blk) return dd_err_set(DD_ENOMEM, "out of memory");
    populate(blk, bytes);
  }
  populate(p->ents + p->off[g], nrows * sizeof *p->ents);
  if (nrows > wk->flags_cap) {
    uint8_t *f = realloc(wk->flags, nrows);
    if (!f) return dd_err_set(DD_ENOMEM, "out of memory");
    wk->flags = f;
    wk->flags_cap = nrows;
  }
  sink o = {p->ents + p->off[g], &wk->str, &wk->misc, &wk->pv};
  rc = walk_rg(p->fl, &wk->k, nrows, &wk->a, wk->w, &o, wk->flags, &p->n_other[g]);
  if (!rc && p->n_other[g] && !(p->other[g] = malloc(nrows)))
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (p->other[g]) memcpy(p->other[g], wk->flags, nrows);
  /* a row group with other actions has those read by the row cursor later */
  if (!rc) release_rg(p->spans, g, p->hint, p->n_other[g] > 0);
  return rc;
}

/* Frees what a worker decodes into (not what it filled). */
static void worker_release(fl_worker *wk) {
  cols_free(&wk->k);
  free(wk->flags);
  wk->flags = NULL;
  wk->flags_cap = 0;
  for (int s = 0; s < 2; s++) {
    dd_buf_free(&wk->w[s].pv);
    dd_buf_free(&wk->w[s].tags);
    dl__arena_free(&wk->w[s].a);
  }
}

static void worker_free(fl_worker *wk) {
  worker_release(wk);
  dl__arena_free(&wk->str); /* empty once committed */
  dl__arena_free(&wk->misc);
  dl__pvtab_free(&wk->pv);
}

static void *worker_main(void *arg) {
  fl_worker *wk = arg;
  fl_par *p = wk->p;
  while (!atomic_load(&p->stop)) {
    size_t g = atomic_fetch_add(&p->next, 1);
    if (g >= p->nrg) break;
    int rc = worker_rg(wk, g);
    if (rc) {
      wk->rc = rc;
      wk->fail_rg = g;
      snprintf(wk->msg, sizeof wk->msg, "%s", dd_err_msg());
    }
    pthread_mutex_lock(&p->mu);
    if (rc) atomic_store(&p->stop, true);
    else p->done[g] = 1;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (rc) break;
  }
  worker_release(wk); /* the others may still be filling: peak memory */
  return NULL;
}

/* Threads for nrg row groups: one per core, at most 4, at most one per row group. */
static size_t num_workers(size_t nrg) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  size_t w = n < 1 ? 1 : n > 4 ? 4 : (size_t)n;
  return w < nrg ? w : nrg ? nrg : 1;
}

/* Indexes the entries of each row group as soon as it and those before it are filled
 * (the caller's share of the work while the workers fill the next ones). */
static int index_in_order(fl_par *p, size_t base) {
  int rc = 0;
  for (size_t g = 0; g < p->nrg && !rc; g++) {
    pthread_mutex_lock(&p->mu);
    while (!p->done[g] && !atomic_load(&p->stop)) pthread_cond_wait(&p->cv, &p->mu);
    bool ready = p->done[g];
    pthread_mutex_unlock(&p->mu);
    if (!ready) break; /* a worker failed */
    rc = dl__fileset_bulk_index(p->hint->fs, base + p->off[g + 1]);
  }
  if (rc) atomic_store(&p->stop, true);
  return rc;
}

/* Runs the workers on threads while the caller indexes, and reports the error of the
 * earliest row group that failed (as a serial reader would have met it first), else the
 * indexing's. */
static int run_workers(fl_worker *wk, size_t n, size_t base) {
  fl_par *p = wk[0].p;
  size_t started = 0;
  for (size_t i = 0; i < n; i++) {
    wk[i].started = pthread_create(&wk[i].th, NULL, worker_main, &wk[i]) == 0;
    started += wk[i].started;
  }
  if (!started) worker_main(&wk[0]); /* no thread: everything here, then the index */
  int rc = index_in_order(p, base);
  for (size_t i = 0; i < n; i++)
    if (wk[i].started) pthread_join(wk[i].th, NULL);
  const fl_worker *f = NULL;
  for (size_t i = 0; i < n; i++)
    if (wk[i].rc && (!f || wk[i].fail_rg < f->fail_rg)) f = &wk[i];
  return f ? dd_err_set(f->rc, "%s", f->msg) : rc;
}

int dl__flat_read(dl__flat *fl, dl__other_cb other_cb, void *octx, const dl__reserve_hint *hint) {
  const pq_file *pf = fl->pf;
  size_t nrg = pq_file_num_row_groups(pf), nw = num_workers(nrg);
  size_t *off = malloc((nrg + 1) * sizeof *off), *n_other = calloc(nrg ? nrg : 1, sizeof *n_other);
  fl_worker *wk = calloc(nw, sizeof *wk);
  rg_span *spans = spans_new(pf, hint); /* NULL: the file's bytes are kept */
  uint8_t **other = calloc(nrg ? nrg : 1, sizeof *other), *done = calloc(nrg ? nrg : 1, 1);
  dl__entry *ents = NULL;
  int rc = off && n_other && wk && done && other ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  size_t rows = 0;
  for (size_t g = 0; !rc && g < nrg; g++) {
    int64_t r = pq_row_group_num_rows(pf, g);
    if (r < 0 || (uint64_t)r > SIZE_MAX / 2 - rows) rc = flat_bad("bad row group row count");
    off[g] = rows;
    rows += r > 0 ? (size_t)r : 0;
  }
  size_t base = hint->fs->n;
  bool room = false;
  if (!rc) {
    off[nrg] = rows;
    rc = dl__fileset_bulk_room(hint->fs, rows, &ents);
    room = !rc;
  }
  fl_par p = {.fl = fl, .ents = ents, .off = off, .nrg = nrg, .other = other,
              .n_other = n_other, .spans = spans, .hint = hint, .done = done};
  atomic_init(&p.next, 0);
  atomic_init(&p.stop, false);
  pthread_mutex_init(&p.mu, NULL);
  pthread_cond_init(&p.cv, NULL);
  for (size_t i = 0; i < nw && wk; i++) wk[i].p = &p;
  if (!rc) rc = run_workers(wk, nw, base);
  /* the other actions, in file order (the file set and the state they change are apart) */
  for (size_t g = 0; g < nrg && !rc; g++) {
    if (!n_other[g]) continue;
    rc = other_cb(octx, g, other[g], off[g + 1] - off[g]);
    if (!rc) release_rg(spans, g, hint, false);
  }
  if (room) {
    dl__arena ar[8];
    dl__pvtab pv[4];
    for (size_t i = 0; i < nw; i++) {
      ar[2 * i] = wk[i].str;
      ar[2 * i + 1] = wk[i].misc;
      pv[i] = wk[i].pv;
      memset(&wk[i].str, 0, sizeof wk[i].str);
      memset(&wk[i].misc, 0, sizeof wk[i].misc);
      memset(&wk[i].pv, 0, sizeof wk[i].pv);
    }
    dl__fileset_bulk_commit(hint->fs, !rc, ar, pv, nw);
  }
  pthread_mutex_destroy(&p.mu);
  pthread_cond_destroy(&p.cv);
  free(done);
  for (size_t i = 0; i < nw && wk; i++) worker_free(&wk[i]);
  free(wk);
  free(spans);
  for (size_t g = 0; other && g < nrg; g++) free(other[g]);
  free(other);
  free(n_other);
  free(off);
  return rc;
}
