/* take.c: copying rows of one batch into another (arw_batch_append_rows, take, slice).
 * Each field is gathered in one pass over the row indexes; a list or map turns its rows
 * into the index list of its child's slots, a struct passes its rows on to its children. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow_int.h"

/* Do the two schemas have the same field tree (so field ids correspond)? */
static bool same_tree(const arw_schema *a, const arw_schema *b) {
  if (a == b) return true;
  if (a->nfields != b->nfields || a->first_column != b->first_column) return false;
  for (int i = 0; i < a->nfields; i++) {
    const arw_field *x = &a->fields[i], *y = &b->fields[i];
    if (x->kind != y->kind || x->nullable != y->nullable || x->parent != y->parent ||
        x->first_child != y->first_child || x->next_sibling != y->next_sibling ||
        x->precision != y->precision || x->scale != y->scale)
      return false;
  }
  return true;
}

static inline bool bit_at(const arw_buf *bits, size_t i) {
  return (bits->data[i / 8] >> (i % 8)) & 1;
}

static inline int32_t off_at(const arw_col *c, size_t i) {
  return ((const int32_t *)(const void *)c->offsets.data)[i];
}

static int take_field(arw_batch *dst, const arw_batch *src, int id, const size_t *idx,
                      size_t n);

/* Appends to bitmap dbits (holding dlen bits) bits idx[i] of sbits, or bits a + i when idx
 * is NULL, for i < n; *zeros (may be NULL) counts the zero bits. */
static int gather_bits(arw_buf *dbits, size_t dlen, const arw_buf *sbits, const size_t *idx,
                       size_t a, size_t n, size_t *zeros) {
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    bool v = bit_at(sbits, idx ? idx[i] : a + i);
    rc = arw__bits_push(dbits, dlen + i, v);
    if (zeros) *zeros += !v;
  }
  return rc;
}

/* Appends the validity of n source rows (idx, or a.. when idx is NULL) to field id. */
static int gather_validity(arw_col *d, const arw_col *s, const size_t *idx, size_t a, size_t n) {
  int rc = s->null_count == 0
               ? arw__bits_append(&d->validity, d->length, NULL, true, n)
               : gather_bits(&d->validity, d->length, &s->validity, idx, a, n, &d->null_count);
  if (!rc) d->length += n;
  return rc;
}

/* The child slots of rows idx of a list or map column, in order, in *out (caller frees). */
static int child_rows(const arw_col *c, const size_t *idx, size_t n, size_t **out,
                      size_t *out_n) {
  size_t total = 0;
  for (size_t i = 0; i < n; i++) total += (size_t)(off_at(c, idx[i] + 1) - off_at(c, idx[i]));
  size_t *rows = malloc((total ? total : 1) * sizeof *rows);
  if (!rows) return dd_err_set(DD_ENOMEM, "out of memory gathering arrow rows");
  size_t k = 0;
  for (size_t i = 0; i < n; i++)
    for (int32_t j = off_at(c, idx[i]); j < off_at(c, idx[i] + 1); j++) rows[k++] = (size_t)j;
  *out = rows;
  *out_n = total;
  return 0;
}

/* Values (or offsets and children) of field id for rows idx; validity done by caller. */
static int take_values(arw_batch *dst, const arw_batch *src, int id, const size_t *idx,
                       size_t n) {
  const arw_field *f = &src->schema->fields[id];
  const arw_col *s = &src->cols[id];
  arw_col *d = &dst->cols[id];
  int rc = 0;
  switch (f->kind) {
    case ARW_NULL: return 0;
    case ARW_BOOL: return gather_bits(&d->values, d->length - n, &s->values, idx, 0, n, NULL);
    case ARW_UTF8:
    case ARW_BINARY:
      for (size_t i = 0; i < n && !rc; i++) {
        int32_t a = off_at(s, idx[i]), e = off_at(s, idx[i] + 1);
        rc = arw_buf_put(&d->values, s->values.data + a, (size_t)(e - a));
        if (!rc) rc = arw__offset_push(d, d->values.len);
      }
      return rc;
    case ARW_LIST:
    case ARW_MAP: {
      size_t *rows = NULL, nrows = 0;
      if ((rc = child_rows(s, idx, n, &rows, &nrows))) return rc;
      size_t base = dst->cols[f->first_child].length;
      for (size_t i = 0; i < n && !rc; i++) {
        base += (size_t)(off_at(s, idx[i] + 1) - off_at(s, idx[i]));
        rc = arw__offset_push(d, base);
      }
      if (!rc) rc = take_field(dst, src, f->first_child, rows, nrows);
      free(rows);
      return rc;
    }
    case ARW_STRUCT:
    case ARW__ENTRIES:
      for (int ch = f->first_child; ch >= 0 && !rc; ch = src->schema->fields[ch].next_sibling)
        rc = take_field(dst, src, ch, idx, n);
      return rc;
    default: {
      size_t w = arw__width(f->kind);
      size_t at = d->values.len;
      if ((rc = arw_buf_zeros(&d->values, n * w))) return rc;
      uint8_t *out = d->values.data + at;
      if (w == 8) {
        for (size_t i = 0; i < n; i++) memcpy(out + 8 * i, s->values.data + 8 * idx[i], 8);
      } else if (w == 4) {
        for (size_t i = 0; i < n; i++) memcpy(out + 4 * i, s->values.data + 4 * idx[i], 4);
      } else {
        for (size_t i = 0; i < n; i++) memcpy(out + w * i, s->values.data + w * idx[i], w);
      }
      return 0;
    }
  }
}

static int take_field(arw_batch *dst, const arw_batch *src, int id, const size_t *idx,
                      size_t n) {
  const arw_col *s = &src->cols[id];
  arw_col *d = &dst->cols[id];
  for (size_t i = 0; i < n; i++)
    if (idx[i] >= s->length)
      return dd_err_set(DD_EINVAL, "arrow take: row %zu of %zu", idx[i], s->length);
  int rc = gather_validity(d, s, idx, 0, n);
  return rc ? rc : take_values(dst, src, id, idx, n);
}

/* Rows [a, a + n) of field id: the contiguous case, copied a buffer range at a time. */
static int copy_range(arw_batch *dst, const arw_batch *src, int id, size_t a, size_t n) {
  const arw_field *f = &src->schema->fields[id];
  const arw_col *s = &src->cols[id];
  arw_col *d = &dst->cols[id];
  if (a + n > s->length)
    return dd_err_set(DD_EINVAL, "arrow take: rows [%zu, %zu) of %zu", a, a + n, s->length);
  size_t len0 = d->length;
  int rc = gather_validity(d, s, NULL, a, n);
  if (rc) return rc;
  size_t w = arw__width(f->kind);
  switch (f->kind) {
    case ARW_NULL: return 0;
    case ARW_BOOL: return gather_bits(&d->values, len0, &s->values, NULL, a, n, NULL);
    case ARW_UTF8:
    case ARW_BINARY:
    case ARW_LIST:
    case ARW_MAP: {
      int32_t lo = off_at(s, a), hi = off_at(s, a + n);
      size_t base = arw__nested(f->kind) ? dst->cols[f->first_child].length : d->values.len;
      if (base + (size_t)(hi - lo) > INT32_MAX)
        return dd_err_set(DD_EINVAL, "arrow column exceeds 2 GiB of offsets");
      if ((rc = arw_buf_zeros(&d->offsets, 4 * n))) return rc;
      int32_t *out = (int32_t *)(void *)(d->offsets.data + d->offsets.len - 4 * n);
      const int32_t *in = (const int32_t *)(const void *)s->offsets.data + a + 1;
      int32_t shift = (int32_t)base - lo;
      for (size_t i = 0; i < n; i++) out[i] = in[i] + shift;
      if (!arw__nested(f->kind))
        return arw_buf_put(&d->values, s->values.data + lo, (size_t)(hi - lo));
      return copy_range(dst, src, f->first_child, (size_t)lo, (size_t)(hi - lo));
    }
    case ARW_STRUCT:
    case ARW__ENTRIES:
      for (int ch = f->first_child; ch >= 0 && !rc; ch = src->schema->fields[ch].next_sibling)
        rc = copy_range(dst, src, ch, a, n);
      return rc;
    default: return arw_buf_put(&d->values, s->values.data + a * w, n * w);
  }
}

int arw_batch_append_rows(arw_batch *dst, const arw_batch *src, const size_t *idx, size_t n) {
  if (!same_tree(dst->schema, src->schema))
    return dd_err_set(DD_EINVAL, "arrow append rows: the batches' schemas differ");
  const arw_schema *s = src->schema;
  bool contiguous = n > 0;
  for (size_t i = 1; i < n && contiguous; i++) contiguous = idx[i] == idx[0] + i;
  int rc = 0;
  for (int c = s->first_column; c >= 0 && !rc; c = s->fields[c].next_sibling)
    rc = contiguous ? copy_range(dst, src, c, idx[0], n) : take_field(dst, src, c, idx, n);
  return rc;
}

int arw_batch_take(arw_batch **out, const arw_batch *b, const size_t *idx, size_t n) {
  arw_batch *t = NULL;
  int rc = arw_batch_new(&t, b->schema);
  if (!rc) rc = arw_batch_append_rows(t, b, idx, n);
  if (rc) {
    arw_batch_free(t);
    return rc;
  }
  *out = t;
  return 0;
}

int arw_batch_slice(arw_batch **out, const arw_batch *b, size_t start, size_t end) {
  size_t rows = arw_batch_rows(b);
  if (start > end || end > rows)
    return dd_err_set(DD_EINVAL, "arrow slice [%zu, %zu) of %zu rows", start, end, rows);
  size_t *idx = malloc((end - start ? end - start : 1) * sizeof *idx);
  if (!idx) return dd_err_set(DD_ENOMEM, "out of memory slicing an arrow batch");
  for (size_t i = start; i < end; i++) idx[i - start] = i;
  int rc = arw_batch_take(out, b, idx, end - start);
  free(idx);
  return rc;
}
