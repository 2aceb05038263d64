/* pq_schema.c: turns the flattened SchemaElement list into the pq_field tree, computes
 * definition/repetition levels, numbers the leaves, and resolves each node's shape
 * (struct, list, map) from its structure and annotations, never from child names. */
#include "store/parquet/pq_internal.h"

#include <string.h>

typedef struct build {
  pq_file *f;
  uint32_t next;      /* next schema element to consume */
  size_t nleaves;
} build;

static bool is_list_annot(const pq_field *g) {
  return g->converted == PQ_CT_LIST || g->logical.kind == PQ_LT_LIST;
}

static bool is_map_annot(const pq_field *g) {
  return g->converted == PQ_CT_MAP || g->converted == PQ_CT_MAP_KEY_VALUE ||
         g->logical.kind == PQ_LT_MAP;
}

static bool is_string_annot(const pq_field *x) {
  if (x->type != PQ_T_BYTE_ARRAY) return false;
  return x->converted == PQ_CT_UTF8 || x->converted == PQ_CT_ENUM ||
         x->converted == PQ_CT_JSON || x->logical.kind == PQ_LT_STRING ||
         x->logical.kind == PQ_LT_ENUM || x->logical.kind == PQ_LT_JSON;
}

/* Shape of a group from its annotation and children; a repeated node that is not the
 * repeated layer of a LIST/MAP is itself a list of its (non-repeated) self. */
static pq_shape group_shape(const pq_field *g) {
  if (g->num_children == 1 && g->children[0].repetition == PQ_REPEATED) {
    const pq_field *r = &g->children[0];
    if (is_map_annot(g) && r->num_children == 2) return PQ_SHAPE_MAP;
    if (is_list_annot(g) || is_map_annot(g)) return PQ_SHAPE_LIST;
  }
  return PQ_SHAPE_STRUCT;
}

static int build_node(build *b, pq_field *out, const pq_field *parent, int depth);

static int build_children(build *b, pq_field *g, int32_t n, int depth) {
  pq_file *f = b->f;
  if (n < 0 || (uint32_t)n > f->num_selems - b->next)
    return dd_err_set(DD_ECORRUPT, "parquet: corrupt schema: group '%s' claims %d children "
                      "but only %u elements follow", g->name, n, f->num_selems - b->next);
  pq_field *kids = pq__arena_alloc(&f->arena, ((size_t)n + 1) * sizeof *kids);
  if (!kids) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  memset(kids, 0, ((size_t)n + 1) * sizeof *kids);
  g->children = kids;
  g->num_children = (uint32_t)n;
  for (int32_t i = 0; i < n; i++) {
    int rc = build_node(b, &kids[i], g, depth + 1);
    if (rc) return rc;
  }
  return 0;
}

static int build_node(build *b, pq_field *out, const pq_field *parent, int depth) {
  pq_file *f = b->f;
  if (depth > PQ__MAX_DEPTH)
    return dd_err_set(DD_ECORRUPT, "parquet: corrupt schema: nested deeper than %d",
                      PQ__MAX_DEPTH);
  if (b->next >= f->num_selems)
    return dd_err_set(DD_ECORRUPT, "parquet: corrupt schema: truncated element list");
  const pq__selem *e = &f->selems[b->next++];
  *out = e->f;
  out->parent = parent;
  out->column = -1;
  if (!parent) out->repetition = PQ_REQUIRED;
  out->max_def = (int16_t)((parent ? parent->max_def : 0) + (out->repetition != PQ_REQUIRED));
  out->max_rep = (int16_t)((parent ? parent->max_rep : 0) + (out->repetition == PQ_REPEATED));
  if (e->num_children > 0 || !e->has_type || !parent) {
    out->type = PQ_T_GROUP;
    int rc = build_children(b, out, e->num_children, depth);
    if (rc) return rc;
    out->shape = group_shape(out);
    return 0;
  }
  if (out->type == PQ_T_FIXED_LEN_BYTE_ARRAY &&
      (out->type_length <= 0 || out->type_length > (1 << 24)))
    return dd_err_set(DD_ECORRUPT, "parquet: corrupt schema: column '%s' has "
                      "FIXED_LEN_BYTE_ARRAY length %d", out->name, out->type_length);
  if (out->type == PQ_T_INT96) out->type_length = 12;
  out->shape = PQ_SHAPE_PRIMITIVE;
  out->is_string = is_string_annot(out);
  out->column = (int32_t)b->nleaves++;
  return 0;
}

static void collect_leaves(const pq_field *n, const pq_field **leaves) {
  if (n->type != PQ_T_GROUP) {
    leaves[n->column] = n;
    return;
  }
  for (uint32_t i = 0; i < n->num_children; i++) collect_leaves(&n->children[i], leaves);
}

static int check_rowgroups(pq_file *f) {
  for (size_t g = 0; g < f->num_rgs; g++) {
    const pq__rowgroup *rg = &f->rgs[g];
    if (rg->num_chunks != f->num_leaves)
      return dd_err_set(DD_ECORRUPT, "parquet: corrupt footer: row group %zu has %u column "
                        "chunks, schema has %zu leaves", g, rg->num_chunks, f->num_leaves);
    if (rg->num_rows < 0)
      return dd_err_set(DD_ECORRUPT, "parquet: corrupt footer: row group %zu has negative "
                        "num_rows", g);
    for (size_t c = 0; c < rg->num_chunks; c++) {
      if (rg->chunks[c].has_meta && rg->chunks[c].info.type != f->leaves[c]->type)
        return dd_err_set(DD_ECORRUPT, "parquet: corrupt footer: column chunk %zu of row "
                          "group %zu has a type different from its schema leaf '%s'", c, g,
                          f->leaves[c]->name);
    }
  }
  return 0;
}

int pq__schema_build(pq_file *f) {
  build b = {f, 0, 0};
  f->root = pq__arena_alloc(&f->arena, sizeof *f->root);
  if (!f->root) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  memset(f->root, 0, sizeof *f->root);
  int rc = build_node(&b, f->root, NULL, 0);
  if (rc) return rc;
  if (b.next != f->num_selems)
    return dd_err_set(DD_ECORRUPT, "parquet: corrupt schema: %u elements after the tree",
                      f->num_selems - b.next);
  f->num_leaves = b.nleaves;
  f->leaves = pq__arena_alloc(&f->arena, (b.nleaves + 1) * sizeof *f->leaves);
  if (!f->leaves) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  collect_leaves(f->root, f->leaves);
  return check_rowgroups(f);
}
