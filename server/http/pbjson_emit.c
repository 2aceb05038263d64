/* pbjson_emit.c: protobuf-c message -> proto3 JSON (pbjson_from_msg), by walking the
 * message's descriptor. See pbjson.h for the mapping. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/pbjson_int.h"

static json_t *emit_message(const ProtobufCMessage *m, int depth);

/* ---- scalars ------------------------------------------------------------------------- */

static json_t *emit_double(double d) {
  if (isnan(d)) return json_string("NaN");
  if (isinf(d)) return json_string(d > 0 ? "Infinity" : "-Infinity");
  return json_real(d);
}

/* Strings must be UTF-8 for jansson; protobuf-c does not check, so bad bytes become
 * U+FFFD rather than failing the whole response. */
static json_t *emit_string_lossy(const char *s, size_t n) {
  char *buf = malloc(n * 3 + 1);
  if (!buf) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < n;) {
    size_t k = 1;
    unsigned char c = (unsigned char)s[i];
    if (c >= 0xC2 && c <= 0xDF) k = 2;
    else if (c >= 0xE0 && c <= 0xEF) k = 3;
    else if (c >= 0xF0 && c <= 0xF4) k = 4;
    else if (c >= 0x80) k = 0;
    int ok = k > 0 && i + k <= n;
    for (size_t j = 1; ok && j < k; j++)
      ok = ((unsigned char)s[i + j] & 0xC0) == 0x80;
    if (ok && k > 1) {
      json_t *probe = json_stringn(s + i, k); /* rejects overlongs and surrogates */
      ok = probe != NULL;
      json_decref(probe);
    }
    if (ok && c != 0) {
      memcpy(buf + o, s + i, k);
      o += k;
      i += k;
    } else {
      memcpy(buf + o, "\xEF\xBF\xBD", 3);
      o += 3;
      i += 1;
    }
  }
  json_t *j = json_stringn(buf, o);
  free(buf);
  return j;
}

static json_t *emit_string(const char *s) {
  size_t n = strlen(s);
  json_t *j = json_stringn(s, n);
  return j ? j : emit_string_lossy(s, n);
}

static json_t *emit_bytes(const ProtobufCBinaryData *b) {
  char *s = pbjson__b64_encode(b->data, b->len);
  if (!s) return NULL;
  json_t *j = json_string(s);
  free(s);
  return j;
}

static json_t *emit_enum(const ProtobufCFieldDescriptor *f, int32_t v) {
  const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, v);
  return ev ? json_string(ev->name) : json_integer(v);
}

static json_t *emit_int64_string(int is_unsigned, const void *p) {
  char buf[32];
  if (is_unsigned) snprintf(buf, sizeof buf, "%" PRIu64, *(const uint64_t *)p);
  else snprintf(buf, sizeof buf, "%" PRId64, *(const int64_t *)p);
  return json_string(buf);
}

/* One value of field f stored at p (an element, for repeated fields). */
static json_t *emit_value(const ProtobufCFieldDescriptor *f, const void *p, int depth) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32: return json_integer(*(const int32_t *)p);
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32: return json_integer(*(const uint32_t *)p);
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64: return emit_int64_string(0, p);
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: return emit_int64_string(1, p);
  case PROTOBUF_C_TYPE_FLOAT: {
    /* Through the shortest decimal form so 0.1f prints as 0.1, not 0.100000001. */
    char buf[32];
    snprintf(buf, sizeof buf, "%.9g", (double)*(const float *)p);
    return emit_double(isfinite(*(const float *)p) ? strtod(buf, NULL) : *(const float *)p);
  }
  case PROTOBUF_C_TYPE_DOUBLE: return emit_double(*(const double *)p);
  case PROTOBUF_C_TYPE_BOOL: return json_boolean(*(const protobuf_c_boolean *)p);
  case PROTOBUF_C_TYPE_ENUM: return emit_enum(f, *(const int32_t *)p);
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)p;
    return emit_string(s ? s : "");
  }
  case PROTOBUF_C_TYPE_BYTES: return emit_bytes(p);
  case PROTOBUF_C_TYPE_MESSAGE: {
    const ProtobufCMessage *sub = *(ProtobufCMessage *const *)p;
    return sub ? emit_message(sub, depth + 1) : json_object();
  }
  }
  return NULL;
}

/* ---- presence ------------------------------------------------------------------------ */

/* Whether a singular field is emitted: set oneof members always, proto2 optionals when
 * their has_ flag (or pointer) says so, proto3 fields when not the default. */
static int is_present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  const void *p = PBJSON__CAT(m, f->offset);
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
    return *(const uint32_t *)PBJSON__CAT(m, f->quantifier_offset) == f->id;
  if (f->label == PROTOBUF_C_LABEL_REQUIRED) return 1;
  if (f->label == PROTOBUF_C_LABEL_OPTIONAL) {
    if (f->type == PROTOBUF_C_TYPE_MESSAGE || f->type == PROTOBUF_C_TYPE_STRING) {
      const void *ptr = *(const void *const *)p;
      return ptr != NULL && ptr != f->default_value;
    }
    return *(const protobuf_c_boolean *)PBJSON__CAT(m, f->quantifier_offset) != 0;
  }
  return !pbjson__is_default(f, p);
}

/* ---- repeated, maps, messages -------------------------------------------------------- */

static json_t *emit_map(const ProtobufCFieldDescriptor *f, ProtobufCMessage *const *entries,
                        size_t n, int depth) {
  const ProtobufCFieldDescriptor *kf = &((const ProtobufCMessageDescriptor *)f->descriptor)->fields[0];
  const ProtobufCFieldDescriptor *vf = &((const ProtobufCMessageDescriptor *)f->descriptor)->fields[1];
  json_t *obj = json_object();
  for (size_t i = 0; obj && i < n; i++) {
    const ProtobufCMessage *e = entries[i];
    if (!e) continue;
    json_t *k = emit_value(kf, PBJSON__CAT(e, kf->offset), depth);
    json_t *v = emit_value(vf, PBJSON__CAT(e, vf->offset), depth);
    const char *key = NULL;
    if (json_is_string(k)) key = json_string_value(k);
    else if (json_is_boolean(k)) key = json_is_true(k) ? "true" : "false";
    char num[32];
    if (json_is_integer(k)) {
      snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(k));
      key = num;
    }
    if (!key || !v || json_object_set_new(obj, key, v) != 0) {
      json_decref(obj);
      obj = NULL;
    }
    json_decref(k);
  }
  return obj;
}

static json_t *emit_repeated(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
                             int depth) {
  size_t n = *(const size_t *)PBJSON__CAT(m, f->quantifier_offset);
  const char *arr = *(char *const *)PBJSON__CAT(m, f->offset);
  if (pbjson_is_map(f)) return emit_map(f, (ProtobufCMessage *const *)arr, n, depth);
  size_t sz = pbjson__elem_size(f->type);
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++) {
    if (json_array_append_new(a, emit_value(f, arr + i * sz, depth)) != 0) {
      json_decref(a);
      a = NULL;
    }
  }
  return a;
}

static json_t *emit_any(const ProtobufCMessage *m) {
  const ProtobufCFieldDescriptor *tf = protobuf_c_message_descriptor_get_field(m->descriptor, 1);
  const ProtobufCFieldDescriptor *vf = protobuf_c_message_descriptor_get_field(m->descriptor, 2);
  json_t *obj = json_object();
  if (!obj || !tf || !vf) return obj;
  const char *url = *(char *const *)PBJSON__CAT(m, tf->offset);
  const ProtobufCBinaryData *val = PBJSON__CAT(m, vf->offset);
  if (url && url[0] && json_object_set_new(obj, "@type", emit_string(url)) != 0) goto fail;
  if (val->len > 0 && json_object_set_new(obj, "value", emit_bytes(val)) != 0) goto fail;
  return obj;
fail:
  json_decref(obj);
  return NULL;
}

static json_t *emit_message(const ProtobufCMessage *m, int depth) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  if (depth > PBJSON__MAX_DEPTH) return NULL;
  if (strcmp(d->name, "google.protobuf.Any") == 0) return emit_any(m);
  json_t *obj = json_object();
  for (unsigned i = 0; obj && i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    json_t *v;
    if (f->label == PROTOBUF_C_LABEL_REPEATED) {
      if (*(const size_t *)PBJSON__CAT(m, f->quantifier_offset) == 0) continue;
      v = emit_repeated(m, f, depth);
    } else {
      if (!is_present(m, f)) continue;
      v = emit_value(f, PBJSON__CAT(m, f->offset), depth);
    }
    char name[256];
    if (json_object_set_new(obj, pbjson_json_name(f->name, name, sizeof name), v) != 0) {
      json_decref(obj);
      obj = NULL;
    }
  }
  return obj;
}

json_t *pbjson_from_msg(const ProtobufCMessage *msg) {
  if (!msg || !msg->descriptor) {
    dd_err_set(DD_EINTERNAL, "pbjson_from_msg: no message");
    return NULL;
  }
  json_t *j = emit_message(msg, 0);
  if (!j) dd_err_set(DD_ENOMEM, "cannot build JSON for %s (out of memory or nested too deep)",
                     msg->descriptor->name);
  return j;
}
