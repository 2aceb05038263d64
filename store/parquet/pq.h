/* pq.h: deltad's Parquet reader and writer (public API, prefix pq_).
 *
 * Reading: open a file (memory buffer or path), inspect the footer (row groups, column
 * chunk statistics, key-value metadata, schema tree), then stream rows through a cursor
 * that reads only the projected column chunks and assembles each row as a nested pq_value.
 * Rows are produced one row group at a time: the decoded columns of the current row group
 * are held in memory, assembled rows are not accumulated.
 *
 * Writing: describe the schema with a pq_wfield tree, append rows as pq_value trees, close.
 *
 * Errors follow common/err.h: functions return 0 or a negative DD_E* code and set the
 * message with dd_err_set (malformed files give DD_ECORRUPT, unsupported features
 * DD_EUNSUPPORTED). Objects are not thread-safe; distinct objects may be used on distinct
 * threads, and several cursors may read one pq_file concurrently. */
#ifndef DD_STORE_PARQUET_PQ_H
#define DD_STORE_PARQUET_PQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---------------------------------------------------------------------------------------
 * Format enums (numeric values are those of parquet.thrift). */

typedef enum pq_type {
  PQ_T_BOOLEAN = 0, PQ_T_INT32 = 1, PQ_T_INT64 = 2, PQ_T_INT96 = 3,
  PQ_T_FLOAT = 4, PQ_T_DOUBLE = 5, PQ_T_BYTE_ARRAY = 6, PQ_T_FIXED_LEN_BYTE_ARRAY = 7,
  PQ_T_GROUP = -1, /* a schema node that is not a leaf */
} pq_type;

typedef enum pq_repetition { PQ_REQUIRED = 0, PQ_OPTIONAL = 1, PQ_REPEATED = 2 } pq_repetition;

/* ConvertedType (legacy annotation); PQ_CT_NONE when absent. */
typedef enum pq_converted {
  PQ_CT_NONE = -1, PQ_CT_UTF8 = 0, PQ_CT_MAP = 1, PQ_CT_MAP_KEY_VALUE = 2, PQ_CT_LIST = 3,
  PQ_CT_ENUM = 4, PQ_CT_DECIMAL = 5, PQ_CT_DATE = 6, PQ_CT_TIME_MILLIS = 7,
  PQ_CT_TIME_MICROS = 8, PQ_CT_TIMESTAMP_MILLIS = 9, PQ_CT_TIMESTAMP_MICROS = 10,
  PQ_CT_UINT_8 = 11, PQ_CT_UINT_16 = 12, PQ_CT_UINT_32 = 13, PQ_CT_UINT_64 = 14,
  PQ_CT_INT_8 = 15, PQ_CT_INT_16 = 16, PQ_CT_INT_32 = 17, PQ_CT_INT_64 = 18,
  PQ_CT_JSON = 19, PQ_CT_BSON = 20, PQ_CT_INTERVAL = 21,
} pq_converted;

/* LogicalType union member (field id in parquet.thrift); PQ_LT_NONE when absent. */
typedef enum pq_logical_kind {
  PQ_LT_NONE = 0, PQ_LT_STRING = 1, PQ_LT_MAP = 2, PQ_LT_LIST = 3, PQ_LT_ENUM = 4,
  PQ_LT_DECIMAL = 5, PQ_LT_DATE = 6, PQ_LT_TIME = 7, PQ_LT_TIMESTAMP = 8,
  PQ_LT_INTEGER = 10, PQ_LT_UNKNOWN = 11, PQ_LT_JSON = 12, PQ_LT_BSON = 13, PQ_LT_UUID = 14,
  PQ_LT_FLOAT16 = 15, PQ_LT_VARIANT = 16, PQ_LT_OTHER = 99, /* a member this reader skips */
} pq_logical_kind;

typedef enum pq_time_unit { PQ_UNIT_NONE = 0, PQ_UNIT_MILLIS = 1, PQ_UNIT_MICROS = 2,
                            PQ_UNIT_NANOS = 3 } pq_time_unit;

typedef struct pq_logical {
  pq_logical_kind kind;
  int32_t scale, precision;  /* DECIMAL */
  pq_time_unit unit;         /* TIME, TIMESTAMP */
  bool adjusted_to_utc;      /* TIME, TIMESTAMP */
  int32_t bit_width;         /* INTEGER */
  bool is_signed;            /* INTEGER */
} pq_logical;

typedef enum pq_codec {
  PQ_CODEC_UNCOMPRESSED = 0, PQ_CODEC_SNAPPY = 1, PQ_CODEC_GZIP = 2, PQ_CODEC_LZO = 3,
  PQ_CODEC_BROTLI = 4, PQ_CODEC_LZ4 = 5, PQ_CODEC_ZSTD = 6, PQ_CODEC_LZ4_RAW = 7,
} pq_codec;

/* ---------------------------------------------------------------------------------------
 * Schema tree (read-only; owned by the pq_file, valid until pq_file_free).
 *
 * `shape` is the structure this reader resolved from the tree, by structure and not by
 * names: LIST for a LIST-annotated group (3-level or legacy 2-level) and for a repeated
 * field outside any LIST/MAP group; MAP for a MAP/MAP_KEY_VALUE group holding one repeated
 * key/value group; STRUCT for other groups; PRIMITIVE for leaves. */

typedef enum pq_shape { PQ_SHAPE_PRIMITIVE, PQ_SHAPE_STRUCT, PQ_SHAPE_LIST,
                        PQ_SHAPE_MAP } pq_shape;

typedef struct pq_field pq_field;
struct pq_field {
  const char *name;          /* NUL-terminated */
  pq_type type;              /* PQ_T_GROUP for groups */
  int32_t type_length;       /* FIXED_LEN_BYTE_ARRAY width, else 0 */
  pq_repetition repetition;  /* the root is REQUIRED */
  pq_converted converted;
  pq_logical logical;
  int32_t scale, precision;  /* legacy DECIMAL fields (0 when absent) */
  bool has_field_id;
  int32_t field_id;
  uint32_t num_children;
  const pq_field *children;  /* array of num_children */
  const pq_field *parent;    /* NULL for the root */
  int16_t max_def, max_rep;  /* levels of this node */
  int32_t column;            /* leaf: index among the leaves (column chunks); else -1 */
  pq_shape shape;
  bool is_string;            /* BYTE_ARRAY annotated STRING/UTF8/ENUM/JSON */
};

/* ---------------------------------------------------------------------------------------
 * Values: one nested value model for reading and writing. 16 bytes, plain data.
 *
 * STRUCT: u.items has len fields, in the order of the schema's children (for a cursor, the
 *   order of the projected schema, see pq_cursor_schema). LIST: u.items has len elements.
 *   MAP: u.items has 2*len values, key0, value0, key1, value1, ...
 * BYTES (BYTE_ARRAY) and FIXED: u.bytes/len; is_string is set for UTF8/STRING annotated
 *   columns. INT96: u.bytes points at 12 bytes, len = 12. */

typedef enum pq_vkind {
  PQ_V_NULL = 0, PQ_V_BOOL, PQ_V_INT32, PQ_V_INT64, PQ_V_FLOAT, PQ_V_DOUBLE, PQ_V_BYTES,
  PQ_V_FIXED, PQ_V_INT96, PQ_V_STRUCT, PQ_V_LIST, PQ_V_MAP,
} pq_vkind;

typedef struct pq_value pq_value;
struct pq_value {
  uint8_t kind;       /* pq_vkind */
  uint8_t is_string;  /* BYTES only */
  uint32_t len;       /* BYTES/FIXED/INT96: bytes; STRUCT: fields; LIST: elements; MAP: entries */
  union {
    bool b;
    int32_t i32;
    int64_t i64;
    float f;
    double d;
    const uint8_t *bytes;
    const pq_value *items;
  } u;
};

/* ---------------------------------------------------------------------------------------
 * Opening a file and its footer. */

typedef struct pq_file pq_file;

/* Opens a Parquet file held in memory. The buffer is borrowed: it must stay valid and
 * unchanged until pq_file_free. Parses and validates the footer (bounded). */
int pq_file_open_mem(pq_file **out, const uint8_t *buf, size_t len);
/* Opens a file by path (memory-mapped read-only; the mapping belongs to the pq_file). */
int pq_file_open_path(pq_file **out, const char *path);
/* Opens a file read by ranges: read(ctx, off, len, out) fills out with exactly len bytes
 * at offset off of a file of size bytes (0 or a DD_E* code with the message set). The
 * footer is read at open (the last 64 KiB in one read, then the rest of a longer footer;
 * a file that small is read whole then and never again), and each column chunk when a
 * column of it is decoded, into that column's memory (values point into it until the
 * column is read again or freed). So a projected scan reads the footer and the chunks it
 * decodes, nothing else. read is called from every thread that decodes a column of the
 * file; ctx must outlive the pq_file. */
typedef int (*pq_read_fn)(void *ctx, uint64_t off, size_t len, uint8_t *out);
int pq_file_open_reader(pq_file **out, pq_read_fn read, void *ctx, uint64_t size);
void pq_file_free(pq_file *f);

int64_t pq_file_num_rows(const pq_file *f);
const char *pq_file_created_by(const pq_file *f); /* borrowed; NULL if absent */
/* Key-value metadata: count, then entry i (value may be NULL). Borrowed. */
size_t pq_file_kv_count(const pq_file *f);
void pq_file_kv(const pq_file *f, size_t i, const char **key, const char **value);
/* Schema root (a STRUCT group named after the schema) and the leaves in column order. */
const pq_field *pq_file_schema(const pq_file *f);
size_t pq_file_num_columns(const pq_file *f);
const pq_field *pq_file_column(const pq_file *f, size_t col);
/* Finds a node by dotted path from the root ("add.path"); NULL if none. */
const pq_field *pq_file_find(const pq_file *f, const char *dotted_path);

size_t pq_file_num_row_groups(const pq_file *f);
int64_t pq_row_group_num_rows(const pq_file *f, size_t rg);

/* Column chunk statistics as stored. min/max are the deprecated fields 2/1 (signed
 * order), min_value/max_value the newer fields 6/5; byte strings are in the
 * column's PLAIN encoding (little-endian numbers, raw bytes for BYTE_ARRAY). Borrowed. */
typedef struct pq_bytes { const uint8_t *ptr; size_t len; } pq_bytes;
typedef struct pq_stats {
  bool has_min, has_max, has_min_value, has_max_value, has_null_count, has_distinct_count;
  pq_bytes min, max, min_value, max_value;
  int64_t null_count, distinct_count;
} pq_stats;

typedef struct pq_chunk_info {
  pq_type type;
  pq_codec codec;
  int64_t num_values;
  int64_t total_compressed_size, total_uncompressed_size;
  int64_t data_page_offset, dictionary_page_offset; /* dictionary: -1 when absent */
  bool has_stats;
  pq_stats stats;
} pq_chunk_info;

/* Fills *out for column chunk (rg, col). DD_EINVAL for indices out of range. */
int pq_chunk_get(pq_chunk_info *out, const pq_file *f, size_t rg, size_t col);

/* ---------------------------------------------------------------------------------------
 * Row cursor with projection. */

typedef struct pq_read_opts {
  unsigned version;
  /* Dotted paths of the nodes to read ("add.path", "add.partitionValues", "metaData").
   * A path selects its whole subtree; paths go through structs only (a LIST or MAP node
   * is selected whole). NULL/0: every column. */
  const char *const *columns;
  size_t num_columns;
  /* When true, paths absent from the file are ignored (not in the projected schema);
   * when false they fail with DD_ENOTFOUND. */
  bool missing_ok;
  /* Read only this row group (-1: all). */
  int64_t row_group;
} pq_read_opts;
#define PQ_READ_OPTS_VERSION 1
#define PQ_READ_OPTS_INIT {PQ_READ_OPTS_VERSION, NULL, 0, false, -1}

/* Projected schema node: the row's shape. STRUCT children are the selected fields in
 * schema order; LIST has one child (the element); MAP has two (key, value). `field` is the
 * physical schema node it comes from (for a repeated field read as a LIST, both the list
 * and its element name that same field). */
typedef struct pq_pnode pq_pnode;
struct pq_pnode {
  const char *name;
  pq_shape shape;
  const pq_field *field;
  uint32_t num_children;
  const pq_pnode *children;
};

typedef struct pq_cursor pq_cursor;

/* Opens a cursor over f (borrowed: f must outlive the cursor). opts may be NULL. */
int pq_cursor_open(pq_cursor **out, const pq_file *f, const pq_read_opts *opts);
/* The projected schema; the row values are STRUCTs following it. Owned by the cursor. */
const pq_pnode *pq_cursor_schema(const pq_cursor *c);
/* Index of child `name` of a STRUCT pnode, or -1. */
int pq_pnode_child(const pq_pnode *n, const char *name);
/* Next row into *out (a STRUCT), or *out = NULL at the end. The row and every pointer in
 * it stay valid until the next pq_cursor_next or pq_cursor_free on this cursor. */
int pq_cursor_next(pq_cursor *c, const pq_value **out);
void pq_cursor_free(pq_cursor *c);

/* ---------------------------------------------------------------------------------------
 * Flat column access: one leaf of one row group, decoded. */

typedef struct pq_column {
  const pq_field *field;
  size_t num_levels;          /* entries (one per value or null/empty marker) */
  const int16_t *def, *rep;   /* num_levels each; NULL when max_def / max_rep is 0 */
  size_t num_values;          /* non-null values */
  /* One of, by field->type: BOOLEAN -> b (0/1 bytes); INT32 -> i32; INT64 -> i64;
   * FLOAT -> f; DOUBLE -> d; INT96 and FIXED_LEN_BYTE_ARRAY -> fixed (type_length or 12
   * bytes each, contiguous); BYTE_ARRAY -> ba. */
  const uint8_t *b;
  const int32_t *i32;
  const int64_t *i64;
  const float *f;
  const double *d;
  const uint8_t *fixed;
  const pq_bytes *ba;
} pq_column;

/* Decodes leaf `col` of row group rg. *out belongs to the caller (pq_column_free); its
 * byte pointers may point into the file buffer, so f must outlive it. */
int pq_column_read(pq_column **out, const pq_file *f, size_t rg, size_t col);
/* Decodes leaf `col` of row group rg into c (from pq_column_read), reusing its memory: for
 * the same leaf of another row group no buffer is allocated again once it is large
 * enough. On error c stays valid (to free, or to reread) but its contents are undefined. */
int pq_column_reread(pq_column *c, const pq_file *f, size_t rg, size_t col);
void pq_column_free(pq_column *c);
/* Exchanges c's value buffer with the caller's malloc'd one (*buf with *cap bytes of
 * room, or NULL and 0): c's decoded values leave in *buf and *cap, and c keeps the given
 * memory for its next decode. c's values are then undefined (its levels stay): reread it
 * to read them again. For handing decoded values to an owner of the same allocator
 * without a copy (arw_append_fixed_swap). */
void pq_column_swap_values(pq_column *c, void **buf, size_t *cap);

/* ---------------------------------------------------------------------------------------
 * Writer. */

typedef enum pq_wkind {
  PQ_W_BOOL, PQ_W_INT32, PQ_W_INT64, PQ_W_FLOAT, PQ_W_DOUBLE,
  PQ_W_STRING,            /* BYTE_ARRAY + STRING (UTF8) */
  PQ_W_BINARY,            /* BYTE_ARRAY */
  PQ_W_FIXED,             /* FIXED_LEN_BYTE_ARRAY of type_length */
  PQ_W_DATE,              /* INT32 + DATE */
  PQ_W_TIMESTAMP_MICROS,  /* INT64 + TIMESTAMP(MICROS, UTC) */
  PQ_W_TIMESTAMP_MILLIS,  /* INT64 + TIMESTAMP(MILLIS, UTC) */
  PQ_W_INT96,             /* INT96 (legacy Spark timestamps) */
  PQ_W_STRUCT,            /* children = fields */
  PQ_W_LIST,              /* 3-level LIST; children[0] = element (named "element") */
  PQ_W_MAP,               /* MAP; children[0] = key (required), children[1] = value */
  PQ_W_INT8,              /* INT32 + INTEGER(8, signed) (Delta byte) */
  PQ_W_INT16,             /* INT32 + INTEGER(16, signed) (Delta short) */
  PQ_W_DECIMAL,           /* DECIMAL(precision, scale): INT32 up to 9 digits, INT64 up to
                           * 18, else FIXED_LEN_BYTE_ARRAY of the fewest bytes (big-endian
                           * two's complement), as Spark writes them */
  PQ_W_TIMESTAMP_NTZ,     /* INT64 + TIMESTAMP(MICROS, not adjusted to UTC) */
} pq_wkind;

/* A writer schema node (caller-owned; copied by pq_writer_open_*). The root is a
 * PQ_W_STRUCT whose name becomes the schema name. Values for a node must have the matching
 * kind (or PQ_V_NULL when nullable): STRUCT->PQ_V_STRUCT with num_children items, LIST->
 * PQ_V_LIST, MAP->PQ_V_MAP, STRING/BINARY->PQ_V_BYTES, FIXED->PQ_V_FIXED, DATE->INT32,
 * TIMESTAMP_*->INT64, INT96->PQ_V_INT96, INT8/INT16->INT32, DECIMAL->INT32, INT64 or
 * FIXED by precision (see pq_wdecimal_bytes). */
typedef struct pq_wfield pq_wfield;
struct pq_wfield {
  const char *name;
  pq_wkind kind;
  bool nullable;
  int32_t type_length;   /* PQ_W_FIXED; PQ_W_DECIMAL: PQ_WDECIMAL(precision, scale) */
  int32_t field_id;      /* written when > 0 */
  size_t num_children;
  const pq_wfield *children;
};
/* PQ_W_DECIMAL carries its precision (1..38) and scale in type_length. */
#define PQ_WDECIMAL(precision, scale) ((int32_t)(precision) << 8 | (int32_t)(scale))

typedef struct pq_writer_opts {
  unsigned version;
  pq_codec codec;              /* UNCOMPRESSED, SNAPPY, GZIP or ZSTD */
  bool dictionary;             /* dictionary-encode columns (falls back to PLAIN if large) */
  int64_t row_group_rows;      /* rows per row group (<= 0: 128 * 1024) */
  size_t page_size;            /* target uncompressed data page bytes (0: 1 MiB) */
  bool statistics;             /* write min/max/null_count per chunk */
  const char *created_by;      /* NULL: "deltad parquet writer" */
} pq_writer_opts;
#define PQ_WRITER_OPTS_VERSION 1
#define PQ_WRITER_OPTS_INIT {PQ_WRITER_OPTS_VERSION, PQ_CODEC_SNAPPY, true, 0, 0, true, NULL}

typedef struct pq_writer pq_writer;

/* A writer that builds the file in memory (take it with pq_writer_close). opts may be NULL. */
int pq_writer_open_mem(pq_writer **out, const pq_wfield *schema, const pq_writer_opts *opts);
/* A writer that streams to a new file at path (truncated); row groups are written as they
 * fill. */
int pq_writer_open_path(pq_writer **out, const char *path, const pq_wfield *schema,
                        const pq_writer_opts *opts);
/* A writer that hands the file to sink as it is written: each row group once encoded,
 * then the footer at close (sink(ctx, data, len) returns 0 or a DD_E* code with the
 * message set; a failure fails the writer). ctx is the caller's and outlives the writer. */
typedef int (*pq_sink_fn)(void *ctx, const void *data, size_t len);
int pq_writer_open_sink(pq_writer **out, pq_sink_fn sink, void *ctx, const pq_wfield *schema,
                        const pq_writer_opts *opts);
/* Adds a key-value metadata entry (copied). */
int pq_writer_add_kv(pq_writer *w, const char *key, const char *value);
/* Appends one row (a PQ_V_STRUCT following the schema). The value is copied/encoded
 * before return. DD_EINVAL if it does not match the schema (the row is not written). */
int pq_writer_write_row(pq_writer *w, const pq_value *row);
/* Flushes the last row group and writes the footer. For a memory writer, *out_buf (caller
 * frees with free()) and *out_len receive the file; pass NULL for a path writer. After
 * close, only pq_writer_free is allowed. */
int pq_writer_close(pq_writer *w, uint8_t **out_buf, size_t *out_len);
void pq_writer_free(pq_writer *w);

/* Bytes of a DECIMAL(precision) value written as FIXED_LEN_BYTE_ARRAY, or 0 when the
 * precision is written as INT32 (<= 9) or INT64 (<= 18). */
int32_t pq_wdecimal_bytes(int32_t precision);

/* Column-wise appending, the fast path beside pq_writer_write_row. Leaves are numbered in
 * schema order (depth first), as the file's columns are. For a batch of rows, give every
 * leaf its levels and its defined values, then call pq_writer_end_rows(nrows):
 *   levels: n (def, rep) entries; def/rep may be NULL when the leaf's max level is 0;
 *   fixed values: one per entry whose def is the leaf's max; BOOLEAN as one byte 0/1 each,
 *     INT32/INT64/FLOAT/DOUBLE little-endian, FIXED/INT96 their width each;
 *   byte values (BYTE_ARRAY): n values whose bytes are data[offsets[i], offsets[i+1]).
 * pq_writer_end_rows checks that each leaf got exactly nrows rows (entries with rep 0) and
 * one value per defined entry since the previous end; otherwise the batch is dropped from
 * every leaf and DD_EINVAL returned. A row group is cut once it reaches row_group_rows. */
size_t pq_writer_num_leaves(const pq_writer *w);
int pq_writer_put_levels(pq_writer *w, size_t leaf, const int16_t *def, const int16_t *rep,
                         size_t n);
int pq_writer_put_fixed(pq_writer *w, size_t leaf, const void *values, size_t n);
int pq_writer_put_bytes(pq_writer *w, size_t leaf, const uint8_t *data,
                        const int32_t *offsets, size_t n);
int pq_writer_end_rows(pq_writer *w, int64_t nrows);
/* Uncompressed bytes buffered for the current row group (levels and values). */
size_t pq_writer_buffered_bytes(const pq_writer *w);
/* Cuts the current row group now (nothing when it is empty). */
int pq_writer_flush_row_group(pq_writer *w);
/* Bytes written to the output so far (row groups flushed; the footer comes at close). With
 * encode_behind on, a row group still being encoded counts once settled. */
int64_t pq_writer_bytes_written(const pq_writer *w);
/* Encode behind (off by default): a large row group (megabytes) that is cut is encoded on
 * two threads while the caller goes on appending the next one; the file's bytes are the same
 * as without it. Its memory: one more row group's buffers. An encoding error comes back
 * from the next call that cuts, settles or closes. */
void pq_writer_encode_behind(pq_writer *w, bool on);
/* A memory writer's room for the file, reserved now (address space: pages are touched as
 * the file is written), so the file is not copied as it grows past each doubling. A hint:
 * a file that outgrows it still grows. Nothing for a path writer. */
int pq_writer_reserve(pq_writer *w, size_t bytes);
/* The range of leaf's values over the row groups written so far (all of them once
 * closed; also allowed after pq_writer_close): the column chunk statistics merged, so a
 * caller needing a file's min/max (Delta's stats) takes them from here instead of
 * computing them again. min/max are PLAIN values (little-endian numbers, raw bytes for
 * BYTE_ARRAY), borrowed until pq_writer_free; has is false when no chunk has min/max (no
 * values, statistics off, INT96, FIXED decimals); nan tells a NaN was seen (min/max skip
 * NaN, as the chunk statistics do). */
typedef struct pq_range {
  bool has, nan;
  pq_type type;
  pq_bytes min, max;
} pq_range;
int pq_writer_leaf_range(const pq_writer *w, size_t leaf, pq_range *out);
/* Waits for a row group being encoded behind and places it in the output. */
int pq_writer_settle(pq_writer *w);

#endif
