/* test_optimize.c: Z-order interleaving (bit layout, several words), the Z-order of a grid
 * of rows (nulls first, ranks not raw values), and Delta's OptimizeMetrics shapes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "store/optimize/opt_int.h"

static void test_interleave(void **state) {
  (void)state;
  uint32_t a[] = {0x80000000u, 0xFFFFFFFFu, 0}, b[] = {0, 0xFFFFFFFFu, 0x80000001u};
  const uint32_t *r[] = {a, b};
  uint64_t k[3];
  opt_zorder_interleave(k, r, 2, 3);
  assert_true(k[0] == 0x8000000000000000ULL); /* a's top bit first */
  assert_true(k[1] == UINT64_MAX);
  assert_true(k[2] == 0x4000000000000001ULL); /* b's top bit second; its low bit last */
  /* three columns need two words: 96 bits, then zeros */
  uint32_t c[] = {1};
  uint32_t one[] = {0}, two[] = {0};
  const uint32_t *r3[] = {one, two, c};
  uint64_t k3[2];
  opt_zorder_interleave(k3, r3, 3, 1);
  assert_true(k3[0] == 0);
  assert_true(k3[1] == (1ULL << 32)); /* bit 95 of 96, counted from the top of word 0 */
}

static void test_zorder_grid(void **state) {
  (void)state;
  arw_schema *s;
  arw_batch *b;
  int x, y;
  assert_int_equal(arw_schema_new(&s), 0);
  arw_schema_add(s, ARW_ROOT, "x", ARW_INT64, true, &x);
  arw_schema_add(s, ARW_ROOT, "y", ARW_UTF8, true, &y);
  assert_int_equal(arw_batch_new(&b, s), 0);
  /* rows: (1000,"b") (-5,"b") (1000,"a") (-5,"a") (null,"a") */
  int64_t xs[] = {1000, -5, 1000, -5, 0};
  const char *ys[] = {"b", "b", "a", "a", "a"};
  for (int i = 0; i < 5; i++) {
    if (i == 4) arw_append_null(b, x);
    else arw_append_i64(b, x, xs[i]);
    arw_append_str(b, y, ys[i], 1);
  }
  const char *cols[] = {"x", "y"};
  size_t *idx = NULL;
  assert_int_equal(opt__zorder_order(&idx, b, cols, 2), 0);
  /* ranks x: null 0, -5 mid, 1000 top; y: a 0, b top. Z: (null,a) (-5,a) (-5,b) (1000,a)
   * (1000,b) */
  size_t want[] = {4, 3, 1, 2, 0};
  for (int i = 0; i < 5; i++) assert_int_equal(idx[i], want[i]);
  free(idx);
  const char *bad[] = {"nope"};
  assert_int_equal(opt__zorder_order(&idx, b, bad, 1), DD_EINVAL);
  arw_batch_free(b);
  arw_schema_free(s);
}

static opt_result sample(void) {
  opt_result r;
  memset(&r, 0, sizeof r);
  r.version = 3;
  r.num_files_added = 1;
  r.num_files_removed = 4;
  r.files_added = (opt_file_stats){100, 100, 1, 100, 100.0};
  r.files_removed = (opt_file_stats){10, 40, 4, 100, 25.0};
  r.partitions_optimized = 1;
  r.num_batches = 1;
  r.total_considered_files = 5;
  r.total_files_skipped = 1;
  return r;
}

static void test_metrics(void **state) {
  (void)state;
  opt_result r = sample();
  char *js = NULL;
  assert_int_equal(opt_result_json(&js, &r), 0);
  json_error_t err;
  json_t *o = json_loads(js, 0, &err);
  assert_non_null(o);
  assert_int_equal(json_integer_value(json_object_get(o, "numFilesRemoved")), 4);
  assert_true(json_is_null(json_object_get(o, "zOrderStats")));
  json_t *fr = json_object_get(o, "filesRemoved");
  assert_int_equal(json_integer_value(json_object_get(fr, "totalSize")), 100);
  assert_true(json_real_value(json_object_get(fr, "avg")) == 25.0);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(o, "deletionVectorStats"),
                                                      "numDeletionVectorsRemoved")), 0);
  assert_true(json_is_false(json_object_get(o, "preserveInsertionOrder")));
  /* Delta's field order */
  assert_memory_equal(js, "{\"numFilesAdded\":1,\"numFilesRemoved\":4,\"filesAdded\":{\"min\":100,", 63);
  json_decref(o);
  free(js);

  r.zorder = true;
  assert_int_equal(opt_result_json(&js, &r), 0);
  o = json_loads(js, 0, &err);
  assert_string_equal(json_string_value(json_object_get(json_object_get(o, "zOrderStats"),
                                                        "strategyName")), "all");
  json_decref(o);
  free(js);

  arw_schema *s;
  arw_batch *b;
  assert_int_equal(opt_result_batch(&s, &b, &r, "/t"), 0);
  assert_int_equal(arw_batch_rows(b), 1);
  assert_int_equal(arw_schema_ncolumns(s), 2);
  int m = arw_schema_column(s, 1);
  assert_int_equal(arw_field_kind(s, m), ARW_STRUCT);
  int fa = arw_schema_find(s, m, "filesAdded");
  arw_view v;
  assert_int_equal(arw_batch_view(b, arw_schema_find(s, fa, "totalSize"), &v), 0);
  int64_t ts;
  memcpy(&ts, v.values, 8);
  assert_int_equal(ts, 100);
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_stream(&out, b), 0); /* a well-formed batch */
  arw_buf_free(&out);
  arw_batch_free(b);
  arw_schema_free(s);

  dop_result *d = NULL;
  assert_int_equal(opt_result_dop(&d, &r, "/t"), 0);
  assert_int_equal(d->ncols, 2);
  assert_string_equal(d->cols[0].name, "path");
  assert_memory_equal(d->cols[1].type,
                      "struct<numFilesAdded:bigint,numFilesRemoved:bigint,filesAdded:struct<"
                      "min:bigint,max:bigint,avg:double,totalFiles:bigint,totalSize:bigint>,", 136);
  assert_string_equal(d->cells[0].str, "/t");
  assert_int_equal(d->cells[1].kind, DOP_JSON);
  dop_result_free(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_interleave),
      cmocka_unit_test(test_zorder_grid),
      cmocka_unit_test(test_metrics),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
