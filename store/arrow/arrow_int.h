/* arrow_int.h: dd_arrow internals shared by schema.c, batch.c and writer.c.
 *
 * The Arrow IPC stream this module writes (Arrow Columnar Format, "IPC Streaming Format"):
 *
 *   stream  := schema-message record-batch-message* eos
 *   message := 0xFFFFFFFF (continuation), int32 metadata length M, M bytes of flatbuffer
 *              Message (padded with zeros so 8 + M is a multiple of 8), then the body
 *   eos     := 0xFFFFFFFF 0x00000000
 *
 * The Message flatbuffer names the header kind (Schema = 1, RecordBatch = 3), the header
 * table, the metadata version (V5 = 4) and the body length. A Schema message has no body.
 * A RecordBatch header lists, in pre-order over the field tree (a field, then its children
 * depth-first), one FieldNode {length, null_count} per field and that field's buffers as
 * {offset, length} into the body; every buffer starts at an 8-byte-aligned body offset.
 *
 * Buffers per field kind:
 *   UTF8, BINARY          validity, int32 offsets (length + 1), bytes
 *   INT32, DATE32         validity, int32 values
 *   INT64, FLOAT64, TS    validity, 8-byte values
 *   BOOL                  validity, value bits
 *   LIST, MAP             validity, int32 offsets (length + 1); then the child field
 *   STRUCT                validity; then each child field
 * Validity and boolean bitmaps are LSB-first (bit i of byte i/8 for slot i); a field with
 * no nulls writes a zero-length validity buffer. A MAP is a list of a non-null STRUCT
 * "entries" with children key and value; here that struct is a real field of the schema
 * (created with the map, hidden from callers, who add key and value under the map id). */
#ifndef DD_ARROW_ARROW_INT_H
#define DD_ARROW_ARROW_INT_H

#include "store/arrow/arrow.h"
#include "store/arrow/buf.h"

typedef struct arw_field {
  char *name;
  arw_kind kind;
  bool nullable;
  int parent;       /* ARW_ROOT for a column */
  int first_child;  /* -1 when none; children in insertion order via next_sibling */
  int last_child;
  int next_sibling;
  int nchildren;
  int precision;    /* DECIMAL128 only */
  int scale;
} arw_field;

struct arw_schema {
  arw_field *fields; /* indexed by field id */
  int nfields;
  int cap;
  int first_column; /* top-level fields, linked through next_sibling */
  int last_column;
  size_t ncolumns;
  int nbatches;     /* live batches borrowing the schema; adding fields is refused then */
};

/* One field's data in a batch. */
typedef struct arw_col {
  size_t length;
  size_t null_count;
  arw_buf validity; /* one bit per slot, kept even when there are no nulls */
  arw_buf offsets;  /* int32, UTF8/BINARY/LIST/MAP only; starts with 0 */
  arw_buf values;   /* fixed-width values, string bytes, or BOOL bits */
} arw_col;

struct arw_batch {
  const arw_schema *schema;
  arw_col *cols; /* indexed by field id */
};

/* Does this kind keep int32 offsets? */
static inline bool arw__has_offsets(arw_kind k) {
  return k == ARW_UTF8 || k == ARW_BINARY || k == ARW_LIST || k == ARW_MAP;
}

/* The views hand out offsets and values as host integers over little-endian buffers. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "dd_arrow assumes a little-endian host"
#endif

/* Byte width of a fixed-width kind, 0 for the others. */
static inline size_t arw__width(arw_kind k) {
  switch (k) {
    case ARW_INT8: return 1;
    case ARW_INT16: return 2;
    case ARW_INT32:
    case ARW_FLOAT32:
    case ARW_DATE32: return 4;
    case ARW_INT64:
    case ARW_FLOAT64:
    case ARW_TIMESTAMP:
    case ARW_TIMESTAMP_UTC: return 8;
    case ARW_DECIMAL128: return 16;
    default: return 0;
  }
}

/* Is this a nested kind (children, no values buffer)? */
static inline bool arw__nested(arw_kind k) {
  return k == ARW_LIST || k == ARW_MAP || k == ARW_STRUCT || k == ARW__ENTRIES;
}

/* batch.c helpers shared with bulk.c and take.c. */
/* Appends bit `on` at index n of a bitmap holding n bits. */
int arw__bits_push(arw_buf *bits, size_t n, bool on);
/* Records one more slot in c: its validity bit and the count. */
int arw__slot_push(arw_col *c, bool valid);
/* Appends end as the next int32 offset. */
int arw__offset_push(arw_col *c, size_t end);
/* DD_EINVAL unless id is a field of b's schema. */
int arw__field_check(const arw_batch *b, int id, const char *what);
/* Appends a slot with no value (a null when !valid, else an empty filler value). */
int arw__append_empty(arw_batch *b, int id, bool valid);
/* Appends n bits to a bitmap holding len bits: bit i is src[i] != 0, or all `fill` when
 * src is NULL. */
int arw__bits_append(arw_buf *bits, size_t len, const uint8_t *src, bool fill, size_t n);

#endif
