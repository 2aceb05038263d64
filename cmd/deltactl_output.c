/* deltactl_output.c: how deltactl prints responses. JSON goes through the project's proto3
 * JSON codec (pbjson_from_msg); the text form walks the protobuf-c descriptors: one object
 * as aligned `key: value` lines (empty fields left out), a list as aligned columns. */
#include <inttypes.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/deltactl_common.h"
#include "common/err.h"
#include "server/http/pbjson.h"

/* ---- a growing string ----------------------------------------------------------------- */

typedef struct dctl__sb {
  char *s;
  size_t len, cap;
  int oom;
} dctl__sb;

static void dctl__sb_add(dctl__sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void dctl__sb_add(dctl__sb *b, const char *fmt, ...) {
  if (b->oom) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0 || b->len + (size_t)n + 1 > b->cap) {
    size_t cap = (b->len + (size_t)(n < 0 ? 0 : n) + 1) * 2;
    char *s = realloc(b->s, cap);
    if (!s || n < 0) {
      b->oom = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(b->s + b->len, b->cap - b->len, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

/* Returns the built string (caller frees), "" when nothing was added, NULL when out of memory. */
static char *dctl__sb_take(dctl__sb *b) {
  if (b->oom) {
    free(b->s);
    return NULL;
  }
  return b->s ? b->s : strdup("");
}

/* ---- field values --------------------------------------------------------------------- */

static const void *dctl__member(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  return (const char *)m + f->offset;
}

/* Fields of a oneof are present only when their case is set. */
static int dctl__present(const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  if (!(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF)) return 1;
  return *(const uint32_t *)((const char *)m + f->quantifier_offset) == f->id;
}

static int dctl__is_time(const ProtobufCFieldDescriptor *f) {
  size_t n = strlen(f->name);
  return f->type == PROTOBUF_C_TYPE_INT64 && n > 3 && strcmp(f->name + n - 3, "_at") == 0;
}

static void dctl__add_time(dctl__sb *b, int64_t ms) {
  if (ms == 0) return;
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  char buf[32];
  if (!gmtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm)) {
    dctl__sb_add(b, "%" PRId64, ms);
    return;
  }
  dctl__sb_add(b, "%s.%03dZ", buf, (int)(ms % 1000));
}

/* Appends one scalar value (p points at it). */
static void dctl__add_scalar(dctl__sb *b, const ProtobufCFieldDescriptor *f, const void *p) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT32:
  case PROTOBUF_C_TYPE_SINT32:
  case PROTOBUF_C_TYPE_SFIXED32: dctl__sb_add(b, "%" PRId32, *(const int32_t *)p); break;
  case PROTOBUF_C_TYPE_UINT32:
  case PROTOBUF_C_TYPE_FIXED32: dctl__sb_add(b, "%" PRIu32, *(const uint32_t *)p); break;
  case PROTOBUF_C_TYPE_INT64:
    if (dctl__is_time(f)) dctl__add_time(b, *(const int64_t *)p);
    else dctl__sb_add(b, "%" PRId64, *(const int64_t *)p);
    break;
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64: dctl__sb_add(b, "%" PRId64, *(const int64_t *)p); break;
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64: dctl__sb_add(b, "%" PRIu64, *(const uint64_t *)p); break;
  case PROTOBUF_C_TYPE_FLOAT: dctl__sb_add(b, "%g", (double)*(const float *)p); break;
  case PROTOBUF_C_TYPE_DOUBLE: dctl__sb_add(b, "%g", *(const double *)p); break;
  case PROTOBUF_C_TYPE_BOOL: dctl__sb_add(b, "%s", *(const protobuf_c_boolean *)p ? "true" : "false"); break;
  case PROTOBUF_C_TYPE_ENUM: {
    const ProtobufCEnumValue *ev = protobuf_c_enum_descriptor_get_value(f->descriptor, *(const int *)p);
    if (ev) dctl__sb_add(b, "%s", ev->name);
    else dctl__sb_add(b, "%d", *(const int *)p);
    break;
  }
  case PROTOBUF_C_TYPE_STRING: {
    const char *s = *(char *const *)p;
    dctl__sb_add(b, "%s", s ? s : "");
    break;
  }
  case PROTOBUF_C_TYPE_BYTES: dctl__sb_add(b, "<%zu bytes>", ((const ProtobufCBinaryData *)p)->len); break;
  case PROTOBUF_C_TYPE_MESSAGE: break; /* handled by the callers */
  }
}

static size_t dctl__type_size(const ProtobufCFieldDescriptor *f) {
  switch (f->type) {
  case PROTOBUF_C_TYPE_INT64:
  case PROTOBUF_C_TYPE_SINT64:
  case PROTOBUF_C_TYPE_SFIXED64:
  case PROTOBUF_C_TYPE_UINT64:
  case PROTOBUF_C_TYPE_FIXED64:
  case PROTOBUF_C_TYPE_DOUBLE: return 8;
  case PROTOBUF_C_TYPE_STRING:
  case PROTOBUF_C_TYPE_MESSAGE: return sizeof(void *);
  case PROTOBUF_C_TYPE_BYTES: return sizeof(ProtobufCBinaryData);
  case PROTOBUF_C_TYPE_BOOL: return sizeof(protobuf_c_boolean);
  default: return 4;
  }
}

static int dctl__is_map_entry(const ProtobufCMessageDescriptor *d) {
  return d->n_fields == 2 && strcmp(d->fields[0].name, "key") == 0 &&
         strcmp(d->fields[1].name, "value") == 0;
}

/* Appends a repeated field as "a, b" (map fields as "k=v, k2=v2", sorted as sent). */
static void dctl__add_repeated(dctl__sb *b, const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  size_t n = *(const size_t *)((const char *)m + f->quantifier_offset);
  const char *arr = *(char *const *)dctl__member(m, f);
  size_t sz = dctl__type_size(f);
  for (size_t i = 0; i < n; i++) {
    if (i) dctl__sb_add(b, ", ");
    if (f->type != PROTOBUF_C_TYPE_MESSAGE) {
      dctl__add_scalar(b, f, arr + i * sz);
      continue;
    }
    const ProtobufCMessage *e = ((ProtobufCMessage *const *)arr)[i];
    const ProtobufCMessageDescriptor *ed = f->descriptor;
    if (dctl__is_map_entry(ed)) {
      dctl__add_scalar(b, &ed->fields[0], dctl__member(e, &ed->fields[0]));
      dctl__sb_add(b, "=");
      dctl__add_scalar(b, &ed->fields[1], dctl__member(e, &ed->fields[1]));
    } else {
      dctl__sb_add(b, "<%s>", ed->short_name);
    }
  }
}

/* Appends a non-message field's text. */
static void dctl__add_field(dctl__sb *b, const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f) {
  if (!dctl__present(m, f)) return;
  if (f->label == PROTOBUF_C_LABEL_REPEATED) dctl__add_repeated(b, m, f);
  else dctl__add_scalar(b, f, dctl__member(m, f));
}

char *dctl_field_text(const ProtobufCMessage *msg, const char *field) {
  dctl__sb b = {0};
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(msg->descriptor, field);
  if (f) dctl__add_field(&b, msg, f);
  return dctl__sb_take(&b);
}

/* ---- one object: key: value lines ----------------------------------------------------- */

typedef struct dctl__kv {
  char *key[256];
  char *val[256];
  size_t n;
  int oom;
} dctl__kv;

static void dctl__kv_push(dctl__kv *kv, const char *prefix, const char *name, char *val) {
  if (!val || kv->n >= sizeof kv->key / sizeof kv->key[0]) {
    kv->oom |= !val;
    free(val);
    return;
  }
  dctl__sb k = {0};
  dctl__sb_add(&k, "%s%s", prefix, name);
  kv->key[kv->n] = dctl__sb_take(&k);
  kv->val[kv->n++] = val;
  kv->oom |= !kv->key[kv->n - 1];
}

static void dctl__collect(dctl__kv *kv, const ProtobufCMessage *m, const char *prefix) {
  const ProtobufCMessageDescriptor *d = m->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (!dctl__present(m, f)) continue;
    if (f->type == PROTOBUF_C_TYPE_MESSAGE && f->label != PROTOBUF_C_LABEL_REPEATED) {
      const ProtobufCMessage *sub = *(ProtobufCMessage *const *)dctl__member(m, f);
      if (!sub) continue;
      dctl__sb p = {0};
      dctl__sb_add(&p, "%s%s.", prefix, f->name);
      char *np = dctl__sb_take(&p);
      if (np) dctl__collect(kv, sub, np);
      kv->oom |= !np;
      free(np);
      continue;
    }
    dctl__sb b = {0};
    dctl__add_field(&b, m, f);
    char *val = dctl__sb_take(&b);
    if (val && !val[0]) {
      free(val); /* empty values (and the secrets the server blanks) are left out */
      continue;
    }
    dctl__kv_push(kv, prefix, f->name, val);
  }
}

static int dctl__print_kv(const ProtobufCMessage *msg) {
  dctl__kv kv;
  kv.n = 0;
  kv.oom = 0;
  dctl__collect(&kv, msg, "");
  int width = 0;
  for (size_t i = 0; i < kv.n; i++)
    if ((int)strlen(kv.key[i]) > width) width = (int)strlen(kv.key[i]);
  for (size_t i = 0; i < kv.n && !kv.oom; i++) {
    int pad = width - (int)strlen(kv.key[i]);
    printf("%s:%*s %s\n", kv.key[i], pad, "", kv.val[i]);
  }
  for (size_t i = 0; i < kv.n; i++) {
    free(kv.key[i]);
    free(kv.val[i]);
  }
  return kv.oom ? dctl_fail(DCTL_EXIT_LOCAL, "out of memory") : 0;
}

/* ---- JSON ----------------------------------------------------------------------------- */

static int dctl__print_json(const ProtobufCMessage *msg) {
  json_t *j = pbjson_from_msg(msg);
  if (!j) return dctl_fail(DCTL_EXIT_LOCAL, "cannot encode %s as JSON: %s", msg->descriptor->name, dd_err_msg());
  char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(j);
  if (!s) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  puts(s);
  free(s);
  return 0;
}

int dctl_print_msg(const ProtobufCMessage *msg) {
  if (dctl_globals_get()->output == DCTL_OUT_JSON) return dctl__print_json(msg);
  return dctl__print_kv(msg);
}

int dctl_print_done(const char *fmt, ...) {
  if (dctl_globals_get()->output == DCTL_OUT_JSON) {
    puts("{}");
    return 0;
  }
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  putchar('\n');
  return 0;
}

/* ---- lists: aligned columns ----------------------------------------------------------- */

static char *dctl__cell(const ProtobufCMessage *item, const dctl_col *c) {
  return c->fmt ? c->fmt(item) : dctl_field_text(item, c->field);
}

/* Prints one row padded to the widths; trailing empty cells leave no trailing blanks. */
static void dctl__print_row(char **cells, const int *width, size_t ncols) {
  size_t last = ncols;
  while (last > 1 && !cells[last - 1][0]) last--;
  for (size_t j = 0; j + 1 < last; j++) printf("%-*s  ", width[j], cells[j]);
  printf("%s\n", cells[last - 1]);
}

static int dctl__print_table(ProtobufCMessage *const *items, size_t n, const dctl_col *cols) {
  size_t ncols = 0;
  while (cols[ncols].header) ncols++;
  int rc = 0;
  int *width = calloc(ncols, sizeof *width);
  char **cells = calloc((n + 1) * ncols, sizeof *cells);
  if (!width || !cells) goto oom;
  for (size_t j = 0; j < ncols; j++) {
    if (!(cells[j] = strdup(cols[j].header))) goto oom;
    for (size_t i = 0; i < n; i++)
      if (!(cells[(i + 1) * ncols + j] = dctl__cell(items[i], &cols[j]))) goto oom;
    for (size_t i = 0; i <= n; i++)
      if ((int)strlen(cells[i * ncols + j]) > width[j]) width[j] = (int)strlen(cells[i * ncols + j]);
  }
  for (size_t i = 0; i <= n; i++) dctl__print_row(cells + i * ncols, width, ncols);
  goto cleanup;
oom:
  rc = dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
cleanup:
  if (cells)
    for (size_t i = 0; i < (n + 1) * ncols; i++) free(cells[i]);
  free(cells);
  free(width);
  return rc;
}

int dctl_print_list(const ProtobufCMessage *resp, const char *items_field, const dctl_col *cols) {
  if (dctl_globals_get()->output == DCTL_OUT_JSON) return dctl__print_json(resp);
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(resp->descriptor, items_field);
  if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
    return dctl_fail(DCTL_EXIT_LOCAL, "%s has no list field %s", resp->descriptor->name, items_field);
  size_t n = *(const size_t *)((const char *)resp + f->quantifier_offset);
  ProtobufCMessage *const *items = *(ProtobufCMessage *const *const *)dctl__member(resp, f);
  int rc = dctl__print_table(items, n, cols);
  char *next = dctl_field_text(resp, "next_page_token");
  if (!rc && next && next[0]) fprintf(stderr, "(more results: --page-token %s, or --all)\n", next);
  free(next);
  return rc;
}
