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

#include "store/dwrite/dw.h"
#include "store/optimize/opt_int.h"

#include <dirent.h>
#include <stdio.h>

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

/* ---- conflicts with concurrent commits ------------------------------------------------ */

static const char *SCHEMA = "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\","
                            "\"nullable\":true,\"metadata\":{}}]}";

static int64_t commit_files(dl_table *t, dl_snapshot *s, int64_t first, int n, const dl_file *rm) {
  arw_schema *as;
  arw_batch *b;
  int id;
  assert_int_equal(arw_schema_new(&as), 0);
  arw_schema_add(as, ARW_ROOT, "id", ARW_INT64, true, &id);
  assert_int_equal(arw_batch_new(&b, as), 0);
  dl_txn *x;
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  dw_writer *ws[16];
  for (int f = 0; f < n; f++) {
    arw_batch_clear(b);
    for (int64_t r = 0; r < 10; r++) arw_append_i64(b, id, first + f * 10 + r);
    assert_int_equal(dw_open(&ws[f], t, s, as, NULL), 0);
    assert_int_equal(dw_write(ws[f], b), 0);
    assert_int_equal(dw_finish(ws[f]), 0);
    assert_int_equal(dl_txn_add_file(x, dw_file(ws[f], 0)), 0);
  }
  if (rm) assert_int_equal(dl_txn_remove_file(x, rm), 0);
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.operation = rm ? "DELETE" : "WRITE";
  int64_t v = -1;
  assert_int_equal(dl_txn_commit(x, &co, &v), 0);
  dl_txn_free(x);
  for (int f = 0; f < n; f++) dw_free(ws[f]);
  arw_batch_free(b);
  arw_schema_free(as);
  return v;
}

static int count_parquet(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  for (struct dirent *e; d && (e = readdir(d));)
    n += strstr(e->d_name, ".parquet") != NULL;
  if (d) closedir(d);
  return n;
}

static int first_file(void *ctx, const dl_file *f) {
  char **out = ctx;
  if (!*out) *out = strdup(f->path);
  return 0;
}

static void test_conflicts(void **state) {
  (void)state;
  char tmpl[] = "/tmp/opt_test_XXXXXX";
  char *dir = mkdtemp(tmpl);
  dl_table *t;
  assert_int_equal(dl_table_open(&t, dir), 0);
  dl_txn *x;
  assert_int_equal(dl_txn_begin(&x, t, NULL), 0);
  dl_protocol p = {1, 2, 0, 0, NULL, NULL};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  dl_metadata_spec md = {NULL, NULL, NULL, SCHEMA, 0, NULL, NULL, -1};
  assert_int_equal(dl_txn_set_metadata(x, &md), 0);
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  int64_t v;
  assert_int_equal(dl_txn_commit(x, &co, &v), 0);
  dl_txn_free(x);
  dl_snapshot *s0;
  assert_int_equal(dl_snapshot_open(&s0, t, NULL), 0);
  commit_files(t, s0, 0, 4, NULL); /* version 1: four small files */
  dl_snapshot *s1;
  assert_int_equal(dl_snapshot_open(&s1, t, NULL), 0);
  assert_int_equal(dl_snapshot_num_files(s1), 4);
  assert_int_equal(count_parquet(dir), 4);

  /* a concurrent commit removes one of the files OPTIMIZE compacts: it aborts, and the file
   * it wrote is gone */
  char *victim = NULL;
  dl_snapshot_files(s1, first_file, &victim);
  dl_file rm = {.path = victim, .size = -1, .deletion_timestamp = -1, .data_change = true,
                .partition_values = "", .base_row_id = -1, .default_row_commit_version = -1};
  commit_files(t, s1, 100, 0, &rm); /* version 2 */
  opt_result r;
  assert_int_equal(opt_run(&r, t, s1, NULL), DD_ECONFLICT);
  assert_non_null(strstr(dd_err_msg(), victim));
  assert_int_equal(count_parquet(dir), 4); /* 4 written, none added by the failed OPTIMIZE */
  dl_snapshot *latest;
  assert_int_equal(dl_snapshot_open(&latest, t, NULL), 0);
  assert_int_equal(dl_snapshot_version(latest), 2);
  dl_snapshot_free(latest);

  /* a concurrent append does not conflict */
  dl_snapshot *s2;
  assert_int_equal(dl_snapshot_open(&s2, t, NULL), 0);
  commit_files(t, s2, 200, 1, NULL); /* version 3 */
  assert_int_equal(opt_run(&r, t, s2, NULL), 0);
  assert_int_equal(r.version, 4);
  assert_int_equal(r.num_files_removed, 3);
  assert_int_equal(r.num_files_added, 1);
  assert_int_equal(r.rows_written, 30);
  assert_int_equal(dl_snapshot_open(&latest, t, NULL), 0);
  assert_int_equal(dl_snapshot_num_files(latest), 2); /* the compacted file + the append */
  dl_snapshot_free(latest);

  free(victim);
  dl_snapshot_free(s0);
  dl_snapshot_free(s1);
  dl_snapshot_free(s2);
  dl_table_free(t);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_interleave),
      cmocka_unit_test(test_zorder_grid),
      cmocka_unit_test(test_metrics),
      cmocka_unit_test(test_conflicts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
