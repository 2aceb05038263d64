/* dl_checkpoint_write.c: writing a classic single-file checkpoint (V1 spec) with the
 * project's Parquet writer, then `_last_checkpoint`.
 *
 * One row per action, each row a struct of the top-level action columns with exactly one
 * set: protocol, metaData, txn, domainMetadata, add (live files) and remove (tombstones not
 * older than delta.deletedFileRetentionDuration, default one week). Stats are kept as the
 * JSON string; no stats_parsed / partitionValues_parsed columns are written. The checkpoint
 * is published with put-if-absent (a racing writer's checkpoint of the same version holds
 * the same state), _last_checkpoint with an atomic overwrite. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"
#include "store/parquet/pq.h"

/* ======================= schema ======================= */

#define F(n, k) {n, k, true, 0, 0, 0, NULL}
#define S(n, arr) {n, PQ_W_STRUCT, true, 0, 0, sizeof arr / sizeof arr[0], arr}

static const pq_wfield STRMAP_KV[] = {{"key", PQ_W_STRING, false, 0, 0, 0, NULL},
                                      F("value", PQ_W_STRING)};
static const pq_wfield STRLIST_EL[] = {F("element", PQ_W_STRING)};
#define MAP(n) {n, PQ_W_MAP, true, 0, 0, 2, STRMAP_KV}
#define LIST(n) {n, PQ_W_LIST, true, 0, 0, 1, STRLIST_EL}

static const pq_wfield TXN[] = {F("appId", PQ_W_STRING), F("version", PQ_W_INT64),
                                F("lastUpdated", PQ_W_INT64)};
static const pq_wfield DV[] = {F("storageType", PQ_W_STRING), F("pathOrInlineDv", PQ_W_STRING),
                               F("offset", PQ_W_INT32), F("sizeInBytes", PQ_W_INT32),
                               F("cardinality", PQ_W_INT64), F("maxRowIndex", PQ_W_INT64)};
static const pq_wfield ADD[] = {F("path", PQ_W_STRING), MAP("partitionValues"),
                                F("size", PQ_W_INT64), F("modificationTime", PQ_W_INT64),
                                F("dataChange", PQ_W_BOOL), F("stats", PQ_W_STRING),
                                MAP("tags"), S("deletionVector", DV),
                                F("baseRowId", PQ_W_INT64), F("defaultRowCommitVersion", PQ_W_INT64),
                                F("clusteringProvider", PQ_W_STRING)};
static const pq_wfield REMOVE[] = {F("path", PQ_W_STRING), F("deletionTimestamp", PQ_W_INT64),
                                   F("dataChange", PQ_W_BOOL), F("extendedFileMetadata", PQ_W_BOOL),
                                   MAP("partitionValues"), F("size", PQ_W_INT64),
                                   S("deletionVector", DV)};
static const pq_wfield FORMAT[] = {F("provider", PQ_W_STRING), MAP("options")};
static const pq_wfield METADATA[] = {F("id", PQ_W_STRING), F("name", PQ_W_STRING),
                                     F("description", PQ_W_STRING), S("format", FORMAT),
                                     F("schemaString", PQ_W_STRING), LIST("partitionColumns"),
                                     MAP("configuration"), F("createdTime", PQ_W_INT64)};
static const pq_wfield PROTOCOL[] = {F("minReaderVersion", PQ_W_INT32),
                                     F("minWriterVersion", PQ_W_INT32),
                                     LIST("readerFeatures"), LIST("writerFeatures")};
static const pq_wfield DOMAIN[] = {F("domain", PQ_W_STRING), F("configuration", PQ_W_STRING),
                                   F("removed", PQ_W_BOOL)};
static const pq_wfield TOP[] = {S("txn", TXN), S("add", ADD), S("remove", REMOVE),
                                S("metaData", METADATA), S("protocol", PROTOCOL),
                                S("domainMetadata", DOMAIN)};
static const pq_wfield ROOT = {"spark_schema", PQ_W_STRUCT, false, 0, 0, 6, TOP};
enum { C_TXN, C_ADD, C_REMOVE, C_META, C_PROTO, C_DOMAIN, C_N };

/* ======================= values ======================= */

typedef struct wctx {
  pq_writer *ws[64]; /* one per part */
  int parts;
  dl__arena a; /* per-row scratch */
  int64_t rows, adds;
  int64_t tomb_cutoff;
} wctx;

static pq_value *items(wctx *c, size_t n) {
  pq_value *v = dl__arena_alloc(&c->a, (n ? n : 1) * sizeof *v);
  if (v) memset(v, 0, (n ? n : 1) * sizeof *v);
  return v;
}

static pq_value vstr(const char *s) {
  pq_value v = {0};
  if (!s) return v;
  v.kind = PQ_V_BYTES;
  v.is_string = 1;
  v.len = (uint32_t)strlen(s);
  v.u.bytes = (const uint8_t *)s;
  return v;
}
static pq_value vi64(int64_t x, bool present) {
  pq_value v = {0};
  if (present) v.kind = PQ_V_INT64, v.u.i64 = x;
  return v;
}
static pq_value vi32(int32_t x, bool present) {
  pq_value v = {0};
  if (present) v.kind = PQ_V_INT32, v.u.i32 = x;
  return v;
}
static pq_value vbool(bool b) {
  pq_value v = {.kind = PQ_V_BOOL};
  v.u.b = b;
  return v;
}
static pq_value vstruct(pq_value *it, size_t n) {
  pq_value v = {.kind = PQ_V_STRUCT, .len = (uint32_t)n};
  v.u.items = it;
  return v;
}

static pq_value vmap(wctx *c, const char *packed) {
  pq_value v = {0};
  if (!packed) return v;
  size_t n = 0;
  const char *k, *val, *cur = packed;
  while (dl_kv_next(&cur, &k, &val)) n++;
  pq_value *it = items(c, 2 * n);
  if (!it) return v;
  cur = packed;
  for (size_t i = 0; dl_kv_next(&cur, &k, &val); i++) {
    it[2 * i] = vstr(k);
    it[2 * i + 1] = vstr(val);
  }
  v.kind = PQ_V_MAP;
  v.len = (uint32_t)n;
  v.u.items = it;
  return v;
}

static pq_value vlist(wctx *c, const char *const *s, size_t n) {
  pq_value v = {0};
  if (!s) return v;
  pq_value *it = items(c, n);
  if (!it) return v;
  for (size_t i = 0; i < n; i++) it[i] = vstr(s[i]);
  v.kind = PQ_V_LIST;
  v.len = (uint32_t)n;
  v.u.items = it;
  return v;
}

static pq_value vdv(wctx *c, const dl_dv *dv) {
  pq_value v = {0};
  pq_value *it = dv ? items(c, 6) : NULL;
  if (!it) return v;
  char *st = dl__arena_strndup(&c->a, &dv->storage_type, 1);
  it[0] = vstr(st);
  it[1] = vstr(dv->path_or_inline);
  it[2] = vi32((int32_t)dv->offset, dv->offset >= 0);
  it[3] = vi32(dv->size_in_bytes, true);
  it[4] = vi64(dv->cardinality, true);
  it[5] = vi64(dv->max_row_index, dv->max_row_index >= 0);
  return vstruct(it, 6);
}

/* Writes a row whose only non-null column is col. */
static int emit(wctx *c, int col, pq_value v) {
  pq_value *top = items(c, C_N);
  if (!top) return dd_err_set(DD_ENOMEM, "out of memory");
  top[col] = v;
  pq_value row = vstruct(top, C_N);
  int rc = pq_writer_write_row(c->ws[c->rows % c->parts], &row);
  c->rows++;
  if (c->a.bytes > (1u << 20)) dl__arena_free(&c->a);
  return rc;
}

/* ======================= rows ======================= */

static int add_cb(void *ctx, const dl_file *f) {
  wctx *c = ctx;
  pq_value *it = items(c, 11);
  if (!it) return dd_err_set(DD_ENOMEM, "out of memory");
  it[0] = vstr(f->raw_path);
  it[1] = vmap(c, f->partition_values);
  it[2] = vi64(f->size, true);
  it[3] = vi64(f->modification_time, true);
  it[4] = vbool(f->data_change);
  it[5] = vstr(f->stats);
  it[6] = vmap(c, f->tags);
  it[7] = vdv(c, f->dv);
  it[8] = vi64(f->base_row_id, f->base_row_id >= 0);
  it[9] = vi64(f->default_row_commit_version, f->default_row_commit_version >= 0);
  it[10] = vstr(f->clustering_provider);
  c->adds++;
  return emit(c, C_ADD, vstruct(it, 11));
}

static int remove_cb(void *ctx, const dl_file *f) {
  wctx *c = ctx;
  if (f->deletion_timestamp >= 0 && f->deletion_timestamp < c->tomb_cutoff) return 0;
  pq_value *it = items(c, 7);
  if (!it) return dd_err_set(DD_ENOMEM, "out of memory");
  it[0] = vstr(f->raw_path);
  it[1] = vi64(f->deletion_timestamp, f->deletion_timestamp >= 0);
  it[2] = vbool(f->data_change);
  it[3] = vbool(false);
  it[4] = vmap(c, f->partition_values);
  it[5] = vi64(f->size, f->size >= 0);
  it[6] = vdv(c, f->dv);
  return emit(c, C_REMOVE, vstruct(it, 7));
}

static int state_rows(wctx *c, const dl_snapshot *s) {
  const dl_protocol *p = &s->st.proto;
  pq_value *it = items(c, 4);
  if (!it) return dd_err_set(DD_ENOMEM, "out of memory");
  it[0] = vi32(p->min_reader_version, true);
  it[1] = vi32(p->min_writer_version, true);
  it[2] = vlist(c, p->reader_features, p->num_reader_features);
  it[3] = vlist(c, p->writer_features, p->num_writer_features);
  int rc = emit(c, C_PROTO, vstruct(it, 4));
  const dl_metadata *m = &s->st.md;
  pq_value *fmt = items(c, 2), *mi = items(c, 8);
  if (!rc && (!fmt || !mi)) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) {
    fmt[0] = vstr(m->format_provider);
    fmt[1] = vmap(c, m->format_options);
    mi[0] = vstr(m->id);
    mi[1] = vstr(m->name);
    mi[2] = vstr(m->description);
    mi[3] = vstruct(fmt, 2);
    mi[4] = vstr(m->schema_string);
    mi[5] = vlist(c, m->partition_columns, m->num_partition_columns);
    mi[6] = vmap(c, m->configuration);
    mi[7] = vi64(m->created_time, m->created_time >= 0);
    rc = emit(c, C_META, vstruct(mi, 8));
  }
  for (size_t i = 0; !rc && i < s->st.n_txns; i++) {
    const dl_app_txn *t = &s->st.txns[i];
    pq_value *ti = items(c, 3);
    if (!ti) return dd_err_set(DD_ENOMEM, "out of memory");
    ti[0] = vstr(t->app_id);
    ti[1] = vi64(t->version, true);
    ti[2] = vi64(t->last_updated, t->last_updated >= 0);
    rc = emit(c, C_TXN, vstruct(ti, 3));
  }
  for (size_t i = 0; !rc && i < s->st.n_domains; i++) {
    pq_value *di = items(c, 3);
    if (!di) return dd_err_set(DD_ENOMEM, "out of memory");
    di[0] = vstr(s->st.domains[i].domain);
    di[1] = vstr(s->st.domains[i].configuration);
    di[2] = vbool(false);
    rc = emit(c, C_DOMAIN, vstruct(di, 3));
  }
  return rc;
}

/* Names part i (0-based) of a checkpoint in `parts` parts. */
static char *part_path(int64_t v, int i, int parts) {
  if (parts == 1) return dl__version_path(v, ".checkpoint.parquet");
  char suffix[64];
  snprintf(suffix, sizeof suffix, ".checkpoint.%010d.%010d.parquet", i + 1, parts);
  return dl__version_path(v, suffix);
}

int dl__checkpoint_write_parts(dl_table *t, const dl_snapshot *s, int parts) {
  if (parts < 1 || parts > 64) return dd_err_set(DD_EINVAL, "checkpoint parts must be 1..64");
  wctx c = {.parts = parts};
  char *last = NULL;
  int64_t total_bytes = 0;
  const char *ret = dl_snapshot_property(s, "delta.deletedFileRetentionDuration");
  int64_t keep = ret ? dl__parse_interval(ret) : 7 * 86400000LL;
  c.tomb_cutoff = dl__now_ms() - (keep >= 0 ? keep : 7 * 86400000LL);
  pq_writer_opts o = PQ_WRITER_OPTS_INIT;
  o.created_by = "deltad " DL_ENGINE_VERSION;
  int rc = 0;
  for (int i = 0; i < parts && !rc; i++) rc = pq_writer_open_mem(&c.ws[i], &ROOT, &o);
  if (!rc) rc = state_rows(&c, s);
  if (!rc) rc = dl_snapshot_files(s, add_cb, &c);
  if (!rc) rc = dl_snapshot_tombstones(s, remove_cb, &c);
  /* Parts are published in order; a reader ignores the set until the last one lands. */
  for (int i = 0; i < parts && !rc; i++) {
    uint8_t *buf = NULL;
    size_t len = 0;
    char *path = part_path(s->version, i, parts);
    rc = path ? pq_writer_close(c.ws[i], &buf, &len) : dd_err_set(DD_ENOMEM, "out of memory");
    if (!rc) {
      rc = os_put_if_absent(t->store, path, buf, len);
      if (rc == DD_EEXISTS) rc = 0, dd_err_clear(); /* a racing writer checkpointed it */
      total_bytes += (int64_t)len;
    }
    free(buf);
    free(path);
  }
  if (!rc) {
    json_t *j = json_pack("{s:I,s:I,s:I,s:I}", "version", (json_int_t)s->version, "size",
                          (json_int_t)c.rows, "sizeInBytes", (json_int_t)total_bytes,
                          "numOfAddFiles", (json_int_t)c.adds);
    if (j && parts > 1) json_object_set_new(j, "parts", json_integer(parts));
    last = j ? json_dumps(j, JSON_COMPACT) : NULL;
    json_decref(j);
    rc = last ? os_put(t->store, DL__LOG "/_last_checkpoint", last, strlen(last))
              : dd_err_set(DD_ENOMEM, "out of memory");
  }
  if (rc) rc = dd_err_wrap(rc, "writing checkpoint of version %lld", (long long)s->version);
  for (int i = 0; i < parts; i++) pq_writer_free(c.ws[i]);
  dl__arena_free(&c.a);
  free(last);
  return rc;
}

int dl_checkpoint_write(dl_table *t, const dl_snapshot *s) {
  return dl__checkpoint_write_parts(t, s, 1);
}
