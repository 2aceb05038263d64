/* qry_sort.c: Sort (all input held, stable) and Deduplicate (streaming, one kept row per
 * distinct key). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/query/qry_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

/* ======================= sort ======================= */

typedef struct sort_op {
  qry_op op;
  ex_node **keys;    /* bound key expressions (no EX_SORT wrapper) */
  bool *asc, *nulls_first;
  int *key_fields;
  size_t nkeys;
  arw_schema *key_schema;
  arw_batch *all, *key_rows;
  size_t *order, nrows, pos;
  bool sorted;
} sort_op;

/* qsort_r has no portable form: the comparison reads this (one sort at a time per thread). */
static _Thread_local const sort_op *sort__cur;

static int sort_cmp(const void *pa, const void *pb) {
  const sort_op *s = sort__cur;
  size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
  for (size_t k = 0; k < s->nkeys; k++) {
    int f = s->key_fields[k];
    arw_view v;
    if (arw_batch_view(s->key_rows, f, &v)) return dd_err_clear(), 0;
    bool na = !arw_view_valid(&v, a), nb = !arw_view_valid(&v, b);
    if (na || nb) {
      if (na && nb) continue;
      return (na ? -1 : 1) * (s->nulls_first[k] ? 1 : -1);
    }
    int c = qry__cmp(s->key_rows, f, a, s->key_rows, f, b);
    if (c) return s->asc[k] ? c : -c;
  }
  return (a > b) - (a < b); /* stable */
}

static int sort_fill(sort_op *s) {
  const arw_batch *b;
  int rc;
  size_t *idx = NULL, cap = 0;
  if ((rc = arw_batch_new(&s->all, s->op.in->schema)) || (rc = arw_batch_new(&s->key_rows, s->key_schema))) return rc;
  while (!(rc = qry_next(s->op.in, &b)) && b) {
    size_t n = arw_batch_rows(b);
    if (n > cap) {
      free(idx);
      if (!(idx = malloc(n * sizeof *idx))) return OOM();
      cap = n;
    }
    for (size_t i = 0; i < n; i++) idx[i] = i;
    if ((rc = arw_batch_append_rows(s->all, b, idx, n))) break;
    arw_batch *k = NULL;
    rc = arw_batch_new(&k, s->key_schema);
    for (size_t i = 0; !rc && i < s->nkeys; i++) rc = ex_eval(s->keys[i], b, k, s->key_fields[i]);
    if (!rc) rc = arw_batch_append_rows(s->key_rows, k, idx, n);
    arw_batch_free(k);
    if (!rc) rc = qry__held_check(qry__batch_bytes(s->all) + qry__batch_bytes(s->key_rows), "sort");
    if (rc) break;
  }
  free(idx);
  if (rc) return rc;
  s->nrows = arw_batch_rows(s->all);
  if (!(s->order = malloc((s->nrows ? s->nrows : 1) * sizeof *s->order))) return OOM();
  for (size_t i = 0; i < s->nrows; i++) s->order[i] = i;
  sort__cur = s;
  qsort(s->order, s->nrows, sizeof *s->order, sort_cmp);
  sort__cur = NULL;
  arw_batch_free(s->key_rows), s->key_rows = NULL;
  s->sorted = true;
  return 0;
}

static int sort_next(qry_op *op, const arw_batch **out) {
  sort_op *s = (sort_op *)op;
  int rc = s->sorted ? 0 : sort_fill(s);
  if (rc || s->pos >= s->nrows) return rc;
  size_t n = s->nrows - s->pos < QRY_BATCH_ROWS ? s->nrows - s->pos : QRY_BATCH_ROWS;
  arw_batch *t = NULL;
  if ((rc = arw_batch_take(&t, s->all, s->order + s->pos, n))) return rc;
  s->pos += n;
  *out = qry__keep(op, t);
  return 0;
}

static void sort_drop(qry_op *op) {
  sort_op *s = (sort_op *)op;
  for (size_t i = 0; i < s->nkeys; i++) ex_free(s->keys[i]);
  free(s->keys), free(s->asc), free(s->nulls_first), free(s->key_fields), free(s->order);
  arw_batch_free(s->all);
  arw_batch_free(s->key_rows);
  arw_schema_free(s->key_schema);
}

int qry_sort(qry_op **out, qry_op *in, ex_node *const *keys, size_t n) {
  *out = NULL;
  sort_op *s = qry__new(sizeof *s, in, sort_next, sort_drop, "Sort [%zu keys]", n);
  if (!s) return OOM();
  s->keys = calloc(n + 1, sizeof *s->keys);
  s->asc = calloc(n + 1, sizeof *s->asc);
  s->nulls_first = calloc(n + 1, sizeof *s->nulls_first);
  s->key_fields = calloc(n + 1, sizeof *s->key_fields);
  int rc = s->keys && s->asc && s->nulls_first && s->key_fields ? arw_schema_new(&s->key_schema) : OOM();
  for (size_t i = 0; !rc && i < n; i++) {
    const ex_node *k = keys[i];
    bool is_sort = ex_node_kind(k) == EX_SORT;
    s->asc[i] = is_sort ? ex_sort_ascending(k) : true;
    s->nulls_first[i] = is_sort ? ex_sort_nulls_first(k) : true;
    if (is_sort) k = ex_arg(k, 0);
    if (!(rc = qry__bind(&s->keys[i], k, in->schema))) s->nkeys++;
    char name[32];
    snprintf(name, sizeof name, "k%zu", i);
    if (!rc) rc = ex_add_field(s->key_schema, ARW_ROOT, name, s->keys[i], &s->key_fields[i]);
  }
  if (rc) return qry_free(&s->op), rc;
  *out = &s->op;
  return 0;
}

/* ======================= deduplicate ======================= */

typedef struct dedup_op {
  qry_op op;
  ex_node **keys;
  int *key_fields;
  size_t nkeys;
  arw_schema *key_schema;
  qry__keyset seen;
  size_t *idx;
} dedup_op;

static int dedup_next(qry_op *op, const arw_batch **out) {
  dedup_op *d = (dedup_op *)op;
  for (;;) {
    const arw_batch *b;
    int rc = qry_next(op->in, &b);
    if (rc || !b) return rc;
    size_t n = arw_batch_rows(b), kept = 0;
    arw_batch *k = NULL;
    free(d->idx);
    if (!(d->idx = malloc(n * sizeof *d->idx))) return OOM();
    rc = arw_batch_new(&k, d->key_schema);
    for (size_t i = 0; !rc && i < d->nkeys; i++) rc = ex_eval(d->keys[i], b, k, d->key_fields[i]);
    for (size_t r = 0; !rc && r < n; r++) {
      size_t g;
      bool added;
      if (!(rc = qry__keyset_put(&d->seen, k, r, &g, &added)) && added) d->idx[kept++] = r;
    }
    arw_batch_free(k);
    if (!rc) rc = qry__held_check(qry__batch_bytes(d->seen.rows), "deduplicate");
    if (rc) return rc;
    if (kept == n) return *out = b, 0;
    if (!kept) continue;
    arw_batch *t = NULL;
    if ((rc = arw_batch_take(&t, b, d->idx, kept))) return rc;
    *out = qry__keep(op, t);
    return 0;
  }
}

static void dedup_drop(qry_op *op) {
  dedup_op *d = (dedup_op *)op;
  for (size_t i = 0; i < d->nkeys; i++) ex_free(d->keys[i]);
  free(d->keys), free(d->key_fields), free(d->idx);
  qry__keyset_free(&d->seen);
  arw_schema_free(d->key_schema);
}

int qry_dedup(qry_op **out, qry_op *in, const char *const *columns, size_t n) {
  *out = NULL;
  size_t ncols = arw_schema_ncolumns(in->schema), nk = n ? n : ncols;
  dedup_op *d = qry__new(sizeof *d, in, dedup_next, dedup_drop, "Deduplicate [%zu keys]", nk);
  if (!d) return OOM();
  d->keys = calloc(nk + 1, sizeof *d->keys);
  d->key_fields = calloc(nk + 1, sizeof *d->key_fields);
  int rc = d->keys && d->key_fields ? arw_schema_new(&d->key_schema) : OOM();
  for (size_t i = 0; !rc && i < nk; i++) {
    const char *name = n ? columns[i] : arw_field_name(in->schema, arw_schema_column(in->schema, i));
    ex_node *c = NULL;
    if (n && arw_schema_find(in->schema, ARW_ROOT, name) < 0) {
      bool found = false;
      for (size_t j = 0; j < ncols; j++) found |= !strcasecmp(arw_field_name(in->schema, arw_schema_column(in->schema, j)), name);
      if (!found) {
        rc = dd_err_set(DD_EINVAL, "[UNRESOLVED_COLUMN_AMONG_FIELD_NAMES] Cannot resolve column name \"%s\"", name);
        break;
      }
    }
    rc = ex_new_column(&c, &name, 1);
    if (!rc && !(rc = qry__bind(&d->keys[i], c, in->schema))) d->nkeys++;
    ex_free(c);
    if (!rc) rc = ex_add_field(d->key_schema, ARW_ROOT, name, d->keys[i], &d->key_fields[i]);
  }
  if (!rc) rc = qry__keyset_init(&d->seen, d->key_schema);
  if (rc) return qry_free(&d->op), rc;
  *out = &d->op;
  return 0;
}
