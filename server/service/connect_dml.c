/* connect_dml.c: see connect_dml.h. The target relation is unwrapped to its table; the
 * expressions become store/expr trees (connect_expr.c); store/dml does the rest. */
#include "server/service/connect_dml.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/call/req_guard.h"
#include "server/service/connect_expr.h"
#include "server/service/connect_sql_int.h"
#include "store/catalog/cat_store.h"

#define DELTA_RELATION_URL "delta.connect.DeltaRelation"
#define MAX_ALIASES 16

int connect_dml_run(dop_result **out, const char *loc, bool update, const ex_node *pred,
                    const char *pred_sql, const dml_assignment *as, size_t nas,
                    const connect_exec_opts *opts) {
  *out = NULL;
  char **roots = NULL;
  size_t nroots = 0;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dml_result res;
  int rc = connect_exec_local_roots(&roots, &nroots, opts);
  if (!rc) rc = dl_table_open(&t, loc);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  if (!rc) {
    dml_opts o = DML_OPTS_INIT;
    o.predicate = pred;
    o.predicate_sql = pred_sql;
    o.assignments = as;
    o.num_assignments = nas;
    o.roots = (const char *const *)roots;
    o.num_roots = nroots;
    rc = update ? dml_update(&res, t, s, &o) : dml_delete(&res, t, s, &o);
  }
  if (!rc) rc = dml_result_dop(out, &res);
  dl_snapshot_free(s);
  dl_table_free(t);
  cat_roots_free(roots, nroots);
  return rc;
}

int connect_dml_target(char **out, const char **alias, const Spark__Connect__Relation *rel,
                       const connect_exec_opts *o) {
  if (alias) *alias = NULL;
  for (int i = 0; rel && i < MAX_ALIASES &&
                  rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_SUBQUERY_ALIAS; i++) {
    if (alias && !*alias && rel->subquery_alias->alias && *rel->subquery_alias->alias)
      *alias = rel->subquery_alias->alias;
    rel = rel->subquery_alias->input;
  }
  if (!rel) return dd_err_set(DD_EINVAL, "target: a table relation is required");
  if (rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_READ) {
    const Spark__Connect__Read *r = rel->read;
    if (r->read_type_case == SPARK__CONNECT__READ__READ_TYPE_NAMED_TABLE)
      return connect_exec_name_location(out, r->named_table->unparsed_identifier, o);
    if (r->read_type_case == SPARK__CONNECT__READ__READ_TYPE_DATA_SOURCE && r->data_source->n_paths == 1 &&
        (!r->data_source->_format_case || !strcasecmp(r->data_source->format, "delta")))
      return connect_exec_name_location(out, r->data_source->paths[0], o);
    return dd_err_set(DD_EINVAL, "target: a Delta table read is required");
  }
  if (rel->rel_type_case != SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION)
    return dd_err_set(DD_EINVAL, "target: a Delta table is required");
  const Google__Protobuf__Any *a = rel->extension;
  const char *slash = a && a->type_url ? strrchr(a->type_url, '/') : NULL;
  if (!slash || strcmp(slash + 1, DELTA_RELATION_URL))
    return dd_err_set(DD_EINVAL, "target: extension '%s' is not type.googleapis.com/%s",
                      a && a->type_url ? a->type_url : "", DELTA_RELATION_URL);
  ProtobufCMessage *m = NULL;
  int rc = rg_pb_unpack(&m, &delta__connect__delta_relation__descriptor, a->value.data, a->value.len);
  if (rc) return dd_err_wrap(rc, "target (Any %s)", DELTA_RELATION_URL);
  const Delta__Connect__DeltaRelation *d = (const Delta__Connect__DeltaRelation *)m;
  if (d->relation_type_case != DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN)
    rc = dd_err_set(DD_EINVAL, "target: a Delta table scan is required");
  else rc = connect_exec_table_location(out, d->scan->table, o);
  protobuf_c_message_free_unpacked(m, NULL);
  return rc;
}

/* The condition: SQL text as it came (DeltaTable.delete("x > 3")), else a tree. */
static int condition(ex_node **out, const char **sql, const Spark__Connect__Expression *c) {
  *out = NULL;
  *sql = NULL;
  if (c && c->expr_type_case == SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING &&
      c->expression_string && c->expression_string->expression) {
    *sql = c->expression_string->expression;
    return 0;
  }
  int rc = c ? connect_expr_from_proto(out, c) : 0;
  return rc ? dd_err_wrap(rc, "condition") : 0;
}

int connect_dml_delete(dop_result **out, const Delta__Connect__DeleteFromTable *d,
                       const connect_exec_opts *opts) {
  *out = NULL;
  char *loc = NULL;
  ex_node *pred = NULL;
  const char *sql = NULL;
  int rc = connect_dml_target(&loc, NULL, d->target, opts);
  if (!rc) rc = condition(&pred, &sql, d->condition);
  if (!rc) rc = connect_dml_run(out, loc, false, pred, sql, NULL, 0, opts);
  ex_free(pred);
  free(loc);
  return rc;
}

int connect_dml_field(char **out, const Spark__Connect__Expression *f) {
  ex_node *e = NULL;
  size_t n = 0;
  *out = NULL;
  int rc = f ? connect_expr_from_proto(&e, f) : dd_err_set(DD_EINVAL, "assignment: field required");
  const char *const *parts = !rc && ex_node_kind(e) == EX_COLUMN ? ex_column_parts(e, &n) : NULL;
  if (!rc && !n) rc = dd_err_set(DD_EINVAL, "assignment: the field must be a column or a field of a struct column");
  if (!rc) rc = connect_sql__path_text(out, parts, n);
  ex_free(e);
  return rc;
}

int connect_dml_update(dop_result **out, const Delta__Connect__UpdateTable *u,
                       const connect_exec_opts *opts) {
  *out = NULL;
  char *loc = NULL;
  ex_node *pred = NULL;
  const char *sql = NULL;
  size_t n = u->n_assignments;
  dml_assignment *as = calloc(n + 1, sizeof *as);
  char **names = calloc(n + 1, sizeof *names);
  ex_node **vals = calloc(n + 1, sizeof *vals);
  int rc = as && names && vals ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc && !n) rc = dd_err_set(DD_EINVAL, "update: at least one assignment is required");
  if (!rc) rc = connect_dml_target(&loc, NULL, u->target, opts);
  if (!rc) rc = condition(&pred, &sql, u->condition);
  for (size_t i = 0; !rc && i < n; i++) {
    rc = connect_dml_field(&names[i], u->assignments[i]->field);
    if (!rc && !u->assignments[i]->value) rc = dd_err_set(DD_EINVAL, "assignment: value required");
    if (!rc) rc = connect_expr_from_proto(&vals[i], u->assignments[i]->value);
    as[i] = (dml_assignment){names[i], vals[i]};
  }
  if (!rc) rc = connect_dml_run(out, loc, true, pred, sql, as, n, opts);
  for (size_t i = 0; i < n && names && vals; i++) {
    free(names[i]);
    ex_free(vals[i]);
  }
  free(names);
  free(vals);
  free(as);
  ex_free(pred);
  free(loc);
  return rc;
}
