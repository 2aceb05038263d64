/* pq_internal.h: shared internals of the Parquet module, and the format essay.
 *
 * FILE LAYOUT. "PAR1", then column chunks, then the footer: a Thrift-compact FileMetaData,
 * its length as 4 little-endian bytes, and "PAR1" again. FileMetaData lists the schema as
 * a pre-order flattening of the tree (each group says how many children follow), the
 * total row count, row groups, key-value pairs and the writer name.
 *
 * ROW GROUPS AND CHUNKS. A row group holds one column chunk per leaf of the schema, in
 * leaf order. A chunk is a run of pages starting at dictionary_page_offset (when there is
 * a dictionary) or data_page_offset, total_compressed_size bytes long. Each page is a
 * Thrift PageHeader followed by compressed_page_size bytes.
 *
 * PAGES. A dictionary page holds PLAIN values. A v1 data page is compressed as a whole and
 * holds repetition levels then definition levels (each an RLE/bit-packed hybrid stream
 * prefixed by its 4-byte length; or the legacy BIT_PACKED form with no prefix), then the
 * values of the entries whose definition level equals the leaf's maximum. A v2 data page
 * keeps its level streams uncompressed and unprefixed at the front (their lengths are in
 * the header) and compresses only the values, unless is_compressed is false.
 *
 * LEVELS. Each OPTIONAL or REPEATED node on the path to a leaf adds one to the leaf's max
 * definition level, each REPEATED node one to its max repetition level. An entry's
 * definition level says how deep the path is defined; its repetition level says at which
 * repeated ancestor a new element starts (0: a new row). Levels use bit width
 * ceil(log2(max + 1)); a max of 0 means the stream is absent.
 *
 * HYBRID RLE. A sequence of runs, each introduced by a ULEB128 header h: h & 1 means a
 * bit-packed run of (h >> 1) groups of 8 values, LSB first; otherwise a repeated run of
 * (h >> 1) copies of one value stored in ceil(width / 8) little-endian bytes. Dictionary
 * indices are a hybrid stream preceded by one byte giving the width.
 *
 * THRIFT COMPACT. A struct is a list of fields ended by a 0 byte. A field header byte holds
 * the id delta (high nibble; 0 means a zigzag varint id follows) and the type (low nibble:
 * 1/2 bool true/false, 3 i8, 4 i16, 5 i32, 6 i64, 7 double, 8 binary, 9 list, 10 set,
 * 11 map, 12 struct). Integers are zigzag ULEB128; binary is a varint length then bytes;
 * a list header byte holds the size (high nibble, 15 means a varint follows) and the
 * element type. Unknown fields are skipped, so newer writers remain readable.
 *
 * MEMORY. A pq_file owns an arena holding everything parsed from the footer. A cursor owns
 * the decoded columns of its current row group (freed when it moves on) and an arena for
 * the row being assembled (reset on every pq_cursor_next). Every size read from a file is
 * checked against the bytes that are actually there before it is used. */
#ifndef DD_STORE_PARQUET_PQ_INTERNAL_H
#define DD_STORE_PARQUET_PQ_INTERNAL_H

#include "common/err.h"
#include "store/parquet/pq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PQ__MAX_DEPTH 64            /* schema and Thrift nesting bound */
#define PQ__MAX_PAGE (1u << 30)     /* largest page we agree to decompress */

/* ---- arena (pq_arena.c) ---------------------------------------------------------------- */
typedef struct pq__ablock pq__ablock;
typedef struct pq__arena {
  pq__ablock *head;
  size_t used;      /* bytes handed out, for accounting */
  size_t min_block; /* 0: 64 KiB */
} pq__arena;

void *pq__arena_alloc(pq__arena *a, size_t n);           /* 16-aligned; NULL on OOM */
void *pq__arena_dup(pq__arena *a, const void *p, size_t n);
char *pq__arena_strndup(pq__arena *a, const uint8_t *p, size_t n);
void pq__arena_reset(pq__arena *a);                      /* keeps one block */
void pq__arena_rewind(pq__arena *a);                     /* keeps every block */
void pq__arena_free(pq__arena *a);

/* Asks the kernel for transparent huge pages over the 2 MiB-aligned interior of a large
 * buffer: page faults dominate decoding time on virtual machines. A hint only. */
void pq__hugepage_hint(void *p, size_t n);

/* ---- growable byte buffer (pq_buf.c) --------------------------------------------------- */
typedef struct pq__buf {
  uint8_t *data;
  size_t len, cap;
} pq__buf;

int pq__buf_reserve(pq__buf *b, size_t extra);
int pq__buf_put(pq__buf *b, const void *p, size_t n);
int pq__buf_byte(pq__buf *b, uint8_t v);
int pq__buf_uleb(pq__buf *b, uint64_t v);
int pq__buf_le32(pq__buf *b, uint32_t v);
void pq__buf_free(pq__buf *b);

/* ---- Thrift compact reader (pq_thrift.c) ----------------------------------------------- */
enum {
  PQ__TT_STOP = 0, PQ__TT_TRUE = 1, PQ__TT_FALSE = 2, PQ__TT_I8 = 3, PQ__TT_I16 = 4,
  PQ__TT_I32 = 5, PQ__TT_I64 = 6, PQ__TT_DOUBLE = 7, PQ__TT_BINARY = 8, PQ__TT_LIST = 9,
  PQ__TT_SET = 10, PQ__TT_MAP = 11, PQ__TT_STRUCT = 12,
};

typedef struct pq__tr {
  const uint8_t *p, *end;
  int depth;
  const char *what; /* the structure being read, for messages */
} pq__tr;

/* Reads a field header: *type = PQ__TT_STOP at the end of the struct. */
int pq__tr_field(pq__tr *r, int16_t *last_id, int *type, int16_t *id);
int pq__tr_varint(pq__tr *r, uint64_t *out);
int pq__tr_i64(pq__tr *r, int type, int64_t *out);  /* any integer type */
int pq__tr_i32(pq__tr *r, int type, int32_t *out);  /* checks the range */
int pq__tr_bool(pq__tr *r, int type, bool *out);    /* field type carries the value */
int pq__tr_binary(pq__tr *r, int type, const uint8_t **p, size_t *n);
int pq__tr_list(pq__tr *r, int type, int *elem_type, uint32_t *size);
int pq__tr_skip(pq__tr *r, int type);
int pq__tr_struct_begin(pq__tr *r, int type);
void pq__tr_struct_end(pq__tr *r);
int pq__tr_corrupt(const pq__tr *r, const char *why);

/* ---- Thrift compact writer (pq_thrift_w.c) --------------------------------------------- */
typedef struct pq__tw {
  pq__buf *out;
  int16_t last[PQ__MAX_DEPTH];
  int depth;
  int err;
} pq__tw;

void pq__tw_field(pq__tw *w, int16_t id, int type);
void pq__tw_i32(pq__tw *w, int16_t id, int32_t v);
void pq__tw_i64(pq__tw *w, int16_t id, int64_t v);
void pq__tw_bool(pq__tw *w, int16_t id, bool v);
void pq__tw_binary(pq__tw *w, int16_t id, const void *p, size_t n);
void pq__tw_list(pq__tw *w, int16_t id, int elem_type, uint32_t n);
void pq__tw_varint_raw(pq__tw *w, uint64_t v);
void pq__tw_zigzag_raw(pq__tw *w, int64_t v);
void pq__tw_struct_begin(pq__tw *w, int16_t id); /* id < 0: a list element */
void pq__tw_struct_end(pq__tw *w);

/* ---- footer model (pq_footer.c) -------------------------------------------------------- */
typedef struct pq__chunk {
  pq_chunk_info info;
  const char *file_path;  /* set when the chunk lives in another file (unsupported) */
  bool has_meta;
} pq__chunk;

typedef struct pq__rowgroup {
  int64_t num_rows;
  uint32_t num_chunks;
  pq__chunk *chunks;
} pq__rowgroup;

typedef struct pq__selem { /* one flattened SchemaElement */
  pq_field f;
  int32_t num_children;
  bool has_type;
} pq__selem;

struct pq_file {
  const uint8_t *buf; /* the whole file, or NULL: read by ranges through read */
  size_t len;         /* the file's size either way */
  pq_read_fn read;    /* pq_file_open_reader: column chunks are read with it */
  void *read_ctx;
  uint8_t *tail;      /* owned: the bytes the footer was parsed from (reader files) */
  void *map;
  size_t map_len;
  pq__arena arena;
  int64_t num_rows;
  const char *created_by;
  size_t num_kv;
  const char **kv_keys, **kv_vals;
  pq__selem *selems;
  uint32_t num_selems;
  pq_field *root;
  const pq_field **leaves;
  size_t num_leaves;
  pq__rowgroup *rgs;
  size_t num_rgs;
};

int pq__footer_parse(pq_file *f, const uint8_t *p, size_t n);
int pq__parse_stats(pq__tr *r, pq_stats *out);
int pq__schema_build(pq_file *f);  /* pq_schema.c: tree, levels, shapes */

/* ---- page headers (pq_pagehdr.c) ------------------------------------------------------- */
enum { PQ__PAGE_DATA = 0, PQ__PAGE_INDEX = 1, PQ__PAGE_DICT = 2, PQ__PAGE_DATA_V2 = 3 };
enum {
  PQ__ENC_PLAIN = 0, PQ__ENC_PLAIN_DICT = 2, PQ__ENC_RLE = 3, PQ__ENC_BIT_PACKED = 4,
  PQ__ENC_DELTA_BP = 5, PQ__ENC_DELTA_LBA = 6, PQ__ENC_DELTA_BA = 7, PQ__ENC_RLE_DICT = 8,
  PQ__ENC_BSS = 9,
};

typedef struct pq__pagehdr {
  int32_t type;
  int32_t uncompressed_size, compressed_size;
  int32_t num_values;
  int32_t encoding;
  int32_t def_encoding, rep_encoding;  /* v1 */
  int32_t num_nulls, num_rows;         /* v2 */
  int32_t def_len, rep_len;            /* v2 */
  bool is_compressed;                  /* v2 */
  bool has_data, has_dict, has_v2;
} pq__pagehdr;

int pq__pagehdr_parse(pq__pagehdr *out, const uint8_t *p, size_t n, size_t *hdr_len);

/* ---- codecs (pq_codec.c) --------------------------------------------------------------- */
/* Decompresses src into dst of exactly dst_len bytes. */
int pq__decompress(pq_codec codec, const uint8_t *src, size_t src_len, uint8_t *dst,
                   size_t dst_len);
/* Rejects an uncompressed size the compressed bytes cannot produce (checked before the
 * output buffer is allocated, so a lying header cannot force a huge allocation). */
int pq__decompress_check(pq_codec codec, const uint8_t *src, size_t src_len, size_t dst_len);
/* Compresses src, appending to out. */
int pq__compress(pq_codec codec, const uint8_t *src, size_t src_len, pq__buf *out);

/* ---- encodings (pq_rle.c, pq_delta.c, pq_plain.c) -------------------------------------- */
typedef struct pq__bytes_in { const uint8_t *p; size_t n; } pq__bytes_in;

/* Hybrid RLE/bit-packed: decodes exactly count values of width bits from p[0..n). */
int pq__rle_decode(const uint8_t *p, size_t n, int width, uint32_t *out, size_t count);
/* Whether RLE/bit-packed data p[0..n) of `width` bits starts with one repeated run of at
 * least count values (a page of levels without nulls): then its value in *value. False
 * for anything else, malformed data included (pq__rle_decode then says why). */
bool pq__rle_one_run(const uint8_t *p, size_t n, int width, size_t count, uint32_t *value);
/* Legacy BIT_PACKED (MSB first) levels. *used receives the bytes consumed. */
int pq__bitpacked_decode(const uint8_t *p, size_t n, int width, uint32_t *out,
                         size_t count, size_t *used);
/* Hybrid encoder (no length prefix). */
int pq__rle_encode(pq__buf *out, const uint32_t *v, size_t count, int width);
int pq__bit_width(uint32_t max);

/* DELTA_BINARY_PACKED: decodes count values; *used = bytes consumed. */
int pq__delta_decode(const uint8_t *p, size_t n, int64_t *out, size_t count, size_t *used);

/* ---- column decoding (pq_column.c, pq_values.c) ---------------------------------------- */
/* A growable decoded column: the implementation behind pq_column. */
typedef struct pq__col {
  pq_column pub;
  const pq_field *field;
  /* the layout of the last leaf decoded (field may belong to a file freed since) */
  pq_type last_type;
  bool last_def, last_rep, decoded;
  int16_t *def, *rep;
  size_t nlev, caplev;
  uint8_t *vals;       /* elem-sized values */
  size_t nvals, capvals, elem;
  uint8_t *dict;       /* decoded dictionary (elem-sized entries) */
  size_t ndict;
  bool dict_done;      /* the dictionary page (if any) is behind us */
  int64_t want;        /* num_values from the chunk metadata */
  pq__arena mem;       /* decompressed pages (byte arrays point into them) */
  pq__buf scratch;     /* reused page buffer for columns whose values are copied out */
  pq__buf raw;         /* a reader file's chunk bytes (values may point into them) */
  uint32_t *tmp;       /* reused level / index scratch */
  size_t tmpcap;
} pq__col;

int pq__col_decode(pq__col *c, const pq_file *f, size_t rg, size_t col);
void pq__col_clear(pq__col *c);
/* Forgets the decoded data but keeps every allocation for the next row group. */
void pq__col_reset(pq__col *c);
/* A scratch array of n uint32 owned by c (valid until the next call). */
uint32_t *pq__col_tmp(pq__col *c, size_t n);
size_t pq__type_elem(const pq_field *leaf);
/* Decodes n values of encoding enc into c (appended). */
int pq__values_decode(pq__col *c, int enc, const uint8_t *p, size_t len, size_t n);
int pq__dict_decode(pq__col *c, int enc, const uint8_t *p, size_t len, size_t n);

#endif
