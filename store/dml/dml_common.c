/* dml_common.c: what DELETE, UPDATE (dml_run.c) and MERGE (dml_merge.c) share: clocks, the
 * table checks, the scan of one file, the remove action, the commit and the one-row result
 * (dml_int.h). */
#include "store/dml/dml_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "store/scan/scn.h"

int64_t dml__mono_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t dml__wall_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool dml__prop_true(const dl_snapshot *s, const char *key) {
  const char *v = dl_snapshot_property(s, key);
  return v && !strcasecmp(v, "true");
}

bool dml__use_dv(const dl_snapshot *s) {
  const dl_protocol *p = dl_snapshot_protocol(s);
  if (!dml__prop_true(s, "delta.enableDeletionVectors")) return false;
  for (size_t i = 0; p->writer_features && i < p->num_writer_features; i++)
    if (!strcmp(p->writer_features[i], "deletionVectors")) return true;
  return false;
}

int dml__check_table(const dl_snapshot *s, const char *op, bool append_only_ok) {
  int rc = dl_protocol_check(dl_snapshot_protocol(s), true);
  if (rc) return rc;
  if (!append_only_ok && dml__prop_true(s, "delta.appendOnly"))
    return dd_err_set(DD_EPRECOND, "%s: [DELTA_CANNOT_MODIFY_APPEND_ONLY] This table is configured "
                      "to only allow appends. If you would like to permit updates or deletes, use "
                      "'ALTER TABLE <table_name> SET TBLPROPERTIES (delta.appendOnly=false)'.", op);
  return 0;
}

int dml__reserve(void **v, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t c = *cap ? *cap * 2 : 16;
  void *p = realloc(*v, c * size);
  if (!p) return dml__oom();
  *v = p;
  *cap = c;
  return 0;
}

int dml__open_scan(scn_scan **sc, dl_table *t, dl_snapshot *s, const char *path, size_t batch_rows,
                   const char *const *roots, size_t nroots, const char *const *columns, size_t ncolumns,
                   unsigned threads, bool row_tracking) {
  scn_opts so = SCN_OPTS_INIT;
  so.row_tracking = row_tracking;
  so.threads = threads;
  so.only_file = path;
  so.batch_rows = batch_rows;
  so.roots = roots;
  so.num_roots = nroots;
  so.columns = columns;
  so.num_columns = ncolumns;
  return scn_open(sc, t, s, &so);
}

int dml__remove(dl_txn *x, const dl_file *f, int64_t now) {
  dl_file rm = *f;
  rm.data_change = true;
  rm.deletion_timestamp = now;
  return dl_txn_remove_file(x, &rm);
}

int dml__replace_dv(dl_txn *x, dml__dvfile *dvf, const dl_file *f, const uint64_t *rows, size_t n,
                    int64_t now) {
  char *stats = NULL;
  dl_dv dv = {0};
  int rc = dml__dv_append(dvf, rows, n, &dv);
  if (!rc) rc = dml__stats_loose(&stats, f->stats);
  dl_file rm = *f, add = *f;
  rm.data_change = add.data_change = true;
  rm.deletion_timestamp = now;
  add.dv = &dv;
  add.stats = stats;
  if (!rc) rc = dl_txn_remove_file(x, &rm);
  if (!rc) rc = dl_txn_add_file(x, &add);
  free(stats);
  return rc;
}

int dml__commit(dl_txn *x, const char *op, const char *params, const char *metrics, int max_retries,
                int64_t now_ms, int64_t *version) {
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.operation = op;
  co.operation_parameters = params;
  co.operation_metrics = metrics;
  co.max_retries = max_retries;
  co.now_ms = now_ms;
  return dl_txn_commit(x, &co, version);
}

int dml__i64_row(dop_result **out, const dop_col *cols, const int64_t *v, size_t n) {
  *out = NULL;
  dop_result *d = calloc(1, sizeof *d);
  dop_cell *c = d ? calloc(n, sizeof *c) : NULL;
  if (!c) {
    free(d);
    return dml__oom();
  }
  for (size_t i = 0; i < n; i++) c[i].kind = DOP_I64, c[i].i64 = v[i];
  d->ncols = n;
  d->cols = cols;
  d->nrows = 1;
  d->cells = c;
  d->cap = n;
  *out = d;
  return 0;
}
