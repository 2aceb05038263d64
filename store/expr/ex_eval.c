/* ex_eval.c: vectors (ex__vec), reading input columns into them, and the public
 * evaluation entry points: ex_eval (a result column appended to a batch field),
 * ex_eval_mask (a filter), ex_eval_const and ex_add_field. Nested columns (struct, array,
 * map) are copied value by value from the input batch (structs built by named_struct and
 * nested if/when results: ex_eval_nested.c), the rest goes through vectors. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

/* ---- vectors ---- */

int ex__vec_init(ex__vec *v, ex_type t, size_t n) {
  memset(v, 0, sizeof *v);
  v->type = t;
  v->n = n;
  size_t m = n ? n : 1;
  switch (t.id) {
    case EX_T_BOOLEAN: v->b = calloc(m, 1); if (!v->b) goto oom; break;
    case EX_T_FLOAT:
    case EX_T_DOUBLE: v->f = calloc(m, sizeof *v->f); if (!v->f) goto oom; break;
    case EX_T_DECIMAL: v->d = calloc(m, sizeof *v->d); if (!v->d) goto oom; break;
    case EX_T_STRING:
    case EX_T_BINARY:
      v->off = calloc(n + 1, sizeof *v->off);
      if (!v->off) goto oom;
      break;
    case EX_T_NULL:
    case EX_T_STRUCT:
    case EX_T_ARRAY:
    case EX_T_MAP: break;
    default: v->i = calloc(m, sizeof *v->i); if (!v->i) goto oom; break;
  }
  if (t.id == EX_T_NULL && n) {
    v->valid = calloc(n, 1);
    if (!v->valid) goto oom;
  }
  return 0;
oom:
  ex__vec_free(v);
  return dd_err_set(DD_ENOMEM, "out of memory");
}

void ex__vec_free(ex__vec *v) {
  free(v->valid);
  free(v->b);
  free(v->i);
  free(v->f);
  free(v->d);
  free(v->data);
  free(v->off);
  memset(v, 0, sizeof *v);
}

int ex__vec_valid_alloc(ex__vec *v) {
  if (v->valid) return 0;
  v->valid = malloc(v->n ? v->n : 1);
  if (!v->valid) return dd_err_set(DD_ENOMEM, "out of memory");
  memset(v->valid, 1, v->n);
  return 0;
}

int ex__vec_set_null(ex__vec *v, size_t i) {
  int rc = ex__vec_valid_alloc(v);
  if (!rc) v->valid[i] = 0;
  return rc;
}

int ex__vec_and_valid(ex__vec *dst, const ex__vec *src) {
  if (!src->valid) return 0;
  int rc = ex__vec_valid_alloc(dst);
  if (rc) return rc;
  for (size_t i = 0; i < dst->n; i++) dst->valid[i] &= src->valid[i];
  return 0;
}

int ex__vec_str_push(ex__vec *v, size_t i, const char *s, size_t len) {
  if (v->data_len + len > v->data_cap) {
    size_t nc = v->data_cap ? v->data_cap * 2 : 256;
    while (nc < v->data_len + len) nc *= 2;
    char *nd = realloc(v->data, nc);
    if (!nd) return dd_err_set(DD_ENOMEM, "out of memory");
    v->data = nd;
    v->data_cap = nc;
  }
  if (len) memcpy(v->data + v->data_len, s, len);
  v->data_len += len;
  v->off[i + 1] = v->data_len;
  return 0;
}

int ex__vec_literal(ex__vec *out, const ex_value *lit, size_t n) {
  int rc = ex__vec_init(out, lit->type, n);
  if (rc) return rc;
  if (lit->is_null || lit->type.id == EX_T_NULL) {
    if (n && (rc = ex__vec_valid_alloc(out))) goto fail;
    if (n) memset(out->valid, 0, n);
    if (out->off)
      for (size_t i = 0; i < n; i++) out->off[i + 1] = 0;
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    switch (lit->type.id) {
      case EX_T_BOOLEAN: out->b[i] = lit->b; break;
      case EX_T_FLOAT:
      case EX_T_DOUBLE: out->f[i] = lit->f; break;
      case EX_T_DECIMAL: out->d[i] = lit->dec; break;
      case EX_T_STRING:
      case EX_T_BINARY:
        if ((rc = ex__vec_str_push(out, i, lit->str, lit->len))) goto fail;
        break;
      default: out->i[i] = lit->i; break;
    }
  }
  return 0;
fail:
  ex__vec_free(out);
  return rc;
}

int ex__vec_value(ex_value *out, char **storage, const ex__vec *v, size_t i) {
  memset(out, 0, sizeof *out);
  *storage = NULL;
  out->type = v->type;
  out->is_null = v->type.id == EX_T_NULL || !ex__ok(v, i);
  if (out->is_null) return 0;
  switch (v->type.id) {
    case EX_T_BOOLEAN: out->b = v->b[i]; break;
    case EX_T_FLOAT:
    case EX_T_DOUBLE: out->f = v->f[i]; break;
    case EX_T_DECIMAL: out->dec = v->d[i]; break;
    case EX_T_STRING:
    case EX_T_BINARY:
      out->len = v->off[i + 1] - v->off[i];
      if (!(*storage = ex__strndup(ex__vec_str(v, i), out->len)))
        return dd_err_set(DD_ENOMEM, "out of memory");
      out->str = *storage;
      break;
    default: out->i = v->i[i]; break;
  }
  return 0;
}

/* ---- reading input columns ---- */

static int view(const arw_batch *in, int field, arw_view *v) {
  int rc = arw_batch_view(in, field, v);
  if (rc) return dd_err_wrap(rc, "expression input field %d", field);
  return 0;
}

int ex__vec_column(ex__vec *out, const ex_node *col, const arw_batch *in) {
  size_t n = arw_batch_rows(in);
  int rc = ex__vec_init(out, col->type, n);
  if (rc) return rc;
  /* validity: every struct on the path and the field itself */
  for (int k = 0; col->fpath && col->fpath[k] >= 0; k++) {
    arw_view pv;
    if ((rc = view(in, col->fpath[k], &pv))) goto fail;
    if (pv.length < n) {
      rc = dd_err_set(DD_EINVAL, "input column %s has %zu values for %zu rows", col->parts[0],
                      pv.length, n);
      goto fail;
    }
    if (pv.kind == ARW_NULL || pv.null_count) {
      if ((rc = ex__vec_valid_alloc(out))) goto fail;
      for (size_t i = 0; i < n; i++)
        if (!arw_view_valid(&pv, i)) out->valid[i] = 0;
    }
  }
  arw_view v;
  if ((rc = view(in, col->field, &v))) goto fail;
  const uint8_t *p = v.values;
  if (n == 0 || !p) return 0;
  switch (v.kind) {
    case ARW_BOOL:
      for (size_t i = 0; i < n; i++) out->b[i] = arw_view_bool(&v, i);
      break;
    case ARW_INT8:
      for (size_t i = 0; i < n; i++) out->i[i] = ((const int8_t *)p)[i];
      break;
    case ARW_INT16:
      for (size_t i = 0; i < n; i++) {
        int16_t x;
        memcpy(&x, p + 2 * i, 2);
        out->i[i] = x;
      }
      break;
    case ARW_INT32:
    case ARW_DATE32:
      for (size_t i = 0; i < n; i++) {
        int32_t x;
        memcpy(&x, p + 4 * i, 4);
        out->i[i] = x;
      }
      break;
    case ARW_INT64:
    case ARW_TIMESTAMP:
    case ARW_TIMESTAMP_UTC: memcpy(out->i, p, n * 8); break;
    case ARW_FLOAT32:
      for (size_t i = 0; i < n; i++) {
        float x;
        memcpy(&x, p + 4 * i, 4);
        out->f[i] = x;
      }
      break;
    case ARW_FLOAT64: memcpy(out->f, p, n * 8); break;
    case ARW_DECIMAL128: memcpy(out->d, p, n * 16); break;
    case ARW_UTF8:
    case ARW_BINARY: {
      size_t base = (size_t)v.offsets[0], total = (size_t)v.offsets[n] - base;
      if (total) {
        if (!(out->data = malloc(total))) goto oom;
        memcpy(out->data, p + base, total);
      }
      out->data_len = out->data_cap = total;
      for (size_t i = 0; i <= n; i++) out->off[i] = (size_t)v.offsets[i] - base;
      break;
    }
    default: break; /* NULL and nested kinds: validity only */
  }
  return 0;
oom:
  rc = dd_err_set(DD_ENOMEM, "out of memory");
fail:
  ex__vec_free(out);
  return rc;
}

/* ---- evaluation of a node ---- */

int ex__eval_node(ex__vec *out, const ex_node *e, const arw_batch *in) {
  switch (e->kind) {
    case EX_LITERAL: return ex__vec_literal(out, &e->lit, arw_batch_rows(in));
    case EX_COLUMN: return ex__vec_column(out, e, in);
    case EX_ALIAS:
    case EX_SORT: return ex__eval_node(out, e->args[0], in);
    case EX_CAST: {
      ex__vec a;
      int rc = ex__eval_node(&a, e->args[0], in);
      if (rc) return rc;
      if (e->try_) {
        ex__opts ansi = e->opts;
        ansi.ansi = true;
        rc = ex__cast_vec_try(out, &a, e->type, &ansi);
      } else {
        rc = ex__cast_vec(out, &a, e->type, &e->opts);
      }
      ex__vec_free(&a);
      return rc;
    }
    case EX_CALL: return e->fn->eval(out, e, in);
    default: return dd_err_set(DD_EINVAL, "`*` cannot be evaluated (expand it first)");
  }
}

/* ---- nested copy ---- */


static int copy_children(arw_batch *out, int of, const arw_batch *in, int inf, size_t a,
                         size_t b, int child) {
  const arw_schema *is = arw_batch_schema(in), *os = arw_batch_schema(out);
  int ic = arw_field_child(is, inf, child), oc = arw_field_child(os, of, child);
  for (size_t k = a; k < b; k++) {
    int rc = ex__copy_value(out, oc, in, ic, k);
    if (rc) return rc;
  }
  return 0;
}

int ex__copy_value(arw_batch *out, int of, const arw_batch *in, int inf, size_t slot) {
  arw_view v;
  int rc = view(in, inf, &v);
  if (rc) return rc;
  if (!arw_view_valid(&v, slot)) return arw_append_null(out, of);
  const uint8_t *p = v.values;
  switch (v.kind) {
    case ARW_STRUCT: {
      int nc = arw_field_nchildren(arw_batch_schema(in), inf);
      for (int c = 0; c < nc; c++)
        if ((rc = copy_children(out, of, in, inf, slot, slot + 1, c))) return rc;
      return arw_append_done(out, of);
    }
    case ARW_LIST:
      if ((rc = copy_children(out, of, in, inf, (size_t)v.offsets[slot],
                              (size_t)v.offsets[slot + 1], 0)))
        return rc;
      return arw_append_done(out, of);
    case ARW_MAP:
      for (size_t k = (size_t)v.offsets[slot]; k < (size_t)v.offsets[slot + 1]; k++)
        if ((rc = copy_children(out, of, in, inf, k, k + 1, 0)) ||
            (rc = copy_children(out, of, in, inf, k, k + 1, 1)))
          return rc;
      return arw_append_done(out, of);
    case ARW_UTF8:
    case ARW_BINARY:
      return arw_append_str(out, of, (const char *)p + v.offsets[slot],
                            (size_t)(v.offsets[slot + 1] - v.offsets[slot]));
    case ARW_BOOL: return arw_append_bool(out, of, arw_view_bool(&v, slot));
    case ARW_NULL: return arw_append_null(out, of);
    default: {
      size_t w = arw_kind_width(v.kind);
      return arw_append_fixed(out, of, p + w * slot, 1, NULL);
    }
  }
}

static int copy_nested(arw_batch *out, int of, const ex_node *col, const arw_batch *in) {
  size_t n = arw_batch_rows(in);
  arw_view pv;
  for (size_t r = 0; r < n; r++) {
    bool null = false;
    for (int k = 0; col->fpath[k] >= 0 && col->fpath[k] != col->field; k++) {
      int rc = view(in, col->fpath[k], &pv);
      if (rc) return rc;
      if (!arw_view_valid(&pv, r)) null = true;
    }
    int rc = null ? arw_append_null(out, of) : ex__copy_value(out, of, in, col->field, r);
    if (rc) return rc;
  }
  return 0;
}

/* ---- public entry points ---- */

static const ex_node *strip(const ex_node *e) {
  while (e->kind == EX_ALIAS || e->kind == EX_SORT) e = e->args[0];
  return e;
}

int ex_add_field(arw_schema *out, int parent, const char *name, const ex_node *bound,
                 int *out_id) {
  const ex_node *e = strip(bound);
  if (!bound->bound) return dd_err_set(DD_EINVAL, "expression is not bound");
  if (ex__is_struct_call(e)) return ex__add_struct_field(out, parent, name, e, out_id);
  if (ex__is_nested(e->type.id)) {
    if (e->kind != EX_COLUMN)
      return dd_err_set(DD_EUNSUPPORTED, "nested results other than columns are not supported");
    return arw_schema_copy_field(out, parent, e->schema, e->field, name, out_id);
  }
  if (e->type.id == EX_T_DECIMAL)
    return arw_schema_add_decimal(out, parent, name, e->type.precision, e->type.scale, true,
                                  out_id);
  return arw_schema_add(out, parent, name, ex__arrow_kind(e->type), true, out_id);
}

static int append_vec(arw_batch *out, int of, const ex__vec *v) {
  arw_kind k = arw_field_kind(arw_batch_schema(out), of);
  size_t n = v->n;
  if (v->type.id == EX_T_NULL) return arw_append_nulls(out, of, n);
  if (k != ex__arrow_kind(v->type))
    return dd_err_set(DD_EINVAL, "output field %d has a kind other than the expression's", of);
  int rc = 0;
  void *tmp = NULL;
  switch (k) {
    case ARW_BOOL: return arw_append_fixed(out, of, v->b, n, v->valid);
    case ARW_INT64:
    case ARW_TIMESTAMP:
    case ARW_TIMESTAMP_UTC: return arw_append_fixed(out, of, v->i, n, v->valid);
    case ARW_FLOAT64: return arw_append_fixed(out, of, v->f, n, v->valid);
    case ARW_DECIMAL128: return arw_append_fixed(out, of, v->d, n, v->valid);
    case ARW_UTF8:
    case ARW_BINARY: {
      if (v->data_len > INT32_MAX)
        return dd_err_set(DD_ERANGE, "a string result of more than 2 GiB in one batch");
      int32_t *o = malloc((n + 1) * sizeof *o);
      if (!o) return dd_err_set(DD_ENOMEM, "out of memory");
      for (size_t i = 0; i <= n; i++) o[i] = (int32_t)v->off[i];
      rc = arw_append_strs(out, of, (const uint8_t *)(v->data ? v->data : ""), o, n, v->valid);
      free(o);
      return rc;
    }
    default: break;
  }
  size_t w = arw_kind_width(k);
  if (!(tmp = malloc(n * w + 1))) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    switch (k) {
      case ARW_INT8: ((int8_t *)tmp)[i] = (int8_t)v->i[i]; break;
      case ARW_INT16: ((int16_t *)tmp)[i] = (int16_t)v->i[i]; break;
      case ARW_INT32:
      case ARW_DATE32: ((int32_t *)tmp)[i] = (int32_t)v->i[i]; break;
      case ARW_FLOAT32: ((float *)tmp)[i] = (float)v->f[i]; break;
      default: break;
    }
  }
  rc = arw_append_fixed(out, of, tmp, n, v->valid);
  free(tmp);
  return rc;
}

int ex_eval(const ex_node *bound, const arw_batch *in, arw_batch *out, int out_field) {
  if (!bound->bound) return dd_err_set(DD_EINVAL, "expression is not bound");
  const ex_node *e = strip(bound);
  if (ex__is_struct_call(e)) return ex__eval_struct(out, out_field, e, in);
  if (ex__is_when_call(e) && ex__is_nested(e->type.id)) return ex__eval_when_nested(out, out_field, e, in);
  const ex_node *lit = e->kind == EX_CAST ? e->args[0] : e;
  arw_kind ok = arw_field_kind(arw_batch_schema(out), out_field);
  if ((ok == ARW_STRUCT || ok == ARW_LIST || ok == ARW_MAP) && lit->kind == EX_LITERAL && lit->lit.is_null)
    return arw_append_nulls(out, out_field, arw_batch_rows(in)); /* a NULL nested value */
  if (ex__is_nested(e->type.id)) {
    if (e->kind != EX_COLUMN)
      return dd_err_set(DD_EUNSUPPORTED, "nested results other than columns are not supported");
    return copy_nested(out, out_field, e, in);
  }
  ex__vec v;
  int rc = ex__eval_node(&v, e, in);
  if (rc) return rc;
  rc = append_vec(out, out_field, &v);
  ex__vec_free(&v);
  return rc;
}

int ex_eval_mask(const ex_node *bound, const arw_batch *in, uint8_t *mask, size_t *out_true) {
  if (!bound->bound) return dd_err_set(DD_EINVAL, "expression is not bound");
  const ex_node *e = strip(bound);
  if (e->type.id != EX_T_BOOLEAN && e->type.id != EX_T_NULL)
    return dd_err_set(DD_EINVAL, "[DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN] a filter condition "
                      "must be boolean, not %s", e->type.id == EX_T_STRING ? "string" : "non-boolean");
  ex__vec v;
  int rc = ex__eval_node(&v, e, in);
  if (rc) return rc;
  size_t n = v.n, c = 0;
  for (size_t i = 0; i < n; i++) {
    mask[i] = v.type.id == EX_T_BOOLEAN && ex__ok(&v, i) && v.b[i];
    c += mask[i];
  }
  if (out_true) *out_true = c;
  ex__vec_free(&v);
  return 0;
}

int ex_eval_const(ex_value *out, char **storage, const ex_node *bound) {
  *storage = NULL;
  if (!bound->bound) return dd_err_set(DD_EINVAL, "expression is not bound");
  if (ex_uses_columns(bound))
    return dd_err_set(DD_EINVAL, "expression is not constant: it reads columns");
  /* one row of an empty schema */
  arw_schema *s = NULL;
  arw_batch *b = NULL;
  ex__vec v = {0};
  int rc = arw_schema_new(&s);
  if (rc || (rc = arw_schema_add(s, ARW_ROOT, "one", ARW_NULL, true, NULL)) ||
      (rc = arw_batch_new(&b, s)) || (rc = arw_append_null(b, 0)))
    goto cleanup;
  if ((rc = ex__eval_node(&v, strip(bound), b))) goto cleanup;
  rc = ex__vec_value(out, storage, &v, 0);
cleanup:
  ex__vec_free(&v);
  arw_batch_free(b);
  arw_schema_free(s);
  return rc;
}
