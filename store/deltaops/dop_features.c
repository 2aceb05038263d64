/* dop_features.c: the Table Features rules (PROTOCOL.md "Table Features") as protocol
 * arithmetic: which features exist, which are reader-writer, what legacy versions imply
 * (writer 2: appendOnly+invariants, 3: +checkConstraints, 4: +changeDataFeed and
 * generatedColumns, 5: +columnMapping, 6: +identityColumns; reader 2: columnMapping),
 * raising versions (never lowering), adding a feature (reader-writer features need
 * reader 3 and writer 7, writer-only features writer 7), and the commands built on that:
 * UpgradeTableProtocol, AddFeatureSupport, DropFeatureSupport. */
#include <stdlib.h>
#include <string.h>

#include "store/deltaops/dop_int.h"

typedef struct feature {
  const char *name;
  bool reader_writer;
  int legacy_writer; /* writer version that implies it, 0 if none */
  bool removable;
  const char *requires; /* a feature it needs, or NULL */
  const char *property; /* property that enables it, or NULL */
} feature;

static const feature FEATURES[] = {
    {"appendOnly", false, 2, false, NULL, "delta.appendOnly"},
    {"invariants", false, 2, false, NULL, NULL},
    {"checkConstraints", false, 3, true, NULL, NULL},
    {"changeDataFeed", false, 4, false, NULL, "delta.enableChangeDataFeed"},
    {"generatedColumns", false, 4, false, NULL, NULL},
    {"columnMapping", true, 5, true, NULL, NULL},
    {"identityColumns", false, 6, false, NULL, NULL},
    {"deletionVectors", true, 0, true, NULL, "delta.enableDeletionVectors"},
    {"timestampNtz", true, 0, false, NULL, NULL},
    {"v2Checkpoint", true, 0, true, NULL, NULL},
    {"vacuumProtocolCheck", true, 0, true, NULL, NULL},
    {"typeWidening", true, 0, true, NULL, "delta.enableTypeWidening"},
    {"variantType", true, 0, false, NULL, NULL},
    {"domainMetadata", false, 0, false, NULL, NULL},
    {"clustering", false, 0, false, "domainMetadata", NULL},
    {"rowTracking", false, 0, false, "domainMetadata", "delta.enableRowTracking"},
    {"inCommitTimestamp", false, 0, true, NULL, "delta.enableInCommitTimestamps"},
    {"allowColumnDefaults", false, 0, true, NULL, NULL},
    {"icebergCompatV1", false, 0, false, "columnMapping", NULL},
    {"icebergCompatV2", false, 0, false, "columnMapping", NULL},
};
#define NFEATURES (sizeof FEATURES / sizeof FEATURES[0])

static const feature *find_feature(const char *name) {
  for (size_t i = 0; i < NFEATURES; i++)
    if (!strcmp(FEATURES[i].name, name)) return &FEATURES[i];
  return NULL;
}

static int unknown_feature(const char *name) {
  return dd_err_set(DD_EINVAL, "unknown table feature '%s'", name);
}

/* ======================= protocol arithmetic ======================= */

void dop__proto_from(dop__proto *p, const dl_protocol *src) {
  memset(p, 0, sizeof *p);
  p->reader = src->min_reader_version;
  p->writer = src->min_writer_version;
  for (size_t i = 0; i < src->num_reader_features; i++) dop__set_add(&p->rf, src->reader_features[i]);
  for (size_t i = 0; i < src->num_writer_features; i++) dop__set_add(&p->wf, src->writer_features[i]);
}

void dop__proto_free(dop__proto *p) {
  dop__set_free(&p->rf);
  dop__set_free(&p->wf);
}

/* Is the feature supported, explicitly or implied by legacy versions? */
bool dop__proto_has(const dop__proto *p, const char *name) {
  const feature *f = find_feature(name);
  if (p->writer >= 7) {
    if (dop__set_has(&p->wf, name)) return true;
  } else if (f && f->legacy_writer && p->writer >= f->legacy_writer) {
    return !f->reader_writer || p->reader >= 2;
  }
  return false;
}

/* Makes legacy-implied features explicit (called when moving to writer 7). */
static int expand_legacy(dop__proto *p) {
  int rc = 0;
  for (size_t i = 0; i < NFEATURES && !rc; i++) {
    const feature *f = &FEATURES[i];
    if (!f->legacy_writer || p->writer < f->legacy_writer) continue;
    if (f->reader_writer && p->reader < 2) continue;
    rc = dop__set_add(&p->wf, f->name);
  }
  return rc;
}

/* Every reader-writer feature among the writer features is also a reader feature. */
static int sync_reader(dop__proto *p) {
  if (p->reader < 3) return 0;
  int rc = 0;
  for (size_t i = 0; i < p->wf.cap && !rc; i++) {
    const char *n = p->wf.slots[i];
    const feature *f = n ? find_feature(n) : NULL;
    if (f && f->reader_writer) rc = dop__set_add(&p->rf, n);
  }
  return rc;
}

int dop__proto_raise(dop__proto *p, int reader, int writer) {
  if (reader < 1 || reader > 3 || writer < 1 || writer > 7)
    return dd_err_set(DD_EINVAL, "protocol (%d, %d): reader must be 1..3 and writer 1..7", reader, writer);
  if (reader == 3 && writer < 7 && p->writer < 7)
    return dd_err_set(DD_EINVAL, "reader version 3 requires writer version 7 (table features)");
  int rc = 0;
  if (writer >= 7 && p->writer < 7) rc = expand_legacy(p);
  if (reader > p->reader) p->reader = reader;
  if (writer > p->writer) p->writer = writer;
  return rc ? rc : sync_reader(p);
}

int dop__proto_add_feature(dop__proto *p, const char *name) {
  const feature *f = find_feature(name);
  if (!f) return unknown_feature(name);
  int rc = 0;
  if (f->requires && !dop__proto_has(p, f->requires)) rc = dop__proto_add_feature(p, f->requires);
  if (!rc) rc = dop__proto_raise(p, f->reader_writer ? 3 : p->reader, 7);
  if (!rc) rc = dop__set_add(&p->wf, name);
  if (!rc && f->reader_writer) rc = dop__set_add(&p->rf, name);
  return rc;
}

int dop__proto_merge(dop__proto *p, const dop__proto *old) {
  int rc = 0;
  if (p->writer < 7 && old->writer < 7)
    return dop__proto_raise(p, old->reader > p->reader ? old->reader : p->reader,
                            old->writer > p->writer ? old->writer : p->writer);
  for (size_t i = 0; i < NFEATURES && !rc; i++)
    if (dop__proto_has(old, FEATURES[i].name) && !dop__proto_has(p, FEATURES[i].name))
      rc = dop__proto_add_feature(p, FEATURES[i].name);
  for (size_t i = 0; i < old->wf.cap && !rc; i++) /* features this module does not know */
    if (old->wf.slots[i] && !find_feature(old->wf.slots[i])) {
      rc = dop__proto_raise(p, p->reader, 7);
      if (!rc) rc = dop__set_add(&p->wf, old->wf.slots[i]);
      if (!rc && dop__set_has(&old->rf, old->wf.slots[i])) {
        rc = dop__proto_raise(p, 3, 7);
        if (!rc) rc = dop__set_add(&p->rf, old->wf.slots[i]);
      }
    }
  if (!rc && old->reader > p->reader) rc = dop__proto_raise(p, old->reader, p->writer);
  return rc;
}

/* Sorted array of a set's members (malloc'ed; strings borrowed from the set). */
static char **set_sorted(const dop__set *s) {
  char **v = calloc(s->n + 1, sizeof *v);
  size_t k = 0;
  for (size_t i = 0; v && i < s->cap; i++)
    if (s->slots[i]) v[k++] = s->slots[i];
  for (size_t i = 1; v && i < k; i++)
    for (size_t j = i; j > 0 && strcmp(v[j - 1], v[j]) > 0; j--) {
      char *t = v[j];
      v[j] = v[j - 1];
      v[j - 1] = t;
    }
  return v;
}

int dop__proto_to(const dop__proto *p, dl_protocol *out, char ***rf, char ***wf) {
  memset(out, 0, sizeof *out);
  *rf = *wf = NULL;
  out->min_reader_version = p->reader;
  out->min_writer_version = p->writer;
  if (p->reader >= 3) {
    if (!(*rf = set_sorted(&p->rf))) return DOP_OOM();
    out->reader_features = (const char *const *)*rf;
    out->num_reader_features = p->rf.n;
  }
  if (p->writer >= 7) {
    if (!(*wf = set_sorted(&p->wf))) return DOP_OOM();
    out->writer_features = (const char *const *)*wf;
    out->num_writer_features = p->wf.n;
  }
  return 0;
}

static json_t *set_json(const dop__set *s) {
  char **v = set_sorted(s);
  json_t *a = json_array();
  for (size_t i = 0; v && a && i < s->n; i++) json_array_append_new(a, json_string(v[i]));
  free(v);
  return a;
}

json_t *dop__proto_json(const dop__proto *p) {
  json_t *o = json_pack("{s:i,s:i}", "minReaderVersion", p->reader, "minWriterVersion", p->writer);
  if (o) json_object_set_new(o, "readerFeatures", p->reader >= 3 ? set_json(&p->rf) : json_null());
  if (o) json_object_set_new(o, "writerFeatures", p->writer >= 7 ? set_json(&p->wf) : json_null());
  return o;
}

/* After a drop: back to legacy versions when the remaining features are exactly what a
 * legacy protocol implies (as Delta normalizes a downgraded protocol). */
static void normalize(dop__proto *p) {
  if (p->writer < 7) return;
  if (p->reader >= 3 && p->rf.n == 0) p->reader = 1;
  for (size_t i = 0; i < p->wf.cap; i++) {
    const char *n = p->wf.slots[i];
    const feature *f = n ? find_feature(n) : NULL;
    if (n && (!f || !f->legacy_writer)) return; /* a feature only table features express */
  }
  for (int w = 1; w <= 6; w++) {
    size_t implied = 0;
    bool cm = false;
    for (size_t i = 0; i < NFEATURES; i++)
      if (FEATURES[i].legacy_writer && FEATURES[i].legacy_writer <= w) {
        implied++;
        cm |= !strcmp(FEATURES[i].name, "columnMapping");
      }
    bool all = true;
    for (size_t i = 0; i < NFEATURES && all; i++)
      if (FEATURES[i].legacy_writer && FEATURES[i].legacy_writer <= w)
        all = dop__set_has(&p->wf, FEATURES[i].name);
    if (implied != p->wf.n || !all) continue;
    p->writer = w;
    p->reader = cm ? 2 : 1;
    dop__set_free(&p->rf);
    dop__set_free(&p->wf);
    return;
  }
}

/* ======================= commands ======================= */

static const dop_col NO_COLS[1] = {{"", "", true}};

static int commit_protocol(dl_table *t, dl_snapshot *s, const dop__proto *p, const char *op,
                           json_t *params, const dl_metadata_spec *md) {
  dl_protocol np;
  char **rf = NULL, **wf = NULL;
  dl_txn *txn = NULL;
  int rc = dop__proto_to(p, &np, &rf, &wf);
  if (!rc) rc = dl_txn_begin(&txn, t, s);
  if (!rc) rc = dl_txn_set_protocol(txn, &np);
  if (!rc && md) rc = dl_txn_set_metadata(txn, md);
  if (!rc) rc = dop__commit(txn, op, params, NULL, NULL);
  else json_decref(params);
  dl_txn_free(txn);
  free(rf);
  free(wf);
  return rc;
}

int dop_upgrade_protocol(dop_result **out, const char *location, int reader, int writer) {
  *out = NULL;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dop__proto p;
  int rc = dop__open_latest(&t, &s, location);
  if (rc) return rc;
  dop__proto_from(&p, dl_snapshot_protocol(s));
  if (reader < p.reader || writer < p.writer) {
    rc = dd_err_set(DD_EPRECOND, "protocol cannot be downgraded from (%d, %d) to (%d, %d)",
                    p.reader, p.writer, reader, writer);
    goto cleanup;
  }
  bool change = reader > p.reader || writer > p.writer;
  if ((rc = dop__proto_raise(&p, reader, writer))) goto cleanup;
  if (change) {
    json_t *pj = dop__proto_json(&p);
    char *txt = pj ? json_dumps(pj, JSON_COMPACT) : NULL;
    json_decref(pj);
    rc = txt ? commit_protocol(t, s, &p, "UPGRADE PROTOCOL", json_pack("{s:s}", "newProtocol", txt), NULL)
             : DOP_OOM();
    free(txt);
  }
  if (!rc) rc = dop__result_new(out, NO_COLS, 0);
cleanup:
  dop__proto_free(&p);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}

int dop_add_feature(dop_result **out, const char *location, const char *name) {
  *out = NULL;
  if (!name || !find_feature(name)) return unknown_feature(name ? name : "");
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dop__proto p;
  int rc = dop__open_latest(&t, &s, location);
  if (rc) return rc;
  dop__proto_from(&p, dl_snapshot_protocol(s));
  if (!dop__proto_has(&p, name)) {
    rc = dop__proto_add_feature(&p, name);
    char key[160], *props = NULL;
    snprintf(key, sizeof key, "delta.feature.%s", name);
    json_t *pj = json_pack("{s:s}", key, "supported");
    props = pj ? json_dumps(pj, JSON_COMPACT) : NULL;
    json_decref(pj);
    if (!rc) rc = commit_protocol(t, s, &p, "SET TBLPROPERTIES",
                                  json_pack("{s:s}", "properties", props ? props : "{}"), NULL);
    free(props);
  }
  if (!rc) rc = dop__result_new(out, NO_COLS, 0);
  dop__proto_free(&p);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}

/* Traces of a feature that must be gone before it can be dropped. */
typedef struct trace_ctx { int dv; } trace_ctx;
static int dv_cb(void *ctx, const dl_file *f) {
  if (f->dv) ((trace_ctx *)ctx)->dv++;
  return 0;
}

static int check_traces(dl_snapshot *s, const char *name) {
  const char *v;
  if (!strcmp(name, "deletionVectors")) {
    trace_ctx c = {0};
    int rc = dl_snapshot_files(s, dv_cb, &c);
    if (rc) return rc;
    if (c.dv)
      return dd_err_set(DD_EPRECOND, "cannot drop deletionVectors: %d active files still have "
                        "deletion vectors (rewrite them with REORG ... APPLY (PURGE) first)", c.dv);
  } else if (!strcmp(name, "columnMapping")) {
    v = dl_snapshot_property(s, "delta.columnMapping.mode");
    if (v && strcmp(v, "none"))
      return dd_err_set(DD_EPRECOND, "cannot drop columnMapping: delta.columnMapping.mode is '%s'", v);
  } else if (!strcmp(name, "v2Checkpoint")) {
    v = dl_snapshot_property(s, "delta.checkpointPolicy");
    if (v && !strcmp(v, "v2"))
      return dd_err_set(DD_EPRECOND, "cannot drop v2Checkpoint: delta.checkpointPolicy is 'v2'");
  } else if (!strcmp(name, "checkConstraints")) {
    const char *cur = dl_snapshot_metadata(s)->configuration, *k;
    while (dl_kv_next(&cur, &k, &v))
      if (!strncmp(k, "delta.constraints.", 18))
        return dd_err_set(DD_EPRECOND, "cannot drop checkConstraints: constraint %s exists", k + 18);
  }
  return 0;
}

/* The metadata with the feature's enabling property removed, or no change (*changed=0). */
static int metadata_without(dl_metadata_spec *md, char **packed, const dl_metadata *m,
                            const char *property, bool *changed) {
  *changed = false;
  *packed = NULL;
  memset(md, 0, sizeof *md);
  const char *cur_v;
  if (!property || !dl_kv_get(m->configuration, property, &cur_v)) return 0;
  size_t n = 0;
  const char *cur = m->configuration, *k, *v;
  while (dl_kv_next(&cur, &k, &v)) n++;
  const char **ks = calloc(n + 1, sizeof *ks), **vs = calloc(n + 1, sizeof *vs);
  size_t j = 0;
  cur = m->configuration;
  while (ks && vs && dl_kv_next(&cur, &k, &v))
    if (strcmp(k, property)) ks[j] = k, vs[j++] = v;
  int rc = ks && vs ? dl_kv_pack(packed, ks, vs, j) : DOP_OOM();
  free(ks);
  free(vs);
  if (rc) return rc;
  md->id = m->id;
  md->name = m->name;
  md->description = m->description;
  md->schema_string = m->schema_string;
  md->num_partition_columns = m->num_partition_columns;
  md->partition_columns = m->partition_columns;
  md->configuration = *packed;
  md->created_time = m->created_time;
  *changed = true;
  return 0;
}

int dop_drop_feature(dop_result **out, const char *location, const char *name, bool truncate_history) {
  *out = NULL;
  const feature *f = name ? find_feature(name) : NULL;
  if (!f) return unknown_feature(name ? name : "");
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dop__proto p;
  char *packed = NULL;
  int rc = dop__open_latest(&t, &s, location);
  if (rc) return rc;
  dop__proto_from(&p, dl_snapshot_protocol(s));
  if (!dop__proto_has(&p, name)) {
    rc = dd_err_set(DD_EPRECOND, "table does not support feature '%s'; nothing to drop", name);
    goto cleanup;
  }
  if (!f->removable) {
    rc = dd_err_set(DD_EPRECOND, "feature '%s' cannot be dropped (not a removable feature)", name);
    goto cleanup;
  }
  if (f->reader_writer && !truncate_history) {
    rc = dd_err_set(DD_EPRECOND, "dropping reader-writer feature '%s' needs truncate_history: "
                    "older versions of the log still use it", name);
    goto cleanup;
  }
  for (size_t i = 0; i < NFEATURES; i++)
    if (FEATURES[i].requires && !strcmp(FEATURES[i].requires, name) && dop__proto_has(&p, FEATURES[i].name)) {
      rc = dd_err_set(DD_EPRECOND, "cannot drop '%s': feature '%s' depends on it", name, FEATURES[i].name);
      goto cleanup;
    }
  if ((rc = check_traces(s, name))) goto cleanup;
  if (p.writer < 7) expand_legacy(&p), p.writer = 7;
  /* Remove from both lists by rebuilding them. */
  dop__set nw = {0}, nr = {0};
  for (size_t i = 0; i < p.wf.cap; i++)
    if (p.wf.slots[i] && strcmp(p.wf.slots[i], name)) dop__set_add(&nw, p.wf.slots[i]);
  for (size_t i = 0; i < p.rf.cap; i++)
    if (p.rf.slots[i] && strcmp(p.rf.slots[i], name)) dop__set_add(&nr, p.rf.slots[i]);
  dop__proto_free(&p);
  p.wf = nw;
  p.rf = nr;
  normalize(&p);
  dl_metadata_spec md;
  bool md_changed;
  if ((rc = metadata_without(&md, &packed, dl_snapshot_metadata(s), f->property, &md_changed))) goto cleanup;
  rc = commit_protocol(t, s, &p, "DROP FEATURE",
                       json_pack("{s:s,s:s}", "featureName", name, "truncateHistory",
                                 truncate_history ? "true" : "false"),
                       md_changed ? &md : NULL);
  if (!rc && truncate_history) {
    /* A checkpoint at the new version lets readers start after the feature's last use. */
    dl_snapshot *ns = NULL;
    if (dl_snapshot_open(&ns, t, NULL) == 0) dl_checkpoint_write(t, ns);
    dl_snapshot_free(ns);
    dd_err_clear();
  }
  if (!rc) rc = dop__result_new(out, NO_COLS, 0);
cleanup:
  free(packed);
  dop__proto_free(&p);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}
