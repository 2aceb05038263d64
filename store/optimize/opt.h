/* opt.h: OPTIMIZE of a Delta table (prefix opt_): bin-packing compaction and Z-order, as
 * Delta's OptimizeExecutor does them, committed through dl_txn.
 *
 * What is rewritten: the active files the partition filter (keep_file) keeps are the
 * considered files. Compaction takes those smaller than min_file_size, and files with a
 * deletion vector hiding more than 5% of their rows; groups them by partition; sorts each
 * group by size and packs bins of at most target_size input bytes; a bin of one file is
 * left alone unless that file has a deletion vector. Each bin becomes one new file. Z-order
 * takes every considered file; a partition is one bin, its rows reordered by the
 * interleaved bits of the Z-order columns' ranks and cut into ceil(input bytes /
 * target_size) files of equal row counts (as Delta's numFiles).
 * A clustered table (the `clustering` writer feature with clustering columns in the
 * delta.clustering domain) is clustered instead, as Delta's liquid clustering: the files
 * opt_cluster.c picks (incremental: already clustered ZCubes are left alone unless new
 * files join them) go into bins of at most OPT_CLUSTER_TARGET_CUBE_SIZE; each bin's rows
 * are ordered by the Hilbert curve over the clustering columns' ranks (opt_hilbert.c) and
 * cut as Z-order's are; the new adds carry clusteringProvider "liquid" and the ZCube tags.
 * ZORDER BY or a partition filter on a clustered table is DD_EINVAL / DD_EUNSUPPORTED
 * with Delta's error class.
 * Rows hidden by deletion vectors are dropped (the scan applies them).
 *
 * The commit: operation OPTIMIZE, operationParameters predicate / zOrderBy / auto /
 * clusterBy, adds and removes with dataChange false, operationMetrics as Delta's. A
 * concurrent commit that removes a file being compacted aborts it (DD_ECONFLICT; the new
 * files are deleted); concurrent appends do not.
 *
 * Memory: compaction streams each input file's batches into one output file built in
 * memory, so it holds about one target-size file. Z-order holds at most one run of
 * zorder_run_bytes (default the target size, capped) in memory: a partition larger than
 * that is sorted externally (sorted runs spilled to unlinked files in tmp_dir, merged; the
 * ranks then come from a sample of OPT_ZS_SAMPLE rows, exact up to that many rows), plus
 * the output file being built.
 *
 * Errors follow common/err.h; nothing is committed or left behind on error. */
#ifndef DD_STORE_OPTIMIZE_OPT_H
#define DD_STORE_OPTIMIZE_OPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/arrow/arrow.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"
#include "store/parquet/pq.h"

/* Delta's defaults (optimize.maxFileSize / optimize.minFileSize, 1 GiB). */
/* A request's target size may travel in DeltaTable.path.hadoop_conf under this key. */
#define OPT_TARGET_SIZE_CONF "deltad.optimize.targetFileSize"
/* ... and OPTIMIZE FULL (opt_opts.full) under this one, "true". */
#define OPT_FULL_CONF "deltad.optimize.full"
#define OPT_DEFAULT_TARGET_SIZE (1024LL * 1024 * 1024)

typedef struct opt_progress {
  size_t bins_done, bins_total;
  size_t files_done, files_total;   /* input files read */
  int64_t bytes_done, bytes_total;  /* input bytes */
} opt_progress;

typedef struct opt_opts {
  unsigned version;
  /* Output file size (and bin bound); 0: delta.targetFileSize, else the default. */
  int64_t target_size;
  /* Files below this are compacted; 0: the target size. */
  int64_t min_file_size;
  const char *const *zorder_by;     /* column names; none: compaction */
  size_t num_zorder;
  bool (*keep_file)(void *ctx, const dl_file *f); /* partition filter; NULL: all */
  void *keep_ctx;
  /* The filter's SQL text for operationParameters.predicate (NULL: none). */
  const char *predicate;
  void (*progress)(void *ctx, const opt_progress *p);
  void *progress_ctx;
  pq_codec codec;                   /* SNAPPY */
  size_t batch_rows;                /* scan batches (0: the scan's default) */
  int max_retries;                  /* commit retries after lost races (default 10) */
  int64_t now_ms;                   /* 0: the clock */
  /* Z-order: rows held in memory at most (Arrow bytes) before a sorted run is spilled;
   * 0: the target size, at least 1 MiB and at most OPT_MAX_ZORDER_RUN_BYTES. */
  size_t zorder_run_bytes;
  const char *tmp_dir;              /* Z-order spill files (unlinked): NULL: $TMPDIR or /tmp */
  /* OPTIMIZE ... FULL: a clustered table's files clustered by other columns (or by another
   * implementation) are reclustered too. DD_EUNSUPPORTED on a table without clustering
   * columns, as Delta. */
  bool full;
} opt_opts;
/* Clustering (Delta's optimize.clustering.mergeStrategy.minCubeSize threshold and target):
 * a ZCube this large is no longer reclustered; a bin (one new ZCube) holds at most the
 * target cube size of input bytes. */
#define OPT_CLUSTER_MIN_CUBE_SIZE (100 * OPT_DEFAULT_TARGET_SIZE)
#define OPT_CLUSTER_TARGET_CUBE_SIZE (150 * OPT_DEFAULT_TARGET_SIZE)
#define OPT_MAX_ZORDER_RUN_BYTES ((size_t)256 << 20)
#define OPT_OPTS_VERSION 1
#define OPT_OPTS_INIT {.version = OPT_OPTS_VERSION, .codec = PQ_CODEC_SNAPPY, .max_retries = 10}

typedef struct opt_file_stats {
  int64_t min, max, total_files, total_size; /* min/max 0 when there are no files */
  double avg;
} opt_file_stats;

typedef struct opt_result {
  int64_t version;                  /* committed version; -1 when nothing was rewritten */
  int64_t num_files_added, num_files_removed;
  opt_file_stats files_added, files_removed;
  int64_t partitions_optimized;
  int64_t num_batches;              /* bins */
  int64_t total_considered_files, total_files_skipped;
  int64_t num_dvs_removed, num_dv_rows_removed;
  int64_t rows_written;
  int64_t start_ms, end_ms;
  bool zorder;
  bool clustering;                  /* a clustered table's OPTIMIZE (the Hilbert curve) */
  struct {                          /* Delta's clusteringStats (clustering only) */
    int64_t in_cube_files, in_cube_size;   /* considered files in a ZCube */
    int64_t in_other_files, in_other_size; /* considered files in none */
    int64_t in_cubes;                      /* distinct ZCubes among them */
    int64_t merged_files, merged_size;     /* the files rewritten */
    int64_t out_cubes;                     /* new ZCubes (bins) */
  } cluster;
  int64_t num_table_columns, num_table_columns_with_stats;
} opt_result;

/* A clustered table takes no partition filter: DD_EUNSUPPORTED with Delta's
 * DELTA_CLUSTERING_WITH_PARTITION_PREDICATE naming where, checked before the filter is
 * parsed (as Delta does); 0 otherwise. */
int opt_check_where(const dl_snapshot *s, const char *where);

/* Optimizes table t from snapshot s (both borrowed). */
int opt_run(opt_result *out, dl_table *t, dl_snapshot *s, const opt_opts *opts);

/* The result row as Delta's OPTIMIZE returns it: columns path (string) and metrics
 * (struct of OptimizeMetrics: numFilesAdded, numFilesRemoved, filesAdded, filesRemoved,
 * partitionsOptimized, zOrderStats, numBatches, totalConsideredFiles, totalFilesSkipped,
 * preserveInsertionOrder, ...). *out_schema and *out_batch belong to the caller (free
 * the batch first). */
int opt_result_batch(arw_schema **out_schema, arw_batch **out_batch, const opt_result *r,
                     const char *path);
/* The result row as a dop_result (store/deltaops' row form, which the Delta Connect
 * services and deltactl print): path string, metrics struct<...> (JSON cell). */
int opt_result_dop(dop_result **out, const opt_result *r, const char *path);
/* The metrics as one JSON object (malloc'ed, free()), the same fields. */
int opt_result_json(char **out, const opt_result *r);

/* Z-order keys (exposed for tests): for n rows and k columns of ranks (ranks[c][i] <
 * 2^32), the interleaved key of row i is k 32-bit ranks bit-interleaved from the most
 * significant bit, column 0 first; written as ceil(32k/64) uint64 words per row, most
 * significant word first, into keys (n * words). */
void opt_zorder_interleave(uint64_t *keys, const uint32_t *const *ranks, size_t k, size_t n);
/* The Hilbert index of one point of k 32-bit coordinates, in transposed form, in place:
 * interleaving the result as opt_zorder_interleave does gives the index (exposed for
 * tests). */
void opt_hilbert_transpose(uint32_t *x, size_t k);

#endif
