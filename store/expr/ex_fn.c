/* ex_fn.c: the function table and the functions of logic, comparison and nulls: and, or,
 * not, = < <= > >= <=>, isnull, isnotnull, in, between, coalesce / nvl / ifnull, when, if.
 * Arithmetic is in ex_fn_arith.c, strings and dates in ex_fn_str.c, the rest in ex_fn_more.c.
 *
 * Three-valued logic (Spark's): a AND b is false when either is false, else NULL when
 * either is NULL; a OR b is true when either is true, else NULL when either is NULL. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

/* ---- helpers shared by the function files ---- */

int ex__eval_args(ex__vec *v, const ex_node *e, const arw_batch *in) {
  for (size_t i = 0; i < e->nargs; i++) {
    int rc = ex__eval_node(&v[i], e->args[i], in);
    if (rc) {
      while (i--) ex__vec_free(&v[i]);
      return rc;
    }
  }
  return 0;
}

void ex__free_args(ex__vec *v, size_t n) {
  for (size_t i = 0; i < n; i++) ex__vec_free(&v[i]);
}

int ex__eval_all(ex__vec **out, const ex_node *e, const arw_batch *in) {
  *out = NULL;
  ex__vec *v = calloc(e->nargs ? e->nargs : 1, sizeof *v);
  if (!v) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = ex__eval_args(v, e, in);
  if (rc) {
    free(v);
    return rc;
  }
  *out = v;
  return 0;
}

void ex__free_all(ex__vec *v, size_t n) {
  ex__free_args(v, n);
  free(v);
}

int ex__type_error(const ex_node *e, const char *want) {
  char got[256] = "";
  size_t at = 0;
  for (size_t i = 0; i < e->nargs && at < sizeof got - 40; i++) {
    if (i) got[at++] = ',', got[at++] = ' ';
    at += ex_type_format(e->args[i]->type, got + at, sizeof got - at);
  }
  return dd_err_set(DD_EINVAL, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] Cannot resolve `%s` "
                    "due to data type mismatch: it requires %s, not (%s)", e->name, want, got);
}

/* The wider type of args [from, n) with step; false when none. */
bool ex__common_type(const ex_node *e, size_t from, size_t step, ex_type *out) {
  ex_type t = ex__t(EX_T_NULL);
  for (size_t i = from; i < e->nargs; i += step)
    if (!ex__wider(t, e->args[i]->type, &t, e->opts.ansi)) return false;
  *out = t;
  return true;
}

static bool any_nullable(const ex_node *e) {
  for (size_t i = 0; i < e->nargs; i++)
    if (e->args[i]->nullable) return true;
  return false;
}

/* ---- comparison ---- */

/* r[i] = sign of a[i] - b[i] for valid rows (same types), Spark's ordering: NaN is the
 * largest double and equal to itself; strings and binary compare as unsigned bytes. */
int ex__compare(int8_t *r, const ex__vec *a, const ex__vec *b) {
  size_t n = a->n;
  switch (a->type.id) {
    case EX_T_BOOLEAN:
      for (size_t i = 0; i < n; i++) r[i] = (int8_t)((a->b[i] > b->b[i]) - (a->b[i] < b->b[i]));
      break;
    case EX_T_FLOAT:
    case EX_T_DOUBLE:
      for (size_t i = 0; i < n; i++) {
        double x = a->f[i], y = b->f[i];
        if (isnan(x) || isnan(y)) r[i] = (int8_t)(isnan(x) - isnan(y));
        else r[i] = (int8_t)((x > y) - (x < y));
      }
      break;
    case EX_T_DECIMAL:
      for (size_t i = 0; i < n; i++) r[i] = (int8_t)((a->d[i] > b->d[i]) - (a->d[i] < b->d[i]));
      break;
    case EX_T_STRING:
    case EX_T_BINARY:
      for (size_t i = 0; i < n; i++) {
        size_t la = a->off[i + 1] - a->off[i], lb = b->off[i + 1] - b->off[i];
        size_t m = la < lb ? la : lb;
        int c = m ? memcmp(ex__vec_str(a, i), ex__vec_str(b, i), m) : 0;
        r[i] = (int8_t)(c ? (c > 0) - (c < 0) : (la > lb) - (la < lb));
      }
      break;
    case EX_T_NULL: memset(r, 0, n); break;
    default:
      if (ex__is_nested(a->type.id))
        return dd_err_set(DD_EUNSUPPORTED, "comparing nested values is not supported");
      for (size_t i = 0; i < n; i++) r[i] = (int8_t)((a->i[i] > b->i[i]) - (a->i[i] < b->i[i]));
      break;
  }
  return 0;
}

static int bind_cmp(ex_node *e) {
  ex_type t;
  if (!ex__common_type(e, 0, 1, &t) || ex__is_nested(t.id)) {
    return ex__type_error(e, "comparable types");
  }
  for (size_t i = 0; i < e->nargs; i++) {
    int rc = ex__coerce_arg(e, i, t);
    if (rc) return rc;
  }
  e->type = ex__t(EX_T_BOOLEAN);
  e->nullable = strcmp(e->name, "<=>") ? any_nullable(e) : false;
  return 0;
}

static int eval_cmp(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec v[2];
  int rc = ex__eval_args(v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  int8_t *r = malloc(n ? n : 1);
  if (!r) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((rc = ex__compare(r, &v[0], &v[1])) || (rc = ex__vec_init(out, ex__t(EX_T_BOOLEAN), n)))
    goto cleanup;
  const char *op = e->name;
  bool nullsafe = !strcmp(op, "<=>");
  if (nullsafe) {
    for (size_t i = 0; i < n; i++) {
      bool a = ex__ok(&v[0], i), b = ex__ok(&v[1], i);
      out->b[i] = a && b ? r[i] == 0 : a == b;
    }
    goto cleanup;
  }
  if (!strcmp(op, "=")) for (size_t i = 0; i < n; i++) out->b[i] = r[i] == 0;
  else if (!strcmp(op, "<")) for (size_t i = 0; i < n; i++) out->b[i] = r[i] < 0;
  else if (!strcmp(op, "<=")) for (size_t i = 0; i < n; i++) out->b[i] = r[i] <= 0;
  else if (!strcmp(op, ">")) for (size_t i = 0; i < n; i++) out->b[i] = r[i] > 0;
  else for (size_t i = 0; i < n; i++) out->b[i] = r[i] >= 0;
  if ((rc = ex__vec_and_valid(out, &v[0])) || (rc = ex__vec_and_valid(out, &v[1]))) {
    ex__vec_free(out);
    goto cleanup;
  }
cleanup:
  free(r);
  ex__free_args(v, 2);
  return rc;
}

/* ---- logic ---- */

static int bind_bool_args(ex_node *e) {
  for (size_t i = 0; i < e->nargs; i++) {
    ex_type_id t = e->args[i]->type.id;
    if (t != EX_T_BOOLEAN && t != EX_T_NULL) return ex__type_error(e, "boolean arguments");
    int rc = ex__coerce_arg(e, i, ex__t(EX_T_BOOLEAN));
    if (rc) return rc;
  }
  e->type = ex__t(EX_T_BOOLEAN);
  e->nullable = any_nullable(e);
  return 0;
}

static int eval_logic(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec v[2];
  int rc = ex__eval_args(v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  if ((rc = ex__vec_init(out, ex__t(EX_T_BOOLEAN), n))) goto cleanup;
  if (!strcmp(e->name, "not")) {
    for (size_t i = 0; i < n; i++) out->b[i] = !v[0].b[i];
    rc = ex__vec_and_valid(out, &v[0]);
    goto cleanup;
  }
  bool is_and = !strcmp(e->name, "and");
  bool nulls = v[0].valid || v[1].valid;
  if (nulls && (rc = ex__vec_valid_alloc(out))) goto cleanup;
  for (size_t i = 0; i < n; i++) {
    bool av = ex__ok(&v[0], i), bv = ex__ok(&v[1], i);
    bool a = v[0].b[i], b = v[1].b[i];
    if (is_and) {
      if ((av && !a) || (bv && !b)) out->b[i] = 0;
      else if (av && bv) out->b[i] = 1;
      else out->valid[i] = 0;
    } else {
      if ((av && a) || (bv && b)) out->b[i] = 1;
      else if (av && bv) out->b[i] = 0;
      else out->valid[i] = 0;
    }
  }
cleanup:
  if (rc) ex__vec_free(out);
  ex__free_args(v, e->nargs);
  return rc;
}

/* ---- nulls ---- */

static int bind_isnull(ex_node *e) {
  e->type = ex__t(EX_T_BOOLEAN);
  e->nullable = false;
  return 0;
}

static int eval_isnull(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  bool want_null = !strcmp(e->name, "isnull");
  if (!(rc = ex__vec_init(out, ex__t(EX_T_BOOLEAN), a.n)))
    for (size_t i = 0; i < a.n; i++) out->b[i] = ex__ok(&a, i) != want_null;
  ex__vec_free(&a);
  return rc;
}

/* coalesce(a, b, ...), nvl, ifnull: the first non-null */
int ex__bind_common(ex_node *e) {
  ex_type t;
  if (!ex__common_type(e, 0, 1, &t) || ex__is_nested(t.id))
    return ex__type_error(e, "arguments of one (wider) type");
  e->nullable = true;
  for (size_t i = 0; i < e->nargs; i++) {
    int rc = ex__coerce_arg(e, i, t);
    if (rc) return rc;
    if (!e->args[i]->nullable) e->nullable = false;
  }
  e->type = t;
  return 0;
}

/* Copies row i of src into row i of dst (same type); string rows must go in order. */
static int take_row(ex__vec *dst, const ex__vec *src, size_t i) {
  switch (dst->type.id) {
    case EX_T_BOOLEAN: dst->b[i] = src->b[i]; break;
    case EX_T_FLOAT:
    case EX_T_DOUBLE: dst->f[i] = src->f[i]; break;
    case EX_T_DECIMAL: dst->d[i] = src->d[i]; break;
    case EX_T_STRING:
    case EX_T_BINARY:
      return ex__vec_str_push(dst, i, ex__vec_str(src, i), src->off[i + 1] - src->off[i]);
    case EX_T_NULL: break;
    default: dst->i[i] = src->i[i]; break;
  }
  return 0;
}

/* out[i] = vals[pick[i]][i], null where pick[i] < 0. */
int ex__gather(ex__vec *out, ex_type t, ex__vec *vals, const int *pick, size_t n) {
  int rc = ex__vec_init(out, t, n);
  if (rc) return rc;
  for (size_t i = 0; i < n; i++) {
    if (pick[i] < 0 || !ex__ok(&vals[pick[i]], i)) {
      if ((rc = ex__vec_set_null(out, i))) break;
      if (out->off) out->off[i + 1] = out->data_len;
      continue;
    }
    if ((rc = take_row(out, &vals[pick[i]], i))) break;
  }
  if (rc) ex__vec_free(out);
  return rc;
}

static int eval_coalesce(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec *v;
  int *pick = NULL;
  int rc = ex__eval_all(&v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  if (!(pick = malloc((n ? n : 1) * sizeof *pick))) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  for (size_t i = 0; i < n; i++) {
    pick[i] = -1;
    for (size_t k = 0; k < e->nargs; k++)
      if (ex__ok(&v[k], i)) {
        pick[i] = (int)k;
        break;
      }
  }
  rc = ex__gather(out, e->type, v, pick, n);
cleanup:
  free(pick);
  ex__free_all(v, e->nargs);
  return rc;
}

/* when(c1, v1, c2, v2, ..., [else]) and if(c, a, b) */
static int bind_when(ex_node *e) {
  bool is_if = !strcmp(e->name, "if");
  if (is_if && e->nargs != 3) return ex__type_error(e, "3 arguments");
  if (!is_if && e->nargs < 2) return ex__type_error(e, "at least 2 arguments");
  ex_type t = ex__t(EX_T_NULL);
  size_t nconds = e->nargs / 2;
  for (size_t k = 0; k < nconds; k++) {
    ex_type_id c = e->args[2 * k]->type.id;
    if (c != EX_T_BOOLEAN && c != EX_T_NULL) return ex__type_error(e, "boolean conditions");
    int rc = ex__coerce_arg(e, 2 * k, ex__t(EX_T_BOOLEAN));
    if (rc) return rc;
    if (!ex__wider(t, e->args[2 * k + 1]->type, &t, e->opts.ansi)) return ex__type_error(e, "values of one type");
  }
  bool has_else = e->nargs % 2 == 1;
  if (has_else && !ex__wider(t, e->args[e->nargs - 1]->type, &t, e->opts.ansi))
    return ex__type_error(e, "values of one type");
  /* nested values: one kind (their fields are not checked here: the output field's shape
   * decides, see ex_eval_nested.c) */
  e->nullable = !has_else;
  for (size_t k = 0; k < nconds; k++) {
    int rc = ex__coerce_arg(e, 2 * k + 1, t);
    if (rc) return rc;
    e->nullable |= e->args[2 * k + 1]->nullable;
  }
  if (has_else) {
    int rc = ex__coerce_arg(e, e->nargs - 1, t);
    if (rc) return rc;
    e->nullable |= e->args[e->nargs - 1]->nullable;
  }
  e->type = t;
  return 0;
}

static int eval_when(ex__vec *out, const ex_node *e, const arw_batch *in);

bool ex__is_when_call(const ex_node *e) { return e->kind == EX_CALL && e->fn && e->fn->eval == eval_when; }

static int eval_when(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec *v;
  int *pick = NULL;
  /* Every branch is evaluated over the whole batch: a branch that fails (overflow, bad
   * cast) fails the batch even for rows that would not take it. */
  int rc = ex__eval_all(&v, e, in);
  if (rc) return rc;
  size_t n = v[0].n, nconds = e->nargs / 2;
  bool has_else = e->nargs % 2 == 1;
  if (!(pick = malloc((n ? n : 1) * sizeof *pick))) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  for (size_t i = 0; i < n; i++) {
    pick[i] = has_else ? (int)e->nargs - 1 : -1;
    for (size_t k = 0; k < nconds; k++)
      if (ex__ok(&v[2 * k], i) && v[2 * k].b[i]) {
        pick[i] = (int)(2 * k + 1);
        break;
      }
  }
  rc = ex__gather(out, e->type, v, pick, n);
cleanup:
  free(pick);
  ex__free_all(v, e->nargs);
  return rc;
}

/* x IN (a, b, ...): true on a match; else NULL when x or any list value is NULL. */
static int eval_in(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec *v;
  int8_t *r = NULL;
  int rc = ex__eval_all(&v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  if (!(r = malloc(n ? n : 1)) || (rc = ex__vec_init(out, ex__t(EX_T_BOOLEAN), n)) ||
      (rc = ex__vec_valid_alloc(out))) {
    if (!rc) rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  /* valid[i] holds "no null seen" until the end */
  for (size_t k = 1; k < e->nargs; k++) {
    if ((rc = ex__compare(r, &v[0], &v[k]))) goto cleanup;
    for (size_t i = 0; i < n; i++) {
      if (!ex__ok(&v[k], i)) out->valid[i] = 0;
      else if (r[i] == 0) out->b[i] = 1;
    }
  }
  for (size_t i = 0; i < n; i++) {
    if (!ex__ok(&v[0], i)) out->valid[i] = 0, out->b[i] = 0;
    else if (out->b[i]) out->valid[i] = 1;
  }
cleanup:
  if (rc) ex__vec_free(out);
  free(r);
  ex__free_all(v, e->nargs);
  return rc;
}

/* between(x, lo, hi) = x >= lo AND x <= hi */
static int eval_between(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec v[3];
  int8_t *r = NULL;
  int rc = ex__eval_args(v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  if (!(r = malloc(n ? n : 1)) || (rc = ex__vec_init(out, ex__t(EX_T_BOOLEAN), n)) ||
      (rc = ex__vec_valid_alloc(out))) {
    if (!rc) rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  uint8_t *lo_ok = malloc(n ? n : 1);
  if (!lo_ok) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  if ((rc = ex__compare(r, &v[0], &v[1]))) {
    free(lo_ok);
    goto cleanup;
  }
  for (size_t i = 0; i < n; i++) lo_ok[i] = r[i] >= 0;
  if ((rc = ex__compare(r, &v[0], &v[2]))) {
    free(lo_ok);
    goto cleanup;
  }
  for (size_t i = 0; i < n; i++) {
    bool x = ex__ok(&v[0], i), a = x && ex__ok(&v[1], i), b = x && ex__ok(&v[2], i);
    bool av = lo_ok[i], bv = r[i] <= 0;
    if ((a && !av) || (b && !bv)) out->b[i] = 0;
    else if (a && b) out->b[i] = 1;
    else out->valid[i] = 0;
  }
  free(lo_ok);
cleanup:
  if (rc) ex__vec_free(out);
  free(r);
  ex__free_args(v, 3);
  return rc;
}

/* ---- the table ---- */

static const ex__fn fns[] = {
  {"=", 2, 2, bind_cmp, eval_cmp, NULL},
  {"<", 2, 2, bind_cmp, eval_cmp, NULL},
  {"<=", 2, 2, bind_cmp, eval_cmp, NULL},
  {">", 2, 2, bind_cmp, eval_cmp, NULL},
  {">=", 2, 2, bind_cmp, eval_cmp, NULL},
  {"<=>", 2, 2, bind_cmp, eval_cmp, NULL},
  {"and", 2, 2, bind_bool_args, eval_logic, NULL},
  {"or", 2, 2, bind_bool_args, eval_logic, NULL},
  {"not", 1, 1, bind_bool_args, eval_logic, NULL},
  {"isnull", 1, 1, bind_isnull, eval_isnull, NULL},
  {"isnotnull", 1, 1, bind_isnull, eval_isnull, NULL},
  {"in", 1, -1, bind_cmp, eval_in, NULL},
  {"between", 3, 3, bind_cmp, eval_between, NULL},
  {"coalesce", 1, -1, ex__bind_common, eval_coalesce, NULL},
  {"nvl", 2, 2, ex__bind_common, eval_coalesce, NULL},
  {"ifnull", 2, 2, ex__bind_common, eval_coalesce, NULL},
  {"when", 2, -1, bind_when, eval_when, NULL},
  {"if", 3, 3, bind_when, eval_when, NULL},
  {NULL, 0, 0, NULL, NULL, NULL},
};

/* Spark's aliases */
static const struct { const char *alias, *name; } aliases[] = {
  {"==", "="}, {"equalto", "="}, {"equalnullsafe", "<=>"}, {"iff", "if"},
  {"dayofmonth", "day"}, {"ucase", "upper"}, {"lcase", "lower"}, {"substr", "substring"},
  {"char_length", "length"}, {"character_length", "length"}, {"len", "length"},
  {"regexp", "rlike"}, {"regexp_like", "rlike"}, {"mod", "%"}, {"dateadd", "date_add"},
  {"date_diff", "datediff"}, {"ceiling", "ceil"}, {"now", "current_timestamp"}, {"curdate", "current_date"},
};

const ex__fn *ex__fn_find(const char *name) {
  for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
    if (!strcmp(name, aliases[i].alias)) name = aliases[i].name;
  const ex__fn *tables[] = {fns, ex__fns_arith, ex__fns_str, ex__fns_more, ex__fns_round};
  for (size_t t = 0; t < sizeof tables / sizeof tables[0]; t++)
    for (const ex__fn *f = tables[t]; f->name; f++)
      if (!strcmp(f->name, name)) return f;
  return NULL;
}
