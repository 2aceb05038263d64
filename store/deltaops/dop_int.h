/* dop_int.h: helpers shared inside store/deltaops: result building, a string hash set
 * (paths of files to keep or compare), opening a table's latest snapshot, and committing
 * a transaction with a Spark-style commitInfo. Not for use outside the module. */
#ifndef DD_STORE_DELTAOPS_DOP_INT_H
#define DD_STORE_DELTAOPS_DOP_INT_H

#include <jansson.h>
#include <sys/types.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"

#define DOP_OOM() dd_err_set(DD_ENOMEM, "out of memory")

/* ---- results ---- */
int dop__result_new(dop_result **out, const dop_col *cols, size_t ncols);
/* Appends a row of NULL cells; returns its first cell through *row. */
int dop__result_row(dop_result *r, dop_cell **row);
int dop__cell_str(dop_cell *c, const char *s);    /* NULL s gives a NULL cell */
int dop__cell_json(dop_cell *c, json_t *v);       /* steals v; NULL gives a NULL cell */
void dop__cell_i64(dop_cell *c, int64_t v);
void dop__cell_bool(dop_cell *c, bool v);
void dop__cell_ts(dop_cell *c, int64_t ms);

/* ---- string set (open addressing; keys copied) ---- */
typedef struct dop__set {
  char **slots;
  size_t cap, n;
} dop__set;
int dop__set_add(dop__set *s, const char *k);
bool dop__set_has(const dop__set *s, const char *k);
void dop__set_free(dop__set *s);

/* ---- tables ---- */
/* Opens t at location and its latest snapshot; DD_ENOTFOUND "not a Delta table" when it
 * has no log. */
int dop__open_latest(dl_table **t, dl_snapshot **s, const char *location);
/* The same for the snapshot at version (>= 0) or at timestamp (epoch ms or ISO-8601, when
 * version < 0; DD_EINVAL when unparsable); the latest when version < 0 and timestamp is NULL. */
int dop__open_at(dl_table **t, dl_snapshot **s, const char *location, int64_t version,
                 const char *timestamp);
/* True when location has a _delta_log with a commit or checkpoint. */
bool dop__has_log(const char *location);
int64_t dop__now_ms(void);

/* Commits txn with the operation, parameters and metrics objects (stolen; may be NULL). */
int dop__commit(dl_txn *txn, const char *op, json_t *params, json_t *metrics, int64_t *version);
/* Row tracking (dop_rowtrack.c): does the configuration change turn it on; the packed
 * configuration *config (replaced) with the materialized column names when it enables row
 * tracking without them; the re-adds of s's files without row ids into txn. */
bool dop__rt_enables(const char *old_config, const char *new_config);
int dop__rt_names(char **config);
int dop__rt_backfill(dl_txn *txn, const dl_snapshot *s);
/* Metric values are strings in Delta's commitInfo. */
void dop__metric(json_t *m, const char *key, int64_t v);

/* ---- clustering limits (dop_cluster.c): Delta's errors ---- */
int dop__check_clustering_count(size_t n);        /* at most 4 columns */
int dop__clustering_type_error(const char *column); /* a type without data skipping */
/* The delta.clustering domain a REPLACE (restored NULL) or RESTORE commits, as Delta: when
 * latest has the domain, the restored version's clustering columns, else none. */
int dop__carry_clustering(dl_txn *x, const dl_snapshot *latest, const dl_snapshot *restored);

/* ---- protocol helpers (dop_features.c) ---- */
typedef struct dop__proto {
  int reader, writer;
  dop__set rf, wf; /* explicit features (only meaningful at 3 / 7) */
} dop__proto;
void dop__proto_from(dop__proto *p, const dl_protocol *src);
void dop__proto_free(dop__proto *p);
/* Fills a dl_protocol view; the feature arrays are malloc(ed) into rf and wf (free them). */
int dop__proto_to(const dop__proto *p, dl_protocol *out, char ***rf, char ***wf);
/* Adds a named feature (DD_EINVAL unknown). */
int dop__proto_add_feature(dop__proto *p, const char *name);
/* Raises to (reader, writer), expanding legacy features when moving to 3 / 7. */
int dop__proto_raise(dop__proto *p, int reader, int writer);
/* p becomes a protocol supporting everything p or old supports (never lower than old). */
int dop__proto_merge(dop__proto *p, const dop__proto *old);
bool dop__proto_has(const dop__proto *p, const char *name);
/* The protocol as the JSON Spark writes in UPGRADE PROTOCOL's newProtocol parameter. */
json_t *dop__proto_json(const dop__proto *p);

/* ---- paths (dop_path.c; the rules are "confinement" in dop.h) ---- */
/* True when rel is a clean relative path (no empty, "." or ".." segment, no backslash or
 * control character, not absolute). */
bool dop__clean_rel(const char *rel);
/* True when the absolute local path lies under one of roots (NULL: none). */
bool dop__roots_allow(const dop_roots *roots, const char *abs);
/* A (URL-decoded) path from the log of the table at root as an absolute local path
 * (malloc'ed), or DD_EPERM naming it when it escapes root and every allowed root.
 * *root_len (may be NULL) gets the length of the root it lies under as a prefix of *out
 * (0 for "/", -1 when only the roots' callback allowed it): dop__open_under opens it
 * below that root without following symlinks. */
int dop__log_path(char **out, ssize_t *root_len, const char *root, const char *path,
                  const dop_roots *roots);
/* The same for a deletion vector's file ('u' relative, 'p' absolute). */
int dop__dv_log_path(char **out, ssize_t *root_len, const char *root, const dl_dv *dv,
                     const dop_roots *roots);

/* Absolute local path of a file of the table ("/loc/a/b" for "a/b"; absolute stays). */
char *dop__abs_path(const char *location, const char *path);
/* Opens abs for reading, walking below its first root_len bytes (a dop__log_path root)
 * without following a symlink; root_len -1 opens by name (O_NOFOLLOW on the last part). */
int dop__open_under(int *fd, const char *abs, ssize_t root_len);
/* Copies the open file in_fd (src names it in messages) to dst_rel below the local
 * directory dst_root, never through a symlink: a temp file beside it, renamed over it.
 * *created (may be NULL) is true when dst_rel did not exist before. Errors name the
 * cause (ENOSPC is "No space left on device"); a failed copy leaves no temp file. */
int dop__copy_file(int in_fd, const char *src, const char *dst_root, const char *dst_rel,
                   bool *created);

/* ---- DDL types (dop_ddl.c) ---- */
/* Deepest type accepted (array<array<...>> levels; a column's own type is level 1), the
 * same bound store/delta puts on a table's schema, and the longest field name in bytes. */
#define DOP__DDL_MAX_DEPTH 64
#define DOP__DDL_MAX_NAME 255
/* A DDL type ("decimal(10,2)", "array<int>") as Delta's JSON type value (new reference). */
int dop__ddl_type(json_t **out, const char *ddl);
/* A DDL column list ("a INT, b STRING NOT NULL") as an array of Delta struct fields. */
int dop__ddl_fields(json_t **out, const char *ddl);

/* ---- table properties (dop_props.c) ---- */
/* Delta's rule for a table property: DD_EINVAL for an unknown delta.* key
 * ([DELTA_UNKNOWN_CONFIGURATION]) or a value it refuses; other keys are free-form. */
int dop__check_property(const char *key, const char *value);
/* Checks in_keys/in_vals[0..n) and raises p to what they need (delta.feature.*,
 * delta.min*Version, enable* flags, column mapping); the configuration entries (all but
 * delta.feature.* and delta.min*Version) go to keys/vals (n slots), *nout of them. */
int dop__apply_properties(dop__proto *p, const char *const *in_keys, const char *const *in_vals, size_t n,
                          const char **keys, const char **vals, size_t *nout);

#endif
