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
  assert_int_equal(opt__zorder_order(&idx, b, cols, 2, false), 0);
  /* ranks x: null 0, -5 mid, 1000 top; y: a 0, b top. Z: (null,a) (-5,a) (-5,b) (1000,a)
   * (1000,b) */
  size_t want[] = {4, 3, 1, 2, 0};
  for (int i = 0; i < 5; i++) assert_int_equal(idx[i], want[i]);
  free(idx);
  const char *bad[] = {"nope"};
  assert_int_equal(opt__zorder_order(&idx, b, bad, 1, false), DD_EINVAL);
  arw_batch_free(b);
  arw_schema_free(s);
}

/* The Hilbert curve visits a 16x16 (and an 8x8x8) grid one neighbouring cell at a time: the
 * cells sorted by their keys differ by one step in one coordinate. Z-order jumps. */
typedef struct key_ctx { const uint64_t *keys; size_t words; } key_ctx;

static int cmp_cell(const void *x, const void *y, void *ctx) {
  const key_ctx *c = ctx;
  const uint64_t *a = &c->keys[*(const size_t *)x * c->words], *b = &c->keys[*(const size_t *)y * c->words];
  for (size_t w = 0; w < c->words; w++)
    if (a[w] != b[w]) return a[w] < b[w] ? -1 : 1;
  return 0;
}

static size_t curve_jumps(size_t k, unsigned side_bits, bool hilbert) {
  size_t side = (size_t)1 << side_bits, n = 1;
  for (size_t c = 0; c < k; c++) n *= side;
  uint32_t *r[3];
  for (size_t c = 0; c < k; c++) r[c] = malloc(n * sizeof *r[c]);
  for (size_t i = 0; i < n; i++)
    for (size_t c = 0, v = i; c < k; c++, v /= side) r[c][i] = (uint32_t)(v % side) << (32 - side_bits);
  size_t words = (32 * k + 63) / 64;
  uint64_t *keys = malloc(n * words * sizeof *keys);
  opt__curve_keys(keys, r, k, n, hilbert);
  size_t *order = malloc(n * sizeof *order);
  for (size_t i = 0; i < n; i++) order[i] = i;
  key_ctx kc = {keys, words};
  qsort_r(order, n, sizeof *order, cmp_cell, &kc);
  size_t jumps = 0;
  for (size_t i = 1; i < n; i++) {
    size_t a = order[i - 1], b = order[i], dist = 0;
    for (size_t c = 0; c < k; c++, a /= side, b /= side) {
      size_t x = a % side, y = b % side;
      dist += x > y ? x - y : y - x;
    }
    jumps += dist != 1;
  }
  for (size_t c = 0; c < k; c++) free(r[c]);
  free(keys);
  free(order);
  return jumps;
}

static void test_hilbert(void **state) {
  (void)state;
  assert_int_equal(curve_jumps(2, 4, true), 0);
  assert_int_equal(curve_jumps(3, 3, true), 0);
  assert_true(curve_jumps(2, 4, false) > 0);
  /* one column: the ranks themselves */
  uint32_t x[1] = {12345};
  opt_hilbert_transpose(x, 1);
  assert_int_equal(x[0], 12345);
}

/* Which files a clustering OPTIMIZE takes (Delta's ClusteringStrategy). */
static void test_cluster_pick(void **state) {
  (void)state;
  char *t1 = NULL, *t2 = NULL, *old = NULL;
  assert_int_equal(opt__cluster_tags(&t1, "[\"a\",\"b\"]"), 0);
  assert_int_equal(opt__cluster_tags(&t2, "[\"a\",\"b\"]"), 0);
  assert_int_equal(opt__cluster_tags(&old, "[\"c\"]"), 0);
  const char *cols = "[\"a\",\"b\"]";
  dl_file f[5];
  memset(f, 0, sizeof f);
  for (int i = 0; i < 5; i++) f[i].size = 100;
  f[0].clustering_provider = f[1].clustering_provider = "liquid";
  f[0].tags = f[1].tags = t1; /* one ZCube of two files */
  const dl_file *v[5] = {&f[0], &f[1], &f[2], &f[3], &f[4]};
  bool keep[5];
  /* one ZCube alone: nothing to do */
  assert_int_equal(opt__cluster_pick(keep, v, 2, cols, false, 1 << 30), 0);
  assert_false(keep[0] || keep[1]);
  /* an unclustered file joins: the small cube is reclustered with it */
  assert_int_equal(opt__cluster_pick(keep, v, 3, cols, false, 1 << 30), 0);
  assert_true(keep[0] && keep[1] && keep[2]);
  /* ... unless the cube is large */
  assert_int_equal(opt__cluster_pick(keep, v, 3, cols, false, 150), 0);
  assert_true(!keep[0] && !keep[1] && keep[2]);
  /* a file clustered by other columns, and another implementation's: only FULL takes them */
  f[3].clustering_provider = "liquid";
  f[3].tags = old;
  f[4].clustering_provider = "other";
  assert_int_equal(opt__cluster_pick(keep, v, 5, cols, false, 1 << 30), 0);
  assert_true(keep[0] && keep[1] && keep[2] && !keep[3] && !keep[4]);
  assert_int_equal(opt__cluster_pick(keep, v, 5, cols, true, 1 << 30), 0);
  assert_true(keep[0] && keep[1] && keep[2] && keep[3] && keep[4]);
  /* two ZCubes: merged */
  f[2].clustering_provider = "liquid";
  f[2].tags = t2;
  assert_int_equal(opt__cluster_pick(keep, v, 3, cols, false, 1 << 30), 0);
  assert_true(keep[0] && keep[1] && keep[2]);
  free(t1);
  free(t2);
  free(old);
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
      cmocka_unit_test(test_hilbert),
      cmocka_unit_test(test_cluster_pick),
      cmocka_unit_test(test_metrics),
      cmocka_unit_test(test_conflicts),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
