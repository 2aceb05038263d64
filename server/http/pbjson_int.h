/* pbjson_int.h: what the files of the JSON codec share and nothing outside uses.
 *
 * How protobuf-c lays out a message (all we rely on):
 *  - every field sits at f->offset; a repeated field also has a size_t count at
 *    f->quantifier_offset and its value is a malloc'ed array of elements;
 *  - proto2 `optional` scalars have a protobuf_c_boolean has_ flag at quantifier_offset;
 *  - oneof members (flag PROTOBUF_C_FIELD_FLAG_ONEOF) share a union and a uint32 case at
 *    quantifier_offset whose value is the member's field number (0: none), so members of
 *    one oneof are exactly the fields with the same quantifier_offset;
 *  - protobuf_c_message_free_unpacked frees only the selected oneof member, strings that
 *    are not the descriptor's default pointer, and every element of a repeated array
 *    (NULL elements are fine), so a half-built message is always freeable. */
#ifndef DD_SERVER_HTTP_PBJSON_INT_H
#define DD_SERVER_HTTP_PBJSON_INT_H

#include <stdint.h>

#include "server/http/pbjson.h"

#define PBJSON__MAX_DEPTH 64

/* Pointer to the field's storage inside message m. */
#define PBJSON__AT(m, off) ((void *)((char *)(m) + (off)))
#define PBJSON__CAT(m, off) ((const void *)((const char *)(m) + (off)))

/* A JSON path being built while walking, for error messages ("a.b[2].c"). */
typedef struct pbjson__path {
  char buf[512];
  size_t len;
} pbjson__path;

/* Appends ".name" (or "name" at the start), "[i]" or ".key"; returns the old length to
 * give back to pbjson__path_pop. */
size_t pbjson__path_field(pbjson__path *p, const char *name);
size_t pbjson__path_index(pbjson__path *p, size_t i);
void pbjson__path_pop(pbjson__path *p, size_t old_len);
/* Sets DD_EINVAL "path: <fmt>" (or just fmt when the path is empty); returns DD_EINVAL. */
int pbjson__fail(const pbjson__path *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Size of one element of a field of type t in a repeated array. */
size_t pbjson__elem_size(ProtobufCType t);

/* Whether the singular value at p has its proto3 default (0, "", false, empty bytes, NULL
 * message). */
int pbjson__is_default(const ProtobufCFieldDescriptor *f, const void *p);

/* Base64 (RFC 4648). Encode returns a malloc'ed NUL-terminated string or NULL. Decode
 * takes standard or URL-safe alphabets with or without padding; returns 0 or -1. */
char *pbjson__b64_encode(const uint8_t *data, size_t len);
int pbjson__b64_decode(const char *text, size_t len, uint8_t **out, size_t *out_len);

/* Parses URL/JSON-string text into a scalar field's storage (not string/bytes/message:
 * those are handled by the caller). Returns 0 or DD_EINVAL with the path. */
int pbjson__text_scalar(const ProtobufCFieldDescriptor *f, const char *text, void *dst,
                        const pbjson__path *p);

/* The field of the same oneof as f whose number is `id`, for error messages. */
const ProtobufCFieldDescriptor *pbjson__oneof_member(const ProtobufCMessageDescriptor *d,
                                                     const ProtobufCFieldDescriptor *f,
                                                     uint32_t id);

#endif
