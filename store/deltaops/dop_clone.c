/* dop_clone.c: CLONE. A shallow clone writes a new table at the target whose adds point
 * at the source's files by absolute URI (file:///...), deletion vectors included (stored
 * as absolute 'p' DVs); a deep clone (beyond Spark, which refuses it for Delta sources
 * under this API) copies every data and DV file under the target and refers to them
 * relatively. The new table gets a new id, the source's schema, partitioning, protocol
 * and configuration with the caller's property overrides, as of a version or timestamp
 * of the source. With replace, an existing target table is replaced (its files removed,
 * its protocol never lowered); without it an existing target is ALREADY_EXISTS.
 *
 * Confinement (dop.h): every source path (data files, DV files) must resolve under the
 * source or the caller's allowed roots; a first pass checks them all before anything is
 * written. Files are read and written below their roots without following symlinks. A
 * deep clone that fails removes the files it created, the directories they left empty,
 * and the target directory when this call created it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "store/deltaops/dop_int.h"

static const dop_col CLONE_COLS[] = {
    {"source_table_size", "bigint", false}, {"source_num_of_files", "bigint", false},
    {"num_removed_files", "bigint", false}, {"num_copied_files", "bigint", false},
    {"removed_files_size", "bigint", false}, {"copied_files_size", "bigint", false},
};

typedef struct cctx {
  const char *src_loc, *dst_loc;
  const os_store *src_st, *dst_st; /* the tables' stores (borrowed): copies in or out of
                                      object storage go through them */
  const dop_clone_opts *o;
  dl_txn *txn;
  int64_t copied, copied_bytes, removed, removed_bytes, n, total;
  char **made;      /* target-relative files this call created (removed on failure) */
  dop__set written; /* target-relative files of a deep clone (two sources may not meet) */
  bool committed;   /* the CLONE commit is in: nothing may be undone */
  size_t nmade, capmade;
} cctx;

static int64_t add_sat(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b > 0 ? b : 0, &r) ? INT64_MAX : r;
}

static int remove_cb(void *vctx, const dl_file *f) {
  cctx *c = vctx;
  dl_file g = *f;
  g.data_change = true;
  g.deletion_timestamp = -1;
  c->removed++;
  c->removed_bytes = add_sat(c->removed_bytes, f->size);
  return dl_txn_remove_file(c->txn, &g);
}

/* The absolute URI a shallow clone records: file:///... for a local file, an object-store
 * URL as it is. */
static char *uri(const char *abs) {
  char *u = NULL;
  if (!os_is_local(abs)) return strdup(abs);
  return asprintf(&u, "file://%s", abs) < 0 ? NULL : u;
}

/* Deep clone: where a source file goes under the target (relative path). abs is the
 * checked absolute source path; a relative log path keeps its place, an absolute one
 * (a shallow clone's source) goes to the target's root under its base name. */
static const char *deep_rel(const char *path, const char *abs) {
  if (!strncmp(path, "file:", 5) || path[0] == '/' || !os_is_local(path)) return strrchr(abs, '/') + 1;
  return path;
}

/* A new file streamed from the source's store into a put-if-absent of the target's, one
 * part at a time (bounded memory whatever its size); DD_EPERM when abs is outside the
 * source's root (nothing written). */
static int copy_streamed(cctx *c, const char *abs, const char *rel) {
  os_put_stream *ps = NULL;
  int rc = os_put_stream_open(c->dst_st, rel, 0, &ps);
  if (!rc) rc = os_put_stream_copy(ps, c->src_st, abs);
  if (!rc) return os_put_stream_commit(ps);
  os_put_stream_abort(ps);
  return rc;
}

/* A copy in or out of object storage (or between stores), from the source's store (which
 * reads abs only under its root) to rel in the target's: streamed when rel is new; whole
 * (one read, one put that replaces) over a file left by an earlier attempt, or for a
 * shallow clone's file outside the source's root (through its own store, os_read_any). */
static int copy_stores(cctx *c, const char *abs, const char *rel, bool *created) {
  uint8_t *buf = NULL;
  size_t len = 0;
  os_stat sb;
  *created = os_stat_path(c->dst_st, rel, &sb) != 0;
  dd_err_clear();
  int rc = *created ? copy_streamed(c, abs, rel) : DD_EPERM;
  if (rc == DD_EPERM) {
    dd_err_clear();
    rc = os_read_any(c->src_st, abs, &buf, &len);
    if (!rc) rc = os_put(c->dst_st, rel, buf, len);
  }
  free(buf);
  return rc ? dd_err_wrap(rc, "deep clone: copying %s to %s/%s", abs, c->dst_loc, rel) : 0;
}

/* Copies abs (under its root, see dop__log_path) to rel under the target. */
static int copy_one(cctx *c, const char *abs, ssize_t root_len, const char *rel) {
  int in = -1, rc = 0;
  bool created = false;
  if (os_is_local(abs) && os_is_local(c->dst_loc)) {
    rc = dop__open_under(&in, abs, root_len);
    if (!rc) rc = dop__copy_file(in, abs, c->dst_loc, rel, &created);
    if (in >= 0) close(in);
  } else {
    rc = copy_stores(c, abs, rel, &created);
  }
  if (!rc && created) {
    if (c->nmade == c->capmade) {
      size_t cap = c->capmade ? c->capmade * 2 : 64;
      char **n = realloc(c->made, cap * sizeof *n);
      if (!n) return DOP_OOM();
      c->made = n;
      c->capmade = cap;
    }
    if (!(c->made[c->nmade] = strdup(rel))) return DOP_OOM();
    c->nmade++;
  }
  return rc;
}

static int clone_dv(cctx *c, const dl_dv *dv, dl_dv *out, char **hold) {
  *out = *dv;
  if (dv->storage_type == 'i') return 0;
  char *abs = NULL, *rel = NULL;
  ssize_t root_len = -1;
  int rc = dop__dv_log_path(&abs, &root_len, c->src_loc, dv, c->o->allowed_roots);
  if (!rc && c->o->shallow) {
    if (!(*hold = uri(abs))) rc = DOP_OOM();
    out->storage_type = 'p';
    out->path_or_inline = *hold;
  } else if (!rc && dv->storage_type == 'u' && !(rc = dl_dv_path(&rel, dv))) {
    rc = copy_one(c, abs, root_len, rel);
  }
  free(rel);
  free(abs);
  return rc;
}

/* First pass: every path the clone would read is allowed. */
static int check_cb(void *vctx, const dl_file *f) {
  cctx *c = vctx;
  char *abs = NULL;
  int rc = dop__log_path(&abs, NULL, c->src_loc, f->path, c->o->allowed_roots);
  free(abs);
  abs = NULL;
  if (!rc && f->dv && f->dv->storage_type != 'i')
    rc = dop__dv_log_path(&abs, NULL, c->src_loc, f->dv, c->o->allowed_roots);
  free(abs);
  return rc;
}

static int add_cb(void *vctx, const dl_file *f) {
  cctx *c = vctx;
  dl_file g = *f;
  dl_dv dv;
  char *hold_path = NULL, *hold_dv = NULL, *abs = NULL;
  ssize_t root_len = -1;
  int rc = dop__log_path(&abs, &root_len, c->src_loc, f->path, c->o->allowed_roots);
  g.data_change = true;
  if (!rc && f->dv) {
    rc = clone_dv(c, f->dv, &dv, &hold_dv);
    g.dv = &dv;
  }
  if (!rc && c->o->shallow) {
    rc = (hold_path = uri(abs)) ? 0 : DOP_OOM();
    g.path = hold_path;
  } else if (!rc) {
    g.path = deep_rel(f->path, abs);
    if (dop__set_has(&c->written, g.path))
      rc = dd_err_set(DD_EINVAL, "deep clone: two source files (one is %s) would both be copied to %s",
                      abs, g.path);
    if (!rc) rc = dop__set_add(&c->written, g.path);
    if (!rc) rc = copy_one(c, abs, root_len, g.path);
    c->copied++;
    c->copied_bytes = add_sat(c->copied_bytes, f->size);
  }
  if (!rc) rc = dl_txn_add_file(c->txn, &g);
  if (c->o->progress && ++c->n % 256 == 0) c->o->progress(c->o->progress_ctx, "cloning", (uint64_t)c->n, (uint64_t)c->total);
  free(hold_path);
  free(hold_dv);
  free(abs);
  return rc;
}

static int clone_config(char **out, const dl_metadata *m, const dop_clone_opts *o) {
  size_t n = 0;
  const char *cur = m->configuration, *k, *v;
  while (dl_kv_next(&cur, &k, &v)) n++;
  const char **ks = calloc(n + o->num_properties + 1, sizeof *ks), **vs = calloc(n + o->num_properties + 1, sizeof *vs);
  size_t j = 0;
  int rc = ks && vs ? 0 : DOP_OOM();
  cur = m->configuration;
  while (!rc && dl_kv_next(&cur, &k, &v)) {
    bool overridden = false;
    for (size_t i = 0; i < o->num_properties && !overridden; i++) overridden = !strcmp(o->property_keys[i], k);
    if (!overridden) ks[j] = k, vs[j++] = v;
  }
  for (size_t i = 0; !rc && i < o->num_properties; i++) ks[j] = o->property_keys[i], vs[j++] = o->property_values[i];
  if (!rc) rc = dl_kv_pack(out, ks, vs, j);
  free(ks);
  free(vs);
  return rc;
}

static int open_source(dl_table **t, dl_snapshot **s, const char *source, const dop_clone_opts *o) {
  dl_snapshot *latest = NULL;
  int rc = dop__open_latest(t, &latest, source);
  if (rc) return rc;
  if (o->version < 0 && !o->timestamp) return *s = latest, 0;
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  if (o->version >= 0) {
    if (o->version > dl_snapshot_version(latest))
      rc = dd_err_set(DD_ERANGE, "cannot clone version %lld: the latest version is %lld",
                      (long long)o->version, (long long)dl_snapshot_version(latest));
    so.version = o->version;
  } else if (dl_parse_timestamp(o->timestamp, &so.timestamp_ms)) {
    rc = dd_err_set(DD_EINVAL, "clone: bad timestamp '%s'", o->timestamp);
  }
  dl_snapshot_free(latest);
  if (!rc) rc = dl_snapshot_open(s, *t, &so);
  return rc;
}

/* After a failed deep clone: the files this call created go, then the directories they
 * leave empty (deepest first), then the target itself when this call created it. */
static void undo_copies(cctx *c, bool target_existed) {
  os_store *st = NULL;
  if (os_open(&st, c->dst_loc) == 0) {
    for (size_t i = c->nmade; i-- > 0;) {
      os_delete(st, c->made[i]);
      for (char *s = strrchr(c->made[i], '/'); s; s = strrchr(c->made[i], '/')) {
        *s = '\0';
        if (os_rmdir(st, c->made[i]) != 0) break;
      }
    }
    if (!target_existed) os_rmdir(st, "_delta_log");
  }
  os_store_free(st);
  if (!target_existed && os_is_local(c->dst_loc)) rmdir(c->dst_loc);
  dd_err_clear();
}

int dop_clone(dop_result **out, const char *source, const dop_clone_opts *o) {
  *out = NULL;
  if (!o || !o->target) return dd_err_set(DD_EINVAL, "clone: a target location is required");
  if (!strcmp(source, o->target)) return dd_err_set(DD_EINVAL, "clone: target is the source table");
  dl_table *st = NULL, *tt = NULL;
  dl_snapshot *ss = NULL, *ts = NULL;
  char *cfg = NULL, **rf = NULL, **wf = NULL;
  dop__proto p = {0};
  dop_result *r = NULL;
  cctx c = {.src_loc = source, .dst_loc = o->target, .o = o};
  struct stat tsb;
  bool target_existed = os_is_local(o->target) ? lstat(o->target, &tsb) == 0 : dop__has_log(o->target);
  int rc = open_source(&st, &ss, source, o);
  if (!rc) rc = dl_snapshot_files(ss, check_cb, &c);
  if (rc) goto cleanup;
  bool exists = dop__has_log(o->target);
  if (exists && !o->replace) {
    rc = dd_err_set(DD_EEXISTS, "a Delta table already exists at %s (set replace to overwrite it)", o->target);
    goto cleanup;
  }
  rc = exists ? dop__open_latest(&tt, &ts, o->target) : dl_table_open(&tt, o->target);
  if (rc) goto cleanup;
  c.src_st = dl_table_store(st);
  c.dst_st = dl_table_store(tt);
  dop__proto_from(&p, dl_snapshot_protocol(ss));
  if (ts) {
    dop__proto old;
    dop__proto_from(&old, dl_snapshot_protocol(ts));
    rc = dop__proto_merge(&p, &old);
    dop__proto_free(&old);
    if (rc) goto cleanup;
  }
  const dl_metadata *m = dl_snapshot_metadata(ss);
  if ((rc = clone_config(&cfg, m, o)) || (rc = dl_txn_begin(&c.txn, tt, ts))) goto cleanup;
  dl_protocol np;
  if ((rc = dop__proto_to(&p, &np, &rf, &wf)) || (rc = dl_txn_set_protocol(c.txn, &np))) goto cleanup;
  dl_metadata_spec md = {NULL, m->name, m->description, m->schema_string, m->num_partition_columns,
                         m->partition_columns, cfg, -1};
  if ((rc = dl_txn_set_metadata(c.txn, &md))) goto cleanup;
  if (ts) {
    dl_txn_read_all(c.txn);
    if ((rc = dl_snapshot_files(ts, remove_cb, &c))) goto cleanup;
  }
  c.total = (int64_t)dl_snapshot_num_files(ss);
  if ((rc = dl_snapshot_files(ss, add_cb, &c))) goto cleanup;
  for (size_t i = 0; i < dl_snapshot_num_domains(ss) && !rc; i++) { /* e.g. delta.clustering */
    const dl_domain *d = dl_snapshot_domain(ss, i);
    if (!strncmp(d->domain, "delta.", 6)) rc = dl_txn_set_domain(c.txn, d->domain, d->configuration, false);
  }
  if (rc) goto cleanup;
  int64_t vals[6] = {dl_snapshot_size_bytes(ss), c.total, c.removed, c.copied, c.removed_bytes, c.copied_bytes};
  static const char *const metric_names[6] = {"sourceTableSize", "sourceNumOfFiles", "numRemovedFiles",
                                              "numCopiedFiles", "removedFilesSize", "copiedFilesSize"};
  json_t *m2 = json_object();
  for (int i = 0; m2 && i < 6; i++) dop__metric(m2, metric_names[i], vals[i]);
  char ver[32];
  snprintf(ver, sizeof ver, "%lld", (long long)dl_snapshot_version(ss));
  json_t *params = json_pack("{s:s,s:s}", "source", source, "sourceVersion", ver);
  if ((rc = dop__commit(c.txn, "CLONE", params, m2, NULL))) goto cleanup;
  c.committed = true;
  dop_cell *row;
  if ((rc = dop__result_new(&r, CLONE_COLS, 6)) || (rc = dop__result_row(r, &row))) goto cleanup;
  for (int i = 0; i < 6; i++) dop__cell_i64(&row[i], vals[i]);
  *out = r;
  r = NULL;
cleanup:
  if (rc && !c.committed) {
    char msg[2048];
    snprintf(msg, sizeof msg, "%s", dd_err_msg());
    undo_copies(&c, target_existed);
    dd_err_set(rc, "%s", msg);
  }
  for (size_t i = 0; i < c.nmade; i++) free(c.made[i]);
  free(c.made);
  dop__set_free(&c.written);
  dop_result_free(r);
  dop__proto_free(&p);
  free(rf);
  free(wf);
  free(cfg);
  dl_txn_free(c.txn);
  dl_snapshot_free(ts);
  dl_snapshot_free(ss);
  dl_table_free(tt);
  dl_table_free(st);
  return rc;
}
