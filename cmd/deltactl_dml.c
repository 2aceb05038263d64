/* deltactl_dml.c: `deltactl table delete PATH [--where EXPR] [--local]` and `deltactl table
 * update PATH --set COL=EXPR [--set ...] [--where EXPR] [--local]`: DELETE / UPDATE
 * in-process (--local, store/dml) or through DeltaConnectService's DeleteFromTable /
 * UpdateTable relations (the target a named-table read of the path, the expressions as
 * SQL text). The result is Delta's row (num_affected_rows), printed by dctl_print_result. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_common.h"
#include "cmd/deltactl_table.h"
#include "cmd/deltactl_tableops.h"
#include "common/err.h"
#include "delta/connect/relations.pb-c.h"
#include "store/dml/dml.h"

#define REL_METHOD "/deltad.connect.v1.DeltaConnectService/ExecuteRelation"

static const char USAGE_DELETE[] =
    "usage: deltactl table delete PATH [--where EXPR] [--local] [--output FORMAT]\n"
    "Deletes the rows matching EXPR (every row without --where), as DELETE FROM does.\n";
static const char USAGE_UPDATE[] =
    "usage: deltactl table update PATH --set COL=EXPR [--set COL=EXPR...] [--where EXPR]\n"
    "                             [--local] [--output FORMAT]\n"
    "Sets the columns of the rows matching EXPR (every row without --where) to the\n"
    "expressions' values, as UPDATE ... SET does.\n";

typedef struct args {
  bool update;
  int local;
  const char *where;
  dctl_strv sets;
  char *cols[DCTL_LIST_MAX];   /* column names of --set, split off */
  const char *vals[DCTL_LIST_MAX];
} args;

static int parse(args *a, int argc, char **argv, const char **path) {
  const char *usage = a->update ? USAGE_UPDATE : USAGE_DELETE;
  dctl_opt opts[] = {
      {"--local", 0, NULL, &a->local, NULL},
      {"--where", 1, &a->where, NULL, NULL},
      {a->update ? "--set" : NULL, 1, NULL, NULL, &a->sets},
      {NULL, 0, NULL, NULL, NULL},
  };
  dctl_cmd cmd = {usage, opts, 1, 1};
  int npos = 0;
  int code = dctl_parse(&cmd, argc, argv, path, &npos);
  if (code != DCTL_CONTINUE) return code;
  if (a->update && !a->sets.n) return dctl_usage_error(usage, "update needs at least one --set COL=EXPR");
  for (size_t i = 0; i < a->sets.n; i++) {
    const char *eq = strchr(a->sets.v[i], '=');
    size_t n = eq ? (size_t)(eq - a->sets.v[i]) : 0;
    while (n && a->sets.v[i][n - 1] == ' ') n--;
    if (!eq || !n) return dctl_usage_error(usage, "--set wants COL=EXPR, not '%s'", a->sets.v[i]);
    if (!(a->cols[i] = strndup(a->sets.v[i], n))) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
    a->vals[i] = eq + 1;
  }
  return DCTL_CONTINUE;
}

static int run_local(const args *a, const char *path) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dml_result res;
  dop_result *d = NULL;
  ex_node *vals[DCTL_LIST_MAX] = {NULL};
  dml_assignment as[DCTL_LIST_MAX];
  int rc = 0;
  for (size_t i = 0; !rc && i < a->sets.n; i++) {
    rc = ex_parse(&vals[i], a->vals[i], strlen(a->vals[i]), NULL);
    if (rc) rc = dd_err_wrap(rc, "--set %s", a->cols[i]);
    as[i] = (dml_assignment){a->cols[i], vals[i]};
  }
  if (!rc) rc = dl_table_open(&t, path);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  if (!rc) {
    dml_opts o = DML_OPTS_INIT;
    o.predicate_sql = a->where;
    o.assignments = as;
    o.num_assignments = a->sets.n;
    rc = a->update ? dml_update(&res, t, s, &o) : dml_delete(&res, t, s, &o);
  }
  if (!rc) rc = dml_result_dop(&d, &res);
  for (size_t i = 0; i < a->sets.n; i++) ex_free(vals[i]);
  dl_snapshot_free(s);
  dl_table_free(t);
  return dctl_finish_local(rc, d);
}

/* A spark.connect Expression of SQL text. */
typedef struct text_expr {
  Spark__Connect__Expression e;
  Spark__Connect__Expression__ExpressionString s;
} text_expr;

static void text_expr_init(text_expr *x, const char *sql) {
  Spark__Connect__Expression e = SPARK__CONNECT__EXPRESSION__INIT;
  Spark__Connect__Expression__ExpressionString s = SPARK__CONNECT__EXPRESSION__EXPRESSION_STRING__INIT;
  x->e = e;
  x->s = s;
  x->s.expression = (char *)sql;
  x->e.expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING;
  x->e.expression_string = &x->s;
}

static int run_server(const args *a, const char *path) {
  Spark__Connect__Relation target = SPARK__CONNECT__RELATION__INIT;
  Spark__Connect__Read read = SPARK__CONNECT__READ__INIT;
  Spark__Connect__Read__NamedTable nt = SPARK__CONNECT__READ__NAMED_TABLE__INIT;
  nt.unparsed_identifier = (char *)path;
  read.read_type_case = SPARK__CONNECT__READ__READ_TYPE_NAMED_TABLE;
  read.named_table = &nt;
  target.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_READ;
  target.read = &read;
  text_expr cond;
  text_expr_init(&cond, a->where);
  Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
  Delta__Connect__DeleteFromTable del = DELTA__CONNECT__DELETE_FROM_TABLE__INIT;
  Delta__Connect__UpdateTable up = DELTA__CONNECT__UPDATE_TABLE__INIT;
  static text_expr vals[DCTL_LIST_MAX];
  static Spark__Connect__Expression fields[DCTL_LIST_MAX];
  static Spark__Connect__Expression__UnresolvedAttribute attrs[DCTL_LIST_MAX];
  static Delta__Connect__Assignment asg[DCTL_LIST_MAX];
  static Delta__Connect__Assignment *asp[DCTL_LIST_MAX];
  for (size_t i = 0; i < a->sets.n; i++) {
    Spark__Connect__Expression e = SPARK__CONNECT__EXPRESSION__INIT;
    Spark__Connect__Expression__UnresolvedAttribute at = SPARK__CONNECT__EXPRESSION__UNRESOLVED_ATTRIBUTE__INIT;
    Delta__Connect__Assignment as = DELTA__CONNECT__ASSIGNMENT__INIT;
    attrs[i] = at;
    attrs[i].unparsed_identifier = a->cols[i];
    fields[i] = e;
    fields[i].expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE;
    fields[i].unresolved_attribute = &attrs[i];
    text_expr_init(&vals[i], a->vals[i]);
    asg[i] = as;
    asg[i].field = &fields[i];
    asg[i].value = &vals[i].e;
    asp[i] = &asg[i];
  }
  if (a->update) {
    up.target = &target;
    up.condition = a->where ? &cond.e : NULL;
    up.n_assignments = a->sets.n;
    up.assignments = asp;
    rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_UPDATE_TABLE;
    rel.update_table = &up;
  } else {
    del.target = &target;
    del.condition = a->where ? &cond.e : NULL;
    rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DELETE_FROM_TABLE;
    rel.delete_from_table = &del;
  }
  return dctl_tableops_remote(REL_METHOD, &rel.base);
}

int dctl_dml_main(int argc, char **argv) {
  args a;
  memset(&a, 0, sizeof a);
  a.update = !strcmp(argv[1], "update");
  const char *pos[1] = {NULL};
  int code = parse(&a, argc - 1, argv + 1, pos);
  if (code == DCTL_CONTINUE) {
    char *path = NULL;
    code = dctl_tbl_data_path(pos[0], &path);
    if (!code) code = a.local ? run_local(&a, path) : run_server(&a, path);
    free(path);
  }
  for (size_t i = 0; i < a.sets.n; i++) free(a.cols[i]);
  return code;
}
