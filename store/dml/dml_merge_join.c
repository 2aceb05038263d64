/* dml_merge_join.c: MERGE's hash index of the source on the join keys (dml_merge_int.h).
 * A key row is serialized column by column (fixed-width values as their bytes, with -0.0
 * and NaN normalised as Spark's join does; strings as a 4-byte length and their bytes), so
 * two rows match exactly when their serializations are equal; a NULL key never matches.
 * Chained hashing: head[] per bucket, next[] per source row. */
#include "store/dml/dml_merge_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ULL;
  return h ^ (h >> 29);
}

static void put_float(dd_buf *out, const uint8_t *v, size_t w) {
  if (w == 8) {
    double d;
    memcpy(&d, v, 8);
    if (d == 0) d = 0;
    if (isnan(d)) d = NAN;
    dd_buf_put(out, &d, 8);
  } else {
    float f;
    memcpy(&f, v, 4);
    if (f == 0) f = 0;
    if (isnan(f)) f = NAN;
    dd_buf_put(out, &f, 4);
  }
}

int dml__key_row(dd_buf *out, const arw_batch *kb, size_t i, bool *null) {
  const arw_schema *s = arw_batch_schema(kb);
  *null = false;
  for (size_t c = 0; c < arw_schema_ncolumns(s); c++) {
    arw_view v;
    int rc = arw_batch_view(kb, arw_schema_column(s, c), &v);
    if (rc) return rc;
    if (!arw_view_valid(&v, i)) return *null = true, 0;
    size_t w = arw_kind_width(v.kind);
    if (v.kind == ARW_BOOL) {
      dd_buf_putc(out, arw_view_bool(&v, i) ? 1 : 0);
    } else if (v.kind == ARW_UTF8 || v.kind == ARW_BINARY) {
      int32_t len = v.offsets[i + 1] - v.offsets[i];
      dd_buf_put(out, &len, sizeof len);
      dd_buf_put(out, v.values + v.offsets[i], (size_t)len);
    } else if (v.kind == ARW_FLOAT64 || v.kind == ARW_FLOAT32) {
      put_float(out, v.values + i * w, w);
    } else if (w) {
      dd_buf_put(out, v.values + i * w, w);
    } else {
      return dd_err_set(DD_EUNSUPPORTED, "MERGE: a join key of this type cannot be hashed");
    }
  }
  return out->oom ? dml__oom() : 0;
}

int dml__keyidx_build(dml__keyidx *k, const arw_batch *kb) {
  memset(k, 0, sizeof *k);
  size_t n = arw_batch_rows(kb), nb = 16;
  while (nb < 2 * n) nb *= 2;
  k->n = n;
  k->mask = nb - 1;
  k->off = malloc((n + 1) * sizeof *k->off);
  k->null = calloc(n + 1, sizeof *k->null);
  k->head = malloc(nb * sizeof *k->head);
  k->next = malloc((n + 1) * sizeof *k->next);
  if (!k->off || !k->null || !k->head || !k->next) return dml__oom();
  for (size_t b = 0; b < nb; b++) k->head[b] = -1;
  int rc = 0;
  for (size_t j = 0; j < n && !rc; j++) {
    k->off[j] = (int64_t)k->data.len;
    rc = dml__key_row(&k->data, kb, j, &k->null[j]);
    if (rc || k->null[j]) continue;
    size_t len = k->data.len - (size_t)k->off[j];
    size_t h = (size_t)hash_bytes((const uint8_t *)k->data.p + k->off[j], len) & k->mask;
    k->next[j] = k->head[h];
    k->head[h] = (int64_t)j;
  }
  k->off[n] = (int64_t)k->data.len;
  return rc;
}

static bool same_key(const dml__keyidx *k, int64_t j, const uint8_t *key, size_t len) {
  size_t l = (size_t)(k->off[j + 1] - k->off[j]);
  return l == len && !memcmp(k->data.p + k->off[j], key, len);
}

static int64_t scan_chain(const dml__keyidx *k, int64_t j, const uint8_t *key, size_t len) {
  for (; j >= 0; j = k->next[j])
    if (same_key(k, j, key, len)) return j;
  return -1;
}

int64_t dml__keyidx_first(const dml__keyidx *k, const uint8_t *key, size_t len) {
  if (!k->n) return -1;
  return scan_chain(k, k->head[(size_t)hash_bytes(key, len) & k->mask], key, len);
}

int64_t dml__keyidx_next(const dml__keyidx *k, int64_t j, const uint8_t *key, size_t len) {
  return scan_chain(k, k->next[j], key, len);
}

void dml__keyidx_free(dml__keyidx *k) {
  free(k->off);
  free(k->null);
  free(k->head);
  free(k->next);
  dd_buf_free(&k->data);
  memset(k, 0, sizeof *k);
}
