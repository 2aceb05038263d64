/* test_pq_fixtures.c: the reader against every real Parquet file under the fixtures
 * (written by Spark/parquet-mr, Databricks, delta-rs/parquet-rs): each opens, every row
 * of every column assembles, row counts equal the footer, the flat column API agrees with
 * chunk metadata; and spot checks of add.path values read by hand from the JSON commits.
 * argv[1] is the fixtures directory (CMake DD_FIXTURES). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "store/parquet/pq.h"

static const char *g_fixtures;

/* Files this reader refuses on purpose, with the reason. None at present. */
static const struct { const char *suffix, *reason; } expected_refusals[] = {{NULL, NULL}};

static bool is_expected_refusal(const char *path) {
  for (size_t i = 0; expected_refusals[i].suffix; i++) {
    size_t n = strlen(path), m = strlen(expected_refusals[i].suffix);
    if (n >= m && strcmp(path + n - m, expected_refusals[i].suffix) == 0) return true;
  }
  return false;
}

static int read_all(const char *path, int64_t *rows_out) {
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  int64_t rows = 0;
  int rc = pq_file_open_path(&f, path);
  if (!rc) rc = pq_cursor_open(&c, f, NULL);
  const pq_value *row = NULL;
  while (!rc && !(rc = pq_cursor_next(c, &row)) && row) rows++;
  if (!rc && rows != pq_file_num_rows(f))
    rc = dd_err_set(DD_ECORRUPT, "rows %lld != footer %lld", (long long)rows,
                    (long long)pq_file_num_rows(f));
  for (size_t g = 0; !rc && g < pq_file_num_row_groups(f); g++)
    for (size_t i = 0; !rc && i < pq_file_num_columns(f); i++) {
      pq_column *col = NULL;
      pq_chunk_info ci;
      rc = pq_column_read(&col, f, g, i);
      if (!rc) rc = pq_chunk_get(&ci, f, g, i);
      if (!rc && (int64_t)col->num_levels != ci.num_values)
        rc = dd_err_set(DD_ECORRUPT, "flat column levels differ from metadata");
      pq_column_free(col);
    }
  *rows_out = rows;
  pq_cursor_free(c);
  pq_file_free(f);
  return rc;
}

typedef struct walk { int files, failures, refused; int64_t rows; } walk;

static void walk_dir(const char *dir, walk *w) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      walk_dir(path, w);
      continue;
    }
    size_t n = strlen(path);
    if (n < 8 || strcmp(path + n - 8, ".parquet") != 0) continue;
    int64_t rows = 0;
    int rc = read_all(path, &rows);
    w->files++;
    w->rows += rows;
    if (rc && is_expected_refusal(path)) {
      w->refused++;
    } else if (rc) {
      w->failures++;
      fprintf(stderr, "FAIL %s: %s\n", path, dd_err_msg());
    }
  }
  closedir(d);
}

static void test_every_fixture_reads(void **state) {
  (void)state;
  walk w = {0, 0, 0, 0};
  walk_dir(g_fixtures, &w);
  fprintf(stderr, "read %d parquet files, %lld rows, %d expected refusals\n", w.files,
          (long long)w.rows, w.refused);
  assert_true(w.files >= 400);
  assert_int_equal(w.failures, 0);
}

/* Reads the projected add.path values of a checkpoint, in order. */
static char **add_paths(const char *rel, size_t *n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", g_fixtures, rel);
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  const char *cols[] = {"add.path", "add.size", "add.partitionValues", "add.deletionVector",
                        "add.modificationTime", "add.dataChange"};
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = cols;
  o.num_columns = 6;
  o.missing_ok = true;
  assert_int_equal(pq_file_open_path(&f, path), 0);
  assert_int_equal(pq_cursor_open(&c, f, &o), 0);
  const pq_pnode *s = pq_cursor_schema(c);
  assert_int_equal(s->num_children, 1); /* only "add" */
  int add = pq_pnode_child(s, "add");
  int p = pq_pnode_child(&s->children[add], "path");
  assert_true(add == 0 && p >= 0);
  char **out = calloc(1024, sizeof *out);
  *n = 0;
  const pq_value *row;
  while (pq_cursor_next(c, &row) == 0 && row) {
    const pq_value *a = &row->u.items[add];
    if (a->kind == PQ_V_NULL) continue;
    const pq_value *pv = &a->u.items[p];
    assert_int_equal(pv->kind, PQ_V_BYTES);
    assert_true(pv->is_string);
    out[(*n)++] = strndup((const char *)pv->u.bytes, pv->len);
  }
  pq_cursor_free(c);
  pq_file_free(f);
  return out;
}

static bool contains(char **v, size_t n, const char *s) {
  for (size_t i = 0; i < n; i++)
    if (strcmp(v[i], s) == 0) return true;
  return false;
}

static void free_strs(char **v, size_t n) {
  for (size_t i = 0; i < n; i++) free(v[i]);
  free(v);
}

static void test_spark_checkpoint_paths(void **state) {
  (void)state;
  size_t n;
  /* parquet-mr 1.10.1, PLAIN_DICTIONARY, snappy */
  char **v = add_paths("delta-rs-data/simple_table_with_checkpoint/_delta_log/"
                       "00000000000000000010.checkpoint.parquet", &n);
  assert_int_equal(n, 11); /* 11 live files at version 10 */
  assert_string_equal(v[0], "part-00000-9afd9224-729f-4420-a05e-8032113a6568-c000.snappy.parquet");
  free_strs(v, n);
  v = add_paths("dat/reader_tests/generated/with_checkpoint/delta/_delta_log/"
                "00000000000000000002.checkpoint.parquet", &n);
  assert_true(n >= 1);
  assert_true(contains(v, n, "part-00000-7261547b-c07f-4530-998c-767b3f4de281-c000.snappy.parquet"));
  free_strs(v, n);
}

static void test_delta_rs_checkpoint_paths(void **state) {
  (void)state;
  size_t n;
  /* parquet-rs 18, RLE_DICTIONARY */
  char **v = add_paths("delta-rs-data/checkpoint_with_partitions/_delta_log/"
                       "00000000000000000002.checkpoint.parquet", &n);
  assert_int_equal(n, 2);
  assert_string_equal(v[0], "f62d8868-d952-4f9d-8bb2-fd4e011ebf36");
  assert_string_equal(v[1], "8ac7d8e1-daab-48ef-9d05-ec22fb4b0d2f");
  free_strs(v, n);
  v = add_paths("delta-rs-data/python-0.25.5-checkpoint/_delta_log/"
                "00000000000000000000.checkpoint.parquet", &n);
  assert_int_equal(n, 1);
  assert_string_equal(v[0], "part-00001-4ad27870-ff0a-4fe5-b4c7-04cadfd628a9-c000.snappy.parquet");
  free_strs(v, n);
}

static void test_partition_values_map(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof path, "%s/delta-rs-data/checkpoint_with_partitions/_delta_log/"
           "00000000000000000002.checkpoint.parquet", g_fixtures);
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  const char *cols[] = {"add.partitionValues"};
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = cols;
  o.num_columns = 1;
  assert_int_equal(pq_file_open_path(&f, path), 0);
  const pq_field *pv = pq_file_find(f, "add.partitionValues");
  assert_non_null(pv);
  assert_int_equal(pv->shape, PQ_SHAPE_MAP);
  assert_int_equal(pq_cursor_open(&c, f, &o), 0);
  const pq_value *row;
  int seen = 0;
  while (pq_cursor_next(c, &row) == 0 && row) {
    const pq_value *a = &row->u.items[0];
    if (a->kind == PQ_V_NULL) continue;
    const pq_value *m = &a->u.items[0];
    assert_int_equal(m->kind, PQ_V_MAP);
    assert_int_equal(m->len, 1);
    assert_memory_equal(m->u.items[0].u.bytes, "color", 5);
    seen++;
  }
  assert_int_equal(seen, 2);
  pq_cursor_free(c);
  pq_file_free(f);
}

static void test_projection_errors_and_stats(void **state) {
  (void)state;
  char path[4096];
  snprintf(path, sizeof path, "%s/delta-rs-data/simple_table_with_checkpoint/_delta_log/"
           "00000000000000000010.checkpoint.parquet", g_fixtures);
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  assert_int_equal(pq_file_open_path(&f, path), 0);
  const char *bad[] = {"add.nope"};
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = bad;
  o.num_columns = 1;
  assert_int_equal(pq_cursor_open(&c, f, &o), DD_ENOTFOUND);
  const char *inside[] = {"add.partitionValues.key"};
  o.columns = inside;
  assert_int_equal(pq_cursor_open(&c, f, &o), DD_EINVAL);
  const pq_field *p = pq_file_find(f, "add.path");
  assert_non_null(p);
  assert_true(p->is_string);
  pq_chunk_info ci;
  assert_int_equal(pq_chunk_get(&ci, f, 0, (size_t)p->column), 0);
  assert_int_equal(ci.codec, PQ_CODEC_SNAPPY);
  assert_int_equal(pq_chunk_get(&ci, f, 99, 0), DD_EINVAL);
  pq_file_free(f);
  assert_int_equal(pq_file_open_path(&f, "/nonexistent.parquet"), DD_ENOTFOUND);
}

int main(int argc, char **argv) {
  g_fixtures = argc > 1 ? argv[1] : "../shared/fixtures";
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_every_fixture_reads),
      cmocka_unit_test(test_spark_checkpoint_paths),
      cmocka_unit_test(test_delta_rs_checkpoint_paths),
      cmocka_unit_test(test_partition_values_map),
      cmocka_unit_test(test_projection_errors_and_stats),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
