/* arrow_read.h: a reader of the Apache Arrow IPC *streaming* format (the bytes a Spark
 * Connect client puts in LocalRelation.data for createDataFrame), into the same
 * arw_schema / arw_batch the writer uses (arrow.h).
 *
 *   arw_reader *r; arw_reader_open(&r, data, len);
 *   const arw_schema *s = arw_reader_schema(r);
 *   arw_batch *b;
 *   while (!(rc = arw_reader_next(r, &b)) && b) { ...; arw_batch_free(b); }
 *   arw_reader_free(r);   after every batch it returned is freed
 *
 * Accepted: the kinds of arrow.h (Null, signed Int8..Int64, Float32/64, Decimal128, Bool,
 * Utf8, Binary, Date32 (DAY), Timestamp(MICROSECOND, no zone or any zone: a zone reads as
 * ARW_TIMESTAMP_UTC), List, Map, Struct), little-endian, metadata V4/V5, uncompressed
 * bodies, no dictionaries. Anything else, and every inconsistency (a buffer beyond the
 * body, offsets out of range, lengths that disagree, nesting deeper than
 * ARW_READ_MAX_DEPTH), is DD_EINVAL naming what is wrong; the input is never trusted.
 * The bytes are borrowed during arw_reader_open and arw_reader_next only (batches copy
 * their buffers). Not thread-safe. */
#ifndef DD_ARROW_ARROW_READ_H
#define DD_ARROW_ARROW_READ_H

#include <stddef.h>
#include <stdint.h>

#include "store/arrow/arrow.h"

/* The deepest field nesting accepted (a column is depth 1). */
#define ARW_READ_MAX_DEPTH 64

typedef struct arw_reader arw_reader;

/* Parses the Schema message at the start of the stream. The bytes must stay valid until
 * the last arw_reader_next. */
int arw_reader_open(arw_reader **out, const uint8_t *data, size_t len);
/* Borrowed; valid until arw_reader_free. */
const arw_schema *arw_reader_schema(const arw_reader *r);
/* The next record batch (the caller's; free it before the reader), or *out = NULL at the
 * end of the stream (end-of-stream marker or end of the bytes). */
int arw_reader_next(arw_reader *r, arw_batch **out);
/* Accepts NULL. */
void arw_reader_free(arw_reader *r);

#endif
