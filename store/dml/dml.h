/* dml.h: DELETE, UPDATE and MERGE of rows of a Delta table (prefix dml_), as Delta's
 * DeleteCommand, UpdateCommand and MergeIntoCommand do them, committed through dl_txn
 * (MERGE: see its section below).
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
 * leave a file empty removes it.
 *
 * Change data feed: with delta.enableChangeDataFeed=true, DELETE, UPDATE and MERGE also
 * write the changed rows to change data files (dml_cdc.c): `delete` rows, `update_preimage`
 * and `update_postimage` pairs, MERGE's `insert` rows (not for a MERGE with only WHEN NOT
 * MATCHED clauses, whose adds readers take as the inserts, as Delta), committed as cdc
 * actions (also with deletion vectors). A DELETE removing whole files by partition values
 * writes none: readers take its removes as the deletes, as Delta's.
 *
 * Copy-on-write without the change data feed (and, for UPDATE, without a partition column
 * assigned) works on two threads, each rewriting every other candidate into its own data
 * writers (one file per partition run, cut at 128 MiB; MERGE: one per partition value);
 * the commit's actions are the same whichever thread finishes first (docs/dml.md).
 *
 * Memory: one batch of one file at a time per thread (plus, copy-on-write, a file's rows
 * held before its first matched row, and each data writer's row group).
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
  int64_t num_change_files;    /* change data files (numAddedChangeFiles) */
  int64_t num_files_considered, num_files_read;
  int64_t execution_ms, scan_ms, rewrite_ms;
} dml_result;

/* DELETE FROM table [WHERE predicate] on snapshot s of table t (both borrowed). */
int dml_delete(dml_result *out, dl_table *t, dl_snapshot *s, const dml_opts *opts);
/* UPDATE table SET assignments [WHERE predicate]. */
int dml_update(dml_result *out, dl_table *t, dl_snapshot *s, const dml_opts *opts);

/* ---- MERGE (dml_merge*.c) -----------------------------------------------------------------
 * MERGE INTO target [AS ta] USING source [AS sa] ON cond WHEN ... as Delta's MergeIntoCommand.
 * The source is materialised (its batches are borrowed for the call; memory is the source
 * plus one target file's output at a time). Column names in the ON condition and the
 * clauses may be qualified by the aliases (ta.x, sa.x) or plain when only one side has the
 * column (both: [AMBIGUOUS_REFERENCE]). The equalities `target-expr = source-expr` among
 * the ON condition's top-level AND conjuncts are the hash join keys (NULL never matches);
 * the rest is evaluated per candidate pair. Without an equality the join is a nested loop,
 * refused (DD_EUNSUPPORTED) above DML_MERGE_NESTED_MAX source rows. The conjuncts that read
 * only the target skip target files (partitions, stats) unless a WHEN NOT MATCHED BY SOURCE
 * clause needs every row. Clauses apply in the order given, the first whose condition holds
 * (Delta's). A target row matched by two source rows is DD_EINVAL
 * [DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE] unless the only WHEN MATCHED clause
 * is an unconditional DELETE (as Delta). Changed files are rewritten copy-on-write or, with
 * deletion vectors on, marked (as UPDATE does); inserted and updated rows go to new files in
 * their partition (a partition column may be updated). delta.appendOnly allows a MERGE with
 * only WHEN NOT MATCHED clauses. With schema_evolution, UPDATE SET * / INSERT * add the
 * source's columns the target lacks and an assignment to a missing column adds it (from a
 * source column), as Delta's schema evolution (dml_merge_evolve.c). */
typedef enum dml_merge_kind {
  DML_MERGE_MATCHED,           /* WHEN MATCHED: UPDATE / UPDATE * / DELETE */
  DML_MERGE_NOT_MATCHED,       /* WHEN NOT MATCHED [BY TARGET]: INSERT / INSERT * */
  DML_MERGE_NOT_MATCHED_BY_SOURCE, /* WHEN NOT MATCHED BY SOURCE: UPDATE / DELETE */
} dml_merge_kind;

typedef enum dml_merge_action {
  DML_MERGE_UPDATE,      /* assignments: target column = expression */
  DML_MERGE_UPDATE_STAR, /* every target column from the source column of its name */
  DML_MERGE_DELETE,
  DML_MERGE_INSERT,      /* assignments: target column = source expression; others NULL */
  DML_MERGE_INSERT_STAR, /* every target column from the source column of its name */
} dml_merge_action;

typedef struct dml_merge_clause {
  dml_merge_kind kind;
  dml_merge_action action;
  const ex_node *condition;           /* NULL: always (borrowed) */
  const dml_assignment *assignments;  /* UPDATE / INSERT; column may be qualified (t.x) */
  size_t num_assignments;
} dml_merge_clause;

#define DML_MERGE_NESTED_MAX 4096

typedef struct dml_merge_opts {
  unsigned version;
  const arw_schema *source_schema;    /* borrowed, as the batches */
  const arw_batch *const *source;
  size_t num_source;
  const char *target_alias, *source_alias; /* NULL: none */
  const ex_node *on;                  /* the ON condition (required) */
  const dml_merge_clause *clauses;    /* in order; at least one */
  size_t num_clauses;
  bool schema_evolution;              /* WITH SCHEMA EVOLUTION / autoMerge */
  pq_codec codec;
  size_t batch_rows;
  int max_retries;
  int64_t now_ms;
  const char *const *roots;
  size_t num_roots;
} dml_merge_opts;
#define DML_MERGE_OPTS_VERSION 1
#define DML_MERGE_OPTS_INIT {.version = DML_MERGE_OPTS_VERSION, .codec = PQ_CODEC_SNAPPY, .max_retries = 10}

typedef struct dml_merge_result {
  int64_t version;                    /* -1: nothing changed, nothing committed */
  int64_t num_source_rows;
  int64_t inserted, matched_updated, matched_deleted, nmbs_updated, nmbs_deleted, copied;
  int64_t files_added, files_removed, bytes_added, bytes_removed;
  int64_t dvs_added, dvs_removed, dvs_updated;
  int64_t change_files;               /* change data files (numTargetChangeFilesAdded) */
  int64_t files_before_skipping, files_after_skipping;
  int64_t execution_ms, materialize_ms, scan_ms, rewrite_ms;
} dml_merge_result;

int dml_merge(dml_merge_result *out, dl_table *t, dl_snapshot *s, const dml_merge_opts *opts);
/* Delta's result row: num_affected_rows, num_updated_rows, num_deleted_rows,
 * num_inserted_rows (bigint). */
int dml_merge_result_dop(dop_result **out, const dml_merge_result *r);
/* MERGE's operationMetrics, Delta's keys (string values), malloc'ed. */
int dml_merge_metrics_json(char **out, const dml_merge_result *r);

/* The result row as Delta's: one column num_affected_rows (bigint). */
int dml_result_dop(dop_result **out, const dml_result *r);
/* operationMetrics as Delta writes them for the operation (string values), malloc'ed. */
int dml_metrics_json(char **out, const dml_result *r);

/* ---- Writes (dml_write.c) -------------------------------------------------------------------
 * New rows into a table, as Delta's WriteIntoDelta (DataFrameWriter save / saveAsTable,
 * INSERT INTO / OVERWRITE, CREATE [OR REPLACE] TABLE AS SELECT). The table at t may not
 * exist yet: then it is created by the same commit (protocol 1/2, metadata from
 * schema_string and partition_by), whatever the mode. When it exists:
 *   mode ERROR: DD_EEXISTS [DELTA_PATH_EXISTS]; IGNORE: nothing written (skipped);
 *   APPEND: the rows are added; OVERWRITE: every active file is removed (dataChange true)
 *   and the rows added, in one commit. replace (CREATE OR REPLACE): the metadata is the
 *   source's (the table id kept) and the old files removed; overwrite_schema with OVERWRITE
 *   the same. partition_by given for an existing table must equal its partitioning
 *   ([DELTA_PARTITION_COLUMNS_MISMATCH]).
 * Columns: by_name (DataFrame writes) matches source columns to table columns by name
 * (case-insensitive); table columns the source lacks get NULL; a source column the table
 * lacks is Delta's schema mismatch (DD_EINVAL) unless merge_schema, which appends it to the
 * schema (metadata commit with the rows); a column of another type than the table's is
 * DD_EINVAL [DELTA_FAILED_TO_MERGE_FIELDS], as Delta's (no implicit widening). Otherwise
 * (SQL) by position, or through columns (INSERT INTO t (c1, c2)), with Spark's arity
 * errors, and values are cast to the table's types with Spark's ANSI store assignment (numbers to numbers, an overflow is an error;
 * datetimes to datetimes; atomic values to strings; other pairs DD_EINVAL
 * [INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST]). NOT NULL columns and CHECK constraints
 * are enforced (DD_EINVAL, nothing written); generated columns the source lacks are
 * computed; identity columns it lacks get fresh values (the commit moves their
 * delta.identity.highWaterMark), one it has is DD_EINVAL for GENERATED ALWAYS
 * [DELTA_IDENTITY_COLUMNS_EXPLICIT_INSERT_NOT_SUPPORTED], kept for BY DEFAULT. replace_where (with OVERWRITE): a predicate on partition columns only
 * (others DD_EUNSUPPORTED); only the files of the partitions it selects are removed, and a
 * written row that does not satisfy it is DD_EINVAL [DELTA_REPLACE_WHERE_MISMATCH]; the
 * commit's parameters carry it as predicate.
 * The commit: operation WRITE (parameters mode, partitionBy: the partitioning the write
 * gave, canMergeSchema / canOverwriteSchema with those options) or, with ctas, CREATE [OR REPLACE] TABLE
 * AS SELECT (partitionBy, clusterBy, description, isManaged, properties); metrics numFiles, numOutputRows, numOutputBytes (and numRemovedFiles,
 * numRemovedBytes for an overwrite). An append reads nothing (a blind append: concurrent
 * writers commit); an overwrite reads the whole table. */
typedef enum dml_write_mode {
  DML_WRITE_APPEND = 1, DML_WRITE_OVERWRITE, DML_WRITE_ERROR, DML_WRITE_IGNORE
} dml_write_mode;

/* The source's next batch (*out NULL at the end; borrowed until the next call). */
typedef int (*dml_source_fn)(void *ctx, const arw_batch **out);

typedef struct dml_write_opts {
  unsigned version;
  dml_write_mode mode;
  const arw_schema *source_schema;   /* the batches' schema (borrowed) */
  dml_source_fn next;
  void *ctx;
  bool by_name;
  const char *const *columns;        /* INSERT's column list, in source order (or NULL) */
  size_t num_columns;
  const char *schema_string;         /* the source's schema as Delta's JSON (new tables, mergeSchema) */
  bool has_partition_by;
  const char *const *partition_by;
  size_t num_partition_by;
  const char *name, *description;    /* metadata of a new table (may be NULL) */
  const char *configuration;         /* packed map of a new table's properties (may be NULL) */
  bool merge_schema, overwrite_schema, replace, ctas;
  const char *replace_where;         /* OVERWRITE of the partitions this selects (SQL text) */
  bool no_data_change;               /* dataChange=false on the adds */
  const char *operation;             /* NULL: as above */
  pq_codec codec;
  int max_retries;
  int64_t now_ms;
} dml_write_opts;
#define DML_WRITE_OPTS_VERSION 1
#define DML_WRITE_OPTS_INIT {.version = DML_WRITE_OPTS_VERSION, .mode = DML_WRITE_APPEND, \
                             .codec = PQ_CODEC_SNAPPY, .max_retries = 10}

typedef struct dml_write_result {
  int64_t version;                   /* -1: nothing committed (ignore mode) */
  bool created, skipped;
  int64_t num_files, num_rows, num_bytes, num_removed_files, num_removed_bytes;
} dml_write_result;

int dml_write(dml_write_result *out, dl_table *t, const dml_write_opts *opts);

#endif
