/* dml_bind.c: the predicate, UPDATE's assignments and the table's CHECK constraints bound
 * to the table's logical schema (see dml_int.h), and the checks of updated rows. Errors
 * carry Delta's and Spark's error classes where they have one. */
#include "store/dml/dml_int.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "store/scan/scn.h"

#define CONSTRAINT_PREFIX "delta.constraints."

static const char *op_name(bool update) { return update ? "UPDATE" : "DELETE"; }

static int bind_pred(dml__bound *b, const dl_snapshot *s, const dml_opts *o, bool update,
                     ex_node **unbound) {
  ex_node *parsed = NULL;
  const ex_node *e = o->predicate;
  int rc = 0;
  if (!e && o->predicate_sql) {
    rc = ex_parse(&parsed, o->predicate_sql, strlen(o->predicate_sql), NULL);
    e = parsed;
  }
  if (!rc && e) rc = ex_bind(&b->pred, e, b->schema, NULL);
  if (rc) {
    rc = dd_err_wrap(rc, "%s: the condition", op_name(update));
  } else if (b->pred && ex_result_type(b->pred).id != EX_T_BOOLEAN &&
             ex_result_type(b->pred).id != EX_T_NULL) {
    char t[64];
    ex_type_format(ex_result_type(b->pred), t, sizeof t);
    rc = dd_err_set(DD_EINVAL, "%s: [DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN] the condition is of "
                    "type \"%s\", not a boolean", op_name(update), t);
  }
  if (!rc && e) rc = ex_name(&b->pred_sql, e);
  b->partition_only = !rc && (!b->pred || ex_check_partition_only(b->pred, s) == 0);
  if (!rc && e) rc = ex_clone(unbound, e);
  ex_free(parsed);
  return rc;
}

static bool is_partition(const dl_snapshot *s, const char *name) {
  const dl_metadata *md = dl_snapshot_metadata(s);
  for (size_t j = 0; j < md->num_partition_columns; j++)
    if (!strcasecmp(name, md->partition_columns[j])) return true;
  return false;
}

static int find_column(const dml__bound *b, const char *name, size_t *out) {
  for (size_t i = 0; i < b->ncols; i++)
    if (!strcasecmp(arw_field_name(b->schema, arw_schema_column(b->schema, i)), name)) {
      *out = i;
      return 0;
    }
  dd_buf cols = {0};
  for (size_t i = 0; i < b->ncols; i++)
    dd_buf_printf(&cols, "%s%s", i ? ", " : "", arw_field_name(b->schema, arw_schema_column(b->schema, i)));
  int rc = dd_err_set(DD_EINVAL, "UPDATE: [DELTA_MISSING_SET_COLUMN] SET column `%s` not found "
                      "given columns: [%s].", name, cols.p ? cols.p : "");
  dd_buf_free(&cols);
  return rc;
}

static int col_ref(ex_node **out, const char *name) { return ex_new_column(out, &name, 1); }

/* if(pred, CAST(value AS type), col), or the value alone without a predicate. */
static int assignment(dml__bound *b, const dl_snapshot *s, size_t i, const ex_node *value,
                      const ex_node *pred) {
  int id = arw_schema_column(b->schema, i);
  const char *name = arw_field_name(b->schema, id);
  ex_type to = ex_type_of_arrow(b->schema, id);
  ex_node *v = NULL, *probe = NULL, *e = NULL;
  int rc = ex_bind(&probe, value, b->schema, NULL);
  if (rc) return dd_err_wrap(rc, "UPDATE: SET %s", name);
  bool same = ex_type_equal(ex_result_type(probe), to);
  ex_free(probe);
  rc = ex_clone(&v, value);
  if (!rc && !same) {
    if (to.id == EX_T_STRUCT || to.id == EX_T_ARRAY || to.id == EX_T_MAP)
      return ex_free(v), dd_err_set(DD_EINVAL, "UPDATE: SET %s: a value of another type cannot be "
                                    "assigned to a nested column", name);
    rc = ex_new_cast(&v, v, to);
  }
  if (!rc && pred) {
    ex_node *args[3] = {NULL, v, NULL};
    v = NULL;
    rc = ex_clone(&args[0], pred);
    if (!rc) rc = col_ref(&args[2], name);
    if (rc) {
      for (int k = 0; k < 3; k++) ex_free(args[k]);
    } else {
      rc = ex_new_call(&e, "if", args, 3);
    }
  } else {
    e = v;
  }
  if (!rc) rc = ex_bind(&b->outs[i], e, b->schema, NULL);
  if (rc) rc = dd_err_wrap(rc, "UPDATE: SET %s", name);
  /* the scan's schema says every column is nullable (as Spark's file scans): the table's */
  const dl_field *df = dl_schema_field(dl_snapshot_schema(s), name);
  if (!rc && df && !df->nullable) {
    ex_node *nn = NULL, *arg = NULL;
    rc = ex_clone(&arg, e);
    if (!rc) rc = ex_new_call(&nn, "isnotnull", &arg, 1);
    if (!rc) rc = ex_bind(&b->not_null[i], nn, b->schema, NULL);
    ex_free(nn);
  }
  ex_free(e);
  return rc;
}

static int conflict(const char *a, const char *b) { return dd_err_wrap(dml__conflict(a, b), "UPDATE"); }

/* SET of a top-level column (its value in given[i]) or of a field inside a struct column
 * (into ns). */
static int set_one(dml__bound *b, const dl_snapshot *s, const dml_assignment *as, const ex_node *pred,
                   dml__nset *ns, const ex_node **given) {
  size_t i = 0;
  for (i = 0; i < b->ncols; i++)
    if (!strcasecmp(arw_field_name(b->schema, arw_schema_column(b->schema, i)), as->column)) break;
  bool whole = i < b->ncols;
  if (!whole) {
    int rc = dml__nset_resolve(ns, b->schema, as->column, as->value, &i, &whole);
    if (rc) return dd_err_wrap(rc, "UPDATE: SET %s", as->column);
    if (i == SIZE_MAX) return find_column(b, as->column, &i);
    if (!whole)
      return b->assigned[i] ? conflict(arw_field_name(b->schema, arw_schema_column(b->schema, i)), as->column) : 0;
  }
  if (b->assigned[i])
    return dd_err_set(DD_EINVAL, "UPDATE: [DUPLICATE_ASSIGNMENTS] The columns or variables `%s` "
                      "appear more than once as assignment targets.", as->column);
  if (dml__nset_first(ns, i)) return conflict(dml__nset_first(ns, i), as->column);
  if (is_partition(s, arw_field_name(b->schema, arw_schema_column(b->schema, i))))
    b->moves_partitions = true; /* rows go through a router */
  b->assigned[i] = true;
  given[i] = as->value;
  return assignment(b, s, i, as->value, pred);
}

/* Identity columns keep their values; generated columns the statement does not assign
 * are computed from the new values of the columns they read (when it assigns one). */
static int generated(dml__bound *b, const dl_snapshot *s, const ex_node **given, const ex_node *pred) {
  int rc = 0;
  for (size_t i = 0; i < b->ncols && !rc; i++) {
    const char *name = arw_field_name(b->schema, arw_schema_column(b->schema, i));
    const dl_field *f = dl_schema_field(dl_snapshot_schema(s), name);
    ex_node *gen = NULL, *v = NULL;
    bool touched = false;
    if (dml__identity(f) && b->assigned[i])
      rc = dd_err_set(DD_EINVAL, "UPDATE: [DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED] UPDATE on IDENTITY "
                      "column %s is not supported.", name);
    if (!rc && !b->assigned[i]) rc = dml__gen_parse(&gen, f);
    if (!rc && gen) rc = dml__gen_value(&v, &touched, gen, b->schema, (ex_node *const *)given); /* read only */
    if (!rc && touched) rc = assignment(b, s, i, v, pred), b->assigned[i] = true;
    ex_free(gen), ex_free(v);
  }
  return rc;
}

static int bind_assignments(dml__bound *b, const dl_snapshot *s, const dml_opts *o,
                            const ex_node *pred) {
  if (!o->num_assignments) return dd_err_set(DD_EINVAL, "UPDATE: at least one SET assignment is required");
  b->outs = calloc(b->ncols + 1, sizeof *b->outs);
  b->not_null = calloc(b->ncols + 1, sizeof *b->not_null);
  b->assigned = calloc(b->ncols + 1, sizeof *b->assigned);
  if (!b->outs || !b->not_null || !b->assigned) return dml__oom();
  const ex_node **given = calloc(b->ncols + 1, sizeof *given); /* top-level values */
  int rc = given ? 0 : dml__oom();
  dml__nset ns = {0};
  for (size_t a = 0; a < o->num_assignments && !rc; a++) {
    if (!o->assignments[a].column || !o->assignments[a].value)
      rc = dd_err_set(DD_EINVAL, "UPDATE: an assignment needs a column and a value");
    else
      rc = set_one(b, s, &o->assignments[a], pred, &ns, given);
  }
  /* struct columns with assigned fields: the rebuilt struct, the predicate inside it */
  for (size_t i = 0; i < b->ncols && !rc; i++) {
    if (!dml__nset_first(&ns, i)) continue;
    const char *name = arw_field_name(b->schema, arw_schema_column(b->schema, i));
    ex_node *v = NULL;
    rc = dml__nset_value(&v, &ns, i, b->schema, &name, 1, b->schema, pred);
    if (!rc) rc = assignment(b, s, i, v, NULL);
    b->assigned[i] = true;
    ex_free(v);
  }
  dml__nset_free(&ns);
  if (!rc) rc = generated(b, s, given, pred);
  free(given);
  for (size_t i = 0; i < b->ncols && !rc; i++) {
    if (b->assigned[i]) continue;
    ex_node *c = NULL;
    rc = col_ref(&c, arw_field_name(b->schema, arw_schema_column(b->schema, i)));
    if (!rc) rc = ex_bind(&b->outs[i], c, b->schema, NULL);
    ex_free(c);
  }
  return rc;
}

int dml__bind_constraints(dml__bound *b, const dl_snapshot *s) {
  const char *cur = dl_snapshot_metadata(s)->configuration, *k, *v;
  size_t n = 0, plen = strlen(CONSTRAINT_PREFIX);
  for (const char *c = cur; c && dl_kv_next(&c, &k, &v);) n += !strncasecmp(k, CONSTRAINT_PREFIX, plen) && v;
  b->cons = calloc(n + 1, sizeof *b->cons);
  b->cons_name = calloc(n + 1, sizeof *b->cons_name);
  b->cons_sql = calloc(n + 1, sizeof *b->cons_sql);
  if (!b->cons || !b->cons_name || !b->cons_sql) return dml__oom();
  int rc = 0;
  while (!rc && cur && dl_kv_next(&cur, &k, &v)) {
    if (strncasecmp(k, CONSTRAINT_PREFIX, plen) || !v) continue;
    size_t i = b->ncons++;
    ex_node *e = NULL;
    b->cons_name[i] = strdup(k + plen);
    b->cons_sql[i] = strdup(v);
    if (!b->cons_name[i] || !b->cons_sql[i]) return dml__oom();
    rc = ex_parse(&e, v, strlen(v), NULL);
    if (!rc) rc = ex_bind(&b->cons[i], e, b->schema, NULL);
    if (rc) rc = dd_err_wrap(DD_EUNSUPPORTED, "UPDATE: CHECK constraint %s (%s) cannot be evaluated",
                             b->cons_name[i], v);
    ex_free(e);
  }
  return rc ? rc : dml__gen_constraints(b, s);
}

int dml__bind(dml__bound *b, const dl_snapshot *s, const dml_opts *o, bool update) {
  memset(b, 0, sizeof *b);
  const dl_type *root = dl_schema_root(dl_snapshot_schema(s));
  ex_node *pred = NULL;
  int rc = arw_schema_new(&b->schema);
  if (!rc) rc = scn_arrow_schema(b->schema, root, NULL, 0);
  b->ncols = rc ? 0 : arw_schema_ncolumns(b->schema);
  if (!rc) rc = bind_pred(b, s, o, update, &pred);
  if (!rc && update) rc = bind_assignments(b, s, o, pred);
  if (!rc && update) rc = dml__bind_constraints(b, s);
  ex_free(pred);
  return rc;
}

void dml__bound_free(dml__bound *b) {
  for (size_t i = 0; i < b->ncols; i++) {
    if (b->outs) ex_free(b->outs[i]);
    if (b->not_null) ex_free(b->not_null[i]);
  }
  for (size_t i = 0; i < b->ncons; i++) {
    ex_free(b->cons[i]);
    free(b->cons_name[i]);
    free(b->cons_sql[i]);
  }
  free(b->cons), free(b->cons_name), free(b->cons_sql);
  free(b->outs), free(b->not_null), free(b->assigned);
  ex_free(b->pred);
  free(b->pred_sql);
  arw_schema_free(b->schema);
  memset(b, 0, sizeof *b);
}

/* Rows of in where bound e is not true: the first one's index, or -1. */
static int first_false(const ex_node *e, const arw_batch *in, int64_t *row) {
  size_t n = arw_batch_rows(in), ones = 0;
  uint8_t *mask = malloc(n + 1);
  if (!mask) return dml__oom();
  int rc = ex_eval_mask(e, in, mask, &ones);
  *row = -1;
  for (size_t r = 0; !rc && ones < n && r < n; r++)
    if (!mask[r]) {
      *row = (int64_t)r;
      break;
    }
  free(mask);
  return rc;
}

int dml__check_not_null(const dml__bound *b, const arw_batch *in) {
  for (size_t i = 0; i < b->ncols; i++) {
    int64_t row;
    if (!b->not_null || !b->not_null[i]) continue;
    int rc = first_false(b->not_null[i], in, &row);
    if (rc) return rc;
    if (row >= 0)
      return dd_err_set(DD_EINVAL, "UPDATE: [DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL constraint "
                        "violated for column: %s.", arw_field_name(b->schema, arw_schema_column(b->schema, i)));
  }
  return 0;
}

int dml__check_constraints(const dml__bound *b, const arw_batch *out) {
  for (size_t i = 0; i < b->ncons; i++) {
    int64_t row;
    int rc = first_false(b->cons[i], out, &row);
    if (rc) return rc;
    if (row >= 0)
      return dd_err_set(DD_EINVAL, "UPDATE: [DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint "
                        "%s (%s) violated by row %lld of the updated rows", b->cons_name[i],
                        b->cons_sql[i], (long long)row);
  }
  return 0;
}
