/* connect_sql_merge.c: the SQL statement
 *   MERGE INTO target [[AS] alias] USING source [[AS] alias] ON condition
 *     { WHEN MATCHED [AND cond] THEN { UPDATE SET * | UPDATE SET col = expr [, ...] | DELETE }
 *     | WHEN NOT MATCHED [BY TARGET] [AND cond] THEN { INSERT * | INSERT (col, ...) VALUES (expr, ...) }
 *     | WHEN NOT MATCHED BY SOURCE [AND cond] THEN { UPDATE SET col = expr [, ...] | DELETE } } ...
 * after its first keyword, run through connect_merge_run. The target and a table source
 * are names (delta.`/path`, catalog.schema.table); a source may also be a (SELECT ...)
 * subquery. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_merge.h"
#include "server/service/connect_plan.h"
#include "server/service/connect_sql_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")
#define MAX_ASSIGNMENTS 1024

static bool alias_start(connect_sql_cur *c) {
  static const char *const stop[] = {"USING", "ON", "WHEN"};
  connect_sql__ws(c);
  for (size_t i = 0; i < sizeof stop / sizeof *stop; i++)
    if (connect_sql__peek_kw(c, stop[i])) return false;
  return c->pos < c->len && (c->s[c->pos] == '`' || connect_sql__ident_char(c->s[c->pos]));
}

static int opt_alias(connect_sql_cur *c, char **out) {
  *out = NULL;
  if (connect_sql__kw(c, "AS") || alias_start(c)) return connect_sql__ident(c, out);
  return 0;
}

/* ( SELECT ... ): the text between the parentheses, quotes and nesting respected. */
static int subquery(connect_sql_cur *c, qry_op **op, const connect_exec_opts *o) {
  size_t start = c->pos, depth = 1;
  char q = 0;
  for (; c->pos < c->len && depth; c->pos++) {
    char ch = c->s[c->pos];
    if (q) q = ch == q ? 0 : q;
    else if (ch == '\'' || ch == '"' || ch == '`') q = ch;
    else depth += ch == '(' ? 1 : ch == ')' ? (size_t)-1 : 0;
  }
  if (depth) return connect_sql__syntax(c);
  char *text = strndup(c->s + start, c->pos - 1 - start);
  int rc = text ? connect_sql_query(op, text, o, 1) : OOM();
  free(text);
  return rc ? dd_err_wrap(rc, "MERGE: the source query") : 0;
}

static int source(connect_sql_cur *c, qry_op **op, const connect_exec_opts *o) {
  if (connect_sql__punct(c, '(')) return subquery(c, op, o);
  char *loc = NULL;
  int rc = connect_sql__table_loc(c, &loc, o);
  if (!rc) rc = connect_plan_scan(op, loc, -1, NULL, NULL, o);
  free(loc);
  return rc;
}

/* A column name, plain or qualified (t.col), or a field path (t.s.a). */
static int column(connect_sql_cur *c, connect_merge_spec *s, const char **out) {
  char *a = NULL;
  int rc = connect_sql__column_path(c, &a);
  if (!rc) rc = connect_merge_own(s, a);
  *out = rc ? NULL : a;
  return rc;
}

static int expr(connect_sql_cur *c, connect_merge_spec *s, ex_node **out) {
  int rc = connect_sql__expr(c, out, false);
  if (!rc) rc = connect_merge_own_tree(s, *out);
  return rc;
}

/* SET col = expr [, ...] */
static int set_list(connect_sql_cur *c, connect_merge_spec *s, dml_assignment **as, size_t *n) {
  *as = calloc(MAX_ASSIGNMENTS, sizeof **as);
  *n = 0;
  int rc = *as ? 0 : OOM();
  do {
    if (*n == MAX_ASSIGNMENTS) rc = dd_err_set(DD_EINVAL, "MERGE: at most %d assignments", MAX_ASSIGNMENTS);
    if (!rc) rc = column(c, s, &(*as)[*n].column);
    if (!rc && !connect_sql__punct(c, '=')) rc = connect_sql__syntax(c);
    ex_node *v = NULL;
    if (!rc) rc = expr(c, s, &v);
    if (!rc) (*as)[(*n)++].value = v;
  } while (!rc && connect_sql__punct(c, ','));
  return rc;
}

/* INSERT (col, ...) VALUES (expr, ...) */
static int insert_list(connect_sql_cur *c, connect_merge_spec *s, dml_assignment **as, size_t *n) {
  *as = calloc(MAX_ASSIGNMENTS, sizeof **as);
  *n = 0;
  size_t nv = 0;
  int rc = *as ? 0 : OOM();
  do {
    if (*n == MAX_ASSIGNMENTS) rc = dd_err_set(DD_EINVAL, "MERGE: at most %d columns", MAX_ASSIGNMENTS);
    if (!rc) rc = column(c, s, &(*as)[(*n)++].column);
  } while (!rc && connect_sql__punct(c, ','));
  if (!rc && !connect_sql__punct(c, ')')) rc = connect_sql__syntax(c);
  if (!rc && !(connect_sql__kw(c, "VALUES") && connect_sql__punct(c, '('))) rc = connect_sql__syntax(c);
  do {
    ex_node *v = NULL;
    if (!rc) rc = expr(c, s, &v);
    if (!rc && nv < *n) (*as)[nv].value = v;
    nv += !rc;
  } while (!rc && connect_sql__punct(c, ','));
  if (!rc && !connect_sql__punct(c, ')')) rc = connect_sql__syntax(c);
  if (!rc && nv != *n)
    rc = dd_err_set(DD_EINVAL, "MERGE: INSERT names %zu columns but gives %zu values", *n, nv);
  return rc;
}

static int clause(connect_sql_cur *c, connect_merge_spec *s) {
  dml_merge_kind kind = DML_MERGE_MATCHED;
  dml_merge_action act;
  ex_node *cond = NULL;
  dml_assignment *as = NULL;
  size_t nas = 0;
  int rc = 0;
  if (connect_sql__kw(c, "NOT")) {
    if (!connect_sql__kw(c, "MATCHED")) return connect_sql__syntax(c);
    kind = DML_MERGE_NOT_MATCHED;
    if (connect_sql__kw(c, "BY")) {
      if (connect_sql__kw(c, "SOURCE")) kind = DML_MERGE_NOT_MATCHED_BY_SOURCE;
      else if (!connect_sql__kw(c, "TARGET")) return connect_sql__syntax(c);
    }
  } else if (!connect_sql__kw(c, "MATCHED")) {
    return connect_sql__syntax(c);
  }
  if (connect_sql__kw(c, "AND")) rc = expr(c, s, &cond);
  if (!rc && !connect_sql__kw(c, "THEN")) rc = connect_sql__syntax(c);
  if (rc) return rc;
  if (connect_sql__kw(c, "DELETE")) {
    act = DML_MERGE_DELETE;
  } else if (connect_sql__kw(c, "UPDATE")) {
    if (!connect_sql__kw(c, "SET")) return connect_sql__syntax(c);
    act = connect_sql__punct(c, '*') ? DML_MERGE_UPDATE_STAR : DML_MERGE_UPDATE;
    if (act == DML_MERGE_UPDATE) rc = set_list(c, s, &as, &nas);
  } else if (connect_sql__kw(c, "INSERT")) {
    act = connect_sql__punct(c, '*') ? DML_MERGE_INSERT_STAR : DML_MERGE_INSERT;
    if (act == DML_MERGE_INSERT)
      rc = connect_sql__punct(c, '(') ? insert_list(c, s, &as, &nas) : connect_sql__syntax(c);
  } else {
    return connect_sql__syntax(c);
  }
  if (rc) return free(as), rc;
  /* cond is already kept by s: the clause borrows it */
  rc = connect_merge_add(s, kind, act, NULL, as, nas);
  if (!rc) s->cl[s->ncl - 1].condition = cond;
  return rc;
}

int connect_sql__merge(qry_op **out, connect_sql_cur *c, const connect_exec_opts *o) {
  *out = NULL;
  char *loc = NULL, *ta = NULL, *sa = NULL;
  qry_op *src = NULL;
  ex_node *on = NULL;
  connect_merge_spec s = {0};
  dop_result *res = NULL;
  /* MERGE WITH SCHEMA EVOLUTION INTO (Spark 4's syntax) */
  bool evolve = connect_sql__kw(c, "WITH");
  int rc = evolve && !(connect_sql__kw(c, "SCHEMA") && connect_sql__kw(c, "EVOLUTION")) ? connect_sql__syntax(c) : 0;
  if (!rc) rc = connect_sql__kw(c, "INTO") ? connect_sql__table_loc(c, &loc, o) : connect_sql__syntax(c);
  if (!rc) rc = opt_alias(c, &ta);
  if (!rc && !connect_sql__kw(c, "USING")) rc = connect_sql__syntax(c);
  if (!rc) rc = source(c, &src, o);
  if (!rc) rc = opt_alias(c, &sa);
  if (!rc && !connect_sql__kw(c, "ON")) rc = connect_sql__syntax(c);
  if (!rc) rc = connect_sql__expr(c, &on, false);
  while (!rc && connect_sql__kw(c, "WHEN")) rc = clause(c, &s);
  if (!rc && !s.ncl) rc = connect_sql__syntax(c);
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  if (!rc) rc = connect_merge_run(&res, loc, ta, src, sa, on, &s, evolve, o), src = NULL;
  qry_free(src);
  ex_free(on);
  connect_merge_spec_free(&s);
  free(loc), free(ta), free(sa);
  return connect_sql__result(out, res, rc);
}
