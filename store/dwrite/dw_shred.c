/* dw_shred.c: one arw_batch into the Parquet writer, column-wise: for each leaf of the
 * table's data schema, its (def, rep) levels and defined values straight from the Arrow
 * views (validity bitmaps, offsets, values; a column without nulls is handed over without
 * a copy), and the null counts of the stats columns (their min/max come from the Parquet
 * writer's chunk statistics, dw__stats_take_ranges; decimals are ranged here).
 *
 * Levels: on a path without lists or maps every row is one entry and the def level counts
 * the nullable nodes that are present from the top; below a list or map the walk goes
 * value by value (an empty list is one entry at the list's def, a new element repeats at
 * the list's rep level). */
#include "store/dwrite/dw_int.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAXD 32

typedef struct shred {
  pq_writer *pw;
  dw__stats *st;
  const arw_batch *b;
  const arw_schema *s;
  size_t rows;
  size_t leaf, stat;
  /* the path from the column to the current node */
  arw_view views[MAXD];
  const dl_type *types[MAXD];
  bool nullable[MAXD];
  const char *names[MAXD];
  size_t depth;
  int repeated;            /* lists/maps on the path */
  /* scratch, reused */
  int16_t *def, *rep;
  size_t nlev, caplev;
  uint32_t *sel;           /* present slots of the leaf, in order */
  size_t nsel, capsel;
  uint8_t *tmp;            /* converted values */
  size_t captmp;
  int32_t *offs;
  size_t capoffs;
} shred;

static int oom(void) { return dd_err_set(DD_ENOMEM, "dwrite: out of memory"); }

static int grow(void **p, size_t *cap, size_t need, size_t elem) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 1024;
  while (c < need) c *= 2;
  void *n = realloc(*p, c * elem);
  if (!n) return oom();
  *p = n;
  *cap = c;
  return 0;
}

static int put_level(shred *sh, int16_t d, int16_t r) {
  if (sh->nlev == sh->caplev) {
    size_t cap = sh->caplev;
    int rc = grow((void **)&sh->def, &cap, sh->nlev + 1, sizeof *sh->def);
    if (!rc) rc = grow((void **)&sh->rep, &sh->caplev, sh->nlev + 1, sizeof *sh->rep);
    if (rc) return rc;
    if (cap > sh->caplev) return oom(); /* both grow the same way */
  }
  sh->def[sh->nlev] = d;
  sh->rep[sh->nlev++] = r;
  return 0;
}

static int put_sel(shred *sh, size_t slot) {
  int rc = grow((void **)&sh->sel, &sh->capsel, sh->nsel + 1, sizeof *sh->sel);
  if (!rc) sh->sel[sh->nsel++] = (uint32_t)slot;
  return rc;
}

static const char *name_of(const shred *sh) { return sh->names[sh->depth - 1]; }

/* ---- expected Arrow kinds ------------------------------------------------------------- */

static arw_kind want_kind(const dl_type *t) {
  switch (t->kind) {
    case DL_TYPE_BOOLEAN: return ARW_BOOL;
    case DL_TYPE_BYTE: return ARW_INT8;
    case DL_TYPE_SHORT: return ARW_INT16;
    case DL_TYPE_INTEGER: return ARW_INT32;
    case DL_TYPE_LONG: return ARW_INT64;
    case DL_TYPE_FLOAT: return ARW_FLOAT32;
    case DL_TYPE_DOUBLE: return ARW_FLOAT64;
    case DL_TYPE_DECIMAL: return ARW_DECIMAL128;
    case DL_TYPE_STRING: return ARW_UTF8;
    case DL_TYPE_BINARY: return ARW_BINARY;
    case DL_TYPE_DATE: return ARW_DATE32;
    case DL_TYPE_TIMESTAMP: return ARW_TIMESTAMP_UTC;
    case DL_TYPE_TIMESTAMP_NTZ: return ARW_TIMESTAMP;
    case DL_TYPE_ARRAY: return ARW_LIST;
    case DL_TYPE_MAP: return ARW_MAP;
    default: return ARW_STRUCT; /* struct, variant */
  }
}

/* ---- values ---------------------------------------------------------------------------- */

static bool sel_identity(const shred *sh) {
  return sh->nsel == 0 || (sh->sel[sh->nsel - 1] - sh->sel[0] == sh->nsel - 1);
}

static int put_values(shred *sh, const arw_view *v, const dl_type *t) {
  size_t n = sh->nsel;
  if (n == 0) return 0;
  size_t w = arw_kind_width(v->kind);
  const uint32_t *sel = sh->sel;
  if (v->kind == ARW_UTF8 || v->kind == ARW_BINARY) {
    if (sel_identity(sh))
      return pq_writer_put_bytes(sh->pw, sh->leaf, v->values, v->offsets + sel[0], n);
    size_t bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += (size_t)(v->offsets[sel[i] + 1] - v->offsets[sel[i]]);
    int rc = grow((void **)&sh->offs, &sh->capoffs, n + 1, sizeof *sh->offs);
    if (!rc) rc = grow((void **)&sh->tmp, &sh->captmp, bytes + 1, 1);
    if (rc) return rc;
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
      size_t len = (size_t)(v->offsets[sel[i] + 1] - v->offsets[sel[i]]);
      sh->offs[i] = (int32_t)at;
      memcpy(sh->tmp + at, v->values + v->offsets[sel[i]], len);
      at += len;
    }
    sh->offs[n] = (int32_t)at;
    return pq_writer_put_bytes(sh->pw, sh->leaf, sh->tmp, sh->offs, n);
  }
  if ((v->kind == ARW_INT32 || v->kind == ARW_INT64 || v->kind == ARW_FLOAT32 ||
       v->kind == ARW_FLOAT64 || v->kind == ARW_DATE32 || v->kind == ARW_TIMESTAMP ||
       v->kind == ARW_TIMESTAMP_UTC) && sel_identity(sh))
    return pq_writer_put_fixed(sh->pw, sh->leaf, v->values + sel[0] * w, n);
  int32_t fixed = t->kind == DL_TYPE_DECIMAL ? pq_wdecimal_bytes(t->precision) : 0;
  size_t out_w = v->kind == ARW_BOOL ? 1 : (v->kind == ARW_INT8 || v->kind == ARW_INT16) ? 4
               : v->kind == ARW_DECIMAL128 ? (fixed ? (size_t)fixed : t->precision <= 9 ? 4 : 8)
               : w;
  int rc = grow((void **)&sh->tmp, &sh->captmp, n * out_w + 1, 1);
  if (rc) return rc;
  uint8_t *o = sh->tmp;
  for (size_t i = 0; i < n; i++, o += out_w) {
    size_t j = sel[i];
    switch (v->kind) {
      case ARW_BOOL: *o = arw_view_bool(v, j); break;
      case ARW_INT8: { int32_t x = (int8_t)v->values[j]; memcpy(o, &x, 4); break; }
      case ARW_INT16: { int16_t y; memcpy(&y, v->values + j * 2, 2); int32_t x = y; memcpy(o, &x, 4); break; }
      case ARW_DECIMAL128:
        if (fixed) { /* big-endian, the low `fixed` bytes */
          for (size_t k = 0; k < out_w; k++) o[k] = v->values[j * 16 + out_w - 1 - k];
        } else {
          memcpy(o, v->values + j * 16, out_w); /* little-endian low bytes */
        }
        break;
      default: memcpy(o, v->values + j * w, w);
    }
  }
  return pq_writer_put_fixed(sh->pw, sh->leaf, sh->tmp, n);
}

static dw__i128 dec_at(const arw_view *v, size_t j) {
  dw__i128 x;
  memcpy(&x, v->values + j * 16, 16);
  return x;
}

/* Stats of a leaf on a path without lists: its nulls and the present values' range. */
static void leaf_stats(shred *sh, dw__stat *c, const arw_view *v) {
  if (!c || !c->indexed) return;
  c->nulls += (int64_t)(sh->rows - sh->nsel);
  if (c->kind == DW__S_NULLS || c->bad || sh->nsel == 0) return;
  /* the range kinds' min/max come from the Parquet writer's statistics at the file's end
   * (dw__stats_take_ranges); decimals are ranged here */
  if (v->kind == ARW_DECIMAL128)
    for (size_t i = 0; i < sh->nsel; i++) dw__stat_dec(c, dec_at(v, sh->sel[i]));
}

/* ---- levels ---------------------------------------------------------------------------- */

/* Flat path: one entry per row. */
static int flat_levels(shred *sh, int16_t max_def) {
  size_t rows = sh->rows;
  bool simple = true;
  for (size_t k = 0; k < sh->depth; k++) simple &= sh->views[k].null_count == 0;
  int rc = grow((void **)&sh->sel, &sh->capsel, rows + 1, sizeof *sh->sel);
  if (!rc && max_def > 0) {
    size_t cap = sh->caplev;
    rc = grow((void **)&sh->def, &cap, rows + 1, sizeof *sh->def);
    if (!rc) rc = grow((void **)&sh->rep, &sh->caplev, rows + 1, sizeof *sh->rep);
  }
  if (rc) return rc;
  if (simple) {
    for (size_t i = 0; i < rows; i++) sh->sel[i] = (uint32_t)i;
    sh->nsel = rows;
    if (max_def > 0)
      for (size_t i = 0; i < rows; i++) sh->def[i] = max_def;
    sh->nlev = max_def > 0 ? rows : 0;
    return 0;
  }
  for (size_t i = 0; i < rows; i++) {
    int16_t d = 0;
    bool present = true;
    for (size_t k = 0; k < sh->depth && present; k++) {
      bool valid = arw_view_valid(&sh->views[k], i);
      if (!sh->nullable[k] && !valid)
        return dd_err_set(DD_EINVAL, "dwrite: null in non-nullable column '%s'", sh->names[k]);
      if (sh->nullable[k]) {
        if (valid) d++;
        else present = false;
      }
    }
    if (max_def > 0) sh->def[i] = d;
    if (present) sh->sel[sh->nsel++] = (uint32_t)i;
  }
  sh->nlev = max_def > 0 ? rows : 0;
  return 0;
}

/* Repeated path: node k at slot j, def/rep so far. */
static int walk_slot(shred *sh, size_t k, size_t j, int16_t d, int16_t r, const int16_t *reps) {
  const arw_view *v = &sh->views[k];
  bool valid = arw_view_valid(v, j);
  if (!valid) {
    if (!sh->nullable[k])
      return dd_err_set(DD_EINVAL, "dwrite: null in non-nullable column '%s'", sh->names[k]);
    return put_level(sh, d, r);
  }
  if (sh->nullable[k]) d++;
  if (k + 1 == sh->depth) {
    int rc = put_sel(sh, j);
    return rc ? rc : put_level(sh, d, r);
  }
  const dl_type *t = sh->types[k];
  if (t->kind != DL_TYPE_ARRAY && t->kind != DL_TYPE_MAP)
    return walk_slot(sh, k + 1, j, d, r, reps);
  int32_t s = v->offsets[j], e = v->offsets[j + 1];
  if (s == e) return put_level(sh, d, r);
  for (int32_t c = s; c < e; c++) {
    int rc = walk_slot(sh, k + 1, (size_t)c, (int16_t)(d + 1), c == s ? r : reps[k], reps);
    if (rc) return rc;
  }
  return 0;
}

static int emit_leaf(shred *sh, dw__stat *stat) {
  const dl_type *t = sh->types[sh->depth - 1];
  arw_view *v = &sh->views[sh->depth - 1];
  if (v->kind != ARW_NULL && v->kind != want_kind(t))
    return dd_err_set(DD_EINVAL, "dwrite: column '%s' has the wrong Arrow type for its "
                      "Delta type", name_of(sh));
  int16_t max_def = 0, reps[MAXD], rep = 0;
  for (size_t k = 0; k < sh->depth; k++) {
    max_def = (int16_t)(max_def + sh->nullable[k]);
    reps[k] = rep;
    if (sh->types[k]->kind == DL_TYPE_ARRAY || sh->types[k]->kind == DL_TYPE_MAP) {
      if (k + 1 < sh->depth) max_def++;
      rep++;
      reps[k] = rep;
    }
  }
  sh->nlev = sh->nsel = 0;
  int rc;
  if (!sh->repeated) {
    rc = flat_levels(sh, max_def);
  } else {
    rc = 0;
    for (size_t i = 0; i < sh->rows && !rc; i++) rc = walk_slot(sh, 0, i, 0, 0, reps);
  }
  if (!rc && sh->nsel && v->kind == ARW_NULL)
    rc = dd_err_set(DD_EINVAL, "dwrite: column '%s' has no values", name_of(sh));
  if (!rc) rc = pq_writer_put_levels(sh->pw, sh->leaf, sh->nlev ? sh->def : NULL,
                                     sh->nlev && sh->repeated ? sh->rep : NULL,
                                     sh->nlev ? sh->nlev : sh->rows);
  if (!rc) rc = put_values(sh, v, t);
  if (!rc && !sh->repeated && stat) stat->leaf = (int)sh->leaf;
  if (!rc && !sh->repeated) leaf_stats(sh, stat, v);
  sh->leaf++;
  return rc;
}

/* Null count of a flat stats column that is not a leaf (array, map, variant). */
static void node_nulls(shred *sh, dw__stat *c) {
  if (!c->indexed) return;
  for (size_t i = 0; i < sh->rows; i++) {
    bool present = true;
    for (size_t k = 0; k < sh->depth && present; k++) present = arw_view_valid(&sh->views[k], i);
    c->nulls += !present;
  }
}

static int visit(shred *sh, const dl_type *t, bool nullable, int id, const char *name) {
  if (sh->depth >= MAXD) return dd_err_set(DD_EUNSUPPORTED, "dwrite: schema nested too deeply");
  if (id < 0)
    return dd_err_set(DD_EINVAL, "dwrite: the batch has no column '%s'", name);
  int rc = arw_batch_view(sh->b, id, &sh->views[sh->depth]);
  if (rc) return rc;
  sh->types[sh->depth] = t;
  sh->nullable[sh->depth] = nullable;
  sh->names[sh->depth++] = name;
  arw_kind ak = sh->views[sh->depth - 1].kind;
  bool nested = t->kind == DL_TYPE_STRUCT || t->kind == DL_TYPE_ARRAY ||
                t->kind == DL_TYPE_MAP || t->kind == DL_TYPE_VARIANT;
  if (nested && ak != want_kind(t))
    rc = dd_err_set(DD_EINVAL, "dwrite: column '%s' has the wrong Arrow type for its Delta "
                    "type", name);
  dw__stat *stat = NULL;
  if (!rc && !sh->repeated && t->kind != DL_TYPE_STRUCT) {
    if (sh->stat >= sh->st->n) {
      rc = dd_err_set(DD_EINTERNAL, "dwrite: stats columns out of step");
    } else {
      stat = &sh->st->cols[sh->stat++];
      if (nested) node_nulls(sh, stat);
    }
  }
  if (rc) {
  } else if (t->kind == DL_TYPE_STRUCT || t->kind == DL_TYPE_VARIANT) {
    static const char *const vnames[] = {"value", "metadata"};
    static const dl_type BIN = {.kind = DL_TYPE_BINARY};
    size_t n = t->kind == DL_TYPE_STRUCT ? t->num_fields : 2;
    for (size_t i = 0; i < n && !rc; i++) {
      const char *cn = t->kind == DL_TYPE_STRUCT ? t->fields[i].name : vnames[i];
      rc = visit(sh, t->kind == DL_TYPE_STRUCT ? t->fields[i].type : &BIN,
                 t->kind == DL_TYPE_STRUCT ? t->fields[i].nullable : false,
                 arw_schema_find(sh->s, id, cn), cn);
    }
  } else if (t->kind == DL_TYPE_ARRAY || t->kind == DL_TYPE_MAP) {
    sh->repeated++;
    if (t->kind == DL_TYPE_ARRAY) {
      rc = visit(sh, t->element, t->contains_null, arw_field_child(sh->s, id, 0), "element");
    } else {
      rc = visit(sh, t->key, false, arw_field_child(sh->s, id, 0), "key");
      if (!rc) rc = visit(sh, t->value, t->value_contains_null, arw_field_child(sh->s, id, 1),
                          "value");
    }
    sh->repeated--;
  } else {
    rc = emit_leaf(sh, stat);
  }
  sh->depth--;
  return rc;
}

struct dw__shredder { shred sh; };

int dw__shred_batch(dw__shredder **state, pq_writer *pw, dw__stats *st, const dl_type *root,
                    const char *const *part, size_t npart, const arw_batch *b) {
  if (!*state && !(*state = calloc(1, sizeof **state))) return oom();
  shred *sh = &(*state)->sh;
  sh->pw = pw;
  sh->st = st;
  sh->b = b;
  sh->s = arw_batch_schema(b);
  sh->rows = arw_batch_rows(b);
  sh->leaf = sh->stat = sh->depth = 0;
  sh->repeated = 0;
  int rc = 0;
  for (size_t i = 0; i < root->num_fields && !rc; i++) {
    const dl_field *f = &root->fields[i];
    bool is_part = false;
    for (size_t j = 0; j < npart; j++) is_part |= strcasecmp(part[j], f->name) == 0;
    if (is_part) continue;
    int id = arw_schema_find(sh->s, ARW_ROOT, f->name);
    rc = visit(sh, f->type, f->nullable, id, f->name);
  }
  if (!rc) rc = pq_writer_end_rows(pw, (int64_t)sh->rows);
  return rc;
}

void dw__shredder_free(dw__shredder *state) {
  if (!state) return;
  shred *sh = &state->sh;
  free(sh->def);
  free(sh->rep);
  free(sh->sel);
  free(sh->tmp);
  free(sh->offs);
  free(state);
}
