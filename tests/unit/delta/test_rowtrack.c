/* test_rowtrack.c: row tracking in commits (PROTOCOL.md "Row Tracking"): fresh adds get
 * baseRowId from the high-water mark and the commit's version as defaultRowCommitVersion,
 * the delta.rowTracking domain moves in the same commit, adds that carry their ids keep
 * them, a commit that lost a race reassigns above the winner's mark, a suspended table
 * gets none, and a table without the feature gets none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/delta/dl_internal.h"
#include "tests/unit/tmp_dir.h"

static char g_dir[256];

static int setup(void **state) {
  (void)state;
  return tu_tmp_dir_make(g_dir, "dl_rowtrack_");
}

static int teardown(void **state) {
  (void)state;
  return tu_tmp_dir_remove(g_dir);
}

static const char *SCHEMA = "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\","
                            "\"nullable\":true,\"metadata\":{}}]}";

static void create(dl_table *t, bool feature, const char *config) {
  dl_txn *x = NULL;
  assert_int_equal(dl_txn_begin(&x, t, NULL), 0);
  const char *wf[] = {"domainMetadata", "rowTracking"};
  dl_protocol p = {1, 7, 0, feature ? 2 : 1, NULL, wf};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  dl_metadata_spec md = {.schema_string = SCHEMA, .configuration = config, .created_time = -1};
  assert_int_equal(dl_txn_set_metadata(x, &md), 0);
  int64_t v = -1;
  assert_int_equal(dl_txn_commit(x, NULL, &v), 0);
  dl_txn_free(x);
}

static dl_file file(const char *path, const char *stats) {
  return (dl_file){.path = path, .size = 10, .modification_time = 1, .deletion_timestamp = -1,
                   .data_change = true, .stats = stats, .partition_values = "",
                   .base_row_id = -1, .default_row_commit_version = -1};
}

typedef struct seen {
  int64_t base[8], ver[8];
  const char *path[8];
  size_t n;
} seen;

static int seen_cb(void *ctx, const dl_file *f) {
  seen *s = ctx;
  if (s->n < 8) {
    s->path[s->n] = f->path;
    s->base[s->n] = f->base_row_id;
    s->ver[s->n++] = f->default_row_commit_version;
  }
  return 0;
}

static int64_t base_of(const seen *s, const char *path) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->path[i], path)) return s->base[i];
  return -2;
}

static int64_t ver_of(const seen *s, const char *path) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->path[i], path)) return s->ver[i];
  return -2;
}

static dl_snapshot *latest(dl_table *t) {
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  return s;
}

/* *s replaced by the latest snapshot, its files' ids in *sn. */
static void reread(dl_table *t, dl_snapshot **s, seen *sn) {
  dl_snapshot_free(*s);
  *s = latest(t);
  sn->n = 0;
  dl_snapshot_files(*s, seen_cb, sn);
}

static void test_assign_and_keep(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create(t, true, NULL);
  dl_snapshot *s = latest(t);
  dl_txn *x = NULL;
  dl_txn_begin(&x, t, s);
  dl_file a = file("a.parquet", "{\"numRecords\":3}"), b = file("b.parquet", "{\"numRecords\":2}");
  assert_int_equal(dl_txn_add_file(x, &a), 0);
  assert_int_equal(dl_txn_add_file(x, &b), 0);
  int64_t v = -1;
  assert_int_equal(dl_txn_commit(x, NULL, &v), 0);
  dl_txn_free(x);
  seen sn = {0};
  reread(t, &s, &sn);
  assert_int_equal(base_of(&sn, "a.parquet"), 0);
  assert_int_equal(base_of(&sn, "b.parquet"), 3);
  assert_int_equal(ver_of(&sn, "a.parquet"), 1);
  assert_int_equal(dl__rt_snapshot_hwm(s), 4);
  /* a re-add that carries its ids (a deletion vector's) keeps them; a new file goes on */
  dl_txn_begin(&x, t, s);
  dl_file ra = a;
  ra.base_row_id = 0;
  ra.default_row_commit_version = 1;
  dl_file c = file("c.parquet", "{\"numRecords\":1}");
  assert_int_equal(dl_txn_remove_file(x, &ra), 0);
  assert_int_equal(dl_txn_add_file(x, &ra), 0);
  assert_int_equal(dl_txn_add_file(x, &c), 0);
  assert_int_equal(dl_txn_commit(x, NULL, &v), 0);
  dl_txn_free(x);
  reread(t, &s, &sn);
  assert_int_equal(base_of(&sn, "a.parquet"), 0);
  assert_int_equal(ver_of(&sn, "a.parquet"), 1);
  assert_int_equal(base_of(&sn, "c.parquet"), 5);
  assert_int_equal(ver_of(&sn, "c.parquet"), 2);
  assert_int_equal(dl__rt_snapshot_hwm(s), 5);
  /* an add without numRecords cannot get ids: refused, nothing committed */
  dl_txn_begin(&x, t, s);
  dl_file d = file("d.parquet", NULL);
  assert_int_equal(dl_txn_add_file(x, &d), 0);
  assert_int_equal(dl_txn_commit(x, NULL, &v), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "numRecords"));
  dl_txn_free(x);
  dl_snapshot_free(s);
  s = latest(t);
  assert_int_equal(dl_snapshot_version(s), 2);
  dl_snapshot_free(s);
  dl_table_free(t);
}

static void test_race_reassigns(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create(t, true, NULL);
  dl_snapshot *s = latest(t);
  dl_txn *x = NULL, *y = NULL;
  dl_txn_begin(&x, t, s);
  dl_txn_begin(&y, t, s);
  dl_file a = file("a.parquet", "{\"numRecords\":4}"), b = file("b.parquet", "{\"numRecords\":2}");
  dl_txn_add_file(x, &a);
  dl_txn_add_file(y, &b);
  int64_t v = -1;
  assert_int_equal(dl_txn_commit(x, NULL, &v), 0);
  assert_int_equal(dl_txn_commit(y, NULL, &v), 0);
  assert_int_equal(v, 2);
  dl_txn_free(x);
  dl_txn_free(y);
  seen sn = {0};
  reread(t, &s, &sn);
  assert_int_equal(base_of(&sn, "a.parquet"), 0);
  assert_int_equal(base_of(&sn, "b.parquet"), 4);
  assert_int_equal(ver_of(&sn, "b.parquet"), 2);
  assert_int_equal(dl__rt_snapshot_hwm(s), 5);
  dl_snapshot_free(s);
  dl_table_free(t);
}

static void test_suspended_and_unsupported(void **state) {
  (void)state;
  for (int k = 0; k < 2; k++) {
    char dir[300];
    snprintf(dir, sizeof dir, "%s/t%d", g_dir, k);
    dl_table *t = NULL;
    assert_int_equal(dl_table_open(&t, dir), 0);
    create(t, k == 0, k == 0 ? "delta.rowTrackingSuspended\0true\0" : NULL);
    dl_snapshot *s = latest(t);
    dl_txn *x = NULL;
    dl_txn_begin(&x, t, s);
    dl_file a = file("a.parquet", "{\"numRecords\":4}");
    dl_txn_add_file(x, &a);
    int64_t v = -1;
    assert_int_equal(dl_txn_commit(x, NULL, &v), 0);
    dl_txn_free(x);
    seen sn = {0};
    reread(t, &s, &sn);
    assert_int_equal(base_of(&sn, "a.parquet"), -1);
    assert_int_equal(ver_of(&sn, "a.parquet"), -1);
    assert_int_equal(dl_snapshot_num_domains(s), 0);
    dl_snapshot_free(s);
    dl_table_free(t);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_assign_and_keep, setup, teardown),
      cmocka_unit_test_setup_teardown(test_race_reassigns, setup, teardown),
      cmocka_unit_test_setup_teardown(test_suspended_and_unsupported, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
