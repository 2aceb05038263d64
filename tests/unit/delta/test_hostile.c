/* test_hostile.c: the log as hostile input and the log directory after crashes: sizes
 * that overflow when summed or are negative (JSON commits and checkpoints), versions and
 * timestamps at the edges of int64, and stale temp files that killed writers leave in
 * _delta_log (removed once older than DL_STALE_TMP_MS, at checkpoint time and by the log
 * cleanup; fresh ones and names not of our pattern are kept). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/delta/dl_internal.h"

static char g_dir[256];

static int setup(void **state) {
  (void)state;
  strcpy(g_dir, "/tmp/dl_hostile_XXXXXX");
  if (!mkdtemp(g_dir)) return -1;
  char p[512];
  snprintf(p, sizeof p, "%s/_delta_log", g_dir);
  return mkdir(p, 0777);
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void put(const char *rel, const char *content) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", g_dir, rel);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(content, f);
  fclose(f);
}

static void age(const char *rel, int64_t seconds) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", g_dir, rel);
  struct timespec ts[2] = {{time(NULL) - seconds, 0}, {time(NULL) - seconds, 0}};
  assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
}

static bool exists(const char *rel) {
  char p[512];
  struct stat sb;
  snprintf(p, sizeof p, "%s/%s", g_dir, rel);
  return lstat(p, &sb) == 0;
}

#define V0 "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n" \
  "{\"metaData\":{\"id\":\"x\",\"format\":{\"provider\":\"parquet\",\"options\":{}}," \
  "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\"," \
  "\"partitionColumns\":[],\"configuration\":{},\"createdTime\":1}}\n"
#define ADD(p, sz) "{\"add\":{\"path\":\"" p "\",\"partitionValues\":{},\"size\":" sz \
  ",\"modificationTime\":1,\"dataChange\":true}}\n"

static int open_latest(dl_snapshot **s) {
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  int rc = dl_snapshot_open(s, t, NULL);
  dl_table_free(t);
  return rc;
}

/* Two adds of 9e18 bytes: their sum does not fit int64. Corrupt, not a wrapped size. */
static void test_size_overflow_json(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json", V0);
  put("_delta_log/00000000000000000001.json",
      ADD("a.parquet", "9000000000000000000") ADD("b.parquet", "9000000000000000000"));
  dl_snapshot *s = NULL;
  assert_int_equal(open_latest(&s), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "size"));
  assert_null(s);
}

/* The same sum spread over two commits (one entry replaced, one added). */
static void test_size_overflow_two_commits(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json", V0 ADD("a.parquet", "9000000000000000000"));
  put("_delta_log/00000000000000000001.json", ADD("b.parquet", "9000000000000000000"));
  dl_snapshot *s = NULL;
  assert_int_equal(open_latest(&s), DD_ECORRUPT);
  assert_null(s);
}

/* Sizes read back from a checkpoint plus a later commit overflow together. */
static void test_size_overflow_checkpoint(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json",
      V0 ADD("a.parquet", "4000000000000000000") ADD("b.parquet", "4000000000000000000"));
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  int rc = dl_checkpoint_write(t, s);
  dl_snapshot_free(s);
  if (rc == DD_EUNSUPPORTED) {
    dl_table_free(t);
    skip();
  }
  assert_int_equal(rc, 0);
  put("_delta_log/00000000000000000001.json", ADD("c.parquet", "4000000000000000000"));
  dl_table_free(t);
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "add up"));
  dl_table_free(t);
}

/* The cache's incremental refresh (an overlay on the cached files) sums sizes too. */
static void test_size_overflow_cache(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json",
      V0 ADD("a.parquet", "4000000000000000000") ADD("b.parquet", "4000000000000000000"));
  dl_cache *c = NULL;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  assert_int_equal(dl_cache_new(&c, 1 << 20), 0);
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  assert_int_equal(dl_cache_get(c, t, &s), 0);
  dl_snapshot_free(s);
  s = NULL;
  put("_delta_log/00000000000000000001.json", ADD("c.parquet", "4000000000000000000"));
  assert_int_equal(dl_cache_get(c, t, &s), DD_ECORRUPT);
  assert_null(s);
  dl_table_free(t);
  dl_cache_free(c);
}

/* An add with a negative size is corrupt; the largest single size is fine. */
static void test_negative_size(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json", V0 ADD("a.parquet", "-5"));
  dl_snapshot *s = NULL;
  assert_int_equal(open_latest(&s), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "negative"));
  put("_delta_log/00000000000000000000.json", V0 ADD("a.parquet", "9223372036854775807"));
  assert_int_equal(open_latest(&s), 0);
  assert_int_equal(dl_snapshot_size_bytes(s), INT64_MAX);
  dl_snapshot_free(s);
}

/* Temp files of killed writers: ours and old go at checkpoint time; fresh ones, other
 * names and directories stay. */
static void test_stale_temps(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json", V0);
  const char *old_ours[] = {"_delta_log/.00000000000000000003.json.4242.7.tmp",
                            "_delta_log/._last_checkpoint.4242.9.tmp",
                            "_delta_log/.00000000000000000002.checkpoint.parquet.77.0.tmp"};
  const char *kept[] = {"_delta_log/.00000000000000000004.json.4242.8.tmp", /* fresh */
                        "_delta_log/.notours.tmp", "_delta_log/keep.1.2.tmp",
                        "_delta_log/.00000000000000000005.json.x.1.tmp"};
  for (size_t i = 0; i < 3; i++) put(old_ours[i], "x"), age(old_ours[i], 2 * 3600);
  for (size_t i = 0; i < 4; i++) put(kept[i], "x"), age(kept[i], i ? 2 * 3600 : 60);
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  for (int v = 1; v <= 10; v++) {
    dl_snapshot *s = NULL;
    dl_txn *x = NULL;
    assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
    assert_int_equal(dl_txn_begin(&x, t, s), 0);
    char path[32];
    snprintf(path, sizeof path, "f%d.parquet", v);
    dl_file f = {.path = path, .size = 10, .modification_time = 1, .deletion_timestamp = -1,
                 .data_change = true, .partition_values = "\0", .base_row_id = -1,
                 .default_row_commit_version = -1};
    assert_int_equal(dl_txn_add_file(x, &f), 0);
    int64_t got = -1;
    assert_int_equal(dl_txn_commit(x, NULL, &got), 0);
    assert_int_equal(got, v);
    dl_txn_free(x);
    dl_snapshot_free(s);
    if (v == 9) for (size_t i = 0; i < 3; i++) assert_true(exists(old_ours[i]));
  }
  for (size_t i = 0; i < 3; i++) assert_false(exists(old_ours[i]));
  for (size_t i = 0; i < 4; i++) assert_true(exists(kept[i]));
  /* dl_log_cleanup removes them too. */
  put(old_ours[0], "x");
  age(old_ours[0], 2 * 3600);
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_log_cleanup(t, s, dl__now_ms(), NULL), 0);
  assert_false(exists(old_ours[0]));
  assert_true(exists(kept[0]));
  dl_snapshot_free(s);
  dl_table_free(t);
}

/* Versions and timestamps at the int64 edge: refused, not wrapped. */
static void test_version_edges(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json", V0);
  dl_snapshot *s = NULL;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = INT64_MAX;
  assert_int_equal(dl_snapshot_open(&s, t, &o), DD_ERANGE);
  o.version = -1;
  o.timestamp_ms = INT64_MAX; /* after the last commit: refused, as Delta's time travel does */
  assert_int_equal(dl_snapshot_open(&s, t, &o), DD_ERANGE);
  assert_non_null(strstr(dd_err_msg(), "after the latest version 0"));
  assert_null(s);
  o.timestamp_ms = INT64_MIN + 1;
  assert_int_equal(dl_snapshot_open(&s, t, &o), DD_ERANGE);
  /* A log retention that overflows milliseconds, and a clock at the edge: nothing goes. */
  put("_delta_log/00000000000000000001.json",
      "{\"metaData\":{\"id\":\"x\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
      "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\","
      "\"partitionColumns\":[],\"configuration\":{\"delta.logRetentionDuration\":"
      "\"interval 9223372036854775807 weeks\"},\"createdTime\":1}}\n");
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  size_t deleted = 1;
  assert_int_equal(dl_log_cleanup(t, s, INT64_MIN + 1, &deleted), 0);
  assert_int_equal(deleted, 0);
  assert_int_equal(dl_log_cleanup(t, s, dl__now_ms(), &deleted), 0);
  assert_int_equal(deleted, 0);
  dl_snapshot_free(s);
  dl_table_free(t);
}

/* Time travel by timestamp: at or before the latest commit opens the version committed
 * then; one millisecond after it is DD_ERANGE (it was the latest version before). */
static void test_timestamp_after_latest(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json", V0);
  put("_delta_log/00000000000000000001.json", ADD("a.parquet", "10"));
  age("_delta_log/00000000000000000000.json", 7200);
  age("_delta_log/00000000000000000001.json", 3600);
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  int64_t *vs = NULL, *ts = NULL;
  size_t n = 0;
  assert_int_equal(dl_commit_timestamps(t, &vs, &ts, &n), 0);
  assert_int_equal(n, 2);
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.timestamp_ms = ts[1];
  assert_int_equal(dl_snapshot_open(&s, t, &o), 0);
  assert_int_equal(dl_snapshot_version(s), 1);
  dl_snapshot_free(s);
  o.timestamp_ms = ts[1] - 1;
  assert_int_equal(dl_snapshot_open(&s, t, &o), 0);
  assert_int_equal(dl_snapshot_version(s), 0);
  dl_snapshot_free(s);
  o.timestamp_ms = ts[1] + 1;
  assert_int_equal(dl_snapshot_open(&s, t, &o), DD_ERANGE);
  assert_non_null(strstr(dd_err_msg(), "after the latest version 1"));
  free(vs);
  free(ts);
  dl_table_free(t);
}

/* A checkpoint that reads but has no metaData (or no protocol) is DATA_LOSS naming it, as
 * Delta and delta-kernel-rs treat it; the commits before it are not replayed instead. A
 * checkpoint that cannot be read at all still falls back to the commits. */
static void test_checkpoint_without_metadata(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json", V0);
  put("_delta_log/00000000000000000001.json", ADD("a.parquet", "10"));
  put("_delta_log/00000000000000000001.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json",
      "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n"
      "{\"checkpointMetadata\":{\"version\":1}}\n" ADD("a.parquet", "10"));
  dl_snapshot *s = NULL;
  assert_int_equal(open_latest(&s), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "00000000000000000001.checkpoint.80a083e8"));
  assert_non_null(strstr(dd_err_msg(), "has no metaData"));
  assert_null(s);
  put("_delta_log/00000000000000000001.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json",
      "{\"metaData\":{\"id\":\"x\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
      "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\","
      "\"partitionColumns\":[],\"configuration\":{},\"createdTime\":1}}\n" ADD("a.parquet", "10"));
  assert_int_equal(open_latest(&s), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "has no protocol"));
  put("_delta_log/00000000000000000001.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json",
      "not json\n");
  assert_int_equal(open_latest(&s), 0); /* unreadable: the commits rebuild version 1 */
  assert_int_equal(dl_snapshot_num_files(s), 1);
  dl_snapshot_free(s);
}

/* The last in-commit timestamp at INT64_MAX: the next commit cannot be later. */
static void test_ict_at_max(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json",
      "{\"commitInfo\":{\"inCommitTimestamp\":9223372036854775807,\"timestamp\":1}}\n"
      "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[],"
      "\"writerFeatures\":[\"inCommitTimestamp\"]}}\n"
      "{\"metaData\":{\"id\":\"x\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
      "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[]}\","
      "\"partitionColumns\":[],\"configuration\":{\"delta.enableInCommitTimestamps\":\"true\"},"
      "\"createdTime\":1}}\n");
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dl_txn *x = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  dl_file f = {.path = "a.parquet", .size = 1, .modification_time = 1, .deletion_timestamp = -1,
               .data_change = true, .partition_values = "\0", .base_row_id = -1,
               .default_row_commit_version = -1};
  assert_int_equal(dl_txn_add_file(x, &f), 0);
  assert_int_equal(dl_txn_commit(x, NULL, NULL), DD_ECORRUPT);
  assert_false(exists("_delta_log/00000000000000000001.json"));
  dl_txn_free(x);
  dl_snapshot_free(s);
  dl_table_free(t);
}

/* A 'u' deletion vector whose random prefix climbs out of the table is not read. */
static void test_dv_escape(void **state) {
  (void)state;
  put("_delta_log/00000000000000000000.json", V0);
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  const char *bad[] = {"../esc00000000000000000000", "a//b00000000000000000000"};
  for (size_t i = 0; i < 2; i++) {
    dl_dv dv = {'u', bad[i], 1, 10, 1, -1};
    dl_rowset rs = {0};
    assert_int_equal(dl_dv_load(&rs, t, &dv), DD_ECORRUPT);
    assert_non_null(strstr(dd_err_msg(), "escapes"));
  }
  dl_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_size_overflow_json, setup, teardown),
      cmocka_unit_test_setup_teardown(test_size_overflow_two_commits, setup, teardown),
      cmocka_unit_test_setup_teardown(test_size_overflow_checkpoint, setup, teardown),
      cmocka_unit_test_setup_teardown(test_timestamp_after_latest, setup, teardown),
      cmocka_unit_test_setup_teardown(test_checkpoint_without_metadata, setup, teardown),
      cmocka_unit_test_setup_teardown(test_size_overflow_cache, setup, teardown),
      cmocka_unit_test_setup_teardown(test_negative_size, setup, teardown),
      cmocka_unit_test_setup_teardown(test_stale_temps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_version_edges, setup, teardown),
      cmocka_unit_test_setup_teardown(test_ict_at_max, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dv_escape, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
