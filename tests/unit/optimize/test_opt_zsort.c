/* test_opt_zsort.c: the Z-order sort in bounded memory (opt_zsort.c): rows spilled in many
 * sorted runs and merged come out in the same order as sorted in memory (ranks exact
 * while the partition has at most OPT_ZS_SAMPLE rows; ties in arrival order), batches cut
 * where asked; and OPTIMIZE ZORDER BY's peak RSS (a child process, wait4) does not grow
 * with the table: 8x the rows with a 1 MiB target stay within a few MiB of the small
 * table's peak (it held the whole partition twice before). Also compaction into several
 * bins, each bin's writer finished on a thread while the next is read (opt_finish.c): every
 * bin's file committed, every row kept. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "store/dwrite/dw.h"
#include "store/optimize/opt_int.h"
#include "store/scan/scn.h"
#include "tests/unit/new_table.h"

/* ---- the sort: spilled and merged == in memory ----------------------------------------- */

static arw_schema *grid_schema(int *x, int *y, int *v) {
  arw_schema *s;
  assert_int_equal(arw_schema_new(&s), 0);
  arw_schema_add(s, ARW_ROOT, "x", ARW_INT32, true, x);
  arw_schema_add(s, ARW_ROOT, "y", ARW_UTF8, true, y);
  arw_schema_add(s, ARW_ROOT, "v", ARW_INT64, true, v);
  return s;
}

/* rows [from, to): x with duplicates and nulls, y few distinct strings, v the row number */
static void grid_rows(arw_batch *b, int x, int y, int v, int64_t from, int64_t to) {
  arw_batch_clear(b);
  for (int64_t i = from; i < to; i++) {
    if (i % 97 == 0) arw_append_null(b, x);
    else arw_append_i32(b, x, (int32_t)((i * 7919) % 1000) - 500);
    char t[16];
    int n = snprintf(t, sizeof t, "s%03d", (int)((i * 31) % 50));
    arw_append_str(b, y, t, (size_t)n);
    arw_append_i64(b, v, i);
  }
}

typedef struct sink {
  arw_buf ipc;
  size_t rows, batches, max_rows;
  size_t cut;
  bool crossed;
} sink;

static int collect(void *ctx, const arw_batch *b) {
  sink *k = ctx;
  size_t n = arw_batch_rows(b);
  if (k->cut && k->rows / k->cut != (k->rows + n - 1) / k->cut) k->crossed = true;
  k->rows += n;
  k->batches++;
  if (n > k->max_rows) k->max_rows = n;
  return arw_write_batch(&k->ipc, b);
}

static void sort_grid(sink *out, size_t run_bytes, int64_t rows, size_t *runs, bool hilbert) {
  int x, y, v;
  arw_schema *s = grid_schema(&x, &y, &v);
  arw_batch *b;
  assert_int_equal(arw_batch_new(&b, s), 0);
  const char *names[] = {"x", "y"};
  opt__zsort *z;
  assert_int_equal(opt__zs_new(&z, s, names, 2, hilbert, run_bytes, "/tmp"), 0);
  for (int64_t at = 0; at < rows; at += 1000) {
    grid_rows(b, x, y, v, at, at + 1000 < rows ? at + 1000 : rows);
    int rc = opt__zs_add(z, b);
    if (rc == OPT_ZS_NEED_RANKS) { /* the caller's sample pass over every row */
      arw_batch *all;
      assert_int_equal(arw_batch_new(&all, s), 0);
      for (int64_t a2 = 0; a2 < rows; a2 += 1000) {
        grid_rows(all, x, y, v, a2, a2 + 1000 < rows ? a2 + 1000 : rows);
        assert_int_equal(opt__zs_sample(z, all), 0);
      }
      arw_batch_free(all);
      assert_int_equal(opt__zs_ranks_done(z), 0);
      grid_rows(b, x, y, v, at, at + 1000 < rows ? at + 1000 : rows);
      rc = opt__zs_add(z, b);
    }
    assert_int_equal(rc, 0);
  }
  assert_int_equal(opt__zs_rows(z), (size_t)rows);
  memset(out, 0, sizeof *out);
  out->cut = 3001;
  assert_int_equal(opt__zs_finish(z, 700, out->cut, collect, out), 0);
  *runs = opt__zs_runs_spilled(z);
  opt__zs_free(z);
  arw_batch_free(b);
  arw_schema_free(s);
}

/* The spilled sort gives the in-memory order, for the Z-order and the Hilbert curve (whose
 * order differs from the Z-order's). */
static void spill_matches_memory(bool hilbert, sink *mem) {
  sink disk;
  size_t runs_mem, runs_disk;
  sort_grid(mem, (size_t)1 << 30, 20000, &runs_mem, hilbert);
  sort_grid(&disk, 16 << 10, 20000, &runs_disk, hilbert);
  assert_int_equal(runs_mem, 0);
  assert_true(runs_disk > 5);
  assert_int_equal(mem->rows, 20000);
  assert_int_equal(disk.rows, 20000);
  assert_true(mem->max_rows <= 700 && disk.max_rows <= 700);
  assert_false(mem->crossed);
  assert_false(disk.crossed);
  assert_int_equal(mem->ipc.len, disk.ipc.len);
  assert_memory_equal(mem->ipc.data, disk.ipc.data, mem->ipc.len);
  arw_buf_free(&disk.ipc);
}

static void test_spill_matches_memory(void **state) {
  (void)state;
  sink z, hb;
  spill_matches_memory(false, &z);
  spill_matches_memory(true, &hb);
  assert_true(z.ipc.len != hb.ipc.len || memcmp(z.ipc.data, hb.ipc.data, z.ipc.len) != 0);
  arw_buf_free(&z.ipc);
  arw_buf_free(&hb.ipc);
}

/* ---- peak memory of OPTIMIZE ZORDER BY -------------------------------------------------- */

static const char *SCHEMA =
    "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,"
    "\"metadata\":{}},{\"name\":\"k\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"s\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"v\",\"type\":\"double\",\"nullable\":true,\"metadata\":{}}]}";

/* A table of nfiles files of 10,000 rows each. */
static void make_table(const char *dir, int nfiles) {
  dl_table *t;
  assert_int_equal(dl_table_open(&t, dir), 0);
  assert_int_equal(tu_new_table(t, SCHEMA), 0);
  dl_snapshot *s;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  arw_schema *as;
  int id, k, st, dv;
  assert_int_equal(arw_schema_new(&as), 0);
  arw_schema_add(as, ARW_ROOT, "id", ARW_INT64, true, &id);
  arw_schema_add(as, ARW_ROOT, "k", ARW_INT32, true, &k);
  arw_schema_add(as, ARW_ROOT, "s", ARW_UTF8, true, &st);
  arw_schema_add(as, ARW_ROOT, "v", ARW_FLOAT64, true, &dv);
  arw_batch *b;
  assert_int_equal(arw_batch_new(&b, as), 0);
  dw_opts wo = DW_OPTS_INIT;
  dw_writer *w;
  assert_int_equal(dw_open(&w, t, s, as, &wo), 0);
  for (int f = 0; f < nfiles; f++) {
    arw_batch_clear(b);
    for (int64_t r = 0; r < 10000; r++) {
      int64_t i = (int64_t)f * 10000 + r;
      arw_append_i64(b, id, i);
      arw_append_i32(b, k, (int32_t)((i * 2654435761u) % 100003));
      char txt[40];
      int n = snprintf(txt, sizeof txt, "value-%012lld-%06lld", (long long)(i * 7), (long long)(i % 999983));
      arw_append_str(b, st, txt, (size_t)n);
      arw_append_f64(b, dv, (double)i / 3.0);
    }
    assert_int_equal(dw_write(w, b), 0);
    assert_int_equal(dw_next_file(w), 0);
  }
  assert_int_equal(dw_finish(w), 0);
  assert_int_equal(tu_commit_writer(t, s, w), 0);
  dw_free(w);
  arw_batch_free(b);
  arw_schema_free(as);
  dl_snapshot_free(s);
  dl_table_free(t);
}

/* Z-orders a table of nfiles x 10,000 rows in a child; returns its peak RSS in KiB. */
static long zorder_peak_kib(int nfiles) {
  char tmpl[] = "/tmp/opt_zsort_XXXXXX";
  char *dir = mkdtemp(tmpl);
  assert_non_null(dir);
  make_table(dir, nfiles);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    dl_table *t;
    dl_snapshot *s;
    if (dl_table_open(&t, dir) || dl_snapshot_open(&s, t, NULL)) _exit(3);
    const char *by[] = {"k", "s"};
    opt_opts o = OPT_OPTS_INIT;
    o.zorder_by = by;
    o.num_zorder = 2;
    o.target_size = 1 << 20;
    opt_result r;
    int rc = opt_run(&r, t, s, &o);
    if (rc) fprintf(stderr, "opt_run: %s\n", dd_err_msg());
    _exit(rc ? 1 : r.rows_written == (int64_t)nfiles * 10000 ? 0 : 2);
  }
  int status = 0;
  struct rusage ru;
  assert_int_equal(wait4(pid, &status, 0, &ru), pid);
  assert_true(WIFEXITED(status));
  assert_int_equal(WEXITSTATUS(status), 0);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  return ru.ru_maxrss;
}

static void test_zorder_peak_rss(void **state) {
  (void)state;
  long small = zorder_peak_kib(10);  /* 100,000 rows, about 6 MiB of Arrow data */
  long big = zorder_peak_kib(80);    /* 800,000 rows, about 50 MiB: twice that held before */
  fprintf(stderr, "Z-order peak RSS: %ld KiB for 100,000 rows, %ld KiB for 800,000 rows\n",
          small, big);
  assert_true(big < small + 12 * 1024);
}

/* ---- compaction of several bins, each finished behind the next ---------------------------- */

static int max_size_cb(void *ctx, const dl_file *f) {
  int64_t *m = ctx;
  if (f->size > *m) *m = f->size;
  return 0;
}

static int sum_ids_cb(void *ctx, const dl_file *f) {
  (void)f;
  (*(int64_t *)ctx)++;
  return 0;
}

static void test_compact_bins_behind(void **state) {
  (void)state;
  char tmpl[] = "/tmp/opt_bins_XXXXXX";
  char *dir = mkdtemp(tmpl);
  assert_non_null(dir);
  make_table(dir, 12);
  dl_table *t;
  dl_snapshot *s;
  assert_int_equal(dl_table_open(&t, dir), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  int64_t most = 0;
  assert_int_equal(dl_snapshot_files(s, max_size_cb, &most), 0);
  opt_opts o = OPT_OPTS_INIT;
  o.target_size = 3 * most; /* bins of two or three files */
  o.min_file_size = 4 * most;
  opt_result r;
  int rc = opt_run(&r, t, s, &o);
  if (rc) fprintf(stderr, "opt_run: %s\n", dd_err_msg());
  assert_int_equal(rc, 0);
  assert_true(r.num_batches >= 4);
  assert_int_equal(r.num_files_added, r.num_batches); /* every bin's file put and committed */
  assert_int_equal(r.num_files_removed, 12);
  assert_int_equal(r.rows_written, 120000);
  dl_snapshot *after;
  assert_int_equal(dl_snapshot_open(&after, t, NULL), 0);
  int64_t nfiles = 0;
  assert_int_equal(dl_snapshot_files(after, sum_ids_cb, &nfiles), 0);
  assert_int_equal(nfiles, r.num_batches);
  scn_scan *sc;
  scn_opts so = SCN_OPTS_INIT;
  const char *cols[] = {"id"};
  so.columns = cols;
  so.num_columns = 1;
  assert_int_equal(scn_open(&sc, t, after, &so), 0);
  const arw_batch *b;
  int64_t rows = 0, sum = 0;
  while (scn_next(sc, &b) == 0 && b) {
    arw_view v;
    assert_int_equal(arw_batch_view(b, 0, &v), 0);
    for (size_t i = 0; i < arw_batch_rows(b); i++) {
      int64_t x;
      memcpy(&x, v.values + i * 8, 8);
      sum += x;
    }
    rows += (int64_t)arw_batch_rows(b);
  }
  assert_int_equal(rows, 120000);
  assert_int_equal(sum, (int64_t)120000 * 119999 / 2);
  scn_free(sc);
  dl_snapshot_free(after);
  dl_snapshot_free(s);
  dl_table_free(t);
  char cmd[200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_spill_matches_memory),
      cmocka_unit_test(test_zorder_peak_rss),
      cmocka_unit_test(test_compact_bins_behind),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
