/* test_scan.c: store/scan through its API on real tables: batches bounded by batch_rows,
 * deletion vectors applied (and counted), the row limit, projection errors, one given
 * file's rows (only_file), keep_file skipping, partition values with column mapping, and
 * the Delta type -> Arrow kind mapping (scn_arrow_schema). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "common/err.h"
#include "store/scan/scn.h"

#define DV_SMALL DD_FIXTURES "/delta-rs-data/table-with-dv-small"
#define DV_FILE "part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet"

typedef struct fx {
  dl_table *t;
  dl_snapshot *s;
} fx;

static void fx_open(fx *f, const char *path) {
  assert_int_equal(dl_table_open(&f->t, path), 0);
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  assert_int_equal(dl_snapshot_open(&f->s, f->t, &o), 0);
}

static void fx_close(fx *f) {
  dl_snapshot_free(f->s);
  dl_table_free(f->t);
}

/* Scans with o, summing column 0 (an int32 column); returns rows, the largest batch. */
static size_t scan_all(fx *f, const scn_opts *o, int64_t *sum, size_t *max_batch,
                       scn_stats *st) {
  scn_scan *sc;
  assert_int_equal(scn_open(&sc, f->t, f->s, o), 0);
  const arw_batch *b;
  size_t rows = 0;
  *sum = 0;
  *max_batch = 0;
  while (1) {
    assert_int_equal(scn_next(sc, &b), 0);
    if (!b) break;
    size_t n = arw_batch_rows(b);
    assert_true(n > 0);
    if (n > *max_batch) *max_batch = n;
    arw_view v;
    assert_int_equal(arw_batch_view(b, arw_schema_column(arw_batch_schema(b), 0), &v), 0);
    for (size_t i = 0; i < n; i++) {
      int32_t x;
      memcpy(&x, v.values + 4 * i, 4);
      *sum += x;
    }
    rows += n;
  }
  assert_int_equal(scn_next(sc, &b), 0); /* stays at the end */
  assert_null(b);
  if (st) scn_stats_get(sc, st);
  scn_free(sc);
  return rows;
}

static void test_dv_and_batches(void **state) {
  (void)state;
  fx f;
  fx_open(&f, DV_SMALL);
  scn_opts o = SCN_OPTS_INIT;
  o.batch_rows = 3;
  int64_t sum;
  size_t max;
  scn_stats st;
  assert_int_equal(scan_all(&f, &o, &sum, &max, &st), 8);
  assert_int_equal(sum, 36); /* 1..8: rows 0 and 9 are deleted */
  assert_int_equal(max, 3);
  assert_int_equal(st.rows_read, 10);
  assert_int_equal(st.rows_deleted, 2);
  assert_int_equal(st.rows_returned, 8);
  assert_int_equal(st.files_read, 1);
  o.limit = 5;
  assert_int_equal(scan_all(&f, &o, &sum, &max, NULL), 5);
  assert_int_equal(sum, 15);
  o.limit = 0;
  assert_int_equal(scan_all(&f, &o, &sum, &max, NULL), 0);
  fx_close(&f);
}

static bool keep_none(void *ctx, const dl_file *file) {
  (*(int *)ctx)++;
  (void)file;
  return false;
}

static void test_files_and_projection(void **state) {
  (void)state;
  fx f;
  fx_open(&f, DV_SMALL);
  scn_opts o = SCN_OPTS_INIT;
  int64_t sum;
  size_t max;
  scn_stats st;
  o.only_file = DV_FILE;
  assert_int_equal(scan_all(&f, &o, &sum, &max, NULL), 8);
  o.only_file = "nope.parquet";
  scn_scan *sc = NULL;
  assert_int_equal(scn_open(&sc, f.t, f.s, &o), DD_ENOTFOUND);
  assert_null(sc);
  o.only_file = NULL;
  int calls = 0;
  o.keep_file = keep_none;
  o.keep_ctx = &calls;
  assert_int_equal(scan_all(&f, &o, &sum, &max, &st), 0);
  assert_int_equal(calls, 1);
  assert_int_equal(st.files_skipped, 1);
  assert_int_equal(st.files_read, 0);
  o.keep_file = NULL;
  const char *bad[] = {"nope"};
  o.columns = bad;
  o.num_columns = 1;
  assert_int_equal(scn_open(&sc, f.t, f.s, &o), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "nope"));
  const char *twice[] = {"value", "VALUE"};
  o.columns = twice;
  o.num_columns = 2;
  assert_int_equal(scn_open(&sc, f.t, f.s, &o), DD_EINVAL);
  const char *upper[] = {"VALUE"}; /* case-insensitive, named as the table names it */
  o.columns = upper;
  o.num_columns = 1;
  assert_int_equal(scn_open(&sc, f.t, f.s, &o), 0);
  assert_string_equal(arw_field_name(scn_schema(sc), arw_schema_column(scn_schema(sc), 0)),
                      "value");
  scn_free(sc);
  o.version = 99;
  assert_int_equal(scn_open(&sc, f.t, f.s, &o), DD_EINVAL);
  fx_close(&f);
}

/* Column mapping (name mode) with a partition column read by its physical name. */
static void test_partition_mapping(void **state) {
  (void)state;
  fx f;
  fx_open(&f, DD_FIXTURES "/delta-rs-data/table_with_partitioning_mapping");
  scn_scan *sc;
  assert_int_equal(scn_open(&sc, f.t, f.s, NULL), 0);
  const arw_schema *s = scn_schema(sc);
  size_t rows = 0, nonnull = 0;
  const arw_batch *b;
  while (!scn_next(sc, &b) && b) {
    rows += arw_batch_rows(b);
    for (size_t c = 0; c < arw_schema_ncolumns(s); c++) {
      arw_view v;
      assert_int_equal(arw_batch_view(b, arw_schema_column(s, c), &v), 0);
      nonnull += v.length - v.null_count;
    }
  }
  assert_int_equal(rows, 2);
  assert_int_equal(nonnull, rows * arw_schema_ncolumns(s)); /* no column lost to nulls */
  scn_free(sc);
  fx_close(&f);
}

static void test_arrow_schema(void **state) {
  (void)state;
  static const char js[] =
      "{\"type\":\"struct\",\"fields\":["
      "{\"name\":\"b\",\"type\":\"byte\",\"nullable\":true,\"metadata\":{}},"
      "{\"name\":\"s\",\"type\":\"short\",\"nullable\":true,\"metadata\":{}},"
      "{\"name\":\"f\",\"type\":\"float\",\"nullable\":true,\"metadata\":{}},"
      "{\"name\":\"d\",\"type\":\"decimal(38,4)\",\"nullable\":false,\"metadata\":{}},"
      "{\"name\":\"ts\",\"type\":\"timestamp\",\"nullable\":true,\"metadata\":{}},"
      "{\"name\":\"ntz\",\"type\":\"timestamp_ntz\",\"nullable\":true,\"metadata\":{}},"
      "{\"name\":\"v\",\"type\":\"variant\",\"nullable\":true,\"metadata\":{}},"
      "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"keyType\":\"string\",\"valueType\":"
      "{\"type\":\"array\",\"elementType\":\"date\",\"containsNull\":true},"
      "\"valueContainsNull\":true},\"nullable\":true,\"metadata\":{}}]}";
  dl_schema *ds;
  assert_int_equal(dl_schema_parse(&ds, js, strlen(js)), 0);
  arw_schema *s;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(scn_arrow_schema(s, dl_schema_root(ds), NULL, 0), 0);
  const arw_kind want[] = {ARW_INT8, ARW_INT16, ARW_FLOAT32, ARW_DECIMAL128,
                           ARW_TIMESTAMP_UTC, ARW_TIMESTAMP, ARW_STRUCT, ARW_MAP};
  assert_int_equal(arw_schema_ncolumns(s), 8);
  for (size_t i = 0; i < 8; i++) assert_int_equal(arw_field_kind(s, arw_schema_column(s, i)), want[i]);
  int d = arw_schema_column(s, 3);
  assert_int_equal(arw_field_precision(s, d), 38);
  assert_int_equal(arw_field_scale(s, d), 4);
  int v = arw_schema_column(s, 6);
  assert_string_equal(arw_field_name(s, arw_field_child(s, v, 0)), "value");
  assert_string_equal(arw_field_name(s, arw_field_child(s, v, 1)), "metadata");
  int m = arw_schema_column(s, 7);
  int mv = arw_field_child(s, m, 1);
  assert_int_equal(arw_field_kind(s, mv), ARW_LIST);
  assert_int_equal(arw_field_kind(s, arw_field_child(s, mv, 0)), ARW_DATE32);
  assert_false(arw_field_nullable(s, arw_field_child(s, m, 0)));
  arw_schema_free(s);
  assert_int_equal(arw_schema_new(&s), 0);
  const char *cols[] = {"m", "b"};
  assert_int_equal(scn_arrow_schema(s, dl_schema_root(ds), cols, 2), 0);
  assert_int_equal(arw_field_kind(s, arw_schema_column(s, 0)), ARW_MAP);
  const char *bad[] = {"zz"};
  assert_int_equal(scn_arrow_schema(s, dl_schema_root(ds), bad, 1), DD_EINVAL);
  arw_schema_free(s);
  dl_schema_free(ds);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_dv_and_batches),
      cmocka_unit_test(test_files_and_projection),
      cmocka_unit_test(test_partition_mapping),
      cmocka_unit_test(test_arrow_schema),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
