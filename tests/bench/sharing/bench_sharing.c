/* bench_sharing.c: benchmark of the sharing query engine.
 *   bench_sharing gen DIR N P   a table with N add files in P partitions, written with the
 *                               delta engine's commit API (one commit, then a checkpoint
 *                               when the Parquet writer is built in)
 *   bench_sharing run DIR REPS [CASE]  Query Table timings on the warm snapshot cache: the whole
 *                               table, a jsonPredicateHints partition predicate keeping one
 *                               partition, the same as a SQL hint, a stats predicate, and a
 *                               first page of maxFiles=1000; prints Markdown rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "store/sharing/shq.h"

static double clock_ms(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}
static double now_ms(void) { return clock_ms(CLOCK_MONOTONIC); }
/* CPU time of this thread: steadier than wall time on a loaded machine. */
static double cpu_ms(void) { return clock_ms(CLOCK_THREAD_CPUTIME_ID); }

static void die(const char *what) {
  fprintf(stderr, "%s: %s\n", what, dd_err_msg());
  exit(1);
}

static int gen(const char *dir, long n, long parts) {
  dl_table *t = NULL;
  dl_txn *x = NULL;
  if (dl_table_open(&t, dir) || dl_txn_begin(&x, t, NULL)) die("open");
  dl_protocol p = {.min_reader_version = 1, .min_writer_version = 2};
  const char *pc[] = {"part"};
  dl_metadata_spec md = {
      .schema_string = "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\","
                       "\"nullable\":true,\"metadata\":{}},{\"name\":\"value\",\"type\":\"double\","
                       "\"nullable\":true,\"metadata\":{}},{\"name\":\"part\",\"type\":\"string\","
                       "\"nullable\":true,\"metadata\":{}}]}",
      .num_partition_columns = 1, .partition_columns = pc, .created_time = -1};
  if (dl_txn_set_protocol(x, &p) || dl_txn_set_metadata(x, &md)) die("metadata");
  double t0 = now_ms();
  for (long i = 0; i < n; i++) {
    char path[96], val[32], stats[256], *pv = NULL;
    snprintf(val, sizeof val, "p%03ld", i % parts);
    snprintf(path, sizeof path, "part=%s/part-%07ld-c000.snappy.parquet", val, i);
    snprintf(stats, sizeof stats, "{\"numRecords\":1000,\"minValues\":{\"id\":%ld,\"value\":0.5},"
             "\"maxValues\":{\"id\":%ld,\"value\":99.5},\"nullCount\":{\"id\":0,\"value\":3}}",
             i * 1000, i * 1000 + 999);
    const char *k[] = {"part"}, *v[] = {val};
    if (dl_kv_pack(&pv, k, v, 1)) die("pack");
    dl_file f = {.path = path, .size = 4096 + i % 1000, .modification_time = 1700000000000LL,
                 .data_change = true, .stats = stats, .partition_values = pv,
                 .deletion_timestamp = -1, .base_row_id = -1, .default_row_commit_version = -1};
    if (dl_txn_add_file(x, &f)) die("add");
    free(pv);
  }
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.checkpoint = false;
  int64_t ver;
  if (dl_txn_commit(x, &co, &ver)) die("commit");
  dl_txn_free(x);
  dl_snapshot *s = NULL;
  if (dl_snapshot_open(&s, t, NULL)) die("snapshot");
  const char *ck = dl_checkpoint_write(t, s) ? "no checkpoint" : "checkpoint";
  printf("generated %ld files in %ld partitions (%s) in %.0f ms\n", n, parts, ck, now_ms() - t0);
  dl_snapshot_free(s);
  dl_table_free(t);
  return 0;
}

static int sign(void *ctx, const char *path, int64_t size, char **url, int64_t *exp) {
  (void)ctx;
  (void)size;
  size_t n = strlen(path);
  if (!(*url = malloc(n + 24))) return DD_ENOMEM;
  memcpy(*url, "https://signed.example/", 23);
  memcpy(*url + 23, path, n + 1);
  *exp = 1900000000000LL;
  return 0;
}

typedef struct sink {
  size_t lines, bytes, files;
} sink;

static int count(void *ctx, const char *json, size_t len) {
  sink *s = ctx;
  s->lines++;
  s->bytes += len + 1;
  s->files += !strncmp(json, "{\"file\"", 7);
  return 0;
}

static int cmp_d(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static const char *only; /* run only the cases whose name contains this */

static void run_case(dl_table *t, const shq_table_opts *o, const char *name, const char *body,
                     const char *caps_hdr, int reps) {
  if (only && !strstr(name, only)) return;
  shq_query q;
  shq_caps c;
  if (shq_query_parse_json(&q, body, strlen(body)) || shq_caps_parse(&c, caps_hdr)) die(name);
  shq_signer sg = {.sign = sign};
  double *ms = calloc((size_t)reps, sizeof *ms), *cpu = calloc((size_t)reps, sizeof *cpu);
  sink s = {0};
  for (int i = 0; i < reps; i++) {
    shq_result res;
    s = (sink){0};
    double t0 = now_ms(), c0 = cpu_ms();
    if (shq_query_table(t, &q, &c, o, &sg, 1700000000000LL, &res, count, &s)) die(name);
    ms[i] = now_ms() - t0;
    cpu[i] = cpu_ms() - c0;
  }
  qsort(ms, (size_t)reps, sizeof *ms, cmp_d);
  qsort(cpu, (size_t)reps, sizeof *cpu, cmp_d);
  printf("| %s | %zu | %.1f | %.2f | %.2f | %.2f |\n", name, s.files, s.bytes / 1048576.0,
         ms[reps / 2], ms[0], cpu[reps / 2]);
  free(ms);
  free(cpu);
  shq_query_clear(&q);
}

static int run(const char *dir, int reps) {
  dl_table *t = NULL;
  shq_table_opts o = SHQ_TABLE_OPTS_INIT;
  o.table_id = "bench";
  if (dl_table_open(&t, dir) || dl_cache_new(&o.cache, (size_t)1 << 31)) die("open");
  double t0 = now_ms();
  dl_snapshot *s = NULL;
  if (dl_cache_get(o.cache, t, &s)) die("load");
  printf("snapshot load (cold, %zu files): %.1f ms\n\n", dl_snapshot_num_files(s), now_ms() - t0);
  dl_snapshot_free(s);
  printf("| query (warm snapshot cache) | files | MiB | median ms | min ms | median CPU ms |\n"
         "|---|---|---|---|---|---|\n");
  const char *jp = "{\"jsonPredicateHints\":\"{\\\"op\\\":\\\"equal\\\",\\\"children\\\":["
                   "{\\\"op\\\":\\\"column\\\",\\\"name\\\":\\\"part\\\",\\\"valueType\\\":\\\"string\\\"},"
                   "{\\\"op\\\":\\\"literal\\\",\\\"value\\\":\\\"p042\\\",\\\"valueType\\\":\\\"string\\\"}]}\"}";
  const char *js = "{\"jsonPredicateHints\":\"{\\\"op\\\":\\\"lessThan\\\",\\\"children\\\":["
                   "{\\\"op\\\":\\\"column\\\",\\\"name\\\":\\\"id\\\",\\\"valueType\\\":\\\"long\\\"},"
                   "{\\\"op\\\":\\\"literal\\\",\\\"value\\\":\\\"1000000\\\",\\\"valueType\\\":\\\"long\\\"}]}\"}";
  run_case(t, &o, "full table, parquet format", "{}", NULL, reps);
  run_case(t, &o, "full table, delta format", "{}", "responseformat=delta", reps);
  run_case(t, &o, "jsonPredicateHints part = p042 (1%)", jp, NULL, reps);
  run_case(t, &o, "predicateHints part = 'p042' (1%)", "{\"predicateHints\":[\"part = 'p042'\"]}", NULL, reps);
  run_case(t, &o, "jsonPredicateHints on stats id < 1e6 (1%)", js, NULL, reps);
  run_case(t, &o, "limitHint 10000 (10 files)", "{\"limitHint\":10000}", NULL, reps);
  run_case(t, &o, "first page, maxFiles 1000", "{\"maxFiles\":1000}", NULL, reps);
  dl_cache_free(o.cache);
  dl_table_free(t);
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 5 && !strcmp(argv[1], "gen")) return gen(argv[2], atol(argv[3]), atol(argv[4]));
  if ((argc == 4 || argc == 5) && !strcmp(argv[1], "run")) {
    only = argc == 5 ? argv[4] : NULL;
    return run(argv[2], atoi(argv[3]));
  }
  fprintf(stderr, "usage: bench_sharing gen DIR N PARTITIONS | run DIR REPS [CASE]\n");
  return 2;
}
