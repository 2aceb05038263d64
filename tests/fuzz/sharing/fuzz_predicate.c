/* fuzz_predicate.c: libFuzzer target for the predicate hints: the input is parsed as a
 * jsonPredicateHints tree and as a SQL predicateHint; whatever parses is bound to a fixed
 * table and evaluated against files with partition values and with (fuzzed) stats. The
 * first input byte selects how the rest is used. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sharing/shq_internal.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"fields\":["
    "{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"d\",\"type\":\"date\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"x\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"f\",\"type\":\"double\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"t\",\"type\":\"timestamp\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"b\",\"type\":\"boolean\",\"nullable\":true,\"metadata\":{}}]}";
static const char *STATS =
    "{\"numRecords\":4,\"minValues\":{\"x\":1,\"f\":0.5,\"t\":\"2021-01-01T00:00:00.000Z\"},"
    "\"maxValues\":{\"x\":9,\"f\":2.5,\"t\":\"2021-02-01T00:00:00.000Z\"},"
    "\"nullCount\":{\"x\":0,\"f\":1,\"t\":4}}";

static void eval_all(shq_pred *p, const dl_schema *schema, const char *stats) {
  const char *pcols[] = {"p", "d"};
  dl_metadata md = {.num_partition_columns = 2, .partition_columns = pcols};
  if (shq__pred_bind(p, &md, schema)) return;
  const char *k[] = {"p", "d"};
  const char *vals[][2] = {{"a", "2021-01-01"}, {NULL, NULL}, {"", "bad-date"}, {"zz", "1970-1-1"}};
  for (size_t i = 0; i < 4; i++) {
    char *pv = NULL;
    if (dl_kv_pack(&pv, k, vals[i], 2)) continue;
    (void)shq__pred_keep(p, pv, stats);
    (void)shq__pred_keep(p, pv, NULL);
    free(pv);
  }
  (void)shq__pred_needs_stats(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static dl_schema *schema;
  if (!schema && dl_schema_parse(&schema, SCHEMA, strlen(SCHEMA))) return 0;
  if (size < 1) return 0;
  uint8_t mode = data[0] % 3;
  char *text = malloc(size);
  if (!text) return 0;
  memcpy(text, data + 1, size - 1);
  text[size - 1] = 0;
  shq_pred *p = NULL;
  if (mode == 0) {
    if (!shq__pred_parse_json(&p, (const char *)data + 1, size - 1)) eval_all(p, schema, STATS);
  } else if (mode == 1) {
    if (!shq__pred_parse_sql(&p, text, schema)) eval_all(p, schema, STATS);
  } else {
    /* the input is the stats of a file, under a fixed predicate over every type */
    const char *pred =
        "{\"op\":\"or\",\"children\":[{\"op\":\"lessThan\",\"children\":[{\"op\":\"column\","
        "\"name\":\"x\",\"valueType\":\"long\"},{\"op\":\"literal\",\"value\":\"3\",\"valueType\":\"long\"}]},"
        "{\"op\":\"not\",\"children\":[{\"op\":\"isNull\",\"children\":[{\"op\":\"column\",\"name\":\"t\","
        "\"valueType\":\"timestamp\"}]}]},{\"op\":\"equal\",\"children\":[{\"op\":\"column\",\"name\":"
        "\"f\",\"valueType\":\"double\"},{\"op\":\"literal\",\"value\":\"1.5\",\"valueType\":\"double\"}]}]}";
    if (!shq__pred_parse_json(&p, pred, strlen(pred))) eval_all(p, schema, text);
  }
  shq__pred_free(p);
  free(text);
  return 0;
}
