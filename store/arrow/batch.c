/* batch.c: building the columns of one record batch, value by value (see arrow.h for
 * use, arrow_int.h for the buffers each kind keeps). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow_int.h"

/* ---- lifecycle -------------------------------------------------------------------------- */

static void col_reset(arw_col *c) {
  arw_buf_free(&c->validity);
  arw_buf_free(&c->offsets);
  arw_buf_free(&c->values);
  c->length = c->null_count = 0;
}

/* Puts every column in its empty state (offset 0 for kinds with offsets), keeping the
 * memory already allocated. */
static int batch_init_cols(arw_batch *b) {
  for (int i = 0; i < b->schema->nfields; i++) {
    arw_col *c = &b->cols[i];
    c->validity.len = c->offsets.len = c->values.len = 0;
    c->length = c->null_count = 0;
    if (arw__has_offsets(b->schema->fields[i].kind)) {
      int rc = arw_buf_put_u32(&b->cols[i].offsets, 0);
      if (rc) return rc;
    }
  }
  return 0;
}

int arw_batch_new(arw_batch **out, const arw_schema *s) {
  arw_batch *b = calloc(1, sizeof *b);
  if (!b) return dd_err_set(DD_ENOMEM, "out of memory allocating an arrow batch");
  b->schema = s;
  b->cols = calloc(s->nfields ? (size_t)s->nfields : 1, sizeof *b->cols);
  if (!b->cols) {
    free(b);
    return dd_err_set(DD_ENOMEM, "out of memory allocating arrow columns");
  }
  ((arw_schema *)s)->nbatches++; /* the count is bookkeeping, not schema content */
  int rc = batch_init_cols(b);
  if (rc) {
    arw_batch_free(b);
    return rc;
  }
  *out = b;
  return 0;
}

void arw_batch_clear(arw_batch *b) {
  /* Cannot fail: every offsets buffer kept the room for its first offset from
   * arw_batch_new. */
  int rc = batch_init_cols(b);
  assert(rc == 0);
  (void)rc;
}

void arw_batch_free(arw_batch *b) {
  if (!b) return;
  for (int i = 0; i < b->schema->nfields; i++) col_reset(&b->cols[i]);
  ((arw_schema *)b->schema)->nbatches--;
  free(b->cols);
  free(b);
}

size_t arw_batch_rows(const arw_batch *b) {
  int first = b->schema->first_column;
  return first < 0 ? 0 : b->cols[first].length;
}

size_t arw_batch_bytes(const arw_batch *b) {
  size_t n = 0;
  for (int i = 0; i < b->schema->nfields; i++)
    n += b->cols[i].validity.len + b->cols[i].offsets.len + b->cols[i].values.len;
  return n;
}

/* ---- bits and slots --------------------------------------------------------------------- */

/* Appends bit `on` at index `n` of a bitmap that currently holds n bits. */
int arw__bits_push(arw_buf *bits, size_t n, bool on) {
  if (n % 8 == 0) {
    int rc = arw_buf_zeros(bits, 1);
    if (rc) return rc;
  }
  if (on) bits->data[n / 8] |= (uint8_t)(1u << (n % 8));
  return 0;
}

/* Records one more slot in c: its validity bit and the count. */
int arw__slot_push(arw_col *c, bool valid) {
  int rc = arw__bits_push(&c->validity, c->length, valid);
  if (rc) return rc;
  c->length++;
  if (!valid) c->null_count++;
  return 0;
}

/* Appends the current end as the next offset (the slot just added ends there). */
int arw__offset_push(arw_col *c, size_t end) {
  if (end > INT32_MAX) return dd_err_set(DD_EINVAL, "arrow column exceeds 2 GiB of offsets");
  return arw_buf_put_u32(&c->offsets, (uint32_t)end);
}

int arw__field_check(const arw_batch *b, int id, const char *what) {
  if (id < 0 || id >= b->schema->nfields)
    return dd_err_set(DD_EINVAL, "%s: no arrow field %d", what, id);
  return 0;
}

static int kind_check(const arw_batch *b, int id, arw_kind k1, arw_kind k2, const char *what) {
  int rc = arw__field_check(b, id, what);
  if (rc) return rc;
  arw_kind k = b->schema->fields[id].kind;
  if (k != k1 && k != k2)
    return dd_err_set(DD_EINVAL, "%s: arrow field '%s' has another type", what,
                      b->schema->fields[id].name);
  return 0;
}

/* Brings a map's entries struct up to the key/value pairs appended so far, so the map
 * slot being added (value or null) spans them. */
static int map_sync_entries(arw_batch *b, const arw_field *map) {
  const arw_field *entries = &b->schema->fields[map->first_child];
  arw_col *ec = &b->cols[map->first_child];
  if (entries->nchildren != 2)
    return dd_err_set(DD_EINVAL, "map '%s' needs a key and a value field", map->name);
  size_t nkeys = b->cols[entries->first_child].length;
  size_t nvals = b->cols[entries->last_child].length;
  if (nkeys != nvals)
    return dd_err_set(DD_EINVAL, "map '%s': %zu keys but %zu values", map->name, nkeys, nvals);
  while (ec->length < nkeys) {
    int rc = arw__slot_push(ec, true);
    if (rc) return rc;
  }
  return 0;
}

/* Appends an empty-but-valid (or null, for nullable fields) slot: what the children of
 * a null struct hold. */
static int append_filler(arw_batch *b, int id);

/* Appends a slot with no value: valid=false for nulls, true for fillers of non-nullable
 * fields (zero, empty string, empty list, struct of fillers). */
int arw__append_empty(arw_batch *b, int id, bool valid) {
  const arw_field *f = &b->schema->fields[id];
  arw_col *c = &b->cols[id];
  int rc = f->kind == ARW_MAP ? map_sync_entries(b, f) : 0;
  if (!rc) rc = arw__slot_push(c, valid);
  if (rc) return rc;
  switch (f->kind) {
    case ARW_UTF8:
    case ARW_BINARY: return arw__offset_push(c, c->values.len);
    case ARW_LIST:
    case ARW_MAP: return arw__offset_push(c, b->cols[f->first_child].length);
    case ARW_BOOL: return arw__bits_push(&c->values, c->length - 1, false);
    case ARW_STRUCT:
    case ARW__ENTRIES:
      for (int ch = f->first_child; ch >= 0; ch = b->schema->fields[ch].next_sibling)
        if ((rc = append_filler(b, ch))) return rc;
      return 0;
    default: return arw_buf_zeros(&c->values, arw__width(f->kind));
  }
}

static int append_filler(arw_batch *b, int id) {
  return arw__append_empty(b, id, !b->schema->fields[id].nullable);
}

/* ---- appends -------------------------------------------------------------------------- */

int arw_append_null(arw_batch *b, int id) {
  int rc = arw__field_check(b, id, "append null");
  if (rc) return rc;
  if (!b->schema->fields[id].nullable)
    return dd_err_set(DD_EINVAL, "arrow field '%s' is not nullable", b->schema->fields[id].name);
  return arw__append_empty(b, id, false);
}

int arw_append_str(arw_batch *b, int id, const char *s, size_t len) {
  int rc = kind_check(b, id, ARW_UTF8, ARW_BINARY, "append string");
  if (rc) return rc;
  arw_col *c = &b->cols[id];
  if ((rc = arw_buf_put(&c->values, s, len))) return rc;
  if ((rc = arw__offset_push(c, c->values.len))) return rc;
  return arw__slot_push(c, true);
}

static int append_fixed(arw_batch *b, int id, const void *le, size_t n) {
  arw_col *c = &b->cols[id];
  int rc = arw_buf_put(&c->values, le, n);
  return rc ? rc : arw__slot_push(c, true);
}

int arw_append_i32(arw_batch *b, int id, int32_t v) {
  int rc = arw__field_check(b, id, "append int32");
  if (rc) return rc;
  const arw_field *f = &b->schema->fields[id];
  size_t w = arw__width(f->kind);
  if (f->kind != ARW_INT32 && f->kind != ARW_DATE32 && f->kind != ARW_INT8 &&
      f->kind != ARW_INT16)
    return dd_err_set(DD_EINVAL, "append int32: arrow field '%s' has another type", f->name);
  if ((f->kind == ARW_INT8 && (v < INT8_MIN || v > INT8_MAX)) ||
      (f->kind == ARW_INT16 && (v < INT16_MIN || v > INT16_MAX)))
    return dd_err_set(DD_EINVAL, "append: %d does not fit arrow field '%s'", (int)v, f->name);
  uint8_t le[4];
  for (int i = 0; i < 4; i++) le[i] = (uint8_t)((uint32_t)v >> (8 * i));
  return append_fixed(b, id, le, w);
}

int arw_append_f32(arw_batch *b, int id, float v) {
  int rc = kind_check(b, id, ARW_FLOAT32, ARW_FLOAT32, "append float32");
  if (rc) return rc;
  uint8_t le[4];
  memcpy(le, &v, 4); /* little-endian host (arrow_int.h) */
  return append_fixed(b, id, le, 4);
}

int arw_append_dec128(arw_batch *b, int id, const uint8_t le[16]) {
  int rc = kind_check(b, id, ARW_DECIMAL128, ARW_DECIMAL128, "append decimal128");
  return rc ? rc : append_fixed(b, id, le, 16);
}

static int append_u64(arw_batch *b, int id, uint64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
  return append_fixed(b, id, le, 8);
}

int arw_append_i64(arw_batch *b, int id, int64_t v) {
  int rc = arw__field_check(b, id, "append int64");
  if (rc) return rc;
  arw_kind k = b->schema->fields[id].kind;
  if (k != ARW_INT64 && k != ARW_TIMESTAMP && k != ARW_TIMESTAMP_UTC)
    return dd_err_set(DD_EINVAL, "append int64: arrow field '%s' has another type",
                      b->schema->fields[id].name);
  return append_u64(b, id, (uint64_t)v);
}

int arw_append_f64(arw_batch *b, int id, double v) {
  int rc = kind_check(b, id, ARW_FLOAT64, ARW_FLOAT64, "append float64");
  if (rc) return rc;
  uint64_t bits;
  memcpy(&bits, &v, sizeof bits);
  return append_u64(b, id, bits);
}

int arw_append_bool(arw_batch *b, int id, bool v) {
  int rc = kind_check(b, id, ARW_BOOL, ARW_BOOL, "append bool");
  if (rc) return rc;
  arw_col *c = &b->cols[id];
  if ((rc = arw__bits_push(&c->values, c->length, v))) return rc;
  return arw__slot_push(c, true);
}

int arw_append_done(arw_batch *b, int id) {
  int rc = arw__field_check(b, id, "append nested value");
  if (rc) return rc;
  const arw_field *f = &b->schema->fields[id];
  arw_col *c = &b->cols[id];
  switch (f->kind) {
    case ARW_LIST:
      if (f->nchildren != 1) return dd_err_set(DD_EINVAL, "list '%s' has no element", f->name);
      if ((rc = arw__offset_push(c, b->cols[f->first_child].length))) return rc;
      return arw__slot_push(c, true);
    case ARW_MAP:
      if ((rc = map_sync_entries(b, f))) return rc;
      if ((rc = arw__offset_push(c, b->cols[f->first_child].length))) return rc;
      return arw__slot_push(c, true);
    case ARW_STRUCT: return arw__slot_push(c, true);
    default:
      return dd_err_set(DD_EINVAL, "arrow field '%s' is not a list, map or struct", f->name);
  }
}
