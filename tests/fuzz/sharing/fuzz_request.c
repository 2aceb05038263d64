/* fuzz_request.c: libFuzzer target for what a recipient sends besides predicates: the
 * Query Table JSON body, the delta-sharing-capabilities header, protocol timestamps and
 * page tokens. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/sharing/shq_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  shq_query q;
  if (!shq_query_parse_json(&q, (const char *)data, size)) shq_query_clear(&q);
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  shq_caps c;
  (void)shq_caps_parse(&c, text);
  int64_t ms;
  (void)shq_parse_timestamp(text, &ms);
  shq_table_opts o = SHQ_TABLE_OPTS_INIT;
  o.table_id = "t";
  shq_token t;
  if (!shq__token_decode(&t, text, 'p', NULL, &o, 0)) shq__token_clear(&t);
  /* a token carrying the input as its position must round-trip */
  shq_token in = {.kind = 'p', .table_id = "t", .checksum = "c", .after = text, .version = 1};
  char *enc = shq__token_encode(&in, &o);
  if (enc && strlen(text) == size) {
    if (shq__token_decode(&t, enc, 'p', "c", &o, 0) || strcmp(t.after, text)) abort();
    shq__token_clear(&t);
  }
  free(enc);
  free(text);
  return 0;
}
