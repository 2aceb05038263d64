/* dml_nested_set.c: assignments to fields inside struct columns (UPDATE SET s.a = ...,
 * MERGE ... UPDATE SET t.s.n.c = ...), as Delta does them: the column's new value is a
 * struct of the target's fields in order, each the assigned value (cast to the field's
 * type), a deeper struct when fields below it are assigned, or the row's own field. Such a
 * struct is not NULL even where the row's was (Delta's); under an UPDATE predicate, rows
 * it does not match keep their value, NULL included. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/dml/dml_int.h"

#include "common/buf.h"

struct dml__nset_item {
  size_t col;
  ex_node *path;        /* the assigned column as a column node: parts[0] the column */
  char *text;           /* as written */
  const ex_node *value; /* borrowed, unbound */
};

static const char *part(const dml__nset_item *it, size_t k) {
  size_t n;
  return ex_column_parts(it->path, &n)[k];
}

static size_t nparts(const dml__nset_item *it) {
  size_t n;
  ex_column_parts(it->path, &n);
  return n;
}

static int not_found(const arw_schema *s, int parent, const char *name) {
  dd_buf b = {0};
  for (int k = 0, n = arw_field_nchildren(s, parent); k < n; k++)
    dd_buf_printf(&b, "%s`%s`", k ? ", " : "", arw_field_name(s, arw_field_child(s, parent, k)));
  int rc = b.oom ? dml__oom()
                 : dd_err_set(DD_EINVAL, "[FIELD_NOT_FOUND] No such struct field `%s` in %s.", name, b.p ? b.p : "");
  dd_buf_free(&b);
  return rc;
}

int dml__nset_resolve(dml__nset *ns, const arw_schema *ts, const char *text, const ex_node *value,
                      size_t *col, bool *whole) {
  *col = SIZE_MAX;
  *whole = false;
  ex_node *path = NULL;
  int rc = ex_new_column_text(&path, text, strlen(text));
  if (rc) return rc;
  size_t n;
  const char *const *p = ex_column_parts(path, &n);
  int id = arw_schema_find_ci(ts, ARW_ROOT, p[0]);
  for (size_t i = 0, nc = arw_schema_ncolumns(ts); id >= 0 && i < nc; i++)
    if (arw_schema_column(ts, i) == id) *col = i;
  *whole = id >= 0 && n == 1;
  if (id < 0 || n < 2) return ex_free(path), 0; /* a column itself, or none */
  for (size_t k = 1; k < n && !rc; k++) {
    int f = arw_field_kind(ts, id) == ARW_STRUCT ? arw_schema_find_ci(ts, id, p[k]) : -2;
    if (f == -2)
      rc = dd_err_set(DD_EINVAL, "[DELTA_UNSUPPORTED_NESTED_COLUMN] `%s` is not in a struct: only struct "
                      "fields can be assigned (not array elements or map values)", text);
    else if (f < 0)
      rc = not_found(ts, id, p[k]);
    id = f;
  }
  if (rc) return ex_free(path), rc;
  dml__nset_item it = {*col, path, NULL, value};
  /* another assignment on the same path, or one above or below it: Delta's conflict */
  for (size_t j = 0; j < ns->n; j++) {
    const dml__nset_item *o = &ns->v[j];
    size_t m = nparts(o) < n ? nparts(o) : n, k = 0;
    if (o->col != *col) continue;
    while (k < m && !strcasecmp(part(o, k), p[k])) k++;
    if (k < m) continue;
    rc = dml__conflict(o->text, text);
    return ex_free(path), rc;
  }
  dml__nset_item *v = realloc(ns->v, (ns->n + 1) * sizeof *v);
  if (v) ns->v = v;
  if (!v || !(it.text = strdup(text))) return ex_free(path), dml__oom();
  ns->v[ns->n++] = it;
  return 0;
}

int dml__conflict(const char *a, const char *b) {
  return dd_err_set(DD_EINVAL, "[DELTA_CONFLICT_SET_COLUMN] There is a conflict from these SET columns: "
                    "[`%s`, `%s`].", a, b);
}

const char *dml__nset_first(const dml__nset *ns, size_t col) {
  for (size_t j = 0; j < ns->n; j++)
    if (ns->v[j].col == col) return ns->v[j].text;
  return NULL;
}

void dml__nset_free(dml__nset *ns) {
  for (size_t j = 0; j < ns->n; j++) ex_free(ns->v[j].path), free(ns->v[j].text);
  free(ns->v);
  memset(ns, 0, sizeof *ns);
}

typedef struct bctx {
  const dml__nset *ns;
  size_t col;
  const arw_schema *ts, *bs;
  const ex_node *pred;
} bctx;

typedef struct refp {
  const char *const *v;
  size_t n;
} refp;

static int ref_node(ex_node **out, const refp *r) { return ex_new_column(out, r->v, r->n); }

/* v cast to field id's type when the types differ. */
static int leaf(ex_node **out, const bctx *c, int id, const ex_node *value, const refp *ref) {
  ex_node *probe = NULL, *v = NULL;
  int rc = ex_bind(&probe, value, c->bs, NULL);
  ex_type to = ex_type_of_arrow(c->ts, id);
  bool same = !rc && ex_type_equal(ex_result_type(probe), to);
  ex_free(probe);
  if (!rc) rc = ex_clone(&v, value);
  if (!rc && !same) rc = ex_new_cast(&v, v, to), v = rc ? NULL : v;
  if (rc || !c->pred) return *out = v, rc;
  ex_node *args[3] = {NULL, v, NULL};
  rc = ex_clone(&args[0], c->pred);
  if (!rc) rc = ref_node(&args[2], ref);
  if (rc) return ex_free(args[0]), ex_free(v), ex_free(args[2]), rc;
  return ex_new_call(out, "if", args, 3);
}

/* if(pred, true, if(isnotnull(ref), true, NULL)): NULL only where pred does not hold and
 * the row's struct is NULL. */
static int guard(ex_node **out, const bctx *c, const refp *ref) {
  ex_value t = {.type = {EX_T_BOOLEAN}, .b = true}, nul = {.type = {EX_T_NULL}, .is_null = true};
  ex_node *in[3] = {0}, *out3[3] = {0}, *r = NULL;
  int rc = ref_node(&r, ref);
  if (!rc) rc = ex_new_call(&in[0], "isnotnull", &r, 1);
  if (!rc) rc = ex_new_literal(&in[1], &t);
  if (!rc) rc = ex_new_literal(&in[2], &nul);
  if (!rc) rc = ex_new_call(&out3[2], "if", in, 3);
  else ex_free(in[0]), ex_free(in[1]), ex_free(in[2]);
  if (!rc) rc = ex_clone(&out3[0], c->pred);
  if (!rc) rc = ex_new_literal(&out3[1], &t);
  if (!rc) return ex_new_call(out, "if", out3, 3);
  for (int k = 0; k < 3; k++) ex_free(out3[k]);
  return rc;
}

/* The struct for field id at depth d (ref: its path in the bound schema). */
static int build(ex_node **out, const bctx *c, int id, size_t d, refp *ref) {
  int nf = arw_field_nchildren(c->ts, id);
  size_t first = c->pred ? 1 : 0, nargs = first + 2 * (size_t)nf;
  ex_node **args = calloc(nargs, sizeof *args);
  const char **rv = malloc((ref->n + 1) * sizeof *rv);
  if (!args || !rv) return free(args), free(rv), dml__oom();
  memcpy(rv, ref->v, ref->n * sizeof *rv);
  refp child = {rv, ref->n + 1};
  int rc = c->pred ? guard(&args[0], c, ref) : 0;
  for (int k = 0; k < nf && !rc; k++) {
    int f = arw_field_child(c->ts, id, k);
    const char *name = arw_field_name(c->ts, f);
    ex_value nv = {.type = {EX_T_STRING}, .str = name, .len = strlen(name)};
    rv[ref->n] = name;
    rc = ex_new_literal(&args[first + 2 * k], &nv);
    const dml__nset_item *hit = NULL;
    for (size_t j = 0; j < c->ns->n && !rc && !hit; j++) {
      const dml__nset_item *it = &c->ns->v[j];
      if (it->col == c->col && nparts(it) > d + 1 && !strcasecmp(part(it, d + 1), name)) hit = it;
    }
    ex_node **slot = &args[first + 2 * k + 1];
    if (rc) break;
    if (!hit) rc = ref_node(slot, &child);
    else if (nparts(hit) == d + 2) rc = leaf(slot, c, f, hit->value, &child);
    else rc = build(slot, c, f, d + 1, &child);
  }
  free(rv);
  if (!rc) rc = ex_new_call(out, c->pred ? EX_FN_STRUCT_OF : "named_struct", args, nargs);
  else
    for (size_t i = 0; i < nargs; i++) ex_free(args[i]);
  free(args);
  return rc;
}

int dml__nset_value(ex_node **out, const dml__nset *ns, size_t col, const arw_schema *ts,
                    const char *const *ref, size_t nref, const arw_schema *bs, const ex_node *pred) {
  bctx c = {ns, col, ts, bs, pred};
  refp r = {ref, nref};
  return build(out, &c, arw_schema_column(ts, col), 0, &r);
}
