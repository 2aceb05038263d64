/* fuzz_dv.c: the deletion-vector decoders: Z85 text (first byte odd) or raw serialized
 * bitmaps (magic + portable or native RoaringBitmapArray). */
#include <stdint.h>
#include <stdlib.h>

#include "common/err.h"
#include "store/delta/dl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  dl_rowset r = {0};
  if (data[0] & 1) {
    uint8_t *raw = NULL;
    size_t n = 0;
    size_t len = (size - 1) / 5 * 5;
    if (dl_z85_decode(&raw, &n, (const char *)data + 1, len) == 0) {
      if (dl_dv_decode(&r, raw, n) == 0 && r.count) dl_rowset_contains(&r, r.rows[0]);
      dl_rowset_free(&r);
      free(raw);
    }
  } else if (dl_dv_decode(&r, data + 1, size - 1) == 0) {
    for (size_t i = 1; i < r.count; i++)
      if (r.rows[i] <= r.rows[i - 1]) abort(); /* must be sorted and unique */
    dl_rowset_free(&r);
  }
  dd_err_clear();
  return 0;
}
