/* dml_rowtrack.c: row tracking in DELETE, UPDATE and MERGE rewrites (PROTOCOL.md "Row
 * Tracking"). When the table enables it (dl_rowtrack_enabled), the scans of rewritten files
 * carry each row's stable row id and commit version (scn_opts.row_tracking) and the writers
 * write them into the materialized columns (dw_opts.row_tracking): a copied row keeps both,
 * an updated row keeps its id and gets a null version (the new file's
 * defaultRowCommitVersion); a row MERGE inserts has neither (its id the new file's
 * baseRowId + its position). */
#include "store/dml/dml_int.h"

#include <stdlib.h>
#include <string.h>

#include "store/scan/scn.h"

int dml__rt_schema(arw_schema **out, const dml__bound *b, const dl_snapshot *s) {
  *out = NULL;
  arw_schema *rs = NULL;
  const char *names[2] = {dl_snapshot_property(s, DL_RT_ID_COLUMN_KEY),
                          dl_snapshot_property(s, DL_RT_VERSION_COLUMN_KEY)};
  int rc = arw_schema_new(&rs);
  if (!rc) rc = scn_arrow_schema(rs, dl_schema_root(dl_snapshot_schema(s)), NULL, 0);
  for (size_t i = 0; !rc && i < b->ncols; i++)
    if (arw_schema_column(rs, i) != arw_schema_column(b->schema, i))
      rc = dd_err_set(DD_EINTERNAL, "row tracking: the output schema does not line up");
  for (int k = 0; k < 2 && !rc; k++) rc = arw_schema_add(rs, ARW_ROOT, names[k], ARW_INT64, true, NULL);
  if (rc) arw_schema_free(rs);
  else *out = rs;
  return rc;
}

/* Column `name` of in's rows idx[0..n) (idx NULL: rows 0..n) as n INT64 values and validity
 * bytes; matched rows (matched NULL: all) null when `drop`. */
static int take_col(const arw_batch *in, const char *name, const size_t *idx, const uint8_t *matched,
                    bool drop, int64_t *v, uint8_t *ok, size_t n) {
  int id = arw_schema_find(arw_batch_schema(in), ARW_ROOT, name);
  arw_view w;
  int rc = id >= 0 ? arw_batch_view(in, id, &w) : dd_err_set(DD_EINTERNAL, "row tracking: no column %s", name);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) {
    size_t j = idx ? idx[i] : i;
    bool gone = drop && (!matched || matched[i]);
    ok[i] = !gone && arw_view_valid(&w, j);
    v[i] = ok[i] ? ((const int64_t *)w.values)[j] : 0;
  }
  return 0;
}

static int append(arw_batch *out, const arw_batch *in, const size_t *idx, size_t n,
                  const uint8_t *matched) {
  const arw_schema *os = arw_batch_schema(out);
  size_t nc = arw_schema_ncolumns(os);
  int64_t *v = malloc((n ? n : 1) * sizeof *v);
  uint8_t *ok = malloc(n ? n : 1);
  int rc = v && ok ? 0 : dml__oom();
  for (int k = 0; k < 2 && !rc; k++) {
    int oid = arw_schema_column(os, nc - 2 + (size_t)k);
    rc = take_col(in, arw_field_name(os, oid), idx, matched, k == 1, v, ok, n);
    if (!rc) rc = arw_append_fixed(out, oid, v, n, ok);
  }
  free(v);
  free(ok);
  return rc;
}

int dml__rt_append(arw_batch *out, const arw_batch *in, const uint8_t *matched) {
  return append(out, in, NULL, arw_batch_rows(in), matched);
}

int dml__rt_append_updated(arw_batch *out, const arw_batch *in, const size_t *idx, size_t n) {
  return append(out, in, idx, n, NULL);
}
