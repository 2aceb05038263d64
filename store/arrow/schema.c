/* schema.c: the field tree of an Arrow schema (see arrow.h for use, arrow_int.h for the
 * representation). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/arrow/arrow_int.h"

int arw_schema_new(arw_schema **out) {
  arw_schema *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory allocating an arrow schema");
  s->first_column = s->last_column = -1;
  *out = s;
  return 0;
}

void arw_schema_free(arw_schema *s) {
  if (!s) return;
  for (int i = 0; i < s->nfields; i++) free(s->fields[i].name);
  free(s->fields);
  free(s);
}

size_t arw_schema_ncolumns(const arw_schema *s) { return s->ncolumns; }

/* Appends a field record and links it under parent; returns its id or a negative code. */
static int schema_push(arw_schema *s, int parent, const char *name, arw_kind kind,
                       bool nullable) {
  if (s->nfields == s->cap) {
    int cap = s->cap ? s->cap * 2 : 8;
    arw_field *f = realloc(s->fields, (size_t)cap * sizeof *f);
    if (!f) return dd_err_set(DD_ENOMEM, "out of memory growing an arrow schema");
    s->fields = f;
    s->cap = cap;
  }
  char *copy = strdup(name);
  if (!copy) return dd_err_set(DD_ENOMEM, "out of memory copying a field name");
  int id = s->nfields++;
  s->fields[id] = (arw_field){copy, kind, nullable, parent, -1, -1, -1, 0, 0, 0};
  int *first = parent == ARW_ROOT ? &s->first_column : &s->fields[parent].first_child;
  int *last = parent == ARW_ROOT ? &s->last_column : &s->fields[parent].last_child;
  if (*last >= 0) s->fields[*last].next_sibling = id;
  else *first = id;
  *last = id;
  if (parent == ARW_ROOT) s->ncolumns++;
  else s->fields[parent].nchildren++;
  return id;
}

/* Checks that parent may take one more child, and maps a MAP to its entries struct. */
static int schema_child_parent(arw_schema *s, int parent, const char *name, bool nullable,
                               int *out) {
  if (parent == ARW_ROOT) {
    *out = ARW_ROOT;
    return 0;
  }
  if (parent < 0 || parent >= s->nfields)
    return dd_err_set(DD_EINVAL, "arrow field '%s': no parent field %d", name, parent);
  const arw_field *p = &s->fields[parent];
  switch (p->kind) {
    case ARW_STRUCT: *out = parent; return 0;
    case ARW_LIST:
      if (p->nchildren >= 1)
        return dd_err_set(DD_EINVAL, "list '%s' already has its element field", p->name);
      *out = parent;
      return 0;
    case ARW_MAP: {
      int entries = p->first_child;
      if (s->fields[entries].nchildren >= 2)
        return dd_err_set(DD_EINVAL, "map '%s' already has key and value", p->name);
      if (s->fields[entries].nchildren == 0 && nullable)
        return dd_err_set(DD_EINVAL, "map '%s': the key field must not be nullable", p->name);
      *out = entries;
      return 0;
    }
    default: return dd_err_set(DD_EINVAL, "arrow field '%s' cannot have children", p->name);
  }
}

int arw_schema_add(arw_schema *s, int parent, const char *name, arw_kind kind, bool nullable,
                   int *out_id) {
  if (s->nbatches > 0) return dd_err_set(DD_EINVAL, "arrow schema is in use by a batch");
  if ((int)kind < ARW_UTF8 || kind >= ARW__ENTRIES)
    return dd_err_set(DD_EINVAL, "arrow field '%s': unknown kind %d", name, (int)kind);
  if (kind == ARW_DECIMAL128)
    return dd_err_set(DD_EINVAL, "arrow field '%s': a decimal needs arw_schema_add_decimal",
                      name);
  if (kind == ARW_NULL && !nullable)
    return dd_err_set(DD_EINVAL, "arrow field '%s': a null-type field must be nullable", name);
  int where = ARW_ROOT;
  int rc = schema_child_parent(s, parent, name, nullable, &where);
  if (rc) return rc;
  int id = schema_push(s, where, name, kind, nullable);
  if (id < 0) return id;
  if (kind == ARW_MAP) {
    int entries = schema_push(s, id, "entries", ARW__ENTRIES, false);
    if (entries < 0) return entries;
  }
  if (out_id) *out_id = id;
  return 0;
}

int arw_schema_add_decimal(arw_schema *s, int parent, const char *name, int precision,
                           int scale, bool nullable, int *out_id) {
  if (precision < 1 || precision > ARW_DECIMAL_MAX_PRECISION || scale < 0 || scale > precision)
    return dd_err_set(DD_EINVAL, "arrow field '%s': decimal(%d,%d) is out of range", name,
                      precision, scale);
  if (s->nbatches > 0) return dd_err_set(DD_EINVAL, "arrow schema is in use by a batch");
  int where = ARW_ROOT;
  int rc = schema_child_parent(s, parent, name, nullable, &where);
  if (rc) return rc;
  int id = schema_push(s, where, name, ARW_DECIMAL128, nullable);
  if (id < 0) return id;
  s->fields[id].precision = precision;
  s->fields[id].scale = scale;
  if (out_id) *out_id = id;
  return 0;
}

/* ---- introspection ------------------------------------------------------------------------ */

/* The field record of a visible id, NULL otherwise. */
static const arw_field *visible(const arw_schema *s, int id) {
  if (id < 0 || id >= s->nfields || s->fields[id].kind == ARW__ENTRIES) return NULL;
  return &s->fields[id];
}

int arw_schema_nfields(const arw_schema *s) { return s->nfields; }

int arw_schema_column(const arw_schema *s, size_t i) {
  int c = s->first_column;
  while (c >= 0 && i-- > 0) c = s->fields[c].next_sibling;
  return c;
}

const char *arw_field_name(const arw_schema *s, int id) {
  const arw_field *f = visible(s, id);
  return f ? f->name : NULL;
}

arw_kind arw_field_kind(const arw_schema *s, int id) {
  const arw_field *f = visible(s, id);
  return f ? f->kind : ARW_NULL;
}

bool arw_field_nullable(const arw_schema *s, int id) {
  const arw_field *f = visible(s, id);
  return f ? f->nullable : false;
}

int arw_field_precision(const arw_schema *s, int id) {
  const arw_field *f = visible(s, id);
  return f ? f->precision : 0;
}

int arw_field_scale(const arw_schema *s, int id) {
  const arw_field *f = visible(s, id);
  return f ? f->scale : 0;
}

int arw_field_parent(const arw_schema *s, int id) {
  const arw_field *f = visible(s, id);
  if (!f) return -1;
  if (f->parent >= 0 && s->fields[f->parent].kind == ARW__ENTRIES)
    return s->fields[f->parent].parent;
  return f->parent;
}

/* The field whose children are id's visible children (a map's entries struct). */
static const arw_field *child_holder(const arw_schema *s, const arw_field *f) {
  return f->kind == ARW_MAP ? &s->fields[f->first_child] : f;
}

int arw_field_nchildren(const arw_schema *s, int id) {
  const arw_field *f = visible(s, id);
  return f ? child_holder(s, f)->nchildren : 0;
}

int arw_field_child(const arw_schema *s, int id, int i) {
  const arw_field *f = visible(s, id);
  if (!f || i < 0) return -1;
  int c = child_holder(s, f)->first_child;
  while (c >= 0 && i-- > 0) c = s->fields[c].next_sibling;
  return c;
}

static int find(const arw_schema *s, int parent, const char *name, bool ci) {
  int c;
  if (parent == ARW_ROOT) {
    c = s->first_column;
  } else {
    const arw_field *f = visible(s, parent);
    if (!f) return -1;
    c = child_holder(s, f)->first_child;
  }
  for (; c >= 0; c = s->fields[c].next_sibling)
    if ((ci ? strcasecmp(s->fields[c].name, name) : strcmp(s->fields[c].name, name)) == 0) return c;
  return -1;
}

int arw_schema_find(const arw_schema *s, int parent, const char *name) { return find(s, parent, name, false); }
int arw_schema_find_ci(const arw_schema *s, int parent, const char *name) { return find(s, parent, name, true); }

int arw_schema_copy_field(arw_schema *dst, int dst_parent, const arw_schema *src, int src_id,
                          const char *name, int *out_id) {
  const arw_field *f = visible(src, src_id);
  if (!f) return dd_err_set(DD_EINVAL, "copy arrow field: no field %d", src_id);
  const char *nm = name ? name : f->name;
  int id, rc;
  if (f->kind == ARW_DECIMAL128)
    rc = arw_schema_add_decimal(dst, dst_parent, nm, f->precision, f->scale, f->nullable, &id);
  else
    rc = arw_schema_add(dst, dst_parent, nm, f->kind, f->nullable, &id);
  if (rc) return rc;
  int n = arw_field_nchildren(src, src_id);
  for (int i = 0; i < n; i++) {
    rc = arw_schema_copy_field(dst, id, src, arw_field_child(src, src_id, i), NULL, NULL);
    if (rc) return rc;
  }
  if (out_id) *out_id = id;
  return 0;
}

/* ---- Spark's simpleString of a field's type ---- */

static void type_simple(FILE *f, const arw_schema *s, int id) {
  static const char *const names[] = {
      [ARW_UTF8] = "string", [ARW_BINARY] = "binary", [ARW_INT32] = "int", [ARW_INT64] = "bigint",
      [ARW_FLOAT64] = "double", [ARW_BOOL] = "boolean", [ARW_DATE32] = "date",
      [ARW_TIMESTAMP] = "timestamp_ntz", [ARW_TIMESTAMP_UTC] = "timestamp", [ARW_INT8] = "tinyint",
      [ARW_INT16] = "smallint", [ARW_FLOAT32] = "float", [ARW_NULL] = "void"};
  arw_kind k = arw_field_kind(s, id);
  switch (k) {
    case ARW_DECIMAL128: fprintf(f, "decimal(%d,%d)", arw_field_precision(s, id), arw_field_scale(s, id)); return;
    case ARW_LIST: fputs("array<", f); type_simple(f, s, arw_field_child(s, id, 0)); fputc('>', f); return;
    case ARW_MAP:
      fputs("map<", f);
      type_simple(f, s, arw_field_child(s, id, 0));
      fputc(',', f);
      type_simple(f, s, arw_field_child(s, id, 1));
      fputc('>', f);
      return;
    case ARW_STRUCT:
      fputs("struct<", f);
      for (int c = 0; c < arw_field_nchildren(s, id); c++) {
        int ch = arw_field_child(s, id, c);
        fprintf(f, "%s%s:", c ? "," : "", arw_field_name(s, ch));
        type_simple(f, s, ch);
      }
      fputc('>', f);
      return;
    default: fputs(k < sizeof names / sizeof names[0] && names[k] ? names[k] : "?", f);
  }
}

int arw_type_string(char **out, const arw_schema *s, int id) {
  size_t len = 0;
  FILE *f = open_memstream(out, &len);
  if (!f) return dd_err_set(DD_ENOMEM, "out of memory");
  type_simple(f, s, id);
  return fclose(f) ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}
