/* bench_scan.c: bench_scan TABLE [REPS [THREADS [WHERE]]]: full scans of TABLE's latest
 * snapshot to Arrow batches through store/scan (every column, default batch size, THREADS
 * decode threads: 0 scn_opts' default), REPS times (default 3); with WHERE (a Spark SQL
 * predicate) files are skipped by their stats (ex_skipper_keep) and the rows where it is
 * not true dropped (ex_eval_mask), as `deltactl table scan --where` does;
 * printing one line per run: "deltad rows=N seconds=S" (snapshot load included, as the
 * peers' figures include theirs). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "store/expr/ex.h"
#include "store/scan/scn.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned threads;
static const char *where;

/* Rows of b where the bound predicate is true. */
static int count_true(const ex_node *bound, const arw_batch *b, uint8_t **mask, size_t *cap,
                      int64_t *rows) {
  size_t n = arw_batch_rows(b), ntrue = 0;
  if (n > *cap) {
    uint8_t *m = realloc(*mask, n);
    if (!m) return dd_err_set(DD_ENOMEM, "out of memory");
    *mask = m;
    *cap = n;
  }
  int rc = ex_eval_mask(bound, b, *mask, &ntrue);
  *rows += (int64_t)ntrue;
  return rc;
}

static int scan_once(const char *path, int64_t *rows) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  scn_scan *sc = NULL;
  ex_node *parsed = NULL, *for_skip = NULL, *bound = NULL;
  ex_skipper *skip = NULL;
  arw_schema *logical = NULL;
  uint8_t *mask = NULL;
  size_t cap = 0;
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  *rows = 0;
  int rc = dl_table_open(&t, path);
  if (!rc) rc = dl_snapshot_open(&s, t, &so);
  scn_opts o = SCN_OPTS_INIT;
  o.threads = threads;
  if (!rc && where) {
    ex_parse_opts po = EX_PARSE_OPTS_INIT;
    rc = ex_parse(&parsed, where, strlen(where), &po);
    if (!rc) rc = arw_schema_new(&logical);
    if (!rc) rc = scn_arrow_schema(logical, dl_schema_root(dl_snapshot_schema(s)), NULL, 0);
    if (!rc) rc = ex_bind(&for_skip, parsed, logical, NULL);
    if (!rc) rc = ex_skipper_new(&skip, for_skip, s);
    o.keep_file = ex_skipper_keep;
    o.keep_ctx = skip;
  }
  if (!rc) rc = scn_open(&sc, t, s, &o);
  if (!rc && where) rc = ex_bind(&bound, parsed, scn_schema(sc), NULL);
  const arw_batch *b;
  while (!rc && !(rc = scn_next(sc, &b)) && b) {
    if (where) rc = count_true(bound, b, &mask, &cap, rows);
    else *rows += (int64_t)arw_batch_rows(b);
  }
  scn_free(sc);
  free(mask);
  ex_skipper_free(skip);
  ex_free(bound);
  ex_free(for_skip);
  ex_free(parsed);
  arw_schema_free(logical);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s TABLE [REPS [THREADS [WHERE]]]\n", argv[0]);
    return 2;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  threads = argc > 3 ? (unsigned)atoi(argv[3]) : 0;
  where = argc > 4 ? argv[4] : NULL;
  for (int i = 0; i < reps; i++) {
    int64_t rows;
    double t0 = now();
    int rc = scan_once(argv[1], &rows);
    double t1 = now();
    if (rc) {
      fprintf(stderr, "bench_scan: %s: %s\n", dd_err_name(rc), dd_err_msg());
      return 1;
    }
    printf("deltad rows=%lld seconds=%.3f\n", (long long)rows, t1 - t0);
    fflush(stdout);
  }
  return 0;
}
