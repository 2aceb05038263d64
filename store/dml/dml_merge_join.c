/* dml_merge_join.c: MERGE's hash index of the source on the join keys (dml_merge_int.h).
 * A key row is serialized column by column (fixed-width values as their bytes, with -0.0
 * and NaN normalised as Spark's join does; strings as a 4-byte length and their bytes), so
 * two rows match exactly when their serializations are equal; a NULL key never matches.
 * Open addressing over distinct keys: slots[] (at least twice as many as the source rows,
 * linear probing) hold a 32-bit tag of the key's hash and the last source row with that
 * key; next[] links each row to the previous row with the same key. In front of them a
 * bitmap of 16 bits per source row (a bit set per key hash, small enough to stay in cache)
 * answers most target keys that match nothing (most of them, in an upsert) without a
 * read of the slots. */
#include "store/dml/dml_merge_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hash.h"

/* The key's hash: its bytes taken eight at a time. */
static uint64_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = 0x9e3779b97f4a7c15ULL ^ n;
  for (; n >= 8; p += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, p, 8);
    h = (h ^ dd_mix64(w)) * 0x9e3779b97f4a7c15ULL;
  }
  if (n) {
    uint64_t w = 0;
    memcpy(&w, p, n);
    h = (h ^ dd_mix64(w)) * 0x9e3779b97f4a7c15ULL;
  }
  return dd_mix64(h);
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

static bool same_key(const dml__keyidx *k, int64_t j, const uint8_t *key, size_t len) {
  size_t l = (size_t)(k->off[j + 1] - k->off[j]);
  return l == len && !memcmp(k->data.p + k->off[j], key, len);
}

/* The slot of key[0..len) (hash h): the one holding it, or the empty one where it goes. */
static size_t find_slot(const dml__keyidx *k, uint64_t h, const uint8_t *key, size_t len) {
  uint32_t tag = (uint32_t)(h >> 32);
  for (size_t i = (size_t)h & k->mask;; i = (i + 1) & k->mask) {
    uint64_t e = k->slots[i];
    if (!e) return i;
    if ((uint32_t)(e >> 32) == tag && same_key(k, (int64_t)(uint32_t)e - 1, key, len)) return i;
  }
}

int dml__keyidx_build(dml__keyidx *k, const arw_batch *kb) {
  memset(k, 0, sizeof *k);
  size_t n = arw_batch_rows(kb), nb = 16;
  if (n >= UINT32_MAX / 2)
    return dd_err_set(DD_EUNSUPPORTED, "MERGE: a source of %zu rows is more than the join index holds", n);
  while (nb < 2 * n) nb *= 2;
  k->n = n;
  k->mask = nb - 1;
  k->off = malloc((n + 1) * sizeof *k->off);
  k->null = calloc(n + 1, sizeof *k->null);
  k->slots = calloc(nb, sizeof *k->slots);
  k->next = malloc((n + 1) * sizeof *k->next);
  size_t bits = 1024;
  while (bits < 16 * n) bits *= 2;
  k->bmask = bits - 1;
  k->bits = calloc(bits / 64, sizeof *k->bits);
  if (!k->off || !k->null || !k->slots || !k->next || !k->bits) return dml__oom();
  int rc = 0;
  for (size_t j = 0; j < n && !rc; j++) {
    k->off[j] = (int64_t)k->data.len;
    rc = dml__key_row(&k->data, kb, j, &k->null[j]);
    k->off[j + 1] = (int64_t)k->data.len; /* for same_key while building */
    if (rc || k->null[j]) continue;
    const uint8_t *key = (const uint8_t *)k->data.p + k->off[j];
    size_t len = k->data.len - (size_t)k->off[j];
    uint64_t h = hash_bytes(key, len);
    size_t b = (size_t)(h >> 24) & k->bmask;
    k->bits[b / 64] |= 1ULL << (b % 64);
    size_t i = find_slot(k, h, key, len);
    k->next[j] = k->slots[i] ? (int64_t)(uint32_t)k->slots[i] - 1 : -1;
    k->slots[i] = (h >> 32 << 32) | (uint64_t)(j + 1);
  }
  k->off[n] = (int64_t)k->data.len;
  return rc;
}

int64_t dml__keyidx_first(const dml__keyidx *k, const uint8_t *key, size_t len) {
  if (!k->n) return -1;
  uint64_t h = hash_bytes(key, len);
  size_t b = (size_t)(h >> 24) & k->bmask;
  if (!(k->bits[b / 64] >> (b % 64) & 1)) return -1;
  uint64_t e = k->slots[find_slot(k, h, key, len)];
  return e ? (int64_t)(uint32_t)e - 1 : -1;
}

int64_t dml__keyidx_next(const dml__keyidx *k, int64_t j, const uint8_t *key, size_t len) {
  (void)key, (void)len; /* next[] links rows of the same key only */
  return k->next[j];
}

void dml__keyidx_free(dml__keyidx *k) {
  free(k->off);
  free(k->null);
  free(k->slots);
  free(k->bits);
  free(k->next);
  dd_buf_free(&k->data);
  memset(k, 0, sizeof *k);
}
