/* bulk.c: appending many values to a field at once (fixed-width values, strings, nulls)
 * and the read view of a field's data (see arrow.h). */
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow_int.h"

size_t arw_kind_width(arw_kind k) { return arw__width(k); }

const arw_schema *arw_batch_schema(const arw_batch *b) { return b->schema; }

int arw__bits_append(arw_buf *bits, size_t len, const uint8_t *src, bool fill, size_t n) {
  size_t need = (len + n + 7) / 8;
  if (need > bits->len) {
    int rc = arw_buf_zeros(bits, need - bits->len);
    if (rc) return rc;
  }
  uint8_t *d = bits->data;
  size_t i = 0;
  if (!src && fill) {
    /* the leading partial byte, whole bytes, then the tail */
    for (; i < n && (len + i) % 8; i++) d[(len + i) / 8] |= (uint8_t)(1u << ((len + i) % 8));
    size_t whole = (n - i) / 8;
    if (whole) memset(d + (len + i) / 8, 0xFF, whole);
    i += whole * 8;
    for (; i < n; i++) d[(len + i) / 8] |= (uint8_t)(1u << ((len + i) % 8));
    return 0;
  }
  if (!src) return 0; /* zero bits: the bytes were zeroed when added */
  for (; i < n; i++)
    if (src[i]) d[(len + i) / 8] |= (uint8_t)(1u << ((len + i) % 8));
  return 0;
}

/* Extends c's validity by n slots (valid: bytes, NULL = all valid) and its counts. */
static int slots_append(const arw_field *f, arw_col *c, const uint8_t *valid, size_t n) {
  size_t nulls = 0;
  if (valid)
    for (size_t i = 0; i < n; i++) nulls += valid[i] == 0;
  if (nulls && !f->nullable)
    return dd_err_set(DD_EINVAL, "arrow field '%s' is not nullable", f->name);
  int rc = arw__bits_append(&c->validity, c->length, valid, true, n);
  if (rc) return rc;
  c->length += n;
  c->null_count += nulls;
  return 0;
}

int arw_append_fixed(arw_batch *b, int id, const void *values, size_t n, const uint8_t *valid) {
  int rc = arw__field_check(b, id, "append values");
  if (rc) return rc;
  const arw_field *f = &b->schema->fields[id];
  arw_col *c = &b->cols[id];
  size_t w = arw__width(f->kind);
  if (!w && f->kind != ARW_BOOL)
    return dd_err_set(DD_EINVAL, "append values: arrow field '%s' is not fixed-width", f->name);
  if (n == 0) return 0;
  /* validity first: it refuses nulls in a non-nullable field before anything changes */
  size_t len0 = c->length;
  if ((rc = slots_append(f, c, valid, n))) return rc;
  if (f->kind == ARW_BOOL) return arw__bits_append(&c->values, len0, values, false, n);
  if (n > SIZE_MAX / w) return dd_err_set(DD_EINVAL, "append values: too many");
  return arw_buf_put(&c->values, values, n * w);
}

int arw_append_fixed_swap(arw_batch *b, int id, void **values, size_t *cap, size_t n) {
  int rc = arw__field_check(b, id, "append values");
  if (rc) return rc;
  const arw_field *f = &b->schema->fields[id];
  arw_col *c = &b->cols[id];
  size_t w = arw__width(f->kind);
  if (!w || f->kind == ARW_BOOL || c->length != 0 || c->values.len != 0 || n > *cap / w ||
      n == 0)
    return arw_append_fixed(b, id, *values, n, NULL);
  if ((rc = slots_append(f, c, NULL, n))) return rc;
  uint8_t *old = c->values.data;
  size_t old_cap = c->values.cap;
  c->values.data = *values;
  c->values.cap = *cap;
  c->values.len = n * w;
  *values = old;
  *cap = old ? old_cap : 0;
  return 0;
}

/* Field id of b and its column, checked to hold strings. */
static int strs_col(arw_batch *b, int id, const arw_field **f, arw_col **c) {
  int rc = arw__field_check(b, id, "append strings");
  if (rc) return rc;
  *f = &b->schema->fields[id];
  *c = &b->cols[id];
  if ((*f)->kind != ARW_UTF8 && (*f)->kind != ARW_BINARY)
    return dd_err_set(DD_EINVAL, "append strings: arrow field '%s' has another type", (*f)->name);
  return 0;
}

int arw_append_strs(arw_batch *b, int id, const uint8_t *data, const int32_t *offsets,
                    size_t n, const uint8_t *valid) {
  const arw_field *f;
  arw_col *c;
  int rc = strs_col(b, id, &f, &c);
  if (rc) return rc;
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++)
    if (offsets[i + 1] < offsets[i] || offsets[i] < 0)
      return dd_err_set(DD_EINVAL, "append strings: offsets of '%s' go backwards", f->name);
  size_t base = c->values.len;
  size_t total = (size_t)(offsets[n] - offsets[0]);
  if (base + total > INT32_MAX)
    return dd_err_set(DD_EINVAL, "arrow column exceeds 2 GiB of offsets");
  if ((rc = slots_append(f, c, valid, n))) return rc;
  if ((rc = arw_buf_put(&c->values, data + offsets[0], total))) return rc;
  if ((rc = arw_buf_zeros(&c->offsets, 4 * n))) return rc;
  int32_t *out = (int32_t *)(void *)(c->offsets.data + c->offsets.len - 4 * n);
  int32_t shift = (int32_t)base - offsets[0];
  for (size_t i = 0; i < n; i++) out[i] = offsets[i + 1] + shift;
  return 0;
}

int arw_append_strs_space(arw_batch *b, int id, size_t n, size_t total, const uint8_t *valid,
                          uint8_t **data, int32_t **ends, int32_t *base) {
  const arw_field *f;
  arw_col *c;
  int rc = strs_col(b, id, &f, &c);
  if (rc) return rc;
  if (c->values.len + total > INT32_MAX)
    return dd_err_set(DD_EINVAL, "arrow column exceeds 2 GiB of offsets");
  *base = (int32_t)c->values.len;
  uint8_t *offs;
  if ((rc = slots_append(f, c, valid, n))) return rc;
  if ((rc = arw_buf_extend(&c->values, total, data))) return rc;
  if ((rc = arw_buf_extend(&c->offsets, 4 * n, &offs))) return rc;
  *ends = (int32_t *)(void *)offs;
  return 0;
}

int arw_append_nulls(arw_batch *b, int id, size_t n) {
  int rc = arw__field_check(b, id, "append nulls");
  if (rc) return rc;
  const arw_field *f = &b->schema->fields[id];
  if (!f->nullable) return dd_err_set(DD_EINVAL, "arrow field '%s' is not nullable", f->name);
  arw_col *c = &b->cols[id];
  size_t w = arw__width(f->kind);
  if (w || f->kind == ARW_NULL) { /* the common case, in bulk */
    size_t len0 = c->length;
    if ((rc = arw__bits_append(&c->validity, len0, NULL, false, n))) return rc;
    c->length += n;
    c->null_count += n;
    return arw_buf_zeros(&c->values, n * w);
  }
  for (size_t i = 0; i < n && !rc; i++) rc = arw__append_empty(b, id, false);
  return rc;
}

int arw_append_nested(arw_batch *b, int id, size_t n, const uint8_t *valid,
                      const int32_t *lengths) {
  int rc = arw__field_check(b, id, "append nested slots");
  if (rc) return rc;
  const arw_field *f = &b->schema->fields[id];
  arw_col *c = &b->cols[id];
  if (f->kind != ARW_STRUCT && f->kind != ARW_LIST && f->kind != ARW_MAP)
    return dd_err_set(DD_EINVAL, "append nested slots: arrow field '%s' is not nested", f->name);
  if (f->kind == ARW_STRUCT || n == 0) return n ? slots_append(f, c, valid, n) : 0;
  /* offsets continue from the last one */
  int64_t end = ((const int32_t *)(const void *)c->offsets.data)[c->length];
  int64_t add = 0;
  for (size_t i = 0; i < n; i++) {
    if (lengths[i] < 0) return dd_err_set(DD_EINVAL, "append nested slots: negative length");
    add += lengths[i];
  }
  if (end + add > INT32_MAX) return dd_err_set(DD_EINVAL, "arrow column exceeds 2 GiB of offsets");
  if ((rc = slots_append(f, c, valid, n))) return rc;
  if ((rc = arw_buf_zeros(&c->offsets, 4 * n))) return rc;
  int32_t *out = (int32_t *)(void *)(c->offsets.data + c->offsets.len - 4 * n);
  for (size_t i = 0; i < n; i++) out[i] = (int32_t)(end += lengths[i]);
  if (f->kind == ARW_MAP) /* the hidden entries struct: one valid slot per entry */
    rc = slots_append(&b->schema->fields[f->first_child], &b->cols[f->first_child], NULL,
                      (size_t)add);
  return rc;
}

int arw_batch_view(const arw_batch *b, int id, arw_view *out) {
  int rc = arw__field_check(b, id, "view");
  if (rc) return rc;
  const arw_field *f = &b->schema->fields[id];
  const arw_col *c = &b->cols[id];
  *out = (arw_view){f->kind, c->length, c->null_count, NULL, NULL, NULL};
  if (c->null_count) out->validity = c->validity.data;
  if (arw__has_offsets(f->kind)) out->offsets = (const int32_t *)(const void *)c->offsets.data;
  if (!arw__nested(f->kind) && f->kind != ARW_NULL) {
    /* a column with no values yet still gets a readable (empty) pointer */
    static const uint8_t none[16];
    out->values = c->values.data ? c->values.data : none;
  }
  return 0;
}
