/* dw.h: the Delta data writer (prefix dw_): a stream of arw_batches becomes Parquet data
 * files in a table's directory, with the add actions (path, size, partitionValues, stats)
 * a commit needs. The caller commits them (dl_txn_add_file) or drops them (dw_abort).
 *
 * Files: <partition dirs>/part-NNNNN-<uuid>.c000.<codec>.parquet, the partition
 * directories escaped as Delta does (col=value/, __HIVE_DEFAULT_PARTITION__ for null; col is
 * the physical name under column mapping, as partitionValues' keys are).
 * Each file streams into a put-if-absent of the store (os_put_stream): on a local store
 * each row group goes to a hidden temp file as it is encoded (memory: one row group, not
 * the file), linked into place when the file is complete; the object stores still gather
 * the file (bounded by target_file_bytes) and put it whole. No reader ever sees half a
 * file. Column names in the file are
 * the physical names and field ids of column mapping when the table uses it.
 *
 * Change data files (opts.change_data, PROTOCOL.md "Change Data Files"): the same files
 * under _change_data/<partition dirs>/cdc-NNNNN-<uuid>.c000.<codec>.parquet with one more
 * column after the table's data columns, `_change_type` (string: delete, insert,
 * update_preimage, update_postimage), which the input batches carry; the dl_file views
 * are cdc actions (dataChange false, no stats) for dl_txn_add_cdc.
 *
 * Input batches carry the table's data columns (not the partition columns: every row of
 * one writer belongs to opts.partition_values), matched to the table schema by name, with
 * scn_arrow_schema's kinds (Spark's Arrow types).
 *
 * Ownership: the writer borrows the table and snapshot (they outlive it); dl_file views
 * from dw_file stay valid until dw_free. A writer belongs to one thread. Errors follow
 * common/err.h: DD_EINVAL for a batch that does not match the table, DD_EIO from the store. */
#ifndef DD_STORE_DWRITE_DW_H
#define DD_STORE_DWRITE_DW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/arrow/arrow.h"
#include "store/delta/dl.h"
#include "store/parquet/pq.h"

typedef struct dw_writer dw_writer;

typedef struct dw_opts {
  unsigned version;
  pq_codec codec;              /* SNAPPY (also ZSTD, GZIP, UNCOMPRESSED) */
  bool dictionary;             /* dictionary pages where they pay (else PLAIN) */
  int64_t row_group_rows;      /* at most this many rows per row group (0: 1,048,576) */
  size_t row_group_bytes;      /* cut a row group at this many buffered bytes (0: 64 MiB) */
  int64_t target_file_bytes;   /* start a new file past this many bytes (0: one file) */
  const char *partition_values;/* packed map, every row's partition (NULL: unpartitioned) */
  bool data_change;            /* the add actions' dataChange */
  size_t file_bytes_hint;      /* room reserved for each file at once where the store
                                * gathers it (0: target_file_bytes plus a row group when
                                * set, else none) */
  bool change_data;            /* change data files (below) */
  bool row_tracking;           /* also write the table's materialized row id and row commit
                                * version columns (INT64, named by DL_RT_ID_COLUMN_KEY and
                                * DL_RT_VERSION_COLUMN_KEY; hidden: not in the schema) from
                                * the batches' columns of those names (every batch must
                                * carry them; nulls where a row has no value); the table
                                * must enable row tracking (dl_rowtrack_enabled) */
} dw_opts;
#define DW_OPTS_VERSION 1
#define DW_OPTS_INIT {.version = DW_OPTS_VERSION, .codec = PQ_CODEC_SNAPPY, \
                      .dictionary = true, .data_change = true}

/* A writer of snapshot s's table t for batches of schema in. */
int dw_open(dw_writer **out, dl_table *t, const dl_snapshot *s, const arw_schema *in,
            const dw_opts *opts);
/* Writes every row of b (its schema is `in`). */
int dw_write(dw_writer *w, const arw_batch *b);
/* Closes the current file now (if it has rows); the next batch starts a new one. */
int dw_next_file(dw_writer *w);
/* Closes the current file. After it, the files are final: dw_num_files / dw_file. */
int dw_finish(dw_writer *w);
size_t dw_num_files(const dw_writer *w);
/* The add action of file i (path relative to the table, URL-decoded). */
const dl_file *dw_file(const dw_writer *w, size_t i);
/* Rows written so far. */
int64_t dw_rows(const dw_writer *w);
/* Deletes every file this writer put (a commit that failed). */
void dw_abort(dw_writer *w);
void dw_free(dw_writer *w);

#endif
