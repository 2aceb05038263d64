/* pq_rle.c: the RLE/bit-packed hybrid encoding (levels, booleans, dictionary indices),
 * its encoder, and the legacy MSB-first BIT_PACKED level encoding. */
#include "store/parquet/pq_internal.h"

#include <string.h>

static int rle_bad(const char *why) {
  return dd_err_set(DD_ECORRUPT, "parquet: corrupt RLE/bit-packed data: %s", why);
}

int pq__bit_width(uint32_t max) {
  int w = 0;
  while (max) {
    w++;
    max >>= 1;
  }
  return w;
}

static int read_uleb(const uint8_t *p, size_t n, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= n) return rle_bad("truncated run header");
    uint8_t c = p[(*pos)++];
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return rle_bad("run header varint too long");
}

/* Unpacks `need` LSB-first values of `width` bits from q[0..avail). */
static int unpack_lsb(const uint8_t *q, size_t avail, int width, uint32_t *out, size_t need) {
  if (need > avail * 8 / (size_t)width) return rle_bad("bit-packed run truncated");
  uint64_t acc = 0, mask = (width == 32) ? 0xffffffffu : ((1u << width) - 1);
  int bits = 0;
  for (size_t k = 0; k < need; k++) {
    while (bits < width) {
      acc |= (uint64_t)*q++ << bits;
      bits += 8;
    }
    out[k] = (uint32_t)(acc & mask);
    acc >>= width;
    bits -= width;
  }
  return 0;
}

static int rle_run(const uint8_t *p, size_t n, size_t *pos, int width, uint64_t run,
                   uint32_t *out, size_t need) {
  size_t vb = ((size_t)width + 7) / 8;
  if (n - *pos < vb) return rle_bad("truncated repeated value");
  uint32_t v = 0;
  for (size_t k = 0; k < vb; k++) v |= (uint32_t)p[*pos + k] << (8 * k);
  *pos += vb;
  if (run == 0) return rle_bad("zero-length run");
  for (size_t k = 0; k < need; k++) out[k] = v;
  return 0;
}

int pq__rle_decode(const uint8_t *p, size_t n, int width, uint32_t *out, size_t count) {
  if (width < 0 || width > 32) return rle_bad("bit width above 32");
  if (width == 0) {
    memset(out, 0, count * sizeof *out);
    return 0;
  }
  size_t i = 0, pos = 0;
  while (i < count) {
    uint64_t h = 0;
    int rc = read_uleb(p, n, &pos, &h);
    if (rc) return rc;
    uint64_t len = h >> 1;
    if (h & 1) {
      if (len > (n - pos) / (size_t)width + 1) return rle_bad("bit-packed run past end");
      uint64_t nv = len * 8;
      size_t need = nv < count - i ? (size_t)nv : count - i;
      size_t bytes = (size_t)len * (size_t)width;
      size_t avail = bytes < n - pos ? bytes : n - pos;
      if ((rc = unpack_lsb(p + pos, avail, width, out + i, need))) return rc;
      pos += avail;
      i += need;
    } else {
      size_t need = len < count - i ? (size_t)len : count - i;
      if ((rc = rle_run(p, n, &pos, width, len, out + i, need))) return rc;
      i += need;
    }
  }
  return 0;
}

bool pq__rle_one_run(const uint8_t *p, size_t n, int width, size_t count, uint32_t *value) {
  if (width <= 0 || width > 32 || count == 0) return false;
  size_t pos = 0;
  uint64_t h = 0;
  if (read_uleb(p, n, &pos, &h) || (h & 1) || (h >> 1) < count) return false;
  size_t vb = ((size_t)width + 7) / 8;
  if (n - pos < vb) return false;
  uint32_t v = 0;
  for (size_t k = 0; k < vb; k++) v |= (uint32_t)p[pos + k] << (8 * k);
  *value = v;
  return true;
}

int pq__bitpacked_decode(const uint8_t *p, size_t n, int width, uint32_t *out, size_t count,
                         size_t *used) {
  if (width < 0 || width > 32) return rle_bad("bit width above 32");
  if (count > SIZE_MAX / 64) return rle_bad("too many values");
  size_t bytes = (count * (size_t)width + 7) / 8;
  if (bytes > n) return rle_bad("BIT_PACKED levels truncated");
  size_t bit = 0;
  for (size_t k = 0; k < count; k++) {
    uint32_t v = 0;
    for (int b = 0; b < width; b++, bit++)
      v = (v << 1) | ((p[bit >> 3] >> (7 - (bit & 7))) & 1u);
    out[k] = v;
  }
  *used = bytes;
  return 0;
}

/* ---- encoder -------------------------------------------------------------------------- */

static int put_packed(pq__buf *out, const uint32_t *v, size_t nv, int width) {
  size_t groups = (nv + 7) / 8;
  int rc = pq__buf_uleb(out, (uint64_t)groups << 1 | 1);
  if (rc) return rc;
  uint64_t acc = 0;
  int bits = 0;
  for (size_t k = 0; k < groups * 8; k++) {
    acc |= (uint64_t)(k < nv ? v[k] : 0) << bits;
    bits += width;
    while (bits >= 8) {
      if ((rc = pq__buf_byte(out, (uint8_t)acc))) return rc;
      acc >>= 8;
      bits -= 8;
    }
  }
  return 0;
}

static int put_run(pq__buf *out, uint32_t v, size_t run, int width) {
  int rc = pq__buf_uleb(out, (uint64_t)run << 1);
  for (int k = 0; !rc && k < (width + 7) / 8; k++) rc = pq__buf_byte(out, (uint8_t)(v >> (8 * k)));
  return rc;
}

static size_t run_at(const uint32_t *v, size_t i, size_t count) {
  size_t j = i + 1;
  while (j < count && v[j] == v[i]) j++;
  return j - i;
}

int pq__rle_encode(pq__buf *out, const uint32_t *v, size_t count, int width) {
  size_t i = 0;
  int rc = 0;
  while (i < count && !rc) {
    size_t r = run_at(v, i, count);
    if (r >= 8) {
      rc = put_run(out, v[i], r, width);
      i += r;
      continue;
    }
    /* literal groups of 8 until a long run starts at a group boundary (or the end) */
    size_t start = i;
    while (i < count) {
      i = i + 8 < count ? i + 8 : count;
      if (i < count && run_at(v, i, count) >= 8) break;
    }
    rc = put_packed(out, v + start, i - start, width);
  }
  return rc;
}
