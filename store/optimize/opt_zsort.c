/* opt_zsort.c: the Z-order of one partition's rows in memory bounded by run_bytes (see
 * opt_int.h). Rows gather in one run; a partition that fits is ordered exactly as
 * opt__zorder_order does. Otherwise every column's ranks come from a deterministic
 * reservoir sample of the partition (OPT_ZS_SAMPLE rows: the exact dense ranks while the
 * partition has no more rows, else the rank of a value among the sampled ones, as Delta's
 * range partition ids come from a sample), each full run is sorted by its Z-keys (ties in
 * arrival order) and written to an unlinked temp file as chunks of OPT_ZS_CHUNK_ROWS rows
 * ([u64 rows][u64 IPC bytes][keys][Arrow IPC stream]), and the runs are merged (ties to the
 * earlier run), reading one chunk per run at a time. */
#include "store/optimize/opt_int.h"

#include "store/arrow/arrow_read.h"
#include "store/arrow/buf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct zcol {
  uint64_t *key;         /* the sample's keys (OPT_ZS_SAMPLE) */
  bool *valid;
  uint64_t *dist;        /* distinct valid sampled keys, ascending */
  size_t m;
  bool hn;               /* a null in the partition */
} zcol;

typedef struct zrun { off_t off, end; } zrun;

struct opt__zsort {
  const arw_schema *schema;
  const char *const *names;
  size_t k, words, run_bytes;
  char *tmp_dir;
  arw_batch *run;
  size_t rows;
  size_t *idx;           /* scratch row indexes */
  size_t cap_idx;
  zcol *cols;
  uint64_t seen, rng;
  bool ranks;
  bool hilbert;          /* the curve: Hilbert (clustering) or Z-order */
  int fd;
  off_t fend;
  zrun *runs;
  size_t nruns, cap_runs;
  arw_buf buf;
};

static int oom(void) { return dd_err_set(DD_ENOMEM, "optimize: out of memory (Z-order)"); }

static int idx_upto(opt__zsort *z, size_t n) {
  if (n <= z->cap_idx) return 0;
  size_t *p = realloc(z->idx, n * sizeof *p);
  if (!p) return oom();
  for (size_t i = z->cap_idx; i < n; i++) p[i] = i;
  z->idx = p;
  z->cap_idx = n;
  return 0;
}

int opt__zs_new(opt__zsort **out, const arw_schema *s, const char *const *names, size_t k,
                bool hilbert, size_t run_bytes, const char *tmp_dir) {
  *out = NULL;
  opt__zsort *z = calloc(1, sizeof *z);
  if (!z) return oom();
  z->schema = s;
  z->names = names;
  z->k = k;
  z->hilbert = hilbert;
  z->words = (32 * k + 63) / 64;
  z->run_bytes = run_bytes;
  z->fd = -1;
  z->rng = 0x9E3779B97F4A7C15ULL;
  z->tmp_dir = strdup(tmp_dir);
  z->cols = calloc(k + 1, sizeof *z->cols);
  int rc = z->tmp_dir && z->cols ? arw_batch_new(&z->run, s) : oom();
  if (rc) {
    opt__zs_free(z);
    return rc;
  }
  *out = z;
  return 0;
}

bool opt__zs_has_ranks(const opt__zsort *z) { return z->ranks; }
size_t opt__zs_rows(const opt__zsort *z) { return z->rows; }
size_t opt__zs_runs_spilled(const opt__zsort *z) { return z->nruns; }

/* Keys and validity of Z-order column c of b (n rows). */
static int col_keys(const opt__zsort *z, size_t c, const arw_batch *b, uint64_t *key,
                    bool *valid, size_t n) {
  int id = arw_schema_find(arw_batch_schema(b), ARW_ROOT, z->names[c]);
  if (id < 0) return dd_err_set(DD_EINVAL, "optimize: no column '%s' to Z-order by", z->names[c]);
  arw_view v;
  int rc = arw_batch_view(b, id, &v);
  if (!rc) rc = opt__column_keys(key, valid, &v, n);
  if (rc == DD_EINVAL)
    rc = dd_err_set(DD_EINVAL, "optimize: cannot Z-order by column '%s' (a nested or "
                    "unordered type)", z->names[c]);
  return rc;
}

/* ---- the sample and the ranks ------------------------------------------------------------ */

static uint64_t next_rand(opt__zsort *z) { /* xorshift64*: the same sample every run */
  z->rng ^= z->rng >> 12;
  z->rng ^= z->rng << 25;
  z->rng ^= z->rng >> 27;
  return z->rng * 2685821657736338717ULL;
}

int opt__zs_sample(opt__zsort *z, const arw_batch *b) {
  size_t n = arw_batch_rows(b);
  uint64_t *key = malloc((n + 1) * sizeof *key);
  bool *valid = malloc(n + 1);
  size_t *slot = malloc((n + 1) * sizeof *slot);
  int rc = key && valid && slot ? 0 : oom();
  for (size_t c = 0; c < z->k && !rc; c++) {
    zcol *zc = &z->cols[c];
    if (!zc->key && (!(zc->key = malloc(OPT_ZS_SAMPLE * sizeof *zc->key)) ||
                     !(zc->valid = malloc(OPT_ZS_SAMPLE))))
      rc = oom();
  }
  /* Algorithm R over the partition's rows, one slot choice for every column */
  for (size_t i = 0; i < n && !rc; i++) {
    uint64_t t = z->seen++;
    slot[i] = t < OPT_ZS_SAMPLE ? (size_t)t : (size_t)(next_rand(z) % (t + 1));
  }
  for (size_t c = 0; c < z->k && !rc; c++) {
    zcol *zc = &z->cols[c];
    if ((rc = col_keys(z, c, b, key, valid, n))) break;
    for (size_t i = 0; i < n; i++) {
      zc->hn |= !valid[i];
      if (slot[i] < OPT_ZS_SAMPLE) {
        zc->key[slot[i]] = key[i];
        zc->valid[slot[i]] = valid[i];
      }
    }
  }
  free(key);
  free(valid);
  free(slot);
  return rc;
}

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return (x > y) - (x < y);
}

int opt__zs_ranks_done(opt__zsort *z) {
  size_t ns = z->seen < OPT_ZS_SAMPLE ? (size_t)z->seen : OPT_ZS_SAMPLE;
  for (size_t c = 0; c < z->k; c++) {
    zcol *zc = &z->cols[c];
    if (!(zc->dist = malloc((ns + 1) * sizeof *zc->dist))) return oom();
    size_t m = 0;
    for (size_t i = 0; i < ns; i++)
      if (zc->valid[i]) zc->dist[m++] = zc->key[i];
    qsort(zc->dist, m, sizeof *zc->dist, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < m; i++)
      if (u == 0 || zc->dist[u - 1] != zc->dist[i]) zc->dist[u++] = zc->dist[i];
    zc->m = u;
    free(zc->key);
    free(zc->valid);
    zc->key = NULL;
    zc->valid = NULL;
  }
  z->ranks = true;
  return 0;
}

/* The rank of a key scaled to 32 bits, as opt__zorder_order's dense ranks when the sample
 * holds every row. */
static uint32_t rank_of(const zcol *zc, bool valid, uint64_t key) {
  if (!valid) return 0;
  uint64_t rmax = (uint64_t)zc->hn + zc->m;
  if (rmax <= 1) return 0;
  rmax--;
  size_t lo = 0, hi = zc->m;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (zc->dist[mid] < key) lo = mid + 1;
    else hi = mid;
  }
  uint64_t r = (uint64_t)zc->hn + lo;
  if (r > rmax) r = rmax;
  return (uint32_t)((r * 0xFFFFFFFFULL) / rmax);
}

/* The Z-keys of b's n rows (n * words) from the sampled ranks. */
static int zkeys(const opt__zsort *z, const arw_batch *b, size_t n, uint64_t *out) {
  uint64_t *key = malloc((n + 1) * sizeof *key);
  bool *valid = malloc(n + 1);
  uint32_t **ranks = calloc(z->k + 1, sizeof *ranks);
  int rc = key && valid && ranks ? 0 : oom();
  for (size_t c = 0; c < z->k && !rc; c++) {
    if (!(ranks[c] = malloc((n + 1) * sizeof **ranks))) rc = oom();
    if (!rc) rc = col_keys(z, c, b, key, valid, n);
    for (size_t i = 0; !rc && i < n; i++) ranks[c][i] = rank_of(&z->cols[c], valid[i], key[i]);
  }
  if (!rc) opt__curve_keys(out, ranks, z->k, n, z->hilbert);
  for (size_t c = 0; ranks && c < z->k; c++) free(ranks[c]);
  free(ranks);
  free(key);
  free(valid);
  return rc;
}

/* ---- runs ------------------------------------------------------------------------------- */

typedef struct order_ctx { const uint64_t *keys; size_t words; } order_ctx;

static int cmp_z_stable(const void *a, const void *b, void *vc) {
  const order_ctx *c = vc;
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  const uint64_t *x = c->keys + i * c->words, *y = c->keys + j * c->words;
  for (size_t w = 0; w < c->words; w++)
    if (x[w] != y[w]) return x[w] < y[w] ? -1 : 1;
  return (i > j) - (i < j);
}

static int put(opt__zsort *z, const void *p, size_t n) {
  const uint8_t *b = p;
  while (n) {
    ssize_t w = pwrite(z->fd, b, n, z->fend);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return dd_err_set(DD_EIO, "optimize: writing a Z-order spill file in %s: %s",
                                  z->tmp_dir, w < 0 ? strerror(errno) : "short write");
    b += w;
    n -= (size_t)w;
    z->fend += w;
  }
  return 0;
}

static int open_spill(opt__zsort *z) {
  char *path = NULL;
  if (asprintf(&path, "%s/deltad-zorder-XXXXXX", z->tmp_dir) < 0) return oom();
  z->fd = mkstemp(path);
  int rc = z->fd < 0 ? dd_err_set(DD_EIO, "optimize: cannot create a Z-order spill file in "
                                  "%s: %s", z->tmp_dir, strerror(errno)) : 0;
  if (!rc) unlink(path); /* nothing left behind, whatever happens */
  free(path);
  return rc;
}

/* Sorts the run by its Z-keys and appends it to the spill file as chunks. */
static int spill(opt__zsort *z) {
  size_t n = arw_batch_rows(z->run);
  if (!n) return 0;
  int rc = z->fd < 0 ? open_spill(z) : 0;
  if (!rc && z->nruns == z->cap_runs) {
    size_t cap = z->cap_runs ? 2 * z->cap_runs : 8;
    zrun *r = realloc(z->runs, cap * sizeof *r);
    if (!r) return oom();
    z->runs = r;
    z->cap_runs = cap;
  }
  if (rc) return rc;
  uint64_t *keys = malloc((n * z->words + 1) * sizeof *keys);
  uint64_t *ck = malloc((OPT_ZS_CHUNK_ROWS * z->words + 1) * sizeof *ck);
  size_t *idx = malloc((n + 1) * sizeof *idx);
  arw_batch *chunk = NULL;
  rc = keys && ck && idx ? arw_batch_new(&chunk, z->schema) : oom();
  if (!rc) rc = zkeys(z, z->run, n, keys);
  if (!rc) {
    for (size_t i = 0; i < n; i++) idx[i] = i;
    order_ctx oc = {keys, z->words};
    qsort_r(idx, n, sizeof *idx, cmp_z_stable, &oc);
  }
  off_t start = z->fend;
  for (size_t at = 0; !rc && at < n; at += OPT_ZS_CHUNK_ROWS) {
    size_t m = n - at < OPT_ZS_CHUNK_ROWS ? n - at : OPT_ZS_CHUNK_ROWS;
    arw_batch_clear(chunk);
    z->buf.len = 0;
    rc = arw_batch_append_rows(chunk, z->run, idx + at, m);
    if (!rc) rc = arw_write_stream(&z->buf, chunk);
    for (size_t i = 0; !rc && i < m; i++)
      memcpy(ck + i * z->words, keys + idx[at + i] * z->words, z->words * sizeof *ck);
    uint64_t head[2] = {m, z->buf.len};
    if (!rc) rc = put(z, head, sizeof head);
    if (!rc) rc = put(z, ck, m * z->words * sizeof *ck);
    if (!rc) rc = put(z, z->buf.data, z->buf.len);
  }
  if (!rc) {
    z->runs[z->nruns++] = (zrun){start, z->fend};
    arw_batch_clear(z->run);
  }
  arw_batch_free(chunk);
  free(keys);
  free(ck);
  free(idx);
  return rc;
}

int opt__zs_add(opt__zsort *z, const arw_batch *b) {
  size_t n = arw_batch_rows(b);
  if (!n) return 0;
  if (arw_batch_rows(z->run) && arw_batch_bytes(z->run) + arw_batch_bytes(b) > z->run_bytes) {
    if (!z->ranks) return OPT_ZS_NEED_RANKS;
    int rc = spill(z);
    if (rc) return rc;
  }
  int rc = idx_upto(z, n);
  if (!rc) rc = arw_batch_append_rows(z->run, b, z->idx, n);
  if (!rc) z->rows += n;
  return rc;
}

/* ---- out -------------------------------------------------------------------------------- */

/* Emits rows idx[0..n) of src in batches bounded by chunk and the cuts. */
typedef struct emitter {
  arw_batch *out;
  size_t chunk, cut, done;
  opt__zs_emit_fn emit;
  void *ctx;
} emitter;

static size_t room(const emitter *e) {
  size_t rows = arw_batch_rows(e->out), r = e->chunk - rows;
  if (e->cut) {
    size_t past = (e->done + rows) % e->cut;
    if (rows && past == 0) return 0; /* at a cut */
    if (e->cut - past < r) r = e->cut - past;
  }
  return r;
}

static int flush(emitter *e) {
  size_t n = arw_batch_rows(e->out);
  if (!n) return 0;
  int rc = e->emit(e->ctx, e->out);
  e->done += n;
  arw_batch_clear(e->out);
  return rc;
}

static int put_rows(emitter *e, const arw_batch *src, const size_t *idx, size_t n) {
  int rc = 0;
  while (n && !rc) {
    size_t m = room(e);
    if (m > n) m = n;
    rc = arw_batch_append_rows(e->out, src, idx, m);
    idx += m;
    n -= m;
    if (!rc && room(e) == 0) rc = flush(e);
  }
  return rc;
}

/* One run's cursor in the merge: its current chunk. */
typedef struct cursor {
  off_t off, end;
  arw_reader *r;         /* owns the schema of b: freed after it */
  arw_batch *b;
  uint64_t *keys;
  size_t cap_keys;
  uint8_t *ipc;
  size_t cap_ipc;
  size_t n, pos;
} cursor;

static int get(int fd, void *p, size_t n, off_t off) {
  uint8_t *b = p;
  while (n) {
    ssize_t r = pread(fd, b, n, off);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return dd_err_set(DD_EIO, "optimize: reading a Z-order spill file: %s",
                                  r < 0 ? strerror(errno) : "short read");
    b += r;
    n -= (size_t)r;
    off += r;
  }
  return 0;
}

static int grow(void **p, size_t *cap, size_t n) {
  if (n <= *cap) return 0;
  void *q = realloc(*p, n);
  if (!q) return oom();
  *p = q;
  *cap = n;
  return 0;
}

/* Loads the cursor's next chunk (c->n = 0 past its run's end). */
static int load(const opt__zsort *z, cursor *c) {
  arw_batch_free(c->b);
  arw_reader_free(c->r);
  c->b = NULL;
  c->r = NULL;
  c->n = c->pos = 0;
  if (c->off >= c->end) return 0;
  uint64_t head[2];
  int rc = get(z->fd, head, sizeof head, c->off);
  size_t kb = (size_t)head[0] * z->words * sizeof *c->keys;
  if (!rc) rc = grow((void **)&c->keys, &c->cap_keys, kb + 8);
  if (!rc) rc = grow((void **)&c->ipc, &c->cap_ipc, (size_t)head[1] + 8);
  if (!rc) rc = get(z->fd, c->keys, kb, c->off + (off_t)sizeof head);
  if (!rc) rc = get(z->fd, c->ipc, (size_t)head[1], c->off + (off_t)(sizeof head + kb));
  if (!rc) rc = arw_reader_open(&c->r, c->ipc, (size_t)head[1]);
  if (!rc) rc = arw_reader_next(c->r, &c->b);
  if (!rc && (!c->b || arw_batch_rows(c->b) != head[0]))
    rc = dd_err_set(DD_EINTERNAL, "optimize: a Z-order spill chunk does not read back");
  if (rc) return rc;
  c->n = (size_t)head[0];
  c->off += (off_t)(sizeof head + kb + head[1]);
  return 0;
}

static int cmp_keys(const uint64_t *x, const uint64_t *y, size_t words) {
  for (size_t w = 0; w < words; w++)
    if (x[w] != y[w]) return x[w] < y[w] ? -1 : 1;
  return 0;
}

static int merge(opt__zsort *z, emitter *e) {
  size_t k = z->nruns;
  cursor *cs = calloc(k, sizeof *cs);
  int rc = cs ? idx_upto(z, OPT_ZS_CHUNK_ROWS) : oom();
  for (size_t i = 0; i < k && !rc; i++) {
    cs[i].off = z->runs[i].off;
    cs[i].end = z->runs[i].end;
    rc = load(z, &cs[i]);
  }
  size_t w = z->words;
  while (!rc) {
    size_t best = k, second = k; /* the smallest head, then the next (ties: earlier run) */
    for (size_t i = 0; i < k; i++) {
      if (cs[i].pos >= cs[i].n) continue;
      const uint64_t *ki = cs[i].keys + cs[i].pos * w;
      if (best == k || cmp_keys(ki, cs[best].keys + cs[best].pos * w, w) < 0) {
        second = best;
        best = i;
      } else if (second == k || cmp_keys(ki, cs[second].keys + cs[second].pos * w, w) < 0) {
        second = i;
      }
    }
    if (best == k) break;
    cursor *c = &cs[best];
    /* the rows of best that come before second's head: one contiguous copy */
    size_t s = 1;
    while (c->pos + s < c->n) {
      if (second == k) { s = c->n - c->pos; break; }
      int d = cmp_keys(c->keys + (c->pos + s) * w, cs[second].keys + cs[second].pos * w, w);
      if (d > 0 || (d == 0 && best > second)) break;
      s++;
    }
    rc = put_rows(e, c->b, z->idx + c->pos, s);
    c->pos += s;
    if (!rc && c->pos >= c->n) rc = load(z, c);
  }
  for (size_t i = 0; cs && i < k; i++) {
    arw_batch_free(cs[i].b);
    arw_reader_free(cs[i].r);
    free(cs[i].keys);
    free(cs[i].ipc);
  }
  free(cs);
  return rc;
}

int opt__zs_finish(opt__zsort *z, size_t chunk, size_t cut, opt__zs_emit_fn emit, void *ctx) {
  emitter e = {NULL, chunk ? chunk : OPT_ZS_CHUNK_ROWS, cut, 0, emit, ctx};
  int rc = arw_batch_new(&e.out, z->schema);
  size_t n = arw_batch_rows(z->run);
  if (!rc && z->nruns == 0) { /* it fits: sort in memory */
    size_t *idx = NULL;
    if (!z->ranks) {
      rc = opt__zorder_order(&idx, z->run, z->names, z->k, z->hilbert);
    } else {
      uint64_t *keys = malloc((n * z->words + 1) * sizeof *keys);
      idx = malloc((n + 1) * sizeof *idx);
      rc = keys && idx ? zkeys(z, z->run, n, keys) : oom();
      for (size_t i = 0; !rc && i < n; i++) idx[i] = i;
      order_ctx oc = {keys, z->words};
      if (!rc) qsort_r(idx, n, sizeof *idx, cmp_z_stable, &oc);
      free(keys);
    }
    if (!rc) rc = put_rows(&e, z->run, idx, n);
    free(idx);
  } else if (!rc) {
    rc = spill(z);
    arw_batch_free(z->run); /* its buffers are not needed while merging */
    z->run = NULL;
    if (!rc) rc = merge(z, &e);
  }
  if (!rc) rc = flush(&e);
  arw_batch_free(e.out);
  return rc;
}

void opt__zs_free(opt__zsort *z) {
  if (!z) return;
  arw_batch_free(z->run);
  for (size_t c = 0; z->cols && c < z->k; c++) {
    free(z->cols[c].key);
    free(z->cols[c].valid);
    free(z->cols[c].dist);
  }
  free(z->cols);
  if (z->fd >= 0) close(z->fd);
  free(z->runs);
  free(z->idx);
  arw_buf_free(&z->buf);
  free(z->tmp_dir);
  free(z);
}
