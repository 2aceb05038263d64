/* pq_wchunk.c: encodes one leaf's buffered row group as a column chunk: statistics
 * (min/max/null_count), an optional dictionary (PLAIN dictionary page + RLE_DICTIONARY
 * data pages; falls back to PLAIN when the dictionary grows large), data pages v1 split
 * at row boundaries, each compressed with the chosen codec. */
#include "store/parquet/pq_writer_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

#define DICT_MAX_BYTES (1u << 20)

typedef struct vref { const uint8_t *p; size_t n; } vref;

static vref value_at(const pq__wleaf *l, size_t i) {
  if (l->type != PQ_T_BYTE_ARRAY)
    return (vref){l->vals.data + i * (size_t)l->elem, (size_t)l->elem};
  uint64_t s, e = l->vals.len;
  memcpy(&s, l->offs.data + i * 8, 8);
  if (i + 1 < l->nvals) memcpy(&e, l->offs.data + (i + 1) * 8, 8);
  return (vref){l->vals.data ? l->vals.data + s : (const uint8_t *)"", (size_t)(e - s)};
}

/* ---- statistics ----------------------------------------------------------------------- */

static int cmp_values(pq_type t, vref a, vref b) {
  switch (t) {
    case PQ_T_INT32: { int32_t x, y; memcpy(&x, a.p, 4); memcpy(&y, b.p, 4); return (x > y) - (x < y); }
    case PQ_T_INT64: { int64_t x, y; memcpy(&x, a.p, 8); memcpy(&y, b.p, 8); return (x > y) - (x < y); }
    case PQ_T_FLOAT: { float x, y; memcpy(&x, a.p, 4); memcpy(&y, b.p, 4); return (x > y) - (x < y); }
    case PQ_T_DOUBLE: { double x, y; memcpy(&x, a.p, 8); memcpy(&y, b.p, 8); return (x > y) - (x < y); }
    default: {
      size_t n = a.n < b.n ? a.n : b.n;
      int c = n ? memcmp(a.p, b.p, n) : 0;
      return c ? c : (a.n > b.n) - (a.n < b.n);
    }
  }
}

int pq__wvalue_cmp(pq_type t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn) {
  return cmp_values(t, (vref){a, an}, (vref){b, bn});
}

static bool is_nan(pq_type t, vref v) {
  if (t == PQ_T_FLOAT) { float x; memcpy(&x, v.p, 4); return isnan(x); }
  if (t == PQ_T_DOUBLE) { double x; memcpy(&x, v.p, 8); return isnan(x); }
  return false;
}

/* Typed min/max loops for the fixed-width numbers (the generic loop compares through
 * value_at for every value); NaN is skipped as there. */
#define MINMAX(T, NANCHK)                                                         \
  do {                                                                           \
    const T *x = (const T *)(const void *)l->vals.data;                         \
    for (size_t i = 0; i < l->nvals; i++) {                                      \
      T v;                                                                       \
      memcpy(&v, x + i, sizeof v);                                               \
      if (NANCHK) { *nan = true; continue; }                                     \
      if (lo == SIZE_MAX) { lo = hi = i; memcpy(&mn, &v, sizeof v); memcpy(&mx, &v, sizeof v); continue; } \
      T a, b;                                                                    \
      memcpy(&a, &mn, sizeof a);                                                 \
      memcpy(&b, &mx, sizeof b);                                                 \
      if (v < a) { lo = i; memcpy(&mn, &v, sizeof v); }                          \
      if (v > b) { hi = i; memcpy(&mx, &v, sizeof v); }                          \
    }                                                                            \
  } while (0)

static bool typed_minmax(const pq__wleaf *l, size_t *plo, size_t *phi, bool *nan) {
  size_t lo = SIZE_MAX, hi = SIZE_MAX;
  uint64_t mn = 0, mx = 0;
  switch (l->type) {
    case PQ_T_INT32: MINMAX(int32_t, false); break;
    case PQ_T_INT64: MINMAX(int64_t, false); break;
    case PQ_T_FLOAT: MINMAX(float, isnan(v)); break;
    case PQ_T_DOUBLE: MINMAX(double, isnan(v)); break;
    default: return false;
  }
  *plo = lo;
  *phi = hi;
  return true;
}

/* The first 8 bytes of a value as a big-endian number (zero-padded): comparing two of them
 * orders the values by those bytes, unsigned, as memcmp would. */
static uint64_t prefix8(const uint8_t *p, size_t n) {
  uint64_t x = 0;
  if (n >= 8) {
    memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
  }
  size_t k = n;
  for (size_t i = 0; i < k; i++) x |= (uint64_t)p[i] << (56 - 8 * i);
  return x;
}

/* Unsigned byte order, with both values' prefix8 at hand: most pairs differ there. */
static int cmp_bytes(const uint8_t *a, size_t an, uint64_t ap, const uint8_t *b, size_t bn,
                     uint64_t bp) {
  if (ap != bp) return ap < bp ? -1 : 1;
  if (an > 8 && bn > 8) { /* the first 8 bytes are equal */
    size_t n = (an < bn ? an : bn) - 8;
    int c = memcmp(a + 8, b + 8, n);
    if (c) return c;
  } /* else the shorter one's bytes all equal the longer one's (padding is zero) */
  return (an > bn) - (an < bn);
}

/* min/max of a BYTE_ARRAY leaf, walking its offsets once with the current bounds (and
 * their prefixes) at hand; the first value wins ties. */
static void bytes_minmax(const pq__wleaf *l, size_t *plo, size_t *phi) {
  if (l->nvals == 0) return;
  const uint8_t *base = l->vals.data ? l->vals.data : (const uint8_t *)"";
  const uint8_t *offs = l->offs.data;
  size_t lo = 0, hi = 0, last = l->nvals - 1;
  const uint8_t *mn = NULL, *mx = NULL;
  size_t mnn = 0, mxn = 0;
  uint64_t mnp = 0, mxp = 0;
  for (size_t i = 0; i < l->nvals; i++) {
    uint64_t s, e = l->vals.len;
    memcpy(&s, offs + i * 8, 8);
    if (i < last) memcpy(&e, offs + (i + 1) * 8, 8);
    const uint8_t *p = base + s;
    size_t n = (size_t)(e - s);
    uint64_t px = prefix8(p, n);
    if (i == 0) {
      mn = mx = p;
      mnn = mxn = n;
      mnp = mxp = px;
      continue;
    }
    if (px <= mnp && cmp_bytes(p, n, px, mn, mnn, mnp) < 0) {
      lo = i; mn = p; mnn = n; mnp = px;
    }
    if (px >= mxp && cmp_bytes(p, n, px, mx, mxn, mxp) > 0) {
      hi = i; mx = p; mxn = n; mxp = px;
    }
  }
  *plo = lo;
  *phi = hi;
}

static int stats(const pq__wleaf *l, pq__wchunk *m) {
  for (size_t i = 0; i < l->nlev; i++) m->nulls += l->def[i] < l->max_def;
  /* INT96 has no defined order; a FIXED decimal is signed, which byte order is not */
  if (l->type == PQ_T_INT96 || (l->type == PQ_T_FIXED_LEN_BYTE_ARRAY &&
                                l->node->kind == PQ_W_DECIMAL))
    return 0;
  size_t lo = SIZE_MAX, hi = SIZE_MAX;
  if (l->type == PQ_T_BYTE_ARRAY) {
    bytes_minmax(l, &lo, &hi);
  } else if (!typed_minmax(l, &lo, &hi, &m->nan)) {
    for (size_t i = 0; i < l->nvals; i++) {
      vref v = value_at(l, i);
      if (is_nan(l->type, v)) {
        m->nan = true;
        continue;
      }
      if (lo == SIZE_MAX || cmp_values(l->type, v, value_at(l, lo)) < 0) lo = i;
      if (hi == SIZE_MAX || cmp_values(l->type, v, value_at(l, hi)) > 0) hi = i;
    }
  }
  if (lo == SIZE_MAX) return 0;
  vref a = value_at(l, lo), b = value_at(l, hi);
  m->has_minmax = true;
  int rc = pq__buf_put(&m->min, a.p, a.n);
  return rc ? rc : pq__buf_put(&m->max, b.p, b.n);
}

/* ---- dictionary ----------------------------------------------------------------------- */

typedef struct dict {
  uint32_t *idx;     /* per value: dictionary index */
  uint32_t *first;   /* per entry: the value index that defines it */
  uint32_t n;
  size_t bytes;      /* PLAIN size of the dictionary */
} dict;

static uint64_t hash_bytes(vref v) {
  if (v.n == 4 || v.n == 8) { /* fixed-width numbers: a 64-bit finalizer mix, whose low
                               * bits (the table index) depend on every input bit */
    uint64_t x = 0;
    memcpy(&x, v.p, v.n);
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ULL;
    return x ^ (x >> 33);
  }
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < v.n; i++) h = (h ^ v.p[i]) * 1099511628211ULL;
  return h;
}

/* A dictionary is not tried further when nearly every one of the first values is new: its
 * entries would pass DICT_MAX_BYTES long before the chunk ends, or (a short chunk: a
 * quarter of it probed, at least DICT_PROBE_MIN values) it would not pay. A unique column
 * of a 10,000-row file built its whole dictionary before falling back to PLAIN. */
#define DICT_PROBE_VALUES 65536
#define DICT_PROBE_MIN 1024

static bool dict_hopeless(size_t i, const dict *d, size_t nvals) {
  size_t probe = nvals / 4 < DICT_PROBE_MIN ? DICT_PROBE_MIN : nvals / 4;
  if (probe > DICT_PROBE_VALUES) probe = DICT_PROBE_VALUES;
  return i + 1 == probe && d->n > probe / 10 * 9;
}

/* build_dict for 4- and 8-byte values: the table holds the values themselves, so a probe
 * is one cache line, not a second random read of the value it points at (4-byte values in
 * 8-byte slots: half the table, so more of it stays in cache); it starts small and doubles
 * at half full (up to cap), so a column of few values stays in cache. The dictionary is
 * the values in order of first appearance, whatever the table's layout. */

#define DEFINE_BUILD_DICT(NAME, KT)                                                   \
  typedef struct NAME##_slot { KT key; uint32_t idx; } NAME##_slot;                  \
  static NAME##_slot *NAME##_new(size_t n) {                                         \
    NAME##_slot *t = malloc(n * sizeof *t);                                          \
    for (size_t s = 0; t && s < n; s++) t[s].idx = UINT32_MAX;                       \
    return t;                                                                        \
  }                                                                                  \
  static int NAME(const pq__wleaf *l, dict *d, size_t cap_max) {                     \
    size_t cap = cap_max < 4096 ? cap_max : 4096;                                    \
    NAME##_slot *table = NAME##_new(cap);                                            \
    d->idx = malloc((l->nvals + 1) * sizeof *d->idx);                                \
    d->first = malloc((l->nvals + 1) * sizeof *d->first);                            \
    if (!table || !d->idx || !d->first) {                                            \
      free(table);                                                                   \
      return dd_err_set(DD_ENOMEM, "parquet: out of memory");                        \
    }                                                                                \
    const uint8_t *vals = l->vals.data;                                              \
    for (size_t i = 0; i < l->nvals && d->idx; i++) {                                \
      KT x;                                                                          \
      memcpy(&x, vals + i * sizeof x, sizeof x);                                     \
      size_t s = (size_t)dd_mix64(x) & (cap - 1);                                       \
      while (table[s].idx != UINT32_MAX && table[s].key != x) s = (s + 1) & (cap - 1); \
      if (table[s].idx == UINT32_MAX) {                                              \
        table[s].key = x;                                                            \
        table[s].idx = d->n;                                                         \
        d->first[d->n++] = (uint32_t)i;                                              \
        d->bytes += sizeof x;                                                        \
        if (d->bytes > DICT_MAX_BYTES) { /* give up: PLAIN */                        \
          free(d->idx);                                                              \
          d->idx = NULL;                                                             \
          break;                                                                     \
        }                                                                            \
        if (2 * (size_t)d->n > cap && cap < cap_max) { /* grow: rehash the entries */ \
          NAME##_slot *t2 = NAME##_new(2 * cap);                                     \
          if (!t2) {                                                                 \
            free(table);                                                             \
            return dd_err_set(DD_ENOMEM, "parquet: out of memory");                  \
          }                                                                          \
          for (size_t k = 0; k < cap; k++) {                                         \
            if (table[k].idx == UINT32_MAX) continue;                                \
            size_t q = (size_t)dd_mix64(table[k].key) & (2 * cap - 1);                  \
            while (t2[q].idx != UINT32_MAX) q = (q + 1) & (2 * cap - 1);             \
            t2[q] = table[k];                                                        \
          }                                                                          \
          free(table);                                                               \
          table = t2;                                                                \
          cap *= 2;                                                                  \
          s = (size_t)dd_mix64(x) & (cap - 1);                                          \
          while (table[s].key != x || table[s].idx == UINT32_MAX) s = (s + 1) & (cap - 1); \
        }                                                                            \
      }                                                                              \
      d->idx[i] = table[s].idx;                                                      \
      if (dict_hopeless(i, d, l->nvals)) {                                                     \
        free(d->idx);                                                                \
        d->idx = NULL;                                                               \
      }                                                                              \
    }                                                                                \
    free(table);                                                                     \
    return 0;                                                                        \
  }

DEFINE_BUILD_DICT(build_dict_u32, uint32_t)
DEFINE_BUILD_DICT(build_dict_u64, uint64_t)

/* Returns 0 with d->idx set, or 0 with d->idx NULL when a dictionary does not pay. */
static int build_dict(const pq__wleaf *l, dict *d) {
  /* the dictionary gives up past DICT_MAX_BYTES, so it never has more entries than that
   * many bytes of values allow: a table of twice that stays half empty and small enough
   * to stay in cache, whatever the chunk's size */
  size_t most = DICT_MAX_BYTES / (l->elem > 0 ? (size_t)l->elem : 4) + 1;
  size_t want = (l->nvals < most ? l->nvals : most) * 2;
  size_t cap = 16;
  while (cap < want) cap *= 2;
  if (l->type != PQ_T_BYTE_ARRAY && l->elem == 4) return build_dict_u32(l, d, cap);
  if (l->type != PQ_T_BYTE_ARRAY && l->elem == 8) return build_dict_u64(l, d, cap);
  uint32_t *table = malloc(cap * sizeof *table);
  d->idx = malloc((l->nvals + 1) * sizeof *d->idx);
  d->first = malloc((l->nvals + 1) * sizeof *d->first);
  if (!table || !d->idx || !d->first) {
    free(table);
    return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  }
  memset(table, 0xff, cap * sizeof *table);
  for (size_t i = 0; i < l->nvals && d->idx; i++) {
    vref v = value_at(l, i);
    size_t s = (size_t)hash_bytes(v) & (cap - 1);
    while (table[s] != UINT32_MAX) {
      vref e = value_at(l, d->first[table[s]]);
      if (e.n == v.n && (v.n == 0 || memcmp(e.p, v.p, v.n) == 0)) break;
      s = (s + 1) & (cap - 1);
    }
    if (table[s] == UINT32_MAX) {
      table[s] = d->n;
      d->first[d->n++] = (uint32_t)i;
      d->bytes += v.n + (l->type == PQ_T_BYTE_ARRAY ? 4 : 0);
      if (d->bytes > DICT_MAX_BYTES) { /* give up: PLAIN */
        free(d->idx);
        d->idx = NULL;
        break;
      }
    }
    d->idx[i] = table[s];
    if (dict_hopeless(i, d, l->nvals)) {
      free(d->idx);
      d->idx = NULL;
    }
  }
  free(table);
  return 0;
}

/* ---- pages ---------------------------------------------------------------------------- */

static int put_plain(const pq__wleaf *l, pq__buf *b, size_t from, size_t to,
                     const uint32_t *sel) {
  int rc = 0;
  if (l->type == PQ_T_BOOLEAN) {
    uint8_t acc = 0;
    for (size_t i = from; i < to && !rc; i++) {
      vref v = value_at(l, sel ? sel[i] : i);
      acc |= (uint8_t)((*v.p & 1) << ((i - from) & 7));
      if (((i - from) & 7) == 7 || i + 1 == to) {
        rc = pq__buf_byte(b, acc);
        acc = 0;
      }
    }
    return rc;
  }
  if (to == from) return 0;
  if (l->type != PQ_T_BYTE_ARRAY && !sel) /* fixed width, in order: one copy */
    return pq__buf_put(b, l->vals.data + from * (size_t)l->elem, (to - from) * (size_t)l->elem);
  size_t need = 0;
  for (size_t i = from; i < to; i++) need += value_at(l, sel ? sel[i] : i).n + 4;
  if ((rc = pq__buf_reserve(b, need))) return rc;
  uint8_t *w = b->data + b->len;
  for (size_t i = from; i < to; i++) {
    vref v = value_at(l, sel ? sel[i] : i);
    if (l->type == PQ_T_BYTE_ARRAY) {
      uint32_t n = (uint32_t)v.n;
      for (int k = 0; k < 4; k++) *w++ = (uint8_t)(n >> (8 * k));
    }
    if (v.n) memcpy(w, v.p, v.n);
    w += v.n;
  }
  b->len = (size_t)(w - b->data);
  return 0;
}

static int put_levels(pq__buf *b, const int16_t *lv, size_t n, int max) {
  uint32_t *tmp = malloc((n + 1) * sizeof *tmp);
  if (!tmp) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  for (size_t i = 0; i < n; i++) tmp[i] = (uint32_t)lv[i];
  size_t at = b->len;
  int rc = pq__buf_le32(b, 0);
  if (!rc) rc = pq__rle_encode(b, tmp, n, pq__bit_width((uint32_t)max));
  free(tmp);
  if (rc) return rc;
  uint32_t len = (uint32_t)(b->len - at - 4);
  for (int k = 0; k < 4; k++) b->data[at + (size_t)k] = (uint8_t)(len >> (8 * k));
  return 0;
}

typedef struct chunkw {
  const pq__wleaf *l;
  const pq_writer_opts *o;
  pq__buf *out;
  pq__wchunk *m;
  pq__buf page;   /* uncompressed page body */
  pq__buf comp;   /* compressed body */
} chunkw;

static int emit_page(chunkw *c, int type, int32_t nvalues, int enc) {
  c->comp.len = 0;
  int rc = pq__compress(c->o->codec, c->page.data ? c->page.data : (const uint8_t *)"",
                        c->page.len, &c->comp);
  if (rc) return rc;
  if (c->page.len > INT32_MAX || c->comp.len > INT32_MAX)
    return dd_err_set(DD_EINVAL, "parquet writer: page larger than 2 GiB");
  size_t start = c->out->len;
  pq__tw w = {c->out, {0}, 0, 0};
  pq__tw_i32(&w, 1, type);
  pq__tw_i32(&w, 2, (int32_t)c->page.len);
  pq__tw_i32(&w, 3, (int32_t)c->comp.len);
  pq__tw_struct_begin(&w, type == PQ__PAGE_DICT ? 7 : 5);
  pq__tw_i32(&w, 1, nvalues);
  pq__tw_i32(&w, 2, enc);
  if (type != PQ__PAGE_DICT) {
    pq__tw_i32(&w, 3, PQ__ENC_RLE);
    pq__tw_i32(&w, 4, PQ__ENC_RLE);
  }
  pq__tw_struct_end(&w);
  pq__tw_struct_end(&w);
  if (w.err) return w.err;
  size_t hdr = c->out->len - start;
  if ((rc = pq__buf_put(c->out, c->comp.data, c->comp.len))) return rc;
  c->m->comp_size += (int64_t)(hdr + c->comp.len);
  c->m->uncomp_size += (int64_t)(hdr + c->page.len);
  return 0;
}

static int data_page(chunkw *c, const dict *d, size_t e0, size_t e1, size_t v0, size_t v1) {
  const pq__wleaf *l = c->l;
  int rc = 0;
  c->page.len = 0;
  if (l->max_rep > 0) rc = put_levels(&c->page, l->rep + e0, e1 - e0, l->max_rep);
  if (!rc && l->max_def > 0) rc = put_levels(&c->page, l->def + e0, e1 - e0, l->max_def);
  if (rc) return rc;
  if (d->idx) {
    int width = pq__bit_width(d->n > 1 ? d->n - 1 : 1);
    if ((rc = pq__buf_byte(&c->page, (uint8_t)width))) return rc;
    if ((rc = pq__rle_encode(&c->page, d->idx + v0, v1 - v0, width))) return rc;
  } else if ((rc = put_plain(l, &c->page, v0, v1, NULL))) {
    return rc;
  }
  return emit_page(c, PQ__PAGE_DATA, (int32_t)(e1 - e0),
                   d->idx ? PQ__ENC_RLE_DICT : PQ__ENC_PLAIN);
}

/* data_pages when every entry is a row with its value and each value's estimate is the
 * same (flat, no nulls, dictionary or fixed width): the same cuts, counted. */
static int data_pages_even(chunkw *c, const dict *d, size_t per) {
  const pq__wleaf *l = c->l;
  size_t page_size = c->o->page_size ? c->o->page_size : (1u << 20);
  size_t step = (page_size + per - 1) / per; /* entries until est >= page_size */
  if (step == 0) step = 1;
  size_t e0 = 0;
  for (; l->nlev - e0 > step; e0 += step) {
    int rc = data_page(c, d, e0, e0 + step, e0, e0 + step);
    if (rc) return rc;
  }
  return data_page(c, d, e0, l->nlev, e0, l->nlev);
}

static int data_pages(chunkw *c, const dict *d) {
  const pq__wleaf *l = c->l;
  if (l->max_rep == 0 && l->nvals == l->nlev && (d->idx || l->type != PQ_T_BYTE_ARRAY))
    return data_pages_even(c, d, (d->idx ? 2 : (size_t)l->elem + 4) + 1);
  size_t page_size = c->o->page_size ? c->o->page_size : (1u << 20);
  size_t e0 = 0, v0 = 0, v = 0, est = 0;
  for (size_t e = 0; e < l->nlev; e++) {
    if (e > e0 && l->rep[e] == 0 && est >= page_size) {
      int rc = data_page(c, d, e0, e, v0, v);
      if (rc) return rc;
      e0 = e;
      v0 = v;
      est = 0;
    }
    if (l->def[e] == l->max_def) {
      est += d->idx ? 2 : value_at(l, v).n + 4;
      v++;
    }
    est += 1;
  }
  return data_page(c, d, e0, l->nlev, v0, v);
}

int pq__wchunk_encode(const pq__wleaf *l, const pq_writer_opts *o, int64_t base,
                      pq__buf *out, pq__wchunk *m) {
  chunkw c = {l, o, out, m, {0}, {0}};
  dict d = {0};
  int rc = stats(l, m);
  m->num_values = (int64_t)l->nlev;
  if (!rc && o->dictionary && l->type != PQ_T_BOOLEAN && l->nvals > 0) rc = build_dict(l, &d);
  if (!rc && d.idx) {
    m->has_dict = true;
    m->dict_off = base + (int64_t)out->len;
    rc = put_plain(l, &c.page, 0, d.n, d.first);
    if (!rc) rc = emit_page(&c, PQ__PAGE_DICT, (int32_t)d.n, PQ__ENC_PLAIN);
  }
  m->data_off = base + (int64_t)out->len;
  if (!rc) rc = data_pages(&c, &d);
  free(d.idx);
  free(d.first);
  pq__buf_free(&c.page);
  pq__buf_free(&c.comp);
  return rc;
}

void pq__wchunk_free(pq__wchunk *m) {
  pq__buf_free(&m->min);
  pq__buf_free(&m->max);
}
