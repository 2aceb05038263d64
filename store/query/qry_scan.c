/* qry_scan.c: the scan source: a Delta snapshot's rows through store/scan, with the
 * filter's data skipping (ex_skipper over partition values and stats) deciding which files
 * are read; the filter itself is applied to the rows by a Filter above the scan. The label
 * (explain) names the files read and skipped once the scan has opened. */
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include "store/query/qry_int.h"
#include "store/scan/scn.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

typedef struct scan_op {
  qry_op op;
  dl_table *t;
  dl_snapshot *snap;
  scn_scan *scan;
  arw_schema *logical; /* the snapshot's columns, for binding the skipper's predicate */
  ex_node *pred;   /* bound to logical, for the skipper */
  ex_skipper *sk;
} scan_op;

static bool scan_keep(void *ctx, const dl_file *f) {
  scan_op *s = ctx;
  return !s->sk || ex_skipper_keep(s->sk, f);
}

static int scan_next(qry_op *op, const arw_batch **out) {
  scan_op *s = (scan_op *)op;
  for (;;) {
    int rc = scn_next(s->scan, out);
    if (rc || !*out || arw_batch_rows(*out)) return rc;
  }
}

static void scan_drop(qry_op *op) {
  scan_op *s = (scan_op *)op;
  scn_free(s->scan);
  ex_skipper_free(s->sk);
  ex_free(s->pred);
  arw_schema_free(s->logical);
  dl_snapshot_free(s->snap);
  dl_table_free(s->t);
}

int qry_scan(qry_op **out, dl_table *t, dl_snapshot *snap, const qry_scan_opts *opts) {
  *out = NULL;
  qry_scan_opts o = QRY_SCAN_OPTS_INIT;
  if (opts) o = *opts;
  scan_op *s = qry__new(sizeof *s, NULL, scan_next, scan_drop, "Scan delta %s version %lld",
                        dl_table_location(t), (long long)dl_snapshot_version(snap));
  if (!s) {
    dl_snapshot_free(snap);
    dl_table_free(t);
    return OOM();
  }
  s->t = t, s->snap = snap;
  scn_opts so = SCN_OPTS_INIT;
  so.batch_rows = o.batch_rows ? o.batch_rows : QRY_BATCH_ROWS;
  so.keep_file = scan_keep;
  so.keep_ctx = s;
  so.roots = o.roots;
  so.num_roots = o.num_roots;
  so.columns = o.columns;
  so.num_columns = o.num_columns;
  /* the scan consults keep_file while it opens (it lists the files then): the skipper
   * exists first, its predicate bound to the snapshot's logical schema */
  int rc = 0;
  if (o.filter) {
    rc = arw_schema_new(&s->logical);
    if (!rc) rc = scn_arrow_schema(s->logical, dl_schema_root(dl_snapshot_schema(snap)), NULL, 0);
    if (!rc) rc = qry__bind(&s->pred, o.filter, s->logical);
    if (!rc) rc = ex_skipper_new(&s->sk, s->pred, snap);
  }
  if (!rc) rc = scn_open(&s->scan, t, snap, &so);
  if (!rc) s->op.schema = scn_schema(s->scan);
  scn_stats st;
  char *label = NULL;
  if (!rc) scn_stats_get(s->scan, &st);
  if (!rc && asprintf(&label, "%s (%zu of %zu files, %zu skipped)", s->op.label ? s->op.label : "Scan",
                      st.files_total - st.files_skipped, st.files_total, st.files_skipped) >= 0)
    free(s->op.label), s->op.label = label;
  if (rc) return qry_free(&s->op), rc;
  *out = &s->op;
  if (o.filter) return qry_filter(out, *out, o.filter);
  return 0;
}
