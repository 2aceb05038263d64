/* scn_types.c: the Arrow schema of a scan: each Delta type as the Arrow type Spark gives it
 * (see scn.h). Every field is nullable, as Spark's file scans report them, except map keys,
 * which Arrow requires to be non-null. */
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/scan/scn_int.h"

static int add_children(arw_schema *out, int id, const dl_type *t);

int scn_arrow_field(arw_schema *out, int parent, const char *name, const dl_type *t,
                    bool nullable, int *out_id) {
  arw_kind k;
  switch (t->kind) {
    case DL_TYPE_STRING: k = ARW_UTF8; break;
    case DL_TYPE_BINARY: k = ARW_BINARY; break;
    case DL_TYPE_LONG: k = ARW_INT64; break;
    case DL_TYPE_INTEGER: k = ARW_INT32; break;
    case DL_TYPE_SHORT: k = ARW_INT16; break;
    case DL_TYPE_BYTE: k = ARW_INT8; break;
    case DL_TYPE_FLOAT: k = ARW_FLOAT32; break;
    case DL_TYPE_DOUBLE: k = ARW_FLOAT64; break;
    case DL_TYPE_BOOLEAN: k = ARW_BOOL; break;
    case DL_TYPE_DATE: k = ARW_DATE32; break;
    case DL_TYPE_TIMESTAMP: k = ARW_TIMESTAMP_UTC; break;
    case DL_TYPE_TIMESTAMP_NTZ: k = ARW_TIMESTAMP; break;
    case DL_TYPE_VOID: k = ARW_NULL; nullable = true; break;
    case DL_TYPE_STRUCT:
    case DL_TYPE_VARIANT: k = ARW_STRUCT; break;
    case DL_TYPE_ARRAY: k = ARW_LIST; break;
    case DL_TYPE_MAP: k = ARW_MAP; break;
    case DL_TYPE_DECIMAL:
      return arw_schema_add_decimal(out, parent, name, t->precision, t->scale, nullable, out_id);
    default: return dd_err_set(DD_EUNSUPPORTED, "column '%s': no Arrow type for it", name);
  }
  int id;
  int rc = arw_schema_add(out, parent, name, k, nullable, &id);
  if (!rc) rc = add_children(out, id, t);
  if (!rc && out_id) *out_id = id;
  return rc;
}

static int add_children(arw_schema *out, int id, const dl_type *t) {
  int rc = 0;
  switch (t->kind) {
    case DL_TYPE_STRUCT:
      for (size_t i = 0; i < t->num_fields && !rc; i++)
        rc = scn_arrow_field(out, id, t->fields[i].name, t->fields[i].type, true, NULL);
      return rc;
    case DL_TYPE_VARIANT:
      rc = arw_schema_add(out, id, "value", ARW_BINARY, true, NULL);
      if (!rc) rc = arw_schema_add(out, id, "metadata", ARW_BINARY, true, NULL);
      return rc;
    case DL_TYPE_ARRAY: return scn_arrow_field(out, id, "element", t->element, true, NULL);
    case DL_TYPE_MAP:
      rc = scn_arrow_field(out, id, "key", t->key, false, NULL);
      if (!rc) rc = scn_arrow_field(out, id, "value", t->value, true, NULL);
      return rc;
    default: return 0;
  }
}

const dl_field *scn__find_field(const dl_type *root, const char *name) {
  for (size_t i = 0; i < root->num_fields; i++)
    if (!strcmp(root->fields[i].name, name)) return &root->fields[i];
  for (size_t i = 0; i < root->num_fields; i++)
    if (!strcasecmp(root->fields[i].name, name)) return &root->fields[i];
  return NULL;
}

int scn_arrow_schema(arw_schema *out, const dl_type *root, const char *const *columns,
                     size_t n) {
  if (root->kind != DL_TYPE_STRUCT)
    return dd_err_set(DD_EINVAL, "a table schema must be a struct");
  size_t count = n ? n : root->num_fields;
  for (size_t i = 0; i < count; i++) {
    const dl_field *f = n ? scn__find_field(root, columns[i]) : &root->fields[i];
    if (!f) return dd_err_set(DD_EINVAL, "no column '%s' in the table", columns[i]);
    int rc = scn_arrow_field(out, ARW_ROOT, f->name, f->type, true, NULL);
    if (rc) return rc;
  }
  return 0;
}
