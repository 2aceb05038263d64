/* dop_restore.c: RESTORE TABLE ... TO VERSION/TIMESTAMP. Compares the latest snapshot L
 * with the target snapshot T by file identity (path plus deletion vector id): files of T
 * missing from L are re-added, files of L missing from T are removed (dataChange true).
 * Every file to re-add must still exist (vacuum may have deleted it): otherwise the
 * restore fails with FAILED_PRECONDITION and nothing is committed; so does a file (or
 * deletion vector) whose path escapes the table and the caller's roots (PERMISSION_DENIED). The metadata of T is
 * restored when it differs; the protocol is never lowered. The transaction reads the
 * whole table, so a concurrent data change is a reported conflict, not a silent merge.
 * Metrics are Delta's RESTORE metrics (camelCase in the commit, snake_case columns). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/deltaops/dop_int.h"

static const dop_col RESTORE_COLS[] = {
    {"table_size_after_restore", "bigint", false}, {"num_of_files_after_restore", "bigint", false},
    {"num_removed_files", "bigint", false},        {"num_restored_files", "bigint", false},
    {"removed_files_size", "bigint", false},       {"restored_files_size", "bigint", false},
};

typedef struct rctx {
  dop__set other;  /* identities of the other snapshot */
  dl_txn *txn;
  os_store *st;
  const char *location;
  const dop_roots *roots;
  int64_t n, bytes, now;
  bool adding;     /* pass over T (adds) or over L (removes) */
} rctx;

static int identity(char **out, const dl_file *f) {
  char *dv = NULL;
  if (f->dv && dl_dv_unique_id(&dv, f->dv)) return DOP_OOM();
  int n = asprintf(out, "%s\n%s", f->path, dv ? dv : "");
  free(dv);
  return n < 0 ? DOP_OOM() : 0;
}

static int collect_cb(void *ctx, const dl_file *f) {
  char *id = NULL;
  int rc = identity(&id, f);
  if (!rc) rc = dop__set_add(ctx, id);
  free(id);
  return rc;
}

static int diff_cb(void *vctx, const dl_file *f) {
  rctx *c = vctx;
  char *id = NULL;
  int rc = identity(&id, f);
  if (rc) return rc;
  bool in_other = dop__set_has(&c->other, id);
  free(id);
  if (in_other) return 0;
  dl_file g = *f;
  g.data_change = true;
  if (c->adding) {
    os_stat sb;
    char *abs = NULL, *dv = NULL;
    if ((rc = dop__log_path(&abs, NULL, c->location, f->path, c->roots))) return rc;
    if (f->dv && f->dv->storage_type != 'i') rc = dop__dv_log_path(&dv, NULL, c->location, f->dv, c->roots);
    if (!rc && os_stat_path(c->st, abs, &sb) != 0)
      rc = dd_err_set(DD_EPRECOND, "cannot restore: file %s of the target version no longer "
                      "exists (vacuumed?)", f->path);
    free(abs);
    free(dv);
    if (!rc) rc = dl_txn_add_file(c->txn, &g);
  } else {
    g.deletion_timestamp = c->now;
    rc = dl_txn_remove_file(c->txn, &g);
  }
  c->n++;
  if (__builtin_add_overflow(c->bytes, f->size > 0 ? f->size : 0, &c->bytes)) c->bytes = INT64_MAX;
  return rc;
}

static bool same_metadata(const dl_metadata *a, const dl_metadata *b) {
  if (strcmp(a->schema_string, b->schema_string) || a->num_partition_columns != b->num_partition_columns)
    return false;
  if ((a->description == NULL) != (b->description == NULL) ||
      (a->description && strcmp(a->description, b->description)))
    return false;
  const char *ca = a->configuration, *cb = b->configuration, *ka, *va, *kb, *vb;
  for (;;) {
    int ha = dl_kv_next(&ca, &ka, &va), hb = dl_kv_next(&cb, &kb, &vb);
    if (!ha || !hb) return ha == hb;
    if (strcmp(ka, kb) || (va == NULL) != (vb == NULL) || (va && strcmp(va, vb))) return false;
  }
}

static int restore_metadata(dl_txn *txn, const dl_snapshot *latest, const dl_snapshot *target) {
  const dl_metadata *m = dl_snapshot_metadata(target);
  if (same_metadata(m, dl_snapshot_metadata(latest))) return 0;
  dl_metadata_spec md = {m->id, m->name, m->description, m->schema_string, m->num_partition_columns,
                         m->partition_columns, m->configuration, m->created_time};
  return dl_txn_set_metadata(txn, &md);
}

/* Protocol: the larger of both (restore never downgrades). */
static int restore_protocol(dl_txn *txn, const dl_snapshot *latest, const dl_snapshot *target) {
  dop__proto p, q;
  dop__proto_from(&p, dl_snapshot_protocol(latest));
  dop__proto_from(&q, dl_snapshot_protocol(target));
  int r0 = p.reader, w0 = p.writer;
  size_t n0 = p.wf.n + p.rf.n;
  int rc = dop__proto_merge(&p, &q);
  bool need = p.reader != r0 || p.writer != w0 || p.wf.n + p.rf.n != n0;
  if (!rc && need) {
    dl_protocol np;
    char **rf = NULL, **wf = NULL;
    rc = dop__proto_to(&p, &np, &rf, &wf);
    if (!rc) rc = dl_txn_set_protocol(txn, &np);
    free(rf);
    free(wf);
  }
  dop__proto_free(&p);
  dop__proto_free(&q);
  return rc;
}

int dop_restore(dop_result **out, const char *location, int64_t version, const char *timestamp) {
  return dop_restore_in(out, location, version, timestamp, NULL);
}

int dop_restore_in(dop_result **out, const char *location, int64_t version,
                   const char *timestamp, const dop_roots *roots) {
  *out = NULL;
  dl_table *t = NULL;
  dl_snapshot *latest = NULL, *target = NULL;
  rctx add = {0}, rem = {0};
  dop_result *r = NULL;
  int64_t ts_ms = INT64_MIN;
  if (version < 0 && !timestamp) return dd_err_set(DD_EINVAL, "restore needs a version or a timestamp");
  if (version < 0 && dl_parse_timestamp(timestamp, &ts_ms))
    return dd_err_set(DD_EINVAL, "restore: bad timestamp '%s'", timestamp);
  int rc = dop__open_latest(&t, &latest, location);
  if (rc) return rc;
  int64_t lv = dl_snapshot_version(latest);
  if (version > lv) {
    rc = dd_err_set(DD_ERANGE, "cannot restore to version %lld: the latest version is %lld",
                    (long long)version, (long long)lv);
    goto cleanup;
  }
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  so.version = version;
  so.timestamp_ms = version < 0 ? ts_ms : INT64_MIN;
  if ((rc = dl_snapshot_open(&target, t, &so))) goto cleanup;
  if ((rc = dl_protocol_check(dl_snapshot_protocol(latest), true))) goto cleanup;
  add.now = rem.now = dop__now_ms();
  add.location = location;
  add.roots = roots;
  if ((rc = os_open(&add.st, location))) goto cleanup;
  if ((rc = dl_txn_begin(&add.txn, t, latest))) goto cleanup;
  dl_txn_read_all(add.txn);
  rem.txn = add.txn;
  add.adding = true;
  if ((rc = dl_snapshot_files(latest, collect_cb, &add.other))) goto cleanup;
  if ((rc = dl_snapshot_files(target, collect_cb, &rem.other))) goto cleanup;
  if ((rc = dl_snapshot_files(target, diff_cb, &add))) goto cleanup;
  if ((rc = dl_snapshot_files(latest, diff_cb, &rem))) goto cleanup;
  if ((rc = restore_metadata(add.txn, latest, target))) goto cleanup;
  if ((rc = restore_protocol(add.txn, latest, target))) goto cleanup;
  if ((rc = dop__carry_clustering(add.txn, latest, target))) goto cleanup;
  int64_t size_after = dl_snapshot_size_bytes(target), files_after = (int64_t)dl_snapshot_num_files(target);
  json_t *params = json_object(), *m = json_object();
  if (params && version >= 0) {
    char b[32];
    snprintf(b, sizeof b, "%lld", (long long)dl_snapshot_version(target));
    json_object_set_new(params, "version", json_string(b));
    json_object_set_new(params, "timestamp", json_null());
  } else if (params) {
    json_object_set_new(params, "version", json_null());
    json_object_set_new(params, "timestamp", json_string(timestamp));
  }
  if (m) {
    dop__metric(m, "tableSizeAfterRestore", size_after);
    dop__metric(m, "numOfFilesAfterRestore", files_after);
    dop__metric(m, "numRemovedFiles", rem.n);
    dop__metric(m, "numRestoredFiles", add.n);
    dop__metric(m, "removedFilesSize", rem.bytes);
    dop__metric(m, "restoredFilesSize", add.bytes);
  }
  if ((rc = dop__commit(add.txn, "RESTORE", params, m, NULL))) goto cleanup;
  dop_cell *row;
  if ((rc = dop__result_new(&r, RESTORE_COLS, 6)) || (rc = dop__result_row(r, &row))) goto cleanup;
  int64_t vals[6] = {size_after, files_after, rem.n, add.n, rem.bytes, add.bytes};
  for (int i = 0; i < 6; i++) dop__cell_i64(&row[i], vals[i]);
  *out = r;
  r = NULL;
cleanup:
  dop_result_free(r);
  dl_txn_free(add.txn);
  os_store_free(add.st);
  dop__set_free(&add.other);
  dop__set_free(&rem.other);
  dl_snapshot_free(target);
  dl_snapshot_free(latest);
  dl_table_free(t);
  return rc;
}
