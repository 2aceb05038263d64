/* dml_dv.c: deletion vectors written by DELETE and UPDATE (see dml_int.h), in Delta's
 * format (PROTOCOL.md, "Deletion Vector Format"): a file deletion_vector_<uuid>.bin in the
 * table directory holding a version byte (1), then the vector framed as a 4-byte
 * big-endian size, the serialized bitmap and its 4-byte big-endian CRC-32 (one file per
 * operation holds all its vectors, one after the other). The bitmap is
 * the magic number 1681511377 (little-endian) and a 64-bit RoaringBitmap in the portable
 * layout: the bucket count (int64), then per bucket of rows sharing their high 32 bits its
 * key (int32) and a 32-bit roaring bitmap (cookie 12346, containers with their key,
 * cardinality - 1 and offset, each an array of uint16 or, above 4096 values, a 1024-word
 * bitset). The descriptor: storageType 'u', pathOrInlineDv the Z85 text of the UUID,
 * offset where the vector's size field starts (1 for the first), sizeInBytes the bitmap's
 * bytes, cardinality. */
#include "store/dml/dml_int.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <zlib.h>

#include "common/buf.h"

#define DV_MAGIC 1681511377u
#define ARRAY_MAX 4096

static const char Z85[] =
    "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#";

/* 16 bytes -> 20 characters (+ NUL): each 4 bytes, big-endian, as 5 base-85 digits. */
static void z85_encode(char out[21], const uint8_t in[16]) {
  for (int g = 0; g < 4; g++) {
    uint32_t v = (uint32_t)in[4 * g] << 24 | (uint32_t)in[4 * g + 1] << 16 |
                 (uint32_t)in[4 * g + 2] << 8 | in[4 * g + 3];
    for (int d = 4; d >= 0; d--) {
      out[5 * g + d] = Z85[v % 85];
      v /= 85;
    }
  }
  out[20] = '\0';
}

static void put_le(dd_buf *b, uint64_t v, int n) {
  for (int i = 0; i < n; i++) dd_buf_putc(b, (char)(v >> (8 * i) & 0xFF));
}

static void put_be32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* One 32-bit roaring bitmap of rows[0..n) (all with the same high 32 bits). */
static void bitmap32(dd_buf *b, const uint64_t *rows, size_t n) {
  size_t ncont = 0;
  for (size_t i = 0; i < n; i++)
    if (!i || (rows[i] >> 16) != (rows[i - 1] >> 16)) ncont++;
  size_t start = b->len;
  put_le(b, 12346, 4);
  put_le(b, ncont, 4);
  /* headers: key, cardinality - 1 */
  size_t *cards = calloc(ncont + 1, sizeof *cards);
  if (!cards) {
    b->oom = true;
    return;
  }
  for (size_t i = 0, c = 0; i < n; c++) {
    size_t j = i;
    while (j < n && (rows[j] >> 16) == (rows[i] >> 16)) j++;
    cards[c] = j - i;
    put_le(b, rows[i] >> 16 & 0xFFFF, 2);
    put_le(b, j - i - 1, 2);
    i = j;
  }
  size_t off = b->len - start + 4 * ncont;
  for (size_t c = 0; c < ncont; c++) {
    put_le(b, off, 4);
    off += cards[c] > ARRAY_MAX ? 8192 : 2 * cards[c];
  }
  for (size_t i = 0, c = 0; i < n; c++) {
    if (cards[c] > ARRAY_MAX) {
      uint64_t words[1024] = {0};
      for (size_t k = i; k < i + cards[c]; k++) words[(rows[k] & 0xFFFF) / 64] |= 1ULL << (rows[k] % 64);
      for (int w = 0; w < 1024; w++) put_le(b, words[w], 8);
    } else {
      for (size_t k = i; k < i + cards[c]; k++) put_le(b, rows[k] & 0xFFFF, 2);
    }
    i += cards[c];
  }
  free(cards);
}

int dml__dv_serialize(uint8_t **out, size_t *len, const uint64_t *rows, size_t n) {
  dd_buf b = {0};
  size_t nb = 0;
  for (size_t i = 0; i < n; i++)
    if (!i || (rows[i] >> 32) != (rows[i - 1] >> 32)) nb++;
  put_le(&b, DV_MAGIC, 4);
  put_le(&b, nb, 8);
  for (size_t i = 0; i < n && !b.oom;) {
    size_t j = i;
    while (j < n && (rows[j] >> 32) == (rows[i] >> 32)) j++;
    put_le(&b, rows[i] >> 32, 4);
    bitmap32(&b, rows + i, j - i);
    i = j;
  }
  if (b.oom) {
    dd_buf_free(&b);
    return dml__oom();
  }
  *out = (uint8_t *)b.p;
  *len = b.len;
  return 0;
}

static int name_file(dml__dvfile *f) {
  uint8_t u[16];
  size_t got = 0;
  while (got < sizeof u) {
    ssize_t k = getrandom(u + got, sizeof u - got, 0);
    if (k <= 0) return dd_err_set(DD_EIO, "dml: no random bytes for a deletion vector name");
    got += (size_t)k;
  }
  u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
  u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
  z85_encode(f->z85, u);
  dl_dv d = {.storage_type = 'u', .path_or_inline = f->z85};
  return dl_dv_path(&f->path, &d);
}

int dml__dv_append(dml__dvfile *f, const uint64_t *rows, size_t n, dl_dv *out) {
  uint8_t *bits = NULL;
  size_t len = 0;
  int rc = f->path ? 0 : name_file(f);
  if (!rc) rc = dml__dv_serialize(&bits, &len, rows, n);
  if (!rc && len > INT32_MAX) rc = dd_err_set(DD_EUNSUPPORTED, "dml: a deletion vector over 2 GiB");
  size_t need = f->len + (f->len ? 0 : 1) + len + 8;
  if (!rc && need > f->cap) {
    size_t cap = f->cap ? f->cap : 4096;
    while (cap < need) cap *= 2;
    uint8_t *nb = realloc(f->buf, cap);
    if (!nb) rc = dml__oom();
    else f->buf = nb, f->cap = cap;
  }
  if (!rc) {
    if (!f->len) f->buf[f->len++] = 1; /* format version */
    *out = (dl_dv){.storage_type = 'u', .path_or_inline = f->z85, .offset = (int64_t)f->len,
                   .size_in_bytes = (int32_t)len, .cardinality = (int64_t)n, .max_row_index = -1};
    put_be32(f->buf + f->len, (uint32_t)len);
    memcpy(f->buf + f->len + 4, bits, len);
    put_be32(f->buf + f->len + 4 + len, (uint32_t)crc32(0L, bits, (uInt)len));
    f->len += len + 8;
  }
  free(bits);
  return rc;
}

int dml__dv_put(dml__dvfile *f, dl_table *t) {
  if (!f->len) return 0;
  int rc = os_put_if_absent(dl_table_store(t), f->path, f->buf, f->len);
  f->put = !rc;
  return rc;
}

void dml__dv_free(dml__dvfile *f, dl_table *t, bool remove) {
  if (remove && f->put) os_delete(dl_table_store(t), f->path);
  free(f->path);
  free(f->buf);
  memset(f, 0, sizeof *f);
}

int dml__stats_loose(char **out, const char *stats) {
  *out = NULL;
  if (!stats) return 0;
  json_t *j = json_loads(stats, 0, NULL);
  if (!j || !json_is_object(j)) {
    json_decref(j);
    return 0; /* unreadable stats are dropped rather than kept tight */
  }
  json_object_set_new(j, "tightBounds", json_false());
  *out = json_dumps(j, JSON_COMPACT);
  json_decref(j);
  return *out ? 0 : dml__oom();
}

/* ---- row lists ---- */

int dml__push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x) {
  if (*n == *cap) {
    size_t c = *cap ? *cap * 2 : 256;
    uint64_t *nv = realloc(*v, c * sizeof *nv);
    if (!nv) return dml__oom();
    *v = nv;
    *cap = c;
  }
  (*v)[(*n)++] = x;
  return 0;
}

/* The union of two sorted unique row lists. */
int dml__rows_union(uint64_t **out, size_t *nout, const uint64_t *a, size_t na,
                      const uint64_t *b, size_t nb) {
  uint64_t *m = malloc((na + nb + 1) * sizeof *m);
  if (!m) return dml__oom();
  size_t i = 0, j = 0, n = 0;
  while (i < na || j < nb) {
    if (j == nb || (i < na && a[i] < b[j])) m[n++] = a[i++];
    else if (i == na || b[j] < a[i]) m[n++] = b[j++];
    else m[n++] = a[i++], j++;
  }
  *out = m;
  *nout = n;
  return 0;
}
