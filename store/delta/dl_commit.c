/* dl_commit.c: writing new versions with optimistic concurrency.
 *
 * A dl_txn collects actions against the snapshot it read (version R). Committing writes
 * R+1.json with put-if-absent: the file appears whole or not at all and an existing commit
 * is never replaced. Losing the race (DD_EEXISTS) means another writer committed R+1 first:
 * we read the winner's actions and look for logical conflicts with ours (a concurrent
 * protocol or metaData change, a concurrent remove of a file we read or remove, a txn of
 * one of our appIds, any data change when we read the whole table, a concurrent create).
 * Without a conflict we retry at the next version (bounded), else fail with DD_ECONFLICT.
 * The commitInfo goes first and carries the in-commit timestamp when the table enables it.
 * Row tracking's fresh ids and commit versions are assigned at each attempt (dl_rowtrack.c).
 * After a commit at a multiple of delta.checkpointInterval a checkpoint is written and the
 * log cleaned up (failures there do not fail the commit). */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

typedef struct strset {
  char **v;
  size_t n, cap;
} strset;

struct dl_txn {
  dl_table *t;
  dl_snapshot *read;
  int64_t read_version;
  json_t *protocol, *metadata; /* action bodies set by this txn, or NULL */
  json_t *actions;             /* array of other action objects */
  strset removed, read_files, app_ids;
  bool read_all, has_remove, committed;
  size_t n_add;
  uint8_t *rt_flags;           /* [rt_n] DL__RT_* per index of actions (row tracking) */
  size_t rt_n;
  int64_t rt_hwm;              /* row id high-water mark: read snapshot's, winners' */
};

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

/* ---------- small sets ---------- */

static int set_add(strset *s, const char *v) {
  if (s->n == s->cap) {
    size_t cap = s->cap ? s->cap * 2 : 16;
    char **n = realloc(s->v, cap * sizeof *n);
    if (!n) return OOM();
    s->v = n;
    s->cap = cap;
  }
  if (!(s->v[s->n] = strdup(v))) return OOM();
  s->n++;
  return 0;
}

static bool set_has(const strset *s, const char *v) {
  for (size_t i = 0; i < s->n; i++)
    if (!strcmp(s->v[i], v)) return true;
  return false;
}

static void set_free(strset *s) {
  for (size_t i = 0; i < s->n; i++) free(s->v[i]);
  free(s->v);
}

/* ---------- building ---------- */

int dl_txn_begin(dl_txn **out, dl_table *t, dl_snapshot *read) {
  *out = NULL;
  dl_txn *x = calloc(1, sizeof *x);
  if (!x || !(x->actions = json_array())) {
    free(x);
    return OOM();
  }
  x->t = t;
  x->read = dl_snapshot_ref(read);
  x->read_version = read ? read->version : -1;
  x->rt_hwm = dl__rt_snapshot_hwm(read);
  *out = x;
  return 0;
}

void dl_txn_free(dl_txn *x) {
  if (!x) return;
  dl_snapshot_free(x->read);
  json_decref(x->protocol);
  json_decref(x->metadata);
  json_decref(x->actions);
  set_free(&x->removed);
  set_free(&x->read_files);
  set_free(&x->app_ids);
  free(x->rt_flags);
  free(x);
}

static json_t *strv(const char *const *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_string(v[i]));
  return a;
}

int dl_txn_set_protocol(dl_txn *x, const dl_protocol *p) {
  json_t *o = json_pack("{s:i,s:i}", "minReaderVersion", p->min_reader_version,
                        "minWriterVersion", p->min_writer_version);
  if (!o) return OOM();
  if (p->reader_features)
    json_object_set_new(o, "readerFeatures", strv(p->reader_features, p->num_reader_features));
  if (p->writer_features)
    json_object_set_new(o, "writerFeatures", strv(p->writer_features, p->num_writer_features));
  json_decref(x->protocol);
  x->protocol = o;
  return 0;
}

int dl_txn_set_metadata(dl_txn *x, const dl_metadata_spec *m) {
  if (!m->schema_string) return dd_err_set(DD_EINVAL, "metadata needs a schema");
  dl_schema *s = NULL;
  int rc = dl_schema_parse(&s, m->schema_string, strlen(m->schema_string));
  dl_schema_free(s);
  if (rc) return dd_err_wrap(DD_EINVAL, "bad schema");
  char uuid[37];
  dl__uuid(uuid);
  json_t *o = json_pack("{s:s,s:{s:s,s:{}},s:s,s:o,s:o,s:I}", "id", m->id ? m->id : uuid,
                        "format", "provider", "parquet", "options", "schemaString",
                        m->schema_string, "partitionColumns",
                        strv(m->partition_columns, m->num_partition_columns), "configuration",
                        dl__kv_to_json(m->configuration ? m->configuration : ""), "createdTime",
                        (json_int_t)(m->created_time >= 0 ? m->created_time : dl__now_ms()));
  if (!o) return OOM();
  if (m->name) json_object_set_new(o, "name", json_string(m->name));
  if (m->description) json_object_set_new(o, "description", json_string(m->description));
  json_decref(x->metadata);
  x->metadata = o;
  return 0;
}

static json_t *dv_json(const dl_dv *dv) {
  char st[2] = {dv->storage_type, 0};
  json_t *o = json_pack("{s:s,s:s,s:i,s:I}", "storageType", st, "pathOrInlineDv",
                        dv->path_or_inline, "sizeInBytes", dv->size_in_bytes, "cardinality",
                        (json_int_t)dv->cardinality);
  if (o && dv->offset >= 0) json_object_set_new(o, "offset", json_integer(dv->offset));
  if (o && dv->max_row_index >= 0) json_object_set_new(o, "maxRowIndex", json_integer(dv->max_row_index));
  return o;
}

/* One add/remove/cdc action body from a public file view (path URL-encoded here). */
static json_t *file_json(const dl_file *f, int kind) {
  dd_buf enc = {0};
  dl__url_encode_path(&enc, f->path);
  if (enc.oom) return NULL;
  json_t *o = json_pack("{s:s,s:o,s:b}", "path", enc.p ? enc.p : "", "partitionValues",
                        dl__kv_to_json(f->partition_values ? f->partition_values : ""),
                        "dataChange", f->data_change);
  dd_buf_free(&enc);
  if (!o) return NULL;
  if (f->size >= 0) json_object_set_new(o, "size", json_integer(f->size));
  if (kind == DL__A_ADD)
    json_object_set_new(o, "modificationTime",
                        json_integer(f->modification_time >= 0 ? f->modification_time : dl__now_ms()));
  if (kind == DL__A_REMOVE) {
    json_object_set_new(o, "deletionTimestamp",
                        json_integer(f->deletion_timestamp >= 0 ? f->deletion_timestamp : dl__now_ms()));
    json_object_set_new(o, "extendedFileMetadata", json_true());
  }
  if (f->stats && kind != DL__A_CDC) json_object_set_new(o, "stats", json_string(f->stats));
  if (f->tags && *f->tags) json_object_set_new(o, "tags", dl__kv_to_json(f->tags));
  if (f->dv && kind != DL__A_CDC) json_object_set_new(o, "deletionVector", dv_json(f->dv));
  if (f->base_row_id >= 0) json_object_set_new(o, "baseRowId", json_integer(f->base_row_id));
  if (f->default_row_commit_version >= 0)
    json_object_set_new(o, "defaultRowCommitVersion", json_integer(f->default_row_commit_version));
  if (kind == DL__A_ADD && f->clustering_provider)
    json_object_set_new(o, "clusteringProvider", json_string(f->clustering_provider));
  return o;
}

static int push_action(dl_txn *x, const char *kind, json_t *body) {
  if (!body) return OOM();
  json_t *o = json_object();
  if (!o || json_object_set_new(o, kind, body) || json_array_append_new(x->actions, o)) return OOM();
  return 0;
}

int dl_txn_add_file(dl_txn *x, const dl_file *f) {
  if (!f->path || f->size < 0) return dd_err_set(DD_EINVAL, "add needs a path and a size");
  x->n_add++;
  uint8_t fl = (f->base_row_id < 0 ? DL__RT_FRESH_ID : 0) |
               (f->default_row_commit_version < 0 ? DL__RT_FRESH_VERSION : 0);
  size_t at = json_array_size(x->actions);
  if (fl) {
    uint8_t *n = realloc(x->rt_flags, at + 1);
    if (!n) return OOM();
    memset(n + x->rt_n, 0, at + 1 - x->rt_n);
    n[at] = fl;
    x->rt_flags = n;
    x->rt_n = at + 1;
  }
  return push_action(x, "add", file_json(f, DL__A_ADD));
}

int dl_txn_remove_file(dl_txn *x, const dl_file *f) {
  if (!f->path) return dd_err_set(DD_EINVAL, "remove needs a path");
  x->has_remove = true;
  int rc = set_add(&x->removed, f->path);
  return rc ? rc : push_action(x, "remove", file_json(f, DL__A_REMOVE));
}

int dl_txn_add_cdc(dl_txn *x, const dl_file *f) {
  if (!f->path || f->size < 0) return dd_err_set(DD_EINVAL, "cdc needs a path and a size");
  return push_action(x, "cdc", file_json(f, DL__A_CDC));
}

int dl_txn_set_app_txn(dl_txn *x, const char *app_id, int64_t version) {
  int rc = set_add(&x->app_ids, app_id);
  return rc ? rc : push_action(x, "txn", json_pack("{s:s,s:I,s:I}", "appId", app_id, "version",
                                                   (json_int_t)version, "lastUpdated",
                                                   (json_int_t)dl__now_ms()));
}

int dl_txn_set_domain(dl_txn *x, const char *domain, const char *configuration, bool removed) {
  return push_action(x, "domainMetadata",
                     json_pack("{s:s,s:s,s:b}", "domain", domain, "configuration",
                               configuration ? configuration : "", "removed", removed));
}

int dl_txn_read_file(dl_txn *x, const char *path) { return set_add(&x->read_files, path); }
void dl_txn_read_all(dl_txn *x) { x->read_all = true; }

/* ---------- conflict detection ---------- */

typedef struct conflict_ctx {
  const dl_txn *x;
  int64_t version;
  int64_t ict;
  int64_t hwm; /* the winner's row id high-water mark, or -1 */
  char *buf;
  size_t cap;
} conflict_ctx;

static int conflict_cb(void *vctx, dl__action *a) {
  conflict_ctx *c = vctx;
  const dl_txn *x = c->x;
  long long v = (long long)c->version;
  switch (a->kind) {
    case DL__A_COMMITINFO:
      if (c->ict < 0) c->ict = a->ict;
      return 0;
    case DL__A_METADATA:
    case DL__A_PROTOCOL:
      return dd_err_set(DD_ECONFLICT, "concurrent %s change committed at version %lld",
                        a->kind == DL__A_METADATA ? "metadata" : "protocol", v);
    case DL__A_DOMAIN:
      if (!strcmp(a->domain, DL__RT_DOMAIN) && !a->domain_removed) {
        int64_t h = dl__rt_hwm_parse(a->domain_config);
        if (h > c->hwm) c->hwm = h;
      }
      return 0;
    case DL__A_TXN:
      if (set_has(&x->app_ids, a->txn.app_id))
        return dd_err_set(DD_ECONFLICT, "concurrent transaction of app '%s' committed at version %lld",
                          a->txn.app_id, v);
      return 0;
    case DL__A_REMOVE:
    case DL__A_ADD: {
      if ((x->metadata || x->protocol) && a->file.data_change)
        return dd_err_set(DD_ECONFLICT, "this transaction changes the table metadata but version "
                          "%lld changed the data concurrently", v);
      if (x->read_all && a->file.data_change)
        return dd_err_set(DD_ECONFLICT, "concurrent data change (%s %s) at version %lld touches "
                          "data this transaction read", a->kind == DL__A_ADD ? "add" : "remove",
                          a->file.path, v);
      if (a->kind != DL__A_REMOVE) return 0;
      size_t need = strlen(a->file.path) + 1;
      if (need > c->cap) {
        char *n = realloc(c->buf, need);
        if (!n) return OOM();
        c->buf = n;
        c->cap = need;
      }
      dl__url_decode(a->file.path, c->buf);
      if (set_has(&x->removed, c->buf) || set_has(&x->read_files, c->buf))
        return dd_err_set(DD_ECONFLICT, "file %s was removed concurrently at version %lld",
                          c->buf, v);
      return 0;
    }
    default: return 0;
  }
}

static int check_winner(dl_txn *x, int64_t v, int64_t *ict) {
  if (x->read_version < 0)
    return dd_err_set(DD_ECONFLICT, "table %s was created concurrently", dl_table_location(x->t));
  char *path = dl__version_path(v, ".json");
  uint8_t *data = NULL;
  size_t len = 0;
  conflict_ctx c = {.x = x, .version = v, .ict = -1, .hwm = -1};
  int rc = path ? os_read_all(x->t->store, path, &data, &len) : OOM();
  if (!rc) rc = dl__parse_commit((const char *)data, len, path, conflict_cb, &c);
  *ict = c.ict;
  if (c.hwm > x->rt_hwm) x->rt_hwm = c.hwm;
  free(c.buf);
  free(data);
  free(path);
  return rc;
}

/* ---------- commit ---------- */

static const char *effective_config(const dl_txn *x) {
  if (x->metadata) return NULL; /* read from JSON below */
  return x->read ? x->read->st.md.configuration : "";
}

static bool config_true(const dl_txn *x, const char *key) {
  const char *v = NULL;
  if (x->metadata) v = dl__json_str(json_object_get(x->metadata, "configuration"), key);
  else dl_kv_get(effective_config(x), key, &v);
  return v && !strcmp(v, "true");
}

static int64_t config_int(const dl_txn *x, const char *key, int64_t dflt) {
  const char *v = NULL;
  if (x->metadata) v = dl__json_str(json_object_get(x->metadata, "configuration"), key);
  else dl_kv_get(effective_config(x), key, &v);
  if (!v) return dflt;
  char *end;
  long long n = strtoll(v, &end, 10);
  return (*end || n <= 0) ? dflt : n;
}

/* The protocol the commit will run under, checked for writing. */
static int check_protocol(dl_txn *x) {
  if (!x->protocol) {
    if (!x->read) return dd_err_set(DD_EINVAL, "a new table needs a protocol and metadata");
    return dl_protocol_check(&x->read->st.proto, true);
  }
  dl__action a;
  json_t *wrap = json_pack("{s:O}", "protocol", x->protocol);
  dl__arena scratch = {0};
  int rc = wrap ? dl__action_from_json(&a, wrap, &scratch) : OOM();
  if (!rc) rc = dl_protocol_check(&a.proto, true);
  json_decref(wrap);
  dl__arena_free(&scratch);
  return rc;
}

/* True when the commit must assign row ids and commit versions: its protocol supports row
 * tracking and its configuration does not suspend it. */
static bool rt_on(const dl_txn *x) {
  if (config_true(x, "delta.rowTrackingSuspended")) return false;
  if (!x->protocol) return x->read && dl__rt_supported(&x->read->st.proto);
  size_t i;
  json_t *f;
  json_array_foreach(json_object_get(x->protocol, "writerFeatures"), i, f)
    if (json_is_string(f) && !strcmp(json_string_value(f), "rowTracking")) return true;
  return false;
}

/* True when this commit turns in-commit timestamps on for a table that had them off: the
 * metadata must then record the enablement version and timestamp. */
static bool enables_ict(const dl_txn *x) {
  if (!x->metadata || !x->read) return false;
  const char *now = dl__json_str(json_object_get(x->metadata, "configuration"),
                                 "delta.enableInCommitTimestamps");
  const char *before = dl_snapshot_property(x->read, "delta.enableInCommitTimestamps");
  return now && !strcmp(now, "true") && !(before && !strcmp(before, "true"));
}

static void set_ict_enablement(dl_txn *x, int64_t v, int64_t ict) {
  json_t *cfg = json_object_get(x->metadata, "configuration");
  char buf[32];
  snprintf(buf, sizeof buf, "%lld", (long long)v);
  json_object_set_new(cfg, "delta.inCommitTimestampEnablementVersion", json_string(buf));
  snprintf(buf, sizeof buf, "%lld", (long long)ict);
  json_object_set_new(cfg, "delta.inCommitTimestampEnablementTimestamp", json_string(buf));
}

static int serialize(dl_txn *x, const dl_commit_opts *o, int64_t now, int64_t ict, dd_buf *b) {
  char uuid[37];
  dl__uuid(uuid);
  bool blind = !x->has_remove && !x->read_all && !x->read_files.n && !x->metadata && !x->protocol;
  json_t *ci = json_pack("{s:I,s:s,s:o,s:o,s:s,s:b,s:s}", "timestamp", (json_int_t)now,
                         "operation", o->operation ? o->operation : "WRITE",
                         "operationParameters",
                         o->operation_parameters ? json_loads(o->operation_parameters, 0, NULL)
                                                 : json_object(),
                         "operationMetrics",
                         o->operation_metrics ? json_loads(o->operation_metrics, 0, NULL)
                                              : json_object(),
                         "engineInfo", "deltad/" DL_ENGINE_VERSION, "isBlindAppend", blind,
                         "txnId", uuid);
  if (!ci) return dd_err_set(DD_EINVAL, "commit: operation parameters/metrics must be JSON objects");
  if (ict >= 0) json_object_set_new(ci, "inCommitTimestamp", json_integer(ict));
  if (x->read_version >= 0) json_object_set_new(ci, "readVersion", json_integer(x->read_version));
  json_t *lines[3] = {json_pack("{s:o}", "commitInfo", ci),
                      x->protocol ? json_pack("{s:O}", "protocol", x->protocol) : NULL,
                      x->metadata ? json_pack("{s:O}", "metaData", x->metadata) : NULL};
  int rc = 0;
  for (int i = 0; i < 3; i++) {
    if (i == 0 && !lines[0]) rc = OOM();
    if (!lines[i]) continue;
    char *s = json_dumps(lines[i], JSON_COMPACT);
    if (!s) rc = OOM();
    else dd_buf_puts(b, s), dd_buf_putc(b, '\n');
    free(s);
    json_decref(lines[i]);
  }
  size_t i;
  json_t *a;
  json_array_foreach(x->actions, i, a) {
    char *s = json_dumps(a, JSON_COMPACT);
    if (!s) {
      rc = OOM();
      break;
    }
    dd_buf_puts(b, s);
    dd_buf_putc(b, '\n');
    free(s);
  }
  if (!rc && b->oom) rc = OOM();
  return rc;
}

static void after_commit(dl_txn *x, int64_t v, const dl_commit_opts *o, int64_t now) {
  int64_t interval = config_int(x, "delta.checkpointInterval", 10);
  if (interval <= 0 || v == 0 || v % interval != 0) return;
  dl_log_clean_temps(x->t, now, NULL);
  if (!o->checkpoint) return;
  dl_snapshot *s = NULL;
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  so.version = v;
  if (dl_snapshot_open(&s, x->t, &so) == 0 && dl_checkpoint_write(x->t, s) == 0)
    dl_log_cleanup(x->t, s, now, NULL);
  dl_snapshot_free(s);
  dd_err_clear();
}

static atomic_uint_fast64_t dl__commits, dl__conflicts;

dl_commit_stats dl_commit_stats_get(void) {
  return (dl_commit_stats){atomic_load_explicit(&dl__commits, memory_order_relaxed),
                           atomic_load_explicit(&dl__conflicts, memory_order_relaxed)};
}

static int txn_commit(dl_txn *x, const dl_commit_opts *opts, int64_t *out_version);

int dl_txn_commit(dl_txn *x, const dl_commit_opts *opts, int64_t *out_version) {
  int rc = txn_commit(x, opts, out_version);
  if (!rc) atomic_fetch_add_explicit(&dl__commits, 1, memory_order_relaxed);
  else if (rc == DD_ECONFLICT) atomic_fetch_add_explicit(&dl__conflicts, 1, memory_order_relaxed);
  return rc;
}

static int txn_commit(dl_txn *x, const dl_commit_opts *opts, int64_t *out_version) {
  dl_commit_opts o = DL_COMMIT_OPTS_INIT;
  if (opts) o = *opts;
  if (out_version) *out_version = -1;
  if (x->committed) return dd_err_set(DD_EINVAL, "transaction already committed");
  if (!x->read && (!x->metadata || !x->protocol))
    return dd_err_set(DD_EINVAL, "a new table needs a protocol and metadata");
  int rc = check_protocol(x);
  if (rc) return rc;
  if (x->has_remove && config_true(x, "delta.appendOnly"))
    return dd_err_set(DD_EPRECOND, "table is append-only (delta.appendOnly=true): cannot remove files");
  bool ict_on = config_true(x, "delta.enableInCommitTimestamps");
  bool rt = rt_on(x);
  int64_t prev_ict = x->read && ict_on ? x->read->timestamp : -1;
  int64_t v = x->read_version + 1;
  for (int attempt = 0;; attempt++) {
    int64_t now = o.now_ms ? o.now_ms : dl__now_ms();
    if (ict_on && now <= prev_ict && prev_ict == INT64_MAX)
      return dd_err_set(DD_ECORRUPT, "the table's last in-commit timestamp is %lld: no later one exists",
                        (long long)prev_ict);
    int64_t ict = ict_on ? (now > prev_ict ? now : prev_ict + 1) : -1;
    dd_buf b = {0};
    char *path = dl__version_path(v, ".json");
    if (ict >= 0 && enables_ict(x)) set_ict_enablement(x, v, ict);
    rc = path ? 0 : OOM();
    if (!rc && rt) rc = dl__rt_assign(x->actions, x->rt_flags, x->rt_n, v, x->rt_hwm);
    if (!rc) rc = serialize(x, &o, now, ict, &b);
    if (!rc) rc = os_put_if_absent(x->t->store, path, b.p, b.len);
    dd_buf_free(&b);
    free(path);
    if (!rc) {
      x->committed = true;
      if (out_version) *out_version = v;
      after_commit(x, v, &o, now);
      return 0;
    }
    if (rc != DD_EEXISTS) return rc;
    if (attempt >= o.max_retries)
      return dd_err_set(DD_ECONFLICT, "gave up after %d lost commit races (last tried version %lld)",
                        attempt + 1, (long long)v);
    int64_t w_ict = -1;
    if ((rc = check_winner(x, v, &w_ict))) return rc;
    if (w_ict > prev_ict) prev_ict = w_ict;
    v++;
  }
}

/* ---------- the table as this transaction leaves it ---------- */

/* Applies the action body `body` under key `kind` to the snapshot's state. */
static int pending_apply(dl_snapshot *s, const char *kind, json_t *body) {
  dl__action a;
  json_t *wrap = json_pack("{s:O}", kind, body);
  dl__arena scratch = {0};
  int rc = wrap ? dl__action_from_json(&a, wrap, &scratch) : OOM();
  if (!rc) rc = dl__state_apply(&s->st, &a);
  json_decref(wrap);
  dl__arena_free(&scratch);
  return rc;
}

int dl_txn_pending_snapshot(dl_snapshot **out, dl_txn *x) {
  *out = NULL;
  if (!x->metadata && !x->read) return dd_err_set(DD_EPRECOND, "pending snapshot: the transaction sets no metadata");
  dl_snapshot *s = NULL;
  int rc = dl__snapshot_new(&s, x->t);
  if (!rc && x->read) rc = dl__state_copy(&s->st, &x->read->st);
  if (!rc && x->protocol) rc = pending_apply(s, "protocol", x->protocol);
  if (!rc && x->metadata) rc = pending_apply(s, "metaData", x->metadata);
  if (!rc) rc = dl__snapshot_finish(s);
  if (rc) {
    dl_snapshot_free(s);
    return rc;
  }
  s->version = x->read ? x->read->version : -1;
  *out = s;
  return 0;
}
