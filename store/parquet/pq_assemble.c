/* pq_assemble.c: rebuilds nested row values from the decoded leaf columns of a row group
 * (record assembly, the inverse of Dremel shredding). A node looks at the next entry of
 * its first leaf: a definition level below the node's threshold means null (or an empty
 * list/map) and consumes one entry from every leaf beneath it; a list keeps taking
 * elements while the next repetition level equals its own. Every read is bounds-checked
 * so inconsistent levels become DD_ECORRUPT, never out-of-range access. */
#include "store/parquet/pq_cursor_int.h"

#include <stdlib.h>
#include <string.h>

static int asm_bad(const pq_cursor *k, uint32_t col, const char *why) {
  return dd_err_set(DD_ECORRUPT, "parquet: corrupt levels in column '%s' (row group %zu): %s",
                    k->cols[col].field->name, k->rg, why);
}

static inline int16_t def_at(const pq__col *c, size_t p) { return c->def ? c->def[p] : 0; }
static inline int16_t rep_at(const pq__col *c, size_t p) { return c->rep ? c->rep[p] : 0; }

static int skip_one(pq_cursor *k, const pq__an *a) {
  for (uint32_t i = a->lo; i < a->hi; i++) {
    const pq__col *c = &k->cols[i];
    if (k->pos[i] >= c->nlev) return asm_bad(k, i, "column ended inside a row");
    if (def_at(c, k->pos[i]) >= c->field->max_def)
      return asm_bad(k, i, "value present under a null parent");
    k->pos[i]++;
  }
  return 0;
}

static int leaf_value(pq_cursor *k, uint32_t i, pq_value *out) {
  pq__col *c = &k->cols[i];
  if (def_at(c, k->pos[i]) != c->field->max_def)
    return asm_bad(k, i, "null in a required position");
  if (k->vpos[i] >= c->nvals) return asm_bad(k, i, "more defined entries than values");
  const uint8_t *v = c->vals + k->vpos[i] * c->elem;
  k->vpos[i]++;
  k->pos[i]++;
  memset(out, 0, sizeof *out);
  switch (c->field->type) {
    case PQ_T_BOOLEAN: out->kind = PQ_V_BOOL; out->u.b = *v != 0; break;
    case PQ_T_INT32: out->kind = PQ_V_INT32; memcpy(&out->u.i32, v, 4); break;
    case PQ_T_INT64: out->kind = PQ_V_INT64; memcpy(&out->u.i64, v, 8); break;
    case PQ_T_FLOAT: out->kind = PQ_V_FLOAT; memcpy(&out->u.f, v, 4); break;
    case PQ_T_DOUBLE: out->kind = PQ_V_DOUBLE; memcpy(&out->u.d, v, 8); break;
    case PQ_T_BYTE_ARRAY: {
      pq_bytes b;
      memcpy(&b, v, sizeof b);
      out->kind = PQ_V_BYTES;
      out->is_string = c->field->is_string;
      out->u.bytes = b.ptr;
      out->len = (uint32_t)b.len;
      break;
    }
    default:
      out->kind = c->field->type == PQ_T_INT96 ? PQ_V_INT96 : PQ_V_FIXED;
      out->u.bytes = v;
      out->len = (uint32_t)c->elem;
  }
  return 0;
}

static int push(pq_cursor *k, const pq_value *v) {
  if (k->sp == k->scap) {
    size_t cap = k->scap ? k->scap * 2 : 256;
    pq_value *s = realloc(k->stack, cap * sizeof *s);
    if (!s) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
    k->stack = s;
    k->scap = cap;
  }
  k->stack[k->sp++] = *v;
  return 0;
}

static int asm_node(pq_cursor *k, const pq__an *a, pq_value *out);

static int asm_struct(pq_cursor *k, const pq__an *a, pq_value *out) {
  pq_value *items = pq__arena_alloc(&k->rowmem, (a->nkids ? a->nkids : 1) * sizeof *items);
  if (!items) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  for (uint32_t i = 0; i < a->nkids; i++) {
    int rc = asm_node(k, &a->kids[i], &items[i]);
    if (rc) return rc;
  }
  out->kind = PQ_V_STRUCT;
  out->len = a->nkids;
  out->u.items = items;
  return 0;
}

static int asm_list(pq_cursor *k, const pq__an *a, pq_value *out) {
  size_t base = k->sp;
  const pq__col *c = &k->cols[a->lo];
  int rc = 0;
  for (;;) {
    for (uint32_t i = 0; i < a->nkids && !rc; i++) {
      pq_value tmp;
      rc = asm_node(k, &a->kids[i], &tmp);
      if (!rc) rc = push(k, &tmp);
    }
    if (rc) return rc;
    size_t p = k->pos[a->lo];
    if (p >= c->nlev || rep_at(c, p) != a->rep_lvl) break;
  }
  size_t n = k->sp - base;
  pq_value *items = pq__arena_dup(&k->rowmem, k->stack + base, n * sizeof *items);
  if (!items) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  k->sp = base;
  out->kind = a->shape == PQ_SHAPE_MAP ? PQ_V_MAP : PQ_V_LIST;
  out->len = (uint32_t)(a->shape == PQ_SHAPE_MAP ? n / 2 : n);
  out->u.items = items;
  return 0;
}

static int asm_node(pq_cursor *k, const pq__an *a, pq_value *out) {
  memset(out, 0, sizeof *out);
  if (a->lo >= a->hi) return asm_struct(k, a, out); /* no leaves: empty struct */
  const pq__col *c = &k->cols[a->lo];
  size_t p = k->pos[a->lo];
  if (p >= c->nlev) return asm_bad(k, a->lo, "column ended inside a row");
  int16_t d = def_at(c, p);
  if (a->opt_def > 0 && d < a->opt_def) return skip_one(k, a); /* null */
  switch (a->shape) {
    case PQ_SHAPE_PRIMITIVE: return leaf_value(k, a->lo, out);
    case PQ_SHAPE_STRUCT: return asm_struct(k, a, out);
    default:
      if (d < a->rep_def) { /* empty list or map */
        out->kind = a->shape == PQ_SHAPE_MAP ? PQ_V_MAP : PQ_V_LIST;
        out->u.items = NULL;
        return skip_one(k, a);
      }
      return asm_list(k, a, out);
  }
}

int pq__assemble_row(pq_cursor *k, pq_value *out) {
  pq__arena_reset(&k->rowmem);
  k->sp = 0;
  int rc = asm_node(k, k->aroot, out);
  return rc ? rc : pq__check_row_end(k);
}

int pq__check_row_end(pq_cursor *k) {
  for (uint32_t i = 0; i < k->ncols; i++) {
    const pq__col *c = &k->cols[i];
    if (k->pos[i] < c->nlev && rep_at(c, k->pos[i]) != 0)
      return asm_bad(k, i, "repetition levels do not start a new row where expected");
  }
  return 0;
}

int pq__check_rg_end(pq_cursor *k) {
  for (uint32_t i = 0; i < k->ncols; i++) {
    const pq__col *c = &k->cols[i];
    if (k->pos[i] != c->nlev || k->vpos[i] != c->nvals)
      return asm_bad(k, i, "column holds more entries than the row group's num_rows");
  }
  return 0;
}
