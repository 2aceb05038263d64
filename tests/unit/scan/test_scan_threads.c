/* test_scan_threads.c: the scan's decode threads (scn_opts.threads) change nothing but the
 * speed: every fixture table (DAT and delta-rs) scanned with 1 and with 4 threads gives the
 * same batches (compared as Arrow IPC bytes), the same stats and, for a table that cannot
 * be read, the same error at the same place; so does a table rewritten into many files of
 * many small row groups (the workers then decode row groups of one file out of order), and
 * a scan stopped early by its limit or freed half-way. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "store/dwrite/dw.h"
#include "store/scan/scn.h"
#include "tests/unit/new_table.h"

/* What a scan gave: its batches as IPC bytes, its final code and message, its stats. */
typedef struct result {
  arw_buf ipc;
  size_t nbatches;
  int rc;
  char msg[512];
  scn_stats st;
} result;

static void scan_to(result *r, dl_table *t, dl_snapshot *s, unsigned threads,
                    size_t batch_rows, int64_t limit) {
  memset(r, 0, sizeof *r);
  scn_opts o = SCN_OPTS_INIT;
  o.threads = threads;
  o.batch_rows = batch_rows;
  o.limit = limit;
  scn_scan *sc = NULL;
  r->rc = scn_open(&sc, t, s, &o);
  const arw_batch *b = NULL;
  while (!r->rc && !(r->rc = scn_next(sc, &b)) && b) {
    assert_int_equal(arw_write_batch(&r->ipc, b), 0);
    r->nbatches++;
  }
  if (r->rc) snprintf(r->msg, sizeof r->msg, "%s", dd_err_msg());
  if (sc) scn_stats_get(sc, &r->st);
  scn_free(sc);
}

static void same(const result *a, const result *b, const char *what) {
  if (a->rc != b->rc || strcmp(a->msg, b->msg) || a->nbatches != b->nbatches ||
      a->ipc.len != b->ipc.len || (a->ipc.len && memcmp(a->ipc.data, b->ipc.data, a->ipc.len)))
    fail_msg("%s: 1 thread: rc %d '%s' %zu batches %zu bytes; 4 threads: rc %d '%s' %zu "
             "batches %zu bytes", what, a->rc, a->msg, a->nbatches, a->ipc.len, b->rc, b->msg,
             b->nbatches, b->ipc.len);
  if (!a->rc) {
    assert_int_equal(a->st.files_read, b->st.files_read);
    assert_int_equal(a->st.row_groups_read, b->st.row_groups_read);
    assert_int_equal(a->st.rows_read, b->st.rows_read);
    assert_int_equal(a->st.rows_deleted, b->st.rows_deleted);
    assert_int_equal(a->st.rows_returned, b->st.rows_returned);
  }
}

/* Scans table dir (when its snapshot opens) with 1 and 4 threads; returns the rows. */
static int64_t compare_table(const char *dir, size_t batch_rows, int64_t limit) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  if (dl_table_open(&t, dir)) return -1;
  if (dl_snapshot_open(&s, t, NULL)) {
    dl_table_free(t);
    return -1; /* the tables that must not open are another test's */
  }
  result a, b;
  scan_to(&a, t, s, 1, batch_rows, limit);
  scan_to(&b, t, s, 4, batch_rows, limit);
  same(&a, &b, dir);
  int64_t rows = a.rc ? -1 : a.st.rows_returned;
  arw_buf_free(&a.ipc);
  arw_buf_free(&b.ipc);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rows;
}

static bool is_table(const char *dir) {
  char p[1600];
  struct stat st;
  snprintf(p, sizeof p, "%s/_delta_log", dir);
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Every table at dir/NAME/sub (sub "" or "/delta"), and one level deeper for groups. */
static size_t compare_all(const char *dir, const char *sub) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  struct dirent *e;
  size_t n = 0;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char p[1100];
    snprintf(p, sizeof p, "%s/%s%s", dir, e->d_name, sub);
    if (is_table(p)) {
      compare_table(p, 0, -1);
      compare_table(p, 3, -1);
      compare_table(p, 2, 5);
      n++;
    } else if (!*sub) { /* a group of tables (golden/...) */
      DIR *g = opendir(p);
      struct dirent *ge;
      while (g && (ge = readdir(g))) {
        char q[1400];
        snprintf(q, sizeof q, "%s/%s", p, ge->d_name);
        if (ge->d_name[0] != '.' && is_table(q)) {
          compare_table(q, 0, -1);
          n++;
        }
      }
      if (g) closedir(g);
    }
  }
  closedir(d);
  return n;
}

static void test_fixtures(void **state) {
  (void)state;
  size_t n = compare_all(DD_FIXTURES "/dat/reader_tests/generated", "/delta");
  assert_true(n >= 19);
  n = compare_all(DD_FIXTURES "/delta-rs-data", "");
  assert_true(n >= 40);
  n = compare_all(DD_FIXTURES "/delta-rs-data-err-logs", "");
  assert_true(n >= 3);
}

/* A copy of src's rows in a new table of many files of 2-row row groups. */
static char *rewrite(const char *src) {
  dl_table *t, *nt;
  dl_snapshot *s, *ns;
  assert_int_equal(dl_table_open(&t, src), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  char tmpl[] = "/tmp/scn_threads_XXXXXX";
  char *dir = strdup(mkdtemp(tmpl));
  assert_int_equal(dl_table_open(&nt, dir), 0);
  const dl_metadata *md = dl_snapshot_metadata(s);
  assert_int_equal(md->num_partition_columns, 0);
  assert_int_equal(tu_new_table(nt, md->schema_string), 0);
  assert_int_equal(dl_snapshot_open(&ns, nt, NULL), 0);

  scn_opts so = SCN_OPTS_INIT;
  so.threads = 1;
  scn_scan *sc;
  assert_int_equal(scn_open(&sc, t, s, &so), 0);
  dw_opts wo = DW_OPTS_INIT;
  wo.row_group_rows = 2;
  wo.target_file_bytes = 1;
  dw_writer *w;
  assert_int_equal(dw_open(&w, nt, ns, scn_schema(sc), &wo), 0);
  const arw_batch *b;
  size_t k = 0;
  while (!scn_next(sc, &b) && b) {
    assert_int_equal(dw_write(w, b), 0);
    if (++k % 3 == 0) assert_int_equal(dw_next_file(w), 0);
  }
  assert_int_equal(dw_finish(w), 0);
  assert_true(dw_num_files(w) >= 2);
  assert_int_equal(tu_commit_writer(nt, ns, w), 0);
  dw_free(w);
  scn_free(sc);
  dl_snapshot_free(ns);
  dl_table_free(nt);
  dl_snapshot_free(s);
  dl_table_free(t);
  return dir;
}

static void test_many_row_groups(void **state) {
  (void)state;
  const char *srcs[] = {DD_FIXTURES "/dat/reader_tests/generated/all_primitive_types/delta",
                        DD_FIXTURES "/dat/reader_tests/generated/nested_types/delta"};
  for (size_t i = 0; i < 2; i++) {
    char *dir = rewrite(srcs[i]);
    int64_t rows = compare_table(dir, 0, -1);
    assert_true(rows >= 3);
    assert_int_equal(compare_table(dir, 1, -1), rows);
    assert_int_equal(compare_table(dir, 1, 2), 2); /* stopped with workers ahead */
    /* freed half-way: the workers stop and nothing leaks (ASan) */
    dl_table *t;
    dl_snapshot *s;
    assert_int_equal(dl_table_open(&t, dir), 0);
    assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
    scn_opts o = SCN_OPTS_INIT;
    o.threads = 4;
    o.batch_rows = 1;
    scn_scan *sc;
    assert_int_equal(scn_open(&sc, t, s, &o), 0);
    const arw_batch *b;
    assert_int_equal(scn_next(sc, &b), 0);
    assert_non_null(b);
    scn_free(sc);
    dl_snapshot_free(s);
    dl_table_free(t);
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    assert_int_equal(system(cmd), 0);
    free(dir);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixtures),
      cmocka_unit_test(test_many_row_groups),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
