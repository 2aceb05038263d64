/* scn_int.h: the scan's internals shared by scn_scan.c (files, deletion vectors, batches),
 * scn_bind.c (Delta fields to Parquet nodes), scn_read.c (Parquet levels and values to
 * arw columns) and scn_value.c (partition values, decimals, time units). */
#ifndef DD_STORE_SCAN_SCN_INT_H
#define DD_STORE_SCAN_SCN_INT_H

#include "store/parquet/pq.h"
#include "store/scan/scn.h"

/* How a leaf's Parquet values become the arw field's values. */
typedef enum scn__conv {
  SCN_CV_BOOL,        /* BOOLEAN -> BOOL */
  SCN_CV_I32,         /* INT32 -> INT32, DATE32 */
  SCN_CV_I32_I8,      /* INT32 -> INT8 (byte) */
  SCN_CV_I32_I16,     /* INT32 -> INT16 (short) */
  SCN_CV_I32_I64,     /* INT32 -> INT64 (widened int -> long) */
  SCN_CV_I64,         /* INT64 -> INT64, TIMESTAMP (micros) */
  SCN_CV_F32,         /* FLOAT -> FLOAT32 */
  SCN_CV_F32_F64,     /* FLOAT -> FLOAT64 (widened) */
  SCN_CV_F64,         /* DOUBLE -> FLOAT64 */
  SCN_CV_I32_F64,     /* INT32 -> FLOAT64 (widened int -> double) */
  SCN_CV_BYTES,       /* BYTE_ARRAY -> UTF8 / BINARY */
  SCN_CV_FIXED_BYTES, /* FIXED_LEN_BYTE_ARRAY -> BINARY */
  SCN_CV_DEC_I32,     /* INT32 unscaled (or an integer) -> DECIMAL128, scaled up */
  SCN_CV_DEC_I64,     /* INT64 unscaled -> DECIMAL128 */
  SCN_CV_DEC_BE,      /* big-endian two's complement bytes (FIXED or BYTE_ARRAY) -> DECIMAL128 */
  SCN_CV_TS_MILLIS,   /* INT64 millis -> TIMESTAMP micros */
  SCN_CV_TS_NANOS,    /* INT64 nanos -> TIMESTAMP micros (floor) */
  SCN_CV_INT96,       /* INT96 (nanos of day, Julian day) -> TIMESTAMP micros */
  SCN_CV_DATE_TS,     /* INT32 days -> TIMESTAMP micros (widened date -> timestamp_ntz) */
} scn__conv;

/* One Delta field bound to the Parquet node it is read from, for one file. Thresholds:
 * a slot of this field starts at a level entry with rep <= srep and def >= pdef; it is
 * valid when def >= node->max_def. A list's or map's children start at entries with
 * rep <= csrep and def >= cpdef. */
typedef struct scn__bind scn__bind;
struct scn__bind {
  int arw_id;
  const dl_type *type;
  const pq_field *node;  /* NULL: not in the file (nulls) */
  int pdef, srep, vdef;
  int cpdef, csrep;      /* LIST / MAP */
  int rep_leaf;          /* leaf column whose levels give this node's slots */
  scn__conv conv;        /* leaves */
  int dec_shift;         /* decimal: target scale - file scale */
  size_t nkids;
  scn__bind *kids;
};

/* Binds Delta type t (arw field arw_id of schema s) to Parquet node x (NULL: missing),
 * with the slot thresholds of its position; mode is the column mapping mode ("id", "name"
 * or "none"). *b is filled; free with scn__bind_free. */
int scn__bind_node(scn__bind *b, const arw_schema *s, int arw_id, const dl_type *t,
                   const pq_field *x, int pdef, int srep, int parent_leaf, const char *mode);
void scn__bind_free(scn__bind *b);
/* The child of Parquet group g that Delta field f is read from (NULL: none). */
const pq_field *scn__pq_child(const pq_field *g, const dl_field *f, const char *mode);

/* Per-file reading state of the columns of one row group. */
typedef struct scn__rg {
  const pq_file *pf;
  size_t rg;
  pq_column **cols;      /* by leaf column, decoded lazily for this row group */
  size_t *cols_rg;       /* row group each cols[i] holds, SIZE_MAX: none */
  size_t ncols;
  /* scratch */
  uint8_t *valid;
  int32_t *lens;
  uint8_t *vals;
  size_t cap_valid, cap_lens, cap_vals;
} scn__rg;

/* Appends the values of bound field b for row group r->rg to batch out (nrows rows for a
 * top-level field). */
int scn__read_field(scn__rg *r, arw_batch *out, const scn__bind *b, size_t nrows);
/* Appends nrows INT64 values to field id of out: leaf x's (a top-level INT64 column of the
 * file, NULL: none) where not null, else first + i * step for row i (first < 0: null). */
int scn__read_rowtrack(scn__rg *r, arw_batch *out, int id, const pq_field *x, size_t nrows,
                       int64_t first, int64_t step);
void scn__rg_free(scn__rg *r);

/* A partition value as nrows copies into field id of out (NULL text: nulls). */
int scn__append_partition(arw_batch *out, int id, const dl_type *t, const char *text,
                          size_t nrows);
/* Decimal text ("-12.5") to 16 little-endian bytes at scale. DD_EINVAL when it does not
 * fit 38 digits. */
int scn__dec_parse(const char *s, int scale, uint8_t out[16]);

/* The top-level field of root named name: exact, then case-insensitive. */
const dl_field *scn__find_field(const dl_type *root, const char *name);

/* ---- the scan and its files (scn_scan.c), the decode pool (scn_pool.c) ---- */

typedef struct scn__col {
  const dl_field *field;
  int arw_id;
  bool partition;
  const char *part_key;  /* key in partitionValues (physical name under column mapping) */
  int rowtrack;          /* 0, or SCN__RT_ID / SCN__RT_VERSION (scn_opts.row_tracking) */
} scn__col;
enum { SCN__RT_ID = 1, SCN__RT_VERSION = 2 };

/* An active file to read, copied from the snapshot at scn_open. */
typedef struct scn__file {
  char *path;            /* as in the log (decoded) */
  char *pvals;           /* packed partition values (copied) */
  bool has_dv;
  dl_dv dv;
  char *dv_text;         /* dv.path_or_inline (copied) */
  int64_t size;          /* add.size (bytes), -1 when unknown */
  int64_t base_row_id, row_commit_version; /* -1 when absent */
} scn__file;

/* An opened data file: its footer, the columns bound to it and its deletion vector.
 * Read-only once opened, so the pool's workers share it; refs counts its holders (under
 * the pool's lock; 0 outside the pool). */
typedef struct scn__open {
  const scn__file *f;
  pq_file *pf;
  scn__bind *binds;      /* per scan column (partition columns unbound) */
  size_t ncols;
  dl_rowset dv;
  size_t nrg;
  int refs;
  uint8_t *buf;          /* a small file of a table in object storage, read whole; pf reads
                            it (a larger one is read by ranges: pf calls scn__remote_read) */
  const os_store *st;    /* the table's store, for those ranged reads */
} scn__open;

/* A decoded row group (or, for a file without row groups, none): its rows in b and the
 * indexes of those the deletion vector keeps. */
typedef struct scn__unit {
  arw_batch *b;
  size_t *keep;
  size_t nkeep, keep_cap;
  bool keep_all;
  bool decoded;          /* a row group was read (false: a file without row groups) */
  bool first_of_file;    /* the file's first unit (counts the file as read) */
  size_t nrows;
} scn__unit;

typedef struct scn__pool scn__pool;

struct scn_scan {
  dl_table *t;
  dl_snapshot *snap;
  size_t batch_rows;
  int64_t limit;
  unsigned threads;      /* decode threads (1: in the caller's thread) */
  const char *mode;      /* column mapping: "none", "name" or "id" */
  arw_schema *schema;
  scn__col *cols;
  size_t ncols;
  dl_field rt_fields[2]; /* the row tracking columns' fields (scn_opts.row_tracking) */
  char *table_dir;       /* realpath of the table location (NULL in object storage: the
                            table's store confines paths to its root) */
  char **roots;
  size_t nroots;
  scn__file *files;
  size_t nfiles, cap_files, next_file;
  /* one thread: the file being read */
  scn__open *cur;
  scn__rg rg;
  size_t next_rg;
  int64_t rg_base;       /* file row index of the next row group's first row */
  /* threads > 1 */
  scn__pool *pool;
  int failed;            /* the error a worker returned (then every scn_next returns it) */
  /* the unit being handed out */
  scn__unit cu;
  size_t keep_pos;
  bool started, done;
  arw_batch *outb;
  scn_stats st;
  /* open-time file collection */
  const scn_opts *o;
  int cb_rc;
};

/* Opens file f of scan s (confined path, footer, deletion vector, bindings); touches
 * nothing in s, so it may run on a worker. */
int scn__file_open(const scn_scan *s, const scn__file *f, scn__open **out);
void scn__file_close(scn__open *o);
/* Points scratch r at o's file (freeing what it held for another file). */
void scn__rg_bind(scn__rg *r, const scn__open *o);
/* Decodes row group rg of o (file rows from base) into u, with the rows its deletion vector
 * keeps; r is the caller's scratch, bound to o. Reads only s's columns and schema. */
int scn__decode_rg(const scn_scan *s, const scn__open *o, size_t rg, int64_t base,
                   scn__rg *r, scn__unit *u);
int scn__unit_init(scn__unit *u, const arw_schema *schema);
void scn__unit_free(scn__unit *u);

/* Starts s->threads workers decoding s's files ahead of the consumer, in the order one
 * thread would (file by file in log order, row group by row group), holding at most one
 * decoded unit each. *out = NULL when no thread could start (then decode in the caller). */
int scn__pool_start(scn__pool **out, const scn_scan *s);
/* The next unit in order, swapped into *cu (whose batch the pool reuses); *end at the end.
 * A worker's error comes back at its unit's place in the order. */
int scn__pool_next(scn__pool *p, scn__unit *cu, bool *end);
/* Stops the workers (they finish the unit they decode), joins them and frees the pool. */
void scn__pool_free(scn__pool *p);

#endif
