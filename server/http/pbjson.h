/* pbjson.h: the proto3 JSON mapping for protobuf-c messages, done by reflection over
 * their descriptors (protobuf-c generates no JSON code).
 *
 * Mapping (https://protobuf.dev/programming-guides/proto3/#json):
 *  - field names are lowerCamelCase of the proto name ("create_at" -> "createAt"); the
 *    parser also accepts the original name;
 *  - int64/uint64/fixed64/sint64/sfixed64 are decimal strings, 32-bit ints are numbers;
 *  - float/double are numbers, "NaN", "Infinity", "-Infinity";
 *  - bytes are standard base64 (the parser also takes URL-safe and missing padding);
 *  - enums are value names (unknown numbers as numbers); the parser takes either;
 *  - repeated fields are arrays; map fields (protobuf-c: a repeated `XxxEntry` message
 *    with key=1, value=2) are objects;
 *  - proto3 defaults (0, "", false, empty repeated/map, absent sub-message) are omitted;
 *    a oneof member (including the `_x` oneofs standing in for proto3 `optional`) is
 *    emitted whenever its case is set;
 *  - google.protobuf.Empty is {}; google.protobuf.Any uses the simple form
 *    {"@type": "<type url>", "value": "<base64 of the packed message>"}.
 *
 * Messages built here are heap trees: free them with protobuf_c_message_free_unpacked(m,
 * NULL). Errors are DD_EINVAL (bad input, the message names the JSON path, e.g.
 * "properties.owner: expected string") or DD_ENOMEM. All functions are thread-safe. */
#ifndef DD_SERVER_HTTP_PBJSON_H
#define DD_SERVER_HTTP_PBJSON_H

#include <jansson.h>
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>

/* The JSON form of msg (a new reference), or NULL with dd_err_msg() set. */
json_t *pbjson_from_msg(const ProtobufCMessage *msg);

/* Parses json (an object) into a new message of type desc. On success *out is the
 * message; on failure *out is NULL and a DD_E* code is returned. Unknown field names,
 * wrong JSON types, out-of-range numbers, unknown enum names and two members of one oneof
 * are all DD_EINVAL. JSON null leaves a field at its default. */
int pbjson_to_msg(ProtobufCMessage **out, const ProtobufCMessageDescriptor *desc,
                  const json_t *json);

/* Sets the scalar field at field_path ("name", "parent.child", proto or camel names)
 * from URL text: strings as they are, numbers parsed strictly, bools true/false/1/0,
 * enums by name or number, bytes as base64. A repeated field gets text appended; message
 * fields on the way are created. Unknown fields and unparsable text are DD_EINVAL. */
int pbjson_set_path_field(ProtobufCMessage *msg, const char *field_path, const char *text);

/* Reads the scalar field at field_path as text into buf (cap bytes): strings as they are,
 * numbers in decimal, bools "true"/"false", enums by name, bytes as base64. Returns 0;
 * DD_ENOTFOUND when the field is unset (a message on the way is absent, its oneof holds
 * another member, or it has the proto3 default); DD_EINVAL when the path does not name a
 * singular scalar field; DD_ERANGE when the text does not fit. Used by the REST router to
 * check a path variable against the body. */
int pbjson_get_path_field(const ProtobufCMessage *msg, const char *field_path, char *buf,
                          size_t cap);

/* lowerCamelCase of a proto field name, as protoc computes json_name, into buf. Returns
 * buf; the result is truncated to cap-1 bytes. */
char *pbjson_json_name(const char *proto_name, char *buf, size_t cap);

/* The field of desc called name (proto or JSON name), or NULL. */
const ProtobufCFieldDescriptor *pbjson_find_field(const ProtobufCMessageDescriptor *desc,
                                                  const char *name);

/* Non-zero when f is a map field (a repeated message shaped like a map entry). */
int pbjson_is_map(const ProtobufCFieldDescriptor *f);

#endif
