/* dop.h: Delta table maintenance operations (prefix dop_) on top of the Delta log engine
 * (store/delta/dl.h) and the object store (store/objstore/os.h): vacuum, restore, clone,
 * protocol upgrades and table features, symlink manifests, create/replace, convert from
 * Parquet, is-delta, history and detail. These are the `delta.connect` commands and
 * relations; the server (server/service/connect_*.c) and deltactl call them.
 *
 * Every operation returns its answer as a dop_result: a column schema (names and Spark SQL
 * type text, as Delta on Spark names them) and rows of typed cells. Commits carry a
 * commitInfo with the operation names and operationParameters/operationMetrics keys that
 * Delta on Spark writes (VACUUM START/END, RESTORE, CLONE, UPGRADE PROTOCOL, SET
 * TBLPROPERTIES, DROP FEATURE, CREATE TABLE, CONVERT).
 *
 * Tables are named by a location: a local directory, file:// URL, or "delta.`/path`"
 * (dop_resolve_table). Three-part catalog names are NOT_FOUND: the catalog has no table
 * registry yet.
 *
 * Errors (common/err.h): DD_EINVAL bad arguments (unknown feature, bad type text),
 * DD_ENOTFOUND no table / not a Delta table, DD_EPRECOND state forbids it (retention
 * below the table's, restore of a vacuumed file, dropping an absent feature), DD_ERANGE
 * version/timestamp outside history, DD_EEXISTS target exists, DD_ECONFLICT a concurrent
 * writer won. A failed operation leaves the table unchanged (vacuum may have deleted some
 * unreferenced files before an I/O error; it never deletes a referenced one).
 * Threads: every function is independent; results are plain data owned by the caller. */
#ifndef DD_STORE_DELTAOPS_DOP_H
#define DD_STORE_DELTAOPS_DOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ======================= results ======================= */

typedef enum dop_kind {
  DOP_NULL, DOP_BOOL, DOP_I64, DOP_F64, DOP_STR, DOP_TS_MS, DOP_JSON
} dop_kind;

typedef struct dop_cell {
  dop_kind kind;
  int64_t i64; /* BOOL (0/1), I64, TS_MS */
  double f64;
  char *str;   /* STR, JSON (owned) */
} dop_cell;

typedef struct dop_col {
  const char *name; /* static strings */
  const char *type; /* Spark SQL type text: "bigint", "string", "map<string,string>", ... */
  bool nullable;
} dop_col;

typedef struct dop_result {
  size_t ncols;
  const dop_col *cols; /* static */
  size_t nrows;
  dop_cell *cells;     /* nrows * ncols, row-major */
  size_t cap;
} dop_result;

void dop_result_free(dop_result *r);
/* Cell (row, col); borrowed. */
const dop_cell *dop_result_cell(const dop_result *r, size_t row, size_t col);

/* Progress of long work (vacuum, deep clone, convert): called now and then with a phase
 * name and counts; may be NULL. */
typedef void (*dop_progress_fn)(void *ctx, const char *phase, uint64_t done, uint64_t total);

/* ======================= naming ======================= */

/* Turns a table name into a location: "/abs/path", "file:///abs/path" and
 * "delta.`/abs/path`" become the path; "parquet.`/p`" is accepted when allow_parquet.
 * A 3-part name "catalog.schema.table" gives DD_ENOTFOUND (no catalog table registry
 * yet). *out malloc'ed. */
int dop_resolve_table(char **out, const char *name, bool allow_parquet);

/* ======================= operations ======================= */

typedef struct dop_vacuum_opts {
  bool has_retention;
  double retention_hours;       /* used when has_retention */
  bool retention_check;         /* refuse a retention shorter than the table's (Spark's
                                   retentionDurationCheck.enabled); default true */
  bool dry_run;                 /* list what would go; delete nothing, commit nothing */
  int64_t now_ms;               /* 0: the clock */
  dop_progress_fn progress;
  void *progress_ctx;
} dop_vacuum_opts;
#define DOP_VACUUM_OPTS_INIT {false, 0, true, false, 0, NULL, NULL}

/* Rows: column "path" (string): the files deleted / that would be deleted (absolute
 * paths) on a dry run, else one row with the table location. Commits VACUUM START and
 * VACUUM END around the deletion. *out_deleted (may be NULL) gets the file count. */
int dop_vacuum(dop_result **out, const char *location, const dop_vacuum_opts *opts,
               uint64_t *out_deleted);

/* version >= 0, or timestamp (ISO-8601 or epoch ms) when version < 0. One row of the six
 * restore metrics. */
int dop_restore(dop_result **out, const char *location, int64_t version, const char *timestamp);

typedef struct dop_clone_opts {
  const char *target;           /* location of the new table */
  int64_t version;              /* >= 0: clone that version */
  const char *timestamp;        /* else this timestamp, else latest */
  bool shallow;                 /* false: deep clone (copies data and DV files) */
  bool replace;                 /* overwrite an existing table at target */
  size_t num_properties;        /* overrides of the source's configuration */
  const char *const *property_keys;
  const char *const *property_values;
  dop_progress_fn progress;
  void *progress_ctx;
} dop_clone_opts;
#define DOP_CLONE_OPTS_INIT {NULL, -1, NULL, true, false, 0, NULL, NULL, NULL, NULL}

/* One row: source_table_size, source_num_of_files, num_removed_files, num_copied_files,
 * removed_files_size, copied_files_size. */
int dop_clone(dop_result **out, const char *source, const dop_clone_opts *opts);

/* Raises the protocol (never lowers it); an empty result. */
int dop_upgrade_protocol(dop_result **out, const char *location, int reader, int writer);
/* Adds a table feature (moving the protocol to table features); an empty result. */
int dop_add_feature(dop_result **out, const char *location, const char *feature);
/* Drops a removable feature; reader-writer features need truncate_history. */
int dop_drop_feature(dop_result **out, const char *location, const char *feature,
                     bool truncate_history);
/* mode "symlink_format_manifest": writes _symlink_format_manifest/<partition>/manifest. */
int dop_generate(dop_result **out, const char *location, const char *mode);

typedef enum dop_create_mode {
  DOP_CREATE = 1, DOP_CREATE_IF_NOT_EXISTS = 2, DOP_REPLACE = 3, DOP_CREATE_OR_REPLACE = 4
} dop_create_mode;

typedef struct dop_column {
  const char *name;
  const char *type;             /* DDL type text: "int", "decimal(10,2)", "array<string>" */
  bool nullable;
  const char *comment;          /* may be NULL */
  const char *generated_as;     /* generation expression or NULL */
  bool identity;
  int64_t identity_start, identity_step;
  bool identity_allow_explicit_insert;
} dop_column;

typedef struct dop_create_opts {
  dop_create_mode mode;
  const char *location;
  const char *name;             /* metadata name or NULL */
  const char *comment;          /* table description or NULL */
  size_t num_columns;
  const dop_column *columns;
  size_t num_partition_columns;
  const char *const *partition_columns;
  size_t num_clustering_columns;
  const char *const *clustering_columns;
  size_t num_properties;
  const char *const *property_keys;
  const char *const *property_values;
} dop_create_opts;

/* An empty result. */
int dop_create(dop_result **out, const dop_create_opts *opts);

/* identifier "parquet.`/path`" (or a path); partition_schema DDL "a INT, b STRING" or
 * NULL. One row: column "identifier" = "delta.`/path`". */
int dop_convert(dop_result **out, const char *identifier, const char *partition_schema,
                dop_progress_fn progress, void *progress_ctx);

/* One row, one boolean column "value". */
int dop_is_delta(dop_result **out, const char *location);
/* DESCRIBE HISTORY: newest first; limit 0 = all. */
int dop_history(dop_result **out, const char *location, size_t limit);
/* DESCRIBE DETAIL: one row. */
int dop_detail(dop_result **out, const char *location);

/* ======================= helpers shared with callers ======================= */

/* Parses a DDL type ("bigint", "decimal(10,2)", "map<string,array<int>>",
 * "struct<a:int,b:string>") into Delta's JSON type (malloc'ed JSON text). */
int dop_ddl_type_json(char **out, const char *ddl);
/* The default retention of deleted files of a table property value ("interval 7 days"),
 * in milliseconds; DD_EINVAL for unparsable text. */
int dop_parse_interval_ms(const char *text, int64_t *out_ms);

#endif
