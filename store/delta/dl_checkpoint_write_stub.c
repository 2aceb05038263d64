/* dl_checkpoint_write_stub.c: checkpoint writing when the build has no Parquet writer. */
#include "common/err.h"
#include "store/delta/dl_internal.h"

int dl_checkpoint_write(dl_table *t, const dl_snapshot *s) {
  (void)t;
  (void)s;
  return dd_err_set(DD_EUNSUPPORTED, "this build cannot write Parquet checkpoints");
}

int dl__checkpoint_write_parts(dl_table *t, const dl_snapshot *s, int parts) {
  (void)parts;
  return dl_checkpoint_write(t, s);
}
