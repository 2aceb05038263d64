/* dl_checkpoint_write_stub.c: checkpoint writing when the build has no Parquet library. */
#include "common/err.h"
#include "store/delta/dl_internal.h"

int dl_checkpoint_write(dl_table *t, const dl_snapshot *s) {
  (void)t;
  (void)s;
  return dd_err_set(DD_EUNSUPPORTED, "this build cannot write Parquet checkpoints");
}

int dl_log_cleanup(dl_table *t, const dl_snapshot *s, int64_t now_ms, size_t *out_deleted) {
  (void)t;
  (void)s;
  (void)now_ms;
  if (out_deleted) *out_deleted = 0;
  return 0;
}
