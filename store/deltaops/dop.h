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
 * (dop_resolve_table). Three-part catalog names are NOT_FOUND here: the server resolves
 * them through the catalog's table records before it calls in.
 *
 * Errors (common/err.h): DD_EINVAL bad arguments (unknown feature, bad type text),
 * DD_ENOTFOUND no table / not a Delta table, DD_EPRECOND state forbids it (retention
 * below the table's, restore of a vacuumed file, dropping an absent feature), DD_ERANGE
 * version/timestamp outside history, DD_EEXISTS target exists, DD_ECONFLICT a concurrent
 * writer won, DD_EPERM a path from the log or on disk escapes the table (see
 * "confinement"), DD_ENOMEM also for a full disk ("No space left on device"). A failed operation leaves the table unchanged (vacuum may have deleted some
 * unreferenced files before an I/O error; it never deletes a referenced one).
 * Threads: every function is independent; results are plain data owned by the caller. */
#ifndef DD_STORE_DELTAOPS_DOP_H
#define DD_STORE_DELTAOPS_DOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct dl_snapshot dl_snapshot; /* store/delta/dl.h */

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

/* ======================= confinement ======================= */

/* Everything in a table's log is hostile input. A path read from a log (add, remove and
 * cdc paths, a deletion vector's path) is used only when it resolves under a root the
 * operation may touch:
 *  - a relative path (URL-decoded first, so "%2E%2E" is "..") must be clean: no empty,
 *    "." or ".." segment, no backslash, no control character; it resolves under the
 *    table root;
 *  - an absolute path ("/x", "file:/x", "file:///x") is used only when it lies under the
 *    table root itself or under one of the caller's allowed roots (a shallow clone's
 *    files live in its source table, which Delta writes as absolute URIs);
 *  - anything else (other schemes, "file://host/x", relative paths on an object store)
 *    is refused.
 * A refusal is DD_EPERM with a message naming the path, and the operation writes nothing.
 * Every path an operation writes resolves under its own table (the target of a clone).
 *
 * dop_roots lists the extra roots: local directories ("/data/lake" or
 * "file:///data/lake"), matched by whole path segments after normalisation (a trailing
 * '/' is ignored; a root containing "." or ".." segments matches nothing), and/or a
 * callback deciding for an absolute, normalised local path. A path is allowed when it
 * matches any listed root or allow() returns true. Symlinks are not resolved here: the
 * local store never follows a symlink below a table root when it writes, lists or deletes
 * (os_local.c), and vacuum neither follows nor deletes symlinks.
 * Default (NULL, or DOP_ROOTS_INIT): no roots beyond the table itself. The struct and what
 * it points to are borrowed for the duration of the call. */
typedef struct dop_roots {
  size_t count;
  const char *const *urls;                      /* count root URLs or absolute paths */
  bool (*allow)(void *ctx, const char *abs_path); /* may be NULL */
  void *ctx;
} dop_roots;
#define DOP_ROOTS_INIT {0, NULL, NULL, NULL}

/* ======================= naming ======================= */

/* Turns a table name into a location: "/abs/path", "file:///abs/path" and
 * "delta.`/abs/path`" become the path; "parquet.`/p`" is accepted when allow_parquet.
 * A 3-part name "catalog.schema.table" gives DD_ENOTFOUND (the server looks such names up
 * in the catalog first). *out malloc'ed. */
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
 * paths) on a dry run, else one row with the table location. Vacuum walks the table
 * directory through directory descriptors and never follows a symlink: a symlink below
 * the table (to a file or a directory) is neither walked, listed nor deleted, and nothing
 * outside the table root is ever deleted. Absolute paths in the log outside the table
 * are ignored (they keep nothing and are never deleted). Commits VACUUM START and
 * VACUUM END around the deletion. *out_deleted (may be NULL) gets the file count. */
int dop_vacuum(dop_result **out, const char *location, const dop_vacuum_opts *opts,
               uint64_t *out_deleted);

/* version >= 0, or timestamp (ISO-8601 or epoch ms) when version < 0. One row of the six
 * restore metrics. Every file restored must resolve under the table or `roots` (NULL:
 * the table only), else DD_EPERM and nothing is committed. */
int dop_restore_in(dop_result **out, const char *location, int64_t version,
                   const char *timestamp, const dop_roots *roots);
/* dop_restore_in with no extra roots. */
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
  const dop_roots *allowed_roots; /* where the source's absolute paths may point; NULL: the
                                     source table only (see "confinement") */
} dop_clone_opts;
#define DOP_CLONE_OPTS_INIT {.target = NULL, .version = -1, .timestamp = NULL, .shallow = true}

/* One row: source_table_size, source_num_of_files, num_removed_files, num_copied_files,
 * removed_files_size, copied_files_size. Every source path (data files and deletion
 * vectors) must resolve under the source table or allowed_roots, else DD_EPERM before
 * anything is written. A deep clone writes only under the target; if it fails it removes
 * the files it copied (and the target directory when this call created it). */
int dop_clone(dop_result **out, const char *source, const dop_clone_opts *opts);

/* Raises the protocol (never lowers it); an empty result. */
int dop_upgrade_protocol(dop_result **out, const char *location, int reader, int writer);
/* Adds a table feature (moving the protocol to table features); an empty result. */
int dop_add_feature(dop_result **out, const char *location, const char *feature);
/* Drops a removable feature; reader-writer features need truncate_history. */
int dop_drop_feature(dop_result **out, const char *location, const char *feature,
                     bool truncate_history);
/* mode "symlink_format_manifest": writes _symlink_format_manifest/<partition>/manifest.
 * Every file listed must resolve under the table or `roots` (NULL: the table only), else
 * DD_EPERM and no manifest is written. */
int dop_generate_in(dop_result **out, const char *location, const char *mode,
                    const dop_roots *roots);
/* dop_generate_in with no extra roots. */
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

/* ALTER TABLE ... SET TBLPROPERTIES: checks the values as Delta does (unknown delta.* keys,
 * bad booleans, intervals, ...: DD_EINVAL), raises the protocol a property needs, and commits
 * the new configuration (operation "SET TBLPROPERTIES", parameter "properties"). An empty
 * result. */
int dop_set_properties(dop_result **out, const char *location, const char *const *keys, const char *const *values,
                       size_t n);
/* ALTER TABLE ... UNSET TBLPROPERTIES [IF EXISTS]: removes the keys (a missing one is no
 * error, as in Delta 4; delta.feature.* is DD_EINVAL: use drop-feature) and commits
 * (operation "UNSET TBLPROPERTIES", parameters "properties" and "ifExists"). */
int dop_unset_properties(dop_result **out, const char *location, const char *const *keys, size_t n);

/* ---- liquid clustering (dop_cluster.c) ----
 * A table is clustered when its protocol has the `clustering` writer feature. */
bool dop_is_clustered(const dl_snapshot *s);
/* The clustering columns' logical names (dotted paths) from the delta.clustering domain:
 * returns 1 with *out (malloc'ed, dop_clustering_free) and *n when the table is clustered
 * (n may be 0: CLUSTER BY NONE), 0 with none when it is not, or an error. */
int dop_clustering_columns(char ***out, size_t *n, const dl_snapshot *s);
void dop_clustering_free(char **cols, size_t n);
/* ALTER TABLE ... CLUSTER BY (cols) (n 0: CLUSTER BY NONE), as Delta: top-level columns
 * with stats, at most 4, no partitioned table (DD_EINVAL with Delta's error class). An
 * unclustered table gets the clustering feature; NONE on one commits nothing. An empty
 * result. */
int dop_cluster_by(dop_result **out, const char *location, const char *const *cols, size_t n);

/* identifier "parquet.`/path`" (or a path); partition_schema DDL "a INT, b STRING" or
 * NULL. One row: column "identifier" = "delta.`/path`". */
int dop_convert(dop_result **out, const char *identifier, const char *partition_schema,
                dop_progress_fn progress, void *progress_ctx);

/* One row, one boolean column "value". */
int dop_is_delta(dop_result **out, const char *location);
/* DESCRIBE HISTORY: newest first; limit 0 = all. */
int dop_history(dop_result **out, const char *location, size_t limit);
/* DESCRIBE DETAIL: one row, the columns of Delta on Spark (format ... tableFeatures) and
 * then "version", the snapshot's version. The one description of a table's detail: the
 * server's DescribeDetail and `deltactl table detail` (both paths) print these columns. */
int dop_detail(dop_result **out, const char *location);
/* The same for the snapshot at version (>= 0) or, when version < 0, at timestamp (epoch ms
 * or ISO-8601; NULL: the latest). DD_ERANGE outside the table's history. */
int dop_detail_at(dop_result **out, const char *location, int64_t version, const char *timestamp);

/* ======================= helpers shared with callers ======================= */

/* Parses a DDL type ("bigint", "decimal(10,2)", "map<string,array<int>>",
 * "struct<a:int,b:string>") into Delta's JSON type (malloc'ed JSON text). */
int dop_ddl_type_json(char **out, const char *ddl);
/* Parses a schema as Spark's DDLParse does: a column list ("a INT, b STRING NOT NULL") into
 * Delta's JSON struct type, else one DDL type as dop_ddl_type_json. */
int dop_ddl_schema_json(char **out, const char *ddl);
/* The default retention of deleted files of a table property value ("interval 7 days"),
 * in milliseconds; DD_EINVAL for unparsable text. */
int dop_parse_interval_ms(const char *text, int64_t *out_ms);

#endif
