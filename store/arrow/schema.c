/* schema.c: the field tree of an Arrow schema (see arrow.h for use, arrow_int.h for the
 * representation). */
#include <stdlib.h>
#include <string.h>

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
  s->fields[id] = (arw_field){copy, kind, nullable, parent, -1, -1, -1, 0};
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
  if ((int)kind < ARW_UTF8 || kind > ARW_STRUCT)
    return dd_err_set(DD_EINVAL, "arrow field '%s': unknown kind %d", name, (int)kind);
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
