/* arrow.h: dd_arrow, a small writer of the Apache Arrow IPC *streaming* format, used to
 * return query results to Spark Connect clients (ExecutePlanResponse.ArrowBatch.data).
 *
 * Types: Utf8, Binary, Int32, Int64, Float64, Boolean, Date32, Timestamp(microsecond,
 * "UTC" or no time zone), and the nested List<T>, Map<K,V> and Struct{...} of any of them.
 * Every column may hold nulls (validity bitmaps).
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
  ARW__ENTRIES,      /* internal: the entries struct inside a map; never passed by callers */
} arw_kind;

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
/* Number of top-level columns. */
size_t arw_schema_ncolumns(const arw_schema *s);
void arw_schema_free(arw_schema *s);

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
int arw_append_i32(arw_batch *b, int id, int32_t v);                 /* INT32, DATE32 */
int arw_append_i64(arw_batch *b, int id, int64_t v);                 /* INT64, TIMESTAMP* */
int arw_append_f64(arw_batch *b, int id, double v);
int arw_append_bool(arw_batch *b, int id, bool v);
/* Appends one non-null nested value. LIST/MAP: its elements (entries) are the child
 * values appended since the field's previous value. STRUCT: marks the slot valid; append
 * one value to each child as well (before or after). */
int arw_append_done(arw_batch *b, int id);

/* Number of rows (values in the first column). */
size_t arw_batch_rows(const arw_batch *b);
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
