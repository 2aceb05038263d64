/* qry_agg.c: hash Aggregate: group keys (evaluated expressions) in a qry__keyset, one
 * accumulator per group and aggregate (count, count DISTINCT through a second keyset of
 * (group, value), sum, min, max, avg), with Spark's result types and ANSI overflow errors.
 * Held: one row per group (and per distinct (group, value)), bounded by QRY_MAX_HELD_BYTES. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/query/qry_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

typedef struct acc {
  int64_t count;  /* non-null values seen (count: rows or distinct values) */
  int64_t i;      /* integral sum; min/max of integral, bool, date, timestamp kinds */
  double d;       /* floating sum; min/max of floats */
  ex_i128 dec;    /* decimal sum; min/max of decimals */
  char *str;      /* min/max of strings and binary */
  size_t len;
} acc;

typedef enum { V_INT, V_FLOAT, V_DEC, V_STR } vclass;

typedef struct agg_col {
  qry_agg_fn fn;
  bool distinct, star;
  ex_node *arg;        /* bound to the input; NULL for count(*) */
  int arg_field;       /* in args_schema */
  vclass vc;
  ex_type in_type, out_type;
  int out_field;
  arw_schema *dschema; /* count(DISTINCT): (g bigint, v) */
  int dg, dv;
  ex_node *darg;       /* arg bound again for dschema's v */
  qry__keyset dseen;
  acc *accs;           /* per group */
} agg_col;

typedef struct agg_op {
  qry_op op;
  ex_node **groups;    /* bound to the input */
  ex_node **key_refs;  /* bound to key_schema: copy keys to the output */
  int *key_fields, *out_key_fields;
  size_t ngroups;
  arw_schema *key_schema, *args_schema;
  qry__keyset keys;
  agg_col *aggs;
  size_t naggs;
  size_t ngroup_rows, acc_cap, emitted;
  bool filled;
} agg_op;

int qry_agg_lookup(qry_agg_fn *out, const char *name) {
  static const struct { const char *n; qry_agg_fn f; } fns[] = {
      {"count", QRY_COUNT}, {"sum", QRY_SUM}, {"min", QRY_MIN}, {"max", QRY_MAX}, {"avg", QRY_AVG}, {"mean", QRY_AVG}};
  for (size_t i = 0; i < sizeof fns / sizeof fns[0]; i++)
    if (!strcasecmp(fns[i].n, name)) return *out = fns[i].f, 0;
  return DD_ENOTFOUND;
}

static const char *fn_name(qry_agg_fn f) {
  static const char *const n[] = {"count", "sum", "min", "max", "avg"};
  return n[f];
}

/* ======================= types ======================= */

static int agg_types(agg_col *a) {
  ex_type t = a->in_type;
  bool integral = t.id >= EX_T_BYTE && t.id <= EX_T_LONG;
  bool floating = t.id == EX_T_FLOAT || t.id == EX_T_DOUBLE;
  a->vc = floating ? V_FLOAT : t.id == EX_T_DECIMAL ? V_DEC : (t.id == EX_T_STRING || t.id == EX_T_BINARY) ? V_STR : V_INT;
  switch (a->fn) {
    case QRY_COUNT: a->out_type = (ex_type){EX_T_LONG, 0, 0}; return 0;
    case QRY_MIN: case QRY_MAX:
      if (t.id >= EX_T_STRUCT) return dd_err_set(DD_EUNSUPPORTED, "%s of a nested value is not supported", fn_name(a->fn));
      a->out_type = t;
      return 0;
    case QRY_SUM: case QRY_AVG:
      if (t.id == EX_T_NULL) t = (ex_type){EX_T_DOUBLE, 0, 0}, a->vc = V_FLOAT;
      if (!integral && !floating && t.id != EX_T_DECIMAL && t.id != EX_T_NULL)
        return dd_err_set(DD_EINVAL, "[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] %s requires a numeric argument", fn_name(a->fn));
      if (t.id == EX_T_DECIMAL) {
        int p = t.precision + (a->fn == QRY_SUM ? 10 : 4), s = t.scale + (a->fn == QRY_SUM ? 0 : 4);
        a->out_type = (ex_type){EX_T_DECIMAL, p > 38 ? 38 : p, s > 38 ? 38 : s};
      } else {
        a->out_type = (ex_type){a->fn == QRY_SUM && integral ? EX_T_LONG : EX_T_DOUBLE, 0, 0};
      }
      return 0;
  }
  return 0;
}

static int add_out_field(arw_schema *s, const char *name, const agg_col *a, int *id) {
  ex_type t = a->out_type;
  bool nullable = a->fn != QRY_COUNT;
  switch (t.id) {
    case EX_T_LONG: return arw_schema_add(s, ARW_ROOT, name, ARW_INT64, nullable, id);
    case EX_T_DOUBLE: return arw_schema_add(s, ARW_ROOT, name, ARW_FLOAT64, nullable, id);
    case EX_T_DECIMAL:
      if (a->fn != QRY_MIN && a->fn != QRY_MAX)
        return arw_schema_add_decimal(s, ARW_ROOT, name, t.precision, t.scale, nullable, id);
      /* fall through */
    default: return ex_add_field(s, ARW_ROOT, name, a->arg, id); /* min/max: the input's type */
  }
}

/* ======================= accumulating ======================= */

static int64_t view_i(const arw_view *v, size_t r) {
  int64_t x = 0;
  switch (v->kind) {
    case ARW_BOOL: return arw_view_bool(v, r);
    case ARW_INT8: return ((const int8_t *)v->values)[r];
    case ARW_INT16: { int16_t y; memcpy(&y, v->values + 2 * r, 2); return y; }
    case ARW_INT32: case ARW_DATE32: { int32_t y; memcpy(&y, v->values + 4 * r, 4); return y; }
    default: memcpy(&x, v->values + 8 * r, 8); return x;
  }
}

static double view_f(const arw_view *v, size_t r) {
  if (v->kind == ARW_FLOAT32) { float y; memcpy(&y, v->values + 4 * r, 4); return y; }
  if (v->kind == ARW_FLOAT64) { double y; memcpy(&y, v->values + 8 * r, 8); return y; }
  return (double)view_i(v, r);
}

static int overflow(const agg_col *a) {
  return dd_err_set(DD_ERANGE, "[ARITHMETIC_OVERFLOW] %s overflowed. If necessary set "
                    "spark.sql.ansi.enabled to \"false\" to bypass this error.", fn_name(a->fn));
}

static int better(const agg_col *a, const acc *c, const arw_view *v, size_t r) {
  int cmp = 0;
  if (a->vc == V_FLOAT) {
    double x = view_f(v, r), y = c->d;
    cmp = (x != x || y != y) ? (x != x) - (y != y) : (x > y) - (x < y);
  } else if (a->vc == V_DEC) {
    ex_i128 x;
    memcpy(&x, v->values + 16 * r, 16);
    cmp = (x > c->dec) - (x < c->dec);
  } else if (a->vc == V_STR) {
    size_t n = (size_t)(v->offsets[r + 1] - v->offsets[r]);
    int m = memcmp(v->values + v->offsets[r], c->str, n < c->len ? n : c->len);
    cmp = m ? m : (n > c->len) - (n < c->len);
  } else {
    int64_t x = view_i(v, r);
    cmp = (x > c->i) - (x < c->i);
  }
  return a->fn == QRY_MIN ? cmp < 0 : cmp > 0;
}

static int take_value(const agg_col *a, acc *c, const arw_view *v, size_t r) {
  if (a->vc == V_FLOAT) c->d = view_f(v, r);
  else if (a->vc == V_DEC) memcpy(&c->dec, v->values + 16 * r, 16);
  else if (a->vc == V_INT) c->i = view_i(v, r);
  else {
    size_t n = (size_t)(v->offsets[r + 1] - v->offsets[r]);
    char *s = malloc(n ? n : 1);
    if (!s) return OOM();
    memcpy(s, v->values + v->offsets[r], n);
    free(c->str);
    c->str = s, c->len = n;
  }
  return 0;
}

static int accumulate(agg_col *a, acc *c, const arw_view *v, size_t r) {
  if (a->star) return c->count++, 0;
  if (!arw_view_valid(v, r)) return 0;
  switch (a->fn) {
    case QRY_COUNT: c->count++; return 0;
    case QRY_MIN: case QRY_MAX:
      if (!c->count++ || better(a, c, v, r)) return take_value(a, c, v, r);
      return 0;
    case QRY_SUM: case QRY_AVG:
      c->count++;
      if (a->vc == V_DEC) {
        ex_i128 x;
        memcpy(&x, v->values + 16 * r, 16);
        if (__builtin_add_overflow(c->dec, x, &c->dec)) return overflow(a);
      } else if (a->fn == QRY_SUM && a->out_type.id == EX_T_LONG) {
        if (__builtin_add_overflow(c->i, view_i(v, r), &c->i)) return overflow(a);
      } else {
        c->d += view_f(v, r); /* avg of integral values sums doubles, as Spark's Average */
      }
      return 0;
  }
  return 0;
}

static int grow_accs(agg_op *g, size_t need) {
  if (need <= g->acc_cap) return 0;
  size_t cap = g->acc_cap ? g->acc_cap * 2 : 64;
  while (cap < need) cap *= 2;
  for (size_t k = 0; k < g->naggs; k++) {
    acc *n = realloc(g->aggs[k].accs, cap * sizeof *n);
    if (!n) return OOM();
    memset(n + g->acc_cap, 0, (cap - g->acc_cap) * sizeof *n);
    g->aggs[k].accs = n;
  }
  g->acc_cap = cap;
  return 0;
}

/* count(DISTINCT): counts (group, value) pairs not seen before. */
static int distinct_batch(agg_col *a, const arw_batch *in, const size_t *gidx, size_t n) {
  arw_batch *d = NULL;
  int rc = arw_batch_new(&d, a->dschema);
  if (!rc) rc = arw_append_fixed(d, a->dg, gidx, n, NULL); /* size_t is 8 bytes here */
  if (!rc) rc = ex_eval(a->darg, in, d, a->dv);
  arw_view v;
  if (!rc) rc = arw_batch_view(d, a->dv, &v);
  for (size_t r = 0; !rc && r < n; r++) {
    if (!arw_view_valid(&v, r)) continue;
    size_t idx;
    bool added;
    if (!(rc = qry__keyset_put(&a->dseen, d, r, &idx, &added)) && added) a->accs[gidx[r]].count++;
  }
  arw_batch_free(d);
  return rc;
}

static int agg_batch(agg_op *g, const arw_batch *in, size_t *gidx) {
  size_t n = arw_batch_rows(in);
  arw_batch *kb = NULL, *ab = NULL;
  int rc = arw_batch_new(&kb, g->key_schema);
  if (!rc) rc = arw_batch_new(&ab, g->args_schema);
  for (size_t i = 0; !rc && i < g->ngroups; i++) rc = ex_eval(g->groups[i], in, kb, g->key_fields[i]);
  for (size_t k = 0; !rc && k < g->naggs; k++)
    if (g->aggs[k].arg && !g->aggs[k].distinct) rc = ex_eval(g->aggs[k].arg, in, ab, g->aggs[k].arg_field);
  for (size_t r = 0; !rc && r < n; r++) {
    bool added = false;
    gidx[r] = 0;
    if (g->ngroups) rc = qry__keyset_put(&g->keys, kb, r, &gidx[r], &added);
    if (!rc) rc = grow_accs(g, gidx[r] + 1);
  }
  if (!rc && g->ngroups) g->ngroup_rows = g->keys.n;
  for (size_t k = 0; !rc && k < g->naggs; k++) {
    agg_col *a = &g->aggs[k];
    if (a->distinct) {
      rc = distinct_batch(a, in, gidx, n);
      continue;
    }
    arw_view v = {0};
    if (a->arg && (rc = arw_batch_view(ab, a->arg_field, &v))) break;
    for (size_t r = 0; !rc && r < n; r++) rc = accumulate(a, &a->accs[gidx[r]], &v, r);
  }
  arw_batch_free(kb);
  arw_batch_free(ab);
  return rc;
}

static int agg_fill(agg_op *g) {
  const arw_batch *b;
  size_t *gidx = NULL, cap = 0;
  int rc = grow_accs(g, 1);
  while (!rc && !(rc = qry_next(g->op.in, &b)) && b) {
    size_t n = arw_batch_rows(b);
    if (n > cap) {
      free(gidx);
      if (!(gidx = malloc(n * sizeof *gidx))) return OOM();
      cap = n;
    }
    rc = agg_batch(g, b, gidx);
    size_t held = g->ngroups ? qry__batch_bytes(g->keys.rows) : 0;
    held += g->acc_cap * g->naggs * sizeof(acc);
    for (size_t k = 0; k < g->naggs; k++)
      if (g->aggs[k].distinct) held += qry__batch_bytes(g->aggs[k].dseen.rows);
    if (!rc) rc = qry__held_check(held, "aggregate");
  }
  free(gidx);
  g->filled = true;
  return rc;
}

/* ======================= output ======================= */

static int emit_value(arw_batch *o, const agg_col *a, const acc *c) {
  int f = a->out_field;
  if (a->fn == QRY_COUNT) return arw_append_i64(o, f, c->count);
  if (!c->count) return arw_append_null(o, f);
  ex_type t = a->out_type;
  if (a->fn == QRY_AVG) {
    if (t.id == EX_T_DOUBLE) return arw_append_f64(o, f, c->d / (double)c->count);
    /* decimal: sum * 10^(s' - s) / count, rounded half up */
    ex_i128 q = c->dec;
    for (int s = a->in_type.scale; s < t.scale; s++)
      if (__builtin_mul_overflow(q, (ex_i128)10, &q)) return overflow(a);
    ex_i128 cnt = c->count, r = q % cnt;
    q /= cnt;
    if ((r < 0 ? -r : r) * 2 >= cnt) q += q < 0 || (q == 0 && r < 0) ? -1 : 1;
    uint8_t le[16];
    memcpy(le, &q, 16);
    return arw_append_dec128(o, f, le);
  }
  switch (a->vc) {
    case V_FLOAT:
      if (arw_field_kind(arw_batch_schema(o), f) == ARW_FLOAT32) return arw_append_f32(o, f, (float)c->d);
      return arw_append_f64(o, f, c->d);
    case V_DEC: { uint8_t le[16]; memcpy(le, &c->dec, 16); return arw_append_dec128(o, f, le); }
    case V_STR: return arw_append_str(o, f, c->str, c->len);
    case V_INT: {
      arw_kind k = arw_field_kind(arw_batch_schema(o), f);
      if (k == ARW_BOOL) return arw_append_bool(o, f, c->i != 0);
      if (k == ARW_INT64 || k == ARW_TIMESTAMP || k == ARW_TIMESTAMP_UTC) return arw_append_i64(o, f, c->i);
      return arw_append_i32(o, f, (int32_t)c->i);
    }
  }
  return 0;
}

static int agg_next(qry_op *op, const arw_batch **out) {
  agg_op *g = (agg_op *)op;
  int rc = g->filled ? 0 : agg_fill(g);
  size_t total = g->ngroups ? g->ngroup_rows : 1;
  if (rc || g->emitted >= total) return rc;
  size_t a = g->emitted, n = total - a < QRY_BATCH_ROWS ? total - a : QRY_BATCH_ROWS;
  arw_batch *o = NULL, *ks = NULL;
  rc = arw_batch_new(&o, op->schema);
  if (!rc && g->ngroups) rc = arw_batch_slice(&ks, g->keys.rows, a, a + n);
  for (size_t i = 0; !rc && i < g->ngroups; i++) rc = ex_eval(g->key_refs[i], ks, o, g->out_key_fields[i]);
  for (size_t k = 0; !rc && k < g->naggs; k++)
    for (size_t r = a; !rc && r < a + n; r++) rc = emit_value(o, &g->aggs[k], &g->aggs[k].accs[r]);
  arw_batch_free(ks);
  if (rc) return arw_batch_free(o), rc;
  g->emitted += n;
  *out = qry__keep(op, o);
  return 0;
}

static void agg_drop(qry_op *op) {
  agg_op *g = (agg_op *)op;
  for (size_t i = 0; i < g->ngroups; i++) ex_free(g->groups[i]), ex_free(g->key_refs[i]);
  for (size_t k = 0; k < g->naggs; k++) {
    agg_col *a = &g->aggs[k];
    ex_free(a->arg), ex_free(a->darg);
    for (size_t r = 0; a->accs && r < g->acc_cap; r++) free(a->accs[r].str);
    free(a->accs);
    qry__keyset_free(&a->dseen);
    arw_schema_free(a->dschema);
  }
  free(g->groups), free(g->key_refs), free(g->key_fields), free(g->out_key_fields), free(g->aggs);
  qry__keyset_free(&g->keys);
  arw_schema_free(g->key_schema);
  arw_schema_free(g->args_schema);
}

/* Spark's name: count(1) for count(*), count(DISTINCT x), sum(x), avg(x), ... */
static int agg_name(char **out, const qry_agg *q) {
  if (q->name) return (*out = strdup(q->name)) ? 0 : OOM();
  char *arg = NULL;
  int rc = 0;
  if (!q->arg || ex_node_kind(q->arg) == EX_STAR) arg = strdup("1");
  else rc = ex_name(&arg, q->arg);
  if (rc) return rc;
  if (!arg || asprintf(out, "%s(%s%s)", fn_name(q->fn), q->distinct ? "DISTINCT " : "", arg) < 0) *out = NULL;
  free(arg);
  return *out ? 0 : OOM();
}

static int agg_setup(agg_op *g, const qry_agg *q, size_t k, const arw_schema *in) {
  agg_col *a = &g->aggs[k];
  a->fn = q->fn, a->distinct = q->distinct;
  a->star = q->fn == QRY_COUNT && !q->distinct &&
            (!q->arg || ex_node_kind(q->arg) == EX_STAR ||
             (ex_literal(q->arg) && !ex_literal(q->arg)->is_null));
  if (!q->arg && q->fn != QRY_COUNT) return dd_err_set(DD_EINVAL, "%s needs an argument", fn_name(q->fn));
  if (q->distinct && q->fn != QRY_COUNT)
    return dd_err_set(DD_EUNSUPPORTED, "%s(DISTINCT ...) is not supported (count(DISTINCT ...) is)", fn_name(q->fn));
  int rc = 0;
  if (!a->star) {
    if (q->arg && ex_node_kind(q->arg) == EX_STAR) return dd_err_set(DD_EINVAL, "%s(*) is not valid", fn_name(q->fn));
    char name[32];
    snprintf(name, sizeof name, "a%zu", k);
    rc = qry__bind(&a->arg, q->arg, in);
    if (!rc) a->in_type = ex_result_type(a->arg);
    if (!rc && !a->distinct) rc = ex_add_field(g->args_schema, ARW_ROOT, name, a->arg, &a->arg_field);
    if (!rc && a->distinct) {
      rc = arw_schema_new(&a->dschema);
      if (!rc) rc = arw_schema_add(a->dschema, ARW_ROOT, "g", ARW_INT64, false, &a->dg);
      if (!rc) rc = ex_add_field(a->dschema, ARW_ROOT, "v", a->arg, &a->dv);
      if (!rc) rc = qry__bind(&a->darg, q->arg, in);
      if (!rc) rc = qry__keyset_init(&a->dseen, a->dschema);
    }
  }
  if (!rc) rc = agg_types(a);
  char *name = NULL;
  if (!rc) rc = agg_name(&name, q);
  if (!rc) rc = add_out_field(g->op.own_schema, name, a, &a->out_field);
  free(name);
  return rc;
}

int qry_aggregate(qry_op **out, qry_op *in, ex_node *const *groups, size_t ngroups,
                  const qry_agg *aggs, size_t naggs) {
  *out = NULL;
  agg_op *g = qry__new(sizeof *g, in, agg_next, agg_drop, "Aggregate [%zu keys, %zu aggregates]", ngroups, naggs);
  if (!g) return OOM();
  g->groups = calloc(ngroups + 1, sizeof *g->groups);
  g->key_refs = calloc(ngroups + 1, sizeof *g->key_refs);
  g->key_fields = calloc(ngroups + 1, sizeof *g->key_fields);
  g->out_key_fields = calloc(ngroups + 1, sizeof *g->out_key_fields);
  g->aggs = calloc(naggs + 1, sizeof *g->aggs);
  int rc = g->groups && g->key_refs && g->key_fields && g->out_key_fields && g->aggs ? 0 : OOM();
  if (!rc) rc = arw_schema_new(&g->op.own_schema);
  if (!rc) rc = arw_schema_new(&g->key_schema);
  if (!rc) rc = arw_schema_new(&g->args_schema);
  g->op.schema = g->op.own_schema;
  for (size_t i = 0; !rc && i < ngroups; i++) {
    char *name = NULL, kname[32];
    snprintf(kname, sizeof kname, "k%zu", i);
    const char *kn = kname;
    ex_node *ref = NULL;
    rc = qry__bind(&g->groups[i], groups[i], in->schema);
    if (!rc) g->ngroups++, rc = ex_name(&name, groups[i]);
    if (!rc) rc = ex_add_field(g->key_schema, ARW_ROOT, kname, g->groups[i], &g->key_fields[i]);
    if (!rc) rc = ex_add_field(g->op.own_schema, ARW_ROOT, name, g->groups[i], &g->out_key_fields[i]);
    if (!rc) rc = ex_new_column(&ref, &kn, 1);
    if (!rc) rc = qry__bind(&g->key_refs[i], ref, g->key_schema);
    ex_free(ref);
    free(name);
  }
  for (size_t k = 0; !rc && k < naggs; k++) {
    g->naggs++;
    rc = agg_setup(g, &aggs[k], k, in->schema);
  }
  if (!rc) rc = qry__keyset_init(&g->keys, g->key_schema);
  if (rc) return qry_free(&g->op), rc;
  *out = &g->op;
  return 0;
}
