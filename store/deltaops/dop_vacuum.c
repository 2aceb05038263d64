/* dop_vacuum.c: VACUUM. Deletes files under the table directory that no version within the
 * retention period needs:
 *  - kept: every active add and its deletion vector file, and every tombstone (remove)
 *    deleted after the cutoff (now - retention) with its deletion vector;
 *  - walked: the whole tree except _delta_log, symlinks and hidden names ('_' or '.' prefixes), but
 *    partition directories ("<partitionColumn>=...") and _change_data are walked (CDC
 *    files are never referenced by a snapshot, so they go once older than the cutoff);
 *  - deleted: an unkept file whose modification time is older than the cutoff; then
 *    directories left empty (and themselves older than the cutoff).
 * The retention defaults to delta.deletedFileRetentionDuration (interval 1 week); a
 * shorter one is refused unless the caller turned the check off. After the walk the
 * latest snapshot is read again and its files are kept too, so a writer that commits
 * during the walk never loses a committed file, and files modified in the last 10 seconds
 * are never deleted (in-flight writes), even with retention 0. Commits VACUUM START before deleting and
 * VACUUM END (COMPLETED or FAILED) after, as Delta on Spark does; a dry run only lists.
 * VACUUM END conflicts with nothing: when a concurrent commit wins its version, END is
 * committed again on the newest snapshot (the deletions already happened).
 * Confinement: the walk, the deletions and the directory removals go through the local
 * store, which never follows a symlink below the root (os_local.c); a symlink (to a file
 * or a directory) is neither walked, listed nor deleted. Paths in the log outside the
 * table keep nothing. Stale temp files of killed log writers are removed too
 * (dl_log_clean_temps), and so are deltad's own temp files in the data directories (a deep
 * clone or a write killed half way: ".<name>.<pid>.<n>.tmp" or "...copy.tmp"), which are
 * hidden names but candidates like any other unkept file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/deltaops/dop_int.h"
#include "store/sign/sign.h"

/* Files modified this recently are never deleted, whatever the retention: a writer may
 * have written them and not committed yet (retention 0 would race it otherwise). */
#define DOP_VACUUM_GRACE_MS 10000

static const dop_col VACUUM_COLS[] = {{"path", "string", true}};

typedef struct cand {
  char *path; /* relative */
  int64_t size;
} cand;

typedef struct vac {
  const char *location;
  size_t loc_len;
  os_store *st;
  dop__set keep;
  dl_snapshot *snap; /* the snapshot whose partition columns decide hidden names */
  int64_t cutoff;
  cand *c;
  size_t nc, capc;
  char **dirs; /* directories walked, deepest last (removal candidates) */
  size_t nd, capd;
  const dop_vacuum_opts *o;
  uint64_t seen;
  bool remote;          /* the table is in object storage ... */
  sign_location where;  /* ... at this parsed URL */
} vac;

/* ---- the keep set ---- */

/* A path from the log as a path relative to the table, or NULL when outside it. */
static const char *relative(const vac *v, const char *p) {
  if (!strncmp(p, "file://", 7)) p += 7;
  else if (!strncmp(p, "file:", 5)) p += 5;
  if (p[0] != '/') return p;
  if (!strncmp(p, v->location, v->loc_len) && p[v->loc_len] == '/') return p + v->loc_len + 1;
  return NULL;
}

static int keep_path(vac *v, const char *p) {
  if (v->remote && !os_is_local(p)) { /* an object-store URL (any alias of the scheme) */
    char *rel = NULL;
    if (sign_location_under(&rel, &v->where, p)) return dd_err_clear(), 0; /* outside */
    int rc = dop__set_add(&v->keep, rel);
    free(rel);
    return rc;
  }
  const char *r = relative(v, p);
  return r ? dop__set_add(&v->keep, r) : 0;
}

static int keep_file(vac *v, const dl_file *f) {
  int rc = keep_path(v, f->path);
  if (!rc && f->dv && f->dv->storage_type != 'i') {
    char *dp = NULL;
    rc = dl_dv_path(&dp, f->dv);
    if (!rc) rc = keep_path(v, dp);
    free(dp);
  }
  return rc;
}

static int add_cb(void *ctx, const dl_file *f) { return keep_file(ctx, f); }

static int tomb_cb(void *ctx, const dl_file *f) {
  vac *v = ctx;
  return f->deletion_timestamp > v->cutoff ? keep_file(v, f) : 0;
}

static int keep_snapshot(vac *v, const dl_snapshot *s) {
  int rc = dl_snapshot_files(s, add_cb, v);
  return rc ? rc : dl_snapshot_tombstones(s, tomb_cb, v);
}

/* ---- the walk ---- */

/* A temp file deltad itself writes (os_local.c, dop_util.c): ".<name>.<pid>.<n>.tmp" or
 * ".<name>.<pid>.<n>.copy.tmp", with <pid> and <n> decimal. */
static bool own_temp(const char *name) {
  size_t n = strlen(name);
  if (name[0] != '.' || n < 9 || strcmp(name + n - 4, ".tmp")) return false;
  n -= 4;
  if (n > 5 && !strncmp(name + n - 5, ".copy", 5)) n -= 5;
  for (int field = 0; field < 2; field++) { /* <n>, then <pid> */
    size_t digits = 0;
    while (n > 1 && name[n - 1] >= '0' && name[n - 1] <= '9') n--, digits++;
    if (!digits || name[n - 1] != '.') return false;
    n--;
  }
  return n > 1; /* a non-empty <name> */
}

static bool hidden(const vac *v, const char *name, bool at_root) {
  if (name[0] != '_' && name[0] != '.') return false;
  if (at_root && !strcmp(name, "_change_data")) return false;
  if (own_temp(name)) return false;
  const dl_metadata *m = dl_snapshot_metadata(v->snap);
  for (size_t i = 0; i < m->num_partition_columns; i++) {
    size_t n = strlen(m->partition_columns[i]);
    if (!strncmp(name, m->partition_columns[i], n) && name[n] == '=') return false;
  }
  return true;
}

static int push_cand(vac *v, const char *path, int64_t size) {
  if (v->nc == v->capc) {
    size_t cap = v->capc ? v->capc * 2 : 256;
    cand *n = realloc(v->c, cap * sizeof *n);
    if (!n) return DOP_OOM();
    v->c = n;
    v->capc = cap;
  }
  if (!(v->c[v->nc].path = strdup(path))) return DOP_OOM();
  v->c[v->nc++].size = size;
  return 0;
}

static int push_dir(vac *v, const char *dir) {
  if (v->nd == v->capd) {
    size_t cap = v->capd ? v->capd * 2 : 64;
    char **n = realloc(v->dirs, cap * sizeof *n);
    if (!n) return DOP_OOM();
    v->dirs = n;
    v->capd = cap;
  }
  return (v->dirs[v->nd++] = strdup(dir)) ? 0 : DOP_OOM();
}

static int walk(vac *v, const char *dir) {
  os_list l = {0};
  int rc = os_list_dir(v->st, dir, &l);
  if (rc == DD_ENOTFOUND) return dd_err_clear(), 0;
  if (rc) return rc;
  size_t dl = strlen(dir);
  char *path = NULL;
  for (size_t i = 0; i < l.count && !rc; i++) {
    const os_entry *e = &l.entries[i];
    if (!dl && !strcmp(e->name, "_delta_log")) continue;
    if (e->is_link || hidden(v, e->name, dl == 0)) continue;
    free(path);
    if (asprintf(&path, "%s%s%s", dir, dl ? "/" : "", e->name) < 0) {
      path = NULL;
      rc = DOP_OOM();
      break;
    }
    if (e->is_dir) {
      rc = walk(v, path);
      if (!rc && e->mtime_ms < v->cutoff) rc = push_dir(v, path);
      continue;
    }
    if (v->o->progress && ++v->seen % 4096 == 0) v->o->progress(v->o->progress_ctx, "scanning", v->seen, 0);
    if (e->mtime_ms >= v->cutoff || dop__set_has(&v->keep, path)) continue;
    rc = push_cand(v, path, e->size);
  }
  free(path);
  os_list_free(&l);
  return rc;
}

/* ---- commits ---- */

/* Commits a marker (an empty commit with a commitInfo) on the newest snapshot. A marker
 * reads nothing, so losing a conflict check (a concurrent metadata or protocol change)
 * only means "commit again on the newer snapshot": up to DOP_MARKER_TRIES times. The
 * progress callback hears "committing" after the snapshot is read (tests race it). */
#define DOP_MARKER_TRIES 20

static int commit_marker(dl_table *t, const dop_vacuum_opts *o, const char *op, json_t *params,
                         json_t *metrics) {
  int rc = 0;
  for (int attempt = 0; attempt < DOP_MARKER_TRIES; attempt++) {
    dl_snapshot *s = NULL;
    dl_txn *txn = NULL;
    rc = dl_snapshot_open(&s, t, NULL);
    if (!rc && o->progress) o->progress(o->progress_ctx, "committing", (uint64_t)attempt, 0);
    if (!rc) rc = dl_txn_begin(&txn, t, s);
    if (!rc) rc = dop__commit(txn, op, json_incref(params), json_incref(metrics), NULL);
    dl_txn_free(txn);
    dl_snapshot_free(s);
    if (rc != DD_ECONFLICT || attempt + 1 == DOP_MARKER_TRIES) break;
    dd_err_clear();
  }
  json_decref(params);
  json_decref(metrics);
  return rc;
}

/* ---- the operation ---- */

static int retention_ms(const dl_snapshot *s, const dop_vacuum_opts *o, int64_t *dflt, int64_t *use) {
  const char *prop = dl_snapshot_property(s, "delta.deletedFileRetentionDuration");
  *dflt = 7 * 86400000LL;
  if (prop && dop_parse_interval_ms(prop, dflt)) return dd_err_wrap(DD_EINVAL, "delta.deletedFileRetentionDuration");
  if (!o->has_retention) return *use = *dflt, 0;
  if (!(o->retention_hours >= 0)) return dd_err_set(DD_EINVAL, "retention must be >= 0 hours");
  double ms = o->retention_hours * 3600000.0;
  *use = ms < 9.2e18 ? (int64_t)ms : INT64_MAX; /* a longer one keeps everything anyway */
  if (o->retention_check && *use < *dflt)
    return dd_err_set(DD_EPRECOND, "retention of %g hours is shorter than the table's "
                      "delta.deletedFileRetentionDuration (%lld hours): files a concurrent reader or "
                      "writer still needs may go; set retentionDurationCheck.enabled=false "
                      "(deltactl: --allow-short-retention) to do it anyway",
                      o->retention_hours, (long long)(*dflt / 3600000));
  return 0;
}

static void delete_progress(void *ctx, size_t done, size_t total) {
  const vac *v = ctx;
  if (v->o->progress && (done % 4096 < OS_DELETE_BATCH || done == total))
    v->o->progress(v->o->progress_ctx, "deleting", done, total);
}

/* The candidates go in batches (S3 DeleteObjects: 1,000 keys a request; elsewhere one
 * delete each), then the directories left empty. */
static int delete_all(vac *v, uint64_t *deleted, uint64_t *dirs) {
  const char **paths = malloc((v->nc ? v->nc : 1) * sizeof *paths);
  if (!paths) return DOP_OOM();
  for (size_t i = 0; i < v->nc; i++) paths[i] = v->c[i].path;
  size_t done = 0;
  int rc = os_delete_many(v->st, paths, v->nc, &done, delete_progress, v);
  free(paths);
  *deleted = done;
  for (size_t i = v->nd; i-- > 0 && !rc;) /* children were pushed before their parents */
    if (os_rmdir(v->st, v->dirs[i]) == 0) ++*dirs;
    else dd_err_clear(); /* not empty (or gone): kept */
  return rc;
}

static int result_rows(vac *v, dop_result *r) {
  int rc = 0;
  dop_cell *row;
  if (!v->o->dry_run) return dop__result_row(r, &row) ? DOP_OOM() : dop__cell_str(row, v->location);
  for (size_t i = 0; i < v->nc && !rc; i++) {
    char *abs = dop__abs_path(v->location, v->c[i].path);
    rc = abs ? dop__result_row(r, &row) : DOP_OOM();
    if (!rc) rc = dop__cell_str(row, abs);
    free(abs);
  }
  return rc;
}

int dop_vacuum(dop_result **out, const char *location, const dop_vacuum_opts *opts,
               uint64_t *out_deleted) {
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  if (opts) o = *opts;
  *out = NULL;
  if (out_deleted) *out_deleted = 0;
  vac v = {.location = location, .loc_len = strlen(location), .o = &o};
  dl_table *t = NULL;
  dl_snapshot *s2 = NULL;
  dop_result *r = NULL;
  int64_t dflt = 0, keep_ms = 0, now = o.now_ms ? o.now_ms : dop__now_ms();
  uint64_t deleted = 0, dirs = 0;
  v.remote = !os_is_local(location);
  int rc = v.remote ? sign_parse_location(&v.where, location) : 0;
  if (!rc) rc = dop__open_latest(&t, &v.snap, location);
  if (!rc) rc = dl_protocol_check(dl_snapshot_protocol(v.snap), true);
  if (!rc) rc = retention_ms(v.snap, &o, &dflt, &keep_ms);
  if (rc) goto cleanup;
  int64_t span = keep_ms < DOP_VACUUM_GRACE_MS ? DOP_VACUUM_GRACE_MS : keep_ms;
  if (__builtin_sub_overflow(now, span, &v.cutoff)) v.cutoff = INT64_MIN; /* keeps everything */
  if ((rc = os_open(&v.st, location))) goto cleanup;
  if ((rc = keep_snapshot(&v, v.snap)) || (rc = walk(&v, ""))) goto cleanup;
  /* Files committed while we walked are kept too. */
  if ((rc = dl_snapshot_open(&s2, t, NULL)) || (rc = keep_snapshot(&v, s2))) goto cleanup;
  size_t k = 0;
  int64_t bytes = 0;
  for (size_t i = 0; i < v.nc; i++) {
    if (dop__set_has(&v.keep, v.c[i].path)) {
      free(v.c[i].path);
      continue;
    }
    if (__builtin_add_overflow(bytes, v.c[i].size > 0 ? v.c[i].size : 0, &bytes)) bytes = INT64_MAX;
    v.c[k++] = v.c[i];
  }
  v.nc = k;
  if (!o.dry_run) {
    json_t *params = json_pack("{s:b,s:I}", "retentionCheckEnabled", o.retention_check,
                               "defaultRetentionMillis", (json_int_t)dflt);
    if (params && o.has_retention)
      json_object_set_new(params, "specifiedRetentionMillis", json_integer(keep_ms));
    json_t *m = json_object();
    if (m) dop__metric(m, "numFilesToDelete", (int64_t)v.nc), dop__metric(m, "sizeOfDataToDelete", bytes);
    if ((rc = commit_marker(t, &o, "VACUUM START", params, m))) goto cleanup;
    int drc = delete_all(&v, &deleted, &dirs);
    json_t *m2 = json_object();
    if (m2) dop__metric(m2, "numDeletedFiles", (int64_t)deleted), dop__metric(m2, "numVacuumedDirectories", (int64_t)dirs);
    char msg[1024];
    snprintf(msg, sizeof msg, "%s", dd_err_msg());
    rc = commit_marker(t, &o, "VACUUM END", json_pack("{s:s}", "status", drc ? "FAILED" : "COMPLETED"), m2);
    dl_log_clean_temps(t, now, NULL);
    if (drc) rc = dd_err_set(drc, "%s", msg);
    if (rc) goto cleanup;
  }
  if (out_deleted) *out_deleted = o.dry_run ? v.nc : deleted;
  rc = dop__result_new(&r, VACUUM_COLS, 1);
  if (!rc) rc = result_rows(&v, r);
  if (!rc) *out = r, r = NULL;
cleanup:
  dop_result_free(r);
  for (size_t i = 0; i < v.nc; i++) free(v.c[i].path);
  free(v.c);
  for (size_t i = 0; i < v.nd; i++) free(v.dirs[i]);
  free(v.dirs);
  dop__set_free(&v.keep);
  sign_location_free(&v.where);
  os_store_free(v.st);
  dl_snapshot_free(s2);
  dl_snapshot_free(v.snap);
  dl_table_free(t);
  return rc;
}
