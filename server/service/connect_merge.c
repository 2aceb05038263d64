/* connect_merge.c: see connect_merge.h. The relation's target is unwrapped to its table
 * (connect_dml_target), the source planned (connect_plan) and read whole, the clauses'
 * expressions turned into store/expr trees (connect_expr.c); store/dml does the rest. */
#include "server/service/connect_merge.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_dml.h"
#include "server/service/connect_expr.h"
#include "server/service/connect_plan.h"
#include "store/catalog/cat_store.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")
#define MAX_ALIASES 16

static int own_kind(connect_merge_spec *s, void *p, unsigned char kind) {
  if (s->nown == s->capown) {
    size_t c = s->capown ? s->capown * 2 : 16;
    void **o = realloc(s->owned, c * sizeof *o);
    if (o) s->owned = o;
    unsigned char *k = o ? realloc(s->kind, c) : NULL;
    if (k) s->kind = k;
    if (!o || !k) {
      if (kind) free(p);
      else ex_free(p);
      return OOM();
    }
    s->capown = c;
  }
  s->owned[s->nown] = p;
  s->kind[s->nown++] = kind;
  return 0;
}

int connect_merge_own_tree(connect_merge_spec *s, ex_node *e) { return e ? own_kind(s, e, 0) : 0; }
int connect_merge_own(connect_merge_spec *s, void *p) { return p ? own_kind(s, p, 1) : 0; }

int connect_merge_add(connect_merge_spec *s, dml_merge_kind kind, dml_merge_action action,
                      ex_node *cond, dml_assignment *as, size_t nas) {
  int rc = connect_merge_own_tree(s, cond);
  if (!rc) rc = connect_merge_own(s, as);
  else free(as);
  if (rc) return rc;
  if (s->ncl == s->capcl) {
    size_t c = s->capcl ? s->capcl * 2 : 8;
    dml_merge_clause *n = realloc(s->cl, c * sizeof *n);
    if (!n) return OOM();
    s->cl = n, s->capcl = c;
  }
  s->cl[s->ncl++] = (dml_merge_clause){kind, action, cond, as, nas};
  return 0;
}

void connect_merge_spec_free(connect_merge_spec *s) {
  for (size_t i = 0; i < s->nown; i++) {
    if (s->kind[i]) free(s->owned[i]);
    else ex_free(s->owned[i]);
  }
  free(s->owned);
  free(s->kind);
  free(s->cl);
  memset(s, 0, sizeof *s);
}

/* Every batch of src copied (they are the operator's until its next batch). */
static int read_all(qry_op *src, arw_batch ***out, size_t *n) {
  const arw_batch *b = NULL;
  size_t cap = 0;
  int rc;
  *out = NULL, *n = 0;
  while (!(rc = qry_next(src, &b)) && b) {
    if (*n == cap) {
      size_t c = cap ? cap * 2 : 16;
      arw_batch **nb = realloc(*out, c * sizeof *nb);
      if (!nb) return OOM();
      *out = nb, cap = c;
    }
    if ((rc = arw_batch_slice(&(*out)[*n], b, 0, arw_batch_rows(b)))) break;
    (*n)++;
  }
  return rc;
}

int connect_merge_run(dop_result **out, const char *loc, const char *target_alias, qry_op *src,
                      const char *source_alias, const ex_node *on, const connect_merge_spec *spec,
                      bool schema_evolution, const connect_exec_opts *opts) {
  *out = NULL;
  char **roots = NULL;
  size_t nroots = 0, nb = 0;
  arw_batch **batches = NULL;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dml_merge_result res;
  int rc = connect_exec_local_roots(&roots, &nroots, opts);
  if (!rc) rc = read_all(src, &batches, &nb);
  if (rc) rc = dd_err_wrap(rc, "MERGE: reading the source");
  if (!rc) rc = dl_table_open(&t, loc);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  if (!rc) {
    dml_merge_opts o = DML_MERGE_OPTS_INIT;
    o.source_schema = qry_schema(src);
    o.source = (const arw_batch *const *)batches;
    o.num_source = nb;
    o.target_alias = target_alias;
    o.source_alias = source_alias;
    o.on = on;
    o.clauses = spec->cl;
    o.num_clauses = spec->ncl;
    o.schema_evolution = schema_evolution || opts->auto_merge;
    o.roots = (const char *const *)roots;
    o.num_roots = nroots;
    rc = dml_merge(&res, t, s, &o);
  }
  if (!rc) rc = dml_merge_result_dop(out, &res);
  for (size_t i = 0; i < nb; i++) arw_batch_free(batches[i]);
  free(batches);
  qry_free(src);
  dl_snapshot_free(s);
  dl_table_free(t);
  cat_roots_free(roots, nroots);
  return rc;
}

/* ---- the relation ---------------------------------------------------------------------- */

static int assignments(connect_merge_spec *s, Delta__Connect__Assignment **in, size_t n,
                       dml_assignment **out) {
  *out = calloc(n + 1, sizeof **out);
  int rc = *out ? 0 : OOM();
  for (size_t i = 0; i < n && !rc; i++) {
    char *name = NULL;
    ex_node *v = NULL;
    rc = connect_dml_field(&name, in[i]->field);
    if (!rc) rc = connect_merge_own(s, name);
    if (!rc && !in[i]->value) rc = dd_err_set(DD_EINVAL, "MERGE: an assignment needs a value");
    if (!rc) rc = connect_expr_from_proto(&v, in[i]->value);
    if (!rc) rc = connect_merge_own_tree(s, v);
    if (!rc) (*out)[i] = (dml_assignment){name, v};
  }
  if (rc) free(*out), *out = NULL;
  return rc;
}

static int add_action(connect_merge_spec *s, dml_merge_kind kind, const Delta__Connect__MergeIntoTable__Action *a) {
  ex_node *cond = NULL;
  dml_assignment *as = NULL;
  size_t nas = 0;
  dml_merge_action act;
  int rc = a->condition ? connect_expr_from_proto(&cond, a->condition) : 0;
  switch (rc ? 0 : a->action_type_case) {
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_DELETE_ACTION: act = DML_MERGE_DELETE; break;
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_UPDATE_STAR_ACTION: act = DML_MERGE_UPDATE_STAR; break;
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_INSERT_STAR_ACTION: act = DML_MERGE_INSERT_STAR; break;
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_UPDATE_ACTION:
      act = DML_MERGE_UPDATE;
      nas = a->update_action->n_assignments;
      rc = assignments(s, a->update_action->assignments, nas, &as);
      break;
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_INSERT_ACTION:
      act = DML_MERGE_INSERT;
      nas = a->insert_action->n_assignments;
      rc = assignments(s, a->insert_action->assignments, nas, &as);
      break;
    default:
      if (!rc) rc = dd_err_set(DD_EINVAL, "MERGE: a clause without an action");
      act = DML_MERGE_DELETE;
  }
  if (rc) return ex_free(cond), free(as), rc;
  return connect_merge_add(s, kind, act, cond, as, nas);
}

static const char *source_alias(const Spark__Connect__Relation *r) {
  if (r && r->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_SUBQUERY_ALIAS && r->subquery_alias->alias &&
      *r->subquery_alias->alias)
    return r->subquery_alias->alias;
  return NULL;
}

int connect_merge_relation(dop_result **out, const Delta__Connect__MergeIntoTable *m,
                           const connect_exec_opts *opts) {
  *out = NULL;
  char *loc = NULL;
  const char *talias = NULL;
  ex_node *on = NULL;
  qry_op *src = NULL;
  connect_merge_spec spec = {0};
  int rc = connect_dml_target(&loc, &talias, m->target, opts);
  if (!rc && !m->source) rc = dd_err_set(DD_EINVAL, "MERGE: a source relation is required");
  if (!rc && !m->condition) rc = dd_err_set(DD_EINVAL, "MERGE: a merge condition is required");
  if (!rc) rc = connect_expr_from_proto(&on, m->condition);
  for (size_t i = 0; !rc && i < m->n_matched_actions; i++) rc = add_action(&spec, DML_MERGE_MATCHED, m->matched_actions[i]);
  for (size_t i = 0; !rc && i < m->n_not_matched_actions; i++)
    rc = add_action(&spec, DML_MERGE_NOT_MATCHED, m->not_matched_actions[i]);
  for (size_t i = 0; !rc && i < m->n_not_matched_by_source_actions; i++)
    rc = add_action(&spec, DML_MERGE_NOT_MATCHED_BY_SOURCE, m->not_matched_by_source_actions[i]);
  if (!rc) rc = connect_plan_build(&src, m->source, opts);
  if (!rc) rc = connect_merge_run(out, loc, talias, src, source_alias(m->source), on, &spec,
                                  m->_with_schema_evolution_case && m->with_schema_evolution, opts);
  ex_free(on);
  connect_merge_spec_free(&spec);
  free(loc);
  return rc;
}
