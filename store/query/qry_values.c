/* qry_values.c: comparing and hashing slots of arw batches (Spark's ordering and
 * equality), the distinct-row set behind GROUP BY, DISTINCT and count(DISTINCT), and the
 * held-memory bound. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/query/qry_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

static int cmp_i(int64_t a, int64_t b) { return (a > b) - (a < b); }

/* NaN above everything, -0.0 == 0.0 (Spark's SQLOrderingUtil). */
static int cmp_f(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) - isnan(b);
  return (a > b) - (a < b);
}

static int cmp_bytes(const uint8_t *a, size_t na, const uint8_t *b, size_t nb) {
  int c = memcmp(a, b, na < nb ? na : nb);
  return c ? (c > 0) - (c < 0) : (na > nb) - (na < nb);
}

static int64_t fixed_i(const arw_view *v, size_t i) {
  switch (v->kind) {
    case ARW_INT8: return ((const int8_t *)v->values)[i];
    case ARW_INT16: { int16_t x; memcpy(&x, v->values + 2 * i, 2); return x; }
    case ARW_INT32: case ARW_DATE32: { int32_t x; memcpy(&x, v->values + 4 * i, 4); return x; }
    default: { int64_t x; memcpy(&x, v->values + 8 * i, 8); return x; }
  }
}

static double fixed_f(const arw_view *v, size_t i) {
  if (v->kind == ARW_FLOAT32) { float x; memcpy(&x, v->values + 4 * i, 4); return x; }
  double x;
  memcpy(&x, v->values + 8 * i, 8);
  return x;
}

static ex_i128 dec_at(const arw_view *v, size_t i) {
  ex_i128 x;
  memcpy(&x, v->values + 16 * i, 16);
  return x;
}

int qry__cmp(const arw_batch *ba, int fa, size_t i, const arw_batch *bb, int fb, size_t j) {
  arw_view a, b;
  if (arw_batch_view(ba, fa, &a) || arw_batch_view(bb, fb, &b)) return dd_err_clear(), 0;
  bool va = arw_view_valid(&a, i), vb = arw_view_valid(&b, j);
  if (!va || !vb) return (int)va - (int)vb; /* nulls first */
  const arw_schema *sa = arw_batch_schema(ba), *sb = arw_batch_schema(bb);
  switch (a.kind) {
    case ARW_BOOL: return (int)arw_view_bool(&a, i) - (int)arw_view_bool(&b, j);
    case ARW_FLOAT32: case ARW_FLOAT64: return cmp_f(fixed_f(&a, i), fixed_f(&b, j));
    case ARW_DECIMAL128: { ex_i128 x = dec_at(&a, i), y = dec_at(&b, j); return (x > y) - (x < y); }
    case ARW_UTF8: case ARW_BINARY:
      return cmp_bytes(a.values + a.offsets[i], (size_t)(a.offsets[i + 1] - a.offsets[i]),
                       b.values + b.offsets[j], (size_t)(b.offsets[j + 1] - b.offsets[j]));
    case ARW_NULL: return 0;
    case ARW_STRUCT: {
      int n = arw_field_nchildren(sa, fa);
      for (int k = 0; k < n; k++) {
        int c = qry__cmp(ba, arw_field_child(sa, fa, k), i, bb, arw_field_child(sb, fb, k), j);
        if (c) return c;
      }
      return 0;
    }
    case ARW_LIST: case ARW_MAP: {
      size_t la = (size_t)(a.offsets[i + 1] - a.offsets[i]), lb = (size_t)(b.offsets[j + 1] - b.offsets[j]);
      int nk = a.kind == ARW_MAP ? 2 : 1;
      for (size_t e = 0; e < la && e < lb; e++)
        for (int k = 0; k < nk; k++) {
          int c = qry__cmp(ba, arw_field_child(sa, fa, k), (size_t)a.offsets[i] + e, bb,
                           arw_field_child(sb, fb, k), (size_t)b.offsets[j] + e);
          if (c) return c;
        }
      return (la > lb) - (la < lb);
    }
    default: return cmp_i(fixed_i(&a, i), fixed_i(&b, j));
  }
}

static uint64_t mix(uint64_t h, uint64_t v) {
  h ^= v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdull;
}

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

uint64_t qry__hash(const arw_batch *b, int f, size_t i) {
  arw_view v;
  if (arw_batch_view(b, f, &v)) return dd_err_clear(), 0;
  if (!arw_view_valid(&v, i)) return 0x5bd1e995u;
  const arw_schema *s = arw_batch_schema(b);
  switch (v.kind) {
    case ARW_BOOL: return mix(1, arw_view_bool(&v, i));
    case ARW_FLOAT32: case ARW_FLOAT64: {
      double d = fixed_f(&v, i);
      if (d == 0) d = 0; /* -0.0 */
      if (isnan(d)) d = NAN;
      uint64_t u;
      memcpy(&u, &d, 8);
      return mix(2, u);
    }
    case ARW_DECIMAL128: return hash_bytes(v.values + 16 * i, 16);
    case ARW_UTF8: case ARW_BINARY:
      return hash_bytes(v.values + v.offsets[i], (size_t)(v.offsets[i + 1] - v.offsets[i]));
    case ARW_NULL: return 0x5bd1e995u;
    case ARW_STRUCT: {
      uint64_t h = 3;
      for (int k = 0; k < arw_field_nchildren(s, f); k++) h = mix(h, qry__hash(b, arw_field_child(s, f, k), i));
      return h;
    }
    case ARW_LIST: case ARW_MAP: {
      uint64_t h = 4;
      for (int32_t e = v.offsets[i]; e < v.offsets[i + 1]; e++)
        for (int k = 0; k < (v.kind == ARW_MAP ? 2 : 1); k++) h = mix(h, qry__hash(b, arw_field_child(s, f, k), (size_t)e));
      return h;
    }
    default: return mix(5, (uint64_t)fixed_i(&v, i));
  }
}

/* ======================= keyset ======================= */

int qry__keyset_init(qry__keyset *k, const arw_schema *keys) {
  memset(k, 0, sizeof *k);
  k->keys = keys;
  k->cap = 64;
  k->slots = calloc(k->cap, sizeof *k->slots);
  k->hashes = calloc(k->cap, sizeof *k->hashes);
  if (!k->slots || !k->hashes) return qry__keyset_free(k), OOM();
  return arw_batch_new(&k->rows, keys);
}

void qry__keyset_free(qry__keyset *k) {
  arw_batch_free(k->rows);
  free(k->slots);
  free(k->hashes);
  memset(k, 0, sizeof *k);
}

static uint64_t row_hash(const arw_batch *b, size_t row) {
  const arw_schema *s = arw_batch_schema(b);
  uint64_t h = 7;
  for (size_t c = 0; c < arw_schema_ncolumns(s); c++) h = mix(h, qry__hash(b, arw_schema_column(s, c), row));
  return h;
}

static bool row_equal(const arw_batch *a, size_t i, const arw_batch *b, size_t j) {
  const arw_schema *s = arw_batch_schema(a);
  for (size_t c = 0; c < arw_schema_ncolumns(s); c++) {
    int f = arw_schema_column(s, c);
    if (qry__cmp(a, f, i, b, f, j)) return false;
  }
  return true;
}

static int keyset_grow(qry__keyset *k) {
  size_t cap = k->cap * 2;
  size_t *slots = calloc(cap, sizeof *slots);
  uint64_t *hashes = calloc(cap, sizeof *hashes);
  if (!slots || !hashes) return free(slots), free(hashes), OOM();
  for (size_t i = 0; i < k->cap; i++) {
    if (!k->slots[i]) continue;
    size_t p = k->hashes[i] & (cap - 1);
    while (slots[p]) p = (p + 1) & (cap - 1);
    slots[p] = k->slots[i], hashes[p] = k->hashes[i];
  }
  free(k->slots), free(k->hashes);
  k->slots = slots, k->hashes = hashes, k->cap = cap;
  return 0;
}

int qry__keyset_put(qry__keyset *k, const arw_batch *b, size_t row, size_t *idx, bool *added) {
  uint64_t h = row_hash(b, row);
  size_t p = h & (k->cap - 1);
  for (; k->slots[p]; p = (p + 1) & (k->cap - 1))
    if (k->hashes[p] == h && row_equal(k->rows, k->slots[p] - 1, b, row)) {
      *idx = k->slots[p] - 1, *added = false;
      return 0;
    }
  int rc = arw_batch_append_rows(k->rows, b, &row, 1);
  if (rc) return rc;
  k->slots[p] = ++k->n, k->hashes[p] = h;
  *idx = k->n - 1, *added = true;
  if (k->n * 2 > k->cap) return keyset_grow(k);
  return 0;
}

size_t qry__batch_bytes(const arw_batch *b) {
  const arw_schema *s = arw_batch_schema(b);
  size_t bytes = 0;
  for (int f = 0; f < arw_schema_nfields(s); f++) {
    arw_view v;
    if (arw_batch_view(b, f, &v)) {
      dd_err_clear();
      continue;
    }
    size_t w = arw_kind_width(v.kind);
    bytes += v.length / 8 + 1 + (v.offsets ? 4 * (v.length + 1) : 0) + w * v.length;
    if (v.offsets && (v.kind == ARW_UTF8 || v.kind == ARW_BINARY) && v.length) bytes += (size_t)v.offsets[v.length];
  }
  return bytes;
}

int qry__held_check(size_t bytes, const char *what) {
  if (bytes <= QRY_MAX_HELD_BYTES) return 0;
  return dd_err_set(DD_ERANGE, "%s needs more than %zu bytes of memory (QRY_MAX_HELD_BYTES)", what,
                    QRY_MAX_HELD_BYTES);
}
