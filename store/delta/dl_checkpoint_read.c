/* dl_checkpoint_read.c: reading Parquet checkpoints (classic, multi-part parts, v2
 * top-level files and sidecars) with the project's Parquet reader. Only the columns replay
 * needs are projected (never stats_parsed / partitionValues_parsed); each row holds one
 * action in one of its top-level struct columns and is turned into a dl__action, so JSON and
 * Parquet checkpoints go through the same apply path. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"
#include "store/parquet/pq.h"

static const char *const COLUMNS[] = {
    "add.path", "add.partitionValues", "add.size", "add.modificationTime", "add.dataChange",
    "add.stats", "add.tags", "add.deletionVector", "add.baseRowId",
    "add.defaultRowCommitVersion", "add.clusteringProvider", "remove.path", "remove.deletionTimestamp",
    "remove.dataChange", "remove.size", "remove.partitionValues", "remove.deletionVector",
    "remove.tags", "metaData", "protocol", "txn", "domainMetadata", "checkpointMetadata",
    "sidecar",
};

/* Child lookups by name are memoised per file: (schema node, name literal) -> index, so a
 * million rows do not repeat the same string comparisons. */
#define CC_SIZE 256
typedef struct ccache {
  const pq_pnode *n;
  const char *name;
  int idx;
} ccache;

/* A struct value with its projected schema node. */
typedef struct node {
  const pq_pnode *n;
  const pq_value *v;
  ccache *cc;
} node;

static int child_index(ccache *cc, const pq_pnode *n, const char *name) {
  size_t h = (((uintptr_t)n >> 4) ^ ((uintptr_t)name >> 2)) & (CC_SIZE - 1);
  if (cc[h].n == n && cc[h].name == name) return cc[h].idx;
  int i = pq_pnode_child(n, name);
  cc[h] = (ccache){n, name, i};
  return i;
}

static node child(node s, const char *name) {
  node r = {NULL, NULL, s.cc};
  if (!s.n || !s.v || s.v->kind != PQ_V_STRUCT) return r;
  int i = child_index(s.cc, s.n, name);
  if (i < 0 || (uint32_t)i >= s.v->len) return r;
  r.n = &s.n->children[i];
  r.v = &s.v->u.items[i];
  if (r.v->kind == PQ_V_NULL) r.v = NULL;
  return r;
}

static const char *str(dl__arena *a, const pq_value *v) {
  if (!v || (v->kind != PQ_V_BYTES && v->kind != PQ_V_FIXED)) return NULL;
  return dl__arena_strndup(a, (const char *)v->u.bytes, v->len);
}

static int64_t i64(const pq_value *v, int64_t dflt) {
  if (!v) return dflt;
  if (v->kind == PQ_V_INT64) return v->u.i64;
  if (v->kind == PQ_V_INT32) return v->u.i32;
  return dflt;
}

static bool boolean(const pq_value *v, bool dflt) {
  return v && v->kind == PQ_V_BOOL ? v->u.b : dflt;
}

/* A MAP<string,string> value as a packed map in the arena. */
static const char *kv(dl__arena *a, const pq_value *v) {
  dd_buf b = {0};
  if (v && v->kind == PQ_V_MAP) {
    for (uint32_t i = 0; i < v->len; i++) {
      const pq_value *k = &v->u.items[2 * i], *val = &v->u.items[2 * i + 1];
      if (k->kind != PQ_V_BYTES) continue;
      dd_buf_put(&b, k->u.bytes, strnlen((const char *)k->u.bytes, k->len));
      dd_buf_putc(&b, 0);
      if (val->kind == PQ_V_BYTES) {
        dd_buf_put(&b, val->u.bytes, strnlen((const char *)val->u.bytes, val->len));
        dd_buf_putc(&b, 0);
      } else {
        dd_buf_put(&b, "\xff", 2);
      }
    }
  }
  dd_buf_putc(&b, 0);
  char *out = b.oom ? NULL : dl__arena_alloc(a, b.len);
  if (out) memcpy(out, b.p, b.len);
  dd_buf_free(&b);
  return out;
}

static json_t *kv_json_obj(dl__arena *a, const pq_value *v) {
  const char *p = kv(a, v);
  return p ? dl__kv_to_json(p) : json_object();
}

static int decode_file(dl__action *out, node f, dl__arena *a) {
  dl_file *file = &out->file;
  memset(file, 0, sizeof *file);
  file->path = str(a, child(f, "path").v);
  if (!file->path) return dd_err_set(DD_ECORRUPT, "checkpoint file action without path");
  file->raw_path = file->path;
  file->size = i64(child(f, "size").v, -1);
  file->modification_time = i64(child(f, "modificationTime").v, -1);
  file->deletion_timestamp = i64(child(f, "deletionTimestamp").v, -1);
  file->data_change = boolean(child(f, "dataChange").v, false);
  file->stats = str(a, child(f, "stats").v);
  file->partition_values = kv(a, child(f, "partitionValues").v);
  const pq_value *tags = child(f, "tags").v;
  file->tags = tags && tags->len ? kv(a, tags) : NULL;
  file->base_row_id = i64(child(f, "baseRowId").v, -1);
  file->default_row_commit_version = i64(child(f, "defaultRowCommitVersion").v, -1);
  file->clustering_provider = str(a, child(f, "clusteringProvider").v);
  if (!file->partition_values) return dd_err_set(DD_ENOMEM, "out of memory");
  node dv = child(f, "deletionVector");
  if (dv.v) {
    dl_dv *d = &out->dv;
    const char *st = str(a, child(dv, "storageType").v);
    d->path_or_inline = str(a, child(dv, "pathOrInlineDv").v);
    if (!st || strlen(st) != 1 || !strchr("uip", st[0]) || !d->path_or_inline)
      return dd_err_set(DD_ECORRUPT, "checkpoint deletionVector: bad storageType/pathOrInlineDv");
    d->storage_type = st[0];
    d->offset = i64(child(dv, "offset").v, -1);
    d->size_in_bytes = (int32_t)i64(child(dv, "sizeInBytes").v, -1);
    d->cardinality = i64(child(dv, "cardinality").v, -1);
    d->max_row_index = i64(child(dv, "maxRowIndex").v, -1);
    out->has_dv = true;
    file->dv = d;
  }
  return 0;
}

static int decode_features(dl__action *out, const pq_value *list, dl__arena *a, size_t *used,
                           const char *const **dst, size_t *n) {
  *dst = NULL;
  *n = 0;
  if (!list || list->kind != PQ_V_LIST) return 0;
  if (*used + list->len > sizeof out->feat_buf / sizeof out->feat_buf[0])
    return dd_err_set(DD_ECORRUPT, "checkpoint protocol: too many features");
  const char **w = &out->feat_buf[*used];
  size_t k = 0;
  for (uint32_t i = 0; i < list->len; i++) {
    const char *s = str(a, &list->u.items[i]);
    if (s) w[k++] = s;
  }
  *used += k;
  *dst = w;
  *n = k;
  return 0;
}

static json_t *metadata_json(node m, dl__arena *a) {
  json_t *o = json_object();
  const char *s;
  if ((s = str(a, child(m, "id").v))) json_object_set_new(o, "id", json_string(s));
  if ((s = str(a, child(m, "name").v))) json_object_set_new(o, "name", json_string(s));
  if ((s = str(a, child(m, "description").v))) json_object_set_new(o, "description", json_string(s));
  if ((s = str(a, child(m, "schemaString").v))) json_object_set_new(o, "schemaString", json_string(s));
  node fmt = child(m, "format");
  json_t *jf = json_object();
  if ((s = str(a, child(fmt, "provider").v))) json_object_set_new(jf, "provider", json_string(s));
  json_object_set_new(jf, "options", kv_json_obj(a, child(fmt, "options").v));
  json_object_set_new(o, "format", jf);
  json_t *pcs = json_array();
  const pq_value *pl = child(m, "partitionColumns").v;
  for (uint32_t i = 0; pl && pl->kind == PQ_V_LIST && i < pl->len; i++)
    if ((s = str(a, &pl->u.items[i]))) json_array_append_new(pcs, json_string(s));
  json_object_set_new(o, "partitionColumns", pcs);
  json_object_set_new(o, "configuration", kv_json_obj(a, child(m, "configuration").v));
  const pq_value *ct = child(m, "createdTime").v;
  if (ct) json_object_set_new(o, "createdTime", json_integer(i64(ct, -1)));
  return o;
}

/* Decodes one checkpoint row; *mdj receives a metaData JSON to release after the callback. */
static int decode_row(dl__action *a, node row, dl__arena *ar, json_t **mdj) {
  memset(a, 0, sizeof *a);
  a->kind = DL__A_UNKNOWN;
  a->ict = a->ci_timestamp = -1;
  node x;
  if ((x = child(row, "add")).v) {
    a->kind = DL__A_ADD;
    return decode_file(a, x, ar);
  }
  if ((x = child(row, "remove")).v) {
    a->kind = DL__A_REMOVE;
    return decode_file(a, x, ar);
  }
  if ((x = child(row, "metaData")).v) {
    a->kind = DL__A_METADATA;
    *mdj = metadata_json(x, ar);
    a->md_json = *mdj;
    return *mdj ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  }
  if ((x = child(row, "protocol")).v) {
    a->kind = DL__A_PROTOCOL;
    a->proto.min_reader_version = (int32_t)i64(child(x, "minReaderVersion").v, -1);
    a->proto.min_writer_version = (int32_t)i64(child(x, "minWriterVersion").v, -1);
    size_t used = 0;
    int rc = decode_features(a, child(x, "readerFeatures").v, ar, &used,
                             &a->proto.reader_features, &a->proto.num_reader_features);
    if (!rc)
      rc = decode_features(a, child(x, "writerFeatures").v, ar, &used,
                           &a->proto.writer_features, &a->proto.num_writer_features);
    return rc;
  }
  if ((x = child(row, "txn")).v) {
    a->kind = DL__A_TXN;
    a->txn.app_id = str(ar, child(x, "appId").v);
    a->txn.version = i64(child(x, "version").v, -1);
    a->txn.last_updated = i64(child(x, "lastUpdated").v, -1);
    return a->txn.app_id ? 0 : dd_err_set(DD_ECORRUPT, "checkpoint txn without appId");
  }
  if ((x = child(row, "domainMetadata")).v) {
    a->kind = DL__A_DOMAIN;
    a->domain = str(ar, child(x, "domain").v);
    a->domain_config = str(ar, child(x, "configuration").v);
    a->domain_removed = boolean(child(x, "removed").v, false);
    if (!a->domain_config) a->domain_config = "";
    return a->domain ? 0 : dd_err_set(DD_ECORRUPT, "checkpoint domainMetadata without domain");
  }
  if ((x = child(row, "checkpointMetadata")).v) {
    a->kind = DL__A_CPMETA;
    a->cp_version = i64(child(x, "version").v, -1);
    return 0;
  }
  if ((x = child(row, "sidecar")).v) {
    a->kind = DL__A_SIDECAR;
    a->sidecar_path = str(ar, child(x, "path").v);
    return a->sidecar_path ? 0 : dd_err_set(DD_ECORRUPT, "checkpoint sidecar without path");
  }
  return 0;
}

/* The non-file actions, read as rows when the file actions go through dl_checkpoint_flat.c. */
static const char *const OTHER_COLUMNS[] = {
    "metaData", "protocol", "txn", "domainMetadata", "checkpointMetadata", "sidecar",
};

typedef struct rows_ctx {
  const pq_file *pf;
  dl__action_cb cb;
  void *ctx;
  dl__action *a;
  dl__arena *scratch;
  ccache *cc;
} rows_ctx;

/* Decodes the rows of cur (to its end) through cb; only rows with want[i] set when want. */
static int decode_rows(rows_ctx *x, pq_cursor *cur, const uint8_t *want, size_t nwant) {
  const pq_pnode *schema = pq_cursor_schema(cur);
  int rc = 0;
  for (size_t i = 0;; i++) {
    const pq_value *row = NULL;
    if ((rc = pq_cursor_next(cur, &row)) || !row) break;
    if (want && (i >= nwant || !want[i])) continue;
    json_t *mdj = NULL;
    rc = decode_row(x->a, (node){schema, row, x->cc}, x->scratch, &mdj);
    if (!rc) rc = x->cb(x->ctx, x->a);
    json_decref(mdj);
    if (rc) break;
    if (x->scratch->bytes > (1u << 20)) dl__arena_free(x->scratch);
  }
  return rc;
}

static int other_rows(void *vx, size_t rg, const uint8_t *other, size_t nrows) {
  rows_ctx *x = vx;
  pq_cursor *cur = NULL;
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = OTHER_COLUMNS;
  o.num_columns = sizeof OTHER_COLUMNS / sizeof OTHER_COLUMNS[0];
  o.missing_ok = true;
  o.row_group = (int64_t)rg;
  memset(x->cc, 0, CC_SIZE * sizeof *x->cc); /* a new cursor: new schema nodes */
  int rc = pq_cursor_open(&cur, x->pf, &o);
  if (!rc) rc = decode_rows(x, cur, other, nrows);
  pq_cursor_free(cur);
  return rc;
}

/* Uncompressed bytes of the add paths and stats: what the file set will copy (about). */
static size_t string_bytes(const pq_file *pf) {
  static const char *const LEAVES[] = {"add.path", "add.stats"};
  size_t total = 0;
  for (size_t i = 0; i < 2; i++) {
    const pq_field *f = pq_file_find(pf, LEAVES[i]);
    if (!f || f->column < 0) continue;
    for (size_t rg = 0; rg < pq_file_num_row_groups(pf); rg++) {
      pq_chunk_info ci;
      if (!pq_chunk_get(&ci, pf, rg, (size_t)f->column) && ci.total_uncompressed_size > 0)
        total += (size_t)ci.total_uncompressed_size;
    }
  }
  return total;
}

int dl__parquet_actions(dl_table *t, const char *path, dl__action_cb cb, void *ctx,
                        dl__fileset *reserve) {
  uint8_t *data = NULL;
  size_t len = 0;
  pq_file *pf = NULL;
  pq_cursor *cur = NULL;
  dl__flat *fl = NULL;
  dl__arena scratch = {0};
  dl__action *a = NULL;
  ccache *cc = NULL;
  dl__reserve_hint hint = {NULL, 0, 0, NULL, 0};
  int rc = os_read_all(t->store, path, &data, &len);
  if (rc) goto cleanup;
  if ((rc = pq_file_open_mem(&pf, data, len))) goto cleanup;
  if (reserve) {
    /* hints from the footer, bounded by the file's size (a row takes bytes; pages inflate
     * a bounded amount) and allowed to fail: apply grows the set as usual */
    int64_t rows = pq_file_num_rows(pf);
    if (rows > (int64_t)(len / 4)) rows = (int64_t)(len / 4);
    hint.fs = reserve;
    hint.rows = rows > 0 ? (size_t)rows : 0;
    hint.max_bytes = 32 * len;
  }
  a = malloc(sizeof *a);
  cc = calloc(CC_SIZE, sizeof *cc);
  if (!a || !cc) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  rows_ctx x = {pf, cb, ctx, a, &scratch, cc};
  /* DD_CHECKPOINT_ROWS=1 forces the row reader (tests compare the two; docs/benchmarks.md) */
  const char *force_rows = getenv("DD_CHECKPOINT_ROWS");
  /* the flat reader loads straight into a file set being bulk loaded; it sizes its
   * entries from the footer's row counts, so implausible ones (more than 16 rows a byte
   * of file) go to the row reader, which streams */
  bool flat = reserve && reserve->bulk && (!force_rows || strcmp(force_rows, "1")) &&
              pq_file_num_rows(pf) <= (int64_t)(16 * len);
  if (flat && (rc = dl__flat_open(&fl, pf))) goto cleanup;
  if (fl) {
    hint.buf = data;
    hint.len = len;
    rc = dl__flat_read(fl, other_rows, &x, &hint);
    goto cleanup;
  }
  if (hint.fs && hint.rows) {
    size_t bytes = string_bytes(pf);
    if (dl__fileset_reserve(hint.fs, hint.rows, bytes < hint.max_bytes ? bytes : hint.max_bytes))
      dd_err_clear();
  }
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = COLUMNS;
  o.num_columns = sizeof COLUMNS / sizeof COLUMNS[0];
  o.missing_ok = true;
  if ((rc = pq_cursor_open(&cur, pf, &o))) goto cleanup;
  rc = decode_rows(&x, cur, NULL, 0);
cleanup:
  if (rc) rc = dd_err_wrap(rc, "%s", path);
  dl__flat_free(fl);
  free(cc);
  free(a);
  dl__arena_free(&scratch);
  pq_cursor_free(cur);
  pq_file_free(pf);
  free(data);
  return rc;
}
