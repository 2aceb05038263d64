/* dml_merge_bind.c: MERGE's plan (dml_merge_int.h): column names resolved against the
 * target and the source (alias-qualified or plain), the ON condition split into hash keys,
 * a residual and a target-only predicate, each WHEN clause's condition and new values
 * bound, and the pair batches they are evaluated over. */
#include "store/dml/dml_merge_int.h"

#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"

enum { SIDE_T = 1, SIDE_S = 2 };

typedef struct names {
  const arw_schema *ts, *ss;
  const char *ta, *sa;
} names;

static const char *find_col(const arw_schema *s, const char *name) {
  for (size_t i = 0; i < arw_schema_ncolumns(s); i++) {
    const char *n = arw_field_name(s, arw_schema_column(s, i));
    if (!strcasecmp(n, name)) return n;
  }
  return NULL;
}

static int unresolved(const char *const *p, size_t n, const names *nm, int allowed) {
  dd_buf b = {0}, c = {0};
  for (size_t i = 0; i < n; i++) dd_buf_printf(&b, "%s`%s`", i ? "." : "", p[i]);
  for (int side = SIDE_T; side <= SIDE_S; side++) {
    const arw_schema *s = side == SIDE_T ? nm->ts : nm->ss;
    const char *q = side == SIDE_T ? nm->ta : nm->sa;
    for (size_t i = 0; (allowed & side) && i < arw_schema_ncolumns(s); i++)
      dd_buf_printf(&c, "%s`%s`.`%s`", c.len ? ", " : "", q ? q : side == SIDE_T ? "target" : "source",
                    arw_field_name(s, arw_schema_column(s, i)));
  }
  int rc = dd_err_set(DD_EINVAL, "MERGE: [UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or "
                      "function parameter with name %s cannot be resolved. Did you mean one of the "
                      "following? [%s].", b.p ? b.p : "", c.p ? c.p : "");
  dd_buf_free(&b);
  dd_buf_free(&c);
  return rc;
}

/* A column reference resolved: side and canonical name; plain emits the bare name (for a
 * tree bound to one side's schema), else the pair schema's prefixed one. */
static int rw_col(ex_node **out, const ex_node *e, const names *nm, int allowed, bool plain, int *used) {
  size_t n = 0, skip = 0;
  const char *const *p = ex_column_parts(e, &n);
  const char *canon = NULL;
  int side = 0;
  if (n >= 2 && nm->ta && !strcasecmp(p[0], nm->ta) && (canon = find_col(nm->ts, p[1]))) {
    side = SIDE_T, skip = 1;
  } else if (n >= 2 && nm->sa && !strcasecmp(p[0], nm->sa) && (canon = find_col(nm->ss, p[1]))) {
    side = SIDE_S, skip = 1;
  } else {
    const char *ct = (allowed & SIDE_T) ? find_col(nm->ts, p[0]) : NULL;
    const char *cs = (allowed & SIDE_S) ? find_col(nm->ss, p[0]) : NULL;
    if (ct && cs)
      return dd_err_set(DD_EINVAL, "MERGE: [AMBIGUOUS_REFERENCE] Reference `%s` is ambiguous, could be: "
                        "[`target`.`%s`, `source`.`%s`].", p[0], ct, cs);
    side = ct ? SIDE_T : cs ? SIDE_S : 0;
    canon = ct ? ct : cs;
  }
  if (!side || !(allowed & side)) return unresolved(p, n, nm, allowed);
  *used |= side;
  dd_buf first = {0};
  if (!plain) dd_buf_puts(&first, side == SIDE_T ? DML__TPFX : DML__SPFX);
  dd_buf_puts(&first, canon);
  const char **parts = calloc(n + 1, sizeof *parts);
  int rc = parts && !first.oom ? 0 : dml__oom();
  size_t k = 0;
  if (!rc) {
    parts[k++] = first.p;
    for (size_t i = skip + 1; i < n; i++) parts[k++] = p[i];
    rc = ex_new_column(out, parts, k);
  }
  free(parts);
  dd_buf_free(&first);
  return rc;
}

/* e rebuilt with every column resolved (see rw_col); *used gets the sides read. */
static int rw(ex_node **out, const ex_node *e, const names *nm, int allowed, bool plain, int *used) {
  *out = NULL;
  size_t n = ex_nargs(e);
  ex_node **a = NULL;
  int rc = 0;
  switch (ex_node_kind(e)) {
    case EX_LITERAL: return ex_new_literal(out, ex_literal(e));
    case EX_COLUMN: return rw_col(out, e, nm, allowed, plain, used);
    case EX_STAR: return dd_err_set(DD_EINVAL, "MERGE: `*` is not allowed in a condition or value");
    default: break;
  }
  a = calloc(n + 1, sizeof *a);
  if (!a) return dml__oom();
  for (size_t i = 0; i < n && !rc; i++) rc = rw(&a[i], ex_arg(e, i), nm, allowed, plain, used);
  if (rc) {
    for (size_t i = 0; i < n; i++) ex_free(a[i]);
    free(a);
    return rc;
  }
  switch (ex_node_kind(e)) {
    case EX_CALL:
      rc = ex_new_call(out, ex_fn_name(e), a, n);
      if (!rc) ex_set_distinct(*out, ex_call_distinct(e));
      break;
    case EX_CAST: rc = ex_new_cast(out, a[0], ex_cast_type(e)); break;
    case EX_ALIAS: rc = ex_new_alias(out, a[0], ex_alias_name(e)); break;
    default: rc = ex_new_sort(out, a[0], ex_sort_ascending(e), ex_sort_nulls_first(e)); break;
  }
  free(a);
  return rc;
}

/* rw then ex_bind over schema s. */
static int rw_bind(ex_node **out, const ex_node *e, const names *nm, int allowed, bool plain,
                   const arw_schema *s, int *used) {
  ex_node *r = NULL;
  int u = 0;
  int rc = rw(&r, e, nm, allowed, plain, &u);
  if (!rc) rc = ex_bind(out, r, s, NULL);
  if (used) *used = u;
  ex_free(r);
  return rc;
}

static int check_bool(const ex_node *b, const char *what) {
  ex_type_id id = ex_result_type(b).id;
  if (id == EX_T_BOOLEAN || id == EX_T_NULL) return 0;
  char t[64];
  ex_type_format(ex_result_type(b), t, sizeof t);
  return dd_err_set(DD_EINVAL, "MERGE: [DATATYPE_MISMATCH.FILTER_NOT_BOOLEAN] %s is of type \"%s\", "
                    "not a boolean", what, t);
}

/* ---- the ON condition ------------------------------------------------------------------ */

typedef struct nodes {
  const ex_node **v;
  size_t n, cap;
} nodes;

static int conjuncts(nodes *l, const ex_node *e) {
  const char *fn = ex_fn_name(e);
  if (fn && !strcmp(fn, "and") && ex_nargs(e) == 2) {
    int rc = conjuncts(l, ex_arg(e, 0));
    return rc ? rc : conjuncts(l, ex_arg(e, 1));
  }
  if (l->n == l->cap) {
    size_t c = l->cap ? l->cap * 2 : 8;
    const ex_node **nv = realloc(l->v, c * sizeof *nv);
    if (!nv) return dml__oom();
    l->v = nv, l->cap = c;
  }
  l->v[l->n++] = e;
  return 0;
}

/* AND of *acc and e (taking e). */
static int and_into(ex_node **acc, ex_node *e) {
  if (!*acc) return *acc = e, 0;
  ex_node *a[2] = {*acc, e};
  *acc = NULL;
  return ex_new_call(acc, "and", a, 2);
}

static bool key_type(ex_type t) {
  return t.id != EX_T_NULL && t.id != EX_T_STRUCT && t.id != EX_T_ARRAY && t.id != EX_T_MAP;
}

static int push_key(dml__mplan *p, ex_node *tk, ex_node *sk) {
  ex_node **a = realloc(p->tkey, (p->nkeys + 1) * sizeof *a);
  if (a) p->tkey = a;
  ex_node **b = a ? realloc(p->skey, (p->nkeys + 1) * sizeof *b) : NULL;
  if (b) p->skey = b;
  if (!a || !b) return ex_free(tk), ex_free(sk), dml__oom();
  p->tkey[p->nkeys] = tk;
  p->skey[p->nkeys++] = sk;
  return 0;
}

/* One side of a key equality as its own side's tree, cast to type t. */
static int key_side(ex_node **out, const ex_node *e, const names *nm, int side, ex_type t) {
  ex_node *r = NULL, *probe = NULL;
  int u = 0;
  const arw_schema *s = side == SIDE_T ? nm->ts : nm->ss;
  int rc = rw(&r, e, nm, side, true, &u);
  if (!rc) rc = ex_bind(&probe, r, s, NULL);
  if (!rc && !ex_type_equal(ex_result_type(probe), t)) rc = ex_new_cast(&r, r, t), r = rc ? NULL : r;
  ex_free(probe);
  if (!rc) rc = ex_bind(out, r, s, NULL);
  ex_free(r);
  return rc;
}

/* conjunct c an equality of a target-only and a source-only side: a key. *is_key false
 * when it is not one. */
static int try_key(dml__mplan *p, const names *nm, const ex_node *c, bool *is_key) {
  *is_key = false;
  const char *fn = ex_fn_name(c);
  if (!fn || strcmp(fn, "=") || ex_nargs(c) != 2) return 0;
  ex_node *r0 = NULL, *r1 = NULL, *bound = NULL, *tk = NULL, *sk = NULL;
  int u0 = 0, u1 = 0;
  int rc = rw(&r0, ex_arg(c, 0), nm, SIDE_T | SIDE_S, false, &u0);
  if (!rc) rc = rw(&r1, ex_arg(c, 1), nm, SIDE_T | SIDE_S, false, &u1);
  bool ok = !rc && ((u0 == SIDE_T && u1 == SIDE_S) || (u0 == SIDE_S && u1 == SIDE_T));
  ex_free(r0), ex_free(r1);
  if (!ok) return rc;
  rc = rw_bind(&bound, c, nm, SIDE_T | SIDE_S, false, p->ps, NULL);
  ex_type t0 = rc ? (ex_type){0} : ex_result_type(ex_arg(bound, 0));
  ex_type t1 = rc ? (ex_type){0} : ex_result_type(ex_arg(bound, 1));
  ex_free(bound);
  if (rc || !ex_type_equal(t0, t1) || !key_type(t0)) return rc;
  size_t ti = u0 == SIDE_T ? 0 : 1;
  rc = key_side(&tk, ex_arg(c, ti), nm, SIDE_T, t0);
  if (!rc) rc = key_side(&sk, ex_arg(c, 1 - ti), nm, SIDE_S, t0);
  if (rc) return ex_free(tk), ex_free(sk), rc;
  *is_key = true;
  return push_key(p, tk, sk);
}

static int bind_on(dml__mplan *p, const names *nm, const dml_merge_opts *o) {
  ex_node *full = NULL, *resid = NULL, *skip = NULL;
  nodes l = {0};
  if (!o->on) return dd_err_set(DD_EINVAL, "MERGE: an ON condition is required");
  int rc = rw_bind(&full, o->on, nm, SIDE_T | SIDE_S, false, p->ps, NULL);
  if (rc) rc = dd_err_wrap(rc, "MERGE: the ON condition");
  if (!rc) rc = check_bool(full, "the ON condition");
  ex_free(full);
  if (!rc) rc = ex_name(&p->on_sql, o->on);
  if (!rc) rc = conjuncts(&l, o->on);
  for (size_t i = 0; i < l.n && !rc; i++) {
    ex_node *r = NULL;
    int used = 0;
    bool is_key = false;
    if ((rc = try_key(p, nm, l.v[i], &is_key)) || is_key) continue;
    rc = rw(&r, l.v[i], nm, SIDE_T | SIDE_S, false, &used);
    if (!rc) rc = and_into(&resid, r);
    if (!rc && used == SIDE_T && !(rc = rw(&r, l.v[i], nm, SIDE_T, true, &used))) rc = and_into(&skip, r);
  }
  if (!rc && resid) rc = ex_bind(&p->residual, resid, p->ps, NULL);
  if (!rc && skip) rc = ex_bind(&p->skip, skip, p->tb.schema, NULL);
  ex_free(resid);
  ex_free(skip);
  free(l.v);
  if (!rc && p->nkeys) {
    rc = arw_schema_new(&p->kschema);
    for (size_t k = 0; k < p->nkeys && !rc; k++) {
      char name[32];
      snprintf(name, sizeof name, "k%zu", k);
      rc = ex_add_field(p->kschema, ARW_ROOT, name, p->tkey[k], NULL);
    }
  }
  return rc;
}

/* ---- the clauses ----------------------------------------------------------------------- */

static const char *kind_name(dml_merge_kind k) {
  return k == DML_MERGE_MATCHED ? "WHEN MATCHED" : k == DML_MERGE_NOT_MATCHED ? "WHEN NOT MATCHED"
                                                                            : "WHEN NOT MATCHED BY SOURCE";
}

/* The clause's side and schema: pair (matched), target (by source), source (insert). */
static void clause_side(const dml__mplan *p, dml_merge_kind k, int *allowed, bool *plain,
                        const arw_schema **s) {
  *allowed = k == DML_MERGE_MATCHED ? SIDE_T | SIDE_S : k == DML_MERGE_NOT_MATCHED ? SIDE_S : SIDE_T;
  *plain = k != DML_MERGE_MATCHED;
  *s = k == DML_MERGE_MATCHED ? p->ps : k == DML_MERGE_NOT_MATCHED ? p->ss : p->tb.schema;
}

/* A target column reference over the clause's schema. */
static int target_ref(ex_node **out, const char *col, bool plain) {
  dd_buf b = {0};
  if (!plain) dd_buf_puts(&b, DML__TPFX);
  dd_buf_puts(&b, col);
  const char *part = b.p;
  int rc = b.oom ? dml__oom() : ex_new_column(out, &part, 1);
  dd_buf_free(&b);
  return rc;
}

/* A nested value v (bound over s: probe) of another shape than nested target column id: a
 * struct rebuilt by field name, other kinds refused; *v unchanged when the shapes agree. */
static int struct_by_name(ex_node **v, const dml__mplan *p, int id, const ex_node *probe,
                          const arw_schema *s, const dml_merge_opts *o, bool keep_target) {
  int sid = ex_column_field(probe);
  if (sid < 0) return 0; /* not a column: bound as it is */
  ex_node *keep = NULL, *nv = NULL;
  bool rebuilt = false;
  int rc = keep_target ? target_ref(&keep, arw_field_name(p->tb.schema, id), false) : 0;
  if (!rc) rc = dml__merge_struct_value(&nv, &rebuilt, p->tb.schema, id, *v, s, sid, o->schema_evolution, keep);
  ex_free(keep);
  if (!rc && rebuilt) ex_free(*v), *v = nv;
  return rc;
}

/* v (bound over s) as a value of target column i: cast when the types differ; a struct of
 * another shape rebuilt by field name (keep_target: UPDATE SET *, whose missing fields keep
 * the target's). */
static int out_value(ex_node **out, dml__mplan *p, size_t i, ex_node *v, const arw_schema *s,
                     const dml_merge_opts *o, bool keep_target) {
  int id = arw_schema_column(p->tb.schema, i);
  const char *name = arw_field_name(p->tb.schema, id);
  ex_type to = ex_type_of_arrow(p->tb.schema, id);
  ex_node *probe = NULL;
  int rc = ex_bind(&probe, v, s, NULL);
  bool same = !rc && ex_type_equal(ex_result_type(probe), to);
  bool null_lit = !rc && ex_result_type(probe).id == EX_T_NULL;
  if (!rc && same && (to.id == EX_T_STRUCT || to.id == EX_T_ARRAY || to.id == EX_T_MAP))
    rc = struct_by_name(&v, p, id, probe, s, o, keep_target);
  ex_free(probe);
  if (!rc && !same && !null_lit && (to.id == EX_T_STRUCT || to.id == EX_T_ARRAY || to.id == EX_T_MAP))
    rc = dd_err_set(DD_EINVAL, "MERGE: a value of another type cannot be assigned to the nested column %s", name);
  if (!rc && !same) rc = ex_new_cast(&v, v, to), v = rc ? NULL : v;
  if (!rc) rc = ex_bind(out, v, s, NULL);
  ex_free(v);
  return rc ? dd_err_wrap(rc, "MERGE: the value of %s", name) : 0;
}

/* The target column an assignment names (qualified by the target's alias or not): *i, or
 * SIZE_MAX when no top-level column has that name; *rest the name without the alias. */
static void assigned_col(const dml__mplan *p, const dml_merge_opts *o, const char *col, size_t *i,
                         const char **rest) {
  const char *name = col, *dot = strchr(col, '.');
  if (dot && o->target_alias && (size_t)(dot - col) == strlen(o->target_alias) &&
      !strncasecmp(col, o->target_alias, (size_t)(dot - col)))
    name = dot + 1;
  *rest = name;
  for (size_t k = 0; k < p->tb.ncols; k++)
    if (!strcasecmp(arw_field_name(p->tb.schema, arw_schema_column(p->tb.schema, k)), name)) {
      *i = k;
      return;
    }
  *i = SIZE_MAX;
}

static int conflict(const char *a, const char *b) { return dd_err_wrap(dml__conflict(a, b), "MERGE"); }

typedef struct owned {
  ex_node **v;
  size_t n;
} owned;

/* One explicit assignment: into vals[i] for a top-level column, into ns (its value kept in
 * held) for a field inside a struct column (not in an INSERT: ins). */
static int assign_one(ex_node **vals, dml__nset *ns, owned *held, const dml__mplan *p,
                      const dml_merge_opts *o, const dml_assignment *as, const names *nm,
                      int allowed, bool plain, bool ins) {
  size_t i = 0;
  const char *name = NULL;
  int used = 0, rc = 0;
  if (!as->column || !as->value) return dd_err_set(DD_EINVAL, "MERGE: an assignment needs a column and a value");
  assigned_col(p, o, as->column, &i, &name);
  if (i != SIZE_MAX) {
    if (vals[i])
      return dd_err_set(DD_EINVAL, "MERGE: [DUPLICATE_ASSIGNMENTS] The columns or variables `%s` appear "
                        "more than once as assignment targets.", as->column);
    if (dml__nset_first(ns, i)) return conflict(dml__nset_first(ns, i), name);
    if (p->identity[i] && !ins)
      return dd_err_set(DD_EINVAL, "MERGE: [DELTA_IDENTITY_COLUMNS_UPDATE_NOT_SUPPORTED] UPDATE on IDENTITY "
                        "column %s is not supported.", name);
    return rw(&vals[i], as->value, nm, allowed, plain, &used);
  }
  ex_node *v = NULL, **grown = realloc(held->v, (held->n + 1) * sizeof *grown);
  if (!grown) return dml__oom();
  held->v = grown;
  if ((rc = rw(&v, as->value, nm, allowed, plain, &used))) return rc;
  held->v[held->n++] = v;
  bool whole = false;
  rc = dml__nset_resolve(ns, p->tb.schema, name, v, &i, &whole);
  if (!rc && whole) { /* a quoted column name */
    held->v[--held->n] = NULL;
    if (vals[i] || dml__nset_first(ns, i)) return ex_free(v), dd_err_set(DD_EINVAL, "MERGE: [DUPLICATE_ASSIGNMENTS] "
                                          "The column `%s` is assigned more than once.", as->column);
    return vals[i] = v, 0;
  }
  if (!rc && i != SIZE_MAX && ins)
    return dd_err_set(DD_EINVAL, "MERGE: an INSERT cannot assign `%s`, a field of a struct column: assign "
                      "the whole column", as->column);
  if (!rc && i == SIZE_MAX)
    return dd_err_set(DD_EINVAL, "MERGE: [DELTA_MISSING_SET_COLUMN] column `%s` not found in the target", as->column);
  if (!rc && vals[i]) rc = conflict(arw_field_name(p->tb.schema, arw_schema_column(p->tb.schema, i)), name);
  return rc;
}

/* The new value expressions (unbound, [ncols]) of an UPDATE / INSERT clause. */
static int clause_values(ex_node **vals, const dml__mplan *p, const dml_merge_opts *o,
                         const dml_merge_clause *c, const names *nm) {
  int allowed, rc = 0;
  bool plain, star = c->action == DML_MERGE_UPDATE_STAR || c->action == DML_MERGE_INSERT_STAR;
  const arw_schema *s;
  clause_side(p, c->kind, &allowed, &plain, &s);
  dml__nset ns = {0};
  owned held = {0};
  for (size_t a = 0; !star && a < c->num_assignments && !rc; a++)
    rc = assign_one(vals, &ns, &held, p, o, &c->assignments[a], nm, allowed, plain,
                    c->kind == DML_MERGE_NOT_MATCHED);
  for (size_t i = 0; i < p->tb.ncols && !rc; i++) {
    if (vals[i] || !dml__nset_first(&ns, i)) continue;
    ex_node *ref = NULL;
    size_t nref = 0;
    rc = target_ref(&ref, arw_field_name(p->tb.schema, arw_schema_column(p->tb.schema, i)), plain);
    if (!rc) rc = dml__nset_value(&vals[i], &ns, i, p->tb.schema, ex_column_parts(ref, &nref), 1, s, NULL);
    ex_free(ref);
  }
  dml__nset_free(&ns);
  for (size_t k = 0; k < held.n; k++) ex_free(held.v[k]);
  free(held.v);
  for (size_t i = 0; i < p->tb.ncols && !rc; i++) {
    const char *col = arw_field_name(p->tb.schema, arw_schema_column(p->tb.schema, i));
    if (vals[i]) continue;
    if (p->identity[i] && c->kind != DML_MERGE_NOT_MATCHED) { /* kept, even by UPDATE SET * */
      rc = target_ref(&vals[i], col, plain);
      continue;
    }
    if (p->gen[i] && !star) continue; /* computed below (`*` takes it from the source, as Delta) */
    const char *sc = star ? find_col(p->ss, col) : NULL;
    if (p->identity[i] && (!star || (!sc && o->schema_evolution))) continue; /* values handed out */
    if (star) {
      if (!sc && o->schema_evolution) { /* Delta: UPDATE keeps the target's value, INSERT NULL */
        ex_value nv = {.type = {EX_T_NULL}, .is_null = true};
        rc = c->kind == DML_MERGE_NOT_MATCHED ? ex_new_literal(&vals[i], &nv) : target_ref(&vals[i], col, plain);
        continue;
      }
      if (!sc)
        return dd_err_set(DD_EINVAL, "MERGE: [DELTA_MERGE_UNRESOLVED_EXPRESSION] cannot resolve %s in %s "
                          "%s * given the source columns (the source has no column %s)", col,
                          kind_name(c->kind), c->action == DML_MERGE_UPDATE_STAR ? "UPDATE SET" : "INSERT", col);
      dd_buf b = {0};
      if (!plain) dd_buf_puts(&b, DML__SPFX);
      dd_buf_puts(&b, sc);
      const char *part = b.p;
      rc = b.oom ? dml__oom() : ex_new_column(&vals[i], &part, 1);
      dd_buf_free(&b);
    } else if (c->kind == DML_MERGE_NOT_MATCHED) {
      ex_value nv = {.type = {EX_T_NULL}, .is_null = true};
      rc = ex_new_literal(&vals[i], &nv);
    } else {
      rc = target_ref(&vals[i], col, plain);
    }
  }
  /* generated columns not given: from the other columns' new values */
  for (size_t i = 0; i < p->tb.ncols && !rc; i++) {
    bool touched = false;
    if (!vals[i] && p->gen[i]) rc = dml__gen_value(&vals[i], &touched, p->gen[i], p->tb.schema, vals);
  }
  return rc;
}

static int bind_clause(dml__mplan *p, dml__mclause *m, const dml_merge_opts *o,
                       const dml_merge_clause *c, const names *nm) {
  int allowed;
  bool plain;
  const arw_schema *s;
  bool ins = c->action == DML_MERGE_INSERT || c->action == DML_MERGE_INSERT_STAR;
  if (ins != (c->kind == DML_MERGE_NOT_MATCHED) ||
      (c->kind == DML_MERGE_NOT_MATCHED_BY_SOURCE && c->action == DML_MERGE_UPDATE_STAR))
    return dd_err_set(DD_EINVAL, "MERGE: %s clauses cannot have this action", kind_name(c->kind));
  m->kind = c->kind;
  m->action = c->action;
  clause_side(p, c->kind, &allowed, &plain, &s);
  int rc = 0;
  if (c->condition) {
    rc = rw_bind(&m->cond, c->condition, nm, allowed, plain, s, NULL);
    if (!rc) rc = check_bool(m->cond, "a clause condition");
    if (!rc) rc = ex_name(&m->cond_sql, c->condition);
    if (rc) return dd_err_wrap(rc, "MERGE: %s condition", kind_name(c->kind));
  }
  if (c->action == DML_MERGE_DELETE) return 0;
  ex_node **vals = calloc(p->tb.ncols + 1, sizeof *vals);
  m->outs = calloc(p->tb.ncols + 1, sizeof *m->outs);
  if (!vals || !m->outs) return free(vals), dml__oom();
  rc = clause_values(vals, p, o, c, nm);
  bool keep = c->action == DML_MERGE_UPDATE_STAR;
  for (size_t i = 0; i < p->tb.ncols && !rc; i++) {
    const dml__idcol *ic = ins ? dml__ident_find(&p->ident, i) : NULL;
    if (ic && !vals[i]) continue; /* outs[i] NULL: the value handed out (dml__mplan_eval_outs) */
    if (ic) rc = dml__ident_explicit(ic);
    if (!rc) rc = out_value(&m->outs[i], p, i, vals[i], s, o, keep), vals[i] = NULL;
  }
  for (size_t i = 0; i < p->tb.ncols; i++) ex_free(vals[i]);
  free(vals);
  return rc;
}

/* ---- the pair schema ------------------------------------------------------------------- */

static int pair_side(dml__mplan *p, const arw_schema *s, const char *pfx, ex_node ***fill) {
  size_t n = arw_schema_ncolumns(s);
  *fill = calloc(n + 1, sizeof **fill);
  if (!*fill) return dml__oom();
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    int id = arw_schema_column(s, i);
    const char *name = arw_field_name(s, id);
    dd_buf b = {0};
    dd_buf_printf(&b, "%s%s", pfx, name);
    ex_node *c = NULL;
    rc = b.oom ? dml__oom() : arw_schema_copy_field(p->ps, ARW_ROOT, s, id, b.p, NULL);
    if (!rc) rc = ex_new_column(&c, &name, 1);
    if (!rc) rc = ex_bind(&(*fill)[i], c, s, NULL);
    ex_free(c);
    dd_buf_free(&b);
  }
  return rc;
}

int dml__mplan_bind(dml__mplan *p, const dl_snapshot *s, const dml_merge_opts *o) {
  memset(p, 0, sizeof *p);
  dml_opts none = DML_OPTS_INIT;
  int rc = dml__bind(&p->tb, s, &none, false);
  if (!rc) rc = dml__bind_constraints(&p->tb, s);
  p->ss = o->source_schema;
  p->nscols = p->ss ? arw_schema_ncolumns(p->ss) : 0;
  if (!rc && !p->ss) rc = dd_err_set(DD_EINVAL, "MERGE: a source is required");
  if (!rc) rc = arw_schema_new(&p->ps);
  if (!rc) rc = pair_side(p, p->tb.schema, DML__TPFX, &p->fill_t);
  if (!rc) rc = pair_side(p, p->ss, DML__SPFX, &p->fill_s);
  names nm = {p->tb.schema, p->ss, o->target_alias, o->source_alias};
  if (!rc) rc = bind_on(p, &nm, o);
  if (!rc && (!(p->gen = calloc(p->tb.ncols + 1, sizeof *p->gen)) ||
              !(p->identity = calloc(p->tb.ncols + 1, sizeof *p->identity))))
    rc = dml__oom();
  for (size_t i = 0; i < p->tb.ncols && !rc; i++) {
    const dl_field *f = dl_schema_field(dl_snapshot_schema(s), arw_field_name(p->tb.schema, arw_schema_column(p->tb.schema, i)));
    p->identity[i] = dml__identity(f);
    rc = dml__gen_parse(&p->gen[i], f);
  }
  bool inserts = false;
  for (size_t i = 0; i < o->num_clauses; i++) inserts |= o->clauses[i].kind == DML_MERGE_NOT_MATCHED;
  if (!rc && inserts) rc = dml__ident_init(&p->ident, s, p->tb.schema);
  if (!rc && !o->num_clauses) rc = dd_err_set(DD_EINVAL, "MERGE: at least one WHEN clause is required");
  if (!rc && !(p->cl = calloc(o->num_clauses, sizeof *p->cl))) rc = dml__oom();
  size_t nmatched = 0;
  for (size_t i = 0; i < o->num_clauses && !rc; i++, p->ncl++) {
    const dml_merge_clause *c = &o->clauses[i];
    rc = bind_clause(p, &p->cl[i], o, c, &nm);
    nmatched += c->kind == DML_MERGE_MATCHED;
    p->has_matched |= c->kind == DML_MERGE_MATCHED;
    p->has_nmbs |= c->kind == DML_MERGE_NOT_MATCHED_BY_SOURCE;
    p->has_insert |= c->kind == DML_MERGE_NOT_MATCHED;
    if (c->kind == DML_MERGE_MATCHED) p->multi_ok = c->action == DML_MERGE_DELETE && !c->condition;
  }
  if (nmatched != 1) p->multi_ok = false;
  if (!rc && !(p->not_null = calloc(p->tb.ncols + 1, sizeof *p->not_null))) rc = dml__oom();
  for (size_t i = 0; !rc && i < p->tb.ncols; i++) {
    const dl_field *f = dl_schema_field(dl_snapshot_schema(s), arw_field_name(p->tb.schema, arw_schema_column(p->tb.schema, i)));
    p->not_null[i] = f && !f->nullable;
  }
  return rc;
}

static void free_nodes(ex_node **v, size_t n) {
  for (size_t i = 0; v && i < n; i++) ex_free(v[i]);
  free(v);
}

void dml__mplan_free(dml__mplan *p) {
  for (size_t i = 0; i < p->ncl; i++) {
    free_nodes(p->cl[i].outs, p->tb.ncols);
    ex_free(p->cl[i].cond);
    free(p->cl[i].cond_sql);
  }
  free(p->cl);
  free_nodes(p->fill_t, p->tb.ncols);
  free_nodes(p->fill_s, p->nscols);
  free_nodes(p->tkey, p->nkeys);
  free_nodes(p->skey, p->nkeys);
  arw_schema_free(p->kschema);
  ex_free(p->residual);
  ex_free(p->skip);
  free(p->on_sql);
  free(p->not_null);
  free_nodes(p->gen, p->tb.ncols);
  free(p->identity);
  dml__ident_free(&p->ident);
  arw_schema_free(p->ps);
  dml__bound_free(&p->tb);
  memset(p, 0, sizeof *p);
}

/* ---- evaluation helpers ---------------------------------------------------------------- */

int dml__mplan_check(const dml__mplan *p, const arw_batch *out) {
  for (size_t i = 0; i < p->tb.ncols; i++) {
    arw_view v;
    if (!p->not_null[i]) continue;
    int rc = arw_batch_view(out, arw_schema_column(p->tb.schema, i), &v);
    if (rc) return rc;
    if (v.null_count)
      return dd_err_set(DD_EINVAL, "MERGE: [DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL constraint "
                        "violated for column: %s.", arw_field_name(p->tb.schema, arw_schema_column(p->tb.schema, i)));
  }
  return dml__check_constraints(&p->tb, out);
}

static int fill(arw_batch *out, ex_node *const *f, size_t n, const arw_batch *in, size_t base) {
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++)
    rc = ex_eval(f[i], in, out, arw_schema_column(arw_batch_schema(out), base + i));
  return rc;
}

int dml__mplan_pairs(arw_batch **out, const dml__mplan *p, const arw_batch *tb, const size_t *ti,
                     const arw_batch *sb, const size_t *si, size_t n) {
  arw_batch *t = NULL, *s = NULL;
  *out = NULL;
  int rc = arw_batch_take(&t, tb, ti, n);
  if (!rc) rc = arw_batch_take(&s, sb, si, n);
  if (!rc) rc = arw_batch_new(out, p->ps);
  if (!rc) rc = fill(*out, p->fill_t, p->tb.ncols, t, 0);
  if (!rc) rc = fill(*out, p->fill_s, p->nscols, s, p->tb.ncols);
  if (rc) arw_batch_free(*out), *out = NULL;
  arw_batch_free(t);
  arw_batch_free(s);
  return rc;
}

int dml__mplan_eval_outs(arw_batch **out, const dml__mplan *p, const arw_schema *schema,
                         ex_node *const *outs, const arw_batch *in) {
  int rc = arw_batch_new(out, schema ? schema : p->tb.schema);
  for (size_t i = 0; i < p->tb.ncols && !rc; i++) /* a NULL out: an identity value handed out */
    rc = outs[i] ? ex_eval(outs[i], in, *out, arw_schema_column(arw_batch_schema(*out), i))
                 : dml__ident_append(dml__ident_find(&p->ident, i), *out, arw_batch_rows(in));
  if (!rc) rc = dml__mplan_check(p, *out);
  if (rc) arw_batch_free(*out), *out = NULL;
  return rc;
}

int dml__keys_eval(arw_batch **out, const dml__mplan *p, ex_node *const *keys, const arw_batch *in) {
  int rc = arw_batch_new(out, p->kschema);
  if (!rc) rc = fill(*out, keys, p->nkeys, in, 0);
  if (rc) arw_batch_free(*out), *out = NULL;
  return rc;
}
