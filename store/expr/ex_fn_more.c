/* ex_fn_more.c: more of Spark's scalar functions: nullif, greatest, least, concat_ws,
 * replace, hour, minute, second, floor, ceil, to_date and to_timestamp (one argument: the
 * default formats, as a cast). Result types are Spark's: nullif has its first
 * argument's type; greatest/least the arguments' wider type, skipping nulls (null only when
 * every argument is); floor/ceil of an integral or floating value a bigint, of a
 * decimal(p,s) a decimal(p-s+1,0). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

static bool any_nullable(const ex_node *e) {
  for (size_t i = 0; i < e->nargs; i++)
    if (e->args[i]->nullable) return true;
  return false;
}

/* ---- nullif, greatest, least ---- */

static int bind_nullif(ex_node *e) {
  ex_type t;
  if (!ex__common_type(e, 0, 1, &t) || ex__is_nested(t.id)) return ex__type_error(e, "arguments of one (wider) type");
  e->type = e->args[0]->type;
  e->nullable = true;
  return 0;
}

static int eval_nullif(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec *v, c[2];
  memset(c, 0, sizeof c);
  int rc = ex__eval_all(&v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  int8_t *r = malloc(n ? n : 1);
  int *pick = malloc((n ? n : 1) * sizeof *pick);
  ex_type t;
  if (!r || !pick) rc = OOM();
  else if (!ex__common_type(e, 0, 1, &t)) rc = ex__type_error(e, "arguments of one (wider) type");
  for (int k = 0; !rc && k < 2; k++) rc = ex__cast_vec(&c[k], &v[k], t, &e->opts);
  if (!rc) rc = ex__compare(r, &c[0], &c[1]);
  for (size_t i = 0; !rc && i < n; i++)
    pick[i] = !ex__ok(&v[0], i) || (ex__ok(&v[1], i) && r[i] == 0) ? -1 : 0;
  if (!rc) rc = ex__gather(out, e->type, v, pick, n);
  ex__vec_free(&c[0]), ex__vec_free(&c[1]);
  free(r), free(pick);
  ex__free_all(v, e->nargs);
  return rc;
}

/* For each row the index of the greatest (least) valid argument; cmp[k][j] for j < k. */
static int eval_extreme(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec *v;
  int rc = ex__eval_all(&v, e, in);
  if (rc) return rc;
  size_t n = v[0].n, na = e->nargs;
  bool greatest = e->name[0] == 'g';
  int *pick = malloc((n ? n : 1) * sizeof *pick);
  int8_t **cmp = calloc(na * na, sizeof *cmp);
  if (!pick || !cmp) rc = OOM();
  for (size_t k = 1; !rc && k < na; k++)
    for (size_t j = 0; !rc && j < k; j++)
      rc = (cmp[k * na + j] = malloc(n ? n : 1)) ? ex__compare(cmp[k * na + j], &v[k], &v[j]) : OOM();
  for (size_t i = 0; !rc && i < n; i++) {
    int best = -1;
    for (size_t k = 0; k < na; k++) {
      if (!ex__ok(&v[k], i)) continue;
      int8_t c = best < 0 ? 0 : cmp[k * na + (size_t)best][i];
      if (best < 0 || (greatest ? c > 0 : c < 0)) best = (int)k;
    }
    pick[i] = best;
  }
  if (!rc) rc = ex__gather(out, e->type, v, pick, n);
  for (size_t i = 0; cmp && i < na * na; i++) free(cmp[i]);
  free(cmp), free(pick);
  ex__free_all(v, na);
  return rc;
}

/* ---- concat_ws, replace ---- */

static int strings(ex_node *e, size_t from) {
  for (size_t i = from; i < e->nargs; i++) {
    ex_type_id t = e->args[i]->type.id;
    if (ex__is_nested(t) || t == EX_T_BINARY) return ex__type_error(e, "string arguments");
    int rc = ex__coerce_arg(e, i, ex__t(EX_T_STRING));
    if (rc) return rc;
  }
  return 0;
}

static int bind_concat_ws(ex_node *e) {
  int rc = strings(e, 0);
  e->type = ex__t(EX_T_STRING);
  e->nullable = e->args[0]->nullable;
  return rc;
}

static int eval_concat_ws(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec *v;
  int rc = ex__eval_all(&v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  if (!(rc = ex__vec_init(out, e->type, n))) rc = ex__vec_and_valid(out, &v[0]);
  for (size_t i = 0; !rc && i < n; i++) {
    out->off[i + 1] = out->data_len;
    if (!ex__ok(out, i)) continue;
    bool first = true;
    for (size_t k = 1; !rc && k < e->nargs; k++) {
      if (!ex__ok(&v[k], i)) continue;
      if (!first) rc = ex__vec_str_push(out, i, v[0].data + v[0].off[i], v[0].off[i + 1] - v[0].off[i]);
      if (!rc) rc = ex__vec_str_push(out, i, v[k].data + v[k].off[i], v[k].off[i + 1] - v[k].off[i]);
      first = false;
    }
    if (!rc && first) rc = ex__vec_str_push(out, i, "", 0);
  }
  if (rc) ex__vec_free(out);
  ex__free_all(v, e->nargs);
  return rc;
}

static int bind_replace(ex_node *e) {
  int rc = strings(e, 0);
  e->type = ex__t(EX_T_STRING);
  e->nullable = any_nullable(e);
  return rc;
}

static int eval_replace(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec *v;
  int rc = ex__eval_all(&v, e, in);
  if (rc) return rc;
  size_t n = v[0].n;
  if (!(rc = ex__vec_init(out, e->type, n)))
    for (size_t k = 0; !rc && k < e->nargs; k++) rc = ex__vec_and_valid(out, &v[k]);
  for (size_t i = 0; !rc && i < n; i++) {
    out->off[i + 1] = out->data_len;
    if (!ex__ok(out, i)) continue;
    const char *s = v[0].data + v[0].off[i], *f = v[1].data + v[1].off[i];
    size_t len = v[0].off[i + 1] - v[0].off[i], flen = v[1].off[i + 1] - v[1].off[i];
    const char *r = e->nargs > 2 ? v[2].data + v[2].off[i] : "";
    size_t rlen = e->nargs > 2 ? v[2].off[i + 1] - v[2].off[i] : 0;
    size_t at = 0;
    while (!rc && flen && at + flen <= len) {
      const char *hit = memmem(s + at, len - at, f, flen);
      if (!hit) break;
      size_t h = (size_t)(hit - s);
      if (!(rc = ex__vec_str_push(out, i, s + at, h - at))) rc = ex__vec_str_push(out, i, r, rlen);
      at = h + flen;
    }
    if (!rc) rc = ex__vec_str_push(out, i, s + at, len - at);
  }
  if (rc) ex__vec_free(out);
  ex__free_all(v, e->nargs);
  return rc;
}

/* ---- hour, minute, second ---- */

static int bind_time_part(ex_node *e) {
  ex_type_id t = e->args[0]->type.id;
  if (t != EX_T_TIMESTAMP_NTZ) {
    if (!ex__can_implicit(e->args[0]->type, ex__t(EX_T_TIMESTAMP))) return ex__type_error(e, "a timestamp argument");
    int rc = ex__coerce_arg(e, 0, ex__t(EX_T_TIMESTAMP));
    if (rc) return rc;
  }
  e->type = ex__t(EX_T_INT);
  e->nullable = e->args[0]->nullable;
  return 0;
}

static int eval_time_part(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  bool ntz = e->args[0]->type.id == EX_T_TIMESTAMP_NTZ;
  int64_t unit = e->name[0] == 'h' ? 3600 : e->name[0] == 'm' ? 60 : 1, mod = e->name[0] == 'h' ? 24 : 60;
  if (!(rc = ex__vec_init(out, ex__t(EX_T_INT), a.n)) && !(rc = ex__vec_and_valid(out, &a)))
    for (size_t i = 0; i < a.n; i++) {
      if (!ex__ok(&a, i)) continue;
      int64_t s = a.i[i] / 1000000 - (a.i[i] % 1000000 < 0) + (ntz ? 0 : e->opts.tz_offset_s);
      int64_t q = s / unit - (s % unit < 0);
      out->i[i] = ((q % mod) + mod) % mod;
    }
  ex__vec_free(&a);
  return rc;
}

/* ---- floor, ceil ---- */

static int bind_round_int(ex_node *e) {
  ex_type a = e->args[0]->type;
  if (a.id == EX_T_STRING || a.id == EX_T_NULL || a.id == EX_T_FLOAT) {
    int rc = ex__coerce_arg(e, 0, ex__t(EX_T_DOUBLE));
    if (rc) return rc;
    a = ex__t(EX_T_DOUBLE);
  }
  if (!ex__is_numeric(a.id)) return ex__type_error(e, "a numeric argument");
  if (a.id == EX_T_DECIMAL) e->type = a.scale ? ex__dec_bounded(a.precision - a.scale + 1, 0) : a;
  else e->type = ex__t(EX_T_LONG);
  e->nullable = e->args[0]->nullable;
  return 0;
}

static int eval_round_int(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  bool up = e->name[0] == 'c';
  ex_type at = e->args[0]->type;
  if (!(rc = ex__vec_init(out, e->type, a.n)) && !(rc = ex__vec_and_valid(out, &a)))
    for (size_t i = 0; i < a.n; i++) {
      if (!ex__ok(&a, i)) continue;
      if (at.id == EX_T_DOUBLE) {
        double r = up ? ceil(a.f[i]) : floor(a.f[i]);
        /* Java's (long) cast: NaN -> 0, saturating at the long range */
        out->i[i] = isnan(r) ? 0 : r >= 9.2233720368547758e18 ? INT64_MAX : r <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)r;
      } else if (at.id == EX_T_DECIMAL) {
        ex_i128 p = ex__pow10(at.scale), q = a.d[i] / p, m = a.d[i] % p;
        out->d[i] = q + (up && m > 0 ? 1 : 0) - (!up && m < 0 ? 1 : 0);
      } else {
        out->i[i] = a.i[i];
      }
    }
  ex__vec_free(&a);
  return rc;
}

/* ---- to_date, to_timestamp (the default formats: a cast) ---- */

static int bind_to_time(ex_node *e) {
  ex_type_id t = e->args[0]->type.id;
  if (t != EX_T_STRING && t != EX_T_DATE && t != EX_T_TIMESTAMP && t != EX_T_TIMESTAMP_NTZ && t != EX_T_NULL)
    return ex__type_error(e, "a string, date or timestamp argument");
  e->type = ex__t(e->name[3] == 'd' ? EX_T_DATE : EX_T_TIMESTAMP);
  e->nullable = true;
  return 0;
}

static int eval_to_time(ex__vec *out, const ex_node *e, const arw_batch *in) {
  ex__vec a;
  int rc = ex__eval_node(&a, e->args[0], in);
  if (rc) return rc;
  rc = ex__cast_vec(out, &a, e->type, &e->opts); /* Spark's errors too: [CAST_INVALID_INPUT] */
  ex__vec_free(&a);
  return rc;
}

/* named_struct('a', x, 'b', y, ...): a struct of the values under those names; the internal
 * #struct_of(guard, 'a', x, ...) is the same struct, NULL where guard is NULL (MERGE's
 * assignment of a struct by field name). The result is nested: ex_eval builds it field by
 * field (ex__struct_eval), never as a vector. */
static int bind_struct(ex_node *e) {
  size_t first = !strcmp(e->name, EX__STRUCT_OF);
  if ((e->nargs - first) % 2)
    return dd_err_set(DD_EINVAL, "[WRONG_NUM_ARGS] named_struct expects name and value pairs");
  for (size_t i = first; i < e->nargs; i += 2) {
    const ex_node *n = e->args[i];
    if (n->kind != EX_LITERAL || n->lit.type.id != EX_T_STRING || n->lit.is_null)
      return dd_err_set(DD_EINVAL, "[DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING] "
                        "named_struct's field names must be string literals");
  }
  e->type = ex__t(EX_T_STRUCT);
  e->nullable = first && e->args[0]->nullable;
  return 0;
}

static int eval_struct(ex__vec *out, const ex_node *e, const arw_batch *in) {
  (void)out, (void)in;
  return dd_err_set(DD_EUNSUPPORTED, "%s as an argument of another function is not supported", e->name);
}

bool ex__is_struct_call(const ex_node *e) { return e->kind == EX_CALL && e->fn && e->fn->eval == eval_struct; }

const ex__fn ex__fns_more[] = {
  {"to_date", 1, 1, bind_to_time, eval_to_time, NULL},
  {"to_timestamp", 1, 1, bind_to_time, eval_to_time, NULL},
  {"nullif", 2, 2, bind_nullif, eval_nullif, NULL},
  {"greatest", 2, -1, ex__bind_common, eval_extreme, NULL},
  {"least", 2, -1, ex__bind_common, eval_extreme, NULL},
  {"concat_ws", 1, -1, bind_concat_ws, eval_concat_ws, NULL},
  {"replace", 2, 3, bind_replace, eval_replace, NULL},
  {"hour", 1, 1, bind_time_part, eval_time_part, NULL},
  {"minute", 1, 1, bind_time_part, eval_time_part, NULL},
  {"second", 1, 1, bind_time_part, eval_time_part, NULL},
  {"floor", 1, 1, bind_round_int, eval_round_int, NULL},
  {"ceil", 1, 1, bind_round_int, eval_round_int, NULL},
  {"named_struct", 2, -1, bind_struct, eval_struct, NULL},
  {EX__STRUCT_OF, 1, -1, bind_struct, eval_struct, NULL},
  {NULL, 0, 0, NULL, NULL, NULL},
};
