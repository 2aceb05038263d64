/* pbjson_parse.c: proto3 JSON -> protobuf-c message (pbjson_to_msg). Strict: unknown
 * fields, wrong JSON types and out-of-range numbers are DD_EINVAL naming the JSON path.
 * Every step leaves the message freeable with protobuf_c_message_free_unpacked, so an
 * error anywhere just frees the whole tree (see pbjson_int.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/pbjson_int.h"

static int parse_message(ProtobufCMessage *m, const json_t *obj, pbjson__path *p, int depth);

static ProtobufCMessage *new_message(const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = calloc(1, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

/* ---- one value ----------------------------------------------------------------------- */

static int parse_int_like(const ProtobufCFieldDescriptor *f, const json_t *v, void *dst,
                          const pbjson__path *p) {
  char text[64];
  if (json_is_integer(v)) {
    snprintf(text, sizeof text, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
  } else if (json_is_real(v)) {
    double d = json_real_value(v);
    if (!isfinite(d) || d != trunc(d) || fabs(d) > 1.9e19)
      return pbjson__fail(p, "expected integer, got %g", d);
    snprintf(text, sizeof text, "%.0f", d);
  } else if (json_is_string(v)) {
    snprintf(text, sizeof text, "%s", json_string_value(v));
    if (json_string_length(v) >= sizeof text) return pbjson__fail(p, "expected integer");
  } else {
    return pbjson__fail(p, "expected integer");
  }
  return pbjson__text_scalar(f, text, dst, p);
}

static int parse_float_like(const ProtobufCFieldDescriptor *f, const json_t *v, void *dst,
                            const pbjson__path *p) {
  char text[64];
  if (json_is_string(v)) {
    if (json_string_length(v) >= sizeof text) return pbjson__fail(p, "expected number");
    return pbjson__text_scalar(f, json_string_value(v), dst, p);
  }
  if (!json_is_number(v)) return pbjson__fail(p, "expected number");
  snprintf(text, sizeof text, "%.17g", json_number_value(v));
  return pbjson__text_scalar(f, text, dst, p);
}

static int parse_enum(const ProtobufCFieldDescriptor *f, const json_t *v, int32_t *dst,
                      const pbjson__path *p) {
  const ProtobufCEnumDescriptor *ed = f->descriptor;
  if (json_is_string(v)) {
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value_by_name(ed, json_string_value(v));
    if (!ev) return pbjson__fail(p, "unknown value \"%.64s\" for enum %s", json_string_value(v), ed->name);
    *dst = ev->value;
    return 0;
  }
  if (json_is_integer(v)) {
    json_int_t n = json_integer_value(v);
    if (n < INT32_MIN || n > INT32_MAX) return pbjson__fail(p, "enum value out of range");
    *dst = (int32_t)n;
    return 0;
  }
  return pbjson__fail(p, "expected enum name or number for %s", ed->name);
}

static int parse_string(const json_t *v, char **dst, const pbjson__path *p) {
  if (!json_is_string(v)) return pbjson__fail(p, "expected string");
  size_t n = json_string_length(v);
  if (memchr(json_string_value(v), '\0', n)) return pbjson__fail(p, "string contains NUL");
  char *s = malloc(n + 1);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  memcpy(s, json_string_value(v), n + 1);
  *dst = s;
  return 0;
}

static int parse_bytes(const json_t *v, ProtobufCBinaryData *dst, const pbjson__path *p) {
  if (!json_is_string(v)) return pbjson__fail(p, "expected base64 string");
  uint8_t *data;
  size_t len;
  if (pbjson__b64_decode(json_string_value(v), json_string_length(v), &data, &len) != 0)
    return pbjson__fail(p, "invalid base64");
  dst->data = data;
  dst->len = len;
  return 0;
}

/* Parses v into the storage of one value of f at dst (an element, for repeated). */
static int parse_value(const ProtobufCFieldDescriptor *f, const json_t *v, void *dst,
                       pbjson__path *p, int depth) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_STRING: return parse_string(v, dst, p);
  case PROTOBUF_C_TYPE_BYTES: return parse_bytes(v, dst, p);
  case PROTOBUF_C_TYPE_ENUM: return parse_enum(f, v, dst, p);
  case PROTOBUF_C_TYPE_FLOAT:
  case PROTOBUF_C_TYPE_DOUBLE: return parse_float_like(f, v, dst, p);
  case PROTOBUF_C_TYPE_BOOL:
    if (!json_is_boolean(v)) return pbjson__fail(p, "expected boolean");
    *(protobuf_c_boolean *)dst = json_is_true(v);
    return 0;
  case PROTOBUF_C_TYPE_MESSAGE: {
    ProtobufCMessage *sub = new_message(f->descriptor);
    if (!sub) return dd_err_set(DD_ENOMEM, "out of memory");
    *(ProtobufCMessage **)dst = sub;
    return parse_message(sub, v, p, depth + 1);
  }
  default: return parse_int_like(f, v, dst, p);
  }
}

/* ---- repeated and maps --------------------------------------------------------------- */

/* Allocates an n-element array for repeated field f of m and records it in m at once, so
 * the message stays freeable whatever happens to the elements. */
static void *alloc_repeated(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, size_t n) {
  void *arr = calloc(n ? n : 1, pbjson__elem_size(f->type));
  if (!arr) return NULL;
  *(void **)PBJSON__AT(m, f->offset) = arr;
  *(size_t *)PBJSON__AT(m, f->quantifier_offset) = n;
  return arr;
}

static int parse_array(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const json_t *v,
                       pbjson__path *p, int depth) {
  if (!json_is_array(v)) return pbjson__fail(p, "expected array");
  size_t n = json_array_size(v), sz = pbjson__elem_size(f->type);
  char *arr = alloc_repeated(m, f, n);
  if (!arr) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    size_t old = pbjson__path_index(p, i);
    const json_t *e = json_array_get(v, i);
    int rc = json_is_null(e) ? pbjson__fail(p, "null is not allowed in a list")
                             : parse_value(f, e, arr + i * sz, p, depth);
    if (rc != 0) return rc;
    pbjson__path_pop(p, old);
  }
  return 0;
}

static int parse_map_entry(ProtobufCMessage *e, const char *key, const json_t *v,
                           pbjson__path *p, int depth) {
  const ProtobufCFieldDescriptor *kf = &e->descriptor->fields[0];
  const ProtobufCFieldDescriptor *vf = &e->descriptor->fields[1];
  int rc;
  if (kf->type == PROTOBUF_C_TYPE_STRING) {
    char *k = strdup(key);
    if (!k) return dd_err_set(DD_ENOMEM, "out of memory");
    *(char **)PBJSON__AT(e, kf->offset) = k;
  } else if ((rc = pbjson__text_scalar(kf, key, PBJSON__AT(e, kf->offset), p)) != 0) {
    return rc;
  }
  if (json_is_null(v)) return pbjson__fail(p, "null is not allowed as a map value");
  return parse_value(vf, v, PBJSON__AT(e, vf->offset), p, depth);
}

static int parse_map(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const json_t *v,
                     pbjson__path *p, int depth) {
  if (!json_is_object(v)) return pbjson__fail(p, "expected object (a map)");
  ProtobufCMessage **arr = alloc_repeated(m, f, json_object_size(v));
  if (!arr) return dd_err_set(DD_ENOMEM, "out of memory");
  size_t i = 0;
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)v, key, val) {
    if (!(arr[i] = new_message(f->descriptor))) return dd_err_set(DD_ENOMEM, "out of memory");
    size_t old = pbjson__path_field(p, key);
    int rc = parse_map_entry(arr[i++], key, val, p, depth);
    if (rc != 0) return rc;
    pbjson__path_pop(p, old);
  }
  return 0;
}

/* ---- fields and messages ------------------------------------------------------------- */

static int parse_field(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const json_t *v,
                       pbjson__path *p, int depth) {
  if (f->label == PROTOBUF_C_LABEL_REPEATED)
    return pbjson_is_map(f) ? parse_map(m, f, v, p, depth) : parse_array(m, f, v, p, depth);
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
    uint32_t *which = PBJSON__AT(m, f->quantifier_offset);
    if (*which != 0 && *which != f->id) {
      const ProtobufCFieldDescriptor *o = pbjson__oneof_member(m->descriptor, f, *which);
      return pbjson__fail(p, "only one of \"%s\" and \"%s\" may be set (they share a oneof)",
                          o ? o->name : "?", f->name);
    }
    *which = f->id; /* before the value, so a half-built member is freed */
  } else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_STRING &&
             f->type != PROTOBUF_C_TYPE_MESSAGE) {
    *(protobuf_c_boolean *)PBJSON__AT(m, f->quantifier_offset) = 1;
  }
  return parse_value(f, v, PBJSON__AT(m, f->offset), p, depth);
}

/* google.protobuf.Any in the simple form {"@type": url, "value": base64}. */
static int parse_any(ProtobufCMessage *m, const json_t *obj, pbjson__path *p) {
  const ProtobufCFieldDescriptor *tf = protobuf_c_message_descriptor_get_field(m->descriptor, 1);
  const ProtobufCFieldDescriptor *vf = protobuf_c_message_descriptor_get_field(m->descriptor, 2);
  const char *key;
  json_t *val;
  int rc = 0;
  json_object_foreach((json_t *)obj, key, val) {
    size_t old = pbjson__path_field(p, key);
    if (strcmp(key, "@type") == 0) rc = parse_string(val, PBJSON__AT(m, tf->offset), p);
    else if (strcmp(key, "value") == 0) rc = parse_bytes(val, PBJSON__AT(m, vf->offset), p);
    else rc = pbjson__fail(p, "google.protobuf.Any takes only \"@type\" and \"value\"");
    if (rc != 0) return rc;
    pbjson__path_pop(p, old);
  }
  return 0;
}

static int parse_fields(ProtobufCMessage *m, const json_t *obj, pbjson__path *p, int depth,
                        unsigned char *seen) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)obj, key, val) {
    const ProtobufCFieldDescriptor *f = pbjson_find_field(d, key);
    if (!f) return pbjson__fail(p, "unknown field \"%s\" in %s", key, d->name);
    size_t idx = (size_t)(f - d->fields);
    if (seen[idx]) return pbjson__fail(p, "field \"%s\" given twice", f->name);
    seen[idx] = 1;
    if (json_is_null(val)) continue;
    size_t old = pbjson__path_field(p, key);
    int rc = parse_field(m, f, val, p, depth);
    if (rc != 0) return rc;
    pbjson__path_pop(p, old);
  }
  return 0;
}

static int parse_message(ProtobufCMessage *m, const json_t *obj, pbjson__path *p, int depth) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  if (depth > PBJSON__MAX_DEPTH) return pbjson__fail(p, "nested too deep");
  if (!json_is_object(obj)) return pbjson__fail(p, "expected object (%s)", d->name);
  if (strcmp(d->name, "google.protobuf.Any") == 0) return parse_any(m, obj, p);
  unsigned char *seen = calloc(d->n_fields ? d->n_fields : 1, 1);
  if (!seen) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = parse_fields(m, obj, p, depth, seen);
  free(seen);
  return rc;
}

int pbjson_to_msg(ProtobufCMessage **out, const ProtobufCMessageDescriptor *desc,
                  const json_t *json) {
  *out = NULL;
  ProtobufCMessage *m = new_message(desc);
  if (!m) return dd_err_set(DD_ENOMEM, "out of memory");
  pbjson__path p = {.len = 0};
  int rc = parse_message(m, json, &p, 0);
  if (rc != 0) {
    protobuf_c_message_free_unpacked(m, NULL);
    return rc;
  }
  *out = m;
  return 0;
}
