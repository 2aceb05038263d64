/* bench_delta.c: figures for the Delta log engine.
 *   bench_delta gen DIR N        table whose checkpoint holds N adds, plus 10 JSON commits
 *   bench_delta load DIR         snapshot load time, peak RSS, bytes per file
 *   bench_delta refresh DIR K    K x (commit one file, refresh through the snapshot cache)
 *   bench_delta commits DIR W C  W processes x C commits each: throughput
 *   bench_delta digest DIR       file count, total size and an order-independent digest of
 *                                every live file's fields (to compare readers and writers)
 * The checkpoint is a classic Parquet one when the Parquet writer is built in, else a v2
 * UUID-named JSON checkpoint (the table then carries the v2Checkpoint feature). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/delta/dl_internal.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what) {
  fprintf(stderr, "%s: %s\n", what, dd_err_msg());
  exit(1);
}

static const char *SCHEMA =
    "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,"
    "\"metadata\":{}},{\"name\":\"day\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}";
static const char *STATS = "{\"numRecords\":100,\"minValues\":{\"id\":1},\"maxValues\":{\"id\":100},"
                           "\"nullCount\":{\"id\":0}}";

static void fake_path(char *buf, size_t cap, long i) {
  snprintf(buf, cap, "day=2024-01-%02ld/part-%05ld-%08lx-1c2d-4e5f-8a9b-%012lx-c000.snappy.parquet",
           i % 28 + 1, i % 100000, (unsigned long)i * 2654435761u, (unsigned long)i);
}

/* Commits one added file, reading `read` (NULL: open the latest snapshot first). */
static int64_t commit_on(dl_table *t, dl_snapshot *read, const char *path, bool checkpoint) {
  dl_snapshot *s = dl_snapshot_ref(read);
  if (!s && dl_snapshot_open(&s, t, NULL)) return -1;
  dl_txn *x = NULL;
  dl_txn_begin(&x, t, s);
  char pv[] = "day\0" "2024-02-01\0";
  dl_file f = {.path = path, .size = 1000, .modification_time = 1, .deletion_timestamp = -1,
               .data_change = true, .stats = STATS, .partition_values = pv, .base_row_id = -1,
               .default_row_commit_version = -1};
  dl_txn_add_file(x, &f);
  dl_commit_opts o = DL_COMMIT_OPTS_INIT;
  o.checkpoint = checkpoint;
  o.max_retries = 10000;
  int64_t v = -1;
  int rc = dl_txn_commit(x, &o, &v);
  dl_txn_free(x);
  dl_snapshot_free(s);
  return rc ? rc : v;
}

static int64_t commit_one(dl_table *t, const char *path, bool checkpoint) {
  return commit_on(t, NULL, path, checkpoint);
}

static void create(dl_table *t, bool v2) {
  dl_txn *x = NULL;
  dl_txn_begin(&x, t, NULL);
  const char *feat[] = {"v2Checkpoint"};
  dl_protocol p = {1, 2, 0, 0, NULL, NULL};
  if (v2) p = (dl_protocol){3, 7, 1, 1, feat, feat};
  dl_txn_set_protocol(x, &p);
  const char *pcs[] = {"day"};
  char cfg[] = "delta.checkpointInterval\0" "1000000\0";
  dl_metadata_spec md = {.schema_string = SCHEMA, .num_partition_columns = 1,
                         .partition_columns = pcs, .configuration = cfg, .created_time = -1};
  dl_txn_set_metadata(x, &md);
  if (dl_txn_commit(x, NULL, NULL)) die("create");
  dl_txn_free(x);
}

/* v2 JSON checkpoint of version 0 with n adds, written by hand. */
static void json_checkpoint(dl_table *t, long n) {
  char uuid[37];
  dl__uuid(uuid);
  char *path = NULL;
  if (asprintf(&path, "%s/_delta_log/00000000000000000000.checkpoint.%s.json", dl_table_location(t), uuid) < 0) exit(1);
  FILE *f = fopen(path, "w");
  fprintf(f, "{\"checkpointMetadata\":{\"version\":0}}\n");
  fprintf(f, "{\"protocol\":{\"minReaderVersion\":3,\"minWriterVersion\":7,\"readerFeatures\":[\"v2Checkpoint\"],\"writerFeatures\":[\"v2Checkpoint\"]}}\n");
  dl_snapshot *s = NULL;
  if (dl_snapshot_open(&s, t, NULL)) die("open");
  const dl_metadata *m = dl_snapshot_metadata(s);
  json_t *md = json_pack("{s:{s:s,s:{s:s,s:{}},s:s,s:[s],s:o,s:I}}", "metaData", "id", m->id,
                         "format", "provider", "parquet", "options", "schemaString",
                         m->schema_string, "partitionColumns", "day", "configuration",
                         dl__kv_to_json(m->configuration), "createdTime", (json_int_t)m->created_time);
  char *mds = json_dumps(md, JSON_COMPACT);
  fprintf(f, "%s\n", mds);
  free(mds);
  json_decref(md);
  dl_snapshot_free(s);
  char p[256];
  for (long i = 0; i < n; i++) {
    fake_path(p, sizeof p, i);
    fprintf(f, "{\"add\":{\"path\":\"%s\",\"partitionValues\":{\"day\":\"2024-01-%02ld\"},\"size\":123456,"
               "\"modificationTime\":1700000000000,\"dataChange\":false,\"stats\":\"%s\"}}\n",
            p, i % 28 + 1,
            "{\\\"numRecords\\\":100,\\\"minValues\\\":{\\\"id\\\":1},\\\"maxValues\\\":{\\\"id\\\":100},\\\"nullCount\\\":{\\\"id\\\":0}}");
  }
  fclose(f);
  free(path);
}

static int gen(const char *dir, long n) {
  dl_table *t = NULL;
  if (dl_table_open(&t, dir)) die("open");
  double t0 = now_s();
  create(t, false);
  /* Build the state of version 0 with n files in memory and checkpoint it. */
  dl_snapshot *s = NULL;
  if (dl_snapshot_open(&s, t, NULL)) die("open");
  char p[256];
  char pv[64];
  for (long i = 0; i < n; i++) {
    fake_path(p, sizeof p, i);
    int k = snprintf(pv, sizeof pv, "day%c2024-01-%02ld", 0, i % 28 + 1);
    pv[k + 1] = 0;
    pv[k + 2] = 0;
    /* no row tracking: baseRowId and defaultRowCommitVersion absent (-1), not 0 */
    dl_file f = {.path = p, .size = 123456, .modification_time = 1700000000000, .data_change = false,
                 .stats = STATS, .partition_values = pv, .deletion_timestamp = -1, .base_row_id = -1,
                 .default_row_commit_version = -1};
    if (dl__fileset_apply(s->base, DL__E_ADD, &f, NULL)) die("apply");
  }
  dl__snapshot_finish(s);
  int rc = dl_checkpoint_write(t, s);
  dl_snapshot_free(s);
  const char *kind = "classic parquet";
  if (rc == DD_EUNSUPPORTED) {
    /* no Parquet writer in this build: recreate as a v2 table with a JSON checkpoint */
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "rm -rf %s/_delta_log", dir);
    if (system(cmd) != 0) return 1;
    create(t, true);
    json_checkpoint(t, n);
    kind = "v2 JSON";
  } else if (rc) {
    die("checkpoint");
  }
  for (int i = 0; i < 10; i++) {
    snprintf(p, sizeof p, "day=2024-02-01/extra-%d.parquet", i);
    if (commit_one(t, p, false) < 0) die("commit");
  }
  printf("generated %ld-file checkpoint (%s) + 10 commits in %.1f s\n", n, kind, now_s() - t0);
  dl_table_free(t);
  return 0;
}

static long maxrss_kb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss;
}

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
}

static int load(const char *dir) {
  long before = maxrss_kb();
  dl_table *t = NULL;
  if (dl_table_open(&t, dir)) die("open");
  double t0 = now_s(), c0 = cpu_s();
  dl_snapshot *s = NULL;
  if (dl_snapshot_open(&s, t, NULL)) die("snapshot");
  double dt = now_s() - t0, dc = cpu_s() - c0;
  long after = maxrss_kb();
  size_t n = dl_snapshot_num_files(s);
  printf("load: version %lld, %zu files in %.3f s wall (%.3f s CPU); peak RSS %ld MiB (%.0f B/file over baseline); "
         "snapshot holds %.0f B/file\n",
         (long long)dl_snapshot_version(s), n, dt, dc, after / 1024, (after - before) * 1024.0 / n,
         (double)dl_snapshot_memory(s) / n);
  dl_snapshot_free(s);
  dl_table_free(t);
  return 0;
}

static uint64_t mix(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = (h ^ s[i]) * 1099511628211ULL;
  return h;
}

static uint64_t mix_str(uint64_t h, const char *s) { return s ? mix(h, s, strlen(s) + 1) : mix(h, "\1", 1); }

static int digest_cb(void *ctx, const dl_file *f) {
  uint64_t *d = ctx, h = 1469598103934665603ULL;
  h = mix_str(h, f->path);
  h = mix(h, &f->size, sizeof f->size);
  h = mix(h, &f->modification_time, sizeof f->modification_time);
  h = mix(h, &f->data_change, 1);
  h = mix_str(h, f->stats);
  h = mix(h, f->partition_values, dl__kv_size(f->partition_values));
  h = f->tags ? mix(h, f->tags, dl__kv_size(f->tags)) : h;
  if (f->dv) h = mix_str(mix(h, &f->dv->storage_type, 1), f->dv->path_or_inline);
  d[0] += h;
  d[1] ^= h * 0x9e3779b97f4a7c15ULL;
  return 0;
}

static int digest(const char *dir) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  if (dl_table_open(&t, dir) || dl_snapshot_open(&s, t, NULL)) die("open");
  uint64_t d[2] = {0, 0};
  if (dl_snapshot_files(s, digest_cb, d)) die("files");
  printf("digest: version %lld, %zu files, %lld bytes, digest %016llx%016llx\n",
         (long long)dl_snapshot_version(s), dl_snapshot_num_files(s),
         (long long)dl_snapshot_size_bytes(s), (unsigned long long)d[0], (unsigned long long)d[1]);
  dl_snapshot_free(s);
  dl_table_free(t);
  return 0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

static int refresh(const char *dir, int k) {
  dl_table *t = NULL;
  dl_cache *c = NULL;
  if (dl_table_open(&t, dir) || dl_cache_new(&c, (size_t)4 << 30)) die("open");
  dl_snapshot *s = NULL;
  double t0 = now_s();
  if (dl_cache_get(c, t, &s)) die("cache");
  printf("refresh: cold load through the cache %.3f s (%zu files)\n", now_s() - t0, dl_snapshot_num_files(s));
  double *ms = calloc((size_t)k, sizeof *ms);
  for (int i = 0; i < k; i++) {
    char p[128];
    snprintf(p, sizeof p, "day=2024-02-02/refresh-%d-%d.parquet", getpid(), i);
    /* a writer commits against the cached snapshot (as the server would) */
    if (commit_on(t, s, p, false) < 0) die("commit");
    dl_snapshot_free(s);
    t0 = now_s();
    if (dl_cache_get(c, t, &s)) die("cache");
    ms[i] = (now_s() - t0) * 1000;
  }
  printf("refresh: after %d refreshes: version %lld, %zu files\n", k,
         (long long)dl_snapshot_version(s), dl_snapshot_num_files(s));
  dl_snapshot_free(s);
  qsort(ms, (size_t)k, sizeof *ms, cmp_d);
  printf("refresh: one new commit, %d runs: median %.2f ms, max %.2f ms\n", k, ms[k / 2], ms[k - 1]);
  free(ms);
  dl_cache_free(c);
  dl_table_free(t);
  return 0;
}

static int commits(const char *dir, int w, int n) {
  dl_table *t = NULL;
  if (dl_table_open(&t, dir)) die("open");
  create(t, false);
  double t0 = now_s();
  for (int i = 0; i < w; i++) {
    if (fork() == 0) {
      dl_table *ct = NULL;
      if (dl_table_open(&ct, dir)) _exit(1);
      for (int j = 0; j < n; j++) {
        char p[128];
        snprintf(p, sizeof p, "day=2024-02-03/w%d-%d.parquet", i, j);
        if (commit_one(ct, p, true) < 0) _exit(2);
      }
      dl_table_free(ct);
      _exit(0);
    }
  }
  int ok = 1, st;
  for (int i = 0; i < w; i++) {
    wait(&st);
    ok &= WIFEXITED(st) && WEXITSTATUS(st) == 0;
  }
  double dt = now_s() - t0;
  dl_snapshot *s = NULL;
  if (dl_snapshot_open(&s, t, NULL)) die("snapshot");
  printf("commits: %d writers x %d commits: %.0f commits/s (%.2f s), latest version %lld, %zu files, %s\n",
         w, n, w * n / dt, dt, (long long)dl_snapshot_version(s), dl_snapshot_num_files(s),
         ok ? "all writers ok" : "A WRITER FAILED");
  dl_snapshot_free(s);
  dl_table_free(t);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 4 && !strcmp(argv[1], "gen")) return gen(argv[2], atol(argv[3]));
  if (argc >= 3 && !strcmp(argv[1], "load")) return load(argv[2]);
  if (argc >= 4 && !strcmp(argv[1], "refresh")) return refresh(argv[2], atoi(argv[3]));
  if (argc >= 3 && !strcmp(argv[1], "digest")) return digest(argv[2]);
  if (argc >= 5 && !strcmp(argv[1], "commits")) return commits(argv[2], atoi(argv[3]), atoi(argv[4]));
  fprintf(stderr, "usage: bench_delta gen DIR N | load DIR | refresh DIR K | commits DIR W C | digest DIR\n");
  return 2;
}
