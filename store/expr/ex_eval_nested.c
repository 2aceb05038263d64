/* ex_eval_nested.c: nested results that are not plain columns: structs built by
 * named_struct and the internal EX__STRUCT_OF (field by field into the output struct's
 * children), and if/when whose values are structs, arrays or maps (each branch evaluated
 * into a batch of the output field's shape, then each row copied from the branch it
 * takes). */
#include <stdlib.h>
#include <string.h>

#include "store/expr/ex_int.h"

#include "common/err.h"

/* A struct call's fields: (name, value) pairs after the guard, if any. */
static size_t struct_first(const ex_node *e) { return !strcmp(e->name, EX__STRUCT_OF); }

int ex__add_struct_field(arw_schema *out, int parent, const char *name, const ex_node *e, int *out_id) {
  int id, rc = arw_schema_add(out, parent, name, ARW_STRUCT, true, &id);
  for (size_t i = struct_first(e); i < e->nargs && !rc; i += 2) {
    const ex_value *n = &e->args[i]->lit;
    char *fname = ex__strndup(n->str, n->len);
    rc = fname ? ex_add_field(out, id, fname, e->args[i + 1], NULL) : dd_err_set(DD_ENOMEM, "out of memory");
    free(fname);
  }
  if (!rc && out_id) *out_id = id;
  return rc;
}

int ex__eval_struct(arw_batch *out, int of, const ex_node *e, const arw_batch *in) {
  size_t first = struct_first(e), n = arw_batch_rows(in);
  const arw_schema *os = arw_batch_schema(out);
  if (arw_field_kind(os, of) != ARW_STRUCT || (size_t)arw_field_nchildren(os, of) != (e->nargs - first) / 2)
    return dd_err_set(DD_EINVAL, "output field %d is not a struct of the expression's fields", of);
  ex__vec g = {0};
  int rc = first ? ex__eval_node(&g, e->args[0], in) : 0;
  if (!rc) rc = arw_append_nested(out, of, n, g.valid, NULL);
  ex__vec_free(&g);
  for (size_t i = first, k = 0; i < e->nargs && !rc; i += 2, k++)
    rc = ex_eval(e->args[i + 1], in, out, arw_field_child(os, of, (int)k));
  return rc;
}

/* One branch of a nested if/when: its values in a batch of one field shaped as of. */
typedef struct branch {
  arw_schema *s;
  arw_batch *b;
  int id;
  arw_view v;
} branch;

static int branch_eval(branch *br, const ex_node *value, const arw_batch *out, int of, const arw_batch *in) {
  int rc = arw_schema_new(&br->s);
  if (!rc) rc = arw_schema_copy_field(br->s, ARW_ROOT, arw_batch_schema(out), of, "v", &br->id);
  if (!rc) rc = arw_batch_new(&br->b, br->s);
  if (!rc) rc = ex_eval(value, in, br->b, br->id);
  if (!rc) rc = arw_batch_view(br->b, br->id, &br->v);
  return rc;
}

int ex__eval_when_nested(arw_batch *out, int of, const ex_node *e, const arw_batch *in) {
  size_t n = arw_batch_rows(in), nconds = e->nargs / 2;
  bool has_else = e->nargs % 2 == 1;
  size_t nb = nconds + has_else;
  ex__vec *conds = calloc(nconds + 1, sizeof *conds);
  branch *br = calloc(nb + 1, sizeof *br);
  int rc = conds && br ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  /* every branch over the whole batch, as the atomic when does */
  for (size_t k = 0; k < nconds && !rc; k++) rc = ex__eval_node(&conds[k], e->args[2 * k], in);
  for (size_t k = 0; k < nconds && !rc; k++) rc = branch_eval(&br[k], e->args[2 * k + 1], out, of, in);
  if (!rc && has_else) rc = branch_eval(&br[nconds], e->args[e->nargs - 1], out, of, in);
  for (size_t r = 0; r < n && !rc; r++) {
    size_t k = 0;
    while (k < nconds && !(ex__ok(&conds[k], r) && conds[k].b[r])) k++;
    if (k == nconds && !has_else) rc = arw_append_null(out, of);
    else if (!arw_view_valid(&br[k].v, r)) rc = arw_append_null(out, of);
    else rc = ex__copy_value(out, of, br[k].b, br[k].id, r);
  }
  for (size_t k = 0; conds && k < nconds; k++) ex__vec_free(&conds[k]);
  for (size_t k = 0; br && k < nb; k++) arw_batch_free(br[k].b), arw_schema_free(br[k].s);
  free(conds), free(br);
  return rc;
}
