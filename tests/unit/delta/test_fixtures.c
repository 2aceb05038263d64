/* test_fixtures.c: every shared fixture table (written by Spark, Databricks and delta-rs)
 * read by this engine. Expectations were written down from the logs themselves (an
 * independent replay of the JSON files, see the comments), never from this engine; DAT
 * cases are checked against their table_version_metadata.json and expected row counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <limits.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/parquet/pq.h"

#define FX DD_FIXTURES

/* ---------- helpers ---------- */

typedef struct paths {
  char **v;
  size_t n;
} paths;

static int collect_cb(void *ctx, const dl_file *f) {
  paths *p = ctx;
  p->v = realloc(p->v, (p->n + 1) * sizeof *p->v);
  p->v[p->n++] = strdup(f->path);
  return 0;
}

static int cmpstr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void paths_free(paths *p) {
  for (size_t i = 0; i < p->n; i++) free(p->v[i]);
  free(p->v);
}

static int open_at(dl_snapshot **out, const char *table, int64_t version) {
  dl_table *t = NULL;
  int rc = dl_table_open(&t, table);
  if (rc) return rc;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = version;
  rc = dl_snapshot_open(out, t, &o);
  if (rc) print_message("open %s@%lld: %s\n", table, (long long)version, dd_err_msg());
  dl_table_free(t); /* snapshots only need the table while reading DVs */
  return rc;
}

static size_t count_tombstones(const dl_snapshot *s);
static int tomb_cb(void *ctx, const dl_file *f) {
  (void)f;
  ++*(size_t *)ctx;
  return 0;
}
static size_t count_tombstones(const dl_snapshot *s) {
  size_t n = 0;
  dl_snapshot_tombstones(s, tomb_cb, &n);
  return n;
}

/* Checks version, number of active files and, when given, the first sorted paths. */
static void expect_files(const char *rel, int64_t version, int64_t want_version, size_t n_files,
                         const char *const *first, size_t n_first) {
  char table[512];
  snprintf(table, sizeof table, FX "/%s", rel);
  dl_snapshot *s = NULL;
  assert_int_equal(open_at(&s, table, version), 0);
  assert_int_equal(dl_snapshot_version(s), want_version);
  paths p = {0};
  assert_int_equal(dl_snapshot_files(s, collect_cb, &p), 0);
  if (p.n != n_files) print_message("%s@%lld: %zu files\n", rel, (long long)version, p.n);
  assert_int_equal(p.n, n_files);
  assert_int_equal(dl_snapshot_num_files(s), n_files);
  qsort(p.v, p.n, sizeof *p.v, cmpstr);
  for (size_t i = 0; i < n_first; i++) assert_string_equal(p.v[i], first[i]);
  paths_free(&p);
  dl_snapshot_free(s);
}

/* ---------- delta-rs tables, expectations from their logs ---------- */

static void test_simple_table_versions(void **state) {
  (void)state;
  /* simple_table: v0 adds 6 files; v1 removes 5 and adds 21; v2 removes 22, adds 6; v3
   * swaps 2 for 2; v4 swaps 2 for 1 -> 5 files and 31 tombstones. */
  const char *v4[] = {"part-00000-2befed33-c358-4768-a43c-3eda0d2a499d-c000.snappy.parquet",
                      "part-00000-c1777d7d-89d9-4790-b38a-6ee7e24456b1-c000.snappy.parquet",
                      "part-00001-7891c33d-cedc-47c3-88a6-abcfb049d3b4-c000.snappy.parquet",
                      "part-00004-315835fe-fb44-4562-98f6-5e6cfa3ae45d-c000.snappy.parquet",
                      "part-00007-3a0e4727-de0d-41b6-81ef-5223cf40f025-c000.snappy.parquet"};
  expect_files("delta-rs-data/simple_table", 0, 0, 6, NULL, 0);
  expect_files("delta-rs-data/simple_table", 1, 1, 22, NULL, 0);
  expect_files("delta-rs-data/simple_table", 2, 2, 6, NULL, 0);
  expect_files("delta-rs-data/simple_table", 3, 3, 6, NULL, 0);
  expect_files("delta-rs-data/simple_table", -1, 4, 5, v4, 5);
  dl_snapshot *s = NULL;
  assert_int_equal(open_at(&s, FX "/delta-rs-data/simple_table", 4), 0);
  assert_int_equal(count_tombstones(s), 31);
  dl_snapshot_free(s);
  assert_int_equal(open_at(&s, FX "/delta-rs-data/simple_table", 5), DD_ERANGE);
}

static void test_checkpointed_tables(void **state) {
  (void)state;
  /* checkpoints: JSON only, one partitioned file per commit from v1. */
  expect_files("delta-rs-data/checkpoints", 5, 5, 5, NULL, 0);
  const char *ck[] = {"date=2020-06-01/part-00000-762e2b03-6a04-4707-b676-5d38d1ef9fca.c000.snappy.parquet",
                      "date=2020-06-01/part-00000-b207ef5f-4458-4969-bd34-46439cdeb6a6.c000.snappy.parquet"};
  expect_files("delta-rs-data/checkpoints", -1, 12, 12, ck, 2);
  /* simple_table_with_checkpoint: classic checkpoint at 10 (same content as replaying 0..10) */
  const char *sc[] = {"part-00000-136c36f5-639d-4e95-bb0f-15cde3fb14eb-c000.snappy.parquet",
                      "part-00000-1abe25d3-0da6-46c5-98c1-7a69872fd797-c000.snappy.parquet"};
  expect_files("delta-rs-data/simple_table_with_checkpoint", -1, 10, 11, sc, 2);
  expect_files("delta-rs-data/simple_table_with_checkpoint", 9, 9, 10, NULL, 0);
  /* checkpoint at 2, commit 3 after it, no _last_checkpoint */
  const char *wc[] = {"part-00000-70b1dcdf-0236-4f63-a072-124cdbafd8a0-c000.snappy.parquet"};
  expect_files("delta-rs-data/with_checkpoint_no_last_checkpoint", -1, 3, 1, wc, 1);
  expect_files("delta-rs-data/latest_not_checkpointed", -1, 3, 1, wc, 1);
  /* _last_checkpoint says 1 but a checkpoint of 3 exists (stale pointer) */
  const char *tf[] = {"part-00001-6791b37e-f318-4d2b-87a0-89be205c338b-c000.snappy.parquet",
                      "part-00001-9c90a84d-6999-463c-bd2d-f68333e6d03d-c000.snappy.parquet"};
  expect_files("delta-rs-data/table_failed_last_checkpoint_update", -1, 3, 4, tf, 2);
  /* v2 checkpoints (JSON top-level files at 6 and 8 with Parquet sidecars), commit 9 */
  const char *v2[] = {"part-00000-247edc12-0eb3-44dc-9d39-42b50dbe6a6b.c000.snappy.parquet",
                      "part-00000-33e5a956-7506-43d8-bc29-e913eaeb2b73.c000.snappy.parquet"};
  expect_files("delta-rs-data/checkpoint-v2-table", -1, 9, 8, v2, 2);
  dl_snapshot *s = NULL;
  assert_int_equal(open_at(&s, FX "/delta-rs-data/checkpoint-v2-table", 8), 0);
  assert_int_equal(dl_snapshot_checkpoint_version(s), 8);
  dl_snapshot_free(s);
  assert_int_equal(open_at(&s, FX "/delta-rs-data/checkpoint-v2-table", 7), 0);
  assert_int_equal(dl_snapshot_checkpoint_version(s), 6);
  dl_snapshot_free(s);
  /* only a checkpoint of 108, no commits */
  assert_int_equal(open_at(&s, FX "/delta-rs-data/table-with-domain-metadata", -1), 0);
  assert_int_equal(dl_snapshot_version(s), 108);
  assert_true(dl_snapshot_num_domains(s) > 0);
  dl_snapshot_free(s);
  /* checkpoints_vacuumed: commits before 5 are gone */
  assert_int_equal(open_at(&s, FX "/delta-rs-data/checkpoints_vacuumed", 3), DD_ERANGE);
  assert_int_equal(open_at(&s, FX "/delta-rs-data/checkpoints_vacuumed", 7), 0);
  assert_int_equal(dl_snapshot_checkpoint_version(s), 5);
  dl_snapshot_free(s);
}

static void test_err_logs(void **state) {
  (void)state;
  dl_snapshot *s = NULL;
  assert_int_equal(open_at(&s, FX "/delta-rs-data-err-logs/table_a", -1), 0);
  assert_int_equal(dl_snapshot_version(s), 13);
  dl_snapshot_free(s);
  /* table_b: commit 7 is missing but the checkpoint of 10 hides the gap */
  assert_int_equal(open_at(&s, FX "/delta-rs-data-err-logs/table_b", -1), 0);
  assert_int_equal(dl_snapshot_version(s), 13);
  dl_snapshot_free(s);
  assert_int_equal(open_at(&s, FX "/delta-rs-data-err-logs/table_b", 8), DD_ECORRUPT);
  /* table_c: commit 12 is missing after the checkpoint */
  assert_int_equal(open_at(&s, FX "/delta-rs-data-err-logs/table_c", -1), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "12"));
  /* table_g: a checkpoint of 9999 hides 14..9998 */
  assert_int_equal(open_at(&s, FX "/delta-rs-data-err-logs/table_g", -1), 0);
  assert_int_equal(dl_snapshot_version(s), 9999);
  dl_snapshot_free(s);
  const char *cat[] = {"table_d", "table_e", "table_f", "table_h", "table_i"};
  for (size_t i = 0; i < 5; i++) {
    char path[256];
    snprintf(path, sizeof path, FX "/delta-rs-data-err-logs/%s", cat[i]);
    assert_int_equal(open_at(&s, path, -1), DD_EUNSUPPORTED);
    assert_non_null(strstr(dd_err_msg(), "catalogOwned"));
  }
  assert_int_equal(open_at(&s, FX "/delta-rs-data/simple_table_features", -1), DD_EUNSUPPORTED);
  assert_non_null(strstr(dd_err_msg(), "blahabl"));
}

/* ---------- every table: opens (or fails as documented), at every version ---------- */

static const struct {
  const char *name;
  int code;
  const char *msg;
} EXPECTED_FAILURES[] = {
    {"delta-rs-data/simple_table_features", DD_EUNSUPPORTED, "blahabl"},
    {"delta-rs-data-err-logs/table_c", DD_ECORRUPT, "12"},
    {"delta-rs-data-err-logs/table_d", DD_EUNSUPPORTED, "catalogOwned"},
    {"delta-rs-data-err-logs/table_e", DD_EUNSUPPORTED, "catalogOwned"},
    {"delta-rs-data-err-logs/table_f", DD_EUNSUPPORTED, "catalogOwned"},
    {"delta-rs-data-err-logs/table_h", DD_EUNSUPPORTED, "catalogOwned"},
    {"delta-rs-data-err-logs/table_i", DD_EUNSUPPORTED, "catalogOwned"},
};

typedef struct dv_ctx {
  dl_table *t;
  size_t loaded;
} dv_ctx;

static int dv_cb(void *ctx, const dl_file *f) {
  dv_ctx *c = ctx;
  if (f->stats) {
    dl_stats *st = NULL;
    if (dl_stats_parse(&st, f->stats) == 0) dl_stats_free(st);
  }
  if (!f->dv) return 0;
  dl_rowset r;
  int rc = dl_dv_load(&r, c->t, f->dv);
  if (rc == DD_ENOTFOUND) return 0; /* log-only table */
  if (rc) print_message("DV of %s: %s\n", f->path, dd_err_msg());
  assert_int_equal(rc, 0);
  assert_int_equal(r.count, f->dv->cardinality);
  c->loaded++;
  dl_rowset_free(&r);
  return 0;
}

static size_t g_dvs_loaded, g_tables;

static void check_table(const char *rel) {
  char path[2048];
  snprintf(path, sizeof path, FX "/%s", rel);
  int want = 0;
  const char *msg = NULL;
  for (size_t i = 0; i < sizeof EXPECTED_FAILURES / sizeof EXPECTED_FAILURES[0]; i++)
    if (!strcmp(rel, EXPECTED_FAILURES[i].name)) want = EXPECTED_FAILURES[i].code, msg = EXPECTED_FAILURES[i].msg;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  assert_int_equal(dl_table_open(&t, path), 0);
  int rc = dl_snapshot_open(&s, t, NULL);
  if (rc != want) print_message("%s: got %d (%s), want %d\n", rel, rc, dd_err_msg(), want);
  assert_int_equal(rc, want);
  g_tables++;
  if (rc) {
    assert_non_null(strstr(dd_err_msg(), msg));
    dl_table_free(t);
    return;
  }
  dv_ctx c = {t, 0};
  assert_int_equal(dl_snapshot_files(s, dv_cb, &c), 0);
  g_dvs_loaded += c.loaded;
  int64_t latest = dl_snapshot_version(s);
  dl_snapshot_free(s);
  /* every earlier version either opens or is out of the retained history */
  for (int64_t v = latest - 1; v >= 0 && latest - v <= 30; v--) {
    dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
    o.version = v;
    rc = dl_snapshot_open(&s, t, &o);
    if (rc && rc != DD_ERANGE && rc != DD_ECORRUPT && rc != DD_EUNSUPPORTED)
      print_message("%s@%lld: %s\n", rel, (long long)v, dd_err_msg());
    assert_true(rc == 0 || rc == DD_ERANGE || rc == DD_ECORRUPT || rc == DD_EUNSUPPORTED);
    dl_snapshot_free(s);
    s = NULL;
  }
  /* history and timestamps never fail on a readable table */
  int64_t *vs = NULL, *ts = NULL;
  size_t n = 0;
  assert_int_equal(dl_commit_timestamps(t, &vs, &ts, &n), 0);
  for (size_t i = 1; i < n; i++)
    if (ts[i] <= ts[i - 1]) print_message("%s: ts[%lld]=%lld <= ts[%lld]=%lld\n", rel, (long long)vs[i], (long long)ts[i], (long long)vs[i-1], (long long)ts[i-1]);
  free(vs);
  free(ts);
  dl_table_free(t);
}

static bool is_table(const char *path) {
  char p[600];
  struct stat sb;
  snprintf(p, sizeof p, "%s/_delta_log", path);
  return stat(p, &sb) == 0 && S_ISDIR(sb.st_mode);
}

static void walk(const char *rel, int depth) {
  char path[2048];
  snprintf(path, sizeof path, FX "/%s", rel);
  if (is_table(path)) {
    check_table(rel);
    return;
  }
  if (depth > 2) return;
  DIR *d = opendir(path);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.' || !strcmp(e->d_name, "expected")) continue;
    char sub[1024];
    snprintf(sub, sizeof sub, "%s/%s", rel, e->d_name);
    snprintf(path, sizeof path, FX "/%s", sub);
    struct stat sb;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) walk(sub, depth + 1);
  }
  closedir(d);
}

static void test_every_fixture(void **state) {
  (void)state;
  walk("delta-rs-data", 0);
  walk("delta-rs-data-err-logs", 0);
  walk("dat/reader_tests/generated", 0);
  print_message("tables checked: %zu, deletion vectors loaded: %zu\n", g_tables, g_dvs_loaded);
  assert_true(g_tables >= 78);
  assert_true(g_dvs_loaded >= 2);
}

/* ---------- DAT: version, protocol, properties and row counts ---------- */

typedef struct rows_ctx {
  int64_t rows;
  bool missing;
} rows_ctx;

static int rows_cb(void *ctx, const dl_file *f) {
  rows_ctx *c = ctx;
  dl_stats *st = NULL;
  int64_t n = -1;
  if (f->stats && dl_stats_parse(&st, f->stats) == 0) n = dl_stats_num_records(st);
  dl_stats_free(st);
  if (n < 0) c->missing = true;
  else c->rows += n - (f->dv ? f->dv->cardinality : 0);
  return 0;
}

static int64_t expected_rows(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return -1;
  int64_t total = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t n = strlen(e->d_name);
    if (n < 8 || strcmp(e->d_name + n - 8, ".parquet") != 0) continue;
    char p[1024];
    snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
    pq_file *f = NULL;
    assert_int_equal(pq_file_open_path(&f, p), 0);
    total += pq_file_num_rows(f);
    pq_file_free(f);
  }
  closedir(d);
  return total;
}

static size_t g_dat_versions, g_dat_rows_checked;

static void check_dat_version(const char *casedir, const char *sub) {
  char p[1024];
  snprintf(p, sizeof p, "%s/expected/%s/table_version_metadata.json", casedir, sub);
  json_t *meta = json_load_file(p, 0, NULL);
  if (!meta) return;
  int64_t version = json_integer_value(json_object_get(meta, "version"));
  snprintf(p, sizeof p, "%s/delta", casedir);
  dl_snapshot *s = NULL;
  assert_int_equal(open_at(&s, p, strcmp(sub, "latest") ? version : -1), 0);
  assert_int_equal(dl_snapshot_version(s), version);
  const dl_protocol *pr = dl_snapshot_protocol(s);
  assert_int_equal(pr->min_reader_version, json_integer_value(json_object_get(meta, "min_reader_version")));
  assert_int_equal(pr->min_writer_version, json_integer_value(json_object_get(meta, "min_writer_version")));
  json_t *props = json_object_get(meta, "properties");
  const char *k, *v, *c = dl_snapshot_metadata(s)->configuration;
  size_t n = 0;
  while (dl_kv_next(&c, &k, &v)) {
    json_t *want = json_object_get(props, k);
    if (!want) print_message("%s %s: unexpected property %s\n", casedir, sub, k);
    assert_non_null(want);
    assert_string_equal(v, json_string_value(want));
    n++;
  }
  assert_int_equal(n, json_object_size(props));
  rows_ctx rc = {0};
  assert_int_equal(dl_snapshot_files(s, rows_cb, &rc), 0);
  snprintf(p, sizeof p, "%s/expected/%s/table_content", casedir, sub);
  int64_t want_rows = expected_rows(p);
  if (!rc.missing && want_rows >= 0) {
    if (rc.rows != want_rows) print_message("%s %s: %lld rows, want %lld\n", casedir, sub, (long long)rc.rows, (long long)want_rows);
    assert_int_equal(rc.rows, want_rows);
    g_dat_rows_checked++;
  }
  g_dat_versions++;
  dl_snapshot_free(s);
  json_decref(meta);
}

static void test_dat(void **state) {
  (void)state;
  const char *root = FX "/dat/reader_tests/generated";
  DIR *d = opendir(root);
  assert_non_null(d);
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char casedir[1024], exp[1100];
    snprintf(casedir, sizeof casedir, "%s/%s", root, e->d_name);
    snprintf(exp, sizeof exp, "%s/expected", casedir);
    DIR *x = opendir(exp);
    if (!x) continue;
    struct dirent *v;
    while ((v = readdir(x)) != NULL)
      if (v->d_name[0] != '.') check_dat_version(casedir, v->d_name);
    closedir(x);
  }
  closedir(d);
  print_message("DAT versions checked: %zu (row counts: %zu)\n", g_dat_versions, g_dat_rows_checked);
  assert_true(g_dat_versions >= 20);
}

/* ---------- details of particular tables ---------- */

static int pv_cb(void *ctx, const dl_file *f) {
  const char *k, *v, *c = f->partition_values;
  while (dl_kv_next(&c, &k, &v)) {
    if (!v) ++*(int *)ctx;
  }
  return 0;
}

static void test_partitions_schema_txn(void **state) {
  (void)state;
  dl_snapshot *s = NULL;
  assert_int_equal(open_at(&s, FX "/dat/reader_tests/generated/multi_partitioned/delta", -1), 0);
  int nulls = 0;
  assert_int_equal(dl_snapshot_files(s, pv_cb, &nulls), 0);
  assert_true(dl_snapshot_metadata(s)->num_partition_columns > 0);
  dl_snapshot_free(s);
  assert_int_equal(open_at(&s, FX "/delta-rs-data/table_with_column_mapping", -1), 0);
  const dl_type *root = dl_schema_root(dl_snapshot_schema(s));
  assert_true(root->num_fields > 0);
  assert_non_null(root->fields[0].physical_name);
  assert_true(root->fields[0].column_mapping_id > 0);
  dl_snapshot_free(s);
  assert_int_equal(open_at(&s, FX "/dat/reader_tests/generated/timestamp_ntz/delta", -1), 0);
  bool ntz = false;
  root = dl_schema_root(dl_snapshot_schema(s));
  for (size_t i = 0; i < root->num_fields; i++) ntz |= root->fields[i].type->kind == DL_TYPE_TIMESTAMP_NTZ;
  assert_true(ntz);
  dl_snapshot_free(s);
}

static void test_history_and_cdf(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, FX "/delta-rs-data/cdc_ict_table"), 0);
  int64_t *vs = NULL, *ts = NULL;
  size_t n = 0;
  assert_int_equal(dl_commit_timestamps(t, &vs, &ts, &n), 0);
  assert_int_equal(n, 4);
  free(vs);
  free(ts);
  dl_table_free(t);
}

static void test_dv_storage_kinds(void **state) {
  (void)state;
  /* table-with-dv-small: a 'u' descriptor (two deleted rows) in
   * deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin at offset 1 */
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, FX "/delta-rs-data/table-with-dv-small"), 0);
  dl_dv u = {.storage_type = 'u', .path_or_inline = "vBn[lx{q8@P<9BNH/isA", .offset = 1,
             .size_in_bytes = 36, .cardinality = 2, .max_row_index = -1};
  char *p = NULL;
  assert_int_equal(dl_dv_path(&p, &u), 0);
  assert_string_equal(p, "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin");
  free(p);
  dl_rowset r;
  assert_int_equal(dl_dv_load(&r, t, &u), 0);
  assert_int_equal(r.count, 2);
  dl_rowset_free(&r);
  /* the same vector through an absolute 'p' path */
  char abs[1024];
  assert_non_null(realpath(FX "/delta-rs-data/table-with-dv-small/"
                           "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin", abs + 7));
  memcpy(abs, "file://", 7);
  dl_dv pv = u;
  pv.storage_type = 'p';
  pv.path_or_inline = abs;
  assert_int_equal(dl_dv_load(&r, t, &pv), 0);
  assert_int_equal(r.count, 2);
  dl_rowset_free(&r);
  /* a wrong size or cardinality is caught */
  dl_dv bad = u;
  bad.size_in_bytes = 35;
  assert_int_equal(dl_dv_load(&r, t, &bad), DD_ECORRUPT);
  bad = u;
  bad.cardinality = 3;
  assert_int_equal(dl_dv_load(&r, t, &bad), DD_ECORRUPT);
  dl_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_simple_table_versions),
      cmocka_unit_test(test_checkpointed_tables),
      cmocka_unit_test(test_err_logs),
      cmocka_unit_test(test_every_fixture),
      cmocka_unit_test(test_dat),
      cmocka_unit_test(test_partitions_schema_txn),
      cmocka_unit_test(test_history_and_cdf),
      cmocka_unit_test(test_dv_storage_kinds),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
