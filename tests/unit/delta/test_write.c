/* test_write.c: writing tables on temporary copies: creating a table, commits of every
 * action kind, reopening every version, conflict detection between transactions, several
 * processes racing to commit, time travel by timestamp, history and change data feed,
 * checkpoints and log cleanup, and the snapshot cache's incremental refresh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/delta/dl_internal.h"
#include <pthread.h>

static char g_dir[256];

static int setup(void **state) {
  (void)state;
  strcpy(g_dir, "/tmp/dl_write_XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static const char *SCHEMA =
    "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,"
    "\"metadata\":{}},{\"name\":\"part\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}";

/* Creates the table at g_dir with the given configuration (packed map or NULL). */
static void create_table(dl_table *t, const char *config, bool features) {
  dl_txn *x = NULL;
  assert_int_equal(dl_txn_begin(&x, t, NULL), 0);
  const char *rf[] = {"deletionVectors"}, *wf[] = {"deletionVectors", "inCommitTimestamp", "changeDataFeed"};
  dl_protocol p = {1, 2, 0, 0, NULL, NULL};
  if (features) p = (dl_protocol){3, 7, 1, 3, rf, wf};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  const char *pcs[] = {"part"};
  dl_metadata_spec md = {.name = "t", .schema_string = SCHEMA, .num_partition_columns = 1,
                         .partition_columns = pcs, .configuration = config, .created_time = -1};
  assert_int_equal(dl_txn_set_metadata(x, &md), 0);
  dl_commit_opts o = DL_COMMIT_OPTS_INIT;
  o.operation = "CREATE TABLE";
  int64_t v = -1;
  assert_int_equal(dl_txn_commit(x, &o, &v), 0);
  assert_int_equal(v, 0);
  dl_txn_free(x);
}

static dl_file make_file(const char *path, const char *part) {
  static char pv[128];
  size_t n = (size_t)snprintf(pv, sizeof pv, "part%c%s", 0, part);
  pv[n + 1] = 0;
  pv[n + 2] = 0;
  dl_file f = {.path = path, .size = 100, .modification_time = 1, .deletion_timestamp = -1,
               .data_change = true, .stats = "{\"numRecords\":10}", .partition_values = pv,
               .base_row_id = -1, .default_row_commit_version = -1};
  return f;
}

/* Appends one file (clustered by provider, or not when NULL) in its own commit; returns
 * the version. */
static int64_t append_by(dl_table *t, const char *path, const char *provider) {
  dl_snapshot *s = NULL;
  int rc = dl_snapshot_open(&s, t, NULL);
  if (rc) return rc;
  dl_txn *x = NULL;
  dl_txn_begin(&x, t, s);
  dl_file f = make_file(path, "a");
  f.clustering_provider = provider;
  dl_txn_add_file(x, &f);
  int64_t v = -1;
  dl_commit_opts o = DL_COMMIT_OPTS_INIT;
  o.max_retries = 1000;
  rc = dl_txn_commit(x, &o, &v);
  dl_txn_free(x);
  dl_snapshot_free(s);
  return rc ? rc : v;
}

static int64_t append(dl_table *t, const char *path) { return append_by(t, path, NULL); }

/* Files whose clusteringProvider is "liquid" in the snapshot at v: each must be f<even>. */
static int liquid_cb(void *ctx, const dl_file *f) {
  int n = atoi(strrchr(f->path, 'f') + 1);
  if (f->clustering_provider) {
    if (strcmp(f->clustering_provider, "liquid") || n % 2) return -1;
    ++*(size_t *)ctx;
  } else if (n % 2 == 0) {
    return -1;
  }
  return 0;
}

static size_t liquid_at(dl_table *t, int64_t v) {
  dl_snapshot *s = NULL;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = v;
  size_t n = 0;
  if (dl_snapshot_open(&s, t, &o) != 0 || dl_snapshot_files(s, liquid_cb, &n) != 0) n = (size_t)-1;
  dl_snapshot_free(s);
  return n;
}

static size_t nfiles_at(dl_table *t, int64_t v) {
  dl_snapshot *s = NULL;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = v;
  if (dl_snapshot_open(&s, t, &o) != 0) {
    print_message("open @%lld: %s\n", (long long)v, dd_err_msg());
    return (size_t)-1;
  }
  size_t n = dl_snapshot_num_files(s);
  dl_snapshot_free(s);
  return n;
}

static void test_create_append_remove(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, false);
  assert_int_equal(append(t, "part=a/f 1.parquet"), 1);
  assert_int_equal(append(t, "part=a/f2.parquet"), 2);
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  dl_txn *x = NULL;
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  dl_file f = make_file("part=a/f 1.parquet", "a");
  assert_int_equal(dl_txn_remove_file(x, &f), 0);
  assert_int_equal(dl_txn_set_app_txn(x, "app-1", 7), 0);
  assert_int_equal(dl_txn_set_domain(x, "dom", "{\"k\":1}", false), 0);
  int64_t v;
  assert_int_equal(dl_txn_commit(x, NULL, &v), 0);
  assert_int_equal(v, 3);
  assert_int_equal(dl_txn_commit(x, NULL, &v), DD_EINVAL); /* once only */
  dl_txn_free(x);
  dl_snapshot_free(s);
  /* every version reopens with the right content */
  assert_int_equal(nfiles_at(t, 0), 0);
  assert_int_equal(nfiles_at(t, 1), 1);
  assert_int_equal(nfiles_at(t, 2), 2);
  assert_int_equal(nfiles_at(t, 3), 1);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  dl_app_txn at;
  assert_int_equal(dl_snapshot_find_app_txn(s, "app-1", &at), 1);
  assert_int_equal(at.version, 7);
  assert_int_equal(dl_snapshot_num_domains(s), 1);
  assert_string_equal(dl_snapshot_domain(s, 0)->configuration, "{\"k\":1}");
  assert_string_equal(dl_snapshot_metadata(s)->name, "t");
  dl_snapshot_free(s);
  /* the space in the path was URL-encoded in the log and decoded on read */
  char p[512];
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000001.json", g_dir);
  FILE *fp = fopen(p, "r");
  char buf[4096] = {0};
  assert_true(fread(buf, 1, sizeof buf - 1, fp) > 0);
  fclose(fp);
  assert_non_null(strstr(buf, "f%201.parquet"));
  assert_non_null(strstr(buf, "\"engineInfo\":\"deltad/"));
  /* removing the domain drops it */
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  assert_int_equal(dl_txn_set_domain(x, "dom", "", true), 0);
  assert_int_equal(dl_txn_commit(x, NULL, &v), 0);
  dl_txn_free(x);
  dl_snapshot_free(s);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_snapshot_num_domains(s), 0);
  dl_snapshot_free(s);
  /* history: newest first with operations */
  dl_table_free(t);
}

static void test_conflicts(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, false);
  append(t, "part=a/x.parquet");
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  dl_txn *a = NULL, *b = NULL;
  dl_file x = make_file("part=a/x.parquet", "a");
  /* two deletes of the same file: the second conflicts */
  dl_txn_begin(&a, t, s);
  dl_txn_begin(&b, t, s);
  dl_txn_remove_file(a, &x);
  dl_txn_remove_file(b, &x);
  int64_t v;
  assert_int_equal(dl_txn_commit(a, NULL, &v), 0);
  assert_int_equal(dl_txn_commit(b, NULL, &v), DD_ECONFLICT);
  assert_non_null(strstr(dd_err_msg(), "x.parquet"));
  dl_txn_free(a);
  dl_txn_free(b);
  /* two blind appends from the same snapshot both land */
  dl_txn_begin(&a, t, s);
  dl_txn_begin(&b, t, s);
  dl_file y = make_file("part=a/y.parquet", "a"), z = make_file("part=a/z.parquet", "a");
  dl_txn_add_file(a, &y);
  dl_txn_add_file(b, &z);
  assert_int_equal(dl_txn_commit(a, NULL, &v), 0);
  assert_int_equal(v, 3);
  assert_int_equal(dl_txn_commit(b, NULL, &v), 0);
  assert_int_equal(v, 4);
  dl_txn_free(a);
  dl_txn_free(b);
  /* the same appId concurrently conflicts; a concurrent metadata change conflicts */
  dl_txn_begin(&a, t, s);
  dl_txn_begin(&b, t, s);
  dl_txn_set_app_txn(a, "stream", 1);
  dl_txn_set_app_txn(b, "stream", 1);
  assert_int_equal(dl_txn_commit(a, NULL, &v), 0);
  assert_int_equal(dl_txn_commit(b, NULL, &v), DD_ECONFLICT);
  assert_non_null(strstr(dd_err_msg(), "stream"));
  dl_txn_free(a);
  dl_txn_free(b);
  dl_txn_begin(&a, t, s);
  dl_metadata_spec md = {.schema_string = SCHEMA, .created_time = -1};
  dl_txn_set_metadata(a, &md);
  assert_int_equal(dl_txn_commit(a, NULL, &v), DD_ECONFLICT);
  assert_non_null(strstr(dd_err_msg(), "metadata"));
  dl_txn_free(a);
  /* reading the whole table conflicts with a concurrent append */
  dl_txn_begin(&a, t, s);
  dl_txn_read_all(a);
  dl_txn_add_file(a, &y);
  assert_int_equal(dl_txn_commit(a, NULL, &v), DD_ECONFLICT);
  dl_txn_free(a);
  /* creating an existing table conflicts */
  dl_txn_begin(&a, t, NULL);
  dl_protocol p = {1, 2, 0, 0, NULL, NULL};
  dl_txn_set_protocol(a, &p);
  dl_txn_set_metadata(a, &md);
  assert_int_equal(dl_txn_commit(a, NULL, &v), DD_ECONFLICT);
  dl_txn_free(a);
  dl_snapshot_free(s);
  /* unknown writer features are refused */
  dl_txn_begin(&a, t, NULL);
  const char *wf[] = {"someFutureFeature"};
  dl_protocol p7 = {1, 7, 0, 1, NULL, wf};
  dl_txn_set_protocol(a, &p7);
  dl_txn_set_metadata(a, &md);
  assert_int_equal(dl_txn_commit(a, NULL, &v), DD_EUNSUPPORTED);
  assert_non_null(strstr(dd_err_msg(), "someFutureFeature"));
  dl_txn_free(a);
  dl_table_free(t);
}

static void test_concurrent_processes(void **state) {
  (void)state;
  enum { WRITERS = 4, COMMITS = 25 };
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  char cfg[] = "delta.checkpointInterval\0" "1000\0";
  create_table(t, cfg, false);
  pid_t pids[WRITERS];
  for (int w = 0; w < WRITERS; w++) {
    pids[w] = fork();
    if (pids[w] == 0) {
      dl_table *ct = NULL;
      if (dl_table_open(&ct, g_dir)) _exit(1);
      for (int i = 0; i < COMMITS; i++) {
        char path[64];
        snprintf(path, sizeof path, "part=a/w%d-%d.parquet", w, i);
        if (append(ct, path) < 0) {
          fprintf(stderr, "writer %d: %s\n", w, dd_err_msg());
          _exit(2);
        }
      }
      dl_table_free(ct);
      _exit(0);
    }
  }
  for (int w = 0; w < WRITERS; w++) {
    int st;
    waitpid(pids[w], &st, 0);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
  }
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0); /* contiguous, or it would fail */
  assert_int_equal(dl_snapshot_version(s), WRITERS * COMMITS);
  assert_int_equal(dl_snapshot_num_files(s), WRITERS * COMMITS);
  dl_snapshot_free(s);
  dl_table_free(t);
}

static int hist_cb(void *ctx, const dl_commit_entry *e) {
  int64_t *prev = ctx;
  if (*prev >= 0) assert_int_equal(e->version, *prev - 1);
  *prev = e->version;
  assert_non_null(e->operation);
  return 0;
}

static int cdf_cb(void *ctx, const dl_change *c) {
  int *counts = ctx;
  counts[c->kind]++;
  assert_true(c->timestamp > 0);
  return 0;
}

static void test_time_travel_history_cdf(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  char cfg[] = "delta.enableChangeDataFeed\0true\0";
  create_table(t, cfg, false);
  append(t, "part=a/1.parquet");
  append(t, "part=a/2.parquet");
  /* pin commit times: v0 at 1000 s, v1 at 2000 s, v2 at 2000 s (made monotonic) */
  int64_t secs[] = {1000, 2000, 2000};
  for (int v = 0; v < 3; v++) {
    char p[512];
    snprintf(p, sizeof p, "%s/_delta_log/%020d.json", g_dir, v);
    struct timespec ts[2] = {{secs[v], 0}, {secs[v], 0}};
    assert_int_equal(utimensat(AT_FDCWD, p, ts, 0), 0);
  }
  dl_snapshot *s = NULL;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.timestamp_ms = 1500000;
  assert_int_equal(dl_snapshot_open(&s, t, &o), 0);
  assert_int_equal(dl_snapshot_version(s), 0);
  dl_snapshot_free(s);
  o.timestamp_ms = 2000000;
  assert_int_equal(dl_snapshot_open(&s, t, &o), 0);
  assert_int_equal(dl_snapshot_version(s), 1);
  assert_int_equal(dl_snapshot_timestamp(s), 2000000);
  dl_snapshot_free(s);
  o.timestamp_ms = 2000001;
  assert_int_equal(dl_snapshot_open(&s, t, &o), 0);
  assert_int_equal(dl_snapshot_version(s), 2);
  dl_snapshot_free(s);
  o.timestamp_ms = 10;
  assert_int_equal(dl_snapshot_open(&s, t, &o), DD_ERANGE);
  int64_t prev = -1;
  assert_int_equal(dl_history(t, 0, hist_cb, &prev), 0);
  assert_int_equal(prev, 0);
  int counts[3] = {0};
  assert_int_equal(dl_changes(t, 0, -1, cdf_cb, counts), 0);
  assert_int_equal(counts[DL_CHANGE_ADD], 2);
  dl_table_free(t);
  /* a table without CDF refuses */
  assert_int_equal(dl_table_open(&t, DD_FIXTURES "/delta-rs-data/simple_table"), 0);
  assert_int_equal(dl_changes(t, 0, 1, cdf_cb, counts), DD_EPRECOND);
  dl_table_free(t);
  /* cdf-table: commits with cdc files report them */
  memset(counts, 0, sizeof counts);
  assert_int_equal(dl_table_open(&t, DD_FIXTURES "/delta-rs-data/cdf-table"), 0);
  assert_int_equal(dl_changes(t, 0, -1, cdf_cb, counts), 0);
  assert_true(counts[DL_CHANGE_CDC] > 0);
  assert_true(counts[DL_CHANGE_ADD] > 0);
  dl_table_free(t);
}

static void test_in_commit_timestamps(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  char cfg[] = "delta.enableInCommitTimestamps\0true\0";
  create_table(t, cfg, true);
  /* a pinned clock that goes backwards still yields increasing timestamps */
  dl_snapshot *s = NULL;
  for (int i = 0; i < 3; i++) {
    assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
    dl_txn *x = NULL;
    dl_txn_begin(&x, t, s);
    dl_file f = make_file(i == 0 ? "part=a/a" : i == 1 ? "part=a/b" : "part=a/c", "a");
    dl_txn_add_file(x, &f);
    dl_commit_opts o = DL_COMMIT_OPTS_INIT;
    o.now_ms = 5000 - i;
    int64_t v;
    assert_int_equal(dl_txn_commit(x, &o, &v), 0);
    dl_txn_free(x);
    dl_snapshot_free(s);
  }
  int64_t *vs = NULL, *ts = NULL;
  size_t n = 0;
  assert_int_equal(dl_commit_timestamps(t, &vs, &ts, &n), 0);
  assert_int_equal(n, 4);
  /* v0 used the real clock, so later commits are one millisecond apart */
  assert_int_equal(ts[2], ts[1] + 1);
  assert_int_equal(ts[3], ts[2] + 1);
  int64_t want = ts[2];
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.timestamp_ms = want;
  assert_int_equal(dl_snapshot_open(&s, t, &o), 0);
  assert_int_equal(dl_snapshot_version(s), 2);
  assert_int_equal(dl_snapshot_timestamp(s), want);
  dl_snapshot_free(s);
  free(vs);
  free(ts);
  dl_table_free(t);
}

static void test_enable_ict_later(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, true);
  append(t, "part=a/1");
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  dl_txn *x = NULL;
  dl_txn_begin(&x, t, s);
  char cfg[] = "delta.enableInCommitTimestamps\0true\0";
  dl_metadata_spec md = {.id = dl_snapshot_metadata(s)->id, .schema_string = SCHEMA,
                         .configuration = cfg, .created_time = -1};
  const char *pcs[] = {"part"};
  md.partition_columns = pcs;
  md.num_partition_columns = 1;
  dl_txn_set_metadata(x, &md);
  int64_t v;
  assert_int_equal(dl_txn_commit(x, NULL, &v), 0);
  assert_int_equal(v, 2);
  dl_txn_free(x);
  dl_snapshot_free(s);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_string_equal(dl_snapshot_property(s, "delta.inCommitTimestampEnablementVersion"), "2");
  const char *ts = dl_snapshot_property(s, "delta.inCommitTimestampEnablementTimestamp");
  assert_non_null(ts);
  assert_int_equal(strtoll(ts, NULL, 10), dl_snapshot_timestamp(s));
  dl_snapshot_free(s);
  dl_table_free(t);
}

static void test_cache_refresh(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, false);
  append(t, "part=a/1");
  dl_cache *c = NULL;
  assert_int_equal(dl_cache_new(&c, 1 << 20), 0);
  dl_snapshot *s1 = NULL, *s2 = NULL, *s3 = NULL;
  assert_int_equal(dl_cache_get(c, t, &s1), 0);
  assert_int_equal(dl_snapshot_version(s1), 1);
  assert_int_equal(dl_cache_get(c, t, &s2), 0);
  assert_ptr_equal(s1, s2); /* unchanged table: the cached snapshot itself */
  append(t, "part=a/2");
  append(t, "part=a/3");
  assert_int_equal(dl_cache_get(c, t, &s3), 0);
  assert_int_equal(dl_snapshot_version(s3), 3);
  assert_int_equal(dl_snapshot_num_files(s3), 3);
  assert_int_equal(dl_snapshot_num_files(s1), 1); /* old snapshot unchanged */
  assert_true(dl_cache_bytes(c) > 0);
  dl_snapshot_free(s1);
  dl_snapshot_free(s2);
  dl_snapshot_free(s3);
  /* a tiny cache evicts but still answers */
  dl_cache_free(c);
  assert_int_equal(dl_cache_new(&c, 1), 0);
  assert_int_equal(dl_cache_get(c, t, &s1), 0);
  dl_snapshot_free(s1);
  dl_cache_free(c);
  dl_table_free(t);
}

/* A store that forwards to a local one and counts listings and stats, to see how a cached
 * snapshot is brought up to date. */
static int g_lists, g_stats;
static int cnt_read_all(void *i, const char *p, uint8_t **o, size_t *n) { return os_read_all(i, p, o, n); }
static int cnt_read_range(void *i, const char *p, uint64_t off, size_t n, uint8_t *o) {
  return os_read_range(i, p, off, n, o);
}
static int cnt_stat(void *i, const char *p, os_stat *o) { g_stats++; return os_stat_path(i, p, o); }
static int cnt_list(void *i, const char *d, os_list *o) { g_lists++; return os_list_dir(i, d, o); }
static int cnt_put_if_absent(void *i, const char *p, const void *d, size_t n) {
  return os_put_if_absent(i, p, d, n);
}
static int cnt_put(void *i, const char *p, const void *d, size_t n) { return os_put(i, p, d, n); }
static int cnt_del(void *i, const char *p) { return os_delete(i, p); }
static int cnt_mkdirs(void *i, const char *d) { return os_mkdirs(i, d); }
static int cnt_rmdir(void *i, const char *d) { return os_rmdir(i, d); }
static void cnt_free(void *i) { os_store_free(i); }
static const os_vtable cnt_vt = {cnt_read_all, cnt_read_range, cnt_stat, cnt_list,
                                 cnt_put_if_absent, cnt_put, cnt_del, cnt_mkdirs, cnt_rmdir,
                                 cnt_free, NULL, NULL, NULL, NULL, NULL};

static void test_cache_unchanged_table_is_not_listed(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, false);
  append(t, "part=a/1");
  dl_table_free(t);
  os_store *local = NULL, *counting = NULL;
  assert_int_equal(os_local_open(&local, g_dir), 0);
  assert_int_equal(os_store_new(&counting, &cnt_vt, local, g_dir), 0);
  assert_int_equal(dl_table_open_store(&t, counting, true), 0);
  dl_cache *c = NULL;
  assert_int_equal(dl_cache_new(&c, 1 << 20), 0);
  dl_snapshot *s1 = NULL, *s2 = NULL, *s3 = NULL;
  assert_int_equal(dl_cache_get(c, t, &s1), 0);
  g_lists = g_stats = 0;
  assert_int_equal(dl_cache_get(c, t, &s2), 0);
  assert_ptr_equal(s1, s2);
  assert_int_equal(g_lists, 0); /* two stats (this commit, the next), no listing */
  assert_int_equal(g_stats, 2);
  append(t, "part=a/2");
  assert_int_equal(dl_cache_get(c, t, &s3), 0); /* a new commit: listed and refreshed */
  assert_int_equal(dl_snapshot_version(s3), 2);
  assert_true(g_lists > 0);
  dl_snapshot_free(s1);
  dl_snapshot_free(s2);
  dl_snapshot_free(s3);
  dl_cache_free(c);
  dl_table_free(t);
}

static void put(const char *rel, const char *content) {
  char p[512];
  snprintf(p, sizeof p, "%s/%s", g_dir, rel);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fputs(content, f);
  fclose(f);
}

static void test_listing_edge_cases(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, false);
  append(t, "part=a/1");
  append(t, "part=a/2");
  append(t, "part=a/3");
  /* noise that must be ignored */
  char p[512];
  snprintf(p, sizeof p, "%s/_delta_log/.tmp", g_dir);
  mkdir(p, 0777);
  snprintf(p, sizeof p, "%s/_delta_log/_commits", g_dir);
  mkdir(p, 0777);
  put("_delta_log/.tmp/00000000000000000009.json", "garbage");
  put("_delta_log/_commits/00000000000000000004.json", "garbage");
  put("_delta_log/.00000000000000000002.json.crc", "x");
  put("_delta_log/00000000000000000002.crc", "{}");
  put("_delta_log/00000000000000000001.00000000000000000002.compacted.json", "garbage");
  put("_delta_log/_last_checkpoint", "");
  /* an incomplete multi-part checkpoint is ignored */
  put("_delta_log/00000000000000000002.checkpoint.0000000001.0000000002.parquet", "garbage");
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_snapshot_version(s), 3);
  assert_int_equal(dl_snapshot_num_files(s), 3);
  assert_int_equal(dl_snapshot_checkpoint_version(s), -1);
  dl_snapshot_free(s);
  /* complete but unreadable: falls back to the commits; so does a broken classic one */
  put("_delta_log/00000000000000000002.checkpoint.0000000002.0000000002.parquet", "garbage");
  put("_delta_log/00000000000000000001.checkpoint.parquet", "PAR1 not really");
  put("_delta_log/_last_checkpoint", "{\"version\":2,\"size\":5,\"parts\":2}");
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_snapshot_num_files(s), 3);
  assert_int_equal(dl_snapshot_checkpoint_version(s), -1);
  dl_snapshot_free(s);
  /* a gap names the missing version */
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000001.json", g_dir);
  assert_int_equal(unlink(p), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "version 1 is missing"));
  dl_table_free(t);
}

static void test_checkpoint_and_cleanup(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, false);
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  int rc = dl_checkpoint_write(t, s);
  dl_snapshot_free(s);
  if (rc == DD_EUNSUPPORTED) {
    print_message("skipped: %s\n", dd_err_msg());
    dl_table_free(t);
    skip();
  }
  assert_int_equal(rc, 0);
  for (int i = 1; i <= 12; i++) {
    char path[64];
    snprintf(path, sizeof path, "part=a/f%d.parquet", i);
    assert_int_equal(append_by(t, path, i % 2 ? NULL : "liquid"), i);
  }
  /* the even files are clustered (add.clusteringProvider) in the commits and through the
   * checkpoint at 10 */
  assert_int_equal(liquid_at(t, 9), 4);
  assert_int_equal(liquid_at(t, 12), 6);
  char p[512];
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000010.checkpoint.parquet", g_dir);
  struct stat sb;
  assert_int_equal(stat(p, &sb), 0);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(dl_table_store(t), "_delta_log/_last_checkpoint", &buf, &len), 0);
  assert_non_null(strstr((char *)buf, "\"version\":10"));
  assert_non_null(strstr((char *)buf, "\"numOfAddFiles\":10"));
  free(buf);
  for (int v = 0; v <= 12; v++) assert_int_equal(nfiles_at(t, v), (size_t)v);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_snapshot_checkpoint_version(s), 10);
  assert_int_equal(liquid_at(t, 12), 6); /* read through the checkpoint */
  dl_snapshot_free(s);
  /* cleanup: age commits 0..10 by 60 days; everything below the checkpoint goes */
  for (int v = 0; v <= 10; v++) {
    snprintf(p, sizeof p, "%s/_delta_log/%020d.json", g_dir, v);
    struct timespec ts[2] = {{1000000, 0}, {1000000, 0}};
    utimensat(AT_FDCWD, p, ts, 0);
  }
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  size_t deleted = 0;
  assert_int_equal(dl_log_cleanup(t, s, 1000000000 + 60 * 86400000LL, &deleted), 0);
  dl_snapshot_free(s);
  assert_true(deleted >= 10);
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000009.json", g_dir);
  assert_int_not_equal(stat(p, &sb), 0);
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000010.json", g_dir);
  assert_int_equal(stat(p, &sb), 0);
  assert_int_equal(nfiles_at(t, 12), 12);
  assert_int_equal(nfiles_at(t, 10), 10);
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = 5;
  assert_int_equal(dl_snapshot_open(&s, t, &o), DD_ERANGE);
  dl_table_free(t);
}

static void test_multipart_checkpoint(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, false);
  for (int i = 1; i <= 4; i++) {
    char path[64];
    snprintf(path, sizeof path, "part=a/m%d.parquet", i);
    append(t, path);
  }
  dl_snapshot *s = NULL;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = 3;
  assert_int_equal(dl_snapshot_open(&s, t, &o), 0);
  int rc = dl__checkpoint_write_parts(t, s, 3);
  dl_snapshot_free(s);
  if (rc == DD_EUNSUPPORTED) {
    dl_table_free(t);
    skip();
  }
  assert_int_equal(rc, 0);
  char p[512];
  struct stat sb;
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000003.checkpoint.0000000003.0000000003.parquet", g_dir);
  assert_int_equal(stat(p, &sb), 0);
  /* hide the commits the checkpoint covers: only the multi-part checkpoint can answer */
  for (int v = 0; v <= 3; v++) {
    char from[512], to[512];
    snprintf(from, sizeof from, "%s/_delta_log/%020d.json", g_dir, v);
    snprintf(to, sizeof to, "%s/hidden-%d.json", g_dir, v);
    assert_int_equal(rename(from, to), 0);
  }
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_snapshot_checkpoint_version(s), 3);
  assert_int_equal(dl_snapshot_version(s), 4);
  assert_int_equal(dl_snapshot_num_files(s), 4);
  dl_snapshot_free(s);
  assert_int_equal(nfiles_at(t, 3), 3);
  /* a missing part makes it incomplete: ignored, and without commits 0..3 nothing works */
  assert_int_equal(unlink(p), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), DD_ERANGE);
  dl_table_free(t);
}

typedef struct thr {
  dl_cache *c;
  int failures;
} thr;

static void *cache_reader(void *arg) {
  thr *x = arg;
  dl_table *t = NULL;
  if (dl_table_open(&t, g_dir)) {
    x->failures++;
    return NULL;
  }
  int64_t last = -1;
  for (int i = 0; i < 40; i++) {
    dl_snapshot *s = NULL;
    if (dl_cache_get(x->c, t, &s)) {
      x->failures++;
      continue;
    }
    /* versions never go backwards and files always match versions */
    if (dl_snapshot_version(s) < last || dl_snapshot_num_files(s) != (size_t)dl_snapshot_version(s))
      x->failures++;
    last = dl_snapshot_version(s);
    dl_snapshot_free(s);
  }
  dl_table_free(t);
  return NULL;
}

static void test_cache_threads(void **state) {
  (void)state;
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, g_dir), 0);
  create_table(t, NULL, false);
  dl_cache *c = NULL;
  assert_int_equal(dl_cache_new(&c, 1 << 24), 0);
  enum { N = 6 };
  pthread_t th[N];
  thr args[N];
  for (int i = 0; i < N; i++) {
    args[i] = (thr){c, 0};
    pthread_create(&th[i], NULL, cache_reader, &args[i]);
  }
  for (int i = 1; i <= 15; i++) {
    char path[64];
    snprintf(path, sizeof path, "part=a/c%d.parquet", i);
    assert_int_equal(append(t, path), i);
  }
  for (int i = 0; i < N; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(args[i].failures, 0);
  }
  dl_snapshot *s = NULL;
  assert_int_equal(dl_cache_get(c, t, &s), 0);
  assert_int_equal(dl_snapshot_num_files(s), 15);
  dl_snapshot_free(s);
  dl_cache_free(c);
  dl_table_free(t);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_create_append_remove, setup, teardown),
      cmocka_unit_test_setup_teardown(test_conflicts, setup, teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_processes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_time_travel_history_cdf, setup, teardown),
      cmocka_unit_test_setup_teardown(test_in_commit_timestamps, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_unchanged_table_is_not_listed, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_refresh, setup, teardown),
      cmocka_unit_test_setup_teardown(test_enable_ict_later, setup, teardown),
      cmocka_unit_test_setup_teardown(test_listing_edge_cases, setup, teardown),
      cmocka_unit_test_setup_teardown(test_checkpoint_and_cleanup, setup, teardown),
      cmocka_unit_test_setup_teardown(test_multipart_checkpoint, setup, teardown),
      cmocka_unit_test_setup_teardown(test_cache_threads, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
