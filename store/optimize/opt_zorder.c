/* opt_zorder.c: the Z-order of rows. Each Z-order column's values become order-preserving
 * unsigned keys (signed integers with the sign bit flipped, floats by their IEEE bits,
 * strings and binaries by their first 8 bytes big-endian, decimals clamped to 64 bits);
 * the keys become dense ranks (nulls first, rank 0) scaled to 32 bits, so that columns of
 * any range or cardinality weigh alike; the ranks' bits are interleaved from the most
 * significant down, column 0 first; rows sort by that key. */
#include "store/optimize/opt_int.h"

#include <stdlib.h>
#include <string.h>

void opt_zorder_interleave(uint64_t *keys, const uint32_t *const *ranks, size_t k, size_t n) {
  size_t words = (32 * k + 63) / 64;
  for (size_t i = 0; i < n; i++) {
    uint64_t *w = keys + i * words;
    memset(w, 0, words * sizeof *w);
    size_t pos = 0;
    for (int bit = 31; bit >= 0; bit--)
      for (size_t c = 0; c < k; c++, pos++)
        if ((ranks[c][i] >> bit) & 1) w[pos / 64] |= 1ULL << (63 - pos % 64);
  }
}

static uint64_t flip(int64_t v) { return (uint64_t)v ^ (1ULL << 63); }

static uint64_t real_key(double d) {
  uint64_t u;
  memcpy(&u, &d, 8);
  return (u >> 63) ? ~u : u | (1ULL << 63);
}

int opt__column_keys(uint64_t *key, bool *valid, const arw_view *v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    valid[i] = arw_view_valid(v, i);
    if (!valid[i]) {
      key[i] = 0;
      continue;
    }
    switch (v->kind) {
      case ARW_BOOL: key[i] = arw_view_bool(v, i); break;
      case ARW_INT8: key[i] = flip((int8_t)v->values[i]); break;
      case ARW_INT16: { int16_t x; memcpy(&x, v->values + 2 * i, 2); key[i] = flip(x); break; }
      case ARW_INT32: case ARW_DATE32: { int32_t x; memcpy(&x, v->values + 4 * i, 4); key[i] = flip(x); break; }
      case ARW_INT64: case ARW_TIMESTAMP: case ARW_TIMESTAMP_UTC: {
        int64_t x;
        memcpy(&x, v->values + 8 * i, 8);
        key[i] = flip(x);
        break;
      }
      case ARW_FLOAT32: { float x; memcpy(&x, v->values + 4 * i, 4); key[i] = real_key(x); break; }
      case ARW_FLOAT64: { double x; memcpy(&x, v->values + 8 * i, 8); key[i] = real_key(x); break; }
      case ARW_DECIMAL128: {
        __extension__ __int128 x;
        memcpy(&x, v->values + 16 * i, 16);
        int64_t c = x > INT64_MAX ? INT64_MAX : x < INT64_MIN ? INT64_MIN : (int64_t)x;
        key[i] = flip(c);
        break;
      }
      case ARW_UTF8: case ARW_BINARY: {
        const uint8_t *p = v->values + v->offsets[i];
        size_t len = (size_t)(v->offsets[i + 1] - v->offsets[i]);
        uint64_t u = 0;
        for (size_t j = 0; j < 8; j++) u = u << 8 | (j < len ? p[j] : 0);
        key[i] = u;
        break;
      }
      default:
        return dd_err_set(DD_EINVAL, "optimize: cannot Z-order by a column of this type");
    }
  }
  return 0;
}

typedef struct rank_ctx { const uint64_t *key; const bool *valid; } rank_ctx;

static int cmp_key(const void *a, const void *b, void *vc) {
  const rank_ctx *c = vc;
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  if (c->valid[i] != c->valid[j]) return c->valid[i] ? 1 : -1;
  return (c->key[i] > c->key[j]) - (c->key[i] < c->key[j]);
}

/* Dense ranks of the keys (nulls rank 0, first), scaled to [0, 2^32). */
static int ranks_of(uint32_t *rank, const uint64_t *key, const bool *valid, size_t n) {
  size_t *idx = malloc((n + 1) * sizeof *idx);
  uint64_t *dense = malloc((n + 1) * sizeof *dense);
  if (!idx || !dense) {
    free(idx);
    free(dense);
    return dd_err_set(DD_ENOMEM, "optimize: out of memory");
  }
  for (size_t i = 0; i < n; i++) idx[i] = i;
  rank_ctx c = {key, valid};
  qsort_r(idx, n, sizeof *idx, cmp_key, &c);
  uint64_t r = 0;
  for (size_t i = 0; i < n; i++) {
    if (i > 0 && cmp_key(&idx[i - 1], &idx[i], &c) != 0) r++;
    dense[idx[i]] = r;
  }
  for (size_t i = 0; i < n; i++)
    rank[i] = r ? (uint32_t)((dense[i] * 0xFFFFFFFFULL) / r) : 0;
  free(idx);
  free(dense);
  return 0;
}

typedef struct order_ctx { const uint64_t *keys; size_t words; } order_ctx;

static int cmp_z(const void *a, const void *b, void *vc) {
  const order_ctx *c = vc;
  const uint64_t *x = c->keys + *(const size_t *)a * c->words;
  const uint64_t *y = c->keys + *(const size_t *)b * c->words;
  for (size_t w = 0; w < c->words; w++)
    if (x[w] != y[w]) return x[w] < y[w] ? -1 : 1;
  size_t i = *(const size_t *)a, j = *(const size_t *)b; /* ties: arrival order */
  return (i > j) - (i < j);
}

int opt__zorder_order(size_t **out_idx, const arw_batch *b, const char *const *names,
                      size_t k, bool hilbert) {
  *out_idx = NULL;
  size_t n = arw_batch_rows(b);
  const arw_schema *s = arw_batch_schema(b);
  size_t words = (32 * k + 63) / 64;
  uint32_t **ranks = calloc(k + 1, sizeof *ranks);
  uint64_t *key = malloc((n + 1) * sizeof *key);
  bool *valid = malloc(n + 1);
  uint64_t *zk = malloc((n * words + 1) * sizeof *zk);
  size_t *idx = malloc((n + 1) * sizeof *idx);
  int rc = ranks && key && valid && zk && idx ? 0 : dd_err_set(DD_ENOMEM, "optimize: out of memory");
  for (size_t c = 0; c < k && !rc; c++) {
    int id = arw_schema_find(s, ARW_ROOT, names[c]);
    arw_view v;
    if (id < 0) {
      rc = dd_err_set(DD_EINVAL, "optimize: no column '%s' to Z-order by", names[c]);
      break;
    }
    if ((rc = arw_batch_view(b, id, &v))) break;
    if (!(ranks[c] = malloc((n + 1) * sizeof **ranks))) {
      rc = dd_err_set(DD_ENOMEM, "optimize: out of memory");
      break;
    }
    if (!(rc = opt__column_keys(key, valid, &v, n))) rc = ranks_of(ranks[c], key, valid, n);
    if (rc == DD_EINVAL)
      rc = dd_err_set(DD_EINVAL, "optimize: cannot Z-order by column '%s' (a nested or "
                      "unordered type)", names[c]);
  }
  if (!rc) {
    opt__curve_keys(zk, ranks, k, n, hilbert);
    for (size_t i = 0; i < n; i++) idx[i] = i;
    order_ctx oc = {zk, words};
    qsort_r(idx, n, sizeof *idx, cmp_z, &oc);
    *out_idx = idx;
    idx = NULL;
  }
  for (size_t c = 0; ranks && c < k; c++) free(ranks[c]);
  free(ranks);
  free(key);
  free(valid);
  free(zk);
  free(idx);
  return rc;
}
