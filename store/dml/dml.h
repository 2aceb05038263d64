/* dml.h: DELETE and UPDATE of rows of a Delta table (prefix dml_), as Delta's DeleteCommand
 * and UpdateCommand do them, committed through dl_txn. MERGE (the next step of issue 14)
 * is meant to reuse the file loop and the commit of dml_int.h.
 *
 * Which files change: the active files the predicate's data skipping (ex_skipper over
 * partition values and stats) cannot rule out are the candidates. A DELETE whose predicate
 * reads only partition columns (or that has none) removes the matching files whole without
 * reading them (when the predicate came as SQL text: predicate_sql; a tree is evaluated on
 * the rows). Otherwise each candidate is read through the scan (its deletion vector
 * applied) and the predicate evaluated per row (NULL is "not matched"); a file with no
 * matched row is left alone; a file with one is rewritten copy-on-write: DELETE keeps the
 * unmatched rows, UPDATE writes every row with `if(predicate, CAST(value AS column type),
 * column)` for each assigned column (Spark's ANSI cast, as Delta's castIfNeeded). New files
 * go through the data writer (stats, the old file's partition directory); the old ones are
 * removed with dataChange true and the removed add's partitionValues, size, stats, tags and
 * deletionVector.
 *
 * Checks before anything is written: the predicate must bind to the table's columns and be
 * boolean, every assignment must name a top-level column (not a partition column: moving
 * rows between partitions is not done yet, DD_EUNSUPPORTED) once; delta.appendOnly=true
 * refuses (DD_EPRECOND, Delta's DELTA_CANNOT_MODIFY_APPEND_ONLY). Updated rows must satisfy
 * the table's CHECK constraints (delta.constraints.*: false or NULL is a violation, as
 * Delta's) and NOT NULL columns: a violation is DD_EINVAL naming the constraint and the row's
 * values, the files written so far are deleted and nothing is committed.
 *
 * The commit: operation DELETE / UPDATE, operationParameters.predicate the JSON array of the
 * predicate's Spark SQL text (without one: ["true"] for DELETE, [] for UPDATE, as
 * Delta writes them; Spark's text carries expression ids, "(x#12 > 3)", deltad's not), operationMetrics as Delta writes them (see dml_metrics_json). The
 * read set is the candidate files: a concurrent commit removing one aborts with DD_ECONFLICT
 * naming it (its new files deleted); concurrent appends commit. Nothing to change commits
 * nothing (version -1), as Delta.
 *
 * Deletion vectors: with delta.enableDeletionVectors=true and the deletionVectors writer
 * feature, a file with a matched row keeps its data: it is removed and added again with a
 * new deletion vector (its old one plus the matched rows' positions; dml_dv.c writes the
 * file), and UPDATE writes the matched rows' new values to a new file. A DELETE that would
 * leave a file empty removes it. The change data feed is not written yet:
 * delta.enableChangeDataFeed=true is refused (DD_EUNSUPPORTED) rather than committing
 * without change data.
 *
 * Memory: one batch of one file at a time (plus the data writer's file in memory).
 * Errors follow common/err.h; on error nothing is committed or left behind. */
#ifndef DD_STORE_DML_DML_H
#define DD_STORE_DML_DML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/delta/dl.h"
#include "store/deltaops/dop.h"
#include "store/expr/ex.h"
#include "store/parquet/pq.h"

/* `column = value` of an UPDATE: a top-level column name (matched case-insensitively) and
 * an unbound expression over the table's columns (borrowed). */
typedef struct dml_assignment {
  const char *column;
  const ex_node *value;
} dml_assignment;

typedef struct dml_opts {
  unsigned version;
  /* The condition: an unbound tree (borrowed) or, when that is NULL, SQL text parsed with
   * ex_parse; neither: every row. */
  const ex_node *predicate;
  const char *predicate_sql;
  const dml_assignment *assignments; /* UPDATE only, at least one */
  size_t num_assignments;
  pq_codec codec;                    /* SNAPPY */
  size_t batch_rows;                 /* scan batches (0: the scan's default) */
  int max_retries;                   /* commit retries after lost races (default 10) */
  int64_t now_ms;                    /* 0: the clock */
  /* Absolute local directories besides the table's that data files may be read from
   * (scn_opts.roots). */
  const char *const *roots;
  size_t num_roots;
} dml_opts;
#define DML_OPTS_VERSION 1
#define DML_OPTS_INIT {.version = DML_OPTS_VERSION, .codec = PQ_CODEC_SNAPPY, .max_retries = 10}

typedef struct dml_result {
  int64_t version;             /* committed version; -1 when nothing changed */
  bool is_update;
  bool metadata_only;          /* whole files removed, none read (DELETE) */
  /* rows deleted / updated; -1 when a metadata-only delete met a file without stats */
  int64_t num_affected_rows;
  int64_t num_copied_rows;     /* unmatched rows of rewritten files */
  int64_t num_removed_files, num_added_files;
  int64_t num_removed_bytes, num_added_bytes;
  int64_t num_dvs_removed;     /* removed files that carried a deletion vector */
  int64_t num_dvs_added;       /* files given their first deletion vector */
  int64_t num_dvs_updated;     /* files whose deletion vector grew */
  int64_t num_changed_files;   /* files kept with a new deletion vector */
  int64_t num_files_considered, num_files_read;
  int64_t execution_ms, scan_ms, rewrite_ms;
} dml_result;

/* DELETE FROM table [WHERE predicate] on snapshot s of table t (both borrowed). */
int dml_delete(dml_result *out, dl_table *t, dl_snapshot *s, const dml_opts *opts);
/* UPDATE table SET assignments [WHERE predicate]. */
int dml_update(dml_result *out, dl_table *t, dl_snapshot *s, const dml_opts *opts);

/* The result row as Delta's: one column num_affected_rows (bigint). */
int dml_result_dop(dop_result **out, const dml_result *r);
/* operationMetrics as Delta writes them for the operation (string values), malloc'ed. */
int dml_metrics_json(char **out, const dml_result *r);

#endif
