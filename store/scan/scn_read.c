/* scn_read.c: one row group's Parquet leaf columns (pq_column_read/reread: levels and
 * dense values) into arw columns, without a per-row value tree. A field's slots come from
 * the definition and repetition levels of one leaf under it (all leaves of a subtree agree
 * on its structure): a slot starts at a level entry with rep <= srep and def >= pdef and is
 * valid when def >= the node's max_def; a list's or map's child slots are the entries with
 * rep <= csrep and def >= cpdef (see scn__bind). Leaf values are expanded to one per slot
 * and converted (widening, time units, decimals) on the way. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/scan/scn_int.h"

static int grow(void **p, size_t *cap, size_t n, size_t elem) {
  if (n <= *cap) return 0;
  size_t c = *cap ? *cap : 1024;
  while (c < n) c *= 2;
  void *q = realloc(*p, c * elem);
  if (!q) return dd_err_set(DD_ENOMEM, "scan: out of memory decoding a row group");
  *p = q;
  *cap = c;
  return 0;
}

void scn__rg_free(scn__rg *r) {
  for (size_t i = 0; i < r->ncols; i++) pq_column_free(r->cols[i]);
  free(r->cols);
  free(r->cols_rg);
  free(r->valid);
  free(r->lens);
  free(r->vals);
  memset(r, 0, sizeof *r);
}

/* Leaf `leaf` of the current row group, decoded once per row group. */
static int get_col(scn__rg *r, int leaf, const pq_column **out) {
  if (leaf < 0 || (size_t)leaf >= r->ncols)
    return dd_err_set(DD_EINTERNAL, "scan: leaf %d out of range", leaf);
  int rc = 0;
  if (r->cols_rg[leaf] != r->rg) {
    r->cols_rg[leaf] = SIZE_MAX;
    rc = r->cols[leaf] ? pq_column_reread(r->cols[leaf], r->pf, r->rg, (size_t)leaf)
                       : pq_column_read(&r->cols[leaf], r->pf, r->rg, (size_t)leaf);
    if (rc) return rc;
    r->cols_rg[leaf] = r->rg;
  }
  *out = r->cols[leaf];
  return 0;
}

/* The slots of a node in c's levels: r->valid[k] per slot, and with lens the number of
 * child slots of each. Returns the slot count in *out_n and whether all are valid. */
static int node_slots(scn__rg *r, const pq_column *c, const scn__bind *b, bool lens,
                      size_t *out_n, bool *all_valid) {
  size_t nl = c->num_levels;
  int rc = grow((void **)&r->valid, &r->cap_valid, nl + 1, 1);
  if (!rc && lens) rc = grow((void **)&r->lens, &r->cap_lens, nl + 1, sizeof(int32_t));
  if (rc) return rc;
  const int16_t *def = c->def, *rep = c->rep;
  size_t n = 0, nulls = 0;
  if (!rep && b->srep == 0 && b->pdef == 0 && !lens) { /* flat: one slot per entry */
    if (!def || c->num_values == nl) { /* every entry has its value: all valid */
      memset(r->valid, 1, nl);
    } else {
      for (size_t i = 0; i < nl; i++) {
        uint8_t v = def[i] >= b->vdef;
        r->valid[i] = v;
        nulls += !v;
      }
    }
    *out_n = nl;
    *all_valid = nulls == 0;
    return 0;
  }
  for (size_t i = 0; i < nl; i++) {
    int d = def ? def[i] : 0, p = rep ? rep[i] : 0;
    if (p <= b->srep) {
      if (d < b->pdef) continue;
      uint8_t v = d >= b->vdef;
      r->valid[n] = v;
      nulls += !v;
      if (lens) r->lens[n] = 0;
      n++;
    }
    if (lens && n > 0 && d >= b->cpdef && p <= b->csrep) r->lens[n - 1]++;
  }
  *out_n = n;
  *all_valid = nulls == 0;
  return 0;
}

static void put_dec(uint8_t *out, __int128 v) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(out, &v, 16); /* Arrow's decimal128 is little-endian */
#else
  unsigned __int128 u = (unsigned __int128)v;
  for (int i = 0; i < 16; i++) out[i] = (uint8_t)(u >> (8 * i));
#endif
}

static __int128 pow10_128(int n) {
  __int128 p = 1;
  while (n-- > 0) p *= 10;
  return p;
}

static __int128 be_to_i128(const uint8_t *p, size_t len) {
  unsigned __int128 u = (len && (p[0] & 0x80)) ? ~(unsigned __int128)0 : 0;
  for (size_t i = 0; i < len; i++) u = (u << 8) | p[i];
  return (__int128)u;
}

static int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;
}

#define JULIAN_EPOCH_DAY 2440588
#define MICROS_PER_DAY 86400000000LL

/* Converts dense value j of c into the w bytes at out. */
static int conv_one(const scn__bind *b, const pq_column *c, size_t j, uint8_t *out,
                    __int128 scale) {
  switch (b->conv) {
    case SCN_CV_BOOL: out[0] = c->b[j] != 0; return 0;
    case SCN_CV_I32: memcpy(out, &c->i32[j], 4); return 0;
    case SCN_CV_I32_I8: out[0] = (uint8_t)(int8_t)c->i32[j]; return 0;
    case SCN_CV_I32_I16: { int16_t v = (int16_t)c->i32[j]; memcpy(out, &v, 2); return 0; }
    case SCN_CV_I32_I64: { int64_t v = c->i32[j]; memcpy(out, &v, 8); return 0; }
    case SCN_CV_I64: memcpy(out, &c->i64[j], 8); return 0;
    case SCN_CV_F32: memcpy(out, &c->f[j], 4); return 0;
    case SCN_CV_F32_F64: { double v = c->f[j]; memcpy(out, &v, 8); return 0; }
    case SCN_CV_F64: memcpy(out, &c->d[j], 8); return 0;
    case SCN_CV_I32_F64: { double v = c->i32[j]; memcpy(out, &v, 8); return 0; }
    case SCN_CV_DEC_I32: put_dec(out, (__int128)c->i32[j] * scale); return 0;
    case SCN_CV_DEC_I64: put_dec(out, (__int128)c->i64[j] * scale); return 0;
    case SCN_CV_DEC_BE: {
      const uint8_t *p;
      size_t len;
      if (c->field->type == PQ_T_FIXED_LEN_BYTE_ARRAY) {
        len = (size_t)c->field->type_length;
        p = c->fixed + j * len;
      } else {
        p = c->ba[j].ptr;
        len = c->ba[j].len;
      }
      if (len > 16)
        return dd_err_set(DD_ECORRUPT, "scan: decimal of %zu bytes in '%s'", len, c->field->name);
      put_dec(out, be_to_i128(p, len) * scale);
      return 0;
    }
    case SCN_CV_TS_MILLIS: { int64_t v = c->i64[j] * 1000; memcpy(out, &v, 8); return 0; }
    case SCN_CV_TS_NANOS: { int64_t v = floor_div(c->i64[j], 1000); memcpy(out, &v, 8); return 0; }
    case SCN_CV_DATE_TS: {
      int64_t v = (int64_t)c->i32[j] * MICROS_PER_DAY;
      memcpy(out, &v, 8);
      return 0;
    }
    case SCN_CV_INT96: {
      const uint8_t *p = c->fixed + 12 * j;
      int64_t nanos;
      int32_t day;
      memcpy(&nanos, p, 8);
      memcpy(&day, p + 8, 4);
      int64_t v = ((int64_t)day - JULIAN_EPOCH_DAY) * MICROS_PER_DAY + floor_div(nanos, 1000);
      memcpy(out, &v, 8);
      return 0;
    }
    default: return dd_err_set(DD_EINTERNAL, "scan: conversion %d is not fixed-width", b->conv);
  }
}

/* Appends the n slots (r->valid) of leaf b, reading c's dense values in order. */
static int append_leaf(scn__rg *r, arw_batch *out, const scn__bind *b, const pq_column *c,
                       size_t n, bool all_valid) {
  const uint8_t *valid = all_valid ? NULL : r->valid;
  size_t nvalid = 0;
  if (all_valid) nvalid = n;
  else for (size_t i = 0; i < n; i++) nvalid += r->valid[i];
  if (nvalid != c->num_values)
    return dd_err_set(DD_ECORRUPT, "scan: column '%s' has %zu values for %zu valid slots",
                      c->field->name, c->num_values, nvalid);
  const arw_schema *s = arw_batch_schema(out);
  int id = b->arw_id;
  int rc;
  if (b->conv == SCN_CV_BYTES || b->conv == SCN_CV_FIXED_BYTES) {
    size_t total = 0;
    size_t w = (size_t)c->field->type_length;
    for (size_t j = 0; j < nvalid; j++) total += b->conv == SCN_CV_BYTES ? c->ba[j].len : w;
    if (total > INT32_MAX) return dd_err_set(DD_EUNSUPPORTED, "scan: over 2 GiB of strings");
    uint8_t *dst;
    int32_t *ends, base;
    if ((rc = arw_append_strs_space(out, id, n, total, valid, &dst, &ends, &base))) return rc;
    size_t at = 0, j = 0;
    if (b->conv == SCN_CV_BYTES && !valid) { /* the common case: no nulls */
      for (size_t i = 0; i < n; i++) {
        size_t len = c->ba[i].len;
        if (len) memcpy(dst + at, c->ba[i].ptr, len);
        at += len;
        ends[i] = base + (int32_t)at;
      }
      return 0;
    }
    for (size_t i = 0; i < n; i++) {
      if (!valid || valid[i]) {
        const uint8_t *p = b->conv == SCN_CV_BYTES ? c->ba[j].ptr : c->fixed + j * w;
        size_t len = b->conv == SCN_CV_BYTES ? c->ba[j].len : w;
        if (len) memcpy(dst + at, p, len);
        at += len;
        j++;
      }
      ends[i] = base + (int32_t)at;
    }
    return 0;
  }
  arw_kind k = arw_field_kind(s, id);
  size_t w = k == ARW_BOOL ? 1 : arw_kind_width(k);
  if (w == 0) return dd_err_set(DD_EINTERNAL, "scan: leaf '%s' has no width", c->field->name);
  /* the common case: no nulls and the file's own representation: the decoded values
   * become the Arrow column's (no copy), the column's old memory the leaf's next buffer */
  bool same = b->conv == SCN_CV_I32 || b->conv == SCN_CV_I64 || b->conv == SCN_CV_F64 ||
              b->conv == SCN_CV_F32;
  if (all_valid && same && b->rep_leaf >= 0 && r->cols[b->rep_leaf] == c) {
    void *buf = NULL;
    size_t cap = 0;
    pq_column_swap_values(r->cols[b->rep_leaf], &buf, &cap);
    rc = arw_append_fixed_swap(out, id, &buf, &cap, n);
    pq_column_swap_values(r->cols[b->rep_leaf], &buf, &cap); /* buf: NULL again */
    r->cols_rg[b->rep_leaf] = SIZE_MAX; /* its values left: decode again if read again */
    return rc;
  }
  if (all_valid && b->conv == SCN_CV_I32) return arw_append_fixed(out, id, c->i32, n, NULL);
  if (all_valid && b->conv == SCN_CV_I64) return arw_append_fixed(out, id, c->i64, n, NULL);
  if (all_valid && b->conv == SCN_CV_F64) return arw_append_fixed(out, id, c->d, n, NULL);
  if (all_valid && b->conv == SCN_CV_F32) return arw_append_fixed(out, id, c->f, n, NULL);
  if (all_valid && b->conv == SCN_CV_BOOL) return arw_append_fixed(out, id, c->b, n, NULL);
  if ((rc = grow((void **)&r->vals, &r->cap_vals, n * w + 1, 1))) return rc;
  __int128 scale = pow10_128(b->dec_shift);
  if (all_valid && (b->conv == SCN_CV_DEC_I32 || b->conv == SCN_CV_DEC_I64)) {
    /* decimals without nulls: one typed loop, every slot written */
    if (b->conv == SCN_CV_DEC_I64)
      for (size_t i = 0; i < n; i++) put_dec(r->vals + i * 16, (__int128)c->i64[i] * scale);
    else
      for (size_t i = 0; i < n; i++) put_dec(r->vals + i * 16, (__int128)c->i32[i] * scale);
    return arw_append_fixed(out, id, r->vals, n, NULL);
  }
  if (!all_valid) memset(r->vals, 0, n * w); /* null slots stay zero */
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    if (valid && !valid[i]) continue;
    if ((rc = conv_one(b, c, j++, r->vals + i * w, scale))) return rc;
  }
  return arw_append_fixed(out, id, r->vals, n, valid);
}

static int read_node(scn__rg *r, arw_batch *out, const scn__bind *b, size_t nrows) {
  const pq_column *c = NULL;
  size_t n;
  bool all_valid;
  int rc;
  if (!b->node) { /* not in the file: as many nulls as the parent has slots */
    if (b->rep_leaf < 0) return arw_append_nulls(out, b->arw_id, nrows);
    if ((rc = get_col(r, b->rep_leaf, &c))) return rc;
    scn__bind as_parent = *b;
    as_parent.vdef = 0;
    if ((rc = node_slots(r, c, &as_parent, false, &n, &all_valid))) return rc;
    return arw_append_nulls(out, b->arw_id, n);
  }
  if ((rc = get_col(r, b->rep_leaf, &c))) return rc;
  arw_kind k = arw_field_kind(arw_batch_schema(out), b->arw_id);
  bool nested = k == ARW_STRUCT || k == ARW_LIST || k == ARW_MAP;
  bool lens = k == ARW_LIST || k == ARW_MAP;
  if ((rc = node_slots(r, c, b, lens, &n, &all_valid))) return rc;
  if (!nested) return append_leaf(r, out, b, c, n, all_valid);
  if ((rc = arw_append_nested(out, b->arw_id, n, all_valid ? NULL : r->valid,
                              lens ? r->lens : NULL)))
    return rc;
  for (size_t i = 0; i < b->nkids && !rc; i++) rc = read_node(r, out, &b->kids[i], n);
  return rc;
}

int scn__read_field(scn__rg *r, arw_batch *out, const scn__bind *b, size_t nrows) {
  arw_view before, after;
  int rc = arw_batch_view(out, b->arw_id, &before);
  if (!rc) rc = read_node(r, out, b, nrows);
  if (!rc) rc = arw_batch_view(out, b->arw_id, &after);
  if (!rc && after.length - before.length != nrows)
    rc = dd_err_set(DD_ECORRUPT, "scan: column '%s' has %zu rows in a row group of %zu",
                    arw_field_name(arw_batch_schema(out), b->arw_id),
                    after.length - before.length, nrows);
  return rc;
}

int scn__read_rowtrack(scn__rg *r, arw_batch *out, int id, const pq_field *x, size_t nrows,
                       int64_t first, int64_t step) {
  const pq_column *c = NULL;
  int rc = x ? get_col(r, x->column, &c) : 0;
  if (rc) return rc;
  if (c && c->num_levels != nrows)
    return dd_err_set(DD_ECORRUPT, "scan: column '%s' has %zu values for %zu rows", x->name,
                      c->num_levels, nrows);
  int64_t *v = malloc((nrows ? nrows : 1) * sizeof *v);
  uint8_t *ok = malloc(nrows ? nrows : 1);
  if (!v || !ok) rc = dd_err_set(DD_ENOMEM, "scan: out of memory");
  size_t vi = 0;
  for (size_t i = 0; !rc && i < nrows; i++) {
    if (c && (!c->def || c->def[i] >= x->max_def)) {
      if (vi >= c->num_values) {
        rc = dd_err_set(DD_ECORRUPT, "scan: column '%s' has too few values", x->name);
        break;
      }
      v[i] = c->i64[vi++];
      ok[i] = 1;
    } else {
      v[i] = first >= 0 ? first + (int64_t)i * step : 0;
      ok[i] = first >= 0;
    }
  }
  if (!rc) rc = arw_append_fixed(out, id, v, nrows, ok);
  free(v);
  free(ok);
  return rc;
}
