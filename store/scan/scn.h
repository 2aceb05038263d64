/* scn.h: the scan of a Delta snapshot: its rows as a stream of bounded Arrow batches
 * (store/arrow's arw_batch), read from the snapshot's Parquet data files.
 *
 * What a scan does: for every active file of the snapshot (in log order; the caller's
 * keep_file may skip files, e.g. by data skipping over stats and partition values), read
 * the file's row groups column by column into arw columns, drop the rows its deletion
 * vector names, add the partition columns (typed, from the file's partitionValues), fill
 * columns the file does not have with nulls, and widen types the table's schema widened
 * (int -> long, float -> double, date -> timestamp_ntz, decimal scale up). Column mapping
 * (name and id modes) is resolved: files are read by physical name or field id, batches
 * carry the logical names.
 *
 * The batch schema (scn_schema) uses Spark's Arrow types (scn_arrow_schema):
 *   boolean BOOL, byte INT8, short INT16, integer INT32, long INT64, float FLOAT32,
 *   double FLOAT64, decimal(p,s) DECIMAL128(p,s), string UTF8, binary BINARY, date DATE32,
 *   timestamp TIMESTAMP_UTC (micros), timestamp_ntz TIMESTAMP (micros), void NULL,
 *   struct STRUCT, array LIST (child "element"), map MAP (children "key", "value"),
 *   variant STRUCT<value BINARY, metadata BINARY>.
 *
 * Memory: at most one row group's projected columns of one file are decoded at a time,
 * plus the batch being returned (batch_rows bound); the table is never held whole. With
 * threads > 1 (the default on a machine with several CPUs) up to `threads` row groups are
 * decoded ahead on worker threads, each into its own batch (so at most threads + 1 row
 * groups' batches exist); the batches come out in the same order with the same rows as
 * with one thread (files in log order, row groups in file order), and an error comes back
 * at the place of the row group that raised it.
 *
 * Use:
 *   scn_opts o = SCN_OPTS_INIT; o.batch_rows = 4096;
 *   scn_scan *s; rc = scn_open(&s, table, snapshot, &o);
 *   const arw_batch *b;
 *   while (!(rc = scn_next(s, &b)) && b) { ... arw_batch_view(b, ...) ... }
 *   scn_free(s);
 *
 * Files are read from the local file system (the table location must be a local
 * directory); data and DV paths must resolve inside the table directory or one of
 * opts.roots (DD_EPERM otherwise). A scan is not thread-safe; distinct scans of one
 * snapshot may run on distinct threads. Errors: 0 or a negative DD_E* code with the
 * message in dd_err_msg(); DD_ECORRUPT for a malformed data file, DD_EUNSUPPORTED for a
 * Parquet encoding or type mapping this reader does not do (named). */
#ifndef DD_STORE_SCAN_SCN_H
#define DD_STORE_SCAN_SCN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/arrow/arrow.h"
#include "store/delta/dl.h"

#define SCN_DEFAULT_BATCH_ROWS 65536
#define SCN_MAX_THREADS 8 /* decode threads at most (scn_opts.threads) */

/* Per-file filter: return false to skip file f (it must not hold a matching row). */
typedef bool (*scn_keep_file_fn)(void *ctx, const dl_file *f);

typedef struct scn_opts {
  unsigned version;
  /* Top-level logical column names to read, in output order (exact, then
   * case-insensitive match); NULL/0: every column in schema order. DD_EINVAL names an
   * unknown column. */
  const char *const *columns;
  size_t num_columns;
  size_t batch_rows;          /* rows per batch at most; 0: SCN_DEFAULT_BATCH_ROWS */
  int64_t limit;              /* stop after this many rows; < 0: no limit */
  scn_keep_file_fn keep_file; /* NULL: every file */
  void *keep_ctx;
  /* Read only this active file's rows (its dl_file.path); DD_ENOTFOUND when the
   * snapshot has no such file. NULL: every file. */
  const char *only_file;
  /* Absolute local directories besides the table's that data files and deletion vectors
   * may be read from (absolute paths in the log); NULL/0: the table directory only. */
  const char *const *roots;
  size_t num_roots;
  /* Threads decoding row groups ahead of scn_next: 0 the online CPU count (at most
   * SCN_MAX_THREADS), 1 in the caller's thread only (no thread started); larger values
   * are capped at SCN_MAX_THREADS. */
  unsigned threads;
  /* Row tracking (the table must enable it: dl_rowtrack_enabled): two INT64 columns after
   * the projected ones, named as the table's materialized row id and row commit version
   * columns (DL_RT_ID_COLUMN_KEY, DL_RT_VERSION_COLUMN_KEY), holding each row's stable
   * row id (the file's materialized value, else its baseRowId + the row's physical index
   * in the file) and stable commit version (materialized, else defaultRowCommitVersion);
   * null where the file has neither. DD_EINVAL when the table does not enable it. */
  bool row_tracking;
} scn_opts;
#define SCN_OPTS_VERSION 1
#define SCN_OPTS_INIT {.version = SCN_OPTS_VERSION, .limit = -1}

typedef struct scn_scan scn_scan;

/* Counters of a scan so far. */
typedef struct scn_stats {
  size_t files_total;      /* active files of the snapshot */
  size_t files_skipped;    /* refused by keep_file */
  size_t files_read;
  size_t row_groups_read;
  int64_t rows_read;       /* rows decoded from files */
  int64_t rows_deleted;    /* dropped by deletion vectors */
  int64_t rows_returned;
} scn_stats;

/* Starts a scan of snapshot s of table t (both borrowed: they must outlive the scan).
 * Checks the projection and the protocol; reads no data file yet. */
int scn_open(scn_scan **out, dl_table *t, dl_snapshot *s, const scn_opts *opts);
/* The batches' schema (the projected logical columns, Spark's Arrow types). Owned by the
 * scan. */
const arw_schema *scn_schema(const scn_scan *s);
/* The next batch (1 to batch_rows rows) in *out, or *out = NULL at the end. The batch
 * belongs to the scan and is valid until the next scn_next or scn_free. */
int scn_next(scn_scan *s, const arw_batch **out);
void scn_stats_get(const scn_scan *s, scn_stats *out);
void scn_free(scn_scan *s);

/* Adds one column (or child) named name of Delta type t under parent of schema out, with
 * Spark's Arrow type (see above); its id in *out_id (may be NULL). */
int scn_arrow_field(arw_schema *out, int parent, const char *name, const dl_type *t,
                    bool nullable, int *out_id);
/* Adds the top-level fields of the Delta struct type root (or only those named in
 * columns, in that order, when n > 0) to out. DD_EINVAL for an unknown name. */
int scn_arrow_schema(arw_schema *out, const dl_type *root, const char *const *columns,
                     size_t n);

#endif
