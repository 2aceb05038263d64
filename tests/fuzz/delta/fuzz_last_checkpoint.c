/* fuzz_last_checkpoint.c: the _last_checkpoint JSON parser. */
#include <stdint.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dl__last_cp lc;
  if (dl__last_cp_parse(&lc, (const char *)data, size) == 0 && lc.version < 0) __builtin_trap();
  dd_err_clear();
  return 0;
}
