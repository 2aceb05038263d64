/* arrow.h: dd_arrow, a small writer of the Apache Arrow IPC *streaming* format, used to
 * return query results to Spark Connect clients (ExecutePlanResponse.ArrowBatch.data).
 *
 * Types: Utf8, Binary, Int8/16/32/64, Float32/64, Decimal128(precision, scale), Null,
 * Boolean, Date32, Timestamp(microsecond, "UTC" or no time zone), and the nested List<T>,
 * Map<K,V> and Struct{...} of any of them. Every column may hold nulls (validity bitmaps).
 *
 * Besides building and writing, a batch can be read back (arw_batch_view: a field's
 * length, null count, validity bits, offsets and values, as Arrow lays them out), filled in
 * bulk (arw_append_fixed, arw_append_strs, arw_append_nulls), and rows of one batch
 * gathered into another (arw_batch_take, arw_batch_slice, arw_batch_append_rows). The
 * schema's field tree can be walked (arw_field_*) and subtrees copied between schemas.
 *
 * Use:
 *   arw_schema *s; arw_schema_new(&s);
 *   int id, tags, kv, k, v;
 *   arw_schema_add(s, ARW_ROOT, "id", ARW_INT64, false, &id);
 *   arw_schema_add(s, ARW_ROOT, "tags", ARW_LIST, true, &tags);
 *   arw_schema_add(s, tags, "element", ARW_UTF8, true, NULL);      list element
 *   arw_schema_add(s, ARW_ROOT, "props", ARW_MAP, true, &kv);
 *   arw_schema_add(s, kv, "key", ARW_UTF8, false, &k);              map key, then value
 *   arw_schema_add(s, kv, "value", ARW_UTF8, true, &v);
 *   arw_batch *b; arw_batch_new(&b, s);
 *   arw_append_i64(b, id, 7);
 *   arw_append_str(b, tag_element, "x", 1); arw_append_done(b, tags);   one list value
 *   arw_append_str(b, k, "a", 1); arw_append_str(b, v, "1", 1); arw_append_done(b, kv);
 *   arw_buf out = ARW_BUF_INIT;
 *   arw_write_schema(&out, s); arw_write_batch(&out, b); arw_write_eos(&out);
 *
 * A schema is immutable once a batch uses it (the batch borrows it: free the batch
 * first). Neither object is thread-safe; distinct objects may be used from distinct
 * threads. All functions return 0 or a negative DD_E* code (common/err.h). */
#ifndef DD_ARROW_ARROW_H
#define DD_ARROW_ARROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/arrow/buf.h"

typedef enum arw_kind {
  ARW_UTF8,
  ARW_BINARY,
  ARW_INT32,
  ARW_INT64,
  ARW_FLOAT64,
  ARW_BOOL,
  ARW_DATE32,        /* days since 1970-01-01, int32 */
  ARW_TIMESTAMP,     /* microseconds since the epoch, no time zone (Spark TimestampNTZ) */
  ARW_TIMESTAMP_UTC, /* microseconds since the epoch, time zone "UTC" (Spark Timestamp) */
  ARW_LIST,          /* one child: the element field */
  ARW_MAP,           /* two children: key (must be non-nullable) then value */
  ARW_STRUCT,        /* any number of children */
  ARW_INT8,
  ARW_INT16,
  ARW_FLOAT32,
  ARW_DECIMAL128,    /* 16-byte little-endian two's complement; precision/scale per field */
  ARW_NULL,          /* every slot null; no buffers (Spark's NullType/void) */
  ARW__ENTRIES,      /* internal: the entries struct inside a map; never passed by callers */
} arw_kind;

/* Decimal128 precision bound (Spark's and Delta's is 38). */
#define ARW_DECIMAL_MAX_PRECISION 38

/* Parent id of a top-level column. */
#define ARW_ROOT (-1)

typedef struct arw_schema arw_schema;
typedef struct arw_batch arw_batch;

/* ---- schema --------------------------------------------------------------------------- */

int arw_schema_new(arw_schema **out);
/* Adds a field named name under parent (ARW_ROOT for a column; a LIST, MAP or STRUCT field
 * id for a child) and returns its id in *out_id (may be NULL). */
int arw_schema_add(arw_schema *s, int parent, const char *name, arw_kind kind, bool nullable,
                   int *out_id);
/* Adds a DECIMAL128 field of the given precision (1..38) and scale (0..precision). */
int arw_schema_add_decimal(arw_schema *s, int parent, const char *name, int precision,
                           int scale, bool nullable, int *out_id);
/* Number of top-level columns. */
size_t arw_schema_ncolumns(const arw_schema *s);
void arw_schema_free(arw_schema *s);

/* ---- schema introspection ---------------------------------------------------------------
 * Field ids run 0..arw_schema_nfields()-1. A map's key and value are its children 0 and 1
 * (the hidden entries struct is skipped: arw_field_parent of a key is the map). Functions
 * taking an id return -1 / NULL / false for an id that is not a visible field. */

/* Number of field ids (visible fields and map entries structs). */
int arw_schema_nfields(const arw_schema *s);
/* Id of the i-th top-level column (-1 past the end). */
int arw_schema_column(const arw_schema *s, size_t i);
/* Id of the child of parent (ARW_ROOT for columns) named name, -1 when none. */
int arw_schema_find(const arw_schema *s, int parent, const char *name);
/* The same with names compared case-insensitively (Spark's resolution of columns and fields). */
int arw_schema_find_ci(const arw_schema *s, int parent, const char *name);
const char *arw_field_name(const arw_schema *s, int id);
arw_kind arw_field_kind(const arw_schema *s, int id); /* ARW_NULL for a bad id */
bool arw_field_nullable(const arw_schema *s, int id);
int arw_field_precision(const arw_schema *s, int id); /* DECIMAL128; 0 for other kinds */
int arw_field_scale(const arw_schema *s, int id);
int arw_field_parent(const arw_schema *s, int id);    /* ARW_ROOT for a column */
int arw_field_nchildren(const arw_schema *s, int id);
int arw_field_child(const arw_schema *s, int id, int i); /* -1 past the end */
/* Spark's simpleString of field id's type ("int", "decimal(10,2)", "struct<a:int,b:string>",
 * "array<bigint>", "map<string,int>") in *out (malloc'ed). */
int arw_type_string(char **out, const arw_schema *s, int id);
/* Copies field src_id of src and its whole subtree under dst_parent of dst, named name
 * (NULL keeps the source name); the copy's id in *out_id (may be NULL). */
int arw_schema_copy_field(arw_schema *dst, int dst_parent, const arw_schema *src, int src_id,
                          const char *name, int *out_id);

/* ---- batch ----------------------------------------------------------------------------- */

/* A record batch under construction for schema s (borrowed: s must outlive the batch).
 * Rows are appended column by column: every top-level column must get the same number of
 * values before writing, and every child of a struct the same number as the struct. */
int arw_batch_new(arw_batch **out, const arw_schema *s);

/* Appends a NULL to field id. For a struct, each child also gets a placeholder slot (a
 * null, or for a non-nullable child an empty value). A null list or map spans, hidden, any
 * child values appended since the field's previous value. */
int arw_append_null(arw_batch *b, int id);
/* Appends a value to a field of the matching kind. */
int arw_append_str(arw_batch *b, int id, const char *s, size_t len); /* UTF8, BINARY */
/* INT8, INT16 (DD_EINVAL when v does not fit), INT32, DATE32 */
int arw_append_i32(arw_batch *b, int id, int32_t v);
int arw_append_i64(arw_batch *b, int id, int64_t v);                 /* INT64, TIMESTAMP* */
int arw_append_f64(arw_batch *b, int id, double v);
int arw_append_f32(arw_batch *b, int id, float v);
int arw_append_bool(arw_batch *b, int id, bool v);
/* DECIMAL128: the unscaled value, 16 bytes little-endian two's complement. */
int arw_append_dec128(arw_batch *b, int id, const uint8_t le[16]);

/* Bulk appends. valid (may be NULL: all valid) holds one byte per value, 0 = null; a null
 * slot's value is kept as given (write zeros). A non-nullable field refuses nulls.
 * arw_append_fixed: n values of a fixed-width kind (INT8..INT64, FLOAT32/64, DATE32,
 * TIMESTAMP*, DECIMAL128: arw_kind_width bytes each, little-endian; BOOL: one byte each,
 * nonzero = true). */
int arw_append_fixed(arw_batch *b, int id, const void *values, size_t n, const uint8_t *valid);
/* arw_append_fixed of n values without nulls into a column still empty, by taking the
 * caller's malloc'd buffer instead of copying it: *values (n values, *cap bytes of room)
 * becomes the column's, and the column's previous memory (maybe NULL, *cap 0) comes back
 * in *values and *cap for the caller to fill next time or free. A column that is not
 * empty, a BOOL, or a buffer too small for n copies as arw_append_fixed, leaving *values
 * and *cap as they were. */
int arw_append_fixed_swap(arw_batch *b, int id, void **values, size_t *cap, size_t n);
/* n UTF8/BINARY values: value i is data[offsets[i] .. offsets[i+1]) (offsets: n + 1
 * entries, any start). */
int arw_append_strs(arw_batch *b, int id, const uint8_t *data, const int32_t *offsets,
                    size_t n, const uint8_t *valid);
/* Room for n strings (UTF8, BINARY) of total bytes in all, for the caller to write without
 * a staging copy: their bytes at *data (contiguous, in order) and, for each string i, its
 * end offset *base + (bytes of strings 0..i) at (*ends)[i]; a null (valid[i] == 0, valid
 * NULL: none) is empty. The caller must fill all of it before the batch is used. */
int arw_append_strs_space(arw_batch *b, int id, size_t n, size_t total, const uint8_t *valid,
                          uint8_t **data, int32_t **ends, int32_t *base);
/* n nulls (for a struct, each child gets its placeholder slots). */
int arw_append_nulls(arw_batch *b, int id, size_t n);
/* n slots of a STRUCT, LIST or MAP field with validity valid (NULL: all valid), leaving the
 * children to the caller: a struct's children need one slot per struct slot (null or
 * not), a list's element lengths[i] slots for slot i (a map's key and value as many; a
 * null slot may span hidden child slots). lengths is ignored for a struct. */
int arw_append_nested(arw_batch *b, int id, size_t n, const uint8_t *valid,
                      const int32_t *lengths);

/* Byte width of a fixed-width kind's value (BOOL: 0, it is bits), 0 for the others. */
size_t arw_kind_width(arw_kind k);

/* ---- reading a batch ---------------------------------------------------------------------
 * A view of field id's data, valid until the batch is next changed. For LIST and MAP,
 * offsets index the child's slots (a map's key and value children, which have as many
 * slots as entries); for STRUCT each child has one slot per struct slot. Values: fixed
 * width little-endian (arw_kind_width bytes each), BOOL bits LSB-first, UTF8/BINARY bytes
 * indexed by offsets; NULL for nested kinds and ARW_NULL. */
typedef struct arw_view {
  arw_kind kind;
  size_t length;
  size_t null_count;
  const uint8_t *validity; /* LSB-first bits, NULL when null_count == 0 */
  const int32_t *offsets;  /* length + 1 entries (UTF8, BINARY, LIST, MAP), else NULL */
  const uint8_t *values;
} arw_view;

int arw_batch_view(const arw_batch *b, int id, arw_view *out);
/* Is slot i valid (not null)? */
static inline bool arw_view_valid(const arw_view *v, size_t i) {
  if (v->kind == ARW_NULL) return false;
  return !v->validity || (v->validity[i / 8] >> (i % 8)) & 1;
}
static inline bool arw_view_bool(const arw_view *v, size_t i) {
  return (v->values[i / 8] >> (i % 8)) & 1;
}

/* The schema a batch was made for. */
const arw_schema *arw_batch_schema(const arw_batch *b);
/* Appends one non-null nested value. LIST/MAP: its elements (entries) are the child
 * values appended since the field's previous value. STRUCT: marks the slot valid; append
 * one value to each child as well (before or after). */
int arw_append_done(arw_batch *b, int id);

/* Number of rows (values in the first column). */
size_t arw_batch_rows(const arw_batch *b);
/* Bytes of the batch's buffers in use (validity, offsets and values of every field). */
size_t arw_batch_bytes(const arw_batch *b);
/* Appends rows idx[0..n) of src to dst. dst and src must have the same schema (the same
 * object, or one with the same field tree: kinds, precision/scale, nullability). Nested
 * values are copied whole. */
int arw_batch_append_rows(arw_batch *dst, const arw_batch *src, const size_t *idx, size_t n);
/* A new batch (same schema) of rows idx[0..n) of b, in that order (an index may repeat). */
int arw_batch_take(arw_batch **out, const arw_batch *b, const size_t *idx, size_t n);
/* A new batch (same schema) of rows [start, end) of b. */
int arw_batch_slice(arw_batch **out, const arw_batch *b, size_t start, size_t end);

/* Empties the batch for reuse with the same schema. */
void arw_batch_clear(arw_batch *b);
void arw_batch_free(arw_batch *b);

/* ---- IPC stream -------------------------------------------------------------------------- */

/* Appends the Schema message. */
int arw_write_schema(arw_buf *out, const arw_schema *s);
/* Appends one RecordBatch message holding every row of b (DD_EINVAL when the column
 * lengths disagree). */
int arw_write_batch(arw_buf *out, const arw_batch *b);
/* Appends the end-of-stream marker. */
int arw_write_eos(arw_buf *out);
/* Appends a complete stream holding one batch: schema, b, end-of-stream. This is the
 * shape of one Spark Connect ExecutePlanResponse.ArrowBatch.data. */
int arw_write_stream(arw_buf *out, const arw_batch *b);

#endif
