/* lance_rest_json.h: Lance JSON <-> deltad.lance.v1 messages. The Lance models use the
 * proto field names (snake_case), so one reflective codec over the protobuf-c descriptors
 * serves every operation:
 *   string <-> JSON string; repeated string <-> array of strings; map<string,string> <->
 *   object of strings; bool <-> true/false; int32/int64 <-> JSON integer; a field alone in a
 *   oneof "_x" (proto3 optional) is present exactly when its JSON key is.
 * Parsing ignores keys the message does not have (identity, context and fields of newer
 * spec versions) and treats null as absent; a known key of the wrong type is DD_EINVAL
 * naming it. Emitting leaves out empty strings, empty lists and maps, false bools and
 * unset optionals, except the keys a response must carry (namespaces, tables,
 * properties), which are always present. */
#ifndef DD_SERVER_HTTP_NATIVE_LANCE_REST_JSON_H
#define DD_SERVER_HTTP_NATIVE_LANCE_REST_JSON_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>

/* Sets the fields of msg (a heap message whose every part is malloc'ed, freed with
 * protobuf_c_message_free_unpacked) from obj, a JSON object. */
int dd_native__lance_json_to_msg(ProtobufCMessage *msg, const json_t *obj);
/* Sets one scalar field from a query-string value (string, bool "true"/"false", integer).
 * DD_EINVAL naming the field when the value does not parse. */
int dd_native__lance_query_to_field(ProtobufCMessage *msg, const char *field, const char *value);
/* The JSON object for msg (new reference), or NULL when out of memory. */
json_t *dd_native__lance_msg_to_json(const ProtobufCMessage *msg);

#endif
