/* pq_delta.c: DELTA_BINARY_PACKED decoding (blocks of miniblocks of bit-packed deltas
 * from a per-block minimum), the base of the DELTA_LENGTH_BYTE_ARRAY and DELTA_BYTE_ARRAY
 * encodings. Arithmetic wraps as two's complement, as the format specifies. */
#include "store/parquet/pq_internal.h"

#include <stdlib.h>

static int delta_bad(const char *why) {
  return dd_err_set(DD_ECORRUPT, "parquet: corrupt DELTA_BINARY_PACKED data: %s", why);
}

static int uleb(const uint8_t *p, size_t n, size_t *pos, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*pos >= n) return delta_bad("truncated varint");
    uint8_t c = p[(*pos)++];
    v |= (uint64_t)(c & 0x7f) << shift;
    if (!(c & 0x80)) {
      *out = v;
      return 0;
    }
  }
  return delta_bad("varint too long");
}

static uint64_t get_bits(const uint8_t *p, size_t bit, int w) {
  if (w == 0) return 0;
  size_t byte = bit >> 3;
  int shift = (int)(bit & 7);
  uint64_t v = (uint64_t)p[byte++] >> shift;
  int got = 8 - shift;
  while (got < w) {
    v |= (uint64_t)p[byte++] << got;
    got += 8;
  }
  return w < 64 ? v & (((uint64_t)1 << w) - 1) : v;
}

typedef struct dstate {
  const uint8_t *p;
  size_t n, pos;
  uint64_t vpm, nmini, total, done;
  uint64_t last;
  int64_t *out;
  size_t count;
} dstate;

static int miniblock(dstate *s, int w, uint64_t min_delta) {
  if (w > 64) return delta_bad("miniblock bit width above 64");
  size_t bytes = (size_t)(s->vpm * (uint64_t)w / 8);
  if (bytes > s->n - s->pos) return delta_bad("miniblock past end of page");
  const uint8_t *q = s->p + s->pos;
  for (uint64_t k = 0; k < s->vpm && s->done < s->total; k++) {
    s->last += min_delta + get_bits(q, (size_t)(k * (uint64_t)w), w);
    if (s->done < s->count) s->out[s->done] = (int64_t)s->last;
    s->done++;
  }
  s->pos += bytes;
  return 0;
}

static int block(dstate *s) {
  uint64_t zz = 0;
  int rc = uleb(s->p, s->n, &s->pos, &zz);
  if (rc) return rc;
  uint64_t min_delta = (zz >> 1) ^ -(zz & 1);
  if (s->nmini > s->n - s->pos) return delta_bad("miniblock widths past end of page");
  const uint8_t *widths = s->p + s->pos;
  s->pos += s->nmini;
  for (uint64_t m = 0; m < s->nmini && s->done < s->total; m++)
    if ((rc = miniblock(s, widths[m], min_delta))) return rc;
  return 0;
}

int pq__delta_decode(const uint8_t *p, size_t n, int64_t *out, size_t count, size_t *used) {
  dstate s = {p, n, 0, 0, 0, 0, 0, 0, out, count};
  uint64_t bsize = 0, first = 0;
  int rc;
  if ((rc = uleb(p, n, &s.pos, &bsize)) || (rc = uleb(p, n, &s.pos, &s.nmini)) ||
      (rc = uleb(p, n, &s.pos, &s.total)) || (rc = uleb(p, n, &s.pos, &first)))
    return rc;
  if (bsize == 0 || bsize % 128 || s.nmini == 0 || bsize % s.nmini || bsize > (1u << 20))
    return delta_bad("bad block or miniblock size");
  s.vpm = bsize / s.nmini;
  if (s.vpm % 32) return delta_bad("miniblock size not a multiple of 32");
  if (s.total < count) return delta_bad("fewer values than the page needs");
  if (s.total > 0 && s.total - 1 > ((uint64_t)n / (1 + s.nmini) + 1) * bsize)
    return delta_bad("value count larger than the data can hold");
  s.last = (first >> 1) ^ -(first & 1);
  if (s.total > 0) {
    if (count > 0) out[0] = (int64_t)s.last;
    s.done = 1;
  }
  while (s.done < s.total)
    if ((rc = block(&s))) return rc;
  *used = s.pos;
  return 0;
}
