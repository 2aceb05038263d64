/* pq_codec.c: page compression codecs (UNCOMPRESSED, SNAPPY, GZIP, ZSTD; LZ4_RAW for
 * reading, decoded here by hand). Output sizes are always checked against the header. */
#include "store/parquet/pq_internal.h"

#include <snappy-c.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

static int bad(const char *codec, const char *why) {
  return dd_err_set(DD_ECORRUPT, "parquet: corrupt %s page: %s", codec, why);
}

static int gunzip(const uint8_t *src, size_t n, uint8_t *dst, size_t dn) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (inflateInit2(&z, 15 + 32) != Z_OK) return dd_err_set(DD_ENOMEM, "parquet: zlib init");
  z.next_in = (Bytef *)src;
  z.avail_in = (uInt)n;
  z.next_out = dst;
  z.avail_out = (uInt)dn;
  int zr = inflate(&z, Z_FINISH);
  size_t got = dn - z.avail_out;
  inflateEnd(&z);
  if (zr != Z_STREAM_END) return bad("GZIP", "inflate failed or output larger than header");
  if (got != dn) return bad("GZIP", "decompressed size differs from header");
  return 0;
}

/* LZ4 block format: sequences of literals and back-references. */
static int lz4_raw(const uint8_t *s, size_t n, uint8_t *d, size_t dn) {
  size_t ip = 0, op = 0;
  while (ip < n) {
    uint8_t tok = s[ip++];
    size_t lit = tok >> 4;
    if (lit == 15) {
      uint8_t c;
      do {
        if (ip >= n) return bad("LZ4_RAW", "truncated literal length");
        c = s[ip++];
        lit += c;
      } while (c == 255);
    }
    if (lit > n - ip || lit > dn - op) return bad("LZ4_RAW", "literal run out of bounds");
    memcpy(d + op, s + ip, lit);
    ip += lit;
    op += lit;
    if (ip == n) break;
    if (n - ip < 2) return bad("LZ4_RAW", "truncated match offset");
    size_t off = (size_t)s[ip] | (size_t)s[ip + 1] << 8;
    ip += 2;
    size_t ml = (tok & 15u) + 4;
    if ((tok & 15u) == 15) {
      uint8_t c;
      do {
        if (ip >= n) return bad("LZ4_RAW", "truncated match length");
        c = s[ip++];
        ml += c;
      } while (c == 255);
    }
    if (off == 0 || off > op || ml > dn - op) return bad("LZ4_RAW", "match out of bounds");
    for (size_t i = 0; i < ml; i++, op++) d[op] = d[op - off];
  }
  return op == dn ? 0 : bad("LZ4_RAW", "decompressed size differs from header");
}

int pq__decompress(pq_codec codec, const uint8_t *src, size_t n, uint8_t *dst, size_t dn) {
  switch (codec) {
    case PQ_CODEC_UNCOMPRESSED:
      if (n != dn) return bad("UNCOMPRESSED", "compressed and uncompressed sizes differ");
      if (n) memcpy(dst, src, n);
      return 0;
    case PQ_CODEC_SNAPPY: {
      size_t ulen;
      if (snappy_uncompressed_length((const char *)src, n, &ulen) != SNAPPY_OK)
        return bad("SNAPPY", "bad length header");
      if (ulen != dn) return bad("SNAPPY", "decompressed size differs from header");
      size_t got = dn;
      if (snappy_uncompress((const char *)src, n, (char *)dst, &got) != SNAPPY_OK ||
          got != dn)
        return bad("SNAPPY", "invalid compressed data");
      return 0;
    }
    case PQ_CODEC_GZIP: return gunzip(src, n, dst, dn);
    case PQ_CODEC_ZSTD: {
      size_t got = ZSTD_decompress(dst, dn, src, n);
      if (ZSTD_isError(got)) return bad("ZSTD", ZSTD_getErrorName(got));
      if (got != dn) return bad("ZSTD", "decompressed size differs from header");
      return 0;
    }
    case PQ_CODEC_LZ4_RAW: return lz4_raw(src, n, dst, dn);
    default:
      return dd_err_set(DD_EUNSUPPORTED, "parquet: compression codec %d is not supported "
                        "(supported: UNCOMPRESSED, SNAPPY, GZIP, ZSTD, LZ4_RAW)", (int)codec);
  }
}

int pq__decompress_check(pq_codec codec, const uint8_t *src, size_t n, size_t dn) {
  size_t ulen = 0;
  unsigned long long zs;
  switch (codec) {
    case PQ_CODEC_SNAPPY:
      if (snappy_uncompressed_length((const char *)src, n, &ulen) != SNAPPY_OK || ulen != dn)
        return bad("SNAPPY", "length header differs from the page header");
      return 0;
    case PQ_CODEC_GZIP: /* deflate expands at most ~1032:1 */
      return dn / 1032 > n + 64 ? bad("GZIP", "page header size impossible") : 0;
    case PQ_CODEC_LZ4_RAW:
      return dn / 255 > n + 16 ? bad("LZ4_RAW", "page header size impossible") : 0;
    case PQ_CODEC_ZSTD:
      zs = ZSTD_getFrameContentSize(src, n);
      if (zs != ZSTD_CONTENTSIZE_UNKNOWN && zs != ZSTD_CONTENTSIZE_ERROR && zs != dn)
        return bad("ZSTD", "frame size differs from the page header");
      return dn / 32768 > n + 64 ? bad("ZSTD", "page header size impossible") : 0;
    default:
      return 0;
  }
}

static int gzip(const uint8_t *src, size_t n, pq__buf *out) {
  z_stream z;
  memset(&z, 0, sizeof z);
  if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK)
    return dd_err_set(DD_ENOMEM, "parquet: zlib init");
  uLong bound = deflateBound(&z, (uLong)n);
  int rc = pq__buf_reserve(out, bound);
  if (rc) {
    deflateEnd(&z);
    return rc;
  }
  z.next_in = (Bytef *)src;
  z.avail_in = (uInt)n;
  z.next_out = out->data + out->len;
  z.avail_out = (uInt)bound;
  int zr = deflate(&z, Z_FINISH);
  out->len += bound - z.avail_out;
  deflateEnd(&z);
  return zr == Z_STREAM_END ? 0 : dd_err_set(DD_EINTERNAL, "parquet: gzip compression failed");
}

int pq__compress(pq_codec codec, const uint8_t *src, size_t n, pq__buf *out) {
  int rc;
  switch (codec) {
    case PQ_CODEC_UNCOMPRESSED: return pq__buf_put(out, src, n);
    case PQ_CODEC_SNAPPY: {
      size_t cap = snappy_max_compressed_length(n);
      if ((rc = pq__buf_reserve(out, cap))) return rc;
      if (snappy_compress((const char *)src, n, (char *)out->data + out->len, &cap) !=
          SNAPPY_OK)
        return dd_err_set(DD_EINTERNAL, "parquet: snappy compression failed");
      out->len += cap;
      return 0;
    }
    case PQ_CODEC_GZIP: return gzip(src, n, out);
    case PQ_CODEC_ZSTD: {
      size_t cap = ZSTD_compressBound(n);
      if ((rc = pq__buf_reserve(out, cap))) return rc;
      size_t got = ZSTD_compress(out->data + out->len, cap, src, n, 3);
      if (ZSTD_isError(got)) return dd_err_set(DD_EINTERNAL, "parquet: zstd: %s",
                                               ZSTD_getErrorName(got));
      out->len += got;
      return 0;
    }
    default:
      return dd_err_set(DD_EUNSUPPORTED, "parquet: writer does not support codec %d",
                        (int)codec);
  }
}
