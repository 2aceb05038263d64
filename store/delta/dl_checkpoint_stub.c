/* dl_checkpoint_stub.c: stands in for dl_checkpoint_read.c when the build has no Parquet
 * library: Parquet checkpoints are then unreadable, and replay falls back to JSON commits. */
#include "common/err.h"
#include "store/delta/dl_internal.h"

int dl__parquet_actions(dl_table *t, const char *path, dl__action_cb cb, void *ctx,
                        dl__fileset *reserve) {
  (void)t;
  (void)reserve;
  (void)cb;
  (void)ctx;
  return dd_err_set(DD_EUNSUPPORTED, "%s: this build cannot read Parquet", path);
}
