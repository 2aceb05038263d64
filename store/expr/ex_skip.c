/* ex_skip.c: data skipping. For one Delta file, every node of a bound predicate gets two
 * answers, "may some row make it true" and "may some row make it false" (NULL is neither),
 * from what the file tells about its columns: a partition column's exact value, or the
 * file stats' minValues / maxValues / nullCount / numRecords. NOT swaps the answers, AND
 * and OR combine them; anything not understood answers (yes, yes). A file is skipped only
 * when no row may make the predicate true.
 *
 * Bounds are widened where the stats are not exact: timestamp stats are truncated to
 * milliseconds (max + 999 us), a string max of 32 or more characters may be a truncated
 * prefix (no upper bound), float and double maxima ignore NaN, which Spark orders above
 * every number (no upper bound), and without tight bounds (deletion vectors) null counts
 * and row counts are not trusted. */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/expr/ex_int.h"

struct ex_skipper {
  const ex_node *pred;
  const dl_snapshot *snap;
  arw_schema *empty; /* for binding casts of stats values */
  int64_t considered, skipped;
};

typedef struct file_ctx {
  const ex_skipper *sk;
  const dl_file *f;
  dl_stats *st;
  bool st_tried;
} file_ctx;

/* What is known about one column in one file. */
typedef struct col_info {
  bool has_min, has_max;
  ex_value min, max;
  char *smin, *smax;  /* storage of string bounds */
  int64_t nulls, rows; /* -1: unknown */
} col_info;

static void col_info_free(col_info *c) {
  free(c->smin);
  free(c->smax);
}

/* ---- column lookup ---- */

static bool is_partition(const dl_metadata *md, const char *name) {
  for (size_t i = 0; i < md->num_partition_columns; i++)
    if (!strcasecmp(md->partition_columns[i], name)) return true;
  return false;
}

static const dl_field *child_field(const dl_type *t, const char *name) {
  if (!t || t->kind != DL_TYPE_STRUCT) return NULL;
  for (size_t i = 0; i < t->num_fields; i++)
    if (!strcmp(t->fields[i].name, name)) return &t->fields[i];
  for (size_t i = 0; i < t->num_fields; i++)
    if (!strcasecmp(t->fields[i].name, name)) return &t->fields[i];
  return NULL;
}

/* The dl_field of a bound column and its stats path of physical names. */
static const dl_field *delta_field(const ex_skipper *sk, const ex_node *col, char *path, size_t cap) {
  const dl_schema *s = dl_snapshot_schema(sk->snap);
  if (!s) return NULL;
  const dl_field *f = dl_schema_field(s, col->parts[0]);
  size_t at = 0;
  for (size_t k = 0; f; k++) {
    const char *pn = f->physical_name ? f->physical_name : f->name;
    int n = snprintf(path + at, cap - at, "%s%s", k ? "." : "", pn);
    if (n < 0 || (size_t)n >= cap - at) return NULL;
    at += (size_t)n;
    if (k + 1 == col->nparts) return f;
    f = child_field(f->type, col->parts[k + 1]);
  }
  return NULL;
}

/* ---- values ---- */

static bool value_from_text(ex_value *v, char **storage, ex_type t, const char *s, size_t len) {
  memset(v, 0, sizeof *v);
  v->type = t;
  char buf[128];
  if (t.id != EX_T_STRING && t.id != EX_T_BINARY) {
    if (len >= sizeof buf) return false;
    memcpy(buf, s, len);
    buf[len] = '\0';
  }
  char *end;
  switch (t.id) {
    case EX_T_BOOLEAN:
      if (!strcmp(buf, "true")) v->b = true;
      else if (strcmp(buf, "false")) return false;
      return true;
    case EX_T_BYTE:
    case EX_T_SHORT:
    case EX_T_INT:
    case EX_T_LONG:
      v->i = strtoll(buf, &end, 10);
      return end != buf && !*end;
    case EX_T_FLOAT:
    case EX_T_DOUBLE:
      v->f = strtod(buf, &end);
      return end != buf && !*end;
    case EX_T_DECIMAL: return ex__parse_decimal(buf, len, t, &v->dec);
    case EX_T_DATE: return ex__parse_date(buf, len, &v->i);
    case EX_T_TIMESTAMP:
    case EX_T_TIMESTAMP_NTZ: return ex__parse_timestamp(buf, len, t.id == EX_T_TIMESTAMP_NTZ, 0, &v->i);
    case EX_T_STRING:
      if (!(*storage = ex__strndup(s, len))) return false;
      v->str = *storage;
      v->len = len;
      return true;
    default: return false;
  }
}

/* A stats value (compact JSON) as a value of type t. */
static bool stats_value(ex_value *v, char **storage, ex_type t, const char *json) {
  json_error_t err;
  json_t *j = json_loads(json, JSON_DECODE_ANY, &err);
  bool ok = false;
  if (json_is_string(j)) {
    ok = value_from_text(v, storage, t, json_string_value(j), json_string_length(j));
  } else if (json_is_number(j) || json_is_boolean(j)) {
    ok = value_from_text(v, storage, t, json, strlen(json));
    if (!ok && json_is_real(j) && (t.id == EX_T_FLOAT || t.id == EX_T_DOUBLE)) {
      v->f = json_real_value(j);
      ok = true;
    }
  }
  json_decref(j);
  return ok;
}

static size_t nchars(const char *s, size_t len) {
  size_t n = 0;
  for (size_t i = 0; i < len; i++) n += ((unsigned char)s[i] & 0xC0) != 0x80;
  return n;
}

static void widen(col_info *c, ex_type t) {
  if (t.id == EX_T_TIMESTAMP || t.id == EX_T_TIMESTAMP_NTZ) c->max.i += 999, c->min.i -= 999;
  if (t.id == EX_T_FLOAT || t.id == EX_T_DOUBLE) c->has_max = false;
  if (t.id == EX_T_STRING && c->has_max && nchars(c->max.str, c->max.len) >= 32) c->has_max = false;
  if (t.id == EX_T_BINARY) c->has_min = c->has_max = false;
}

static bool column_info(file_ctx *fc, const ex_node *col, col_info *c) {
  memset(c, 0, sizeof *c);
  c->nulls = c->rows = -1;
  const ex_skipper *sk = fc->sk;
  char path[1024];
  const dl_field *df = delta_field(sk, col, path, sizeof path);
  if (!df) return false;
  ex_type t = col->type;
  const dl_metadata *md = dl_snapshot_metadata(sk->snap);
  if (col->nparts == 1 && md && is_partition(md, col->parts[0])) {
    const char *raw = NULL;
    if (!dl_kv_get(fc->f->partition_values, path, &raw) &&
        !dl_kv_get(fc->f->partition_values, df->name, &raw))
      return false;
    c->rows = 1;
    dl_value dv;
    if (dl_partition_value_parse(&dv, df->type, raw)) {
      dd_err_clear();
      return false;
    }
    if (dv.is_null) {
      c->nulls = 1;
      return true;
    }
    c->nulls = 0;
    if (!value_from_text(&c->min, &c->smin, t, raw, strlen(raw))) {
      /* timestamps and the like: dl_value already parsed them */
      memset(&c->min, 0, sizeof c->min);
      c->min.type = t;
      if (t.id == EX_T_DATE || t.id == EX_T_TIMESTAMP || t.id == EX_T_TIMESTAMP_NTZ) c->min.i = dv.i64;
      else return false;
    }
    c->max = c->min;
    c->has_min = c->has_max = true;
    return true;
  }
  if (!fc->st_tried) {
    fc->st_tried = true;
    if (fc->f->stats && dl_stats_parse(&fc->st, fc->f->stats)) {
      dd_err_clear();
      fc->st = NULL;
    }
  }
  if (!fc->st) return false;
  bool tight = dl_stats_tight_bounds(fc->st);
  char *j = NULL;
  if (tight) {
    c->rows = dl_stats_num_records(fc->st);
    if (dl_stats_get(&j, fc->st, DL_STATS_NULL_COUNT, path) == 0) {
      c->nulls = strtoll(j, NULL, 10);
      free(j);
    }
  }
  if (dl_stats_get(&j, fc->st, DL_STATS_MIN, path) == 0) {
    c->has_min = stats_value(&c->min, &c->smin, t, j);
    free(j);
  }
  if (dl_stats_get(&j, fc->st, DL_STATS_MAX, path) == 0) {
    c->has_max = stats_value(&c->max, &c->smax, t, j);
    free(j);
  }
  dd_err_clear();
  widen(c, t);
  return true;
}

/* ---- comparing values of one type ---- */

static int vcmp(const ex_value *a, const ex_value *b) {
  switch (a->type.id) {
    case EX_T_BOOLEAN: return (a->b > b->b) - (a->b < b->b);
    case EX_T_FLOAT:
    case EX_T_DOUBLE: return (a->f > b->f) - (a->f < b->f);
    case EX_T_DECIMAL: return (a->dec > b->dec) - (a->dec < b->dec);
    case EX_T_STRING:
    case EX_T_BINARY: {
      size_t n = a->len < b->len ? a->len : b->len;
      int c = n ? memcmp(a->str, b->str, n) : 0;
      return c ? (c > 0) - (c < 0) : (a->len > b->len) - (a->len < b->len);
    }
    default: return (a->i > b->i) - (a->i < b->i);
  }
}

/* Is cast from -> to order-preserving (monotone)? */
static bool monotone(ex_type from, ex_type to) {
  if (ex__is_numeric(from.id) && (to.id == EX_T_DOUBLE || to.id == EX_T_FLOAT)) return true;
  if (ex__is_integral(from.id) && (ex__is_integral(to.id) || to.id == EX_T_DECIMAL))
    return ex__int_max(to.id) >= ex__int_max(from.id) || to.id == EX_T_DECIMAL;
  if (from.id == EX_T_DECIMAL && to.id == EX_T_DECIMAL) return true;
  if (from.id == EX_T_DATE && (to.id == EX_T_TIMESTAMP || to.id == EX_T_TIMESTAMP_NTZ)) return true;
  if (from.id == EX_T_TIMESTAMP_NTZ && to.id == EX_T_TIMESTAMP) return true;
  return false;
}

/* The column under monotone casts, or NULL. */
static const ex_node *column_of(const ex_node *e) {
  while (e->kind == EX_CAST || e->kind == EX_ALIAS) {
    /* a TRY_CAST may turn a value into NULL: not order-preserving over the stats */
    if (e->kind == EX_CAST && (e->try_ || !monotone(e->args[0]->type, e->type))) return NULL;
    e = e->args[0];
  }
  return e->kind == EX_COLUMN ? e : NULL;
}

/* v (a value of the column's type) carried through the casts above the column in side. */
static bool through_casts(const ex_skipper *sk, const ex_node *side, ex_value *v, char **storage) {
  if (side->kind == EX_COLUMN) return true;
  if (!through_casts(sk, side->args[0], v, storage)) return false;
  if (side->kind == EX_ALIAS) return true;
  ex_node *lit = NULL, *cast = NULL, *bound = NULL;
  bool ok = false;
  char *st2 = NULL;
  ex_bind_opts bo = EX_BIND_OPTS_INIT;
  bo.ansi = side->opts.ansi;
  bo.now_us = 1;
  if (ex_new_literal(&lit, v) || ex_new_cast(&cast, lit, side->type)) goto cleanup;
  if (ex_bind(&bound, cast, sk->empty, &bo) || ex_eval_const(v, &st2, bound)) goto cleanup;
  free(*storage);
  *storage = st2;
  st2 = NULL;
  ok = !v->is_null;
cleanup:
  free(st2);
  ex_free(bound);
  ex_free(cast);
  dd_err_clear();
  return ok;
}

/* ---- the walk ---- */

typedef struct mm {
  bool t, f; /* may be true, may be false */
} mm;

static const mm UNKNOWN = {true, true};

static mm walk(file_ctx *fc, const ex_node *e);

static bool all_null(const col_info *c) { return c->nulls >= 0 && c->rows >= 0 && c->nulls >= c->rows && c->rows > 0; }

/* column op constant */
static mm compare(file_ctx *fc, const char *op, const ex_node *side, const ex_value *k) {
  bool knull = k->is_null || k->type.id == EX_T_NULL;
  if (knull && strcmp(op, "<=>")) return (mm){false, false}; /* x op NULL is NULL */
  const ex_node *col = column_of(side);
  if (!col) return UNKNOWN;
  col_info c;
  if (!column_info(fc, col, &c)) {
    col_info_free(&c);
    return UNKNOWN;
  }
  mm r = UNKNOWN;
  bool nullsafe = !strcmp(op, "<=>");
  if (knull) {
    r = (mm){c.nulls != 0, c.rows < 0 || c.nulls < 0 || c.nulls < c.rows};
    goto done;
  }
  if (all_null(&c)) {
    r = nullsafe ? (mm){false, true} : (mm){false, false};
    goto done;
  }
  ex_value lo = c.min, hi = c.max;
  char *s1 = NULL, *s2 = NULL;
  bool has_lo = c.has_min && through_casts(fc->sk, side, &lo, &s1);
  bool has_hi = c.has_max && through_casts(fc->sk, side, &hi, &s2);
  if ((has_lo && lo.type.id != k->type.id) || (has_hi && hi.type.id != k->type.id)) has_lo = has_hi = false;
  int cl = has_lo ? vcmp(&lo, k) : 0, ch = has_hi ? vcmp(&hi, k) : 0; /* sign of bound - k */
  if (!strcmp(op, "=") || nullsafe) {
    r.t = (!has_lo || cl <= 0) && (!has_hi || ch >= 0);
    r.f = !(has_lo && has_hi && cl == 0 && ch == 0) || (nullsafe && c.nulls != 0);
  } else if (!strcmp(op, "<")) {
    r = (mm){!has_lo || cl < 0, !has_hi || ch >= 0};
  } else if (!strcmp(op, "<=")) {
    r = (mm){!has_lo || cl <= 0, !has_hi || ch > 0};
  } else if (!strcmp(op, ">")) {
    r = (mm){!has_hi || ch > 0, !has_lo || cl <= 0};
  } else if (!strcmp(op, ">=")) {
    r = (mm){!has_hi || ch >= 0, !has_lo || cl < 0};
  }
  free(s1);
  free(s2);
done:
  col_info_free(&c);
  return r;
}

static const char *flip(const char *op) {
  if (!strcmp(op, "<")) return ">";
  if (!strcmp(op, "<=")) return ">=";
  if (!strcmp(op, ">")) return "<";
  if (!strcmp(op, ">=")) return "<=";
  return op;
}

static bool constant(const ex_node *e, ex_value *v, char **storage) {
  *storage = NULL;
  if (ex_uses_columns(e)) return false;
  if (ex_eval_const(v, storage, e)) {
    dd_err_clear();
    return false;
  }
  return true;
}

static mm cmp_node(file_ctx *fc, const ex_node *e) {
  ex_value k;
  char *st = NULL;
  mm r = UNKNOWN;
  if (constant(e->args[1], &k, &st)) r = compare(fc, e->name, e->args[0], &k);
  else if (free(st), constant(e->args[0], &k, &st)) r = compare(fc, flip(e->name), e->args[1], &k);
  free(st);
  return r;
}

static mm in_node(file_ctx *fc, const ex_node *e) {
  mm r = {false, true};
  for (size_t i = 1; i < e->nargs; i++) {
    ex_value k;
    char *st;
    if (!constant(e->args[i], &k, &st)) {
      free(st);
      return UNKNOWN;
    }
    mm one = compare(fc, "=", e->args[0], &k);
    free(st);
    r.t |= one.t;
  }
  return r;
}

static mm null_node(file_ctx *fc, const ex_node *e) {
  const ex_node *col = e->args[0];
  while (col->kind == EX_CAST || col->kind == EX_ALIAS) {
    /* a cast that gives NULL for a value (TRY_CAST, a legacy cast) says nothing here */
    if (col->kind == EX_CAST && (col->try_ || !col->opts.ansi)) return UNKNOWN;
    col = col->args[0];
  }
  if (col->kind != EX_COLUMN) return UNKNOWN;
  col_info c;
  bool ok = column_info(fc, col, &c);
  col_info_free(&c);
  if (!ok) return UNKNOWN;
  mm isnull = {c.nulls != 0, c.rows < 0 || c.nulls < 0 || c.nulls < c.rows};
  if (!strcmp(e->name, "isnull")) return isnull;
  return (mm){isnull.f, isnull.t};
}

static mm walk(file_ctx *fc, const ex_node *e) {
  while (e->kind == EX_ALIAS || (e->kind == EX_CAST && e->type.id == EX_T_BOOLEAN &&
                                 e->args[0]->type.id == EX_T_BOOLEAN))
    e = e->args[0];
  if (!ex_uses_columns(e) && e->type.id == EX_T_BOOLEAN) {
    ex_value v;
    char *st;
    if (constant(e, &v, &st)) {
      free(st);
      if (v.is_null) return (mm){false, false};
      return (mm){v.b, !v.b};
    }
    free(st);
    return UNKNOWN;
  }
  if (e->kind != EX_CALL) return UNKNOWN;
  const char *fn = e->name;
  if (!strcmp(fn, "not")) {
    mm a = walk(fc, e->args[0]);
    return (mm){a.f, a.t};
  }
  if (!strcmp(fn, "and") || !strcmp(fn, "or")) {
    mm a = walk(fc, e->args[0]), b = walk(fc, e->args[1]);
    if (fn[0] == 'a') return (mm){a.t && b.t, a.f || b.f};
    return (mm){a.t || b.t, a.f && b.f};
  }
  if (!strcmp(fn, "=") || !strcmp(fn, "<") || !strcmp(fn, "<=") || !strcmp(fn, ">") ||
      !strcmp(fn, ">=") || !strcmp(fn, "<=>"))
    return cmp_node(fc, e);
  if (!strcmp(fn, "in")) return in_node(fc, e);
  if (!strcmp(fn, "isnull") || !strcmp(fn, "isnotnull")) return null_node(fc, e);
  if (!strcmp(fn, "between")) {
    ex_value lo, hi;
    char *s1, *s2;
    mm r = UNKNOWN;
    bool a = constant(e->args[1], &lo, &s1), b = constant(e->args[2], &hi, &s2);
    if (a && b) {
      mm x = compare(fc, ">=", e->args[0], &lo), y = compare(fc, "<=", e->args[0], &hi);
      r = (mm){x.t && y.t, x.f || y.f};
    }
    free(s1);
    free(s2);
    return r;
  }
  return UNKNOWN;
}

/* ---- public ---- */

int ex_skipper_new(ex_skipper **out, const ex_node *pred, const dl_snapshot *snap) {
  if (!pred->bound) return dd_err_set(DD_EINVAL, "data skipping needs a bound predicate");
  ex_skipper *sk = calloc(1, sizeof *sk);
  if (!sk) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = arw_schema_new(&sk->empty);
  if (rc) {
    free(sk);
    return rc;
  }
  sk->pred = pred;
  sk->snap = snap;
  *out = sk;
  return 0;
}

void ex_skipper_free(ex_skipper *sk) {
  if (!sk) return;
  arw_schema_free(sk->empty);
  free(sk);
}

bool ex_skipper_keep(void *ctx, const dl_file *f) {
  ex_skipper *sk = ctx;
  file_ctx fc = {.sk = sk, .f = f};
  mm r = walk(&fc, sk->pred);
  dl_stats_free(fc.st);
  sk->considered++;
  if (!r.t) sk->skipped++;
  return r.t;
}

void ex_skipper_counts(const ex_skipper *sk, int64_t *considered, int64_t *skipped) {
  *considered = sk->considered;
  *skipped = sk->skipped;
}

static int first_non_partition(const ex_node *e, const dl_metadata *md, const char **bad) {
  if (e->kind == EX_COLUMN && !is_partition(md, e->parts[0])) {
    *bad = e->parts[0];
    return 1;
  }
  for (size_t i = 0; i < e->nargs; i++)
    if (first_non_partition(e->args[i], md, bad)) return 1;
  return 0;
}

int ex_check_partition_only(const ex_node *pred, const dl_snapshot *snap) {
  const dl_metadata *md = dl_snapshot_metadata(snap);
  const char *bad = NULL;
  if (!md || !first_non_partition(pred, md, &bad)) return 0;
  char list[512] = "";
  size_t at = 0;
  for (size_t i = 0; i < md->num_partition_columns && at < sizeof list - 4; i++)
    at += (size_t)snprintf(list + at, sizeof list - at, "%s%s", i ? ", " : "", md->partition_columns[i]);
  return dd_err_set(DD_EINVAL, "Predicate references non-partition column '%s'. Only the "
                    "partition columns may be referenced: [%s]", bad, list);
}
