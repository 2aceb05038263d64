/* fuzz_pbjson.c: feeds arbitrary bytes as JSON to pbjson_to_msg. The first byte picks the
 * message type; the rest is the JSON text. A parsed message must pack, emit, parse again
 * and emit the same JSON (the codec's round-trip property), and free without leaks. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/credentials/v1/credentials.pb-c.h"
#include "delta/connect/commands.pb-c.h"
#include "delta/connect/relations.pb-c.h"
#include "google/protobuf/any.pb-c.h"
#include "google/protobuf/descriptor.pb-c.h"
#include "server/http/pbjson.h"

static const ProtobufCMessageDescriptor *const fuzz_types[] = {
    &deltad__catalog__v1__create_catalog_request__descriptor,
    &deltad__catalog__v1__update_catalog_request__descriptor,
    &deltad__catalog__v1__list_catalogs_response__descriptor,
    &deltad__credentials__v1__create_credential_request__descriptor,
    &deltad__credentials__v1__create_storage_location_request__descriptor,
    &google__protobuf__uninterpreted_option__descriptor,
    &google__protobuf__file_descriptor_proto__descriptor,
    &google__protobuf__any__descriptor,
    &delta__connect__delta_command__descriptor,
    &delta__connect__delta_relation__descriptor,
};
#define FUZZ_NTYPES (sizeof fuzz_types / sizeof fuzz_types[0])

static void check_round_trip(const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf || protobuf_c_message_pack(m, buf) != n) abort();
  ProtobufCMessage *back = protobuf_c_message_unpack(m->descriptor, NULL, n, buf);
  free(buf);
  if (!back) abort();
  protobuf_c_message_free_unpacked(back, NULL);

  json_t *j1 = pbjson_from_msg(m);
  if (!j1) abort();
  ProtobufCMessage *m2 = NULL;
  if (pbjson_to_msg(&m2, m->descriptor, j1) != 0) abort();
  json_t *j2 = pbjson_from_msg(m2);
  if (!j2 || !json_equal(j1, j2)) abort();
  json_decref(j1);
  json_decref(j2);
  protobuf_c_message_free_unpacked(m2, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  /* small selectors map one to one, so the seeds keep their types as types are added */
  size_t pick = data[0] < FUZZ_NTYPES ? data[0] : data[0] % FUZZ_NTYPES;
  const ProtobufCMessageDescriptor *desc = fuzz_types[pick];
  json_error_t err;
  json_t *j = json_loadb((const char *)data + 1, size - 1, JSON_REJECT_DUPLICATES, &err);
  if (!j) return 0;
  ProtobufCMessage *m = NULL;
  if (pbjson_to_msg(&m, desc, j) == 0) {
    check_round_trip(m);
    protobuf_c_message_free_unpacked(m, NULL);
  } else if (m != NULL) {
    abort();
  }
  json_decref(j);
  return 0;
}
