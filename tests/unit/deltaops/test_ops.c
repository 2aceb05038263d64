/* test_ops.c: store/deltaops on copies of the fixture tables: vacuum (retention, dry run,
 * hidden files, _change_data, empty directories, commits), restore (diff, metrics, missing
 * files, range), history, detail, is-delta, clone (shallow, deep, replace), generate
 * (manifests, stale ones), convert (partitioned Parquet), and vacuum/restore racing a
 * writer. Each result is checked by reopening the table with the engine at the new and
 * old versions and by reading the commits with jansson. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "dop_test_util.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"

/* ---- engine helpers ---- */

static dl_snapshot *open_at(dl_table **t, const char *loc, int64_t version) {
  dl_snapshot *s = NULL;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = version;
  assert_int_equal(dl_table_open(t, loc), 0);
  int rc = dl_snapshot_open(&s, *t, &o);
  if (rc) fprintf(stderr, "open %s@%lld: %s\n", loc, (long long)version, dd_err_msg());
  assert_int_equal(rc, 0);
  return s;
}

typedef struct paths { char *v[4096]; size_t n; } paths;
static int collect(void *ctx, const dl_file *f) {
  paths *p = ctx;
  if (p->n < 4096) p->v[p->n++] = strdup(f->path);
  return 0;
}
static int cmpstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }
static void files_at(paths *p, const char *loc, int64_t version) {
  dl_table *t;
  dl_snapshot *s = open_at(&t, loc, version);
  p->n = 0;
  assert_int_equal(dl_snapshot_files(s, collect, p), 0);
  qsort(p->v, p->n, sizeof p->v[0], cmpstr);
  dl_snapshot_free(s);
  dl_table_free(t);
}
static void paths_free(paths *p) {
  for (size_t i = 0; i < p->n; i++) free(p->v[i]);
  p->n = 0;
}
static void assert_same(const paths *a, const paths *b) {
  assert_int_equal(a->n, b->n);
  for (size_t i = 0; i < a->n; i++) assert_string_equal(a->v[i], b->v[i]);
}

/* ---- vacuum ---- */

static void test_vacuum_default_retention(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  tu_age(d, 30);
  tu_write(d, "_hidden_file", 10);         /* hidden: kept */
  tu_write(d, ".crcish", 10);              /* hidden: kept */
  tu_write(d, "_change_data/cdc-1.parquet", 10);
  tu_write(d, "sub/orphan.parquet", 10);   /* orphan in a directory: goes, dir too */
  tu_write(d, "fresh.parquet", 10);        /* newer than the cutoff: kept */
  tu_age(d, 30);
  char fresh[4096];
  snprintf(fresh, sizeof fresh, "touch '%s/fresh.parquet'", d);
  assert_int_equal(system(fresh), 0);
  paths before;
  files_at(&before, d, 4);
  int total = tu_count(d, ".parquet");

  /* Dry run: lists, deletes nothing, commits nothing. */
  dop_result *r = NULL;
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  o.dry_run = true;
  uint64_t n = 0;
  assert_int_equal(dop_vacuum(&r, d, &o, &n), 0);
  assert_int_equal(r->ncols, 1);
  assert_string_equal(r->cols[0].name, "path");
  assert_int_equal(r->nrows, n);
  assert_int_equal((int)n, total - (int)before.n - 1); /* all but active and fresh */
  assert_int_equal(tu_count(d, ".parquet"), total);
  assert_int_equal(tu_latest_version(d), 4);
  for (size_t i = 0; i < r->nrows; i++) assert_true(dop_result_cell(r, i, 0)->str[0] == '/');
  dop_result_free(r);

  o.dry_run = false;
  assert_int_equal(dop_vacuum(&r, d, &o, &n), 0);
  assert_int_equal(r->nrows, 1);
  assert_string_equal(dop_result_cell(r, 0, 0)->str, d);
  dop_result_free(r);
  assert_int_equal(tu_count(d, ".parquet"), (int)before.n + 1);
  for (size_t i = 0; i < before.n; i++) assert_true(tu_exists(d, before.v[i]));
  assert_true(tu_exists(d, "_hidden_file"));
  assert_true(tu_exists(d, ".crcish"));
  assert_false(tu_exists(d, "_change_data/cdc-1.parquet"));
  assert_false(tu_exists(d, "sub"));
  assert_true(tu_exists(d, "fresh.parquet"));

  /* VACUUM START / END commits, read with jansson. */
  assert_int_equal(tu_latest_version(d), 6);
  json_t *ci = tu_commit_info(d, 5);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "VACUUM START");
  json_t *pa = json_object_get(ci, "operationParameters"), *m = json_object_get(ci, "operationMetrics");
  assert_true(json_is_true(json_object_get(pa, "retentionCheckEnabled")));
  assert_int_equal(json_integer_value(json_object_get(pa, "defaultRetentionMillis")), 604800000);
  assert_null(json_object_get(pa, "specifiedRetentionMillis"));
  char want[32];
  snprintf(want, sizeof want, "%llu", (unsigned long long)n);
  assert_string_equal(json_string_value(json_object_get(m, "numFilesToDelete")), want);
  assert_non_null(json_object_get(m, "sizeOfDataToDelete"));
  json_decref(ci);
  ci = tu_commit_info(d, 6);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "VACUUM END");
  assert_string_equal(json_string_value(json_object_get(json_object_get(ci, "operationParameters"), "status")), "COMPLETED");
  m = json_object_get(ci, "operationMetrics");
  assert_string_equal(json_string_value(json_object_get(m, "numDeletedFiles")), want);
  assert_string_equal(json_string_value(json_object_get(m, "numVacuumedDirectories")), "2"); /* sub, _change_data */
  json_decref(ci);

  /* The table reads the same at the new version and at the old one. */
  paths after;
  files_at(&after, d, 6);
  assert_same(&before, &after);
  paths_free(&after);
  files_at(&after, d, 4);
  assert_same(&before, &after);
  paths_free(&after);

  /* Restoring version 0 now fails: its files were vacuumed. Table untouched. */
  assert_int_equal(dop_restore(&r, d, 0, NULL), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "no longer exists"));
  assert_null(r);
  assert_int_equal(tu_latest_version(d), 6);
  paths_free(&before);
  tu_rmrf(d);
  free(d);
}

static void test_vacuum_retention_check(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  tu_age(d, 2);
  int total = tu_count(d, ".parquet");
  dop_result *r = NULL;
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  o.has_retention = true;
  o.retention_hours = 1;
  assert_int_equal(dop_vacuum(&r, d, &o, NULL), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "deletedFileRetentionDuration"));
  assert_int_equal(tu_latest_version(d), 4);
  assert_int_equal(tu_count(d, ".parquet"), total);
  o.retention_hours = -1;
  o.retention_check = false;
  assert_int_equal(dop_vacuum(&r, d, &o, NULL), DD_EINVAL);
  /* Default retention (7 days): files 2 days old stay. */
  uint64_t n = 99;
  o.has_retention = false;
  assert_int_equal(dop_vacuum(&r, d, &o, &n), 0);
  dop_result_free(r);
  assert_int_equal(n, 0);
  assert_int_equal(tu_count(d, ".parquet"), total);
  /* Retention 0 with the check off: the unreferenced ones go. */
  o.has_retention = true;
  o.retention_hours = 0;
  assert_int_equal(dop_vacuum(&r, d, &o, &n), 0);
  dop_result_free(r);
  paths p;
  files_at(&p, d, -1);
  assert_int_equal(tu_count(d, ".parquet"), (int)p.n);
  json_t *ci = tu_commit_info(d, tu_latest_version(d) - 1);
  assert_int_equal(json_integer_value(json_object_get(json_object_get(ci, "operationParameters"), "specifiedRetentionMillis")), 0);
  assert_true(json_is_false(json_object_get(json_object_get(ci, "operationParameters"), "retentionCheckEnabled")));
  json_decref(ci);
  paths_free(&p);
  tu_rmrf(d);
  free(d);
}

static void test_vacuum_keeps_dv(void **st) {
  (void)st;
  char *d = tu_copy_fixture("table-with-dv-small");
  tu_age(d, 30);
  dop_result *r = NULL;
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  uint64_t n = 9;
  assert_int_equal(dop_vacuum(&r, d, &o, &n), 0);
  dop_result_free(r);
  assert_int_equal(n, 0);
  assert_int_equal(tu_count(d, ".bin"), 1);
  assert_int_equal(tu_count(d, ".parquet"), 1);
  tu_rmrf(d);
  free(d);
}

static void test_vacuum_not_delta(void **st) {
  (void)st;
  char *d = tu_tmpdir();
  dop_result *r = NULL;
  assert_int_equal(dop_vacuum(&r, d, NULL, NULL), DD_ENOTFOUND);
  assert_non_null(strstr(dd_err_msg(), "not a Delta table"));
  assert_int_equal(dop_vacuum(&r, "/nonexistent/dop/x", NULL, NULL), DD_ENOTFOUND);
  tu_rmrf(d);
  free(d);
}

/* ---- restore ---- */

static void test_restore(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  paths v0, v4, now;
  files_at(&v0, d, 0);
  files_at(&v4, d, 4);
  dop_result *r = NULL;
  assert_int_equal(dop_restore(&r, d, 9, NULL), DD_ERANGE);
  assert_int_equal(tu_latest_version(d), 4);
  assert_int_equal(dop_restore(&r, d, 0, NULL), 0);
  assert_int_equal(r->ncols, 6);
  assert_string_equal(r->cols[0].name, "table_size_after_restore");
  assert_string_equal(r->cols[5].name, "restored_files_size");
  assert_int_equal(dop_result_cell(r, 0, 1)->i64, (int64_t)v0.n);
  int64_t removed = dop_result_cell(r, 0, 2)->i64, restored = dop_result_cell(r, 0, 3)->i64;
  assert_true(removed > 0 && restored > 0);
  assert_int_equal(tu_latest_version(d), 5);
  files_at(&now, d, 5);
  assert_same(&now, &v0);
  paths_free(&now);
  files_at(&now, d, 4);
  assert_same(&now, &v4);
  paths_free(&now);
  json_t *ci = tu_commit_info(d, 5);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "RESTORE");
  json_t *m = json_object_get(ci, "operationMetrics");
  char want[32];
  snprintf(want, sizeof want, "%lld", (long long)removed);
  assert_string_equal(json_string_value(json_object_get(m, "numRemovedFiles")), want);
  snprintf(want, sizeof want, "%lld", (long long)restored);
  assert_string_equal(json_string_value(json_object_get(m, "numRestoredFiles")), want);
  const char *keys[] = {"tableSizeAfterRestore", "numOfFilesAfterRestore", "removedFilesSize", "restoredFilesSize"};
  for (int i = 0; i < 4; i++) assert_non_null(json_object_get(m, keys[i]));
  assert_string_equal(json_string_value(json_object_get(json_object_get(ci, "operationParameters"), "version")), "0");
  json_decref(ci);
  dop_result_free(r);
  /* By timestamp: far in the past -> out of range; now -> the latest (no-op diff). */
  assert_int_equal(dop_restore(&r, d, -1, "1990-01-01"), DD_ERANGE);
  assert_int_equal(dop_restore(&r, d, -1, "not a time"), DD_EINVAL);
  assert_int_equal(tu_latest_version(d), 5);
  paths_free(&v0);
  paths_free(&v4);
  tu_rmrf(d);
  free(d);
}

/* ---- history / detail / is-delta ---- */

static void test_history_detail(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  dop_result *r = NULL;
  assert_int_equal(dop_history(&r, d, 0), 0);
  assert_int_equal(r->ncols, 15);
  assert_string_equal(r->cols[4].name, "operation");
  assert_string_equal(r->cols[5].type, "map<string,string>");
  assert_int_equal(r->nrows, 5);
  assert_int_equal(dop_result_cell(r, 0, 0)->i64, 4);
  assert_string_equal(dop_result_cell(r, 0, 4)->str, "DELETE");
  assert_int_equal(dop_result_cell(r, 0, 9)->i64, 3); /* readVersion */
  json_t *params = json_loads(dop_result_cell(r, 0, 5)->str, 0, NULL);
  assert_true(json_is_string(json_object_get(params, "predicate")));
  json_decref(params);
  dop_result_free(r);
  assert_int_equal(dop_history(&r, d, 2), 0);
  assert_int_equal(r->nrows, 2);
  dop_result_free(r);

  assert_int_equal(dop_detail(&r, d), 0);
  assert_int_equal(r->nrows, 1);
  assert_string_equal(dop_result_cell(r, 0, 0)->str, "delta");
  assert_string_equal(dop_result_cell(r, 0, 4)->str, d);
  paths p;
  files_at(&p, d, -1);
  assert_int_equal(dop_result_cell(r, 0, 9)->i64, (int64_t)p.n);
  assert_int_equal(dop_result_cell(r, 0, 12)->i64, 1);
  assert_int_equal(dop_result_cell(r, 0, 13)->i64, 2);
  assert_string_equal(dop_result_cell(r, 0, 14)->str, "[\"appendOnly\",\"invariants\"]");
  assert_string_equal(r->cols[15].name, "version");
  assert_int_equal(dop_result_cell(r, 0, 15)->i64, 4);
  paths_free(&p);
  dop_result_free(r);
  /* an older snapshot, by version and by timestamp (ERANGE before the first commit) */
  files_at(&p, d, 1);
  assert_int_equal(dop_detail_at(&r, d, 1, NULL), 0);
  assert_int_equal(dop_result_cell(r, 0, 15)->i64, 1);
  assert_int_equal(dop_result_cell(r, 0, 9)->i64, (int64_t)p.n);
  paths_free(&p);
  dop_result_free(r);
  assert_int_equal(dop_detail_at(&r, d, -1, "2001-01-01T00:00:00Z"), DD_ERANGE);
  assert_int_equal(dop_detail_at(&r, d, -1, "yesterday"), DD_EINVAL);
  assert_null(r);

  assert_int_equal(dop_is_delta(&r, d), 0);
  assert_int_equal(dop_result_cell(r, 0, 0)->i64, 1);
  dop_result_free(r);
  assert_int_equal(dop_is_delta(&r, "/tmp"), 0);
  assert_int_equal(dop_result_cell(r, 0, 0)->i64, 0);
  dop_result_free(r);
  tu_rmrf(d);
  free(d);
}

static void test_resolve(void **st) {
  (void)st;
  char *p = NULL;
  assert_int_equal(dop_resolve_table(&p, "delta.`/a/b/`", false), 0);
  assert_string_equal(p, "/a/b");
  free(p);
  assert_int_equal(dop_resolve_table(&p, "file:///x/y", false), 0);
  assert_string_equal(p, "/x/y");
  free(p);
  assert_int_equal(dop_resolve_table(&p, "parquet.`/x`", false), DD_EINVAL);
  assert_int_equal(dop_resolve_table(&p, "parquet.`/x`", true), 0);
  free(p);
  assert_int_equal(dop_resolve_table(&p, "main.default.t", false), DD_ENOTFOUND);
  assert_non_null(strstr(dd_err_msg(), "registry"));
  assert_int_equal(dop_resolve_table(&p, "relative/path", false), DD_ENOTFOUND);
}

/* ---- clone ---- */

static void test_clone(void **st) {
  (void)st;
  char *src = tu_copy_fixture("simple_table"), *base = tu_tmpdir(), shallow[4096], deep[4096];
  snprintf(shallow, sizeof shallow, "%s/shallow", base);
  snprintf(deep, sizeof deep, "%s/deep", base);
  paths v2, got;
  files_at(&v2, src, 2);
  dop_result *r = NULL;
  dop_clone_opts o = DOP_CLONE_OPTS_INIT;
  const char *k[] = {"delta.appendOnly"}, *v[] = {"false"};
  o.target = shallow;
  o.version = 2;
  o.num_properties = 1;
  o.property_keys = k;
  o.property_values = v;
  assert_int_equal(dop_clone(&r, src, &o), 0);
  assert_string_equal(r->cols[0].name, "source_table_size");
  assert_int_equal(dop_result_cell(r, 0, 1)->i64, (int64_t)v2.n);
  assert_int_equal(dop_result_cell(r, 0, 3)->i64, 0); /* shallow copies nothing */
  dop_result_free(r);
  files_at(&got, shallow, 0);
  assert_int_equal(got.n, v2.n);
  for (size_t i = 0; i < got.n; i++) {
    assert_non_null(strstr(got.v[i], src)); /* absolute paths into the source */
    assert_true(tu_exists("/", got.v[i] + strlen("file://")));
  }
  paths_free(&got);
  dl_table *t;
  dl_snapshot *s = open_at(&t, shallow, 0), *s0 = NULL;
  dl_table *st0;
  s0 = open_at(&st0, src, 2);
  assert_string_not_equal(dl_snapshot_metadata(s)->id, dl_snapshot_metadata(s0)->id);
  assert_string_equal(dl_snapshot_property(s, "delta.appendOnly"), "false");
  dl_snapshot_free(s);
  dl_table_free(t);
  dl_snapshot_free(s0);
  dl_table_free(st0);
  json_t *ci = tu_commit_info(shallow, 0);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "CLONE");
  assert_string_equal(json_string_value(json_object_get(json_object_get(ci, "operationParameters"), "sourceVersion")), "2");
  assert_non_null(json_object_get(json_object_get(ci, "operationMetrics"), "sourceNumOfFiles"));
  json_decref(ci);
  /* Existing target without replace. */
  assert_int_equal(dop_clone(&r, src, &o), DD_EEXISTS);
  assert_int_equal(tu_latest_version(shallow), 0);
  /* Replace with the latest version. */
  o.replace = true;
  o.version = -1;
  assert_int_equal(dop_clone(&r, src, &o), 0);
  assert_int_equal(dop_result_cell(r, 0, 2)->i64, (int64_t)v2.n); /* removed the old ones */
  dop_result_free(r);
  assert_int_equal(tu_latest_version(shallow), 1);
  /* Deep clone copies the files. */
  o.target = deep;
  o.shallow = false;
  o.replace = false;
  o.num_properties = 0;
  assert_int_equal(dop_clone(&r, src, &o), 0);
  int64_t copied = dop_result_cell(r, 0, 3)->i64;
  dop_result_free(r);
  files_at(&got, deep, 0);
  assert_int_equal((int64_t)got.n, copied);
  for (size_t i = 0; i < got.n; i++) assert_true(tu_exists(deep, got.v[i]));
  assert_int_equal(tu_count(deep, ".parquet"), (int)got.n);
  paths_free(&got);
  /* Version beyond the latest. */
  o.target = shallow;
  o.version = 40;
  o.replace = true;
  assert_int_equal(dop_clone(&r, src, &o), DD_ERANGE);
  paths_free(&v2);
  tu_rmrf(src);
  tu_rmrf(base);
  free(src);
  free(base);
}

/* ---- generate ---- */

static void test_generate(void **st) {
  (void)st;
  char *d = tu_copy_fixture("delta-0.8.0-partitioned");
  tu_write(d, "_symlink_format_manifest/year=1999/month=1/day=1/manifest", 5);
  dop_result *r = NULL;
  assert_int_equal(dop_generate(&r, d, "other"), DD_EINVAL);
  assert_int_equal(dop_generate(&r, d, "symlink_format_manifest"), 0);
  dop_result_free(r);
  assert_false(tu_exists(d, "_symlink_format_manifest/year=1999"));
  paths p;
  files_at(&p, d, -1);
  /* Every active file is listed exactly once across the manifests. */
  char cmd[4096];
  snprintf(cmd, sizeof cmd, "cat $(find '%s/_symlink_format_manifest' -name manifest) | sort -u | wc -l", d);
  FILE *f = popen(cmd, "r");
  int lines = 0;
  assert_int_equal(fscanf(f, "%d", &lines), 1);
  pclose(f);
  assert_int_equal(lines, (int)p.n);
  for (size_t i = 0; i < p.n; i++) {
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", p.v[i]);
    *strrchr(dir, '/') = '\0';
    char rel[1200];
    snprintf(rel, sizeof rel, "_symlink_format_manifest/%s/manifest", dir);
    assert_true(tu_exists(d, rel));
  }
  paths_free(&p);
  tu_rmrf(d);
  free(d);
}

/* ---- convert ---- */

static void test_convert(void **st) {
  (void)st;
  char *d = tu_copy_fixture("delta-0.8.0-partitioned");
  paths want;
  files_at(&want, d, -1);
  char log[4200];
  snprintf(log, sizeof log, "%s/_delta_log", d);
  tu_rmrf(log);
  dop_result *r = NULL;
  char ident[4200];
  snprintf(ident, sizeof ident, "parquet.`%s`", d);
  assert_int_equal(dop_convert(&r, ident, NULL, NULL, NULL), DD_EINVAL); /* partition dirs need a schema */
  assert_int_equal(dop_convert(&r, ident, "year STRING, month STRING, day STRING", NULL, NULL), 0);
  char expect[4200];
  snprintf(expect, sizeof expect, "delta.`%s`", d);
  assert_string_equal(dop_result_cell(r, 0, 0)->str, expect);
  dop_result_free(r);
  paths got;
  files_at(&got, d, 0);
  assert_same(&got, &want);
  dl_table *t;
  dl_snapshot *s = open_at(&t, d, 0);
  assert_int_equal(dl_snapshot_metadata(s)->num_partition_columns, 3);
  assert_non_null(dl_schema_field(dl_snapshot_schema(s), "value"));
  assert_non_null(dl_schema_field(dl_snapshot_schema(s), "day"));
  dl_snapshot_free(s);
  dl_table_free(t);
  json_t *ci = tu_commit_info(d, 0);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "CONVERT");
  assert_string_equal(json_string_value(json_object_get(json_object_get(ci, "operationParameters"), "partitionedBy")),
                      "[\"year\",\"month\",\"day\"]");
  json_decref(ci);
  /* Again: already Delta, no new version. */
  assert_int_equal(dop_convert(&r, ident, "year STRING, month STRING, day STRING", NULL, NULL), 0);
  dop_result_free(r);
  assert_int_equal(tu_latest_version(d), 0);
  paths_free(&got);
  paths_free(&want);
  tu_rmrf(d);
  free(d);
}

/* ---- concurrency ---- */

typedef struct writer {
  const char *loc;
  int commits, conflicts;
  char names[64][64];
} writer;

static void *writer_main(void *arg) {
  writer *w = arg;
  for (int i = 0; i < 40; i++) {
    char rel[64];
    snprintf(rel, sizeof rel, "w-%02d.parquet", i);
    tu_write(w->loc, rel, 100);
    dl_table *t = NULL;
    dl_snapshot *s = NULL;
    dl_txn *x = NULL;
    dl_table_open(&t, w->loc);
    int rc = dl_snapshot_open(&s, t, NULL);
    dl_file f = {.path = rel, .size = 100, .modification_time = -1, .deletion_timestamp = -1,
                 .data_change = true, .partition_values = "", .base_row_id = -1,
                 .default_row_commit_version = -1};
    if (!rc) rc = dl_txn_begin(&x, t, s);
    if (!rc) rc = dl_txn_add_file(x, &f);
    if (!rc) rc = dl_txn_commit(x, NULL, NULL);
    if (!rc) snprintf(w->names[w->commits++], 64, "%s", rel);
    else if (rc == DD_ECONFLICT) w->conflicts++;
    dl_txn_free(x);
    dl_snapshot_free(s);
    dl_table_free(t);
  }
  return NULL;
}

static void test_vacuum_races_writer(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  tu_age(d, 30);
  writer w = {.loc = d};
  pthread_t th;
  pthread_create(&th, NULL, writer_main, &w);
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  o.has_retention = true;
  o.retention_hours = 0;
  o.retention_check = false;
  for (int i = 0; i < 5; i++) {
    dop_result *r = NULL;
    int rc = dop_vacuum(&r, d, &o, NULL);
    assert_true(rc == 0 || rc == DD_ECONFLICT);
    dop_result_free(r);
  }
  pthread_join(th, NULL);
  assert_true(w.commits > 0);
  for (int i = 0; i < w.commits; i++) assert_true(tu_exists(d, w.names[i]));
  paths p;
  files_at(&p, d, -1);
  for (size_t i = 0; i < p.n; i++) assert_true(tu_exists(d, p.v[i]));
  paths_free(&p);
  tu_rmrf(d);
  free(d);
}

static void test_restore_conflict(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  writer w = {.loc = d};
  pthread_t th;
  pthread_create(&th, NULL, writer_main, &w);
  int ok = 0, conflicts = 0;
  for (int i = 0; i < 6; i++) {
    dop_result *r = NULL;
    int rc = dop_restore(&r, d, i % 2 ? 0 : 4, NULL);
    if (rc == DD_ECONFLICT) conflicts++;
    else if (rc == 0) ok++;
    else fail_msg("restore: %s", dd_err_msg());
    dop_result_free(r);
  }
  pthread_join(th, NULL);
  assert_true(ok + conflicts == 6);
  /* Every file the latest snapshot references exists; the writer's commits that were not
   * undone by a later restore are still in the table. */
  paths p;
  files_at(&p, d, -1);
  for (size_t i = 0; i < p.n; i++) assert_true(tu_exists(d, p.v[i]));
  paths_free(&p);
  tu_rmrf(d);
  free(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vacuum_default_retention),
      cmocka_unit_test(test_vacuum_retention_check),
      cmocka_unit_test(test_vacuum_keeps_dv),
      cmocka_unit_test(test_vacuum_not_delta),
      cmocka_unit_test(test_restore),
      cmocka_unit_test(test_history_detail),
      cmocka_unit_test(test_resolve),
      cmocka_unit_test(test_clone),
      cmocka_unit_test(test_generate),
      cmocka_unit_test(test_convert),
      cmocka_unit_test(test_vacuum_races_writer),
      cmocka_unit_test(test_restore_conflict),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
