/* dl.h: the Delta Lake transaction-log engine: open snapshots of a table (latest, at a
 * version, at a timestamp), read its protocol, metadata, schema, active files, tombstones,
 * app transactions and domain metadata, walk history and the change data feed, load
 * deletion vectors, commit new versions with optimistic concurrency, write checkpoints and
 * clean up the log, and keep snapshots warm in a thread-safe cache.
 *
 * Ownership: objects returned through `**out` belong to the caller and have a _free that
 * accepts NULL. Pointers returned directly (dl_snapshot_protocol, the dl_file handed to an
 * iteration callback, ...) are borrowed: they stay valid while the object they came from
 * lives, or, for callback arguments, only during the callback.
 *
 * Threads: a dl_table and a dl_snapshot are immutable after creation and may be shared by
 * threads (snapshots are reference counted: dl_snapshot_ref / dl_snapshot_free). A dl_txn
 * belongs to one thread. A dl_cache is internally locked. Opening a snapshot from a
 * Parquet checkpoint starts up to one thread per core (at most 4) for its row groups and
 * joins them before returning.
 *
 * Errors: every int function returns 0 or a negative DD_E* code (common/err.h) with the
 * message in dd_err_msg(). Notable codes: DD_EUNSUPPORTED (a table feature this engine does
 * not support, named in the message), DD_ECORRUPT (a malformed or gapped log; a gap names
 * the missing version), DD_ERANGE (version/timestamp outside the table's history),
 * DD_ECONFLICT (a commit lost a race to a logically conflicting commit). */
#ifndef DD_STORE_DELTA_DL_H
#define DD_STORE_DELTA_DL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/objstore/os.h"

#define DL_ENGINE_VERSION "0.1.0"

typedef struct dl_table dl_table;
typedef struct dl_snapshot dl_snapshot;
typedef struct dl_txn dl_txn;
typedef struct dl_cache dl_cache;
typedef struct dl_stats dl_stats;

/* ======================= packed string maps =======================
 * Partition values, tags, configuration and format options are "packed maps": a sequence
 * of key\0value\0 pairs ended by an empty key. A null value is stored as the single byte
 * 0xFF (never valid UTF-8) and reported as value == NULL. */

/* Steps *cursor (start it at the packed map); returns 1 with key/value set, 0 at the end. */
int dl_kv_next(const char **cursor, const char **key, const char **value);
/* Looks up key; returns 1 and sets *value (NULL for a null value) when present, else 0. */
int dl_kv_get(const char *packed, const char *key, const char **value);
/* Builds a packed map (malloc'ed, free()) from parallel arrays; values[i] may be NULL. */
int dl_kv_pack(char **out, const char *const *keys, const char *const *values, size_t n);

/* ======================= schema ======================= */

typedef enum dl_type_kind {
  DL_TYPE_STRING, DL_TYPE_LONG, DL_TYPE_INTEGER, DL_TYPE_SHORT, DL_TYPE_BYTE,
  DL_TYPE_FLOAT, DL_TYPE_DOUBLE, DL_TYPE_DECIMAL, DL_TYPE_BOOLEAN, DL_TYPE_BINARY,
  DL_TYPE_DATE, DL_TYPE_TIMESTAMP, DL_TYPE_TIMESTAMP_NTZ, DL_TYPE_VARIANT, DL_TYPE_VOID,
  DL_TYPE_STRUCT, DL_TYPE_ARRAY, DL_TYPE_MAP,
} dl_type_kind;

typedef struct dl_type dl_type;

typedef struct dl_field {
  const char *name;
  const dl_type *type;
  bool nullable;
  const char *metadata_json;      /* the field's "metadata" object as compact JSON */
  int64_t column_mapping_id;      /* delta.columnMapping.id, or -1 */
  const char *physical_name;      /* delta.columnMapping.physicalName, or NULL */
} dl_field;

/* A read-only type tree; lives as long as the snapshot / schema that returned it. */
struct dl_type {
  dl_type_kind kind;
  int precision, scale;           /* DECIMAL */
  size_t num_fields;              /* STRUCT */
  const dl_field *fields;
  const dl_type *element;         /* ARRAY */
  bool contains_null;
  const dl_type *key, *value;     /* MAP */
  bool value_contains_null;
};

typedef struct dl_schema dl_schema;
/* Parses a Delta schemaString (Spark JSON schema). */
int dl_schema_parse(dl_schema **out, const char *json, size_t len);
void dl_schema_free(dl_schema *s);
const dl_type *dl_schema_root(const dl_schema *s);
/* Finds a top-level field by name (exact, then case-insensitive); NULL if none. */
const dl_field *dl_schema_field(const dl_schema *s, const char *name);
/* Finds a top-level field by its column-mapping physical name (partitionValues and stats
 * use physical names when delta.columnMapping.mode is id or name), else by name. */
const dl_field *dl_schema_field_physical(const dl_schema *s, const char *physical);
/* "long", "decimal(10,2)", "struct<...>"; writes at most cap bytes, returns needed length. */
size_t dl_type_format(const dl_type *t, char *buf, size_t cap);

/* ======================= table ======================= */

/* Opens a table location (a local directory, file:// URL, or an object-store URL through
 * os_open and the process's opener). Nothing is read yet. */
int dl_table_open(dl_table **out, const char *location);
/* Wraps an existing store; with take_ownership the table frees it. */
int dl_table_open_store(dl_table **out, os_store *store, bool take_ownership);
void dl_table_free(dl_table *t);
const os_store *dl_table_store(const dl_table *t);
const char *dl_table_location(const dl_table *t);

/* ======================= snapshots ======================= */

typedef struct dl_snapshot_opts {
  int64_t version;      /* >= 0: that version; -1: latest (or as of timestamp_ms) */
  int64_t timestamp_ms; /* INT64_MIN: none; else the latest version committed at or before it
                         * (DD_ERANGE before the first commit or after the latest one) */
  bool skip_protocol_check; /* open even when reader features are unsupported (tools only) */
} dl_snapshot_opts;
#define DL_SNAPSHOT_OPTS_INIT {.version = -1, .timestamp_ms = INT64_MIN}

int dl_snapshot_open(dl_snapshot **out, dl_table *t, const dl_snapshot_opts *opts);
dl_snapshot *dl_snapshot_ref(dl_snapshot *s);
void dl_snapshot_free(dl_snapshot *s); /* drops one reference */
/* Data a layer above derives from a snapshot and keeps with it for as long as it lives
 * (Delta Sharing's file ids): a struct that starts with a dl_snapshot_ext, freed through
 * its free hook with the snapshot. One per snapshot; thread-safe. */
typedef struct dl_snapshot_ext {
  void (*free)(struct dl_snapshot_ext *e);
} dl_snapshot_ext;
dl_snapshot_ext *dl_snapshot_ext_get(const dl_snapshot *s); /* NULL: none yet */
/* Attaches e unless another is attached already; returns the one attached (e, or the
 * earlier one: e is then still the caller's to free). */
dl_snapshot_ext *dl_snapshot_ext_set(const dl_snapshot *s, dl_snapshot_ext *e);

typedef struct dl_protocol {
  int32_t min_reader_version, min_writer_version;
  size_t num_reader_features, num_writer_features;
  const char *const *reader_features; /* NULL when the action has no readerFeatures */
  const char *const *writer_features;
} dl_protocol;

typedef struct dl_metadata {
  const char *id, *name, *description; /* name/description may be NULL */
  const char *format_provider;
  const char *format_options;          /* packed map */
  const char *schema_string;
  size_t num_partition_columns;
  const char *const *partition_columns;
  const char *configuration;           /* packed map */
  int64_t created_time;                /* -1 when absent */
} dl_metadata;

int64_t dl_snapshot_version(const dl_snapshot *s);
/* Commit timestamp of this version (in-commit timestamp or file time), epoch ms. */
int64_t dl_snapshot_timestamp(const dl_snapshot *s);
const dl_protocol *dl_snapshot_protocol(const dl_snapshot *s);
const dl_metadata *dl_snapshot_metadata(const dl_snapshot *s);
const dl_schema *dl_snapshot_schema(const dl_snapshot *s);
/* A configuration property or NULL. */
const char *dl_snapshot_property(const dl_snapshot *s, const char *key);
size_t dl_snapshot_num_files(const dl_snapshot *s);
int64_t dl_snapshot_size_bytes(const dl_snapshot *s);
/* Version of the checkpoint the snapshot was built from, or -1. */
int64_t dl_snapshot_checkpoint_version(const dl_snapshot *s);
/* A snapshot of the same table, version and files as s (shared, not copied) whose metadata
 * is md instead: the table as a commit that also changes its metadata will leave it, which
 * an operation evolving the schema (MERGE WITH SCHEMA EVOLUTION) reads and writes through
 * before it commits. md is copied; *out is a new reference (dl_snapshot_free). */
int dl_snapshot_with_metadata(dl_snapshot **out, const dl_snapshot *s, const dl_metadata *md);
/* A random (version 4) UUID, as the log's ids and column mapping's physical names use. */
void dl_uuid(char out[37]);

typedef struct dl_dv {
  char storage_type;          /* 'u', 'i' or 'p' */
  const char *path_or_inline;
  int64_t offset;             /* -1 when absent */
  int32_t size_in_bytes;
  int64_t cardinality;
  int64_t max_row_index;      /* -1 when absent */
} dl_dv;

typedef struct dl_file {
  const char *path;            /* URL-decoded, relative to the table (or absolute URI) */
  const char *raw_path;        /* as written in the log */
  int64_t size;                /* -1 when absent (some removes) */
  int64_t modification_time;   /* add / cdc */
  int64_t deletion_timestamp;  /* remove; -1 when absent */
  bool data_change;
  const char *stats;           /* raw stats JSON or NULL; parse with dl_stats_parse */
  const char *partition_values;/* packed map (never NULL) */
  const char *tags;            /* packed map or NULL */
  const dl_dv *dv;             /* NULL when none */
  int64_t base_row_id, default_row_commit_version; /* -1 when absent */
  /* add: the clustering implementation that clustered the file ("liquid") or NULL. The
   * snapshot keeps only "liquid" (the one implementation Delta defines): a view holds that
   * literal or NULL. */
  const char *clustering_provider;
} dl_file;

/* Iteration callbacks return 0 to continue; any other value stops and is returned. */
typedef int (*dl_file_cb)(void *ctx, const dl_file *f);
int dl_snapshot_files(const dl_snapshot *s, dl_file_cb cb, void *ctx);
/* The files in a part of the snapshot's order, so that parts can be read on several
 * threads (the snapshot is read-only): the order has dl_snapshot_slots() slots, some of
 * them not files; the files of slots [from, to), in order. Consecutive ranges give the
 * files of dl_snapshot_files, in its order. */
size_t dl_snapshot_slots(const dl_snapshot *s);
int dl_snapshot_files_range(const dl_snapshot *s, size_t from, size_t to, dl_file_cb cb, void *ctx);
int dl_snapshot_tombstones(const dl_snapshot *s, dl_file_cb cb, void *ctx);

typedef struct dl_app_txn {
  const char *app_id;
  int64_t version;
  int64_t last_updated; /* -1 when absent */
} dl_app_txn;
size_t dl_snapshot_num_app_txns(const dl_snapshot *s);
const dl_app_txn *dl_snapshot_app_txn(const dl_snapshot *s, size_t i);
/* Returns 1 and the txn when appId has one, else 0. */
int dl_snapshot_find_app_txn(const dl_snapshot *s, const char *app_id, dl_app_txn *out);

typedef struct dl_domain {
  const char *domain;
  const char *configuration; /* string as stored */
} dl_domain;
size_t dl_snapshot_num_domains(const dl_snapshot *s);
const dl_domain *dl_snapshot_domain(const dl_snapshot *s, size_t i);

/* ======================= protocol support ======================= */

/* 0 when this engine can read (or, with for_write, write) a table with protocol p; else
 * DD_EUNSUPPORTED naming the first unsupported feature or version. */
int dl_protocol_check(const dl_protocol *p, bool for_write);

/* ======================= row tracking ======================= */

/* The configuration keys naming a table's hidden materialized row id and row commit
 * version columns (PROTOCOL.md "Row Tracking"), and the domain of the high-water mark. */
#define DL_RT_ID_COLUMN_KEY "delta.rowTracking.materializedRowIdColumnName"
#define DL_RT_VERSION_COLUMN_KEY "delta.rowTracking.materializedRowCommitVersionColumnName"
/* True when s enables row tracking: writer feature rowTracking, delta.enableRowTracking
 * true, delta.rowTrackingSuspended not true, and both column names configured. A rewrite
 * of rows (OPTIMIZE, copy-on-write DML) must then keep each row's stable id and commit
 * version in those columns (scn_opts.row_tracking, dw_opts.row_tracking). Commits assign
 * fresh ids whenever the feature is supported (dl_txn_commit). */
bool dl_rowtrack_enabled(const dl_snapshot *s);

/* ======================= values and stats ======================= */

typedef struct dl_value {
  dl_type_kind kind;
  bool is_null;
  int64_t i64;      /* integers, date (days since epoch), timestamps (micros since epoch) */
  double f64;       /* float, double */
  bool b;
  const char *str;  /* string, binary (unescaped, may hold NULs: see len), decimal text */
  size_t len;
} dl_value;
/* Parses a serialized partition value for `type` (Partition Value Serialization). str
 * NULL or "" is a null value. out->str points into str. */
int dl_partition_value_parse(dl_value *out, const dl_type *type, const char *str);

typedef enum { DL_STATS_MIN, DL_STATS_MAX, DL_STATS_NULL_COUNT } dl_stats_kind;
int dl_stats_parse(dl_stats **out, const char *json);
void dl_stats_free(dl_stats *st);
int64_t dl_stats_num_records(const dl_stats *st); /* -1 when absent */
bool dl_stats_tight_bounds(const dl_stats *st);  /* true when absent */
/* The statistic of a dotted column path as compact JSON text (malloc'ed, free()), or
 * DD_ENOTFOUND. */
int dl_stats_get(char **out, const dl_stats *st, dl_stats_kind kind, const char *column);

/* ======================= deletion vectors ======================= */

typedef struct dl_rowset {
  uint64_t *rows; /* sorted ascending, unique */
  size_t count;
} dl_rowset;
/* Loads and checks (checksum, cardinality) a deletion vector of table t. */
int dl_dv_load(dl_rowset *out, dl_table *t, const dl_dv *dv);
/* Decodes a serialized DV (magic + portable 64-bit roaring) into a row set. */
int dl_dv_decode(dl_rowset *out, const uint8_t *data, size_t len);
void dl_rowset_free(dl_rowset *r);
bool dl_rowset_contains(const dl_rowset *r, uint64_t row);
/* Z85 decode; len must be a multiple of 5. *out malloc'ed. */
int dl_z85_decode(uint8_t **out, size_t *out_len, const char *s, size_t len);
/* The DV's unique id "<type><pathOrInline>[@offset]" (malloc'ed). */
int dl_dv_unique_id(char **out, const dl_dv *dv);
/* Absolute/relative location of an on-disk DV file (malloc'ed), for 'u' and 'p'. */
int dl_dv_path(char **out, const dl_dv *dv);

/* ======================= history and change data feed ======================= */

typedef struct dl_commit_entry {
  int64_t version;
  int64_t timestamp;        /* commit timestamp, epoch ms */
  const char *commit_info;  /* the commitInfo object as compact JSON, or NULL */
  const char *operation;    /* commitInfo.operation or NULL */
} dl_commit_entry;
typedef int (*dl_commit_cb)(void *ctx, const dl_commit_entry *e);
/* Walks commits newest first, at most `limit` (0: all) up to the latest version. */
int dl_history(dl_table *t, size_t limit, dl_commit_cb cb, void *ctx);

typedef enum { DL_CHANGE_CDC, DL_CHANGE_ADD, DL_CHANGE_REMOVE } dl_change_kind;
typedef struct dl_change {
  dl_change_kind kind;
  int64_t version;
  int64_t timestamp;
  const dl_file *file;
} dl_change;
typedef int (*dl_change_cb)(void *ctx, const dl_change *c);
/* Change data feed of versions [from, to] (to < 0: latest). DD_EPRECOND when a version in
 * the range does not have delta.enableChangeDataFeed=true. */
int dl_changes(dl_table *t, int64_t from, int64_t to, dl_change_cb cb, void *ctx);

/* Commit timestamps of every version that has one (monotonic). *out_versions/out_ts
 * malloc'ed, both of length *out_n, ascending. */
int dl_commit_timestamps(dl_table *t, int64_t **out_versions, int64_t **out_ts, size_t *out_n);

/* ======================= writing ======================= */

typedef struct dl_metadata_spec {
  const char *id;               /* NULL: a random UUID */
  const char *name, *description;
  const char *schema_string;
  size_t num_partition_columns;
  const char *const *partition_columns;
  const char *configuration;    /* packed map or NULL */
  int64_t created_time;         /* -1: now */
} dl_metadata_spec;

/* Starts a transaction reading `read` (NULL when creating a new table). */
int dl_txn_begin(dl_txn **out, dl_table *t, dl_snapshot *read);
void dl_txn_free(dl_txn *txn);
int dl_txn_set_protocol(dl_txn *txn, const dl_protocol *p);
int dl_txn_set_metadata(dl_txn *txn, const dl_metadata_spec *md);
/* File actions. path is the URL-decoded path; the engine encodes it for the log. */
int dl_txn_add_file(dl_txn *txn, const dl_file *add);
int dl_txn_remove_file(dl_txn *txn, const dl_file *remove);
int dl_txn_add_cdc(dl_txn *txn, const dl_file *cdc);
int dl_txn_set_app_txn(dl_txn *txn, const char *app_id, int64_t version);
int dl_txn_set_domain(dl_txn *txn, const char *domain, const char *configuration, bool removed);
/* The table's protocol, metadata and schema as the transaction leaves them (the read
 * snapshot's with this transaction's protocol and metaData applied), without files: what a
 * writer creating a table or changing its schema writes its files for before the commit.
 * *out's version is the read version (-1 for a new table). DD_EPRECOND when the
 * transaction neither reads a snapshot nor sets metadata. */
int dl_txn_pending_snapshot(dl_snapshot **out, dl_txn *txn);
/* Read set for conflict detection: a file this transaction's result depends on, or the
 * whole table (then any concurrent dataChange add or remove conflicts). */
int dl_txn_read_file(dl_txn *txn, const char *path);
void dl_txn_read_all(dl_txn *txn);

typedef struct dl_commit_opts {
  const char *operation;            /* "WRITE", "DELETE", ... */
  const char *operation_parameters; /* JSON object text or NULL */
  const char *operation_metrics;    /* JSON object text or NULL */
  int max_retries;                  /* lost races retried at most this often */
  bool checkpoint;                  /* write checkpoints / clean up per table properties */
  int64_t now_ms;                   /* 0: the clock (tests may pin it) */
} dl_commit_opts;
#define DL_COMMIT_OPTS_INIT {.operation = "WRITE", .max_retries = 100, .checkpoint = true}

/* Commits; *out_version gets the version written. DD_ECONFLICT on a logical conflict or
 * when retries run out. The txn cannot be committed twice. When the protocol supports row
 * tracking, adds given without baseRowId / defaultRowCommitVersion (-1) get fresh ones at
 * each attempt, and the commit moves the delta.rowTracking high-water mark (DD_EINVAL for
 * such an add without stats.numRecords). */
int dl_txn_commit(dl_txn *txn, const dl_commit_opts *opts, int64_t *out_version);

/* Writes a classic single-file checkpoint of s plus _last_checkpoint. */
int dl_checkpoint_write(dl_table *t, const dl_snapshot *s);
/* Deletes commits and checkpoints older than delta.logRetentionDuration (as of now_ms),
 * only below a checkpoint that is itself kept. *out_deleted counts files (may be NULL). */
int dl_log_cleanup(dl_table *t, const dl_snapshot *s, int64_t now_ms, size_t *out_deleted);
/* Stale temp files in _delta_log: writers write ".<name>.<pid>.<n>.tmp" beside the final
 * name and rename or link it; a writer killed in between leaves the temp file. Deletes
 * those of that exact pattern, for log names only (commits, checkpoints, checksums,
 * _last_checkpoint), whose mtime is older than DL_STALE_TMP_MS before now_ms. Anything
 * else is kept. Runs at every checkpoint interval, in dl_log_cleanup and in vacuum. */
#define DL_STALE_TMP_MS (3600 * 1000LL)
int dl_log_clean_temps(dl_table *t, int64_t now_ms, size_t *out_deleted);

/* ======================= snapshot cache ======================= */

/* A cache of latest snapshots keyed by table location, bounded by approximate bytes. */
int dl_cache_new(dl_cache **out, size_t max_bytes);
void dl_cache_free(dl_cache *c);
/* The latest snapshot of t, reading only commits newer than the cached one. */
int dl_cache_get(dl_cache *c, dl_table *t, dl_snapshot **out);
size_t dl_cache_bytes(const dl_cache *c);
/* Counters of a cache, for metrics: lookups that found an entry (hits, brought up to date
 * if the table moved) or none (misses), and the entries and bytes held now. */
typedef struct dl_cache_stats {
  uint64_t hits, misses, entries, bytes;
} dl_cache_stats;
dl_cache_stats dl_cache_stats_get(dl_cache *c);
/* Process-wide commit counters (dl_txn_commit), for metrics: commits written, and commits
 * refused with DD_ECONFLICT (a concurrent winner conflicted, or retries ran out). */
typedef struct dl_commit_stats {
  uint64_t commits, conflicts;
} dl_commit_stats;
dl_commit_stats dl_commit_stats_get(void);

/* ======================= misc ======================= */

/* Parses epoch milliseconds or ISO-8601 ("2024-01-02T03:04:05Z", fraction and offset
 * allowed, or a date "2024-01-02") into epoch ms. */
int dl_parse_timestamp(const char *s, int64_t *out_ms);
/* True when the first n bytes of p are a clean relative path, as every relative path read
 * from a log must be: not absolute, no empty, "." or ".." segment, no backslash, no
 * control character. */
bool dl_rel_path_clean(const char *p, size_t n);
/* Approximate bytes of memory a snapshot holds (for caches and benchmarks). */
size_t dl_snapshot_memory(const dl_snapshot *s);

#endif
