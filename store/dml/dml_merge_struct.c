/* dml_merge_struct.c: a MERGE value for a struct column given a source struct of another
 * shape, bound by field name as Delta does: the target's fields in the target's order,
 * each from the source field of the same name (case-insensitive), recursively; an atomic
 * field of another type cast; a field the source lacks filled only under schema evolution
 * (UPDATE SET * keeps the target's value, other assignments give NULL), else the error
 * Delta raises. A NULL source struct stays NULL (the #struct_of guard). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "store/dml/dml_merge_int.h"

/* A column path: parts[0..n). */
typedef struct path {
  const char *const *v;
  size_t n;
  const char **own; /* v when malloc'ed here */
} path;

static int path_child(path *out, const path *p, const char *name) {
  if (!(out->own = malloc((p->n + 1) * sizeof *out->own))) return dml__oom();
  memcpy(out->own, p->v, p->n * sizeof *p->v);
  out->own[p->n] = name;
  out->v = out->own;
  out->n = p->n + 1;
  return 0;
}

static int type_str(char **out, const arw_schema *s, int id) {
  int rc = arw_type_string(out, s, id);
  return rc ? dd_err_wrap(rc, "MERGE: the type of a nested column") : 0;
}

/* Whether two fields have the same Spark type, field names compared case-insensitively. */
static int same_shape(bool *same, const arw_schema *a, int ai, const arw_schema *b, int bi) {
  char *x = NULL, *y = NULL;
  int rc = type_str(&x, a, ai);
  if (!rc) rc = type_str(&y, b, bi);
  *same = !rc && !strcasecmp(x, y);
  free(x), free(y);
  return rc;
}

static bool is_num(arw_kind k) {
  return k == ARW_INT8 || k == ARW_INT16 || k == ARW_INT32 || k == ARW_INT64 || k == ARW_FLOAT32 ||
         k == ARW_FLOAT64 || k == ARW_DECIMAL128;
}

static int mismatch(const arw_schema *ts, int tid, const arw_schema *s, int sid, const char *col) {
  char *x = NULL, *y = NULL;
  int rc = type_str(&x, s, sid);
  if (!rc) rc = type_str(&y, ts, tid);
  if (!rc)
    rc = dd_err_set(DD_EINVAL, "MERGE: [DELTA_UPDATE_SCHEMA_MISMATCH_EXPRESSION] Cannot cast %s to %s. "
                    "All nested columns must match (column %s).", x, y, col);
  free(x), free(y);
  return rc;
}

typedef struct ctx {
  const arw_schema *ts, *s;
  bool evolve;
  const char *col; /* the target column, for messages */
} ctx;

static int build(ex_node **out, const ctx *c, int tid, const path *src, int sid, const path *keep);

static int column(ex_node **out, const path *p) { return ex_new_column(out, p->v, p->n); }

static int null_of(ex_node **out, const arw_schema *ts, int tid) {
  ex_value nv = {.type = {EX_T_NULL}, .is_null = true};
  ex_node *lit = NULL;
  int rc = ex_new_literal(&lit, &nv);
  arw_kind k = arw_field_kind(ts, tid);
  if (rc || k == ARW_STRUCT || k == ARW_LIST || k == ARW_MAP) return *out = lit, rc;
  return ex_new_cast(out, lit, ex_type_of_arrow(ts, tid));
}

/* The value of target field tid from source field sid (path src). */
static int field_value(ex_node **out, const ctx *c, int tid, const path *src, int sid, const path *keep) {
  bool same = false;
  int rc = same_shape(&same, c->ts, tid, c->s, sid);
  if (rc || same) return rc ? rc : column(out, src);
  arw_kind tk = arw_field_kind(c->ts, tid), sk = arw_field_kind(c->s, sid);
  if (tk == ARW_STRUCT && sk == ARW_STRUCT) return build(out, c, tid, src, sid, keep);
  bool castable = tk != ARW_STRUCT && tk != ARW_LIST && tk != ARW_MAP && sk != ARW_STRUCT &&
                  sk != ARW_LIST && sk != ARW_MAP &&
                  ((is_num(tk) && is_num(sk)) || tk == ARW_UTF8 || tk == sk);
  if (!castable) return mismatch(c->ts, tid, c->s, sid, c->col);
  ex_node *v = NULL;
  if ((rc = column(&v, src))) return rc;
  return ex_new_cast(out, v, ex_type_of_arrow(c->ts, tid));
}

/* #struct_of(src, name_k, value_k, ...) over the target struct tid's fields. */
static int build(ex_node **out, const ctx *c, int tid, const path *src, int sid, const path *keep) {
  int nt = arw_field_nchildren(c->ts, tid), ns = arw_field_nchildren(c->s, sid), matched = 0;
  size_t nargs = 1 + 2 * (size_t)nt;
  ex_node **args = calloc(nargs, sizeof *args);
  if (!args) return dml__oom();
  int rc = column(&args[0], src);
  for (int k = 0; k < nt && !rc; k++) {
    int tc = arw_field_child(c->ts, tid, k);
    const char *name = arw_field_name(c->ts, tc);
    ex_value nv = {.type = {EX_T_STRING}, .str = name, .len = strlen(name)};
    rc = ex_new_literal(&args[1 + 2 * k], &nv);
    int sc = rc ? -1 : arw_schema_find_ci(c->s, sid, name);
    path sp = {0}, kp = {0};
    if (!rc && keep) rc = path_child(&kp, keep, name);
    if (rc) {
    } else if (sc >= 0) {
      matched++;
      if (!(rc = path_child(&sp, src, arw_field_name(c->s, sc))))
        rc = field_value(&args[2 + 2 * k], c, tc, &sp, sc, keep ? &kp : NULL);
    } else if (!c->evolve) {
      rc = mismatch(c->ts, tid, c->s, sid, c->col);
    } else {
      rc = keep ? column(&args[2 + 2 * k], &kp) : null_of(&args[2 + 2 * k], c->ts, tc);
    }
    free(sp.own), free(kp.own);
  }
  if (!rc && matched < ns) rc = mismatch(c->ts, tid, c->s, sid, c->col); /* fields the target lacks */
  if (!rc) rc = ex_new_call(out, EX_FN_STRUCT_OF, args, nargs);
  else
    for (size_t i = 0; i < nargs; i++) ex_free(args[i]);
  free(args);
  return rc;
}

int dml__merge_struct_value(ex_node **out, bool *rebuilt, const arw_schema *ts, int tid,
                            const ex_node *v, const arw_schema *s, int sid, bool evolve,
                            const ex_node *keep) {
  *out = NULL;
  *rebuilt = false;
  bool same = false;
  int rc = same_shape(&same, ts, tid, s, sid);
  if (rc || same) return rc;
  const char *col = arw_field_name(ts, tid);
  if (arw_field_kind(ts, tid) != ARW_STRUCT || arw_field_kind(s, sid) != ARW_STRUCT)
    return mismatch(ts, tid, s, sid, col);
  path src = {0}, kp = {0};
  src.v = ex_column_parts(v, &src.n);
  if (keep) kp.v = ex_column_parts(keep, &kp.n);
  if (!src.v || (keep && !kp.v))
    return dd_err_set(DD_EINVAL, "MERGE: a struct of another shape assigned to %s must be a column", col);
  ctx c = {ts, s, evolve, col};
  rc = build(out, &c, tid, &src, sid, keep ? &kp : NULL);
  *rebuilt = !rc;
  return rc;
}
