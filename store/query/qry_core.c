/* qry_core.c: the operator frame (qry_int.h) and the streaming operators: local relation,
 * range, filter, project, limit, offset, rename. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/query/qry_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

/* ======================= the frame ======================= */

void *qry__new(size_t size, qry_op *in, int (*next)(qry_op *, const arw_batch **),
               void (*drop)(qry_op *), const char *label_fmt, ...) {
  qry_op *op = calloc(1, size);
  if (!op) {
    qry_free(in);
    return NULL;
  }
  op->in = in;
  op->next = next;
  op->drop = drop;
  va_list ap;
  va_start(ap, label_fmt);
  if (vasprintf(&op->label, label_fmt, ap) < 0) op->label = NULL;
  va_end(ap);
  if (in) op->schema = in->schema;
  return op;
}

const arw_batch *qry__keep(qry_op *op, arw_batch *b) {
  arw_batch_free(op->cur);
  op->cur = b;
  return b;
}

char *qry__expr_text(const ex_node *e) {
  char *s = NULL;
  if (!e || ex_name(&s, e)) dd_err_clear(), s = strdup("?");
  return s;
}

int qry__bind(ex_node **out, const ex_node *e, const arw_schema *s) {
  ex_bind_opts o = EX_BIND_OPTS_INIT;
  return ex_bind(out, e, s, &o);
}

const arw_schema *qry_schema(const qry_op *op) { return op->schema; }
const char *qry_label(const qry_op *op) { return op->label ? op->label : "?"; }
const qry_op *qry_input(const qry_op *op) { return op->in; }

int qry_next(qry_op *op, const arw_batch **out) {
  *out = NULL;
  int rc = op->check ? op->check(op->check_ctx) : 0;
  return rc ? rc : op->next(op, out);
}

void qry_set_check(qry_op *op, qry_check_fn fn, void *ctx) {
  for (; op; op = op->in) op->check = fn, op->check_ctx = ctx;
}

void qry_free(qry_op *op) {
  if (!op) return;
  arw_batch_free(op->cur);
  if (op->drop) op->drop(op);
  arw_schema_free(op->own_schema);
  qry_free(op->in);
  free(op->label);
  free(op);
}

/* ======================= local relation ======================= */

typedef struct local_op {
  qry_op op;
  arw_batch **batches;
  size_t n, pos;
} local_op;

static int local_next(qry_op *op, const arw_batch **out) {
  local_op *l = (local_op *)op;
  while (l->pos < l->n && arw_batch_rows(l->batches[l->pos]) == 0) l->pos++;
  if (l->pos < l->n) *out = l->batches[l->pos++];
  return 0;
}

static void local_drop(qry_op *op) {
  local_op *l = (local_op *)op;
  for (size_t i = 0; i < l->n; i++) arw_batch_free(l->batches[i]);
  free(l->batches);
}

int qry_local(qry_op **out, arw_schema *schema, arw_batch **batches, size_t n) {
  *out = NULL;
  local_op *l = qry__new(sizeof *l, NULL, local_next, local_drop, "LocalRelation [%zu columns]",
                         arw_schema_ncolumns(schema));
  arw_batch **copy = l ? malloc((n ? n : 1) * sizeof *copy) : NULL;
  if (!l || !copy) {
    for (size_t i = 0; i < n; i++) arw_batch_free(batches[i]);
    arw_schema_free(schema);
    free(copy);
    if (l) qry_free(&l->op);
    return OOM();
  }
  if (n) memcpy(copy, batches, n * sizeof *copy);
  l->batches = copy, l->n = n;
  l->op.schema = l->op.own_schema = schema;
  *out = &l->op;
  return 0;
}

/* ======================= range ======================= */

typedef struct range_op {
  qry_op op;
  int64_t next_v, end, step;
  size_t batch_rows;
  bool done;
  int64_t *vals;
} range_op;

static int range_next(qry_op *op, const arw_batch **out) {
  range_op *r = (range_op *)op;
  size_t n = 0;
  while (!r->done && n < r->batch_rows && (r->step > 0 ? r->next_v < r->end : r->next_v > r->end)) {
    r->vals[n++] = r->next_v;
    if (__builtin_add_overflow(r->next_v, r->step, &r->next_v)) r->done = true;
  }
  if (!n) return 0;
  arw_batch *b = NULL;
  int rc = arw_batch_new(&b, op->schema);
  if (!rc) rc = arw_append_fixed(b, arw_schema_column(op->schema, 0), r->vals, n, NULL);
  if (rc) return arw_batch_free(b), rc;
  *out = qry__keep(op, b);
  return 0;
}

static void range_drop(qry_op *op) { free(((range_op *)op)->vals); }

int qry_range(qry_op **out, int64_t start, int64_t end, int64_t step, size_t batch_rows) {
  *out = NULL;
  if (step == 0) return dd_err_set(DD_EINVAL, "range: step must not be 0");
  range_op *r = qry__new(sizeof *r, NULL, range_next, range_drop,
                         "Range (%lld, %lld, step=%lld)", (long long)start, (long long)end, (long long)step);
  if (!r) return OOM();
  r->next_v = start, r->end = end, r->step = step;
  r->batch_rows = batch_rows ? batch_rows : QRY_BATCH_ROWS;
  r->vals = malloc(r->batch_rows * sizeof *r->vals);
  int rc = r->vals ? arw_schema_new(&r->op.own_schema) : OOM();
  if (!rc) rc = arw_schema_add(r->op.own_schema, ARW_ROOT, "id", ARW_INT64, false, NULL);
  r->op.schema = r->op.own_schema;
  if (rc) return qry_free(&r->op), rc;
  *out = &r->op;
  return 0;
}

/* ======================= filter ======================= */

typedef struct filter_op {
  qry_op op;
  ex_node *pred;
  uint8_t *mask;
  size_t *idx;
  size_t cap;
} filter_op;

static int filter_next(qry_op *op, const arw_batch **out) {
  filter_op *f = (filter_op *)op;
  for (;;) {
    const arw_batch *b;
    int rc = qry_next(op->in, &b);
    if (rc || !b) return rc;
    size_t n = arw_batch_rows(b), kept = 0;
    if (n > f->cap) {
      free(f->mask), free(f->idx);
      f->mask = malloc(n), f->idx = malloc(n * sizeof *f->idx), f->cap = n;
      if (!f->mask || !f->idx) return f->cap = 0, OOM();
    }
    if ((rc = ex_eval_mask(f->pred, b, f->mask, &kept))) return rc;
    if (kept == n) return *out = b, 0;
    if (!kept) continue;
    for (size_t i = 0, k = 0; i < n; i++)
      if (f->mask[i]) f->idx[k++] = i;
    arw_batch *t = NULL;
    if ((rc = arw_batch_take(&t, b, f->idx, kept))) return rc;
    *out = qry__keep(op, t);
    return 0;
  }
}

static void filter_drop(qry_op *op) {
  filter_op *f = (filter_op *)op;
  ex_free(f->pred);
  free(f->mask);
  free(f->idx);
}

int qry_filter(qry_op **out, qry_op *in, const ex_node *pred) {
  *out = NULL;
  char *text = qry__expr_text(pred);
  filter_op *f = qry__new(sizeof *f, in, filter_next, filter_drop, "Filter %s", text ? text : "?");
  free(text);
  if (!f) return OOM();
  int rc = qry__bind(&f->pred, pred, in->schema);
  if (!rc && ex_result_type(f->pred).id != EX_T_BOOLEAN && ex_result_type(f->pred).id != EX_T_NULL)
    rc = dd_err_set(DD_EINVAL, "[DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN] filter expression '%s' is not a boolean",
                    qry_label(&f->op) + 7);
  if (rc) return qry_free(&f->op), rc;
  *out = &f->op;
  return 0;
}

/* ======================= project ======================= */

typedef struct project_op {
  qry_op op;
  ex_node **bound;
  int *fields;
  size_t n;
} project_op;

static int project_next(qry_op *op, const arw_batch **out) {
  project_op *p = (project_op *)op;
  const arw_batch *b;
  int rc = qry_next(op->in, &b);
  if (rc || !b) return rc;
  arw_batch *o = NULL;
  rc = arw_batch_new(&o, op->schema);
  for (size_t i = 0; !rc && i < p->n; i++) rc = ex_eval(p->bound[i], b, o, p->fields[i]);
  if (rc) return arw_batch_free(o), rc;
  *out = qry__keep(op, o);
  return 0;
}

static void project_drop(qry_op *op) {
  project_op *p = (project_op *)op;
  for (size_t i = 0; i < p->n; i++) ex_free(p->bound[i]);
  free(p->bound);
  free(p->fields);
}

/* Adds output column `name` computed by bound (taken). */
static int project_add(project_op *p, const char *name, ex_node *bound) {
  int id;
  int rc = ex_add_field(p->op.own_schema, ARW_ROOT, name, bound, &id);
  if (rc) return ex_free(bound), rc;
  p->bound[p->n] = bound;
  p->fields[p->n++] = id;
  return 0;
}

/* The input column i as a bound column reference. */
static int column_ref(ex_node **out, const arw_schema *s, int i) {
  const char *name = arw_field_name(s, arw_schema_column(s, i));
  ex_node *c = NULL;
  int rc = ex_new_column(&c, &name, 1);
  if (!rc) rc = qry__bind(out, c, s);
  ex_free(c);
  return rc;
}

static int project_item(project_op *p, const ex_node *e, const arw_schema *in) {
  size_t ncols = arw_schema_ncolumns(in);
  if (ex_node_kind(e) == EX_STAR) { /* `*` or `t.*`: every input column (one relation) */
    int rc = 0;
    for (size_t i = 0; !rc && i < ncols; i++) {
      ex_node *b = NULL;
      if (!(rc = column_ref(&b, in, (int)i))) rc = project_add(p, arw_field_name(in, arw_schema_column(in, (int)i)), b);
    }
    return rc;
  }
  char *name = NULL;
  ex_node *b = NULL;
  int rc = ex_name(&name, e);
  if (!rc) rc = qry__bind(&b, e, in);
  if (!rc) rc = project_add(p, name, b);
  else ex_free(b);
  free(name);
  return rc;
}

int qry_project(qry_op **out, qry_op *in, ex_node *const *exprs, size_t n, bool keep_input) {
  *out = NULL;
  project_op *p = qry__new(sizeof *p, in, project_next, project_drop, keep_input ? "WithColumns" : "Project");
  if (!p) return OOM();
  size_t ncols = arw_schema_ncolumns(in->schema), cap = n + ncols + 1;
  for (size_t i = 0; i < n; i++)
    if (ex_node_kind(exprs[i]) == EX_STAR) cap += ncols;
  p->bound = calloc(cap, sizeof *p->bound);
  p->fields = calloc(cap, sizeof *p->fields);
  int rc = p->bound && p->fields ? arw_schema_new(&p->op.own_schema) : OOM();
  p->op.schema = p->op.own_schema;
  char **names = calloc(n + 1, sizeof *names);
  if (!rc && !names) rc = OOM();
  for (size_t i = 0; !rc && i < n; i++) rc = ex_name(&names[i], exprs[i]);
  /* withColumns: the input columns, each replaced by the expression of its name */
  bool *used = calloc(n + 1, sizeof *used);
  if (!rc && !used) rc = OOM();
  for (size_t c = 0; !rc && keep_input && c < ncols; c++) {
    const char *cn = arw_field_name(in->schema, arw_schema_column(in->schema, (int)c));
    size_t j = n;
    for (size_t k = 0; k < n; k++)
      if (!strcasecmp(names[k], cn)) j = k; /* the last one wins, as in Spark */
    ex_node *b = NULL;
    if (j < n) used[j] = true;
    for (size_t k = 0; k < n; k++)
      if (!strcasecmp(names[k], cn)) used[k] = true;
    rc = j < n ? qry__bind(&b, exprs[j], in->schema) : column_ref(&b, in->schema, (int)c);
    if (!rc) rc = project_add(p, cn, b);
  }
  for (size_t i = 0; !rc && i < n; i++) {
    if (used[i]) continue;
    rc = keep_input ? 0 : project_item(p, exprs[i], in->schema);
    if (keep_input && !rc) {
      ex_node *b = NULL;
      if (!(rc = qry__bind(&b, exprs[i], in->schema))) rc = project_add(p, names[i], b);
    }
  }
  for (size_t i = 0; names && i < n; i++) free(names[i]);
  free(names);
  free(used);
  if (rc) return qry_free(&p->op), rc;
  *out = &p->op;
  return 0;
}

/* ======================= limit and offset ======================= */

typedef struct count_op {
  qry_op op;
  int64_t left; /* limit: rows still to return; offset: rows still to skip */
} count_op;

static int limit_next(qry_op *op, const arw_batch **out) {
  count_op *c = (count_op *)op;
  if (c->left <= 0) return 0;
  const arw_batch *b;
  int rc = qry_next(op->in, &b);
  if (rc || !b) return rc;
  size_t n = arw_batch_rows(b);
  if ((int64_t)n <= c->left) return c->left -= (int64_t)n, *out = b, 0;
  arw_batch *s = NULL;
  if ((rc = arw_batch_slice(&s, b, 0, (size_t)c->left))) return rc;
  c->left = 0;
  *out = qry__keep(op, s);
  return 0;
}

static int offset_next(qry_op *op, const arw_batch **out) {
  count_op *c = (count_op *)op;
  for (;;) {
    const arw_batch *b;
    int rc = qry_next(op->in, &b);
    if (rc || !b) return rc;
    size_t n = arw_batch_rows(b);
    if (c->left <= 0) return *out = b, 0;
    if ((int64_t)n <= c->left) {
      c->left -= (int64_t)n;
      continue;
    }
    arw_batch *s = NULL;
    if ((rc = arw_batch_slice(&s, b, (size_t)c->left, n))) return rc;
    c->left = 0;
    *out = qry__keep(op, s);
    return 0;
  }
}

static int count_new(qry_op **out, qry_op *in, int64_t n, bool limit) {
  *out = NULL;
  if (n < 0) {
    qry_free(in);
    return dd_err_set(DD_EINVAL, "[INVALID_%s_LIKE_EXPRESSION.IS_NEGATIVE] The %s expression must be "
                      "equal to or greater than 0, but got %lld", limit ? "LIMIT" : "OFFSET",
                      limit ? "limit" : "offset", (long long)n);
  }
  count_op *c = qry__new(sizeof *c, in, limit ? limit_next : offset_next, NULL, "%s %lld",
                         limit ? "GlobalLimit" : "Offset", (long long)n);
  if (!c) return OOM();
  c->left = n;
  *out = &c->op;
  return 0;
}

int qry_limit(qry_op **out, qry_op *in, int64_t limit) { return count_new(out, in, limit, true); }
int qry_offset(qry_op **out, qry_op *in, int64_t offset) { return count_new(out, in, offset, false); }

/* ======================= rename ======================= */

typedef struct rename_op {
  qry_op op;
  size_t *idx;
  size_t cap;
} rename_op;

static int rename_next(qry_op *op, const arw_batch **out) {
  rename_op *r = (rename_op *)op;
  const arw_batch *b;
  int rc = qry_next(op->in, &b);
  if (rc || !b) return rc;
  size_t n = arw_batch_rows(b);
  if (n > r->cap) {
    free(r->idx);
    if (!(r->idx = malloc(n * sizeof *r->idx))) return r->cap = 0, OOM();
    r->cap = n;
  }
  for (size_t i = 0; i < n; i++) r->idx[i] = i;
  arw_batch *o = NULL;
  rc = arw_batch_new(&o, op->schema);
  if (!rc) rc = arw_batch_append_rows(o, b, r->idx, n);
  if (rc) return arw_batch_free(o), rc;
  *out = qry__keep(op, o);
  return 0;
}

static void rename_drop(qry_op *op) { free(((rename_op *)op)->idx); }

int qry_rename(qry_op **out, qry_op *in, const char *const *from, const char *const *to, size_t n) {
  *out = NULL;
  size_t ncols = arw_schema_ncolumns(in->schema);
  if (!from && n != ncols) {
    qry_free(in);
    return dd_err_set(DD_EINVAL, "[INVALID_COLUMN_NAMES] toDF: %zu names for %zu columns", n, ncols);
  }
  rename_op *r = qry__new(sizeof *r, in, rename_next, rename_drop, from ? "WithColumnsRenamed" : "ToDF");
  if (!r) return OOM();
  int rc = arw_schema_new(&r->op.own_schema);
  r->op.schema = r->op.own_schema;
  for (size_t c = 0; !rc && c < ncols; c++) {
    int id = arw_schema_column(in->schema, (int)c);
    const char *name = arw_field_name(in->schema, id);
    if (!from) name = to[c];
    for (size_t k = 0; from && k < n; k++)
      if (!strcasecmp(from[k], arw_field_name(in->schema, id))) name = to[k];
    rc = arw_schema_copy_field(r->op.own_schema, ARW_ROOT, in->schema, id, name, NULL);
  }
  if (rc) return qry_free(&r->op), rc;
  *out = &r->op;
  return 0;
}
