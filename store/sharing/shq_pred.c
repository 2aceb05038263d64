/* shq_pred.c: the predicate tree of jsonPredicateHints (PROTOCOL.md "JSON predicates for
 * Filtering"): parsing with validation (a malformed tree is the client's error, reported
 * with a message naming the op, field or value at fault), binding to a table's columns,
 * and the "may match" evaluation over partition values and file statistics described in
 * shq_internal.h. The SQL predicateHints subset compiles to the same tree (shq_sql.c). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

#define PRED_MAX_DEPTH 64
#define PRED_MAX_NODES 4096

/* ======================= parsing ======================= */

static const struct { const char *name; shq_op op; } OPS[] = {
    {"column", SHQ_OP_COLUMN},   {"literal", SHQ_OP_LITERAL},  {"isNull", SHQ_OP_ISNULL},
    {"equal", SHQ_OP_EQ},        {"lessThan", SHQ_OP_LT},      {"lessThanOrEqual", SHQ_OP_LE},
    {"greaterThan", SHQ_OP_GT},  {"greaterThanOrEqual", SHQ_OP_GE},
    {"and", SHQ_OP_AND},         {"or", SHQ_OP_OR},            {"not", SHQ_OP_NOT},
};
static const char *const VTYPES[] = {"bool", "int", "long", "string", "date", "float",
                                     "double", "timestamp"};

void shq__pred_free(shq_pred *p) {
  if (!p) return;
  for (size_t i = 0; i < p->nkids; i++) shq__pred_free(p->kids[i]);
  free(p->kids);
  free(p->name);
  free(p->stats_path);
  free(p);
}

static int perr(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int perr(const char *fmt, ...) {
  char what[320];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  return dd_err_set(DD_EINVAL, "invalid jsonPredicateHints: %s", what);
}

/* At most 64 bytes of s for a message, never cutting a UTF-8 sequence (the message goes
 * into a JSON error body). */
static const char *clip(const char *s, char buf[68]) {
  size_t n = strlen(s);
  if (n > 64) {
    n = 64;
    while (n && ((unsigned char)s[n] & 0xC0) == 0x80) n--;
  }
  memcpy(buf, s, n);
  strcpy(buf + n, n < strlen(s) ? "..." : "");
  return buf;
}

/* Parses a literal's text for its value type; the text stays owned by the node. */
static int parse_value(shq_val *v, shq_vtype vt, const char *s, size_t n) {
  char *end = NULL;
  *v = (shq_val){.s = s, .n = n};
  switch (vt) {
  case SHQ_VT_BOOL:
    if (n == 4 && !strncasecmp(s, "true", 4)) v->i = 1;
    else if (n == 5 && !strncasecmp(s, "false", 5)) v->i = 0;
    else return -1;
    return 0;
  case SHQ_VT_INT:
  case SHQ_VT_LONG: {
    if (!n || n > 20 || memchr(s, 0, n)) return -1;
    char tmp[24];
    memcpy(tmp, s, n);
    tmp[n] = 0;
    long long x = strtoll(tmp, &end, 10);
    if (*end || (vt == SHQ_VT_INT && (x < INT32_MIN || x > INT32_MAX))) return -1;
    if (x == LLONG_MAX || x == LLONG_MIN) return -1;
    v->i = x;
    return 0;
  }
  case SHQ_VT_FLOAT:
  case SHQ_VT_DOUBLE: {
    if (!n || n > 64 || memchr(s, 0, n)) return -1;
    char tmp[72];
    memcpy(tmp, s, n);
    tmp[n] = 0;
    v->d = vt == SHQ_VT_FLOAT ? (double)strtof(tmp, &end) : strtod(tmp, &end);
    return *end || isnan(v->d) ? -1 : 0;
  }
  case SHQ_VT_DATE: return shq__parse_date(s, n, &v->i);
  case SHQ_VT_TIMESTAMP: return shq__parse_ts_us(s, n, &v->i);
  case SHQ_VT_STRING: return 0;
  }
  return -1;
}

static int parse_vtype(const json_t *o, const char *op, shq_vtype *out) {
  const json_t *j = json_object_get(o, "valueType");
  const char *t = json_string_value(j);
  if (!t) return perr("%s op needs a string valueType", op);
  for (size_t i = 0; i < sizeof VTYPES / sizeof *VTYPES; i++)
    if (!strcmp(t, VTYPES[i])) {
      *out = (shq_vtype)i;
      return 0;
    }
  char c[68];
  return perr("unsupported valueType '%s' (bool, int, long, string, date, float, double, "
              "timestamp)", clip(t, c));
}

static bool is_leaf(const shq_pred *p) {
  return p->op == SHQ_OP_COLUMN || p->op == SHQ_OP_LITERAL;
}

/* Arity and child-kind rules of PROTOCOL.md's op table. */
static int check_arity(const shq_pred *p, const char *op) {
  switch (p->op) {
  case SHQ_OP_COLUMN:
  case SHQ_OP_LITERAL: return p->nkids ? perr("%s op cannot have children", op) : 0;
  case SHQ_OP_ISNULL:
    return p->nkids == 1 && p->kids[0]->op == SHQ_OP_COLUMN
               ? 0 : perr("isNull needs exactly one child, a column op");
  case SHQ_OP_NOT: return p->nkids == 1 ? 0 : perr("not needs exactly one child, got %zu", p->nkids);
  case SHQ_OP_AND:
  case SHQ_OP_OR:
    return p->nkids >= 2 ? 0 : perr("%s needs at least two children, got %zu", op, p->nkids);
  default:
    if (p->nkids != 2) return perr("%s needs exactly two children, got %zu", op, p->nkids);
    if (!is_leaf(p->kids[0]) || !is_leaf(p->kids[1]))
      return perr("%s compares two leaf ops (column or literal)", op);
    return 0;
  }
}

static int parse_leaf(shq_pred *p, const json_t *o, const char *op) {
  int rc = parse_vtype(o, op, &p->vt);
  if (rc) return rc;
  const char *field = p->op == SHQ_OP_COLUMN ? "name" : "value";
  const json_t *v = json_object_get(o, field);
  if (!json_is_string(v)) return perr("%s op needs a string '%s'", op, field);
  size_t n = json_string_length(v);
  if (!(p->name = malloc(n + 1))) return dd_err_set(DD_ENOMEM, "out of memory");
  memcpy(p->name, json_string_value(v), n + 1);
  if (p->op == SHQ_OP_COLUMN) return n ? 0 : perr("empty column name");
  char c[68];
  if (parse_value(&p->lit, p->vt, p->name, n))
    return perr("literal value '%s' is not a valid %s", clip(p->name, c), VTYPES[p->vt]);
  return 0;
}

/* The op of a node; DD_EINVAL naming an op that is not in the protocol. */
static int parse_op(shq_pred *p, const json_t *o, const char **out_name) {
  const json_t *j = json_object_get(o, "op");
  const char *op = json_string_value(j);
  if (!j) return perr("a node has no 'op'");
  if (!op) return perr("'op' must be a string");
  for (size_t i = 0; i < sizeof OPS / sizeof *OPS; i++)
    if (!strcmp(op, OPS[i].name)) {
      p->op = OPS[i].op;
      *out_name = OPS[i].name;
      return 0;
    }
  char c[68];
  return perr("unknown op '%s' (column, literal, isNull, equal, lessThan, lessThanOrEqual, "
              "greaterThan, greaterThanOrEqual, and, or, not)", clip(op, c));
}

static int parse_kids(shq_pred *p, const json_t *o, const char *op, int depth, size_t *nodes);

static int parse_node(shq_pred **out, const json_t *o, int depth, size_t *nodes) {
  if (depth > PRED_MAX_DEPTH) return perr("tree too deep (more than %d levels)", PRED_MAX_DEPTH);
  if (++*nodes > PRED_MAX_NODES) return perr("tree too large (more than %d ops)", PRED_MAX_NODES);
  if (!json_is_object(o)) return perr("each op must be a JSON object");
  shq_pred *p = calloc(1, sizeof *p);
  if (!p) return dd_err_set(DD_ENOMEM, "out of memory");
  const char *op = NULL;
  int rc = parse_op(p, o, &op);
  if (!rc && is_leaf(p)) rc = parse_leaf(p, o, op);
  if (!rc) rc = parse_kids(p, o, op, depth, nodes);
  if (!rc) rc = check_arity(p, op);
  if (rc) {
    shq__pred_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

static int parse_kids(shq_pred *p, const json_t *o, const char *op, int depth, size_t *nodes) {
  const json_t *kids = json_object_get(o, "children");
  if (kids && !json_is_array(kids)) return perr("'children' of %s must be an array", op);
  size_t n = json_array_size(kids);
  if (n && !(p->kids = calloc(n, sizeof *p->kids))) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++, p->nkids++) {
    int rc = parse_node(&p->kids[i], json_array_get(kids, i), depth + 1, nodes);
    if (rc) return rc;
  }
  return 0;
}

int shq__pred_parse_json(shq_pred **out, const char *json, size_t len) {
  *out = NULL;
  json_error_t jerr;
  json_t *root = json_loadb(json, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
  if (!root) return dd_err_set(DD_EINVAL, "invalid jsonPredicateHints: not JSON: %s", jerr.text);
  size_t nodes = 0;
  int rc = parse_node(out, root, 0, &nodes);
  json_decref(root);
  return rc;
}

shq_pred *shq__pred_and(shq_pred **kids, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    if (kids[i]) kids[k++] = kids[i];
  if (k == 0) return NULL;
  if (k == 1) return kids[0];
  shq_pred *p = calloc(1, sizeof *p);
  shq_pred **arr = calloc(k, sizeof *arr);
  if (!p || !arr) {
    free(p);
    free(arr);
    for (size_t i = 0; i < k; i++) shq__pred_free(kids[i]);
    return NULL;
  }
  memcpy(arr, kids, k * sizeof *arr);
  p->op = SHQ_OP_AND;
  p->kids = arr;
  p->nkids = k;
  return p;
}

/* ======================= binding ======================= */

int shq__pred_bind(shq_pred *p, const dl_metadata *md, const dl_schema *schema) {
  for (size_t i = 0; i < p->nkids; i++) {
    int rc = shq__pred_bind(p->kids[i], md, schema);
    if (rc) return rc;
  }
  if (p->op != SHQ_OP_COLUMN) return 0;
  const dl_field *f = schema ? dl_schema_field(schema, p->name) : NULL;
  const char *phys = f && f->physical_name ? f->physical_name : (f ? f->name : p->name);
  p->part_key = NULL;
  free(p->stats_path);
  p->stats_path = NULL;
  for (size_t i = 0; i < md->num_partition_columns; i++)
    if (!strcasecmp(md->partition_columns[i], p->name)) p->part_key = phys;
  if (!p->part_key && !(p->stats_path = strdup(phys)))
    return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

bool shq__pred_needs_stats(const shq_pred *p) {
  if (p->op == SHQ_OP_COLUMN) return p->stats_path != NULL;
  for (size_t i = 0; i < p->nkids; i++)
    if (shq__pred_needs_stats(p->kids[i])) return true;
  return false;
}

/* ======================= evaluation ======================= */

typedef struct tv {
  bool t, f; /* may be true for some row / may be false for some row */
} tv;
static const tv TV_UNKNOWN = {true, true};

/* Decoded stats strings (those with escapes) stay alive until the file is judged. */
#define ECTX_MAX_DECODED 8

typedef struct ectx {
  const char *pv;
  const char *stats_text;
  json_t *decoded[ECTX_MAX_DECODED];
  size_t ndecoded;
} ectx;

/* What a column can hold in this file, in one value type. */
typedef struct range {
  bool may_null, may_nonnull;
  bool lo_ok, hi_ok;
  shq_val lo, hi;
} range;

static int cmp_val(const shq_val *a, const shq_val *b, shq_vtype vt) {
  switch (vt) {
  case SHQ_VT_FLOAT:
  case SHQ_VT_DOUBLE: return (a->d > b->d) - (a->d < b->d);
  case SHQ_VT_STRING: {
    size_t n = a->n < b->n ? a->n : b->n;
    int c = memcmp(a->s, b->s, n);
    if (c) return c < 0 ? -1 : 1;
    return (a->n > b->n) - (a->n < b->n);
  }
  default: return (a->i > b->i) - (a->i < b->i);
  }
}

/* A numeric token: integer into *i (false on overflow), or any number into *d. */
static bool tok_int(const shq_tok *t, int64_t *i) {
  char buf[32];
  if (t->kind != SHQ_TOK_INT || t->n >= sizeof buf) return false;
  memcpy(buf, t->p, t->n);
  buf[t->n] = 0;
  errno = 0;
  long long x = strtoll(buf, NULL, 10);
  if (errno) return false;
  *i = x;
  return true;
}

static bool tok_num(const shq_tok *t, double *d) {
  char buf[400];
  if ((t->kind != SHQ_TOK_INT && t->kind != SHQ_TOK_REAL) || t->n >= sizeof buf) return false;
  memcpy(buf, t->p, t->n);
  buf[t->n] = 0;
  *d = strtod(buf, NULL);
  return true;
}

/* A string token's bytes; escaped ones are decoded and kept in e until the file is judged. */
static bool tok_str(ectx *e, const shq_tok *t, const char **s, size_t *n) {
  if (t->kind == SHQ_TOK_STRING) {
    *s = t->p;
    *n = t->n;
    return true;
  }
  if (t->kind != SHQ_TOK_ESCSTRING || e->ndecoded == ECTX_MAX_DECODED) return false;
  json_t *j = json_loadb(t->p - 1, t->n + 2, JSON_DECODE_ANY, NULL);
  if (!json_is_string(j)) {
    json_decref(j);
    return false;
  }
  e->decoded[e->ndecoded++] = j;
  *s = json_string_value(j);
  *n = json_string_length(j);
  return true;
}

/* A stats min/max value as vt; false when it does not convert. */
static bool stat_val(ectx *e, const shq_tok *t, shq_vtype vt, bool is_max, shq_val *out) {
  *out = (shq_val){0};
  if (vt == SHQ_VT_FLOAT || vt == SHQ_VT_DOUBLE) return tok_num(t, &out->d) && !isnan(out->d);
  if (vt == SHQ_VT_INT || vt == SHQ_VT_LONG) {
    if (tok_int(t, &out->i)) return true;
    double d;
    if (t->kind != SHQ_TOK_REAL || !tok_num(t, &d)) return false;
    d = is_max ? ceil(d) : floor(d);
    if (!(d >= -9.2e18 && d <= 9.2e18)) return false; /* NaN, inf or beyond int64 */
    out->i = (int64_t)d;
    return true;
  }
  if (vt == SHQ_VT_BOOL) {
    if (t->kind != SHQ_TOK_TRUE && t->kind != SHQ_TOK_FALSE) return false;
    out->i = t->kind == SHQ_TOK_TRUE;
    return true;
  }
  if (!tok_str(e, t, &out->s, &out->n)) return false;
  if (vt == SHQ_VT_STRING) return !(is_max && out->n >= 32); /* a long max may be truncated */
  if (vt == SHQ_VT_DATE) return !shq__parse_date(out->s, out->n, &out->i);
  if (shq__parse_ts_us(out->s, out->n, &out->i)) return false;
  if (is_max) out->i += 999; /* stats keep milliseconds */
  return true;
}

static bool stats_range(ectx *e, const shq_pred *col, shq_vtype vt, range *r) {
  shq_col_stats cs;
  if (!e->stats_text || !shq__stats_lookup(e->stats_text, col->stats_path, &cs)) return false;
  bool tight = cs.tight_bounds.kind != SHQ_TOK_FALSE;
  int64_t nrec = -1, nnull = -1;
  if (!tok_int(&cs.num_records, &nrec)) nrec = -1;
  if (!tok_int(&cs.null_count, &nnull)) nnull = -1;
  r->may_null = !tight || nnull != 0;
  r->may_nonnull = !tight || nrec < 0 || nnull < 0 || nnull < nrec;
  r->lo_ok = cs.min.kind && stat_val(e, &cs.min, vt, false, &r->lo);
  r->hi_ok = cs.max.kind && stat_val(e, &cs.max, vt, true, &r->hi);
  return true;
}

static bool column_range(ectx *e, const shq_pred *col, shq_vtype vt, range *r) {
  *r = (range){0};
  if (col->part_key) {
    const char *v = NULL;
    if (!dl_kv_get(e->pv, col->part_key, &v) || !v || !*v) {
      r->may_null = true;
      return true;
    }
    if (parse_value(&r->lo, vt, v, strlen(v))) return false;
    r->hi = r->lo;
    r->may_nonnull = r->lo_ok = r->hi_ok = true;
    return true;
  }
  return col->stats_path && stats_range(e, col, vt, r);
}

static shq_op flip(shq_op op) {
  switch (op) {
  case SHQ_OP_LT: return SHQ_OP_GT;
  case SHQ_OP_LE: return SHQ_OP_GE;
  case SHQ_OP_GT: return SHQ_OP_LT;
  case SHQ_OP_GE: return SHQ_OP_LE;
  default: return op;
  }
}

static bool lit_cmp(shq_op op, int c) {
  switch (op) {
  case SHQ_OP_EQ: return c == 0;
  case SHQ_OP_LT: return c < 0;
  case SHQ_OP_LE: return c <= 0;
  case SHQ_OP_GT: return c > 0;
  default: return c >= 0;
  }
}

/* col <op> lit over the range r. */
static tv range_cmp(shq_op op, const range *r, const shq_val *lit, shq_vtype vt) {
  bool nn = r->may_nonnull;
  int lo = r->lo_ok ? cmp_val(&r->lo, lit, vt) : 0, hi = r->hi_ok ? cmp_val(&r->hi, lit, vt) : 0;
  bool L = r->lo_ok, H = r->hi_ok;
  tv o;
  switch (op) {
  case SHQ_OP_EQ:
    o.t = nn && (!L || lo <= 0) && (!H || hi >= 0);
    o.f = nn && !(L && H && lo == 0 && hi == 0);
    break;
  case SHQ_OP_LT: o.t = nn && (!L || lo < 0); o.f = nn && (!H || hi >= 0); break;
  case SHQ_OP_LE: o.t = nn && (!L || lo <= 0); o.f = nn && (!H || hi > 0); break;
  case SHQ_OP_GT: o.t = nn && (!H || hi > 0); o.f = nn && (!L || lo <= 0); break;
  default: o.t = nn && (!H || hi >= 0); o.f = nn && (!L || lo < 0); break;
  }
  return o;
}

static tv eval_cmp(const shq_pred *p, ectx *e) {
  const shq_pred *a = p->kids[0], *b = p->kids[1];
  shq_op op = p->op;
  if (a->op == SHQ_OP_LITERAL && b->op == SHQ_OP_LITERAL) {
    if (a->vt != b->vt) return TV_UNKNOWN;
    bool r = lit_cmp(op, cmp_val(&a->lit, &b->lit, a->vt));
    return (tv){r, !r};
  }
  if (a->op == SHQ_OP_LITERAL) {
    const shq_pred *t = a;
    a = b;
    b = t;
    op = flip(op);
  }
  if (b->op != SHQ_OP_LITERAL) return TV_UNKNOWN;
  range r;
  if (!column_range(e, a, b->vt, &r)) return TV_UNKNOWN;
  return range_cmp(op, &r, &b->lit, b->vt);
}

static tv eval(const shq_pred *p, ectx *e) {
  switch (p->op) {
  case SHQ_OP_AND: {
    tv o = {true, false};
    for (size_t i = 0; i < p->nkids; i++) {
      tv k = eval(p->kids[i], e);
      o.t = o.t && k.t;
      o.f = o.f || k.f;
    }
    return o;
  }
  case SHQ_OP_OR: {
    tv o = {false, true};
    for (size_t i = 0; i < p->nkids; i++) {
      tv k = eval(p->kids[i], e);
      o.t = o.t || k.t;
      o.f = o.f && k.f;
    }
    return o;
  }
  case SHQ_OP_NOT: {
    tv k = eval(p->kids[0], e);
    return (tv){k.f, k.t};
  }
  case SHQ_OP_ISNULL: {
    range r;
    if (!column_range(e, p->kids[0], p->kids[0]->vt, &r)) {
      /* A value that does not parse as the column's type is still not null. */
      if (p->kids[0]->part_key) return (tv){false, true};
      return TV_UNKNOWN;
    }
    return (tv){r.may_null, r.may_nonnull};
  }
  case SHQ_OP_COLUMN:
  case SHQ_OP_LITERAL: return TV_UNKNOWN;
  default: return eval_cmp(p, e);
  }
}

bool shq__pred_keep(const shq_pred *p, const char *partition_values, const char *stats) {
  if (!p) return true;
  ectx e = {.pv = partition_values, .stats_text = stats};
  tv r = eval(p, &e);
  for (size_t i = 0; i < e.ndecoded; i++) json_decref(e.decoded[i]);
  return r.t;
}
