/* dml_result.c: DELETE's and UPDATE's operationMetrics (the keys Delta writes, string
 * values) and the result row (num_affected_rows). */
#include "store/dml/dml_int.h"

#include <jansson.h>
#include <stdlib.h>

int dml_metrics_json(char **out, const dml_result *r) {
  *out = NULL;
  json_t *m = json_object();
  if (!m) return dml__oom();
#define M(k, v) json_object_set_new(m, k, json_sprintf("%lld", (long long)(v)))
  M("numRemovedFiles", r->num_removed_files);
  M("numRemovedBytes", r->num_removed_bytes);
  M("numCopiedRows", r->num_copied_rows);
  M("numDeletionVectorsAdded", r->num_dvs_added);
  M("numDeletionVectorsRemoved", r->num_dvs_removed);
  M("numDeletionVectorsUpdated", r->num_dvs_updated);
  M("numAddedFiles", r->num_added_files);
  M("numAddedBytes", r->num_added_bytes);
  M("numAddedChangeFiles", r->num_change_files);
  M(r->is_update ? "numUpdatedRows" : "numDeletedRows", r->num_affected_rows);
  M("executionTimeMs", r->execution_ms);
  M("scanTimeMs", r->scan_ms);
  M("rewriteTimeMs", r->rewrite_ms);
#undef M
  *out = json_dumps(m, JSON_COMPACT);
  json_decref(m);
  return *out ? 0 : dml__oom();
}

int dml_result_dop(dop_result **out, const dml_result *r) {
  static const dop_col cols[1] = {{"num_affected_rows", "bigint", true}};
  return dml__i64_row(out, cols, &r->num_affected_rows, 1);
}

/* ---- MERGE ---------------------------------------------------------------------------- */

int dml_merge_metrics_json(char **out, const dml_merge_result *r) {
  *out = NULL;
  json_t *m = json_object();
  if (!m) return dml__oom();
  int64_t updated = r->matched_updated + r->nmbs_updated, deleted = r->matched_deleted + r->nmbs_deleted;
#define M(k, v) json_object_set_new(m, k, json_sprintf("%lld", (long long)(v)))
  M("numSourceRows", r->num_source_rows);
  M("numTargetRowsInserted", r->inserted);
  M("numTargetRowsUpdated", updated);
  M("numTargetRowsMatchedUpdated", r->matched_updated);
  M("numTargetRowsNotMatchedBySourceUpdated", r->nmbs_updated);
  M("numTargetRowsDeleted", deleted);
  M("numTargetRowsMatchedDeleted", r->matched_deleted);
  M("numTargetRowsNotMatchedBySourceDeleted", r->nmbs_deleted);
  M("numTargetRowsCopied", r->copied);
  M("numOutputRows", r->inserted + updated + r->copied);
  M("numTargetFilesAdded", r->files_added);
  M("numTargetFilesRemoved", r->files_removed);
  M("numTargetChangeFilesAdded", r->change_files);
  M("numTargetBytesAdded", r->bytes_added);
  M("numTargetBytesRemoved", r->bytes_removed);
  M("numTargetDeletionVectorsAdded", r->dvs_added);
  M("numTargetDeletionVectorsRemoved", r->dvs_removed);
  M("numTargetDeletionVectorsUpdated", r->dvs_updated);
  M("executionTimeMs", r->execution_ms);
  M("materializeSourceTimeMs", r->materialize_ms);
  M("scanTimeMs", r->scan_ms);
  M("rewriteTimeMs", r->rewrite_ms);
#undef M
  *out = json_dumps(m, JSON_COMPACT);
  json_decref(m);
  return *out ? 0 : dml__oom();
}

int dml_merge_result_dop(dop_result **out, const dml_merge_result *r) {
  static const dop_col cols[4] = {{"num_affected_rows", "bigint", true}, {"num_updated_rows", "bigint", true},
                                  {"num_deleted_rows", "bigint", true}, {"num_inserted_rows", "bigint", true}};
  int64_t u = r->matched_updated + r->nmbs_updated, del = r->matched_deleted + r->nmbs_deleted;
  int64_t v[4] = {u + del + r->inserted, u, del, r->inserted};
  return dml__i64_row(out, cols, v, 4);
}
