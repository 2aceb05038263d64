/* lance_rest_json.c: the reflective Lance JSON codec (lance_rest_json.h). */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/native/lance_rest_json.h"

/* The layout of every generated map entry. */
typedef struct lj_kv {
  ProtobufCMessage base;
  char *key;
  char *value;
} lj_kv;

#define LJ_AT(msg, off, type) ((type *)((char *)(msg) + (off)))

static int lj_is_map(const ProtobufCFieldDescriptor *f) {
  const ProtobufCMessageDescriptor *d = f->descriptor;
  return f->type == PROTOBUF_C_TYPE_MESSAGE && f->label == PROTOBUF_C_LABEL_REPEATED && d &&
         d->n_fields == 2 && strcmp(d->fields[0].name, "key") == 0 &&
         strcmp(d->fields[1].name, "value") == 0;
}

static int lj_bad(const char *field, const char *want) {
  return dd_err_set(DD_EINVAL, "%s: expected %s", field, want);
}

/* ---- parsing ------------------------------------------------------------------------------ */

static int lj_set_string(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const char *s) {
  char **slot = LJ_AT(m, f->offset, char *);
  char *v = strdup(s);
  if (!v) return dd_err_set(DD_ENOMEM, "out of memory");
  if (*slot && *slot != (char *)protobuf_c_empty_string) free(*slot);
  *slot = v;
  return 0;
}

static int lj_strings(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const json_t *v) {
  if (!json_is_array(v)) return lj_bad(f->name, "an array of strings");
  size_t n = json_array_size(v);
  char **arr = calloc(n ? n : 1, sizeof *arr);
  if (!arr) return dd_err_set(DD_ENOMEM, "out of memory");
  *LJ_AT(m, f->offset, char **) = arr; /* owned by m from here on */
  for (size_t i = 0; i < n; i++) {
    const json_t *e = json_array_get(v, i);
    if (!json_is_string(e)) return lj_bad(f->name, "an array of strings");
    if (!(arr[i] = strdup(json_string_value(e)))) return dd_err_set(DD_ENOMEM, "out of memory");
    *LJ_AT(m, f->quantifier_offset, size_t) = i + 1;
  }
  return 0;
}

static int lj_map(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const json_t *v) {
  if (!json_is_object(v)) return lj_bad(f->name, "an object of strings");
  size_t n = json_object_size(v), i = 0;
  lj_kv **arr = calloc(n ? n : 1, sizeof *arr);
  const char *key;
  const json_t *val;
  if (!arr) return dd_err_set(DD_ENOMEM, "out of memory");
  *LJ_AT(m, f->offset, lj_kv **) = arr; /* owned by m from here on */
  json_object_foreach((json_t *)v, key, val) {
    if (!json_is_string(val)) return dd_err_set(DD_EINVAL, "%s.%s: expected a string", f->name, key);
    lj_kv *kv = malloc(sizeof *kv);
    if (!kv) return dd_err_set(DD_ENOMEM, "out of memory");
    *kv = (lj_kv){PROTOBUF_C_MESSAGE_INIT(f->descriptor), strdup(key), strdup(json_string_value(val))};
    arr[i] = kv;
    *LJ_AT(m, f->quantifier_offset, size_t) = ++i;
    if (!kv->key || !kv->value) return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

/* Marks a field alone in a oneof as present. */
static void lj_present(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) *LJ_AT(m, f->quantifier_offset, uint32_t) = f->id;
}

static int lj_int(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, json_int_t v) {
  if (f->type == PROTOBUF_C_TYPE_INT32) {
    if (v < INT32_MIN || v > INT32_MAX) return lj_bad(f->name, "a 32-bit integer");
    *LJ_AT(m, f->offset, int32_t) = (int32_t)v;
  } else {
    *LJ_AT(m, f->offset, int64_t) = (int64_t)v;
  }
  lj_present(m, f);
  return 0;
}

static int lj_field(ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, const json_t *v) {
  if (json_is_null(v)) return 0;
  if (lj_is_map(f)) return lj_map(m, f, v);
  if (f->label == PROTOBUF_C_LABEL_REPEATED) return lj_strings(m, f, v);
  switch (f->type) {
  case PROTOBUF_C_TYPE_STRING:
    if (!json_is_string(v)) return lj_bad(f->name, "a string");
    return lj_set_string(m, f, json_string_value(v));
  case PROTOBUF_C_TYPE_BOOL:
    if (!json_is_boolean(v)) return lj_bad(f->name, "true or false");
    *LJ_AT(m, f->offset, protobuf_c_boolean) = json_is_true(v);
    lj_present(m, f);
    return 0;
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_INT64:
    if (!json_is_integer(v)) return lj_bad(f->name, "an integer");
    return lj_int(m, f, json_integer_value(v));
  default:
    return dd_err_set(DD_EINTERNAL, "%s: field type not handled", f->name);
  }
}

int dd_native__lance_json_to_msg(ProtobufCMessage *msg, const json_t *obj) {
  const ProtobufCMessageDescriptor *d = msg->descriptor;
  if (!json_is_object(obj)) return dd_err_set(DD_EINVAL, "request body: expected a JSON object");
  for (unsigned i = 0; i < d->n_fields; i++) {
    const json_t *v = json_object_get(obj, d->fields[i].name);
    int rc = v ? lj_field(msg, &d->fields[i], v) : 0;
    if (rc) return rc;
  }
  return 0;
}

int dd_native__lance_query_to_field(ProtobufCMessage *msg, const char *field, const char *value) {
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, field);
  if (!f || f->label == PROTOBUF_C_LABEL_REPEATED)
    return dd_err_set(DD_EINTERNAL, "%s: not a scalar field", field);
  if (f->type == PROTOBUF_C_TYPE_STRING) return lj_set_string(msg, f, value);
  if (f->type == PROTOBUF_C_TYPE_BOOL) {
    if (strcmp(value, "true") && strcmp(value, "false")) return lj_bad(field, "true or false");
    *LJ_AT(msg, f->offset, protobuf_c_boolean) = strcmp(value, "true") == 0;
    lj_present(msg, f);
    return 0;
  }
  char *end;
  errno = 0;
  long long v = strtoll(value, &end, 10);
  if (!*value || *end || errno) return lj_bad(field, "an integer");
  return lj_int(msg, f, (json_int_t)v);
}

/* ---- emitting ------------------------------------------------------------------------------ */

static int lj_always(const char *name) {
  return !strcmp(name, "namespaces") || !strcmp(name, "tables") || !strcmp(name, "properties");
}

static json_t *lj_emit_map(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  size_t n = *LJ_AT(m, f->quantifier_offset, size_t);
  lj_kv *const *kv = *LJ_AT(m, f->offset, lj_kv **);
  json_t *o = json_object();
  for (size_t i = 0; o && i < n; i++)
    if (json_object_set_new(o, kv[i]->key, json_string(kv[i]->value))) json_decref(o), o = NULL;
  return o;
}

static json_t *lj_emit_strings(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  size_t n = *LJ_AT(m, f->quantifier_offset, size_t);
  char *const *s = *LJ_AT(m, f->offset, char **);
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++)
    if (json_array_append_new(a, json_string(s[i]))) json_decref(a), a = NULL;
  return a;
}

/* The JSON value of one field, or NULL (with *skip) when it is left out. */
static json_t *lj_emit_field(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f, int *skip) {
  int oneof = f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF;
  *skip = 0;
  if (oneof && *LJ_AT(m, f->quantifier_offset, uint32_t) != f->id) return *skip = 1, NULL;
  if (f->label == PROTOBUF_C_LABEL_REPEATED) {
    if (!*LJ_AT(m, f->quantifier_offset, size_t) && !lj_always(f->name)) return *skip = 1, NULL;
    return lj_is_map(f) ? lj_emit_map(m, f) : lj_emit_strings(m, f);
  }
  switch (f->type) {
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *LJ_AT(m, f->offset, char *);
    if (!s || !*s) return *skip = 1, NULL;
    return json_string(s);
  }
  case PROTOBUF_C_TYPE_BOOL:
    if (!oneof && !*LJ_AT(m, f->offset, protobuf_c_boolean)) return *skip = 1, NULL;
    return json_boolean(*LJ_AT(m, f->offset, protobuf_c_boolean));
  case PROTOBUF_C_TYPE_INT32:
    if (!oneof && !*LJ_AT(m, f->offset, int32_t)) return *skip = 1, NULL;
    return json_integer(*LJ_AT(m, f->offset, int32_t));
  case PROTOBUF_C_TYPE_INT64:
    if (!oneof && !*LJ_AT(m, f->offset, int64_t)) return *skip = 1, NULL;
    return json_integer((json_int_t)*LJ_AT(m, f->offset, int64_t));
  default:
    return *skip = 1, NULL;
  }
}

json_t *dd_native__lance_msg_to_json(const ProtobufCMessage *msg) {
  const ProtobufCMessageDescriptor *d = msg->descriptor;
  json_t *o = json_object();
  for (unsigned i = 0; o && i < d->n_fields; i++) {
    int skip;
    json_t *v = lj_emit_field(msg, &d->fields[i], &skip);
    if (skip) continue;
    if (!v || json_object_set_new(o, d->fields[i].name, v)) json_decref(o), o = NULL;
  }
  return o;
}
