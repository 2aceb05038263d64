/* writer.c: encodes the Schema and RecordBatch messages of the Arrow IPC stream format and
 * frames them (continuation marker, metadata length, padding, body). Format notes in
 * arrow_int.h; flatbuffer encoding in fb.c. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow_int.h"
#include "store/arrow/fb.h"

/* Facts from the Arrow format's Schema.fbs and Message.fbs. */
enum {
  /* union Type */
  FB_TYPE_NULL = 1, FB_TYPE_INT = 2, FB_TYPE_FLOATING_POINT = 3, FB_TYPE_BINARY = 4, FB_TYPE_UTF8 = 5,
  FB_TYPE_BOOL = 6, FB_TYPE_DECIMAL = 7, FB_TYPE_DATE = 8, FB_TYPE_TIMESTAMP = 10, FB_TYPE_LIST = 12,
  FB_TYPE_STRUCT = 13, FB_TYPE_MAP = 17,
  /* union MessageHeader */
  FB_HEADER_SCHEMA = 1, FB_HEADER_RECORD_BATCH = 3,
  FB_METADATA_V5 = 4,
  FB_PRECISION_SINGLE = 1, FB_PRECISION_DOUBLE = 2,
  FB_DECIMAL_DEFAULT_BITS = 128,
  FB_DATE_UNIT_DAY = 0, FB_DATE_UNIT_DEFAULT = 1, /* Date.unit defaults to MILLISECOND */
  FB_TIME_UNIT_MICROSECOND = 2,
};

/* Vtable slots. */
enum { FIELD_NAME = 0, FIELD_NULLABLE = 1, FIELD_TYPE_TYPE = 2, FIELD_TYPE = 3,
       FIELD_CHILDREN = 5 };
enum { SCHEMA_FIELDS = 1 };
enum { MESSAGE_VERSION = 0, MESSAGE_HEADER_TYPE = 1, MESSAGE_HEADER = 2, MESSAGE_BODY_LENGTH = 3 };
enum { BATCH_LENGTH = 0, BATCH_NODES = 1, BATCH_BUFFERS = 2 };

/* ---- framing ------------------------------------------------------------------------------- */

/* Appends one encapsulated message: marker, padded metadata length, metadata, body. */
static int write_message(arw_buf *out, arw_fb *fb, arw_fb_ref header, uint8_t header_type,
                         const arw_buf *body) {
  int rc = arw_fb_table_start(fb);
  if (!rc) rc = arw_fb_add_i64(fb, MESSAGE_BODY_LENGTH, (int64_t)body->len, 0);
  if (!rc) rc = arw_fb_add_ref(fb, MESSAGE_HEADER, header);
  if (!rc) rc = arw_fb_add_i16(fb, MESSAGE_VERSION, FB_METADATA_V5, 0);
  if (!rc) rc = arw_fb_add_u8(fb, MESSAGE_HEADER_TYPE, header_type, 0);
  arw_fb_ref msg;
  if (!rc) rc = arw_fb_table_end(fb, &msg);
  const uint8_t *meta;
  size_t meta_len;
  if (!rc) rc = arw_fb_finish(fb, msg, &meta, &meta_len);
  if (rc) return rc;
  size_t padded = (meta_len + 7) & ~(size_t)7; /* 8 + padded stays a multiple of 8 */
  if (padded > INT32_MAX) return dd_err_set(DD_EINVAL, "arrow message header too large");
  if (out->len % 8) return dd_err_set(DD_EINVAL, "arrow stream buffer is not 8-aligned");
  rc = arw_buf_put_u32(out, 0xFFFFFFFFu);
  if (!rc) rc = arw_buf_put_u32(out, (uint32_t)padded);
  if (!rc) rc = arw_buf_put(out, meta, meta_len);
  if (!rc) rc = arw_buf_zeros(out, padded - meta_len);
  if (!rc) rc = arw_buf_put(out, body->data, body->len);
  return rc;
}

int arw_write_eos(arw_buf *out) {
  int rc = arw_buf_put_u32(out, 0xFFFFFFFFu);
  return rc ? rc : arw_buf_put_u32(out, 0);
}

/* ---- schema -------------------------------------------------------------------------------- */

/* Builds the type table of a field; *out_type is its Type union tag. */
static int type_table(arw_fb *fb, const arw_field *f, uint8_t *out_type, arw_fb_ref *out) {
  arw_fb_ref tz = 0;
  int rc = 0;
  if (f->kind == ARW_TIMESTAMP_UTC && (rc = arw_fb_string(fb, "UTC", 3, &tz))) return rc;
  if ((rc = arw_fb_table_start(fb))) return rc;
  switch (f->kind) {
    case ARW_UTF8: *out_type = FB_TYPE_UTF8; break;
    case ARW_BINARY: *out_type = FB_TYPE_BINARY; break;
    case ARW_BOOL: *out_type = FB_TYPE_BOOL; break;
    case ARW_LIST: *out_type = FB_TYPE_LIST; break;
    case ARW_MAP: *out_type = FB_TYPE_MAP; break; /* keysSorted = false (default) */
    case ARW_STRUCT:
    case ARW__ENTRIES: *out_type = FB_TYPE_STRUCT; break;
    case ARW_NULL: *out_type = FB_TYPE_NULL; break;
    case ARW_INT8:
    case ARW_INT16:
    case ARW_INT32:
    case ARW_INT64:
      *out_type = FB_TYPE_INT;
      rc = arw_fb_add_i32(fb, 0, (int32_t)(8 * arw__width(f->kind)), 0); /* bitWidth */
      if (!rc) rc = arw_fb_add_bool(fb, 1, true, false);                 /* is_signed */
      break;
    case ARW_FLOAT32:
    case ARW_FLOAT64:
      *out_type = FB_TYPE_FLOATING_POINT;
      rc = arw_fb_add_i16(fb, 0, f->kind == ARW_FLOAT32 ? FB_PRECISION_SINGLE
                                                        : FB_PRECISION_DOUBLE, 0);
      break;
    case ARW_DECIMAL128:
      *out_type = FB_TYPE_DECIMAL;
      rc = arw_fb_add_i32(fb, 0, f->precision, 0);
      if (!rc) rc = arw_fb_add_i32(fb, 1, f->scale, 0);
      if (!rc) rc = arw_fb_add_i32(fb, 2, 128, FB_DECIMAL_DEFAULT_BITS);
      break;
    case ARW_DATE32:
      *out_type = FB_TYPE_DATE;
      rc = arw_fb_add_i16(fb, 0, FB_DATE_UNIT_DAY, FB_DATE_UNIT_DEFAULT);
      break;
    case ARW_TIMESTAMP:
    case ARW_TIMESTAMP_UTC:
      *out_type = FB_TYPE_TIMESTAMP;
      rc = arw_fb_add_i16(fb, 0, FB_TIME_UNIT_MICROSECOND, 0);
      if (!rc && tz) rc = arw_fb_add_ref(fb, 1, tz);
      break;
  }
  return rc ? rc : arw_fb_table_end(fb, out);
}

/* Builds the Field table of field id and, first, everything it refers to. */
static int field_table(arw_fb *fb, const arw_schema *s, int id, arw_fb_ref *out) {
  const arw_field *f = &s->fields[id];
  arw_fb_ref *kids = calloc(f->nchildren ? (size_t)f->nchildren : 1, sizeof *kids);
  if (!kids) return dd_err_set(DD_ENOMEM, "out of memory encoding an arrow schema");
  int rc = 0, n = 0;
  for (int ch = f->first_child; !rc && ch >= 0; ch = s->fields[ch].next_sibling)
    rc = field_table(fb, s, ch, &kids[n++]);
  arw_fb_ref children, name, type;
  uint8_t type_tag = 0;
  if (!rc) rc = arw_fb_vec_refs(fb, kids, (size_t)n, &children);
  if (!rc) rc = arw_fb_string(fb, f->name, strlen(f->name), &name);
  if (!rc) rc = type_table(fb, f, &type_tag, &type);
  if (!rc) rc = arw_fb_table_start(fb);
  if (!rc) rc = arw_fb_add_ref(fb, FIELD_NAME, name);
  if (!rc) rc = arw_fb_add_ref(fb, FIELD_TYPE, type);
  if (!rc) rc = arw_fb_add_ref(fb, FIELD_CHILDREN, children);
  if (!rc) rc = arw_fb_add_u8(fb, FIELD_TYPE_TYPE, type_tag, 0);
  if (!rc) rc = arw_fb_add_bool(fb, FIELD_NULLABLE, f->nullable, false);
  if (!rc) rc = arw_fb_table_end(fb, out);
  free(kids);
  return rc;
}

int arw_write_schema(arw_buf *out, const arw_schema *s) {
  arw_fb fb = ARW_FB_INIT;
  arw_buf no_body = ARW_BUF_INIT;
  arw_fb_ref *cols = calloc(s->ncolumns ? s->ncolumns : 1, sizeof *cols);
  if (!cols) return dd_err_set(DD_ENOMEM, "out of memory encoding an arrow schema");
  int rc = 0;
  size_t n = 0;
  for (int c = s->first_column; !rc && c >= 0; c = s->fields[c].next_sibling)
    rc = field_table(&fb, s, c, &cols[n++]);
  arw_fb_ref fields, schema;
  if (!rc) rc = arw_fb_vec_refs(&fb, cols, n, &fields);
  if (!rc) rc = arw_fb_table_start(&fb);
  if (!rc) rc = arw_fb_add_ref(&fb, SCHEMA_FIELDS, fields); /* endianness: Little (default) */
  if (!rc) rc = arw_fb_table_end(&fb, &schema);
  if (!rc) rc = write_message(out, &fb, schema, FB_HEADER_SCHEMA, &no_body);
  free(cols);
  arw_fb_free(&fb);
  return rc;
}

/* ---- record batch --------------------------------------------------------------------------- */

/* What a batch message accumulates: FieldNode and Buffer structs (16 bytes each, as
 * flatbuffer inline structs) and the body. */
typedef struct batch_enc {
  arw_buf nodes;
  arw_buf buffers;
  arw_buf body;
} batch_enc;

/* Adds one body buffer (n bytes at p, or n zero bytes when p is NULL), 8-byte aligned. */
static int enc_buffer(batch_enc *e, const void *p, size_t n) {
  int rc = arw_buf_put_u64(&e->buffers, e->body.len);
  if (!rc) rc = arw_buf_put_u64(&e->buffers, n);
  if (!rc) rc = p ? arw_buf_put(&e->body, p, n) : arw_buf_zeros(&e->body, n);
  if (!rc) rc = arw_buf_pad(&e->body, 8);
  return rc;
}

/* Checks the invariants of field id's column that the writer relies on. */
static int col_check(const arw_batch *b, int id, size_t want_len) {
  const arw_field *f = &b->schema->fields[id];
  const arw_col *c = &b->cols[id];
  if (c->length != want_len)
    return dd_err_set(DD_EINVAL, "arrow field '%s' has %zu values, expected %zu", f->name,
                      c->length, want_len);
  if (arw__has_offsets(f->kind) && c->offsets.len != 4 * (c->length + 1))
    return dd_err_set(DD_EINVAL, "arrow field '%s': offsets out of step", f->name);
  if ((f->kind == ARW_LIST || f->kind == ARW_MAP) && c->length > 0) {
    const uint8_t *last = c->offsets.data + 4 * c->length;
    size_t end = (size_t)last[0] | (size_t)last[1] << 8 | (size_t)last[2] << 16 |
                 (size_t)last[3] << 24;
    if (end != b->cols[f->first_child].length)
      return dd_err_set(DD_EINVAL, "arrow field '%s': child values appended after the last "
                        "value (call arw_append_done)", f->name);
  }
  return 0;
}

/* Length the children of field id must have. */
static size_t child_len(const arw_batch *b, int id) {
  const arw_field *f = &b->schema->fields[id];
  if (f->kind == ARW_LIST || f->kind == ARW_MAP) return b->cols[f->first_child].length;
  return b->cols[id].length; /* struct: one child slot per struct slot */
}

/* Adds the node and buffers of field id, then its children's, in pre-order. */
static int enc_field(batch_enc *e, const arw_batch *b, int id, size_t want_len) {
  const arw_field *f = &b->schema->fields[id];
  const arw_col *c = &b->cols[id];
  int rc = col_check(b, id, want_len);
  if (!rc) rc = arw_buf_put_u64(&e->nodes, c->length);
  if (!rc) rc = arw_buf_put_u64(&e->nodes, c->null_count);
  if (f->kind == ARW_NULL) return rc; /* Null has no buffers */
  if (!rc) rc = enc_buffer(e, c->validity.data, c->null_count ? (c->length + 7) / 8 : 0);
  if (!rc && arw__has_offsets(f->kind)) rc = enc_buffer(e, c->offsets.data, c->offsets.len);
  if (!rc && !arw__nested(f->kind))
    rc = enc_buffer(e, c->values.data, c->values.len);
  size_t clen = child_len(b, id);
  for (int ch = f->first_child; !rc && ch >= 0; ch = b->schema->fields[ch].next_sibling)
    rc = enc_field(e, b, ch, clen);
  return rc;
}

int arw_write_batch(arw_buf *out, const arw_batch *b) {
  const arw_schema *s = b->schema;
  batch_enc e = {ARW_BUF_INIT, ARW_BUF_INIT, ARW_BUF_INIT};
  arw_fb fb = ARW_FB_INIT;
  size_t rows = arw_batch_rows(b);
  int rc = 0;
  for (int c = s->first_column; !rc && c >= 0; c = s->fields[c].next_sibling)
    rc = enc_field(&e, b, c, rows);
  arw_fb_ref nodes, buffers, batch;
  if (!rc) rc = arw_fb_vec_structs(&fb, e.nodes.data, 16, e.nodes.len / 16, 8, &nodes);
  if (!rc) rc = arw_fb_vec_structs(&fb, e.buffers.data, 16, e.buffers.len / 16, 8, &buffers);
  if (!rc) rc = arw_fb_table_start(&fb);
  if (!rc) rc = arw_fb_add_i64(&fb, BATCH_LENGTH, (int64_t)rows, 0);
  if (!rc) rc = arw_fb_add_ref(&fb, BATCH_NODES, nodes);
  if (!rc) rc = arw_fb_add_ref(&fb, BATCH_BUFFERS, buffers);
  if (!rc) rc = arw_fb_table_end(&fb, &batch);
  if (!rc) rc = write_message(out, &fb, batch, FB_HEADER_RECORD_BATCH, &e.body);
  arw_fb_free(&fb);
  arw_buf_free(&e.nodes);
  arw_buf_free(&e.buffers);
  arw_buf_free(&e.body);
  return rc;
}

int arw_write_stream(arw_buf *out, const arw_batch *b) {
  int rc = arw_write_schema(out, b->schema);
  if (!rc) rc = arw_write_batch(out, b);
  if (!rc) rc = arw_write_eos(out);
  return rc;
}
