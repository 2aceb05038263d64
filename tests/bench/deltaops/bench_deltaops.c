/* bench_deltaops.c: VACUUM of a table with N unreferenced files (default 100,000) next to
 * `find DIR -type f -delete` on an identical tree, and RESTORE across M file changes
 * (default 10,000: M/2 removes + M/2 re-adds). Prints Markdown. Not run by ctest. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void die(const char *what, int rc) {
  fprintf(stderr, "%s: %s: %s\n", what, dd_err_name(rc), dd_err_msg());
  exit(1);
}

/* nfiles old files in 100 directories under dir (created with mkdir). */
static void make_tree(const char *dir, int nfiles) {
  struct timespec old[2] = {{time(NULL) - 30 * 86400, 0}, {time(NULL) - 30 * 86400, 0}};
  char p[4096];
  for (int d = 0; d < 100; d++) {
    snprintf(p, sizeof p, "%s/dir-%03d", dir, d);
    mkdir(p, 0755);
  }
  for (int i = 0; i < nfiles; i++) {
    snprintf(p, sizeof p, "%s/dir-%03d/part-%06d.parquet", dir, i % 100, i);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0 || write(fd, "PAR1", 4) != 4) die("write", DD_EIO);
    futimens(fd, old);
    close(fd);
  }
  for (int d = 0; d < 100; d++) {
    snprintf(p, sizeof p, "%s/dir-%03d", dir, d);
    utimensat(AT_FDCWD, p, old, 0);
  }
}

static void sh(const char *fmt, const char *arg) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, fmt, arg);
  if (system(cmd) != 0) die(cmd, DD_EIO);
}

static void create_table(const char *loc) {
  dop_column c = {.name = "id", .type = "bigint", .nullable = true};
  dop_create_opts o = {.mode = DOP_CREATE, .location = loc, .num_columns = 1, .columns = &c};
  dop_result *r = NULL;
  int rc = dop_create(&r, &o);
  if (rc) die("create", rc);
  dop_result_free(r);
}

static void bench_vacuum(int nfiles) {
  char base[] = "/tmp/dop_bench_XXXXXX", tbl[4200], plain[4200];
  if (!mkdtemp(base)) die("mkdtemp", DD_EIO);
  snprintf(tbl, sizeof tbl, "%s/table", base);
  snprintf(plain, sizeof plain, "%s/plain", base);
  mkdir(tbl, 0755);
  mkdir(plain, 0755);
  create_table(tbl);
  make_tree(tbl, nfiles);
  make_tree(plain, nfiles);
  sh("sync; cat /dev/null", "");
  double t0 = now_s();
  sh("find '%s' -type f -delete", plain);
  double t_find = now_s() - t0;
  dop_result *r = NULL;
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  uint64_t deleted = 0;
  t0 = now_s();
  int rc = dop_vacuum(&r, tbl, &o, &deleted);
  double t_vac = now_s() - t0;
  if (rc) die("vacuum", rc);
  dop_result_free(r);
  if ((int)deleted != nfiles) {
    fprintf(stderr, "vacuum deleted %llu of %d files\n", (unsigned long long)deleted, nfiles);
    exit(1);
  }
  printf("| vacuum, %d unreferenced files in 100 dirs | %.3f s | %.3f s (`find -type f -delete`) | %.2fx |\n",
         nfiles, t_vac, t_find, t_vac / t_find);
  sh("rm -rf '%s'", base);
}

static void bench_restore(int changes) {
  char base[] = "/tmp/dop_bench_XXXXXX", tbl[4200], p[4300];
  if (!mkdtemp(base)) die("mkdtemp", DD_EIO);
  snprintf(tbl, sizeof tbl, "%s/table", base);
  create_table(tbl);
  int half = changes / 2;
  dl_table *t = NULL;
  int rc = dl_table_open(&t, tbl);
  for (int v = 0; v < 2 && !rc; v++) {
    dl_snapshot *s = NULL;
    dl_txn *x = NULL;
    rc = dl_snapshot_open(&s, t, NULL);
    if (!rc) rc = dl_txn_begin(&x, t, s);
    for (int i = 0; i < half && !rc; i++) {
      snprintf(p, sizeof p, "v%d-part-%06d.parquet", v, i);
      dl_file f = {.path = p, .size = 4, .modification_time = -1, .deletion_timestamp = -1, .data_change = true,
                   .partition_values = "", .base_row_id = -1, .default_row_commit_version = -1};
      if (v == 0) {
        char full[8800];
        snprintf(full, sizeof full, "%s/%s", tbl, p);
        FILE *fp = fopen(full, "w");
        if (fp) fputs("PAR1", fp), fclose(fp);
        rc = dl_txn_add_file(x, &f);
      } else {
        rc = dl_txn_add_file(x, &f);
        snprintf(p, sizeof p, "v0-part-%06d.parquet", i);
        if (!rc) rc = dl_txn_remove_file(x, &f);
      }
    }
    dl_commit_opts co = DL_COMMIT_OPTS_INIT;
    co.checkpoint = false;
    if (!rc) rc = dl_txn_commit(x, &co, NULL);
    dl_txn_free(x);
    dl_snapshot_free(s);
  }
  dl_table_free(t);
  if (rc) die("setup", rc);
  dop_result *r = NULL;
  double t0 = now_s();
  rc = dop_restore(&r, tbl, 1, NULL);
  double t_restore = now_s() - t0;
  if (rc) die("restore", rc);
  int64_t removed = dop_result_cell(r, 0, 2)->i64, restored = dop_result_cell(r, 0, 3)->i64;
  dop_result_free(r);
  printf("| restore across %lld file changes (%lld removed, %lld restored) | %.3f s | | |\n",
         (long long)(removed + restored), (long long)removed, (long long)restored, t_restore);
  sh("rm -rf '%s'", base);
}

int main(int argc, char **argv) {
  int nfiles = argc > 1 ? atoi(argv[1]) : 100000, changes = argc > 2 ? atoi(argv[2]) : 10000;
  printf("| operation | deltad | baseline | ratio |\n|---|---|---|---|\n");
  bench_vacuum(nfiles);
  bench_restore(changes);
  return 0;
}
