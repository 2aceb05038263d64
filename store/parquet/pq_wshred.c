/* pq_wshred.c: the writer's schema (a validated copy of the caller's pq_wfield tree with
 * levels and leaf paths) and record shredding: a row value becomes one (rep, def) entry
 * per leaf per value-or-null, plus the defined leaf values. A row that does not match
 * the schema is rolled back and rejected with DD_EINVAL. */
#include "store/parquet/pq_writer_int.h"

#include <stdlib.h>
#include <string.h>

static int bad_schema(const char *name, const char *why) {
  return dd_err_set(DD_EINVAL, "parquet writer: schema field '%s': %s",
                    name ? name : "(unnamed)", why);
}

static bool is_group(pq_wkind k) {
  return k == PQ_W_STRUCT || k == PQ_W_LIST || k == PQ_W_MAP;
}

static size_t count_leaves(const pq_wfield *f, int depth) {
  if (depth > PQ__MAX_DEPTH) return 0;
  if (!is_group(f->kind)) return 1;
  size_t n = 0;
  for (size_t i = 0; i < f->num_children; i++) n += count_leaves(&f->children[i], depth + 1);
  return n;
}

int32_t pq_wdecimal_bytes(int32_t precision) {
  if (precision <= 18) return 0;
  double ten = 1.0, lim = 128.0; /* fewest n with 2^(8n-1) >= 10^precision */
  for (int32_t i = 0; i < precision; i++) ten *= 10.0;
  int32_t n = 1;
  for (; lim < ten; n++) lim *= 256.0;
  return n;
}

pq_type pq__wleaf_type(const pq__wnode *n) {
  switch (n->kind) {
    case PQ_W_BOOL: return PQ_T_BOOLEAN;
    case PQ_W_INT32: case PQ_W_DATE: case PQ_W_INT8: case PQ_W_INT16: return PQ_T_INT32;
    case PQ_W_INT64: case PQ_W_TIMESTAMP_MICROS: case PQ_W_TIMESTAMP_MILLIS:
    case PQ_W_TIMESTAMP_NTZ: return PQ_T_INT64;
    case PQ_W_FLOAT: return PQ_T_FLOAT;
    case PQ_W_DOUBLE: return PQ_T_DOUBLE;
    case PQ_W_STRING: case PQ_W_BINARY: return PQ_T_BYTE_ARRAY;
    case PQ_W_FIXED: return PQ_T_FIXED_LEN_BYTE_ARRAY;
    case PQ_W_INT96: return PQ_T_INT96;
    case PQ_W_DECIMAL:
      return n->precision <= 9 ? PQ_T_INT32 : n->precision <= 18 ? PQ_T_INT64
                                                                   : PQ_T_FIXED_LEN_BYTE_ARRAY;
    default: return PQ_T_GROUP;
  }
}

static int32_t type_elem(pq_type t, int32_t type_length) {
  switch (t) {
    case PQ_T_BOOLEAN: return 1;
    case PQ_T_INT32: case PQ_T_FLOAT: return 4;
    case PQ_T_INT64: case PQ_T_DOUBLE: return 8;
    case PQ_T_INT96: return 12;
    case PQ_T_FIXED_LEN_BYTE_ARRAY: return type_length;
    default: return 0;
  }
}

typedef struct sbuild {
  pq_writer *w;
  const char *path[PQ__MAX_DEPTH * 2 + 2];
  size_t depth;
  uint32_t next_leaf;
} sbuild;

static int build(sbuild *b, const pq_wfield *f, pq__wnode *n, int16_t pdef, int16_t prep,
                 const char *name);

/* Lists and maps get the standard inner names whatever the caller wrote. */
static const char *kid_name(const pq_wfield *f, size_t i) {
  if (f->kind == PQ_W_LIST) return "element";
  if (f->kind == PQ_W_MAP) return i == 0 ? "key" : "value";
  return f->children[i].name;
}

static int build_kids(sbuild *b, const pq_wfield *f, pq__wnode *n, int16_t d, int16_t r) {
  n->kids = pq__arena_alloc(&b->w->mem, (f->num_children + 1) * sizeof *n->kids);
  if (!n->kids) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  memset(n->kids, 0, (f->num_children + 1) * sizeof *n->kids);
  n->nkids = f->num_children;
  bool layer = f->kind != PQ_W_STRUCT;
  if (layer) b->path[b->depth++] = f->kind == PQ_W_LIST ? "list" : "key_value";
  for (size_t i = 0; i < f->num_children; i++) {
    int rc = build(b, &f->children[i], &n->kids[i], d, r, kid_name(f, i));
    if (rc) return rc;
  }
  if (layer) b->depth--;
  return 0;
}

static int check_group(const pq_wfield *f, const char *name) {
  if (f->num_children && !f->children) return bad_schema(name, "children is NULL");
  if (f->kind == PQ_W_LIST && f->num_children != 1)
    return bad_schema(name, "a LIST needs exactly one child (the element)");
  if (f->kind == PQ_W_MAP && f->num_children != 2)
    return bad_schema(name, "a MAP needs exactly two children (key, value)");
  if (f->kind == PQ_W_MAP && (f->children[0].nullable || is_group(f->children[0].kind)))
    return bad_schema(name, "a MAP key must be a required primitive");
  return 0;
}

static int add_leaf(sbuild *b, pq__wnode *n) {
  pq__wleaf *l = &b->w->leaves[b->next_leaf];
  n->lo = b->next_leaf++;
  n->hi = n->lo + 1;
  l->node = n;
  l->type = pq__wleaf_type(n);
  l->elem = type_elem(l->type, n->type_length);
  l->max_def = n->def;
  l->max_rep = n->rep;
  l->path_len = b->depth;
  l->path = pq__arena_alloc(&b->w->mem, b->depth * sizeof *l->path);
  if (!l->path) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  memcpy(l->path, b->path, b->depth * sizeof *l->path);
  return 0;
}

static int build(sbuild *b, const pq_wfield *f, pq__wnode *n, int16_t pdef, int16_t prep,
                 const char *name) {
  if (b->depth >= PQ__MAX_DEPTH) return bad_schema(name, "nested too deeply");
  if (!name || !*name) return bad_schema(name, "empty name");
  if ((unsigned)f->kind > PQ_W_TIMESTAMP_NTZ) return bad_schema(name, "unknown kind");
  if (f->kind == PQ_W_FIXED && (f->type_length <= 0 || f->type_length > (1 << 24)))
    return bad_schema(name, "FIXED needs a type_length");
  int32_t prec = f->type_length >> 8, scale = f->type_length & 0xff;
  if (f->kind == PQ_W_DECIMAL && (prec < 1 || prec > 38 || scale > prec))
    return bad_schema(name, "DECIMAL needs a precision of 1 to 38 and a scale up to it");
  n->name = pq__arena_strndup(&b->w->mem, (const uint8_t *)name, strlen(name));
  if (!n->name) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  n->kind = f->kind;
  n->nullable = f->nullable;
  n->type_length = f->type_length;
  if (f->kind == PQ_W_DECIMAL) {
    n->precision = prec;
    n->scale = scale;
    n->type_length = pq_wdecimal_bytes(prec);
  }
  n->field_id = f->field_id;
  n->def = (int16_t)(pdef + f->nullable);
  n->rep = prep;
  b->path[b->depth++] = n->name;
  int rc = 0;
  if (!is_group(f->kind)) {
    rc = add_leaf(b, n);
  } else if (!(rc = check_group(f, name))) {
    bool layer = f->kind != PQ_W_STRUCT;
    if (layer) n->rep = (int16_t)(prep + 1);
    n->lo = b->next_leaf;
    rc = build_kids(b, f, n, (int16_t)(n->def + layer), n->rep);
    n->hi = b->next_leaf;
  }
  b->depth--;
  return rc;
}

int pq__wschema_build(pq_writer *w, const pq_wfield *schema) {
  if (!schema || schema->kind != PQ_W_STRUCT)
    return dd_err_set(DD_EINVAL, "parquet writer: the schema root must be a PQ_W_STRUCT");
  size_t n = count_leaves(schema, 0);
  w->leaves = calloc(n + 1, sizeof *w->leaves);
  if (!w->leaves) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  w->nleaves = n;
  sbuild b = {w, {0}, 0, 0};
  /* the root's name is the schema name, not part of leaf paths */
  w->root.name = pq__arena_strndup(&w->mem, (const uint8_t *)(schema->name ? schema->name : "schema"),
                                   strlen(schema->name ? schema->name : "schema"));
  if (!w->root.name) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  w->root.kind = PQ_W_STRUCT;
  int rc = check_group(schema, w->root.name);
  if (!rc) rc = build_kids(&b, schema, &w->root, 0, 0);
  w->root.lo = 0;
  w->root.hi = b.next_leaf;
  if (!rc && b.next_leaf != n) rc = bad_schema(schema->name, "nested too deeply");
  return rc;
}

/* ---- shredding ------------------------------------------------------------------------ */

static int bad_row(const pq__wnode *n, const char *why) {
  return dd_err_set(DD_EINVAL, "parquet writer: value for '%s': %s", n->name, why);
}

int pq__wleaf_reserve_levels(pq__wleaf *l, size_t n) {
  if (l->nlev + n <= l->caplev) return 0;
  size_t cap = l->caplev ? l->caplev : 1024;
  while (cap < l->nlev + n) cap *= 2;
  int16_t *nd = realloc(l->def, cap * sizeof *nd);
  if (nd) l->def = nd;
  int16_t *nr = nd ? realloc(l->rep, cap * sizeof *nr) : NULL;
  if (!nd || !nr) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  l->rep = nr;
  l->caplev = cap;
  return 0;
}

static int put_level(pq__wleaf *l, int16_t d, int16_t r) {
  int rc = pq__wleaf_reserve_levels(l, 1);
  if (rc) return rc;
  l->def[l->nlev] = d;
  l->rep[l->nlev] = r;
  l->nlev++;
  return 0;
}

static int emit_null(pq_writer *w, const pq__wnode *n, int16_t d, int16_t r) {
  for (uint32_t i = n->lo; i < n->hi; i++) {
    int rc = put_level(&w->leaves[i], d, r);
    if (rc) return rc;
  }
  return 0;
}

static int leaf_value(pq__wleaf *l, const pq_value *v) {
  static const uint8_t want[] = {
      [PQ_T_BOOLEAN] = PQ_V_BOOL, [PQ_T_INT32] = PQ_V_INT32, [PQ_T_INT64] = PQ_V_INT64,
      [PQ_T_INT96] = PQ_V_INT96, [PQ_T_FLOAT] = PQ_V_FLOAT, [PQ_T_DOUBLE] = PQ_V_DOUBLE,
      [PQ_T_BYTE_ARRAY] = PQ_V_BYTES, [PQ_T_FIXED_LEN_BYTE_ARRAY] = PQ_V_FIXED};
  if (v->kind != want[l->type]) return bad_row(l->node, "kind does not match the schema");
  int rc;
  switch (l->type) {
    case PQ_T_BOOLEAN: rc = pq__buf_byte(&l->vals, v->u.b ? 1 : 0); break;
    case PQ_T_INT32: rc = pq__buf_put(&l->vals, &v->u.i32, 4); break;
    case PQ_T_INT64: rc = pq__buf_put(&l->vals, &v->u.i64, 8); break;
    case PQ_T_FLOAT: rc = pq__buf_put(&l->vals, &v->u.f, 4); break;
    case PQ_T_DOUBLE: rc = pq__buf_put(&l->vals, &v->u.d, 8); break;
    case PQ_T_BYTE_ARRAY: {
      uint64_t off = l->vals.len;
      rc = pq__buf_put(&l->offs, &off, sizeof off);
      if (!rc && v->len) rc = pq__buf_put(&l->vals, v->u.bytes, v->len);
      break;
    }
    default:
      if (v->len != (uint32_t)l->elem) return bad_row(l->node, "wrong fixed length");
      rc = pq__buf_put(&l->vals, v->u.bytes, v->len);
  }
  if (!rc) l->nvals++;
  return rc;
}

static int shred(pq_writer *w, const pq__wnode *n, const pq_value *v, int16_t r) {
  int rc = 0;
  if (v->kind == PQ_V_NULL) {
    if (!n->nullable) return bad_row(n, "null in a required field");
    return emit_null(w, n, (int16_t)(n->def - 1), r);
  }
  switch (n->kind) {
    case PQ_W_STRUCT:
      if (v->kind != PQ_V_STRUCT || v->len != n->nkids)
        return bad_row(n, "expected a STRUCT with one item per schema field");
      for (size_t i = 0; i < n->nkids && !rc; i++) rc = shred(w, &n->kids[i], &v->u.items[i], r);
      return rc;
    case PQ_W_LIST: case PQ_W_MAP: {
      bool map = n->kind == PQ_W_MAP;
      if (v->kind != (map ? PQ_V_MAP : PQ_V_LIST)) return bad_row(n, "expected a LIST or MAP");
      if (v->len == 0) return emit_null(w, n, n->def, r);
      if (v->len && !v->u.items) return bad_row(n, "items is NULL");
      for (uint32_t i = 0; i < v->len && !rc; i++) {
        int16_t ri = i ? n->rep : r;
        if (!map) {
          rc = shred(w, &n->kids[0], &v->u.items[i], ri);
        } else if (!(rc = shred(w, &n->kids[0], &v->u.items[2 * i], ri))) {
          rc = shred(w, &n->kids[1], &v->u.items[2 * i + 1], ri);
        }
      }
      return rc;
    }
    default: {
      pq__wleaf *l = &w->leaves[n->lo];
      rc = leaf_value(l, v);
      return rc ? rc : put_level(l, n->def, r);
    }
  }
}

typedef struct mark { size_t nlev, vals, offs, nvals; } mark;

int pq__wshred_row(pq_writer *w, const pq_value *row) {
  mark *m = malloc((w->nleaves + 1) * sizeof *m);
  if (!m) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  for (size_t i = 0; i < w->nleaves; i++) {
    pq__wleaf *l = &w->leaves[i];
    m[i] = (mark){l->nlev, l->vals.len, l->offs.len, l->nvals};
  }
  int rc = (row && row->kind == PQ_V_STRUCT && row->len == w->root.nkids)
               ? 0 : bad_row(&w->root, "a row must be a STRUCT with one item per field");
  for (size_t i = 0; !rc && i < w->root.nkids; i++)
    rc = shred(w, &w->root.kids[i], &row->u.items[i], 0);
  for (size_t i = 0; rc && i < w->nleaves; i++) { /* roll back the partial row */
    pq__wleaf *l = &w->leaves[i];
    l->nlev = m[i].nlev;
    l->vals.len = m[i].vals;
    l->offs.len = m[i].offs;
    l->nvals = m[i].nvals;
  }
  free(m);
  return rc;
}

void pq__wleaf_reset(pq__wleaf *l) {
  l->nlev = 0;
  l->vals.len = 0;
  l->offs.len = 0;
  l->nvals = 0;
  pq__wleaf_mark(l);
}

void pq__wleaf_free(pq__wleaf *l) {
  free(l->def);
  free(l->rep);
  pq__buf_free(&l->vals);
  pq__buf_free(&l->offs);
}
