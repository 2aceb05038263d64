/* dl_schema.c: the table schema (metaData.schemaString, Spark's JSON schema) parsed into a
 * read-only dl_type tree: every Delta primitive, decimal(p,s), timestamp_ntz, variant,
 * void, nested struct/array/map, and the column-mapping keys of each field's metadata. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

#define SCHEMA_MAX_DEPTH 64

struct dl_schema {
  dl__arena arena;
  const dl_type *root;
};

static const struct {
  const char *name;
  dl_type_kind kind;
} PRIMS[] = {
    {"string", DL_TYPE_STRING},   {"long", DL_TYPE_LONG},       {"integer", DL_TYPE_INTEGER},
    {"short", DL_TYPE_SHORT},     {"byte", DL_TYPE_BYTE},       {"float", DL_TYPE_FLOAT},
    {"double", DL_TYPE_DOUBLE},   {"boolean", DL_TYPE_BOOLEAN}, {"binary", DL_TYPE_BINARY},
    {"date", DL_TYPE_DATE},       {"timestamp", DL_TYPE_TIMESTAMP},
    {"timestamp_ntz", DL_TYPE_TIMESTAMP_NTZ},                   {"variant", DL_TYPE_VARIANT},
    {"void", DL_TYPE_VOID},
};

static int parse_type(dl_schema *s, const json_t *j, int depth, const dl_type **out);

static int parse_primitive(dl_schema *s, const char *name, dl_type *t) {
  for (size_t i = 0; i < sizeof PRIMS / sizeof PRIMS[0]; i++) {
    if (!strcmp(name, PRIMS[i].name)) {
      t->kind = PRIMS[i].kind;
      return 0;
    }
  }
  int p = 10, sc = 0, n = 0;
  if (!strcmp(name, "decimal") ||
      (sscanf(name, "decimal(%d,%d)%n", &p, &sc, &n) == 2 && name[n] == 0) ||
      (sscanf(name, "decimal(%d, %d)%n", &p, &sc, &n) == 2 && name[n] == 0)) {
    if (p < 1 || p > 38 || sc < 0 || sc > p)
      return dd_err_set(DD_ECORRUPT, "schema: bad decimal precision/scale in '%s'", name);
    t->kind = DL_TYPE_DECIMAL;
    t->precision = p;
    t->scale = sc;
    return 0;
  }
  (void)s;
  return dd_err_set(DD_EUNSUPPORTED, "schema: unknown type '%s'", name);
}

static int parse_field(dl_schema *s, const json_t *j, int depth, dl_field *f) {
  const char *name = dl__json_str(j, "name");
  if (!name) return dd_err_set(DD_ECORRUPT, "schema: field without a name");
  if (!(f->name = dl__arena_strdup(&s->arena, name))) return dd_err_set(DD_ENOMEM, "out of memory");
  json_t *nullable = json_object_get(j, "nullable");
  f->nullable = nullable ? json_is_true(nullable) : true;
  f->column_mapping_id = -1;
  json_t *md = json_object_get(j, "metadata");
  if (json_is_object(md)) {
    char *txt = json_dumps(md, JSON_COMPACT | JSON_ENCODE_ANY);
    f->metadata_json = txt ? dl__arena_strdup(&s->arena, txt) : NULL;
    free(txt);
    f->column_mapping_id = dl__json_int(md, "delta.columnMapping.id", -1);
    const char *pn = dl__json_str(md, "delta.columnMapping.physicalName");
    if (pn && !(f->physical_name = dl__arena_strdup(&s->arena, pn)))
      return dd_err_set(DD_ENOMEM, "out of memory");
  }
  json_t *ty = json_object_get(j, "type");
  if (!ty) return dd_err_set(DD_ECORRUPT, "schema: field '%s' has no type", name);
  int rc = parse_type(s, ty, depth + 1, &f->type);
  return rc ? dd_err_wrap(rc, "field '%s'", name) : 0;
}

static int parse_struct(dl_schema *s, const json_t *j, int depth, dl_type *t) {
  json_t *fields = json_object_get(j, "fields");
  if (!json_is_array(fields)) return dd_err_set(DD_ECORRUPT, "schema: struct without fields");
  t->kind = DL_TYPE_STRUCT;
  t->num_fields = json_array_size(fields);
  dl_field *fs = dl__arena_alloc(&s->arena, sizeof *fs * (t->num_fields ? t->num_fields : 1));
  if (!fs) return dd_err_set(DD_ENOMEM, "out of memory");
  memset(fs, 0, sizeof *fs * t->num_fields);
  for (size_t i = 0; i < t->num_fields; i++) {
    const json_t *fj = json_array_get(fields, i);
    if (!json_is_object(fj)) return dd_err_set(DD_ECORRUPT, "schema: field is not an object");
    int rc = parse_field(s, fj, depth, &fs[i]);
    if (rc) return rc;
  }
  t->fields = fs;
  return 0;
}

static int parse_type(dl_schema *s, const json_t *j, int depth, const dl_type **out) {
  if (depth > SCHEMA_MAX_DEPTH) return dd_err_set(DD_ECORRUPT, "schema: nested too deeply");
  dl_type *t = dl__arena_alloc(&s->arena, sizeof *t);
  if (!t) return dd_err_set(DD_ENOMEM, "out of memory");
  memset(t, 0, sizeof *t);
  *out = t;
  if (json_is_string(j)) return parse_primitive(s, json_string_value(j), t);
  const char *kind = json_is_object(j) ? dl__json_str(j, "type") : NULL;
  if (!kind) return dd_err_set(DD_ECORRUPT, "schema: type is neither a name nor an object");
  if (!strcmp(kind, "struct")) return parse_struct(s, j, depth, t);
  if (!strcmp(kind, "array")) {
    t->kind = DL_TYPE_ARRAY;
    json_t *cn = json_object_get(j, "containsNull");
    t->contains_null = cn ? json_is_true(cn) : true;
    json_t *el = json_object_get(j, "elementType");
    if (!el) return dd_err_set(DD_ECORRUPT, "schema: array without elementType");
    return parse_type(s, el, depth + 1, &t->element);
  }
  if (!strcmp(kind, "map")) {
    t->kind = DL_TYPE_MAP;
    json_t *vn = json_object_get(j, "valueContainsNull");
    t->value_contains_null = vn ? json_is_true(vn) : true;
    json_t *k = json_object_get(j, "keyType"), *v = json_object_get(j, "valueType");
    if (!k || !v) return dd_err_set(DD_ECORRUPT, "schema: map without keyType/valueType");
    int rc = parse_type(s, k, depth + 1, &t->key);
    return rc ? rc : parse_type(s, v, depth + 1, &t->value);
  }
  return parse_primitive(s, kind, t);
}

int dl__schema_from_json(dl_schema **out, const json_t *root) {
  *out = NULL;
  dl_schema *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = parse_type(s, root, 0, &s->root);
  if (!rc && s->root->kind != DL_TYPE_STRUCT)
    rc = dd_err_set(DD_ECORRUPT, "schema: the root type is not a struct");
  if (rc) {
    dl_schema_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

int dl_schema_parse(dl_schema **out, const char *json, size_t len) {
  *out = NULL;
  json_error_t e;
  json_t *root = json_loadb(json, len, JSON_DECODE_ANY, &e);
  if (!root) return dd_err_set(DD_ECORRUPT, "schema: invalid JSON: %s", e.text);
  int rc = dl__schema_from_json(out, root);
  json_decref(root);
  return rc;
}

void dl_schema_free(dl_schema *s) {
  if (!s) return;
  dl__arena_free(&s->arena);
  free(s);
}

const dl_type *dl_schema_root(const dl_schema *s) { return s->root; }

const dl_field *dl_schema_field(const dl_schema *s, const char *name) {
  const dl_type *r = s->root;
  for (size_t i = 0; i < r->num_fields; i++)
    if (!strcmp(r->fields[i].name, name)) return &r->fields[i];
  for (size_t i = 0; i < r->num_fields; i++)
    if (!strcasecmp(r->fields[i].name, name)) return &r->fields[i];
  return NULL;
}

const dl_field *dl_schema_field_physical(const dl_schema *s, const char *physical) {
  const dl_type *r = s->root;
  for (size_t i = 0; i < r->num_fields; i++)
    if (r->fields[i].physical_name && !strcmp(r->fields[i].physical_name, physical))
      return &r->fields[i];
  return dl_schema_field(s, physical);
}

/* ---------- formatting ---------- */

static void fmt(dd_buf *b, const dl_type *t) {
  switch (t->kind) {
    case DL_TYPE_DECIMAL: dd_buf_printf(b, "decimal(%d,%d)", t->precision, t->scale); return;
    case DL_TYPE_ARRAY:
      dd_buf_puts(b, "array<");
      fmt(b, t->element);
      dd_buf_putc(b, '>');
      return;
    case DL_TYPE_MAP:
      dd_buf_puts(b, "map<");
      fmt(b, t->key);
      dd_buf_putc(b, ',');
      fmt(b, t->value);
      dd_buf_putc(b, '>');
      return;
    case DL_TYPE_STRUCT:
      dd_buf_puts(b, "struct<");
      for (size_t i = 0; i < t->num_fields; i++) {
        if (i) dd_buf_putc(b, ',');
        dd_buf_puts(b, t->fields[i].name);
        dd_buf_putc(b, ':');
        fmt(b, t->fields[i].type);
      }
      dd_buf_putc(b, '>');
      return;
    default:
      for (size_t i = 0; i < sizeof PRIMS / sizeof PRIMS[0]; i++)
        if (PRIMS[i].kind == t->kind) dd_buf_puts(b, PRIMS[i].name);
  }
}

size_t dl_type_format(const dl_type *t, char *buf, size_t cap) {
  dd_buf b = {0};
  fmt(&b, t);
  size_t n = b.len;
  if (cap) {
    size_t c = n < cap - 1 ? n : cap - 1;
    if (b.p) memcpy(buf, b.p, c);
    buf[c] = 0;
  }
  dd_buf_free(&b);
  return n;
}
