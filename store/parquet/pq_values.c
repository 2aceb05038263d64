/* pq_values.c: decoding the values section of a data page (PLAIN, dictionary indices,
 * RLE booleans, DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY,
 * BYTE_STREAM_SPLIT) and of dictionary pages, into a pq__col's element array. */
#include "store/parquet/pq_internal.h"

#include <stdlib.h>
#include <string.h>

static int val_bad(const pq__col *c, const char *why) {
  return dd_err_set(DD_ECORRUPT, "parquet: corrupt values in column '%s': %s",
                    c->field->name, why);
}

size_t pq__type_elem(const pq_field *leaf) {
  switch (leaf->type) {
    case PQ_T_BOOLEAN: return 1;
    case PQ_T_INT32: case PQ_T_FLOAT: return 4;
    case PQ_T_INT64: case PQ_T_DOUBLE: return 8;
    case PQ_T_INT96: return 12;
    case PQ_T_BYTE_ARRAY: return sizeof(pq_bytes);
    case PQ_T_FIXED_LEN_BYTE_ARRAY: return (size_t)leaf->type_length;
    default: return 0;
  }
}

static int grow_vals(pq__col *c, size_t n) {
  if (n > (SIZE_MAX / 2) / c->elem - c->nvals) return val_bad(c, "too many values");
  size_t need = (c->nvals + n) * c->elem;
  if (c->capvals && need <= c->capvals) return 0;
  if (need == 0) need = c->elem;
  size_t cap = c->capvals ? c->capvals : 1024;
  /* the chunk's declared entries (up to 1M) at once: no copies doubling up to them */
  size_t declared = c->want > 0 ? (c->want < (1 << 20) ? (size_t)c->want : (size_t)1 << 20) : 0;
  if (declared * c->elem > cap) cap = declared * c->elem;
  while (cap < need) cap *= 2;
  uint8_t *v = realloc(c->vals, cap);
  if (!v) return dd_err_set(DD_ENOMEM, "parquet: out of memory for column values");
  c->vals = v;
  c->capvals = cap;
  pq__hugepage_hint(v, cap);
  return 0;
}

static int plain_bytes(pq__col *c, const uint8_t *p, size_t len, size_t n, pq_bytes *dst) {
  size_t pos = 0;
  for (size_t i = 0; i < n; i++) {
    if (len - pos < 4) return val_bad(c, "truncated BYTE_ARRAY length");
    uint32_t l = (uint32_t)p[pos] | (uint32_t)p[pos + 1] << 8 | (uint32_t)p[pos + 2] << 16 |
                 (uint32_t)p[pos + 3] << 24;
    pos += 4;
    if (l > len - pos) return val_bad(c, "BYTE_ARRAY value past end of page");
    dst[i].ptr = p + pos;
    dst[i].len = l;
    pos += l;
  }
  return 0;
}

static int plain_into(pq__col *c, const uint8_t *p, size_t len, size_t n, uint8_t *dst) {
  if (c->field->type == PQ_T_BYTE_ARRAY) return plain_bytes(c, p, len, n, (pq_bytes *)dst);
  if (c->field->type == PQ_T_BOOLEAN) {
    if ((n + 7) / 8 > len) return val_bad(c, "truncated PLAIN booleans");
    for (size_t i = 0; i < n; i++) dst[i] = (p[i >> 3] >> (i & 7)) & 1;
    return 0;
  }
  if (n > len / c->elem) return val_bad(c, "truncated PLAIN values");
  if (n) memcpy(dst, p, n * c->elem);
  return 0;
}

static int rle_bools(pq__col *c, const uint8_t *p, size_t len, size_t n, uint8_t *dst) {
  if (len < 4) return val_bad(c, "truncated RLE boolean length");
  uint32_t l = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
               (uint32_t)p[3] << 24;
  if (l > len - 4) return val_bad(c, "RLE boolean length past end of page");
  uint32_t *tmp = malloc((n + 1) * sizeof *tmp);
  if (!tmp) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  int rc = pq__rle_decode(p + 4, l, 1, tmp, n);
  for (size_t i = 0; !rc && i < n; i++) dst[i] = (uint8_t)tmp[i];
  free(tmp);
  return rc;
}

/* Gathers dictionary entries by index, typed by the element width so each is one move
 * (a memcpy of a run-time width is a call per value); every index is checked. */
#define GATHER(T)                                                                 \
  do {                                                                            \
    const T *from = (const T *)(const void *)c->dict;                            \
    T *to = (T *)(void *)dst;                                                     \
    for (size_t i = 0; i < n; i++) {                                              \
      uint32_t k = idx[i];                                                        \
      bad |= k >= nd;                                                             \
      to[i] = from[k < nd ? k : 0];                                               \
    }                                                                             \
  } while (0)

static int dict_indices(pq__col *c, const uint8_t *p, size_t len, size_t n, uint8_t *dst) {
  if (!c->dict && n > 0) return val_bad(c, "dictionary-encoded page without a dictionary");
  if (len < 1) return n ? val_bad(c, "missing dictionary index width") : 0;
  uint32_t *idx = pq__col_tmp(c, n);
  if (!idx) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  int rc = pq__rle_decode(p + 1, len - 1, p[0], idx, n);
  if (rc || n == 0) return rc;
  if (c->ndict == 0) return val_bad(c, "dictionary index out of range");
  size_t e = c->elem;
  uint32_t nd = (uint32_t)c->ndict;
  bool bad = false;
  if (e == 4) GATHER(uint32_t);
  else if (e == 8) GATHER(uint64_t);
  else if (e == sizeof(pq_bytes)) GATHER(pq_bytes);
  else
    for (size_t i = 0; i < n; i++) {
      bad |= idx[i] >= nd;
      memcpy(dst + i * e, c->dict + (size_t)(idx[i] < nd ? idx[i] : 0) * e, e);
    }
  return bad ? val_bad(c, "dictionary index out of range") : 0;
}

static int delta_ints(pq__col *c, const uint8_t *p, size_t len, size_t n, uint8_t *dst) {
  if (c->field->type != PQ_T_INT32 && c->field->type != PQ_T_INT64)
    return val_bad(c, "DELTA_BINARY_PACKED on a non-integer column");
  int64_t *tmp = malloc((n + 1) * sizeof *tmp);
  if (!tmp) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  size_t used;
  int rc = pq__delta_decode(p, len, tmp, n, &used);
  for (size_t i = 0; !rc && i < n; i++) {
    if (c->field->type == PQ_T_INT32) {
      int32_t v = (int32_t)(uint32_t)(uint64_t)tmp[i];
      memcpy(dst + 4 * i, &v, 4);
    } else {
      memcpy(dst + 8 * i, &tmp[i], 8);
    }
  }
  free(tmp);
  return rc;
}

static int delta_lengths(pq__col *c, const uint8_t *p, size_t len, size_t n, pq_bytes *dst,
                         size_t *used) {
  int64_t *lens = malloc((n + 1) * sizeof *lens);
  if (!lens) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  size_t pos;
  int rc = pq__delta_decode(p, len, lens, n, &pos);
  for (size_t i = 0; !rc && i < n; i++) {
    if (lens[i] < 0 || (uint64_t)lens[i] > len - pos) {
      rc = val_bad(c, "DELTA_LENGTH_BYTE_ARRAY value past end of page");
      break;
    }
    dst[i].ptr = p + pos;
    dst[i].len = (size_t)lens[i];
    pos += (size_t)lens[i];
  }
  free(lens);
  *used = pos;
  return rc;
}

static int delta_byte_array(pq__col *c, const uint8_t *p, size_t len, size_t n,
                            uint8_t *dst) {
  int64_t *pre = malloc((n + 1) * sizeof *pre);
  pq_bytes *suf = malloc((n + 1) * sizeof *suf);
  size_t used = 0, used2;
  int rc = (!pre || !suf) ? dd_err_set(DD_ENOMEM, "parquet: out of memory") : 0;
  if (!rc) rc = pq__delta_decode(p, len, pre, n, &used);
  if (!rc) rc = delta_lengths(c, p + used, len - used, n, suf, &used2);
  pq_bytes prev = {NULL, 0};
  bool fixed = c->field->type == PQ_T_FIXED_LEN_BYTE_ARRAY;
  for (size_t i = 0; !rc && i < n; i++) {
    if (pre[i] < 0 || (uint64_t)pre[i] > prev.len) {
      rc = val_bad(c, "DELTA_BYTE_ARRAY prefix longer than the previous value");
      break;
    }
    size_t pl = (size_t)pre[i], tl = pl + suf[i].len;
    uint8_t *v = pq__arena_alloc(&c->mem, tl);
    if (!v) {
      rc = dd_err_set(DD_ENOMEM, "parquet: out of memory");
      break;
    }
    if (pl) memcpy(v, prev.ptr, pl);
    if (suf[i].len) memcpy(v + pl, suf[i].ptr, suf[i].len);
    prev.ptr = v;
    prev.len = tl;
    if (!fixed) memcpy(dst + i * sizeof prev, &prev, sizeof prev);
    else if (tl != c->elem) rc = val_bad(c, "DELTA_BYTE_ARRAY value of the wrong width");
    else memcpy(dst + i * c->elem, v, tl);
  }
  free(pre);
  free(suf);
  return rc;
}

static int byte_stream_split(pq__col *c, const uint8_t *p, size_t len, size_t n,
                             uint8_t *dst) {
  size_t k = c->elem;
  if (c->field->type == PQ_T_BOOLEAN || c->field->type == PQ_T_BYTE_ARRAY)
    return val_bad(c, "BYTE_STREAM_SPLIT on an unsupported type");
  if (n > len / k) return val_bad(c, "truncated BYTE_STREAM_SPLIT values");
  for (size_t b = 0; b < k; b++)
    for (size_t i = 0; i < n; i++) dst[i * k + b] = p[b * n + i];
  return 0;
}

int pq__values_decode(pq__col *c, int enc, const uint8_t *p, size_t len, size_t n) {
  int rc = grow_vals(c, n);
  if (rc) return rc;
  uint8_t *dst = c->vals + c->nvals * c->elem;
  size_t used;
  switch (enc) {
    case PQ__ENC_PLAIN: rc = plain_into(c, p, len, n, dst); break;
    case PQ__ENC_PLAIN_DICT: case PQ__ENC_RLE_DICT: rc = dict_indices(c, p, len, n, dst); break;
    case PQ__ENC_RLE:
      rc = c->field->type == PQ_T_BOOLEAN ? rle_bools(c, p, len, n, dst)
                                          : val_bad(c, "RLE values on a non-boolean column");
      break;
    case PQ__ENC_DELTA_BP: rc = delta_ints(c, p, len, n, dst); break;
    case PQ__ENC_DELTA_LBA:
      rc = c->field->type == PQ_T_BYTE_ARRAY
               ? delta_lengths(c, p, len, n, (pq_bytes *)dst, &used)
               : val_bad(c, "DELTA_LENGTH_BYTE_ARRAY on a non-BYTE_ARRAY column");
      break;
    case PQ__ENC_DELTA_BA:
      rc = (c->field->type == PQ_T_BYTE_ARRAY || c->field->type == PQ_T_FIXED_LEN_BYTE_ARRAY)
               ? delta_byte_array(c, p, len, n, dst)
               : val_bad(c, "DELTA_BYTE_ARRAY on a non-binary column");
      break;
    case PQ__ENC_BSS: rc = byte_stream_split(c, p, len, n, dst); break;
    default:
      return dd_err_set(DD_EUNSUPPORTED, "parquet: column '%s' uses value encoding %d, "
                        "which is not supported", c->field->name, enc);
  }
  if (!rc) c->nvals += n;
  return rc;
}

int pq__dict_decode(pq__col *c, int enc, const uint8_t *p, size_t len, size_t n) {
  if (enc != PQ__ENC_PLAIN && enc != PQ__ENC_PLAIN_DICT)
    return dd_err_set(DD_EUNSUPPORTED, "parquet: column '%s' has a dictionary page in "
                      "encoding %d (only PLAIN is defined)", c->field->name, enc);
  if (c->field->type == PQ_T_BOOLEAN ? n > len * 8 : n > len / (c->elem < 4 ? c->elem : 4) + 1)
    return val_bad(c, "dictionary larger than its page");
  free(c->dict);
  c->ndict = 0;
  c->dict = malloc((n + 1) * c->elem);
  if (!c->dict) return dd_err_set(DD_ENOMEM, "parquet: out of memory for dictionary");
  int rc = plain_into(c, p, len, n, c->dict);
  if (!rc) c->ndict = n;
  return rc;
}
