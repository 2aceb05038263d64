/* pq_tool.c: a small command-line tool over the Parquet module, used by the cross-check
 * test and by hand:
 *   pq_tool dump FILE [COLUMN...]   rows as JSON lines (canonical form, see pq_json.c)
 *   pq_tool schema FILE             the schema tree and row groups
 *   pq_tool write-sample OUT [rows] [codec] [dict]  a file exercising the writer
 *   pq_tool count FILE [COLUMN...]  rows, time and peak RSS (benchmark helper) */
#include "common/err.h"
#include "store/parquet/pq.h"
#include "tests/unit/parquet/pq_json.h"
#include "tests/unit/parquet/pq_sample.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

static int open_cursor(const char *path, int ncols, char **cols, pq_file **f,
                       pq_cursor **c) {
  int rc = pq_file_open_path(f, path);
  if (rc) return rc;
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = (const char *const *)cols;
  o.num_columns = (size_t)ncols;
  o.missing_ok = true;
  return pq_cursor_open(c, *f, &o);
}

static int cmd_dump(const char *path, int ncols, char **cols, bool count_only) {
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int rc = open_cursor(path, ncols, cols, &f, &c);
  int64_t rows = 0;
  const pq_value *row;
  while (!rc && !(rc = pq_cursor_next(c, &row)) && row) {
    rows++;
    if (count_only) continue;
    pq_json_print(stdout, pq_cursor_schema(c), row);
    fputc('\n', stdout);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  if (!rc && rows != pq_file_num_rows(f) && !count_only)
    rc = dd_err_set(DD_ECORRUPT, "read %lld rows, footer says %lld", (long long)rows,
                    (long long)pq_file_num_rows(f));
  if (!rc && count_only) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    printf("rows=%lld seconds=%.3f peak_rss_mb=%.1f\n", (long long)rows,
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
           (double)ru.ru_maxrss / 1024.0);
  }
  pq_cursor_free(c);
  pq_file_free(f);
  return rc;
}

static int cmd_schema(const char *path) {
  pq_file *f = NULL;
  int rc = pq_file_open_path(&f, path);
  if (rc) return rc;
  pq_json_schema(stdout, pq_file_schema(f), 0);
  printf("rows=%lld row_groups=%zu created_by=%s\n", (long long)pq_file_num_rows(f),
         pq_file_num_row_groups(f), pq_file_created_by(f) ? pq_file_created_by(f) : "-");
  for (size_t g = 0; g < pq_file_num_row_groups(f); g++)
    for (size_t i = 0; i < pq_file_num_columns(f); i++) {
      pq_chunk_info ci;
      pq_chunk_get(&ci, f, g, i);
      printf("rg %zu col %zu %s codec=%d values=%lld nulls=%lld\n", g, i,
             pq_file_column(f, i)->name, ci.codec, (long long)ci.num_values,
             (long long)(ci.stats.has_null_count ? ci.stats.null_count : -1));
    }
  pq_file_free(f);
  return 0;
}

int main(int argc, char **argv) {
  int rc = DD_EINVAL;
  if (argc >= 3 && strcmp(argv[1], "dump") == 0) rc = cmd_dump(argv[2], argc - 3, argv + 3, false);
  else if (argc >= 3 && strcmp(argv[1], "count") == 0) rc = cmd_dump(argv[2], argc - 3, argv + 3, true);
  else if (argc == 3 && strcmp(argv[1], "schema") == 0) rc = cmd_schema(argv[2]);
  else if (argc >= 3 && strcmp(argv[1], "write-sample") == 0)
    rc = pq_sample_write(argv[2], argc > 3 ? atol(argv[3]) : 100,
                         argc > 4 ? atoi(argv[4]) : PQ_CODEC_SNAPPY,
                         argc > 5 ? atoi(argv[5]) != 0 : true);
  else {
    fprintf(stderr, "usage: pq_tool dump|count|schema|write-sample FILE ...\n");
    return 2;
  }
  if (rc) {
    fprintf(stderr, "pq_tool: %s: %s\n", dd_err_name(rc), dd_err_msg());
    return 1;
  }
  return 0;
}
