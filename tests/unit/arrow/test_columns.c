/* test_columns.c: the column API of dd_arrow: schema introspection and field copies, the
 * read view, bulk appends (fixed-width, strings, nulls), take/slice/append_rows over every
 * kind including nested ones, and the errors for misuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow.h"

static void test_introspection(void **state) {
  (void)state;
  arw_schema *s, *t;
  int a, l, m, st, d, el, k, v;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "a", ARW_INT8, false, &a), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "l", ARW_LIST, true, &l), 0);
  assert_int_equal(arw_schema_add(s, l, "element", ARW_INT16, true, &el), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "m", ARW_MAP, true, &m), 0);
  assert_int_equal(arw_schema_add(s, m, "key", ARW_UTF8, false, &k), 0);
  assert_int_equal(arw_schema_add(s, m, "value", ARW_FLOAT32, true, &v), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "st", ARW_STRUCT, true, &st), 0);
  assert_int_equal(arw_schema_add_decimal(s, st, "d", 38, 10, true, &d), 0);
  assert_int_equal(arw_schema_add(s, st, "n", ARW_NULL, true, NULL), 0);
  /* refusals */
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "x", ARW_DECIMAL128, true, NULL), DD_EINVAL);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "x", ARW_NULL, false, NULL), DD_EINVAL);
  assert_int_equal(arw_schema_add_decimal(s, ARW_ROOT, "x", 39, 0, true, NULL), DD_EINVAL);
  assert_int_equal(arw_schema_add_decimal(s, ARW_ROOT, "x", 5, 6, true, NULL), DD_EINVAL);

  assert_int_equal(arw_schema_ncolumns(s), 4);
  assert_int_equal(arw_schema_column(s, 0), a);
  assert_int_equal(arw_schema_column(s, 3), st);
  assert_int_equal(arw_schema_column(s, 4), -1);
  assert_int_equal(arw_schema_find(s, ARW_ROOT, "m"), m);
  assert_int_equal(arw_schema_find(s, m, "value"), v);
  assert_int_equal(arw_schema_find(s, ARW_ROOT, "nope"), -1);
  assert_string_equal(arw_field_name(s, d), "d");
  assert_int_equal(arw_field_kind(s, d), ARW_DECIMAL128);
  assert_int_equal(arw_field_precision(s, d), 38);
  assert_int_equal(arw_field_scale(s, d), 10);
  assert_false(arw_field_nullable(s, a));
  assert_int_equal(arw_field_parent(s, k), m); /* the entries struct is hidden */
  assert_int_equal(arw_field_parent(s, a), ARW_ROOT);
  assert_int_equal(arw_field_nchildren(s, m), 2);
  assert_int_equal(arw_field_child(s, m, 0), k);
  assert_int_equal(arw_field_child(s, m, 1), v);
  assert_int_equal(arw_field_child(s, m, 2), -1);
  assert_int_equal(arw_field_nchildren(s, st), 2);
  assert_null(arw_field_name(s, m + 1)); /* the entries struct's id is not visible */
  assert_null(arw_field_name(s, 999));

  /* copy the struct and the map into another schema */
  int st2, m2;
  assert_int_equal(arw_schema_new(&t), 0);
  assert_int_equal(arw_schema_copy_field(t, ARW_ROOT, s, st, "renamed", &st2), 0);
  assert_int_equal(arw_schema_copy_field(t, ARW_ROOT, s, m, NULL, &m2), 0);
  assert_string_equal(arw_field_name(t, st2), "renamed");
  int d2 = arw_field_child(t, st2, 0);
  assert_int_equal(arw_field_kind(t, d2), ARW_DECIMAL128);
  assert_int_equal(arw_field_scale(t, d2), 10);
  assert_int_equal(arw_field_kind(t, arw_field_child(t, st2, 1)), ARW_NULL);
  assert_string_equal(arw_field_name(t, m2), "m");
  assert_int_equal(arw_field_kind(t, arw_field_child(t, m2, 1)), ARW_FLOAT32);
  arw_schema_free(t);
  arw_schema_free(s);
}

static void test_bulk_and_view(void **state) {
  (void)state;
  arw_schema *s;
  int i8, i64, ok, str, dec, nul, st, sx;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "i8", ARW_INT8, true, &i8), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "i64", ARW_INT64, false, &i64), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "ok", ARW_BOOL, true, &ok), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "s", ARW_UTF8, true, &str), 0);
  assert_int_equal(arw_schema_add_decimal(s, ARW_ROOT, "dec", 20, 2, true, &dec), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "nul", ARW_NULL, true, &nul), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "st", ARW_STRUCT, true, &st), 0);
  assert_int_equal(arw_schema_add(s, st, "x", ARW_INT32, false, &sx), 0);
  arw_batch *b;
  assert_int_equal(arw_batch_new(&b, s), 0);
  int8_t v8[10] = {1, -2, 3, 0, 5, 6, 7, 8, -128, 127};
  uint8_t valid[10] = {1, 1, 0, 1, 1, 1, 1, 1, 1, 1};
  assert_int_equal(arw_append_fixed(b, i8, v8, 10, valid), 0);
  int64_t v64[10];
  for (int i = 0; i < 10; i++) v64[i] = (int64_t)i * -3;
  assert_int_equal(arw_append_fixed(b, i64, v64, 10, valid), DD_EINVAL); /* not nullable */
  assert_int_equal(arw_append_fixed(b, i64, v64, 10, NULL), 0);
  uint8_t bools[10] = {1, 0, 1, 1, 0, 0, 0, 0, 1, 2};
  assert_int_equal(arw_append_fixed(b, ok, bools, 10, NULL), 0);
  const char *data = "abcdefghij";
  int32_t offs[11] = {2, 3, 3, 5, 5, 5, 6, 7, 8, 9, 10}; /* starts at 2 on purpose */
  assert_int_equal(arw_append_strs(b, str, (const uint8_t *)data, offs, 10, valid), 0);
  uint8_t d16[16] = {0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
                     0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}; /* -1 */
  assert_int_equal(arw_append_dec128(b, dec, d16), 0);
  assert_int_equal(arw_append_nulls(b, dec, 9), 0);
  assert_int_equal(arw_append_nulls(b, nul, 10), 0);
  assert_int_equal(arw_append_nulls(b, st, 4), 0); /* children get placeholders */
  for (int i = 0; i < 6; i++) {
    assert_int_equal(arw_append_i32(b, sx, i), 0);
    assert_int_equal(arw_append_done(b, st), 0);
  }
  assert_int_equal(arw_batch_rows(b), 10);
  assert_ptr_equal(arw_batch_schema(b), s);

  arw_view v;
  assert_int_equal(arw_batch_view(b, i8, &v), 0);
  assert_int_equal(v.kind, ARW_INT8);
  assert_int_equal(v.length, 10);
  assert_int_equal(v.null_count, 1);
  assert_non_null(v.validity);
  assert_false(arw_view_valid(&v, 2));
  assert_true(arw_view_valid(&v, 9));
  assert_int_equal((int8_t)v.values[8], -128);
  assert_int_equal(arw_batch_view(b, i64, &v), 0);
  assert_null(v.validity);
  assert_int_equal(((const int64_t *)(const void *)v.values)[9], -27);
  assert_int_equal(arw_batch_view(b, ok, &v), 0);
  assert_true(arw_view_bool(&v, 0));
  assert_false(arw_view_bool(&v, 1));
  assert_true(arw_view_bool(&v, 9));
  assert_int_equal(arw_batch_view(b, str, &v), 0);
  assert_int_equal(v.offsets[0], 0);
  assert_int_equal(v.offsets[1], 1);
  assert_int_equal(v.offsets[10], 8);
  assert_memory_equal(v.values + v.offsets[2], "de", 2);
  assert_int_equal(arw_batch_view(b, dec, &v), 0);
  assert_int_equal(v.null_count, 9);
  assert_memory_equal(v.values, d16, 16);
  assert_int_equal(arw_batch_view(b, nul, &v), 0);
  assert_int_equal(v.null_count, 10);
  assert_false(arw_view_valid(&v, 0));
  assert_null(v.values);
  assert_int_equal(arw_batch_view(b, sx, &v), 0);
  assert_int_equal(v.length, 10);
  assert_int_equal(((const int32_t *)(const void *)v.values)[9], 5);
  assert_int_equal(arw_batch_view(b, 999, &v), DD_EINVAL);

  /* misuse */
  assert_int_equal(arw_append_fixed(b, str, v8, 1, NULL), DD_EINVAL);
  assert_int_equal(arw_append_nulls(b, i64, 1), DD_EINVAL);
  assert_int_equal(arw_append_i32(b, i8, 128), DD_EINVAL);
  int32_t back[3] = {0, 2, 1};
  assert_int_equal(arw_append_strs(b, str, (const uint8_t *)data, back, 2, NULL), DD_EINVAL);
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_stream(&out, b), 0);
  arw_buf_free(&out);
  arw_batch_free(b);
  arw_schema_free(s);
}

static void test_take_nested(void **state) {
  (void)state;
  arw_schema *s;
  int id, l, el, m, k, v, st, sn, f32;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "id", ARW_INT16, false, &id), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "l", ARW_LIST, true, &l), 0);
  assert_int_equal(arw_schema_add(s, l, "element", ARW_UTF8, true, &el), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "m", ARW_MAP, true, &m), 0);
  assert_int_equal(arw_schema_add(s, m, "key", ARW_INT32, false, &k), 0);
  assert_int_equal(arw_schema_add(s, m, "value", ARW_BOOL, true, &v), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "st", ARW_STRUCT, true, &st), 0);
  assert_int_equal(arw_schema_add(s, st, "n", ARW_UTF8, true, &sn), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "f", ARW_FLOAT32, true, &f32), 0);
  arw_batch *b;
  assert_int_equal(arw_batch_new(&b, s), 0);
  char txt[16];
  for (int i = 0; i < 12; i++) {
    assert_int_equal(arw_append_i32(b, id, i), 0);
    for (int j = 0; j < i % 3; j++) {
      snprintf(txt, sizeof txt, "%d.%d", i, j);
      assert_int_equal(arw_append_str(b, el, txt, strlen(txt)), 0);
    }
    assert_int_equal(i == 5 ? arw_append_null(b, l) : arw_append_done(b, l), 0);
    for (int j = 0; j < i % 2; j++) {
      assert_int_equal(arw_append_i32(b, k, i * 10 + j), 0);
      assert_int_equal(arw_append_bool(b, v, i % 4 == 1), 0);
    }
    assert_int_equal(i == 7 ? arw_append_null(b, m) : arw_append_done(b, m), 0);
    if (i % 4 == 2) {
      assert_int_equal(arw_append_null(b, st), 0);
    } else {
      snprintf(txt, sizeof txt, "s%d", i);
      assert_int_equal(arw_append_str(b, sn, txt, strlen(txt)), 0);
      assert_int_equal(arw_append_done(b, st), 0);
    }
    assert_int_equal(i == 3 ? arw_append_null(b, f32) : arw_append_f32(b, f32, i * 0.5f), 0);
  }
  size_t idx[] = {11, 5, 2, 2, 7, 0};
  arw_batch *t;
  assert_int_equal(arw_batch_take(&t, b, idx, 6), 0);
  assert_int_equal(arw_batch_rows(t), 6);
  arw_view vv, ve;
  assert_int_equal(arw_batch_view(t, id, &vv), 0);
  const int16_t *ids = (const int16_t *)(const void *)vv.values;
  assert_int_equal(ids[0], 11);
  assert_int_equal(ids[4], 7);
  /* l: row 11 has 2 elements "11.0","11.1"; row 5 null; row 2 has 2; row 0 empty */
  assert_int_equal(arw_batch_view(t, l, &vv), 0);
  assert_false(arw_view_valid(&vv, 1));
  assert_int_equal(vv.offsets[1] - vv.offsets[0], 2);
  assert_int_equal(vv.offsets[6] - vv.offsets[5], 0);
  assert_int_equal(arw_batch_view(t, el, &ve), 0);
  int32_t e0 = vv.offsets[2]; /* first element of row 2 (third taken row) */
  assert_memory_equal(ve.values + ve.offsets[e0], "2.0", 3);
  assert_memory_equal(ve.values + ve.offsets[vv.offsets[0] + 1], "11.1", 4);
  /* m: row 11 has one entry {110: false}; row 7 null */
  assert_int_equal(arw_batch_view(t, m, &vv), 0);
  assert_false(arw_view_valid(&vv, 4));
  assert_int_equal(vv.offsets[1] - vv.offsets[0], 1);
  assert_int_equal(arw_batch_view(t, k, &ve), 0);
  assert_int_equal(((const int32_t *)(const void *)ve.values)[vv.offsets[0]], 110);
  /* st: row 2 null */
  assert_int_equal(arw_batch_view(t, st, &vv), 0);
  assert_false(arw_view_valid(&vv, 2));
  assert_true(arw_view_valid(&vv, 0));
  assert_int_equal(arw_batch_view(t, sn, &ve), 0);
  assert_memory_equal(ve.values + ve.offsets[0], "s11", 3);
  assert_int_equal(arw_batch_view(t, f32, &vv), 0);
  float f;
  memcpy(&f, vv.values + 4 * 0, 4);
  assert_true(f == 5.5f);
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_stream(&out, t), 0); /* the writer's invariants hold */
  arw_buf_free(&out);

  /* slice and append_rows (concatenation) */
  arw_batch *sl;
  assert_int_equal(arw_batch_slice(&sl, b, 3, 8), 0);
  assert_int_equal(arw_batch_rows(sl), 5);
  assert_int_equal(arw_batch_view(sl, id, &vv), 0);
  assert_int_equal(((const int16_t *)(const void *)vv.values)[0], 3);
  assert_int_equal(arw_batch_view(sl, f32, &vv), 0);
  assert_false(arw_view_valid(&vv, 0));
  size_t all[5] = {0, 1, 2, 3, 4};
  assert_int_equal(arw_batch_append_rows(sl, t, all, 5), 0);
  assert_int_equal(arw_batch_rows(sl), 10);
  assert_int_equal(arw_write_stream(&out, sl), 0);
  arw_buf_free(&out);
  assert_int_equal(arw_batch_slice(&t, b, 5, 13), DD_EINVAL);
  size_t bad = 12;
  assert_int_equal(arw_batch_append_rows(sl, b, &bad, 1), DD_EINVAL);
  arw_batch_free(sl);
  arw_batch_free(t);

  arw_schema *other;
  arw_batch *ob;
  assert_int_equal(arw_schema_new(&other), 0);
  assert_int_equal(arw_schema_add(other, ARW_ROOT, "id", ARW_INT32, false, NULL), 0);
  assert_int_equal(arw_batch_new(&ob, other), 0);
  assert_int_equal(arw_batch_append_rows(ob, b, idx, 1), DD_EINVAL);
  arw_batch_free(ob);
  arw_schema_free(other);
  arw_batch_free(b);
  arw_schema_free(s);
}

/* Nested slots appended in bulk, children filled separately (the scan's way). */
static void test_append_nested(void **state) {
  (void)state;
  arw_schema *s;
  int l, el, m, k, v, st, sx;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "l", ARW_LIST, true, &l), 0);
  assert_int_equal(arw_schema_add(s, l, "element", ARW_INT32, true, &el), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "m", ARW_MAP, true, &m), 0);
  assert_int_equal(arw_schema_add(s, m, "key", ARW_INT32, false, &k), 0);
  assert_int_equal(arw_schema_add(s, m, "value", ARW_INT32, true, &v), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "st", ARW_STRUCT, true, &st), 0);
  assert_int_equal(arw_schema_add(s, st, "x", ARW_INT32, true, &sx), 0);
  arw_batch *b;
  assert_int_equal(arw_batch_new(&b, s), 0);
  uint8_t valid[3] = {1, 0, 1};
  int32_t lens[3] = {2, 0, 1};
  int32_t vals[3] = {7, 8, 9};
  assert_int_equal(arw_append_nested(b, l, 3, valid, lens), 0);
  assert_int_equal(arw_append_fixed(b, el, vals, 3, NULL), 0);
  assert_int_equal(arw_append_nested(b, m, 3, NULL, lens), 0);
  assert_int_equal(arw_append_fixed(b, k, vals, 3, NULL), 0);
  assert_int_equal(arw_append_fixed(b, v, vals, 3, valid), 0);
  assert_int_equal(arw_append_nested(b, st, 3, valid, NULL), 0);
  assert_int_equal(arw_append_fixed(b, sx, vals, 3, valid), 0);
  assert_int_equal(arw_append_nested(b, el, 1, NULL, NULL), DD_EINVAL); /* not nested */
  int32_t neg = -1;
  assert_int_equal(arw_append_nested(b, l, 1, NULL, &neg), DD_EINVAL);
  arw_view vv;
  assert_int_equal(arw_batch_view(b, l, &vv), 0);
  assert_int_equal(vv.length, 3);
  assert_int_equal(vv.null_count, 1);
  assert_int_equal(vv.offsets[3], 3);
  assert_int_equal(vv.offsets[1], 2);
  assert_int_equal(arw_batch_view(b, m, &vv), 0);
  assert_int_equal(vv.offsets[3], 3);
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_stream(&out, b), 0); /* entries and offsets consistent */
  arw_buf_free(&out);
  arw_batch *t;
  size_t idx[2] = {2, 0};
  assert_int_equal(arw_batch_take(&t, b, idx, 2), 0);
  assert_int_equal(arw_batch_view(t, k, &vv), 0);
  assert_int_equal(vv.length, 3);
  assert_int_equal(((const int32_t *)(const void *)vv.values)[0], 9);
  arw_batch_free(t);
  arw_batch_free(b);
  arw_schema_free(s);
}

/* arw_append_fixed_swap: an empty column takes the caller's buffer and gives back its own
 * (none the first time, the old one after a clear); a column with rows or a BOOL copies
 * and leaves the caller's buffer alone. */
static void test_append_fixed_swap(void **state) {
  (void)state;
  arw_schema *s;
  int x, ok;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "x", ARW_INT64, true, &x), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "ok", ARW_BOOL, true, &ok), 0);
  arw_batch *b;
  assert_int_equal(arw_batch_new(&b, s), 0);
  int64_t *mine = malloc(100 * sizeof *mine);
  assert_non_null(mine);
  for (int i = 0; i < 100; i++) mine[i] = i * 7;
  void *buf = mine;
  size_t cap = 100 * sizeof *mine;
  assert_int_equal(arw_append_fixed_swap(b, x, &buf, &cap, 60), 0);
  assert_null(buf); /* the column had no memory yet */
  assert_int_equal(cap, 0);
  arw_view v;
  assert_int_equal(arw_batch_view(b, x, &v), 0);
  assert_int_equal(v.length, 60);
  assert_int_equal(v.null_count, 0);
  assert_ptr_equal(v.values, (const uint8_t *)mine); /* taken, not copied */
  /* not empty now: a copy, the caller keeps its buffer */
  int64_t more[3] = {-1, -2, -3};
  buf = more;
  cap = sizeof more;
  assert_int_equal(arw_append_fixed_swap(b, x, &buf, &cap, 3), 0);
  assert_ptr_equal(buf, more);
  assert_int_equal(arw_batch_view(b, x, &v), 0);
  assert_int_equal(v.length, 63);
  int64_t got;
  memcpy(&got, v.values + 59 * 8, 8);
  assert_int_equal(got, 59 * 7);
  memcpy(&got, v.values + 62 * 8, 8);
  assert_int_equal(got, -3);
  /* a BOOL copies too */
  uint8_t bools[2] = {1, 0};
  buf = bools;
  cap = sizeof bools;
  assert_int_equal(arw_append_fixed_swap(b, ok, &buf, &cap, 2), 0);
  assert_ptr_equal(buf, bools);
  /* after a clear the column is empty again: it takes a new buffer, returns the old one */
  arw_batch_clear(b);
  int64_t *next = malloc(8 * sizeof *next);
  assert_non_null(next);
  for (int i = 0; i < 8; i++) next[i] = 100 + i;
  buf = next;
  cap = 8 * sizeof *next;
  assert_int_equal(arw_append_fixed_swap(b, x, &buf, &cap, 8), 0);
  assert_ptr_equal(buf, (void *)mine); /* 63 values fit: never reallocated */
  assert_true(cap >= 100 * sizeof *mine);
  assert_int_equal(arw_batch_view(b, x, &v), 0);
  assert_int_equal(v.length, 8);
  memcpy(&got, v.values + 7 * 8, 8);
  assert_int_equal(got, 107);
  free(buf);
  arw_batch_free(b);
  arw_schema_free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_introspection),
      cmocka_unit_test(test_bulk_and_view),
      cmocka_unit_test(test_take_nested),
      cmocka_unit_test(test_append_nested),
      cmocka_unit_test(test_append_fixed_swap),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
