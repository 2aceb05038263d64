/* fuzz_ddl.c: the DDL text Delta Connect clients send (CreateDeltaTable column types and
 * CONVERT's partition column lists) through store/deltaops' parser. The first byte picks a
 * type or a column list. Whatever is accepted must be a Delta type store/delta parses back:
 * wrapped as a one-column schema, dl_schema_parse has to take it (so the two depth bounds and
 * the two sets of type names agree), and the field names of a column list are non-empty. */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop_int.h"

static void check_schema(json_t *fields) {
  json_t *root = json_pack("{s:s,s:O}", "type", "struct", "fields", fields);
  char *text = root ? json_dumps(root, JSON_COMPACT) : NULL;
  json_decref(root);
  if (!text) return; /* out of memory */
  dl_schema *s = NULL;
  if (dl_schema_parse(&s, text, strlen(text)) != 0) abort();
  dl_schema_free(s);
  free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 1 << 20) return 0;
  char *ddl = malloc(size);
  if (!ddl) return 0;
  memcpy(ddl, data + 1, size - 1);
  ddl[size - 1] = '\0';
  json_t *j = NULL;
  if (data[0] & 1) {
    if (dop__ddl_fields(&j, ddl) == 0) {
      size_t i;
      json_t *f;
      json_array_foreach(j, i, f) if (!*json_string_value(json_object_get(f, "name"))) abort();
      check_schema(j);
    }
  } else if (dop__ddl_type(&j, ddl) == 0) {
    json_t *fields = json_pack("[{s:s,s:O,s:b,s:{}}]", "name", "c", "type", j, "nullable", 1, "metadata");
    if (fields) check_schema(fields);
    json_decref(fields);
  }
  json_decref(j);
  dd_err_clear();
  free(ddl);
  return 0;
}
