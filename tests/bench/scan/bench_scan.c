/* bench_scan.c: bench_scan TABLE [REPS [THREADS [WHERE_COL MIN]]]: full scans of TABLE's
 * latest snapshot to Arrow batches through store/scan (every column, default batch size,
 * THREADS decode threads: default scn_opts' default), REPS times (default 3),
 * printing one line per run: "deltad rows=N seconds=S" (snapshot load included, as the
 * peers' figures include theirs). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "common/err.h"
#include "store/scan/scn.h"

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static unsigned threads;

static int scan_once(const char *path, int64_t *rows) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  scn_scan *sc = NULL;
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  *rows = 0;
  int rc = dl_table_open(&t, path);
  if (!rc) rc = dl_snapshot_open(&s, t, &so);
  scn_opts o = SCN_OPTS_INIT;
  o.threads = threads;
  if (!rc) rc = scn_open(&sc, t, s, &o);
  const arw_batch *b;
  while (!rc && !(rc = scn_next(sc, &b)) && b) *rows += (int64_t)arw_batch_rows(b);
  scn_free(sc);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s TABLE [REPS]\n", argv[0]);
    return 2;
  }
  int reps = argc > 2 ? atoi(argv[2]) : 3;
  threads = argc > 3 ? (unsigned)atoi(argv[3]) : 0;
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
