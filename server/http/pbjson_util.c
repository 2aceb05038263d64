/* pbjson_util.c: pieces the JSON codec's emitter and parser share: JSON names, field
 * lookup, map detection, error paths, base64 and strict text-to-scalar parsing. */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/pbjson_int.h"

/* ---- names and fields ---------------------------------------------------------------- */

char *pbjson_json_name(const char *proto_name, char *buf, size_t cap) {
  size_t n = 0;
  int upper = 0;
  if (cap == 0) return buf;
  for (const char *c = proto_name; *c && n + 1 < cap; c++) {
    if (*c == '_') {
      upper = 1;
      continue;
    }
    buf[n++] = (upper && *c >= 'a' && *c <= 'z') ? (char)(*c - 'a' + 'A') : *c;
    upper = 0;
  }
  buf[n] = '\0';
  return buf;
}

const ProtobufCFieldDescriptor *pbjson_find_field(const ProtobufCMessageDescriptor *desc,
                                                  const char *name) {
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(desc, name);
  if (f) return f;
  char json[256];
  for (unsigned i = 0; i < desc->n_fields; i++) {
    if (strcmp(pbjson_json_name(desc->fields[i].name, json, sizeof json), name) == 0)
      return &desc->fields[i];
  }
  return NULL;
}

/* protoc names a map's entry message "<CamelCaseFieldName>Entry" and gives it exactly
 * key = 1 and value = 2; protobuf-c keeps no map_entry option, so the shape decides. */
int pbjson_is_map(const ProtobufCFieldDescriptor *f) {
  if (f->label != PROTOBUF_C_LABEL_REPEATED || f->type != PROTOBUF_C_TYPE_MESSAGE) return 0;
  const ProtobufCMessageDescriptor *d = f->descriptor;
  if (!d || d->n_fields != 2) return 0;
  if (d->fields[0].id != 1 || strcmp(d->fields[0].name, "key") != 0) return 0;
  if (d->fields[1].id != 2 || strcmp(d->fields[1].name, "value") != 0) return 0;
  if (d->fields[0].label == PROTOBUF_C_LABEL_REPEATED ||
      d->fields[1].label == PROTOBUF_C_LABEL_REPEATED)
    return 0;
  char want[300];
  pbjson_json_name(f->name, want, sizeof want - 8);
  if (want[0] >= 'a' && want[0] <= 'z') want[0] = (char)(want[0] - 'a' + 'A');
  strcat(want, "Entry");
  return strcmp(d->short_name, want) == 0;
}

const ProtobufCFieldDescriptor *pbjson__oneof_member(const ProtobufCMessageDescriptor *d,
                                                     const ProtobufCFieldDescriptor *f,
                                                     uint32_t id) {
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *o = &d->fields[i];
    if ((o->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && o->quantifier_offset == f->quantifier_offset &&
        o->id == id)
      return o;
  }
  return NULL;
}

size_t pbjson__elem_size(ProtobufCType t) {
  switch (t) {
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: return 8;
  case PROTOBUF_C_TYPE_DOUBLE: return sizeof(double);
  case PROTOBUF_C_TYPE_FLOAT: return sizeof(float);
  case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
  case PROTOBUF_C_TYPE_STRING: return sizeof(char *);
  case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
  case PROTOBUF_C_TYPE_MESSAGE: return sizeof(ProtobufCMessage *);
  default: return 4; /* 32-bit ints and enums */
  }
}

int pbjson__is_default(const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: return *(const uint64_t *)p == 0;
  case PROTOBUF_C_TYPE_FLOAT: return *(const float *)p == 0 && !signbit(*(const float *)p);
  case PROTOBUF_C_TYPE_DOUBLE: return *(const double *)p == 0 && !signbit(*(const double *)p);
  case PROTOBUF_C_TYPE_BOOL: return *(const protobuf_c_boolean *)p == 0;
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)p;
    return s == NULL || s[0] == '\0';
  }
  case PROTOBUF_C_TYPE_BYTES: return ((const ProtobufCBinaryData *)p)->len == 0;
  case PROTOBUF_C_TYPE_MESSAGE: return *(ProtobufCMessage *const *)p == NULL;
  default: return *(const uint32_t *)p == 0;
  }
}

/* ---- error paths --------------------------------------------------------------------- */

static void path_append(pbjson__path *p, const char *s) {
  size_t n = strlen(s);
  if (p->len + n >= sizeof p->buf) n = sizeof p->buf - 1 - p->len;
  memcpy(p->buf + p->len, s, n);
  p->len += n;
  p->buf[p->len] = '\0';
}

size_t pbjson__path_field(pbjson__path *p, const char *name) {
  size_t old = p->len;
  if (p->len > 0) path_append(p, ".");
  path_append(p, name);
  return old;
}

size_t pbjson__path_index(pbjson__path *p, size_t i) {
  size_t old = p->len;
  char idx[32];
  snprintf(idx, sizeof idx, "[%zu]", i);
  path_append(p, idx);
  return old;
}

void pbjson__path_pop(pbjson__path *p, size_t old_len) {
  p->len = old_len;
  p->buf[old_len] = '\0';
}

int pbjson__fail(const pbjson__path *p, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (p && p->len > 0) return dd_err_set(DD_EINVAL, "%s: %s", p->buf, msg);
  return dd_err_set(DD_EINVAL, "%s", msg);
}

/* ---- base64 -------------------------------------------------------------------------- */

static const char b64_std[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *pbjson__b64_encode(const uint8_t *data, size_t len) {
  size_t outlen = (len + 2) / 3 * 4;
  char *out = malloc(outlen + 1);
  if (!out) return NULL;
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    uint32_t v = (uint32_t)data[i] << 16;
    if (i + 1 < len) v |= (uint32_t)data[i + 1] << 8;
    if (i + 2 < len) v |= data[i + 2];
    out[o++] = b64_std[(v >> 18) & 63];
    out[o++] = b64_std[(v >> 12) & 63];
    out[o++] = i + 1 < len ? b64_std[(v >> 6) & 63] : '=';
    out[o++] = i + 2 < len ? b64_std[v & 63] : '=';
  }
  out[o] = '\0';
  return out;
}

static int b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+' || c == '-') return 62;
  if (c == '/' || c == '_') return 63;
  return -1;
}

int pbjson__b64_decode(const char *text, size_t len, uint8_t **out, size_t *out_len) {
  while (len > 0 && text[len - 1] == '=') len--;
  if (len % 4 == 1) return -1;
  uint8_t *buf = malloc(len / 4 * 3 + 3);
  if (!buf) return -1;
  size_t o = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < len; i++) {
    int v = b64_value(text[i]);
    if (v < 0) {
      free(buf);
      return -1;
    }
    acc = (acc << 6) | (uint32_t)v;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      buf[o++] = (uint8_t)(acc >> bits);
    }
  }
  *out = buf;
  *out_len = o;
  return 0;
}

/* ---- strict text to scalar ----------------------------------------------------------- */

static int parse_i64(const char *s, int64_t *out) {
  const char *d = s[0] == '-' ? s + 1 : s;
  if (*d < '0' || *d > '9') return -1;
  for (const char *c = d; *c; c++)
    if (*c < '0' || *c > '9') return -1;
  errno = 0;
  long long v = strtoll(s, NULL, 10);
  if (errno == ERANGE) return -1;
  *out = v;
  return 0;
}

static int parse_u64(const char *s, uint64_t *out) {
  if (*s < '0' || *s > '9') return -1;
  for (const char *c = s; *c; c++)
    if (*c < '0' || *c > '9') return -1;
  errno = 0;
  unsigned long long v = strtoull(s, NULL, 10);
  if (errno == ERANGE) return -1;
  *out = v;
  return 0;
}

static int parse_double(const char *s, double *out) {
  if (strcmp(s, "NaN") == 0) return *out = NAN, 0;
  if (strcmp(s, "Infinity") == 0) return *out = INFINITY, 0;
  if (strcmp(s, "-Infinity") == 0) return *out = -INFINITY, 0;
  if (*s == '\0') return -1;
  for (const char *c = s; *c; c++)
    if (!strchr("0123456789+-.eE", *c)) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end != '\0' || (errno == ERANGE && isinf(v))) return -1;
  *out = v;
  return 0;
}

static int text_enum(const ProtobufCFieldDescriptor *f, const char *text, int32_t *out) {
  const ProtobufCEnumValue *ev =
      protobuf_c_enum_descriptor_get_value_by_name(f->descriptor, text);
  if (ev) return *out = ev->value, 0;
  int64_t v;
  if (parse_i64(text, &v) != 0 || v < INT32_MIN || v > INT32_MAX) return -1;
  *out = (int32_t)v;
  return 0;
}

int pbjson__text_scalar(const ProtobufCFieldDescriptor *f, const char *text, void *dst,
                        const pbjson__path *p) {
  int64_t i;
  uint64_t u;
  double d;
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32:
    if (parse_i64(text, &i) != 0 || i < INT32_MIN || i > INT32_MAX)
      return pbjson__fail(p, "expected 32-bit integer, got \"%.64s\"", text);
    *(int32_t *)dst = (int32_t)i;
    return 0;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32:
    if (parse_u64(text, &u) != 0 || u > UINT32_MAX)
      return pbjson__fail(p, "expected unsigned 32-bit integer, got \"%.64s\"", text);
    *(uint32_t *)dst = (uint32_t)u;
    return 0;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
    if (parse_i64(text, &i) != 0)
      return pbjson__fail(p, "expected 64-bit integer, got \"%.64s\"", text);
    *(int64_t *)dst = i;
    return 0;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
    if (parse_u64(text, &u) != 0)
      return pbjson__fail(p, "expected unsigned 64-bit integer, got \"%.64s\"", text);
    *(uint64_t *)dst = u;
    return 0;
  case PROTOBUF_C_TYPE_DOUBLE:
    if (parse_double(text, &d) != 0) return pbjson__fail(p, "expected number, got \"%.64s\"", text);
    *(double *)dst = d;
    return 0;
  case PROTOBUF_C_TYPE_FLOAT:
    if (parse_double(text, &d) != 0 || (isfinite(d) && fabs(d) > FLT_MAX))
      return pbjson__fail(p, "expected float, got \"%.64s\"", text);
    *(float *)dst = (float)d;
    return 0;
  case PROTOBUF_C_TYPE_BOOL:
    if (strcmp(text, "true") == 0 || strcmp(text, "1") == 0) return *(protobuf_c_boolean *)dst = 1, 0;
    if (strcmp(text, "false") == 0 || strcmp(text, "0") == 0) return *(protobuf_c_boolean *)dst = 0, 0;
    return pbjson__fail(p, "expected boolean, got \"%.64s\"", text);
  case PROTOBUF_C_TYPE_ENUM:
    if (text_enum(f, text, (int32_t *)dst) != 0)
      return pbjson__fail(p, "unknown value \"%.64s\" for enum %s", text,
                          ((const ProtobufCEnumDescriptor *)f->descriptor)->name);
    return 0;
  default:
    return pbjson__fail(p, "not a scalar field");
  }
}
