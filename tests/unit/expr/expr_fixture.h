/* expr_fixture.h: a small table for the store/expr unit tests and a helper that parses,
 * binds and evaluates one expression over it, returning the result column as text
 * ("type:v1|v2|NULL|..."), or "ERR <code>: <message>". */
#ifndef DD_TESTS_EXPR_FIXTURE_H
#define DD_TESTS_EXPR_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow.h"
#include "store/expr/ex.h"

/* Rows (4):
 *   i int      1, 2, NULL, -5
 *   l bigint   10, 9223372036854775807, NULL, -1
 *   d double   1.5, NaN, NULL, -0.25
 *   s string   'abc', 'Hello', NULL, 'a_c'
 *   dec decimal(10,2)  1.25, 99999999.99, NULL, -3.10
 *   dt date    2024-02-28, 1970-01-01, NULL, 1999-12-31
 *   ts timestamp 2024-01-01 10:00:00, 1970-01-01 00:00:00.5, NULL, 2000-01-01 00:00:00
 *   b boolean  true, false, NULL, true
 *   st struct<x int, Y string>  {1,'p'}, NULL, {NULL,'r'}, {4,NULL} */
typedef struct fx {
  arw_schema *s;
  arw_batch *b;
} fx;

static inline void fx_open(fx *f) {
  arw_schema_new(&f->s);
  int i, l, d, s, dec, dt, ts, b, st, x, y;
  arw_schema_add(f->s, ARW_ROOT, "i", ARW_INT32, true, &i);
  arw_schema_add(f->s, ARW_ROOT, "l", ARW_INT64, true, &l);
  arw_schema_add(f->s, ARW_ROOT, "d", ARW_FLOAT64, true, &d);
  arw_schema_add(f->s, ARW_ROOT, "s", ARW_UTF8, true, &s);
  arw_schema_add_decimal(f->s, ARW_ROOT, "dec", 10, 2, true, &dec);
  arw_schema_add(f->s, ARW_ROOT, "dt", ARW_DATE32, true, &dt);
  arw_schema_add(f->s, ARW_ROOT, "ts", ARW_TIMESTAMP_UTC, true, &ts);
  arw_schema_add(f->s, ARW_ROOT, "b", ARW_BOOL, true, &b);
  arw_schema_add(f->s, ARW_ROOT, "st", ARW_STRUCT, true, &st);
  arw_schema_add(f->s, st, "x", ARW_INT32, true, &x);
  arw_schema_add(f->s, st, "Y", ARW_UTF8, true, &y);
  arw_batch_new(&f->b, f->s);
  arw_batch *B = f->b;
  int32_t iv[] = {1, 2, 0, -5};
  int64_t lv[] = {10, INT64_MAX, 0, -1};
  double dv[] = {1.5, 0.0 / 0.0, 0, -0.25};
  uint8_t valid[] = {1, 1, 0, 1};
  arw_append_fixed(B, i, iv, 4, valid);
  arw_append_fixed(B, l, lv, 4, valid);
  arw_append_fixed(B, d, dv, 4, valid);
  arw_append_str(B, s, "abc", 3);
  arw_append_str(B, s, "Hello", 5);
  arw_append_null(B, s);
  arw_append_str(B, s, "a_c", 3);
  __extension__ __int128 decv[] = {125, (__int128)9999999999, 0, -310};
  arw_append_fixed(B, dec, decv, 4, valid);
  int32_t dtv[] = {19781, 0, 0, 10956};
  arw_append_fixed(B, dt, dtv, 4, valid);
  int64_t tsv[] = {1704103200000000LL, 500000, 0, 946684800000000LL};
  arw_append_fixed(B, ts, tsv, 4, valid);
  uint8_t bv[] = {1, 0, 0, 1};
  arw_append_fixed(B, b, bv, 4, valid);
  arw_append_i32(B, x, 1), arw_append_str(B, y, "p", 1), arw_append_done(B, st);
  arw_append_null(B, st);
  arw_append_null(B, x), arw_append_str(B, y, "r", 1), arw_append_done(B, st);
  arw_append_i32(B, x, 4), arw_append_null(B, y), arw_append_done(B, st);
}

static inline void fx_close(fx *f) {
  arw_batch_free(f->b);
  arw_schema_free(f->s);
}

static inline void fx_cat(char **buf, size_t *len, const char *s) {
  size_t n = strlen(s);
  *buf = realloc(*buf, *len + n + 1);
  memcpy(*buf + *len, s, n + 1);
  *len += n;
}

/* The text of field id of batch b (non-nested kinds). */
static inline char *fx_column_text(const arw_batch *b, int id, ex_type t) {
  char *out = NULL, tmp[128];
  size_t len = 0;
  ex_type_format(t, tmp, sizeof tmp);
  fx_cat(&out, &len, tmp);
  fx_cat(&out, &len, ":");
  arw_view v;
  arw_batch_view(b, id, &v);
  for (size_t r = 0; r < v.length; r++) {
    if (r) fx_cat(&out, &len, "|");
    if (!arw_view_valid(&v, r)) {
      fx_cat(&out, &len, "NULL");
      continue;
    }
    switch (v.kind) {
      case ARW_BOOL: snprintf(tmp, sizeof tmp, "%s", arw_view_bool(&v, r) ? "true" : "false"); break;
      case ARW_INT8: snprintf(tmp, sizeof tmp, "%d", ((const int8_t *)v.values)[r]); break;
      case ARW_INT16: snprintf(tmp, sizeof tmp, "%d", ((const int16_t *)v.values)[r]); break;
      case ARW_INT32:
      case ARW_DATE32: snprintf(tmp, sizeof tmp, "%d", ((const int32_t *)v.values)[r]); break;
      case ARW_INT64:
      case ARW_TIMESTAMP:
      case ARW_TIMESTAMP_UTC: snprintf(tmp, sizeof tmp, "%lld", (long long)((const int64_t *)v.values)[r]); break;
      case ARW_FLOAT32: snprintf(tmp, sizeof tmp, "%.9g", ((const float *)v.values)[r]); break;
      case ARW_FLOAT64: snprintf(tmp, sizeof tmp, "%.17g", ((const double *)v.values)[r]); break;
      case ARW_DECIMAL128: {
        __extension__ __int128 x;
        memcpy(&x, v.values + 16 * r, 16);
        snprintf(tmp, sizeof tmp, "%lld", (long long)x);
        break;
      }
      case ARW_UTF8:
      case ARW_BINARY:
        snprintf(tmp, sizeof tmp, "%.*s", (int)(v.offsets[r + 1] - v.offsets[r]),
                 (const char *)v.values + v.offsets[r]);
        break;
      default: snprintf(tmp, sizeof tmp, "?"); break;
    }
    fx_cat(&out, &len, tmp);
  }
  return out;
}

/* Parses, binds (opts may be NULL) and evaluates text over the fixture. */
static inline char *fx_eval_opts(fx *f, const char *text, const ex_bind_opts *opts) {
  ex_node *e = NULL, *b = NULL;
  arw_schema *os = NULL;
  arw_batch *ob = NULL;
  char *res = NULL;
  int id, rc;
  if ((rc = ex_parse(&e, text, strlen(text), NULL)) || (rc = ex_bind(&b, e, f->s, opts)) ||
      (rc = arw_schema_new(&os)) || (rc = ex_add_field(os, ARW_ROOT, "r", b, &id)) ||
      (rc = arw_batch_new(&ob, os)) || (rc = ex_eval(b, f->b, ob, id))) {
    char buf[1200];
    snprintf(buf, sizeof buf, "ERR %s: %s", dd_err_name(rc), dd_err_msg());
    res = strdup(buf);
  } else {
    res = fx_column_text(ob, id, ex_result_type(b));
  }
  arw_batch_free(ob);
  arw_schema_free(os);
  ex_free(b);
  ex_free(e);
  return res;
}

static inline char *fx_eval(fx *f, const char *text) { return fx_eval_opts(f, text, NULL); }

#endif
