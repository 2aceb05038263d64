/* dop_describe.c: the read-only relations: IsDeltaTable, DESCRIBE HISTORY (columns as Delta
 * on Spark returns them, from each commit's commitInfo) and DESCRIBE DETAIL (format, id,
 * name, location, sizes, partitioning, clustering, properties, protocol and features, and
 * the snapshot's version). */
#include <stdlib.h>
#include <string.h>

#include "store/deltaops/dop_int.h"

/* ======================= is-delta ======================= */

static const dop_col IS_DELTA_COLS[] = {{"value", "boolean", false}};

int dop_is_delta(dop_result **out, const char *location) {
  dop_cell *row;
  int rc = dop__result_new(out, IS_DELTA_COLS, 1);
  if (!rc) rc = dop__result_row(*out, &row);
  if (!rc) dop__cell_bool(row, dop__has_log(location));
  return rc;
}

/* ======================= history ======================= */

static const dop_col HISTORY_COLS[] = {
    {"version", "bigint", true},
    {"timestamp", "timestamp", true},
    {"userId", "string", true},
    {"userName", "string", true},
    {"operation", "string", true},
    {"operationParameters", "map<string,string>", true},
    {"job", "struct<jobId:string,jobName:string,jobRunId:string,runId:string,jobOwnerId:string,triggerType:string>", true},
    {"notebook", "struct<notebookId:string>", true},
    {"clusterId", "string", true},
    {"readVersion", "bigint", true},
    {"isolationLevel", "string", true},
    {"isBlindAppend", "boolean", true},
    {"operationMetrics", "map<string,string>", true},
    {"userMetadata", "string", true},
    {"engineInfo", "string", true},
};
#define NHIST (sizeof HISTORY_COLS / sizeof HISTORY_COLS[0])

/* A map<string,string> from a JSON object: non-string values become their JSON text. */
static json_t *string_map(json_t *o) {
  if (!json_is_object(o)) return NULL;
  json_t *m = json_object();
  const char *k;
  json_t *v;
  json_object_foreach(o, k, v) {
    if (json_is_string(v)) json_object_set(m, k, v);
    else if (json_is_null(v)) json_object_set_new(m, k, json_null());
    else {
      char *s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
      json_object_set_new(m, k, s ? json_string(s) : json_null());
      free(s);
    }
  }
  return m;
}

static int str_cell(dop_cell *c, json_t *ci, const char *key) {
  json_t *v = json_object_get(ci, key);
  if (json_is_string(v)) return dop__cell_str(c, json_string_value(v));
  if (v && !json_is_null(v)) return dop__cell_json(c, json_incref(v));
  return 0;
}

static int history_cb(void *ctx, const dl_commit_entry *e) {
  dop_result *r = ctx;
  dop_cell *row;
  int rc = dop__result_row(r, &row);
  if (rc) return rc;
  dop__cell_i64(&row[0], e->version);
  dop__cell_ts(&row[1], e->timestamp);
  json_t *ci = e->commit_info ? json_loads(e->commit_info, 0, NULL) : NULL;
  if (!ci) return 0;
  json_t *v;
  rc = str_cell(&row[2], ci, "userId");
  if (!rc) rc = str_cell(&row[3], ci, "userName");
  if (!rc) rc = str_cell(&row[4], ci, "operation");
  if (!rc) rc = dop__cell_json(&row[5], string_map(json_object_get(ci, "operationParameters")));
  if (!rc && json_is_object(v = json_object_get(ci, "job"))) rc = dop__cell_json(&row[6], json_incref(v));
  if (!rc && json_is_object(v = json_object_get(ci, "notebook"))) rc = dop__cell_json(&row[7], json_incref(v));
  if (!rc) rc = str_cell(&row[8], ci, "clusterId");
  if (!rc && json_is_integer(v = json_object_get(ci, "readVersion"))) dop__cell_i64(&row[9], json_integer_value(v));
  if (!rc) rc = str_cell(&row[10], ci, "isolationLevel");
  if (!rc && json_is_boolean(v = json_object_get(ci, "isBlindAppend"))) dop__cell_bool(&row[11], json_is_true(v));
  if (!rc) rc = dop__cell_json(&row[12], string_map(json_object_get(ci, "operationMetrics")));
  if (!rc) rc = str_cell(&row[13], ci, "userMetadata");
  if (!rc) rc = str_cell(&row[14], ci, "engineInfo");
  json_decref(ci);
  return rc;
}

int dop_history(dop_result **out, const char *location, size_t limit) {
  *out = NULL;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dop_result *r = NULL;
  int rc = dop__open_latest(&t, &s, location);
  if (!rc) rc = dop__result_new(&r, HISTORY_COLS, NHIST);
  if (!rc) rc = dl_history(t, limit, history_cb, r);
  if (!rc) *out = r, r = NULL;
  dop_result_free(r);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}

/* ======================= detail ======================= */

static const dop_col DETAIL_COLS[] = {
    {"format", "string", true},
    {"id", "string", true},
    {"name", "string", true},
    {"description", "string", true},
    {"location", "string", true},
    {"createdAt", "timestamp", true},
    {"lastModified", "timestamp", true},
    {"partitionColumns", "array<string>", true},
    {"clusteringColumns", "array<string>", true},
    {"numFiles", "bigint", true},
    {"sizeInBytes", "bigint", true},
    {"properties", "map<string,string>", true},
    {"minReaderVersion", "int", true},
    {"minWriterVersion", "int", true},
    {"tableFeatures", "array<string>", true},
    {"version", "bigint", false},
};
#define NDETAIL (sizeof DETAIL_COLS / sizeof DETAIL_COLS[0])

/* Clustering columns (logical names) from the delta.clustering domain; NULL on error. */
static json_t *clustering_columns(const dl_snapshot *s) {
  char **cols = NULL;
  size_t n = 0;
  if (dop_clustering_columns(&cols, &n, s) < 0) return NULL;
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_string(cols[i]));
  dop_clustering_free(cols, n);
  return a;
}

/* Features the protocol supports, explicit or implied by legacy versions, sorted. */
static json_t *table_features(const dl_protocol *p) {
  static const char *const all[] = {
      "allowColumnDefaults", "appendOnly", "changeDataFeed", "checkConstraints", "clustering",
      "columnMapping", "deletionVectors", "domainMetadata", "generatedColumns", "icebergCompatV1",
      "icebergCompatV2", "identityColumns", "inCommitTimestamp", "invariants", "rowTracking",
      "timestampNtz", "typeWidening", "v2Checkpoint", "vacuumProtocolCheck", "variantType"};
  dop__proto q;
  dop__proto_from(&q, p);
  json_t *a = json_array();
  for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
    if (dop__proto_has(&q, all[i])) json_array_append_new(a, json_string(all[i]));
  for (size_t i = 0; i < p->num_writer_features; i++) { /* features this engine does not list */
    bool listed = false;
    for (size_t j = 0; j < sizeof all / sizeof all[0] && !listed; j++) listed = !strcmp(all[j], p->writer_features[i]);
    if (!listed) json_array_append_new(a, json_string(p->writer_features[i]));
  }
  dop__proto_free(&q);
  return a;
}

static json_t *kv_json(const char *packed) {
  json_t *o = json_object();
  const char *k, *v;
  while (o && dl_kv_next(&packed, &k, &v)) json_object_set_new(o, k, v ? json_string(v) : json_null());
  return o;
}

int dop_detail(dop_result **out, const char *location) {
  return dop_detail_at(out, location, -1, NULL);
}

int dop_detail_at(dop_result **out, const char *location, int64_t version, const char *timestamp) {
  *out = NULL;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dop_result *r = NULL;
  dop_cell *row;
  int rc = dop__open_at(&t, &s, location, version, timestamp);
  if (!rc) rc = dop__result_new(&r, DETAIL_COLS, NDETAIL);
  if (!rc) rc = dop__result_row(r, &row);
  if (rc) goto cleanup;
  const dl_metadata *m = dl_snapshot_metadata(s);
  const dl_protocol *p = dl_snapshot_protocol(s);
  json_t *pc = json_array();
  for (size_t i = 0; pc && i < m->num_partition_columns; i++) json_array_append_new(pc, json_string(m->partition_columns[i]));
  rc = dop__cell_str(&row[0], "delta");
  if (!rc) rc = dop__cell_str(&row[1], m->id);
  if (!rc) rc = dop__cell_str(&row[2], m->name);
  if (!rc) rc = dop__cell_str(&row[3], m->description);
  if (!rc) rc = dop__cell_str(&row[4], location);
  if (m->created_time >= 0) dop__cell_ts(&row[5], m->created_time);
  dop__cell_ts(&row[6], dl_snapshot_timestamp(s));
  if (!rc) rc = dop__cell_json(&row[7], pc);
  else json_decref(pc);
  if (!rc) rc = dop__cell_json(&row[8], clustering_columns(s));
  dop__cell_i64(&row[9], (int64_t)dl_snapshot_num_files(s));
  dop__cell_i64(&row[10], dl_snapshot_size_bytes(s));
  if (!rc) rc = dop__cell_json(&row[11], kv_json(m->configuration));
  dop__cell_i64(&row[12], p->min_reader_version);
  dop__cell_i64(&row[13], p->min_writer_version);
  if (!rc) rc = dop__cell_json(&row[14], table_features(p));
  dop__cell_i64(&row[15], dl_snapshot_version(s));
  if (!rc) *out = r, r = NULL;
cleanup:
  dop_result_free(r);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}
