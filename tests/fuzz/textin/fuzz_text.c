/* fuzz_text.c: libFuzzer target of store/textin: the first byte picks CSV or JSON lines
 * (and whether a schema casts two columns), the rest is the file's text; it is read into
 * batches or refused with a message, and every batch has the schema's columns and rows. */
#include <stdint.h>
#include <stdlib.h>

#include "common/err.h"
#include "store/textin/txi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0;
  bool json = data[0] & 1;
  txi_opts o = {.schema = (data[0] & 2) ? "a BIGINT, b DOUBLE" : NULL, .batch_rows = (data[0] >> 2) + 1};
  arw_schema *s = NULL;
  arw_batch **b = NULL;
  size_t n = 0;
  if (txi_read_text(&s, &b, &n, (const char *)data + 1, size - 1, json, &o)) {
    if (s || b || n || !*dd_err_msg()) abort();
    return 0;
  }
  for (size_t i = 0; i < n; i++) {
    if (arw_batch_schema(b[i]) != s || !arw_batch_rows(b[i]) || arw_batch_rows(b[i]) > o.batch_rows) abort();
    arw_batch_free(b[i]);
  }
  free(b);
  arw_schema_free(s);
  return 0;
}
