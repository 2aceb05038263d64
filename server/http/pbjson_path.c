/* pbjson_path.c: reading and writing one scalar field named by a dotted path from URL
 * text: how REST path variables and query parameters reach the request message. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/pbjson_int.h"

/* Copies the segment of *path up to the next '.' into seg and advances *path past it.
 * Returns 1 when it was the last segment, 0 when more follow, -1 when it is empty or too
 * long. */
static int next_segment(const char **path, char *seg, size_t cap) {
  const char *dot = strchr(*path, '.');
  size_t n = dot ? (size_t)(dot - *path) : strlen(*path);
  if (n == 0 || n >= cap) return -1;
  memcpy(seg, *path, n);
  seg[n] = '\0';
  *path += n + (dot ? 1 : 0);
  return dot ? 0 : 1;
}

static int oneof_conflict(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f,
                          const pbjson__path *p) {
  if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) return 0;
  uint32_t which = *(const uint32_t *)PBJSON__CAT(m, f->quantifier_offset);
  if (which == 0 || which == f->id) return 0;
  const ProtobufCFieldDescriptor *o = pbjson__oneof_member(m->descriptor, f, which);
  return pbjson__fail(p, "only one of \"%s\" and \"%s\" may be set (they share a oneof)",
                      o ? o->name : "?", f->name);
}

/* Whether f's singular storage in m holds a value this code may free. */
static int owns_value(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
    return *(const uint32_t *)PBJSON__CAT(m, f->quantifier_offset) == f->id;
  return 1;
}

static void mark_set(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)
    *(uint32_t *)PBJSON__AT(m, f->quantifier_offset) = f->id;
  else if (f->label == PROTOBUF_C_LABEL_OPTIONAL && f->type != PROTOBUF_C_TYPE_STRING &&
           f->type != PROTOBUF_C_TYPE_MESSAGE)
    *(protobuf_c_boolean *)PBJSON__AT(m, f->quantifier_offset) = 1;
}

/* ---- setting ------------------------------------------------------------------------- */

/* Writes text into the value slot dst of f; old string/bytes in it are freed when
 * owned. */
static int set_text(const ProtobufCFieldDescriptor *f, const char *text, void *dst, int owned,
                    const pbjson__path *p) {
  if (f->type == PROTOBUF_C_TYPE_STRING) {
    char *s = strdup(text);
    if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
    char *old = *(char **)dst;
    if (owned && old && old != (const char *)f->default_value) free(old);
    *(char **)dst = s;
    return 0;
  }
  if (f->type == PROTOBUF_C_TYPE_BYTES) {
    ProtobufCBinaryData *b = dst, nb;
    if (pbjson__b64_decode(text, strlen(text), &nb.data, &nb.len) != 0)
      return pbjson__fail(p, "invalid base64");
    const ProtobufCBinaryData *def = f->default_value;
    if (owned && b->data && (!def || def->data != b->data)) free(b->data);
    *b = nb;
    return 0;
  }
  return pbjson__text_scalar(f, text, dst, p);
}

static int append_text(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const char *text,
                       const pbjson__path *p) {
  if (pbjson_is_map(f)) return pbjson__fail(p, "a map field cannot be set from the URL");
  size_t *n = PBJSON__AT(m, f->quantifier_offset);
  char **arr = PBJSON__AT(m, f->offset);
  size_t sz = pbjson__elem_size(f->type);
  char *grown = realloc(*arr, (*n + 1) * sz);
  if (!grown) return dd_err_set(DD_ENOMEM, "out of memory");
  *arr = grown;
  memset(grown + *n * sz, 0, sz);
  int rc = set_text(f, text, grown + *n * sz, 0, p);
  if (rc == 0) ++*n;
  return rc;
}

/* The sub-message in field f of m, created when absent. */
static int descend(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, ProtobufCMessage **out,
                   const pbjson__path *p) {
  if (f->type != PROTOBUF_C_TYPE_MESSAGE || f->label == PROTOBUF_C_LABEL_REPEATED)
    return pbjson__fail(p, "not a singular message field");
  int rc = oneof_conflict(m, f, p);
  if (rc != 0) return rc;
  ProtobufCMessage **slot = PBJSON__AT(m, f->offset);
  if (!owns_value(m, f) || *slot == NULL) {
    const ProtobufCMessageDescriptor *d = f->descriptor;
    ProtobufCMessage *sub = calloc(1, d->sizeof_message);
    if (!sub) return dd_err_set(DD_ENOMEM, "out of memory");
    protobuf_c_message_init(d, sub);
    *slot = sub;
    mark_set(m, f);
  }
  *out = *slot;
  return 0;
}

int pbjson_set_path_field(ProtobufCMessage *msg, const char *field_path, const char *text) {
  pbjson__path p = {.len = 0};
  char seg[256];
  const char *rest = field_path;
  ProtobufCMessage *m = msg;
  for (;;) {
    int last = next_segment(&rest, seg, sizeof seg);
    if (last < 0) return pbjson__fail(NULL, "bad field path \"%.128s\"", field_path);
    const ProtobufCFieldDescriptor *f = pbjson_find_field(m->descriptor, seg);
    if (!f) return pbjson__fail(&p, "unknown field \"%s\" in %s", seg, m->descriptor->name);
    pbjson__path_field(&p, seg);
    if (!last) {
      int rc = descend(m, f, &m, &p);
      if (rc != 0) return rc;
      continue;
    }
    if (f->type == PROTOBUF_C_TYPE_MESSAGE)
      return pbjson__fail(&p, "is a message; name one of its fields");
    if (f->label == PROTOBUF_C_LABEL_REPEATED) return append_text(m, f, text, &p);
    int rc = oneof_conflict(m, f, &p);
    if (rc == 0) rc = set_text(f, text, PBJSON__AT(m, f->offset), owns_value(m, f), &p);
    if (rc == 0) mark_set(m, f);
    return rc;
  }
}

/* ---- reading ------------------------------------------------------------------------- */

static int render(const ProtobufCFieldDescriptor *f, const void *v, char *buf, size_t cap) {
  int n;
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32: n = snprintf(buf, cap, "%" PRId32, *(const int32_t *)v); break;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32: n = snprintf(buf, cap, "%" PRIu32, *(const uint32_t *)v); break;
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64: n = snprintf(buf, cap, "%" PRId64, *(const int64_t *)v); break;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: n = snprintf(buf, cap, "%" PRIu64, *(const uint64_t *)v); break;
  case PROTOBUF_C_TYPE_FLOAT: n = snprintf(buf, cap, "%.9g", (double)*(const float *)v); break;
  case PROTOBUF_C_TYPE_DOUBLE: n = snprintf(buf, cap, "%.17g", *(const double *)v); break;
  case PROTOBUF_C_TYPE_BOOL: n = snprintf(buf, cap, "%s", *(const protobuf_c_boolean *)v ? "true" : "false"); break;
  case PROTOBUF_C_TYPE_ENUM: {
    int32_t e = *(const int32_t *)v;
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, e);
    n = ev ? snprintf(buf, cap, "%s", ev->name) : snprintf(buf, cap, "%" PRId32, e);
    break;
  }
  case PROTOBUF_C_TYPE_STRING: n = snprintf(buf, cap, "%s", *(char *const *)v); break;
  case PROTOBUF_C_TYPE_BYTES: {
    const ProtobufCBinaryData *b = v;
    char *s = pbjson__b64_encode(b->data, b->len);
    if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
    n = snprintf(buf, cap, "%s", s);
    free(s);
    break;
  }
  default: return dd_err_set(DD_EINVAL, "field \"%s\" is not a scalar", f->name);
  }
  if (n < 0 || (size_t)n >= cap) return dd_err_set(DD_ERANGE, "value of \"%s\" too long", f->name);
  return 0;
}

int pbjson_get_path_field(const ProtobufCMessage *msg, const char *field_path, char *buf,
                          size_t cap) {
  char seg[256];
  const char *rest = field_path;
  const ProtobufCMessage *m = msg;
  for (;;) {
    int last = next_segment(&rest, seg, sizeof seg);
    if (last < 0) return dd_err_set(DD_EINVAL, "bad field path \"%.128s\"", field_path);
    const ProtobufCFieldDescriptor *f = pbjson_find_field(m->descriptor, seg);
    if (!f) return dd_err_set(DD_EINVAL, "unknown field \"%s\" in %s", seg, m->descriptor->name);
    if (f->label == PROTOBUF_C_LABEL_REPEATED)
      return dd_err_set(DD_EINVAL, "field \"%s\" is repeated", seg);
    if (!owns_value(m, f)) return dd_err_set(DD_ENOTFOUND, "field \"%s\" is not set", seg);
    const void *v = PBJSON__CAT(m, f->offset);
    if (!last) {
      if (f->type != PROTOBUF_C_TYPE_MESSAGE)
        return dd_err_set(DD_EINVAL, "field \"%s\" is not a message", seg);
      m = *(ProtobufCMessage *const *)v;
      if (!m) return dd_err_set(DD_ENOTFOUND, "field \"%s\" is not set", seg);
      continue;
    }
    if (f->type == PROTOBUF_C_TYPE_MESSAGE)
      return dd_err_set(DD_EINVAL, "field \"%s\" is a message", seg);
    if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) && pbjson__is_default(f, v))
      return dd_err_set(DD_ENOTFOUND, "field \"%s\" is not set", seg);
    return render(f, v, buf, cap);
  }
}
