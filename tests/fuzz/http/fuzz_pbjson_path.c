/* fuzz_pbjson_path.c: feeds arbitrary URL-style field paths and text to
 * pbjson_set_path_field / pbjson_get_path_field (how REST path variables and query
 * parameters reach a request). Input: type byte, then "path\0text\0path\0text..." pairs
 * applied to one message, which must then pack, emit as JSON and free cleanly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/credentials/v1/credentials.pb-c.h"
#include "google/protobuf/descriptor.pb-c.h"
#include "server/http/pbjson.h"

static const ProtobufCMessageDescriptor *const fuzz_types[] = {
    &deltad__catalog__v1__update_catalog_request__descriptor,
    &deltad__credentials__v1__create_credential_request__descriptor,
    &deltad__credentials__v1__create_storage_location_request__descriptor,
    &google__protobuf__file_descriptor_proto__descriptor,
    &google__protobuf__uninterpreted_option__descriptor,
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  const ProtobufCMessageDescriptor *d = fuzz_types[data[0] % (sizeof fuzz_types / sizeof fuzz_types[0])];
  char *text = malloc(size + 1); /* NUL-terminated copy: pairs are split on NULs */
  memcpy(text, data + 1, size - 1);
  text[size - 1] = '\0';
  text[size] = '\0';
  ProtobufCMessage *m = calloc(1, d->sizeof_message);
  protobuf_c_message_init(d, m);
  char *end = text + size - 1;
  for (char *p = text; p < end;) {
    char *val = p + strlen(p) + 1;
    if (val > end) val = end;
    pbjson_set_path_field(m, p, val);
    char buf[256];
    pbjson_get_path_field(m, p, buf, sizeof buf);
    p = val + strlen(val) + 1;
  }
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *packed = malloc(n ? n : 1);
  if (protobuf_c_message_pack(m, packed) != n) abort();
  free(packed);
  json_t *j = pbjson_from_msg(m);
  if (!j) abort();
  json_decref(j);
  protobuf_c_message_free_unpacked(m, NULL);
  free(text);
  return 0;
}
