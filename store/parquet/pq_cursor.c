/* pq_cursor.c: the row cursor. Resolves the projection (dotted paths through structs) to
 * the set of wanted leaves, builds the projected schema (pq_pnode) with its parallel
 * assembly plan (pq__an), and streams row groups: decode the wanted chunks of one row
 * group, hand out its rows, free it, move on. */
#include "store/parquet/pq_cursor_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct planner {
  pq_cursor *k;
  const bool *wanted;  /* per file leaf */
  uint32_t next_col;
} planner;

static void mark_leaves(const pq_field *x, bool *wanted) {
  if (x->type != PQ_T_GROUP) {
    wanted[x->column] = true;
    return;
  }
  for (uint32_t i = 0; i < x->num_children; i++) mark_leaves(&x->children[i], wanted);
}

static bool has_wanted(const pq_field *x, const bool *wanted) {
  if (x->type != PQ_T_GROUP) return wanted[x->column];
  for (uint32_t i = 0; i < x->num_children; i++)
    if (has_wanted(&x->children[i], wanted)) return true;
  return false;
}

static int select_path(const pq_file *f, const char *path, bool missing_ok, bool *wanted) {
  const pq_field *n = f->root;
  const char *s = path;
  while (*s) {
    if (n->shape != PQ_SHAPE_STRUCT || n->repetition == PQ_REPEATED)
      return dd_err_set(DD_EINVAL, "parquet: projection '%s' goes inside a list or map "
                        "(select the list or map itself)", path);
    const char *dot = strchr(s, '.');
    size_t len = dot ? (size_t)(dot - s) : strlen(s);
    const pq_field *next = NULL;
    for (uint32_t i = 0; i < n->num_children && !next; i++)
      if (strncmp(n->children[i].name, s, len) == 0 && n->children[i].name[len] == '\0')
        next = &n->children[i];
    if (!next) {
      if (missing_ok) return 0;
      return dd_err_set(DD_ENOTFOUND, "parquet: no column '%s' in the file", path);
    }
    n = next;
    s = dot ? dot + 1 : s + len;
  }
  mark_leaves(n, wanted);
  return 0;
}

static int plan_node(planner *pl, const pq_field *x, bool as_elem, pq_pnode *pn, pq__an *an);

static int alloc_kids(planner *pl, uint32_t n, pq_pnode *pn, pq__an *an) {
  pq_pnode *pk = pq__arena_alloc(&pl->k->plan, (n ? n : 1) * sizeof *pk);
  pq__an *ak = pq__arena_alloc(&pl->k->plan, (n ? n : 1) * sizeof *ak);
  if (!pk || !ak) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  memset(pk, 0, (n ? n : 1) * sizeof *pk);
  memset(ak, 0, (n ? n : 1) * sizeof *ak);
  pn->children = pk;
  pn->num_children = n;
  an->kids = ak;
  an->nkids = n;
  return 0;
}

static int plan_struct(planner *pl, const pq_field *x, pq_pnode *pn, pq__an *an) {
  uint32_t n = 0, j = 0;
  for (uint32_t i = 0; i < x->num_children; i++) n += has_wanted(&x->children[i], pl->wanted);
  int rc = alloc_kids(pl, n, pn, an);
  for (uint32_t i = 0; !rc && i < x->num_children; i++) {
    if (!has_wanted(&x->children[i], pl->wanted)) continue;
    pq_pnode *ck = (pq_pnode *)&pn->children[j];
    rc = plan_node(pl, &x->children[i], false, ck, &an->kids[j]);
    j++;
  }
  return rc;
}

/* LIST group x holding repeated r: the element is r itself (2-level: r is a leaf or a
 * group of several fields) or r's only child (3-level). */
static int plan_list(planner *pl, const pq_field *x, pq_pnode *pn, pq__an *an) {
  const pq_field *r = &x->children[0];
  an->rep_def = r->max_def;
  an->rep_lvl = r->max_rep;
  int rc = alloc_kids(pl, 1, pn, an);
  if (rc) return rc;
  bool two_level = r->type != PQ_T_GROUP || r->num_children != 1;
  return plan_node(pl, two_level ? r : &r->children[0], two_level,
                   (pq_pnode *)&pn->children[0], &an->kids[0]);
}

static int plan_map(planner *pl, const pq_field *x, pq_pnode *pn, pq__an *an) {
  const pq_field *r = &x->children[0];
  an->rep_def = r->max_def;
  an->rep_lvl = r->max_rep;
  int rc = alloc_kids(pl, 2, pn, an);
  for (uint32_t i = 0; !rc && i < 2; i++)
    rc = plan_node(pl, &r->children[i], false, (pq_pnode *)&pn->children[i], &an->kids[i]);
  return rc;
}

static int plan_node(planner *pl, const pq_field *x, bool as_elem, pq_pnode *pn, pq__an *an) {
  pn->name = x->name;
  pn->field = x;
  an->lo = pl->next_col;
  an->opt_def = x->repetition == PQ_OPTIONAL ? x->max_def : 0;
  int rc;
  if (x->repetition == PQ_REPEATED && !as_elem) { /* a bare repeated field: a list */
    pn->shape = an->shape = PQ_SHAPE_LIST;
    an->rep_def = x->max_def;
    an->rep_lvl = x->max_rep;
    rc = alloc_kids(pl, 1, pn, an);
    if (!rc) rc = plan_node(pl, x, true, (pq_pnode *)&pn->children[0], &an->kids[0]);
  } else if (x->type != PQ_T_GROUP) {
    pn->shape = an->shape = PQ_SHAPE_PRIMITIVE;
    pl->k->leaf_ids[pl->next_col++] = (uint32_t)x->column;
    rc = 0;
  } else {
    pq_shape s = x->shape;
    pn->shape = an->shape = s;
    rc = s == PQ_SHAPE_LIST  ? plan_list(pl, x, pn, an)
         : s == PQ_SHAPE_MAP ? plan_map(pl, x, pn, an)
                             : plan_struct(pl, x, pn, an);
  }
  an->hi = pl->next_col;
  return rc;
}

static int make_plan(pq_cursor *k, const pq_read_opts *o) {
  const pq_file *f = k->f;
  bool *wanted = calloc(f->num_leaves + 1, 1);
  if (!wanted) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  int rc = 0;
  if (!o || !o->columns || o->num_columns == 0) memset(wanted, 1, f->num_leaves);
  for (size_t i = 0; o && o->columns && i < o->num_columns && !rc; i++)
    rc = select_path(f, o->columns[i], o->missing_ok, wanted);
  for (size_t i = 0; i < f->num_leaves; i++) k->ncols += wanted[i];
  k->leaf_ids = calloc(k->ncols + 1, sizeof *k->leaf_ids);
  k->proot = pq__arena_alloc(&k->plan, sizeof *k->proot);
  k->aroot = pq__arena_alloc(&k->plan, sizeof *k->aroot);
  if (!rc && (!k->leaf_ids || !k->proot || !k->aroot))
    rc = dd_err_set(DD_ENOMEM, "parquet: out of memory");
  if (!rc) {
    memset(k->proot, 0, sizeof *k->proot);
    memset(k->aroot, 0, sizeof *k->aroot);
    planner pl = {k, wanted, 0};
    k->proot->name = f->root->name;
    k->proot->field = f->root;
    k->proot->shape = k->aroot->shape = PQ_SHAPE_STRUCT;
    rc = plan_struct(&pl, f->root, k->proot, k->aroot);
    k->aroot->lo = 0;
    k->aroot->hi = pl.next_col;
  }
  free(wanted);
  return rc;
}

int pq_cursor_open(pq_cursor **out, const pq_file *f, const pq_read_opts *opts) {
  *out = NULL;
  pq_cursor *k = calloc(1, sizeof *k);
  if (!k) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  k->f = f;
  int rc = make_plan(k, opts);
  if (!rc) {
    k->cols = calloc(k->ncols + 1, sizeof *k->cols);
    k->pos = calloc(k->ncols + 1, sizeof *k->pos);
    k->vpos = calloc(k->ncols + 1, sizeof *k->vpos);
    if (!k->cols || !k->pos || !k->vpos) rc = dd_err_set(DD_ENOMEM, "parquet: out of memory");
  }
  k->rg = 0;
  k->rg_end = f->num_rgs;
  if (!rc && opts && opts->row_group >= 0) {
    if ((uint64_t)opts->row_group >= f->num_rgs)
      rc = dd_err_set(DD_EINVAL, "parquet: no row group %lld", (long long)opts->row_group);
    k->rg = (size_t)opts->row_group;
    k->rg_end = k->rg + 1;
  }
  if (rc) {
    pq_cursor_free(k);
    return rc;
  }
  *out = k;
  return 0;
}

const pq_pnode *pq_cursor_schema(const pq_cursor *c) { return c->proot; }

int pq_pnode_child(const pq_pnode *n, const char *name) {
  for (uint32_t i = 0; n && i < n->num_children; i++)
    if (strcmp(n->children[i].name, name) == 0) return (int)i;
  return -1;
}

static void unload(pq_cursor *k, bool keep) {
  for (size_t i = 0; i < k->ncols; i++) {
    if (keep) pq__col_reset(&k->cols[i]);
    else pq__col_clear(&k->cols[i]);
  }
  memset(k->pos, 0, k->ncols * sizeof *k->pos);
  memset(k->vpos, 0, k->ncols * sizeof *k->vpos);
  k->loaded = false;
}

static int load(pq_cursor *k) {
  for (size_t i = 0; i < k->ncols; i++) {
    int rc = pq__col_decode(&k->cols[i], k->f, k->rg, k->leaf_ids[i]);
    if (rc) return dd_err_wrap(rc, "row group %zu", k->rg);
  }
  k->loaded = true;
  k->row_in_rg = 0;
  k->rows_in_rg = k->f->rgs[k->rg].num_rows;
  return 0;
}

int pq_cursor_next(pq_cursor *k, const pq_value **out) {
  *out = NULL;
  if (k->failed) return dd_err_set(k->failed, "parquet: cursor already failed");
  int rc = 0;
  while (!rc) {
    if (!k->loaded) {
      if (k->rg >= k->rg_end) return 0;
      rc = load(k);
    } else if (k->row_in_rg >= k->rows_in_rg) {
      rc = pq__check_rg_end(k);
      unload(k, true);
      k->rg++;
    } else {
      rc = pq__assemble_row(k, &k->row);
      if (!rc) {
        k->row_in_rg++;
        *out = &k->row;
        return 0;
      }
    }
  }
  k->failed = rc;
  return rc;
}

void pq_cursor_free(pq_cursor *k) {
  if (!k) return;
  if (k->cols) unload(k, false);
  free(k->cols);
  free(k->pos);
  free(k->vpos);
  free(k->leaf_ids);
  free(k->stack);
  pq__arena_free(&k->plan);
  pq__arena_free(&k->rowmem);
  free(k);
}
