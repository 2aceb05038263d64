/* fuzz_schema.c: the schemaString parser and the type formatter. */
#include <stdint.h>

#include "common/err.h"
#include "store/delta/dl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  dl_schema *s = NULL;
  if (dl_schema_parse(&s, (const char *)data, size) == 0) {
    char buf[128];
    dl_type_format(dl_schema_root(s), buf, sizeof buf);
    const dl_type *r = dl_schema_root(s);
    if (r->num_fields) dl_schema_field(s, r->fields[0].name);
    dl_schema_free(s);
  }
  dd_err_clear();
  return 0;
}
