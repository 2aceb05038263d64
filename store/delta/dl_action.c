/* dl_action.c: decoding Delta log actions from JSON (one action object per line of a commit
 * file or JSON checkpoint) into dl__action. Unknown fields and unknown action kinds are
 * ignored, as the protocol asks; missing required fields are DD_ECORRUPT. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

static const char *EMPTY_MAP = "";

static int bad(const char *kind, const char *what) {
  return dd_err_set(DD_ECORRUPT, "%s action: %s", kind, what);
}

static int decode_dv(dl_dv *dv, const json_t *j) {
  memset(dv, 0, sizeof *dv);
  const char *st = dl__json_str(j, "storageType");
  const char *p = dl__json_str(j, "pathOrInlineDv");
  if (!st || strlen(st) != 1 || !strchr("uip", st[0]) || !p)
    return bad("deletionVector", "storageType must be u, i or p with pathOrInlineDv");
  dv->storage_type = st[0];
  dv->path_or_inline = p;
  json_t *off = json_object_get(j, "offset");
  dv->offset = json_is_integer(off) ? (int64_t)json_integer_value(off) : -1;
  dv->size_in_bytes = (int32_t)dl__json_int(j, "sizeInBytes", -1);
  dv->cardinality = dl__json_int(j, "cardinality", -1);
  dv->max_row_index = dl__json_int(j, "maxRowIndex", -1);
  if (dv->size_in_bytes < 0 || dv->cardinality < 0)
    return bad("deletionVector", "sizeInBytes and cardinality are required");
  return 0;
}

static int decode_file(dl__action *a, const char *kind, const json_t *j, dl__arena *scratch) {
  dl_file *f = &a->file;
  memset(f, 0, sizeof *f);
  f->path = dl__json_str(j, "path");
  if (!f->path || !*f->path) return bad(kind, "missing path");
  f->raw_path = f->path;
  f->size = dl__json_int(j, "size", -1);
  f->modification_time = dl__json_int(j, "modificationTime", -1);
  f->deletion_timestamp = dl__json_int(j, "deletionTimestamp", -1);
  json_t *dc = json_object_get(j, "dataChange");
  f->data_change = dc ? json_is_true(dc) : true;
  f->stats = dl__json_str(j, "stats");
  json_t *pv = json_object_get(j, "partitionValues");
  f->partition_values = json_is_object(pv) ? dl__kv_from_json(scratch, pv) : EMPTY_MAP;
  json_t *tags = json_object_get(j, "tags");
  f->tags = json_is_object(tags) && json_object_size(tags) ? dl__kv_from_json(scratch, tags) : NULL;
  if (!f->partition_values || (json_is_object(tags) && json_object_size(tags) && !f->tags))
    return dd_err_set(DD_ENOMEM, "out of memory");
  f->base_row_id = dl__json_int(j, "baseRowId", -1);
  f->default_row_commit_version = dl__json_int(j, "defaultRowCommitVersion", -1);
  f->clustering_provider = dl__json_str(j, "clusteringProvider");
  json_t *dv = json_object_get(j, "deletionVector");
  a->has_dv = json_is_object(dv);
  if (a->has_dv) {
    int rc = decode_dv(&a->dv, dv);
    if (rc) return rc;
    f->dv = &a->dv;
  }
  if (a->kind == DL__A_ADD && f->size < 0) return bad(kind, "missing or negative size");
  return 0;
}

static int decode_features(dl__action *a, const json_t *arr, size_t *used,
                           const char *const **out, size_t *n) {
  *out = NULL;
  *n = 0;
  if (!json_is_array(arr)) return 0;
  size_t cnt = json_array_size(arr);
  if (*used + cnt > sizeof a->feat_buf / sizeof a->feat_buf[0])
    return bad("protocol", "too many table features");
  const char **dst = &a->feat_buf[*used];
  for (size_t i = 0; i < cnt; i++) {
    const json_t *v = json_array_get(arr, i);
    if (!json_is_string(v)) return bad("protocol", "feature names must be strings");
    dst[i] = json_string_value(v);
  }
  *used += cnt;
  *out = dst;
  *n = cnt;
  return 0;
}

static int decode_protocol(dl__action *a, const json_t *j) {
  dl_protocol *p = &a->proto;
  memset(p, 0, sizeof *p);
  json_t *r = json_object_get(j, "minReaderVersion"), *w = json_object_get(j, "minWriterVersion");
  if (!json_is_integer(r) || !json_is_integer(w))
    return bad("protocol", "minReaderVersion and minWriterVersion are required");
  p->min_reader_version = (int32_t)json_integer_value(r);
  p->min_writer_version = (int32_t)json_integer_value(w);
  size_t used = 0;
  int rc = decode_features(a, json_object_get(j, "readerFeatures"), &used, &p->reader_features,
                           &p->num_reader_features);
  if (!rc)
    rc = decode_features(a, json_object_get(j, "writerFeatures"), &used, &p->writer_features,
                         &p->num_writer_features);
  return rc;
}

int dl__action_from_json(dl__action *a, const json_t *line, dl__arena *scratch) {
  memset(a, 0, sizeof *a);
  a->kind = DL__A_UNKNOWN;
  a->ict = -1;
  a->ci_timestamp = -1;
  if (!json_is_object(line)) return dd_err_set(DD_ECORRUPT, "log line is not a JSON object");
  json_t *v;
  if ((v = json_object_get(line, "add")) && json_is_object(v)) {
    a->kind = DL__A_ADD;
    return decode_file(a, "add", v, scratch);
  }
  if ((v = json_object_get(line, "remove")) && json_is_object(v)) {
    a->kind = DL__A_REMOVE;
    return decode_file(a, "remove", v, scratch);
  }
  if ((v = json_object_get(line, "cdc")) && json_is_object(v)) {
    a->kind = DL__A_CDC;
    return decode_file(a, "cdc", v, scratch);
  }
  if ((v = json_object_get(line, "metaData")) && json_is_object(v)) {
    a->kind = DL__A_METADATA;
    a->md_json = v;
    return 0;
  }
  if ((v = json_object_get(line, "protocol")) && json_is_object(v)) {
    a->kind = DL__A_PROTOCOL;
    return decode_protocol(a, v);
  }
  if ((v = json_object_get(line, "txn")) && json_is_object(v)) {
    a->kind = DL__A_TXN;
    a->txn.app_id = dl__json_str(v, "appId");
    a->txn.version = dl__json_int(v, "version", -1);
    a->txn.last_updated = dl__json_int(v, "lastUpdated", -1);
    if (!a->txn.app_id) return bad("txn", "missing appId");
    return 0;
  }
  if ((v = json_object_get(line, "domainMetadata")) && json_is_object(v)) {
    a->kind = DL__A_DOMAIN;
    a->domain = dl__json_str(v, "domain");
    a->domain_config = dl__json_str(v, "configuration");
    a->domain_removed = json_is_true(json_object_get(v, "removed"));
    if (!a->domain) return bad("domainMetadata", "missing domain");
    if (!a->domain_config) a->domain_config = "";
    return 0;
  }
  if ((v = json_object_get(line, "commitInfo")) && json_is_object(v)) {
    a->kind = DL__A_COMMITINFO;
    a->ci_json = v;
    a->ict = dl__json_int(v, "inCommitTimestamp", -1);
    a->ci_timestamp = dl__json_int(v, "timestamp", -1);
    return 0;
  }
  if ((v = json_object_get(line, "checkpointMetadata")) && json_is_object(v)) {
    a->kind = DL__A_CPMETA;
    a->cp_version = dl__json_int(v, "version", -1);
    return 0;
  }
  if ((v = json_object_get(line, "sidecar")) && json_is_object(v)) {
    a->kind = DL__A_SIDECAR;
    a->sidecar_path = dl__json_str(v, "path");
    if (!a->sidecar_path) return bad("sidecar", "missing path");
    return 0;
  }
  return 0; /* unknown action: ignored */
}

int dl__parse_commit(const char *data, size_t len, const char *what, dl__action_cb cb,
                     void *ctx) {
  int rc = 0;
  dl__arena scratch = {0};
  dl__action *a = malloc(sizeof *a);
  if (!a) return dd_err_set(DD_ENOMEM, "out of memory");
  size_t pos = 0, lineno = 0;
  while (pos < len && !rc) {
    const char *s = data + pos;
    const char *nl = memchr(s, '\n', len - pos);
    size_t n = nl ? (size_t)(nl - s) : len - pos;
    pos += n + (nl ? 1 : 0);
    lineno++;
    size_t k = 0;
    while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r')) k++;
    if (k == n) continue;
    json_error_t e;
    json_t *j = json_loadb(s, n, 0, &e);
    if (!j) {
      rc = dd_err_set(DD_ECORRUPT, "%s line %zu: invalid JSON: %s", what, lineno, e.text);
      break;
    }
    rc = dl__action_from_json(a, j, &scratch);
    if (rc) rc = dd_err_wrap(rc, "%s line %zu", what, lineno);
    else rc = cb(ctx, a);
    json_decref(j);
    if (scratch.bytes > (1u << 20)) dl__arena_free(&scratch);
  }
  dl__arena_free(&scratch);
  free(a);
  return rc;
}
