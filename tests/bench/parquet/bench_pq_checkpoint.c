/* bench_pq_checkpoint.c: Parquet benchmark on a Delta-checkpoint-shaped file.
 *   bench_pq_checkpoint write FILE [ROWS]  writes ROWS (default 1,000,000) add actions
 *   bench_pq_checkpoint read FILE          reads add.path/size/partitionValues/
 *                                          modificationTime/dataChange/deletionVector
 * Each mode prints its wall time and the process's peak RSS; run them as separate
 * processes (see run_bench.sh) so the read's peak RSS is its own. Not run by ctest. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "common/err.h"
#include "store/parquet/pq.h"

#define F(n, k, nul) {n, k, nul, 0, 0, 0, NULL}
#define G(n, k, nul, kids) {n, k, nul, 0, 0, sizeof kids / sizeof kids[0], kids}

static const pq_wfield kv[] = {F("key", PQ_W_STRING, false), F("value", PQ_W_STRING, true)};
static const pq_wfield dv[] = {F("storageType", PQ_W_STRING, false),
                               F("pathOrInlineDv", PQ_W_STRING, false),
                               F("offset", PQ_W_INT32, true), F("sizeInBytes", PQ_W_INT32, false),
                               F("cardinality", PQ_W_INT64, false)};
static const pq_wfield add[] = {F("path", PQ_W_STRING, true), G("partitionValues", PQ_W_MAP, true, kv),
                                F("size", PQ_W_INT64, true), F("modificationTime", PQ_W_INT64, true),
                                F("dataChange", PQ_W_BOOL, true), F("stats", PQ_W_STRING, true),
                                G("tags", PQ_W_MAP, true, kv), G("deletionVector", PQ_W_STRUCT, true, dv)};
static const pq_wfield rm[] = {F("path", PQ_W_STRING, true), F("deletionTimestamp", PQ_W_INT64, true),
                               F("dataChange", PQ_W_BOOL, true)};
static const pq_wfield top[] = {G("add", PQ_W_STRUCT, true, add), G("remove", PQ_W_STRUCT, true, rm)};
static const pq_wfield root = G("spark_schema", PQ_W_STRUCT, false, top);

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double peak_mb(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_maxrss / 1024.0;
}

static pq_value str(const char *s) {
  return (pq_value){.kind = PQ_V_BYTES, .is_string = 1, .len = (uint32_t)strlen(s),
                    .u.bytes = (const uint8_t *)s};
}

static int bench_write(const char *path, long rows) {
  pq_writer_opts o = PQ_WRITER_OPTS_INIT;
  o.row_group_rows = 250000;
  pq_writer *w = NULL;
  int rc = pq_writer_open_path(&w, path, &root, &o);
  char p[128], stats[160], part[16];
  pq_value pv[2], d[5], a[8], top_v[2], row;
  for (long i = 0; i < rows && !rc; i++) {
    snprintf(p, sizeof p, "date=2024-01-%02ld/part-%05ld-5e4f6c1a-8d2b-4c3e-9f1a-%012ld.c000.snappy.parquet",
             i % 28 + 1, i % 1000, i);
    snprintf(part, sizeof part, "2024-01-%02ld", i % 28 + 1);
    snprintf(stats, sizeof stats, "{\"numRecords\":%ld,\"minValues\":{\"id\":%ld},\"maxValues\":{\"id\":%ld}}",
             i % 5000, i, i + 100);
    pv[0] = str("date");
    pv[1] = str(part);
    d[0] = str("u");
    d[1] = str("ab^-aqEH.-t@S}K{vb[*k^");
    d[2] = (pq_value){.kind = PQ_V_INT32, .u.i32 = 1};
    d[3] = (pq_value){.kind = PQ_V_INT32, .u.i32 = 36};
    d[4] = (pq_value){.kind = PQ_V_INT64, .u.i64 = i % 7};
    a[0] = str(p);
    a[1] = (pq_value){.kind = PQ_V_MAP, .len = 1, .u.items = pv};
    a[2] = (pq_value){.kind = PQ_V_INT64, .u.i64 = 100000 + i};
    a[3] = (pq_value){.kind = PQ_V_INT64, .u.i64 = 1700000000000LL + i};
    a[4] = (pq_value){.kind = PQ_V_BOOL, .u.b = true};
    a[5] = str(stats);
    a[6] = (pq_value){0};
    a[7] = i % 10 == 0 ? (pq_value){.kind = PQ_V_STRUCT, .len = 5, .u.items = d} : (pq_value){0};
    top_v[0] = (pq_value){.kind = PQ_V_STRUCT, .len = 8, .u.items = a};
    top_v[1] = (pq_value){0};
    row = (pq_value){.kind = PQ_V_STRUCT, .len = 2, .u.items = top_v};
    rc = pq_writer_write_row(w, &row);
  }
  if (!rc) rc = pq_writer_close(w, NULL, NULL);
  pq_writer_free(w);
  return rc;
}

static int bench_read(const char *path, long *rows, long *bytes) {
  const char *cols[] = {"add.path", "add.size", "add.partitionValues", "add.modificationTime",
                        "add.dataChange", "add.deletionVector"};
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = cols;
  o.num_columns = 6;
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  int rc = pq_file_open_path(&f, path);
  if (!rc) rc = pq_cursor_open(&c, f, &o);
  const pq_value *row;
  int add = -1, pth = -1;
  if (!rc) {
    const pq_pnode *s = pq_cursor_schema(c);
    add = pq_pnode_child(s, "add");
    pth = pq_pnode_child(&s->children[add], "path");
  }
  while (!rc && !(rc = pq_cursor_next(c, &row)) && row) {
    const pq_value *a = &row->u.items[add];
    if (a->kind == PQ_V_STRUCT) *bytes += a->u.items[pth].len;
    (*rows)++;
  }
  pq_cursor_free(c);
  pq_file_free(f);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: bench_pq_checkpoint write|read FILE [ROWS]\n");
    return 2;
  }
  double t0 = now();
  long rows = argc > 3 ? atol(argv[3]) : 1000000, bytes = 0;
  int rc;
  if (strcmp(argv[1], "write") == 0) {
    rc = bench_write(argv[2], rows);
  } else {
    rows = 0;
    rc = bench_read(argv[2], &rows, &bytes);
  }
  if (rc) {
    fprintf(stderr, "bench: %s\n", dd_err_msg());
    return 1;
  }
  printf("%s rows=%ld seconds=%.3f peak_rss_mb=%.1f path_bytes=%ld\n", argv[1], rows,
         now() - t0, peak_mb(), bytes);
  return 0;
}
