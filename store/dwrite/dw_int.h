/* dw_int.h: internals of the Delta data writer (store/dwrite), shared by dw_stats.c (the
 * add action's stats), dw_path.c (file names, partition directories), dw_schema.c (the
 * table schema as a Parquet writer schema) and dw_writer.c (batches to files).
 *
 * Stats, as Delta writes them (PROTOCOL.md "Per-file Statistics"):
 *   {"numRecords":N,"minValues":{...},"maxValues":{...},"nullCount":{...}[,"tightBounds":b]}
 * keyed by physical column names, nested as the schema's structs are. A stats column is a
 * leaf of the data schema (partition columns excluded) that is not inside an array or map;
 * an array or map column is one stats column itself (nullCount only). The first
 * delta.dataSkippingNumIndexedCols (default 32, -1 all) stats columns in schema order get
 * stats, or those delta.dataSkippingStatsColumns names. min/max exist for numbers, dates,
 * timestamps (millisecond precision, truncated down), strings (prefix of
 * delta.dataSkippingStringPrefixLength = 32 UTF-16 units; a truncated max gets a tie
 * breaker so it stays an upper bound, or is left out) and decimals; nullCount for all.
 * A float column holding NaN or an infinity gets no min/max (unknown is always safe). */
#ifndef DD_STORE_DWRITE_DW_INT_H
#define DD_STORE_DWRITE_DW_INT_H

#include "store/dwrite/dw.h"

#include "common/buf.h"
#include "common/err.h"

__extension__ typedef __int128 dw__i128;

typedef enum dw__skind {
  DW__S_NULLS,   /* nullCount only (boolean, binary, array, map, variant) */
  DW__S_INT,     /* byte, short, int, long */
  DW__S_FLOAT,   /* float */
  DW__S_DOUBLE,  /* double */
  DW__S_DATE,    /* days */
  DW__S_TS,      /* micros, written with Z */
  DW__S_TS_NTZ,  /* micros, no zone */
  DW__S_STRING,
  DW__S_DECIMAL, /* unscaled 128-bit */
} dw__skind;

typedef struct dw__stat {
  const char **path;  /* physical names from the top (borrowed from the schema) */
  size_t depth;
  dw__skind kind;
  int scale;          /* DECIMAL */
  bool indexed;       /* gets stats at all */
  int leaf;           /* its Parquet leaf (set by the shredder), -1: none (inside a list) */
  bool has;           /* min/max seen */
  bool bad;           /* NaN/infinity seen: no min/max */
  int64_t nulls;
  int64_t imin, imax;
  double dmin, dmax;
  dw__i128 qmin, qmax;
  dd_buf smin, smax;  /* strings, whole (truncated when written) */
} dw__stat;

typedef struct dw__stats {
  dw__stat *cols;
  size_t n;
  int prefix_len;     /* string prefix, UTF-16 units */
  bool tight_bounds;  /* write "tightBounds":true (tables with deletion vectors) */
} dw__stats;

/* Builds the stats columns of a data schema (fields not in partition_cols) for a table
 * whose configuration is conf (packed map, may be NULL). */
int dw__stats_plan(dw__stats *st, const dl_type *root, const char *const *partition_cols,
                   size_t npart, const char *conf);
void dw__stats_reset(dw__stats *st);  /* a new file: counters cleared */
void dw__stats_free(dw__stats *st);
/* Value updates of stats column c (no-ops when it is not indexed). */
void dw__stat_int(dw__stat *c, int64_t v);
void dw__stat_real(dw__stat *c, double v);
void dw__stat_str(dw__stat *c, const uint8_t *p, size_t n);
void dw__stat_dec(dw__stat *c, dw__i128 v);
/* Kinds whose min/max come from the Parquet writer's column chunk statistics
 * (pq_writer_leaf_range) instead of being computed a second time while shredding: the
 * numbers, dates, timestamps and strings (decimals stay with the shredder: a FIXED decimal
 * chunk has no statistics). The shredder counts nulls for every kind. */
static inline bool dw__range_kind(dw__skind k) {
  return k == DW__S_INT || k == DW__S_FLOAT || k == DW__S_DOUBLE || k == DW__S_DATE || k == DW__S_TS ||
         k == DW__S_TS_NTZ || k == DW__S_STRING;
}
/* Takes the min/max of the range kinds from the closed file's writer (a NaN, or an
 * infinite bound, leaves the float column without min/max). */
int dw__stats_take_ranges(dw__stats *st, const pq_writer *pw);
/* The stats JSON of the file (malloc'ed, free()). */
int dw__stats_json(char **out, const dw__stats *st, int64_t num_records);

/* Truncations of a UTF-8 string to prefix_len UTF-16 units, as Delta's stats do: the min
 * is the prefix (never splitting a surrogate pair); the max the prefix with a tie breaker
 * (0x7F, or U+10FFFF) appended, or *ok = false when no bound of at most twice the prefix
 * exists. Both give *out_len bytes into out (cap >= 4 * (2 * prefix_len + 1)). */
size_t dw__trunc_min(const uint8_t *p, size_t n, int prefix_len);
size_t dw__trunc_max(uint8_t *out, const uint8_t *p, size_t n, int prefix_len, bool *ok);

/* The Parquet schema of a table's data columns (root's tree malloc'ed: dw__pqschema_free;
 * names borrowed from t). mapped: physical names and field ids of column mapping. */
int dw__pqschema(pq_wfield *root, const dl_type *t, const char *const *part, size_t npart,
                 bool mapped);
void dw__pqschema_free(pq_wfield *root);

/* Hands batch b to the Parquet writer column by column and updates the stats; the
 * shredder's scratch memory is created on first use (*state) and reused. A batch that
 * fails leaves the writer as it was (pq_writer_end_rows drops it) unless the failure was
 * in the writer's output. */
typedef struct dw__shredder dw__shredder;
int dw__shred_batch(dw__shredder **state, pq_writer *pw, dw__stats *st, const dl_type *root,
                    const char *const *part, size_t npart, const arw_batch *b);
void dw__shredder_free(dw__shredder *state);

/* Delta's partition directory escaping of one value (Hive's escapePathName) appended to b;
 * a null value is __HIVE_DEFAULT_PARTITION__. */
void dw__escape_partition(dd_buf *b, const char *value);
/* "k1=v1/k2=v2/" for a packed map in the order of cols (empty for none). */
int dw__partition_dir(dd_buf *b, const char *const *cols, size_t ncols, const char *values);
/* Appends a fresh data file name (<prefix>-<seq>-<random uuid>.c000.<codec>.parquet;
 * prefix "part", or "cdc" for change data). */
int dw__file_name(dd_buf *b, const char *prefix, unsigned seq, pq_codec codec);

#endif
