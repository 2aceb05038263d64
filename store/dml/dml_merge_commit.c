/* dml_merge_commit.c: MERGE's commit (dml_merge_int.h): Delta's operationParameters
 * (the ON condition and each clause kind's predicates and action types, as JSON strings),
 * the metrics, and the evolved metadata of a MERGE WITH SCHEMA EVOLUTION. */
#include "store/dml/dml_merge_int.h"

#include <jansson.h>
#include <stdlib.h>

static json_t *preds_json(const dml__mplan *p, dml_merge_kind kind) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < p->ncl; i++) {
    const dml__mclause *c = &p->cl[i];
    if (c->kind != kind) continue;
    const char *t = c->action == DML_MERGE_DELETE ? "delete" : kind == DML_MERGE_NOT_MATCHED ? "insert" : "update";
    json_t *o = json_object();
    if (c->cond_sql) json_object_set_new(o, "predicate", json_string(c->cond_sql));
    json_object_set_new(o, "actionType", json_string(t));
    json_array_append_new(a, o);
  }
  return a;
}

static int set_str(json_t *params, const char *k, json_t *v) {
  char *s = v ? json_dumps(v, JSON_COMPACT) : NULL;
  json_decref(v);
  if (!s) return dml__oom();
  json_object_set_new(params, k, json_string(s));
  free(s);
  return 0;
}

int dml__merge_commit(dl_txn *x, const dml__mplan *mp, const dml_merge_opts *o, dml_merge_result *res) {
  char *params = NULL, *metrics = NULL;
  json_t *p = json_object(), *pr = json_array();
  if (pr) json_array_append_new(pr, json_string(mp->on_sql));
  int rc = p ? set_str(p, "predicate", pr) : dml__oom();
  if (!rc) rc = set_str(p, "matchedPredicates", preds_json(mp, DML_MERGE_MATCHED));
  if (!rc) rc = set_str(p, "notMatchedPredicates", preds_json(mp, DML_MERGE_NOT_MATCHED));
  if (!rc) rc = set_str(p, "notMatchedBySourcePredicates", preds_json(mp, DML_MERGE_NOT_MATCHED_BY_SOURCE));
  if (!rc && !(params = json_dumps(p, JSON_COMPACT))) rc = dml__oom();
  json_decref(p);
  if (!rc) rc = dml_merge_metrics_json(&metrics, res);
  if (!rc) rc = dml__commit(x, "MERGE", params, metrics, o->max_retries, o->now_ms, &res->version);
  free(params);
  free(metrics);
  return rc;
}

int dml__merge_set_metadata(dl_txn *x, const dl_snapshot *e) {
  const dl_metadata *md = dl_snapshot_metadata(e);
  dl_metadata_spec spec = {md->id, md->name, md->description, md->schema_string, md->num_partition_columns,
                           md->partition_columns, md->configuration, md->created_time};
  return dl_txn_set_metadata(x, &spec);
}
