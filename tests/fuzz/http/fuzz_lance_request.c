/* fuzz_lance_request.c: feeds arbitrary bytes to the Lance REST adapter's parsers. Input:
 * byte 0 picks the request message, then "<raw id>\n<delimiter>\n<JSON body>". Checks:
 * a parsed id has no empty part, no part holding the delimiter, and joins back to at most
 * DD_NATIVE__LANCE_ID_MAX_BYTES; a parsed body emits JSON that parses back to the same JSON (the
 * codec's round trip); everything frees without leaks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deltad/lance/v1/lance.pb-c.h"
#include "server/http/native/lance_rest_id.h"
#include "server/http/native/lance_rest_json.h"

static const ProtobufCMessageDescriptor *const fuzz_types[] = {
    &deltad__lance__v1__create_namespace_request__descriptor,
    &deltad__lance__v1__drop_namespace_request__descriptor,
    &deltad__lance__v1__list_tables_request__descriptor,
    &deltad__lance__v1__register_table_request__descriptor,
    &deltad__lance__v1__describe_table_request__descriptor,
    &deltad__lance__v1__describe_table_response__descriptor,
};
#define FUZZ_NTYPES (sizeof fuzz_types / sizeof fuzz_types[0])

static void check_id(const char *raw, size_t len, const char *delim) {
  dd_native__lance_id id = DD_NATIVE__LANCE_ID_INIT;
  if (dd_native__lance_id_parse(&id, raw, len, *delim ? delim : NULL) != 0) {
    if (id.n || id.parts) abort(); /* a failure leaves nothing behind */
    return;
  }
  size_t total = 0;
  for (size_t i = 0; i < id.n; i++) {
    if (!id.parts[i][0]) abort();
    if (strstr(id.parts[i], *delim ? delim : "$")) abort();
    total += strlen(id.parts[i]) + (i ? strlen(*delim ? delim : "$") : 0);
  }
  if (total > DD_NATIVE__LANCE_ID_MAX_BYTES) abort();
  if (!dd_native__lance_id_equal(&id, id.parts, id.n)) abort();
  dd_native__lance_id_free(&id);
}

static ProtobufCMessage *parse(const ProtobufCMessageDescriptor *d, const json_t *j) {
  ProtobufCMessage *m = malloc(d->sizeof_message);
  if (!m) abort();
  d->message_init(m);
  if (dd_native__lance_json_to_msg(m, j) != 0) {
    protobuf_c_message_free_unpacked(m, NULL);
    return NULL;
  }
  return m;
}

static char *emit(const ProtobufCMessage *m) {
  json_t *j = dd_native__lance_msg_to_json(m);
  if (!j) abort();
  char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(j);
  if (!s) abort();
  return s;
}

static void check_body(const ProtobufCMessageDescriptor *d, const char *body, size_t len) {
  json_t *j = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
  if (!j) return;
  ProtobufCMessage *m = parse(d, j);
  json_decref(j);
  if (!m) return;
  char *once = emit(m);
  json_t *j2 = json_loads(once, 0, NULL);
  ProtobufCMessage *m2 = j2 ? parse(d, j2) : NULL;
  if (!m2) abort(); /* what the codec emits, it parses */
  char *twice = emit(m2);
  if (strcmp(once, twice) != 0) abort();
  free(once);
  free(twice);
  json_decref(j2);
  protobuf_c_message_free_unpacked(m, NULL);
  protobuf_c_message_free_unpacked(m2, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const ProtobufCMessageDescriptor *d = fuzz_types[data[0] % FUZZ_NTYPES];
  const char *p = (const char *)data + 1, *end = (const char *)data + size;
  const char *nl1 = memchr(p, '\n', (size_t)(end - p));
  if (!nl1) return 0;
  const char *nl2 = memchr(nl1 + 1, '\n', (size_t)(end - nl1 - 1));
  if (!nl2) return 0;
  char delim[64];
  size_t dl = (size_t)(nl2 - nl1 - 1);
  if (dl >= sizeof delim || memchr(nl1 + 1, '\0', dl)) return 0;
  memcpy(delim, nl1 + 1, dl);
  delim[dl] = '\0';
  char *raw = malloc((size_t)(nl1 - p) + 1);
  if (!raw) return 0;
  memcpy(raw, p, (size_t)(nl1 - p));
  raw[nl1 - p] = '\0';
  if (!memchr(p, '\0', (size_t)(nl1 - p))) check_id(raw, (size_t)(nl1 - p), delim);
  free(raw);
  check_body(d, nl2 + 1, (size_t)(end - nl2 - 1));
  return 0;
}
