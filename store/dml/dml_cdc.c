/* dml_cdc.c: the change data feed of DELETE, UPDATE and MERGE (dml_merge_int.h), as Delta
 * writes it (PROTOCOL.md "Change Data Files", "Add CDC File"): the changed rows, each with
 * its _change_type (delete, insert, update_preimage, update_postimage), in Parquet files
 * under _change_data/ (inside the partition directories of partitioned tables, partition
 * columns only in partitionValues), committed as cdc actions beside the adds and removes.
 * A commit with cdc actions must carry every change of the commit in them: readers then
 * ignore its adds and removes. */
#include "store/dml/dml_merge_int.h"

#include <stdlib.h>
#include <string.h>

static const char *const CHANGE_NAME[DML__CH_N] = {
    [DML__CH_DELETE] = "delete",
    [DML__CH_INSERT] = "insert",
    [DML__CH_PRE] = "update_preimage",
    [DML__CH_POST] = "update_postimage",
};

static int bind_literal(ex_node **out, const char *text, const arw_schema *s) {
  ex_value v = {.type = {EX_T_STRING, 0, 0}, .str = text, .len = strlen(text)};
  ex_node *lit = NULL;
  int rc = ex_new_literal(&lit, &v);
  if (!rc) rc = ex_bind(out, lit, s, NULL);
  ex_free(lit);
  return rc;
}

static int bind_columns(dml__cdc *c, const arw_schema *target) {
  c->ncols = arw_schema_ncolumns(target);
  c->cols = calloc(c->ncols + 1, sizeof *c->cols);
  int rc = c->cols ? arw_schema_new(&c->schema) : dml__oom();
  for (size_t i = 0; i < c->ncols && !rc; i++) {
    int id = arw_schema_column(target, i);
    const char *name = arw_field_name(target, id);
    ex_node *ref = NULL;
    rc = arw_schema_copy_field(c->schema, ARW_ROOT, target, id, NULL, NULL);
    if (!rc) rc = ex_new_column(&ref, &name, 1);
    if (!rc) {
      ex_bind_opts bo = {.case_sensitive = true};
      rc = ex_bind(&c->cols[i], ref, target, &bo);
    }
    ex_free(ref);
  }
  if (!rc) rc = arw_schema_add(c->schema, ARW_ROOT, "_change_type", ARW_UTF8, true, NULL);
  for (int k = 0; k < DML__CH_N && !rc; k++) rc = bind_literal(&c->type[k], CHANGE_NAME[k], target);
  return rc;
}

int dml__cdc_init(dml__cdc *c, dl_table *t, const dl_snapshot *s, const arw_schema *target,
                  pq_codec codec) {
  memset(c, 0, sizeof *c);
  if (!dml__prop_true(s, "delta.enableChangeDataFeed")) return 0;
  c->on = true;
  int rc = bind_columns(c, target);
  if (!rc) rc = dml__router_init(&c->rt, t, s, c->schema, codec, true);
  return rc;
}

int dml__cdc_write(dml__cdc *c, const arw_batch *b, const size_t *idx, size_t n, dml__change kind) {
  if (!c->on || !n) return 0;
  arw_batch *sel = NULL, *out = NULL;
  int rc = idx ? arw_batch_take(&sel, b, idx, n) : 0;
  const arw_batch *in = sel ? sel : b;
  if (!rc) rc = arw_batch_new(&out, c->schema);
  for (size_t i = 0; i < c->ncols && !rc; i++)
    rc = ex_eval(c->cols[i], in, out, arw_schema_column(c->schema, i));
  if (!rc) rc = ex_eval(c->type[kind], in, out, arw_schema_column(c->schema, c->ncols));
  if (!rc) rc = dml__router_write(&c->rt, out);
  if (!rc) c->rows += (int64_t)arw_batch_rows(in);
  arw_batch_free(out);
  arw_batch_free(sel);
  return rc;
}

int dml__cdc_commit(dml__cdc *c, dl_txn *x, int64_t *files) {
  return c->on ? dml__router_commit(&c->rt, x, files, NULL) : 0;
}

void dml__cdc_free(dml__cdc *c, bool abort) {
  if (!c->on) return;
  dml__router_free(&c->rt, abort);
  for (size_t i = 0; c->cols && i < c->ncols; i++) ex_free(c->cols[i]);
  for (int k = 0; k < DML__CH_N; k++) ex_free(c->type[k]);
  free(c->cols);
  arw_schema_free(c->schema);
  memset(c, 0, sizeof *c);
}
