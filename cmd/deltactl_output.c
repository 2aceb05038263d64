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

int dctl_output_parse(const char *s, dctl_output *out) {
  static const char *const names[] = {"table", "json", "jsonl", "csv"};
  for (int i = 0; i < 4; i++)
    if (!strcmp(s, names[i])) {
      *out = (dctl_output)i;
      return 0;
    }
  return -1;
}

/* Epoch-ms fields of the API: *_at (create_at, created_at) and *_time (expiration_time). */
static int dctl__is_time_name(const char *name, size_t n) {
  return (n > 3 && !strcmp(name + n - 3, "_at")) || (n > 5 && !strcmp(name + n - 5, "_time")) ||
         (n > 2 && !strcmp(name + n - 2, "At")) || (n > 4 && !strcmp(name + n - 4, "Time"));
}

static int dctl__is_time(const ProtobufCFieldDescriptor *f) {
  return f->type == PROTOBUF_C_TYPE_INT64 && dctl__is_time_name(f->name, strlen(f->name));
}

int dctl_iso_time(char *buf, size_t cap, int64_t ms) {
  time_t t = (time_t)(ms / 1000);
  struct tm tm;
  char day[32];
  if (ms < 0 || !gmtime_r(&t, &tm) || !strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm)) return -1;
  snprintf(buf, cap, "%s.%03dZ", day, (int)(ms % 1000));
  return 0;
}

static void dctl__add_time(dctl__sb *b, int64_t ms) {
  char buf[48];
  if (ms == 0) return;
  if (dctl_iso_time(buf, sizeof buf, ms) != 0) dctl__sb_add(b, "%" PRId64, ms);
  else dctl__sb_add(b, "%s", buf);
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

static void dctl__add_repeated(dctl__sb *b, const ProtobufCMessage *m, const ProtobufCFieldDescriptor *f);

/* Appends an item of a list of messages: its name, then its own lists of messages in
 * brackets ("public [trips, events]"); an item without a name shows its type. */
static void dctl__add_item(dctl__sb *b, const ProtobufCMessage *e) {
  const ProtobufCMessageDescriptor *d = e->descriptor;
  const ProtobufCFieldDescriptor *nf = protobuf_c_message_descriptor_get_field_by_name(d, "name");
  if (nf && nf->type == PROTOBUF_C_TYPE_STRING && nf->label != PROTOBUF_C_LABEL_REPEATED)
    dctl__add_scalar(b, nf, dctl__member(e, nf));
  else
    dctl__sb_add(b, "<%s>", d->short_name);
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->label != PROTOBUF_C_LABEL_REPEATED || f->type != PROTOBUF_C_TYPE_MESSAGE ||
        dctl__is_map_entry(f->descriptor))
      continue;
    dctl__sb_add(b, " [");
    dctl__add_repeated(b, e, f);
    dctl__sb_add(b, "]");
  }
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
      dctl__add_item(b, e);
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

/* The API's epoch-ms times (keys ending in At or Time, sent as integers or, for 64-bit
 * fields, digit strings) become ISO 8601 strings, in j and everything below it. */
static void dctl__json_times(json_t *j) {
  if (json_is_array(j)) {
    for (size_t i = 0; i < json_array_size(j); i++) dctl__json_times(json_array_get(j, i));
    return;
  }
  const char *k;
  json_t *v;
  json_object_foreach(j, k, v) {
    if (!dctl__is_time_name(k, strlen(k))) {
      dctl__json_times(v);
      continue;
    }
    char *end = NULL;
    long long ms = json_is_integer(v) ? (long long)json_integer_value(v)
                   : json_is_string(v) ? strtoll(json_string_value(v), &end, 10) : -1;
    char buf[48];
    if ((end && (*end || end == json_string_value(v))) || ms <= 0 || dctl_iso_time(buf, sizeof buf, ms)) continue;
    json_object_set_new(j, k, json_string(buf));
  }
}

int dctl_print_json(json_t *j, int compact) {
  if (!j) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  char *s = json_dumps(j, (compact ? JSON_COMPACT : JSON_INDENT(2)) | JSON_PRESERVE_ORDER | JSON_ENCODE_ANY);
  if (!s) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  puts(s);
  free(s);
  return 0;
}

static json_t *dctl__msg_json(const ProtobufCMessage *msg) {
  json_t *j = pbjson_from_msg(msg);
  if (!j) {
    dctl_fail(DCTL_EXIT_LOCAL, "cannot encode %s as JSON: %s", msg->descriptor->name, dd_err_msg());
    return NULL;
  }
  dctl__json_times(j);
  return j;
}

static int dctl__print_json(const ProtobufCMessage *msg, int compact) {
  json_t *j = dctl__msg_json(msg);
  if (!j) return DCTL_EXIT_LOCAL;
  int rc = dctl_print_json(j, compact);
  json_decref(j);
  return rc;
}

void dctl_csv_cell(FILE *out, const char *s) {
  if (!s[strcspn(s, ",\"\r\n")]) {
    fputs(s, out);
    return;
  }
  fputc('"', out);
  for (; *s; s++) {
    if (*s == '"') fputc('"', out);
    fputc(*s, out);
  }
  fputc('"', out);
}

/* One object as CSV: a header of its keys, then one row. */
static int dctl__print_csv_kv(const ProtobufCMessage *msg) {
  dctl__kv kv;
  kv.n = 0;
  kv.oom = 0;
  dctl__collect(&kv, msg, "");
  for (int pass = 0; pass < 2 && !kv.oom; pass++) {
    for (size_t i = 0; i < kv.n; i++) {
      if (i) putchar(',');
      dctl_csv_cell(stdout, pass ? kv.val[i] : kv.key[i]);
    }
    putchar('\n');
  }
  for (size_t i = 0; i < kv.n; i++) {
    free(kv.key[i]);
    free(kv.val[i]);
  }
  return kv.oom ? dctl_fail(DCTL_EXIT_LOCAL, "out of memory") : 0;
}

int dctl_print_msg(const ProtobufCMessage *msg) {
  switch (dctl_globals_get()->output) {
  case DCTL_OUT_JSON: return dctl__print_json(msg, 0);
  case DCTL_OUT_JSONL: return dctl__print_json(msg, 1);
  case DCTL_OUT_CSV: return dctl__print_csv_kv(msg);
  default: return dctl__print_kv(msg);
  }
}

int dctl_print_done(const char *fmt, ...) {
  dctl_output o = dctl_globals_get()->output;
  if (o == DCTL_OUT_JSON || o == DCTL_OUT_JSONL) {
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

static int dctl__print_table(ProtobufCMessage *const *items, size_t n, const dctl_col *cols, int csv) {
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
  for (size_t i = 0; i <= n; i++) {
    if (!csv) {
      dctl__print_row(cells + i * ncols, width, ncols);
      continue;
    }
    for (size_t j = 0; j < ncols; j++) {
      if (j) putchar(',');
      dctl_csv_cell(stdout, cells[i * ncols + j]);
    }
    putchar('\n');
  }
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
  dctl_output o = dctl_globals_get()->output;
  if (o == DCTL_OUT_JSON) return dctl__print_json(resp, 0);
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(resp->descriptor, items_field);
  if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || f->label != PROTOBUF_C_LABEL_REPEATED)
    return dctl_fail(DCTL_EXIT_LOCAL, "%s has no list field %s", resp->descriptor->name, items_field);
  size_t n = *(const size_t *)((const char *)resp + f->quantifier_offset);
  ProtobufCMessage *const *items = *(ProtobufCMessage *const *const *)dctl__member(resp, f);
  int rc = 0;
  for (size_t i = 0; o == DCTL_OUT_JSONL && i < n && !rc; i++) rc = dctl__print_json(items[i], 1);
  if (o != DCTL_OUT_JSONL) rc = dctl__print_table(items, n, cols, o == DCTL_OUT_CSV);
  char *next = dctl_field_text(resp, "next_page_token");
  if (!rc && next && next[0] && o != DCTL_OUT_JSON) fprintf(stderr, "(more results: --page-token %s, or --all)\n", next);
  free(next);
  return rc;
}
