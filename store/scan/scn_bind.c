/* scn_bind.c: binds the Delta fields of a scan to the Parquet nodes of one data file: by
 * field id or physical name under column mapping, by name otherwise; lists, maps and
 * structs by the same structural rules as the Parquet reader (pq_cursor.c); and for each
 * leaf, the conversion of its values (type widening, time units, decimal scales). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/scan/scn_int.h"

static const dl_type BINARY_TYPE = {.kind = DL_TYPE_BINARY};

const pq_field *scn__pq_child(const pq_field *g, const dl_field *f, const char *mode) {
  if (!g || g->type != PQ_T_GROUP) return NULL;
  if (!strcmp(mode, "id") && f->column_mapping_id >= 0)
    for (uint32_t i = 0; i < g->num_children; i++)
      if (g->children[i].has_field_id && g->children[i].field_id == f->column_mapping_id)
        return &g->children[i];
  if (strcmp(mode, "none") && f->physical_name) {
    for (uint32_t i = 0; i < g->num_children; i++)
      if (!strcmp(g->children[i].name, f->physical_name)) return &g->children[i];
    return NULL; /* under column mapping a logical name never matches a physical one */
  }
  for (uint32_t i = 0; i < g->num_children; i++)
    if (!strcmp(g->children[i].name, f->name)) return &g->children[i];
  for (uint32_t i = 0; i < g->num_children; i++)
    if (!strcasecmp(g->children[i].name, f->name)) return &g->children[i];
  return NULL;
}

static const pq_field *child_named(const pq_field *g, const char *name) {
  for (uint32_t i = 0; i < g->num_children; i++)
    if (!strcmp(g->children[i].name, name)) return &g->children[i];
  return NULL;
}

static int first_leaf(const pq_field *x) {
  while (x->type == PQ_T_GROUP) {
    if (x->num_children == 0) return -1;
    x = &x->children[0];
  }
  return x->column;
}

static int mismatch(const pq_field *x, const dl_type *t) {
  char tn[64];
  dl_type_format(t, tn, sizeof tn);
  return dd_err_set(DD_EUNSUPPORTED, "scan: the file's column '%s' cannot be read as %s",
                    x->name, tn);
}

/* Scale of a DECIMAL-annotated leaf (0 for a plain integer). */
static int file_scale(const pq_field *x) {
  if (x->logical.kind == PQ_LT_DECIMAL) return x->logical.scale;
  if (x->converted == PQ_CT_DECIMAL) return x->scale;
  return 0;
}

/* The direct conversions: Delta type, Parquet physical type, conversion. */
static const struct {
  dl_type_kind delta;
  pq_type parquet;
  scn__conv conv;
} DIRECT[] = {
    {DL_TYPE_BOOLEAN, PQ_T_BOOLEAN, SCN_CV_BOOL},
    {DL_TYPE_BYTE, PQ_T_INT32, SCN_CV_I32_I8},
    {DL_TYPE_SHORT, PQ_T_INT32, SCN_CV_I32_I16},
    {DL_TYPE_INTEGER, PQ_T_INT32, SCN_CV_I32},
    {DL_TYPE_DATE, PQ_T_INT32, SCN_CV_I32},
    {DL_TYPE_LONG, PQ_T_INT32, SCN_CV_I32_I64},
    {DL_TYPE_LONG, PQ_T_INT64, SCN_CV_I64},
    {DL_TYPE_FLOAT, PQ_T_FLOAT, SCN_CV_F32},
    {DL_TYPE_DOUBLE, PQ_T_DOUBLE, SCN_CV_F64},
    {DL_TYPE_DOUBLE, PQ_T_FLOAT, SCN_CV_F32_F64},
    {DL_TYPE_DOUBLE, PQ_T_INT32, SCN_CV_I32_F64},
    {DL_TYPE_STRING, PQ_T_BYTE_ARRAY, SCN_CV_BYTES},
    {DL_TYPE_STRING, PQ_T_FIXED_LEN_BYTE_ARRAY, SCN_CV_FIXED_BYTES},
    {DL_TYPE_BINARY, PQ_T_BYTE_ARRAY, SCN_CV_BYTES},
    {DL_TYPE_BINARY, PQ_T_FIXED_LEN_BYTE_ARRAY, SCN_CV_FIXED_BYTES},
    {DL_TYPE_TIMESTAMP, PQ_T_INT96, SCN_CV_INT96},
    {DL_TYPE_TIMESTAMP_NTZ, PQ_T_INT96, SCN_CV_INT96},
    {DL_TYPE_TIMESTAMP_NTZ, PQ_T_INT32, SCN_CV_DATE_TS},
};

/* The conversion of leaf x to Delta type t. */
static int leaf_conv(scn__bind *b, const pq_field *x, const dl_type *t) {
  pq_type p = x->type;
  for (size_t i = 0; i < sizeof DIRECT / sizeof DIRECT[0]; i++)
    if (DIRECT[i].delta == t->kind && DIRECT[i].parquet == p) return b->conv = DIRECT[i].conv, 0;
  if ((t->kind == DL_TYPE_TIMESTAMP || t->kind == DL_TYPE_TIMESTAMP_NTZ) && p == PQ_T_INT64) {
    pq_time_unit u = x->logical.kind == PQ_LT_TIMESTAMP ? x->logical.unit
                     : x->converted == PQ_CT_TIMESTAMP_MILLIS ? PQ_UNIT_MILLIS
                                                              : PQ_UNIT_MICROS;
    b->conv = u == PQ_UNIT_MILLIS ? SCN_CV_TS_MILLIS
              : u == PQ_UNIT_NANOS ? SCN_CV_TS_NANOS : SCN_CV_I64;
    return 0;
  }
  if (t->kind == DL_TYPE_DECIMAL) {
    b->dec_shift = t->scale - file_scale(x);
    if (b->dec_shift >= 0) {
      if (p == PQ_T_INT32) return b->conv = SCN_CV_DEC_I32, 0;
      if (p == PQ_T_INT64) return b->conv = SCN_CV_DEC_I64, 0;
      if (p == PQ_T_BYTE_ARRAY || (p == PQ_T_FIXED_LEN_BYTE_ARRAY && x->type_length <= 16))
        return b->conv = SCN_CV_DEC_BE, 0;
    }
  }
  return mismatch(x, t);
}

static int bind_rec(scn__bind *b, const arw_schema *s, int arw_id, const dl_type *t,
                    const pq_field *x, int pdef, int srep, int parent_leaf, const char *mode,
                    bool as_elem);

static int alloc_kids(scn__bind *b, size_t n) {
  b->kids = calloc(n ? n : 1, sizeof *b->kids);
  if (!b->kids) return dd_err_set(DD_ENOMEM, "scan: out of memory binding columns");
  b->nkids = n;
  return 0;
}

static int bind_list(scn__bind *b, const arw_schema *s, const pq_field *x, const char *mode,
                     bool as_elem) {
  const pq_field *elem;
  bool elem_as_elem;
  if (x->repetition == PQ_REPEATED && !as_elem) { /* a bare repeated field: a list of it */
    b->vdef = b->pdef;
    b->cpdef = x->max_def;
    b->csrep = x->max_rep;
    elem = x;
    elem_as_elem = true;
  } else {
    if (x->type != PQ_T_GROUP || x->shape != PQ_SHAPE_LIST) return mismatch(x, b->type);
    const pq_field *r = &x->children[0];
    b->cpdef = r->max_def;
    b->csrep = r->max_rep;
    elem_as_elem = r->type != PQ_T_GROUP || r->num_children != 1;
    elem = elem_as_elem ? r : &r->children[0];
  }
  int rc = alloc_kids(b, 1);
  if (!rc)
    rc = bind_rec(&b->kids[0], s, arw_field_child(s, b->arw_id, 0), b->type->element, elem,
                  b->cpdef, b->csrep, b->rep_leaf, mode, elem_as_elem);
  return rc;
}

static int bind_map(scn__bind *b, const arw_schema *s, const pq_field *x, const char *mode) {
  if (x->type != PQ_T_GROUP || x->shape != PQ_SHAPE_MAP) return mismatch(x, b->type);
  const pq_field *r = &x->children[0];
  b->cpdef = r->max_def;
  b->csrep = r->max_rep;
  int rc = alloc_kids(b, 2);
  const dl_type *kt[2] = {b->type->key, b->type->value};
  for (int i = 0; i < 2 && !rc; i++)
    rc = bind_rec(&b->kids[i], s, arw_field_child(s, b->arw_id, i), kt[i], &r->children[i],
                  b->cpdef, b->csrep, b->rep_leaf, mode, false);
  return rc;
}

static int bind_struct(scn__bind *b, const arw_schema *s, const pq_field *x, const char *mode) {
  if (x->type != PQ_T_GROUP) return mismatch(x, b->type);
  const dl_type *t = b->type;
  bool variant = t->kind == DL_TYPE_VARIANT;
  if (variant && child_named(x, "typed_value"))
    return dd_err_set(DD_EUNSUPPORTED, "scan: column '%s' is a shredded variant", x->name);
  size_t n = variant ? 2 : t->num_fields;
  int rc = alloc_kids(b, n);
  for (size_t i = 0; i < n && !rc; i++) {
    const pq_field *c = variant ? child_named(x, i == 0 ? "value" : "metadata")
                                : scn__pq_child(x, &t->fields[i], mode);
    rc = bind_rec(&b->kids[i], s, arw_field_child(s, b->arw_id, (int)i),
                  variant ? &BINARY_TYPE : t->fields[i].type, c, b->pdef, b->srep, b->rep_leaf,
                  mode, false);
  }
  return rc;
}

static int bind_rec(scn__bind *b, const arw_schema *s, int arw_id, const dl_type *t,
                    const pq_field *x, int pdef, int srep, int parent_leaf, const char *mode,
                    bool as_elem) {
  *b = (scn__bind){.arw_id = arw_id, .type = t, .node = x, .pdef = pdef, .srep = srep,
                   .rep_leaf = parent_leaf};
  if (arw_id < 0) return dd_err_set(DD_EINTERNAL, "scan: arrow schema out of step");
  if (!x || t->kind == DL_TYPE_VOID) {
    b->node = NULL;
    return 0;
  }
  b->vdef = x->max_def;
  b->rep_leaf = first_leaf(x);
  if (b->rep_leaf < 0) return dd_err_set(DD_ECORRUPT, "scan: group '%s' has no leaf", x->name);
  switch (t->kind) {
    case DL_TYPE_STRUCT:
    case DL_TYPE_VARIANT: return bind_struct(b, s, x, mode);
    case DL_TYPE_ARRAY: return bind_list(b, s, x, mode, as_elem);
    case DL_TYPE_MAP: return bind_map(b, s, x, mode);
    default:
      if (x->type == PQ_T_GROUP || (x->repetition == PQ_REPEATED && !as_elem))
        return mismatch(x, t);
      return leaf_conv(b, x, t);
  }
}

int scn__bind_node(scn__bind *b, const arw_schema *s, int arw_id, const dl_type *t,
                   const pq_field *x, int pdef, int srep, int parent_leaf, const char *mode) {
  return bind_rec(b, s, arw_id, t, x, pdef, srep, parent_leaf, mode, false);
}

void scn__bind_free(scn__bind *b) {
  if (!b) return;
  for (size_t i = 0; i < b->nkids; i++) scn__bind_free(&b->kids[i]);
  free(b->kids);
  b->kids = NULL;
  b->nkids = 0;
}
