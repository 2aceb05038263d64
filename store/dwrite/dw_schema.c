/* dw_schema.c: the table's data schema (partition columns left out) as a Parquet writer
 * schema: Delta types to Spark's physical layout (byte/short INT32 with INTEGER(8|16),
 * decimals by precision, timestamps as TIMESTAMP(MICROS), variant as a group of two
 * binaries), physical names and field ids under column mapping. */
#include "store/dwrite/dw_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const pq_wfield VARIANT_KIDS[] = {
    {"value", PQ_W_BINARY, false, 0, 0, 0, NULL},
    {"metadata", PQ_W_BINARY, false, 0, 0, 0, NULL},
};

static int field_of(pq_wfield *out, const char *name, const dl_type *t, bool nullable,
                    int32_t field_id, bool mapped, int depth);

static int kids_of(pq_wfield *out, const dl_type *t, bool mapped, int depth) {
  size_t n = t->kind == DL_TYPE_STRUCT ? t->num_fields : t->kind == DL_TYPE_MAP ? 2 : 1;
  pq_wfield *k = calloc(n, sizeof *k);
  if (!k) return dd_err_set(DD_ENOMEM, "dwrite: out of memory");
  out->children = k;
  out->num_children = n;
  int rc = 0;
  if (t->kind == DL_TYPE_STRUCT) {
    for (size_t i = 0; i < n && !rc; i++) {
      const dl_field *f = &t->fields[i];
      rc = field_of(&k[i], mapped && f->physical_name ? f->physical_name : f->name, f->type,
                    f->nullable, mapped ? (int32_t)f->column_mapping_id : 0, mapped, depth + 1);
    }
  } else if (t->kind == DL_TYPE_ARRAY) {
    rc = field_of(&k[0], "element", t->element, t->contains_null, 0, mapped, depth + 1);
  } else {
    rc = field_of(&k[0], "key", t->key, false, 0, mapped, depth + 1);
    if (!rc) rc = field_of(&k[1], "value", t->value, t->value_contains_null, 0, mapped, depth + 1);
  }
  return rc;
}

static int field_of(pq_wfield *out, const char *name, const dl_type *t, bool nullable,
                    int32_t field_id, bool mapped, int depth) {
  if (depth > 30) return dd_err_set(DD_EUNSUPPORTED, "dwrite: schema nested too deeply");
  memset(out, 0, sizeof *out);
  out->name = name;
  out->nullable = nullable;
  out->field_id = field_id > 0 ? field_id : 0;
  static const struct { dl_type_kind dl; pq_wkind pq; } PRIM[] = {
      {DL_TYPE_BOOLEAN, PQ_W_BOOL},     {DL_TYPE_BYTE, PQ_W_INT8},
      {DL_TYPE_SHORT, PQ_W_INT16},      {DL_TYPE_INTEGER, PQ_W_INT32},
      {DL_TYPE_LONG, PQ_W_INT64},       {DL_TYPE_FLOAT, PQ_W_FLOAT},
      {DL_TYPE_DOUBLE, PQ_W_DOUBLE},    {DL_TYPE_STRING, PQ_W_STRING},
      {DL_TYPE_BINARY, PQ_W_BINARY},    {DL_TYPE_DATE, PQ_W_DATE},
      {DL_TYPE_TIMESTAMP, PQ_W_TIMESTAMP_MICROS}, {DL_TYPE_TIMESTAMP_NTZ, PQ_W_TIMESTAMP_NTZ},
  };
  for (size_t i = 0; i < sizeof PRIM / sizeof PRIM[0]; i++)
    if (PRIM[i].dl == t->kind) {
      out->kind = PRIM[i].pq;
      return 0;
    }
  switch (t->kind) {
    case DL_TYPE_DECIMAL:
      out->kind = PQ_W_DECIMAL;
      out->type_length = PQ_WDECIMAL(t->precision, t->scale);
      return 0;
    case DL_TYPE_VARIANT:
      out->kind = PQ_W_STRUCT;
      out->children = VARIANT_KIDS;
      out->num_children = 2;
      return 0;
    case DL_TYPE_STRUCT: out->kind = PQ_W_STRUCT; return kids_of(out, t, mapped, depth);
    case DL_TYPE_ARRAY: out->kind = PQ_W_LIST; return kids_of(out, t, mapped, depth);
    case DL_TYPE_MAP: out->kind = PQ_W_MAP; return kids_of(out, t, mapped, depth);
    default:
      return dd_err_set(DD_EUNSUPPORTED, "dwrite: column '%s' of type void cannot be written",
                        name);
  }
}

static void free_kids(pq_wfield *f) {
  if (f->children == VARIANT_KIDS || !f->children) return;
  for (size_t i = 0; i < f->num_children; i++) free_kids((pq_wfield *)&f->children[i]);
  free((pq_wfield *)f->children);
}

void dw__pqschema_free(pq_wfield *root) {
  if (root) free_kids(root);
}

int dw__pqschema(pq_wfield *root, const dl_type *t, const char *const *part, size_t npart,
                 bool mapped) {
  memset(root, 0, sizeof *root);
  root->name = "spark_schema";
  root->kind = PQ_W_STRUCT;
  pq_wfield *k = calloc(t->num_fields + 1, sizeof *k);
  if (!k) return dd_err_set(DD_ENOMEM, "dwrite: out of memory");
  root->children = k;
  int rc = 0;
  for (size_t i = 0; i < t->num_fields && !rc; i++) {
    const dl_field *f = &t->fields[i];
    bool is_part = false;
    for (size_t j = 0; j < npart; j++) is_part |= strcasecmp(part[j], f->name) == 0;
    if (is_part) continue;
    rc = field_of(&k[root->num_children++], mapped && f->physical_name ? f->physical_name
                                                                     : f->name,
                  f->type, f->nullable, mapped ? (int32_t)f->column_mapping_id : 0, mapped, 0);
  }
  if (rc) dw__pqschema_free(root);
  return rc;
}
