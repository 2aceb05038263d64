/* test_dml_par.c: copy-on-write DELETE, UPDATE and MERGE on their two-thread path over a
 * table of 24 small files (id bigint, s string, partitioned by p: files 0-7 in p=a, 8-15 in
 * p=b, 16-23 in p=a again, so each worker's writer changes partition and finishes a file
 * midway). The rows left are checked; and a worker failing in the middle (a corrupt data
 * file, a CHECK constraint broken by one file's rows) leaves no commit and the table's
 * directory exactly as it was (every file a worker had written, finished or still
 * streaming, deleted). DELETE, UPDATE and MERGE are judged against Spark in
 * tests/integration/dml. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "store/dml/dml.h"
#include "store/dwrite/dw.h"
#include "store/scan/scn.h"
#include "tests/unit/new_table.h"

enum { FILES = 24, ROWS = 10, BAD = 21 }; /* BAD: worker 1's, after it finished two writers */

static const char *SCHEMA =
    "{\"type\":\"struct\",\"fields\":["
    "{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"s\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}";

static const char *part_of(int f) { return f < 8 || f >= 16 ? "a" : "b"; }

/* A new table in a fresh directory with FILES files of ROWS rows (id = f * ROWS + r, s =
 * "s<id>"); conf: packed table properties (may be NULL). */
static char *make_table(const char *conf) {
  char tmpl[] = "/tmp/dml_par_XXXXXX";
  char *dir = strdup(mkdtemp(tmpl));
  dl_table *t;
  assert_int_equal(dl_table_open(&t, dir), 0);
  const char *pcols[] = {"p"};
  assert_int_equal(tu_new_table_with(t, SCHEMA, pcols, 1, conf), 0);
  dl_snapshot *s;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  arw_schema *as;
  arw_batch *b;
  int id, sc;
  assert_int_equal(arw_schema_new(&as), 0);
  arw_schema_add(as, ARW_ROOT, "id", ARW_INT64, true, &id);
  arw_schema_add(as, ARW_ROOT, "s", ARW_UTF8, true, &sc);
  assert_int_equal(arw_batch_new(&b, as), 0);
  dl_txn *x;
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  dw_writer *ws[FILES];
  for (int f = 0; f < FILES; f++) {
    arw_batch_clear(b);
    for (int r = 0; r < ROWS; r++) {
      char txt[16];
      int n = snprintf(txt, sizeof txt, "s%d", f * ROWS + r);
      arw_append_i64(b, id, f * ROWS + r);
      arw_append_str(b, sc, txt, (size_t)n);
    }
    const char *k[] = {"p"}, *val[] = {part_of(f)};
    char *pv = NULL;
    assert_int_equal(dl_kv_pack(&pv, k, val, 1), 0);
    dw_opts wo = DW_OPTS_INIT;
    wo.partition_values = pv;
    assert_int_equal(dw_open(&ws[f], t, s, as, &wo), 0);
    assert_int_equal(dw_write(ws[f], b), 0);
    assert_int_equal(dw_finish(ws[f]), 0);
    assert_int_equal(dl_txn_add_file(x, dw_file(ws[f], 0)), 0);
    free(pv);
  }
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.operation = "WRITE";
  int64_t v;
  assert_int_equal(dl_txn_commit(x, &co, &v), 0);
  dl_txn_free(x);
  for (int f = 0; f < FILES; f++) dw_free(ws[f]);
  arw_batch_free(b);
  arw_schema_free(as);
  dl_snapshot_free(s);
  dl_table_free(t);
  return dir;
}

static void remove_table(char *dir) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  free(dir);
}

/* Every path below the table directory (hidden temp files too), sorted, one per line. */
static dd_buf g_tree;
static size_t g_root;
static int tree_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  dd_buf_puts(&g_tree, path + g_root);
  dd_buf_putc(&g_tree, '\n');
  return 0;
}
static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static char *tree(const char *dir) {
  g_tree = (dd_buf){0};
  g_root = strlen(dir);
  assert_int_equal(nftw(dir, tree_cb, 16, FTW_PHYS), 0);
  dd_buf_putc(&g_tree, 0);
  char *lines[1024];
  size_t n = 0;
  for (char *save = NULL, *l = strtok_r(g_tree.p, "\n", &save); l && n < 1024; l = strtok_r(NULL, "\n", &save))
    lines[n++] = l;
  qsort(lines, n, sizeof *lines, cmp_str);
  dd_buf out = {0};
  for (size_t i = 0; i < n; i++) dd_buf_puts(&out, lines[i]), dd_buf_putc(&out, '\n');
  dd_buf_putc(&out, 0);
  dd_buf_free(&g_tree);
  return out.p;
}

/* The latest snapshot's row count, sum of ids and count of ids with id % 10 == 9. */
static void table_rows(const char *dir, int64_t *rows, int64_t *sum, int64_t *nines) {
  dl_table *t;
  dl_snapshot *s;
  assert_int_equal(dl_table_open(&t, dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  scn_opts o = SCN_OPTS_INIT;
  const char *cols[] = {"id"};
  o.columns = cols, o.num_columns = 1;
  scn_scan *sc;
  assert_int_equal(scn_open(&sc, t, s, &o), 0);
  const arw_batch *b;
  *rows = *sum = *nines = 0;
  while (scn_next(sc, &b) == 0 && b) {
    arw_view v;
    assert_int_equal(arw_batch_view(b, arw_schema_column(scn_schema(sc), 0), &v), 0);
    for (size_t i = 0; i < v.length; i++) {
      int64_t x = ((const int64_t *)v.values)[i];
      ++*rows, *sum += x, *nines += x % 10 == 9;
    }
  }
  scn_free(sc);
  dl_snapshot_free(s);
  dl_table_free(t);
}

static int64_t latest_version(const char *dir) {
  dl_table *t;
  dl_snapshot *s;
  assert_int_equal(dl_table_open(&t, dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  int64_t v = dl_snapshot_version(s);
  dl_snapshot_free(s);
  dl_table_free(t);
  return v;
}

/* Runs DELETE (set NULL) or UPDATE on the latest snapshot of dir with 4-row batches (each
 * file read in three batches). */
static int run_dml(const char *dir, const char *where, const char *set_col, const char *set_expr,
                   dml_result *res) {
  dl_table *t;
  dl_snapshot *s;
  assert_int_equal(dl_table_open(&t, dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  dml_opts o = DML_OPTS_INIT;
  o.predicate_sql = where;
  o.batch_rows = 4;
  ex_node *val = NULL;
  dml_assignment a = {set_col, NULL};
  if (set_col) {
    assert_int_equal(ex_parse(&val, set_expr, strlen(set_expr), NULL), 0);
    a.value = val;
    o.assignments = &a, o.num_assignments = 1;
  }
  int rc = set_col ? dml_update(res, t, s, &o) : dml_delete(res, t, s, &o);
  ex_free(val);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}

/* Overwrites data file number f (in log order) with bytes that are not Parquet. */
typedef struct nth {
  int want, at;
  char *path;
} nth;
static int nth_cb(void *ctx, const dl_file *f) {
  nth *k = ctx;
  if (k->at++ == k->want) k->path = strdup(f->path);
  return 0;
}
static void corrupt_file(const char *dir, int f) {
  dl_table *t;
  dl_snapshot *s;
  assert_int_equal(dl_table_open(&t, dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  nth k = {.want = f};
  assert_int_equal(dl_snapshot_files(s, nth_cb, &k), 0);
  assert_non_null(k.path);
  char full[1024];
  snprintf(full, sizeof full, "%s/%s", dir, k.path);
  int fd = open(full, O_WRONLY | O_TRUNC);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "not a parquet file", 18), 18);
  close(fd);
  free(k.path);
  dl_snapshot_free(s);
  dl_table_free(t);
}

/* MERGE INTO t USING (the ids f * ROWS + 1 of every file, with s = "new", and ids 1000..1004)
 * ON t.id = s.id WHEN MATCHED UPDATE * WHEN NOT MATCHED INSERT *. */
static int run_merge(const char *dir, dml_merge_result *res) {
  dl_table *t;
  dl_snapshot *s;
  assert_int_equal(dl_table_open(&t, dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  arw_schema *as;
  arw_batch *b;
  int id, sc, pc;
  assert_int_equal(arw_schema_new(&as), 0);
  arw_schema_add(as, ARW_ROOT, "id", ARW_INT64, true, &id);
  arw_schema_add(as, ARW_ROOT, "s", ARW_UTF8, true, &sc);
  arw_schema_add(as, ARW_ROOT, "p", ARW_UTF8, true, &pc);
  assert_int_equal(arw_batch_new(&b, as), 0);
  for (int f = 0; f < FILES + 5; f++) {
    arw_append_i64(b, id, f < FILES ? f * ROWS + 1 : 1000 + f - FILES);
    arw_append_str(b, sc, "new", 3);
    arw_append_str(b, pc, f < FILES ? part_of(f) : "a", 1);
  }
  ex_node *on = NULL;
  assert_int_equal(ex_parse(&on, "t.id = s.id", 11, NULL), 0);
  dml_merge_clause cl[] = {{.kind = DML_MERGE_MATCHED, .action = DML_MERGE_UPDATE_STAR},
                           {.kind = DML_MERGE_NOT_MATCHED, .action = DML_MERGE_INSERT_STAR}};
  const arw_batch *src[] = {b};
  dml_merge_opts o = DML_MERGE_OPTS_INIT;
  o.source_schema = as, o.source = src, o.num_source = 1;
  o.target_alias = "t", o.source_alias = "s", o.on = on;
  o.clauses = cl, o.num_clauses = 2;
  o.batch_rows = 4;
  int rc = dml_merge(res, t, s, &o);
  ex_free(on);
  arw_batch_free(b);
  arw_schema_free(as);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}

/* A failed operation: no new version, the directory as it was. */
static void assert_untouched(const char *dir, const char *before, int64_t version) {
  char *after = tree(dir);
  assert_string_equal(after, before);
  free(after);
  assert_int_equal(latest_version(dir), version);
}

static void test_delete(void **state) {
  (void)state;
  char *dir = make_table(NULL);
  /* files 5-9 have no matched row (the worker then probes the next file first); in the
   * others the matched row is in the last batch (the two before it are held) */
  dml_result r;
  assert_int_equal(run_dml(dir, "id % 10 = 9 AND (id < 50 OR id >= 100)", NULL, NULL, &r), 0);
  assert_int_equal(r.num_affected_rows, FILES - 5);
  assert_int_equal(r.num_removed_files, FILES - 5);
  assert_int_equal(r.num_copied_rows, (FILES - 5) * (ROWS - 1));
  /* each worker: a file for p=a, one for p=b, one for p=a again */
  assert_int_equal(r.num_added_files, 6);
  int64_t rows, sum, nines;
  table_rows(dir, &rows, &sum, &nines);
  int64_t all = FILES * ROWS * (FILES * ROWS - 1) / 2, gone = 0;
  for (int f = 0; f < FILES; f++)
    if (f < 5 || f >= 10) gone += f * ROWS + 9;
  assert_int_equal(rows, FILES * ROWS - (FILES - 5));
  assert_int_equal(sum, all - gone);
  assert_int_equal(nines, 5);
  remove_table(dir);
}

static void test_update(void **state) {
  (void)state;
  char *dir = make_table(NULL);
  dml_result r;
  assert_int_equal(run_dml(dir, "id % 10 = 9", "id", "id + 1000", &r), 0);
  assert_int_equal(r.num_affected_rows, FILES);
  assert_int_equal(r.num_removed_files, FILES);
  assert_int_equal(r.num_copied_rows, FILES * (ROWS - 1));
  int64_t rows, sum, nines;
  table_rows(dir, &rows, &sum, &nines);
  assert_int_equal(rows, FILES * ROWS);
  assert_int_equal(sum, (int64_t)FILES * ROWS * (FILES * ROWS - 1) / 2 + 1000 * FILES);
  assert_int_equal(nines, FILES);
  remove_table(dir);
}

static void test_merge(void **state) {
  (void)state;
  char *dir = make_table(NULL);
  dml_merge_result r;
  assert_int_equal(run_merge(dir, &r), 0);
  assert_int_equal(r.matched_updated, FILES);
  assert_int_equal(r.inserted, 5);
  assert_int_equal(r.files_removed, FILES);
  assert_int_equal(r.copied, FILES * (ROWS - 1));
  int64_t rows, sum, nines;
  table_rows(dir, &rows, &sum, &nines);
  assert_int_equal(rows, FILES * ROWS + 5);
  assert_int_equal(sum, (int64_t)FILES * ROWS * (FILES * ROWS - 1) / 2 + 1000 + 1001 + 1002 + 1003 + 1004);
  remove_table(dir);
}

/* A corrupt file late in the list: the worker reading it (worker 1, candidates 1, 3, ...)
 * has finished a file for p=a and one for p=b by then and streams a third; nothing is left. */
static void test_corrupt_file(void **state) {
  (void)state;
  char *dir = make_table(NULL);
  corrupt_file(dir, BAD);
  char *before = tree(dir);
  int64_t v = latest_version(dir);
  dml_result r;
  assert_int_equal(run_dml(dir, "id % 10 = 9", NULL, NULL, &r), DD_ECORRUPT);
  assert_untouched(dir, before, v);
  assert_int_not_equal(run_dml(dir, "id % 10 = 9", "s", "'x'", &r), 0);
  assert_untouched(dir, before, v);
  dml_merge_result m;
  assert_int_not_equal(run_merge(dir, &m), 0);
  assert_untouched(dir, before, v);
  free(before);
  remove_table(dir);
}

/* An UPDATE whose new rows break a CHECK constraint in one file in the middle. */
static void test_constraint(void **state) {
  (void)state;
  const char *k[] = {"delta.constraints.nn"}, *val[] = {"s IS NOT NULL"};
  char *conf = NULL;
  assert_int_equal(dl_kv_pack(&conf, k, val, 1), 0);
  char *dir = make_table(conf);
  free(conf);
  char *before = tree(dir);
  int64_t v = latest_version(dir);
  dml_result r;
  char sql[64];
  snprintf(sql, sizeof sql, "CASE WHEN id = %d THEN NULL ELSE s END", BAD * ROWS + 5);
  assert_int_equal(run_dml(dir, "id % 10 = 5", "s", sql, &r), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "DELTA_VIOLATE_CONSTRAINT_WITH_VALUES"));
  assert_untouched(dir, before, v);
  free(before);
  remove_table(dir);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_delete),     cmocka_unit_test(test_update),
      cmocka_unit_test(test_merge),      cmocka_unit_test(test_corrupt_file),
      cmocka_unit_test(test_constraint),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
