/* dml_generated.c: generated and identity columns in UPDATE and MERGE, as Delta 4.4 does
 * them (probed):
 *  - a generated column (delta.generationExpression) that a statement does not assign is
 *    computed from the row's new values: its expression with every column replaced by that
 *    column's new value; one it assigns keeps the value given;
 *  - every new row must satisfy the CHECK constraint "Generated Column (g <=> (expr))",
 *    with Delta's message;
 *  - an identity column keeps its values: assigning one is Delta's
 *    DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED (the values of inserted rows come from
 *    dml_identity.c). */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/dml/dml_int.h"

#include "common/buf.h"

static char *meta_string(const dl_field *f, const char *key) {
  if (!f || !f->metadata_json || !strstr(f->metadata_json, key)) return NULL;
  json_t *j = json_loads(f->metadata_json, 0, NULL);
  const char *v = json_string_value(json_object_get(j, key));
  char *out = v ? strdup(v) : NULL;
  json_decref(j);
  return out;
}

bool dml__identity(const dl_field *f) {
  return f && f->metadata_json && strstr(f->metadata_json, "\"delta.identity.");
}

int dml__gen_parse(ex_node **out, const dl_field *f) {
  *out = NULL;
  char *text = meta_string(f, "delta.generationExpression");
  if (!text) return 0;
  int rc = ex_parse(out, text, strlen(text), NULL);
  free(text);
  return rc ? dd_err_wrap(rc, "the generation expression of column %s", f->name) : 0;
}

typedef struct sub {
  const arw_schema *ts;
  ex_node *const *vals;
  bool touched;
} sub;

static int replace(ex_node **out, const ex_node *col, void *ctx) {
  sub *c = ctx;
  size_t n = 0;
  const char *const *parts = ex_column_parts(col, &n);
  for (size_t i = 0, nc = arw_schema_ncolumns(c->ts); i < nc; i++) {
    int id = arw_schema_column(c->ts, i);
    if (strcasecmp(arw_field_name(c->ts, id), parts[0]) || !c->vals[i]) continue;
    c->touched = true;
    if (n == 1) {
      ex_node *v = NULL;
      int rc = ex_clone(&v, c->vals[i]);
      return rc ? rc : ex_new_cast(out, v, ex_type_of_arrow(c->ts, id));
    }
    size_t vn = 0;
    const char *const *vp = ex_node_kind(c->vals[i]) == EX_COLUMN ? ex_column_parts(c->vals[i], &vn) : NULL;
    if (!vp)
      return dd_err_set(DD_EUNSUPPORTED, "a generation expression reading a field of %s, which is assigned "
                        "an expression: not supported by deltad yet", parts[0]);
    const char **all = malloc((vn + n - 1) * sizeof *all);
    if (!all) return dml__oom();
    memcpy(all, vp, vn * sizeof *all);
    memcpy(all + vn, parts + 1, (n - 1) * sizeof *all);
    int rc = ex_new_column(out, all, vn + n - 1);
    free(all);
    return rc;
  }
  return 0;
}

int dml__gen_value(ex_node **out, bool *touched, const ex_node *gen, const arw_schema *ts,
                   ex_node *const *vals) {
  sub c = {ts, vals, false};
  int rc = ex_map_columns(out, gen, replace, &c);
  *touched = c.touched;
  return rc;
}

int dml__gen_constraints(dml__bound *b, const dl_snapshot *s) {
  const dl_type *root = dl_schema_root(dl_snapshot_schema(s));
  int rc = 0;
  for (size_t i = 0; root && i < root->num_fields && !rc; i++) {
    const dl_field *f = &root->fields[i];
    char *text = meta_string(f, "delta.generationExpression");
    if (!text) continue;
    dd_buf sql = {0};
    dd_buf_printf(&sql, "%s <=> (%s)", f->name, text);
    free(text);
    ex_node *e = NULL;
    char **name = NULL, **txt = NULL;
    ex_node **cons = realloc(b->cons, (b->ncons + 1) * sizeof *cons);
    if (cons) b->cons = cons;
    if (cons && (name = realloc(b->cons_name, (b->ncons + 1) * sizeof *name))) b->cons_name = name;
    if (name && (txt = realloc(b->cons_sql, (b->ncons + 1) * sizeof *txt))) b->cons_sql = txt;
    if (!txt || sql.oom) {
      dd_buf_free(&sql);
      return dml__oom();
    }
    rc = ex_parse(&e, sql.p, sql.len, NULL);
    if (!rc) rc = ex_bind(&b->cons[b->ncons], e, b->schema, NULL);
    ex_free(e);
    if (rc) {
      rc = dd_err_wrap(DD_EUNSUPPORTED, "the generated column %s (%s) cannot be evaluated", f->name, sql.p);
      dd_buf_free(&sql);
      return rc;
    }
    b->cons_sql[b->ncons] = sql.p; /* taken from the buffer */
    b->cons_name[b->ncons] = strdup("Generated Column");
    if (!b->cons_name[b->ncons++]) return dml__oom();
  }
  return rc;
}
