/* scn_value.c: partition values as typed arw columns (parsed with dl_partition_value_parse,
 * repeated for every row of a row group) and decimal text to Decimal128 bytes. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/scan/scn_int.h"

int scn__dec_parse(const char *s, int scale, uint8_t out[16]) {
  const char *p = s;
  bool neg = false;
  if (*p == '-' || *p == '+') neg = *p++ == '-';
  unsigned __int128 v = 0, limit = 1;
  for (int i = 0; i < ARW_DECIMAL_MAX_PRECISION; i++) limit *= 10;
  int frac = -1, digits = 0;
  for (; *p; p++) {
    if (*p == '.' && frac < 0) {
      frac = 0;
      continue;
    }
    if (*p < '0' || *p > '9') break;
    if (frac >= 0) {
      if (frac == scale) { /* digits beyond the scale must be zeros */
        if (*p != '0') return dd_err_set(DD_EINVAL, "decimal '%s' has more than %d decimals", s, scale);
        continue;
      }
      frac++;
    }
    v = v * 10 + (unsigned)(*p - '0');
    digits++;
    if (v >= limit) return dd_err_set(DD_EINVAL, "decimal '%s' exceeds 38 digits", s);
  }
  if (*p || digits == 0) return dd_err_set(DD_EINVAL, "'%s' is not a decimal", s);
  for (int i = frac < 0 ? 0 : frac; i < scale; i++) {
    v *= 10;
    if (v >= limit) return dd_err_set(DD_EINVAL, "decimal '%s' exceeds 38 digits", s);
  }
  unsigned __int128 u = neg ? (unsigned __int128)0 - v : v;
  for (int i = 0; i < 16; i++) out[i] = (uint8_t)(u >> (8 * i));
  return 0;
}

/* Appends n copies of the w bytes at one into field id. */
static int append_copies(arw_batch *out, int id, const void *one, size_t w, size_t n) {
  enum { CHUNK = 4096 };
  uint8_t buf[CHUNK * 16];
  for (size_t i = 0; i < CHUNK; i++) memcpy(buf + i * w, one, w);
  int rc = 0;
  for (size_t done = 0; done < n && !rc; done += CHUNK) {
    size_t k = n - done < CHUNK ? n - done : CHUNK;
    rc = arw_append_fixed(out, id, buf, k, NULL);
  }
  return rc;
}

/* nrows copies of one string, written straight into the column. */
static int append_str_copies(arw_batch *out, int id, const char *str, size_t len,
                             size_t nrows) {
  if (nrows && len > INT32_MAX / nrows)
    return dd_err_set(DD_EUNSUPPORTED, "scan: over 2 GiB of partition values");
  uint8_t *dst;
  int32_t *ends, base;
  int rc = arw_append_strs_space(out, id, nrows, len * nrows, NULL, &dst, &ends, &base);
  for (size_t i = 0; !rc && i < nrows; i++) {
    if (len) memcpy(dst + i * len, str, len);
    ends[i] = base + (int32_t)((i + 1) * len);
  }
  return rc;
}

int scn__append_partition(arw_batch *out, int id, const dl_type *t, const char *text,
                          size_t nrows) {
  if (!text) return arw_append_nulls(out, id, nrows);
  dl_value v;
  int rc = dl_partition_value_parse(&v, t, text);
  if (rc) return rc;
  if (v.is_null) return arw_append_nulls(out, id, nrows);
  arw_kind k = arw_field_kind(arw_batch_schema(out), id);
  uint8_t one[16] = {0};
  size_t w = arw_kind_width(k);
  switch (k) {
    case ARW_UTF8:
    case ARW_BINARY:
      return append_str_copies(out, id, v.str, v.len, nrows);
    case ARW_BOOL: one[0] = v.b; w = 1; break;
    case ARW_INT8: { int8_t x = (int8_t)v.i64; memcpy(one, &x, 1); break; }
    case ARW_INT16: { int16_t x = (int16_t)v.i64; memcpy(one, &x, 2); break; }
    case ARW_INT32:
    case ARW_DATE32: { int32_t x = (int32_t)v.i64; memcpy(one, &x, 4); break; }
    case ARW_INT64:
    case ARW_TIMESTAMP:
    case ARW_TIMESTAMP_UTC: memcpy(one, &v.i64, 8); break;
    case ARW_FLOAT32: { float x = (float)v.f64; memcpy(one, &x, 4); break; }
    case ARW_FLOAT64: memcpy(one, &v.f64, 8); break;
    case ARW_DECIMAL128: {
      char *txt = strndup(v.str, v.len);
      if (!txt) return dd_err_set(DD_ENOMEM, "scan: out of memory");
      rc = scn__dec_parse(txt, t->scale, one);
      free(txt);
      if (rc) return rc;
      break;
    }
    default:
      return dd_err_set(DD_EUNSUPPORTED, "scan: partition column '%s' of this type",
                        arw_field_name(arw_batch_schema(out), id));
  }
  return append_copies(out, id, one, w, nrows);
}
