/* connect_forward_sql.c: Delta Connect plans as the Delta SQL a Spark Connect server with
 * Delta's SQL extension runs (connect_forward.h): spark.connect Expressions as SQL text,
 * DELETE / UPDATE / MERGE / OPTIMIZE / VACUUM statements against delta.`<location>`, and
 * the table names of a SQL statement replaced by their locations. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "server/service/connect_dml.h"
#include "server/service/connect_forward.h"

#define FWD_MAX_DEPTH 64

/* ======================= expressions ======================= */

void connect_fwd_sql_table(dd_buf *b, const char *loc) {
  dd_buf_puts(b, "delta.`");
  for (const char *p = loc; *p; p++) {
    if (*p == '`') dd_buf_putc(b, '`');
    dd_buf_putc(b, *p);
  }
  dd_buf_putc(b, '`');
}

void connect_fwd_sql_string(dd_buf *b, const char *s, size_t len) {
  dd_buf_putc(b, '\'');
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '\'' || s[i] == '\\') dd_buf_putc(b, '\\');
    dd_buf_putc(b, s[i]);
  }
  dd_buf_putc(b, '\'');
}

static void sql_string(dd_buf *b, const char *s) { connect_fwd_sql_string(b, s, strlen(s)); }

void connect_fwd_sql_double(dd_buf *b, double v, bool is_float) {
  const char *t = is_float ? "FLOAT" : "DOUBLE";
  if (isnan(v)) dd_buf_printf(b, "CAST('NaN' AS %s)", t);
  else if (isinf(v)) dd_buf_printf(b, "CAST('%sInfinity' AS %s)", v < 0 ? "-" : "", t);
  else if (is_float) dd_buf_printf(b, "CAST(%.9gD AS FLOAT)", v);
  else dd_buf_printf(b, "%.17gD", v);
}

void connect_fwd_sql_ident(dd_buf *b, const char *s) {
  dd_buf_putc(b, '`');
  for (; *s; s++) {
    if (*s == '`') dd_buf_putc(b, '`');
    dd_buf_putc(b, *s);
  }
  dd_buf_putc(b, '`');
}

static int literal(dd_buf *b, const Spark__Connect__Expression__Literal *l) {
  switch (l->literal_type_case) {
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_NULL: dd_buf_puts(b, "NULL"); return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BOOLEAN: dd_buf_puts(b, l->boolean ? "TRUE" : "FALSE"); return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BYTE: dd_buf_printf(b, "%dY", l->byte); return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_SHORT: dd_buf_printf(b, "%dS", l->short_); return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_INTEGER: dd_buf_printf(b, "%d", l->integer); return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_LONG: dd_buf_printf(b, "%lldL", (long long)l->long_); return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_FLOAT:
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DOUBLE: {
      bool f = l->literal_type_case == SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_FLOAT;
      connect_fwd_sql_double(b, f ? (double)l->float_ : l->double_, f);
      return 0;
    }
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DECIMAL:
      if (!l->decimal || !l->decimal->value || !*l->decimal->value || strspn(l->decimal->value, "+-0123456789.eE") != strlen(l->decimal->value))
        return dd_err_set(DD_EINVAL, "a decimal literal needs its digits");
      dd_buf_printf(b, "%sBD", l->decimal->value);
      return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING: sql_string(b, l->string ? l->string : ""); return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DATE: dd_buf_printf(b, "date_from_unix_date(%d)", l->date); return 0;
    case SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_TIMESTAMP:
      dd_buf_printf(b, "timestamp_micros(%lldL)", (long long)l->timestamp);
      return 0;
    default:
      return dd_err_set(DD_EUNSUPPORTED, "a literal of kind %d has no SQL form here", (int)l->literal_type_case);
  }
}

/* Spark's operator names that SQL writes between their two operands. */
static const char *const INFIX[][2] = {
    {"==", "="},   {"<=>", "<=>"}, {"!=", "!="}, {"<", "<"},     {"<=", "<="},     {">", ">"},
    {">=", ">="}, {"+", "+"},     {"-", "-"},   {"*", "*"},     {"/", "/"},       {"%", "%"},
    {"and", "AND"}, {"or", "OR"}, {"&", "&"},   {"|", "|"},     {"^", "^"},       {"like", "LIKE"},
    {"rlike", "RLIKE"}, {"ilike", "ILIKE"},
};

static int expr(dd_buf *b, const Spark__Connect__Expression *e, int depth);

static int args(dd_buf *b, Spark__Connect__Expression **a, size_t n, int depth) {
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    if (i) dd_buf_puts(b, ", ");
    rc = expr(b, a[i], depth + 1);
  }
  return rc;
}

static int call(dd_buf *b, const char *name, Spark__Connect__Expression **a, size_t n, bool distinct, int depth) {
  if (!name || !*name) return dd_err_set(DD_EINVAL, "a function call needs its name");
  for (size_t i = 0; n == 2 && i < sizeof INFIX / sizeof INFIX[0]; i++)
    if (!strcasecmp(name, INFIX[i][0])) {
      dd_buf_putc(b, '(');
      int rc = expr(b, a[0], depth + 1);
      dd_buf_printf(b, " %s ", INFIX[i][1]);
      if (!rc) rc = expr(b, a[1], depth + 1);
      dd_buf_putc(b, ')');
      return rc;
    }
  const char *pre = n == 1 && !strcasecmp(name, "not") ? "NOT " : n == 1 && (!strcmp(name, "-") || !strcasecmp(name, "negative")) ? "- " : NULL;
  const char *post = n == 1 && !strcasecmp(name, "isNull") ? " IS NULL" : n == 1 && !strcasecmp(name, "isNotNull") ? " IS NOT NULL" : NULL;
  if (pre || post) {
    dd_buf_printf(b, "(%s", pre ? pre : "");
    int rc = expr(b, a[0], depth + 1);
    dd_buf_printf(b, "%s)", post ? post : "");
    return rc;
  }
  if (!strcasecmp(name, "in") && n >= 1) {
    dd_buf_putc(b, '(');
    int rc = expr(b, a[0], depth + 1);
    dd_buf_puts(b, " IN (");
    if (!rc) rc = args(b, a + 1, n - 1, depth);
    dd_buf_puts(b, "))");
    return rc;
  }
  if (strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != strlen(name))
    return dd_err_set(DD_EUNSUPPORTED, "function '%s' has no SQL form here", name);
  dd_buf_printf(b, "%s(%s", name, distinct ? "DISTINCT " : "");
  int rc = args(b, a, n, depth);
  dd_buf_putc(b, ')');
  return rc;
}

static int cast(dd_buf *b, const Spark__Connect__Expression__Cast *c, int depth) {
  char *ddl = NULL;
  int rc = 0;
  if (c->cast_to_type_case == SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE) rc = connect_datatype_ddl(&ddl, c->type);
  else if (c->cast_to_type_case == SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE_STR && c->type_str && *c->type_str)
    ddl = strdup(c->type_str), rc = ddl ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  else rc = dd_err_set(DD_EINVAL, "a cast needs its type");
  if (!rc) {
    dd_buf_puts(b, c->eval_mode == SPARK__CONNECT__EXPRESSION__CAST__EVAL_MODE__EVAL_MODE_TRY ? "TRY_CAST(" : "CAST(");
    rc = expr(b, c->expr, depth + 1);
    dd_buf_printf(b, " AS %s)", ddl);
  }
  free(ddl);
  return rc;
}

static int expr(dd_buf *b, const Spark__Connect__Expression *e, int depth) {
  if (!e) return dd_err_set(DD_EINVAL, "an expression is required");
  if (depth > FWD_MAX_DEPTH) return dd_err_set(DD_EINVAL, "expression nested deeper than %d", FWD_MAX_DEPTH);
  switch (e->expr_type_case) {
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL: return literal(b, e->literal);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE:
      if (!e->unresolved_attribute->unparsed_identifier || !*e->unresolved_attribute->unparsed_identifier)
        return dd_err_set(DD_EINVAL, "a column reference needs its name");
      dd_buf_puts(b, e->unresolved_attribute->unparsed_identifier);
      return 0;
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING:
      if (!e->expression_string->expression || !*e->expression_string->expression)
        return dd_err_set(DD_EINVAL, "an expression string is empty");
      dd_buf_printf(b, "(%s)", e->expression_string->expression);
      return 0;
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION: {
      const Spark__Connect__Expression__UnresolvedFunction *f = e->unresolved_function;
      return call(b, f->function_name, f->arguments, f->n_arguments, f->is_distinct, depth);
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CALL_FUNCTION:
      return call(b, e->call_function->function_name, e->call_function->arguments, e->call_function->n_arguments, false, depth);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CAST: return cast(b, e->cast, depth);
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_ALIAS: {
      int rc = expr(b, e->alias->expr, depth + 1);
      if (!rc && e->alias->n_name == 1) dd_buf_puts(b, " AS "), connect_fwd_sql_ident(b, e->alias->name[0]);
      return rc;
    }
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_STAR:
      if (e->unresolved_star->_unparsed_target_case) dd_buf_puts(b, e->unresolved_star->unparsed_target);
      else dd_buf_putc(b, '*');
      return 0;
    case SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_EXTRACT_VALUE: {
      int rc = expr(b, e->unresolved_extract_value->child, depth + 1);
      dd_buf_putc(b, '[');
      if (!rc) rc = expr(b, e->unresolved_extract_value->extraction, depth + 1);
      dd_buf_putc(b, ']');
      return rc;
    }
    default:
      return dd_err_set(DD_EUNSUPPORTED, "expression kind %d has no SQL form here", (int)e->expr_type_case);
  }
}

int connect_fwd_sql_expr(dd_buf *b, const Spark__Connect__Expression *e) { return expr(b, e, 0); }

/* ======================= statements ======================= */

static int finish(char **sql, dd_buf *b, int rc) {
  if (!rc && b->oom) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (rc) dd_buf_free(b);
  else *sql = b->p ? b->p : strdup("");
  return rc;
}

static int assignments(dd_buf *b, Delta__Connect__Assignment **as, size_t n) {
  int rc = n ? 0 : dd_err_set(DD_EINVAL, "an update needs assignments");
  for (size_t i = 0; i < n && !rc; i++) {
    if (i) dd_buf_puts(b, ", ");
    if (!(rc = expr(b, as[i]->field, 0))) dd_buf_puts(b, " = "), rc = expr(b, as[i]->value, 0);
  }
  return rc;
}

/* target relation -> `delta.`loc` [AS alias]`; *loc malloc'ed */
static int target(dd_buf *b, char **loc, const Spark__Connect__Relation *rel, const connect_exec_opts *o, const char *what) {
  const char *alias = NULL;
  if (!strcmp(what, "source")) { /* local rows (createDataFrame) go as a VALUES relation */
    const Spark__Connect__Relation *r = rel;
    for (int i = 0; r && i < 16 && r->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_SUBQUERY_ALIAS; i++) {
      if (!alias && r->subquery_alias->alias && *r->subquery_alias->alias) alias = r->subquery_alias->alias;
      r = r->subquery_alias->input;
    }
    if (r && r->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_LOCAL_RELATION) {
      int rc = connect_fwd_sql_values(b, r->local_relation);
      if (!rc) dd_buf_puts(b, " AS "), connect_fwd_sql_ident(b, alias ? alias : "source");
      return rc;
    }
    alias = NULL;
  }
  int rc = connect_dml_target(loc, &alias, rel, o);
  if (rc == DD_EINVAL && !strcmp(what, "source"))
    return dd_err_set(DD_EUNSUPPORTED, "this merge cannot be forwarded to Spark: its source must be a Delta table "
                      "(a path or a catalog name) or local rows, not a query (%s)", dd_err_msg());
  if (rc) return dd_err_wrap(rc, "%s", what);
  connect_fwd_sql_table(b, *loc);
  if (alias) dd_buf_puts(b, " AS "), connect_fwd_sql_ident(b, alias);
  return 0;
}

static int merge_action(dd_buf *b, const char *when, const Delta__Connect__MergeIntoTable__Action *a) {
  dd_buf_printf(b, " %s", when);
  int rc = 0;
  if (a->condition) dd_buf_puts(b, " AND "), rc = expr(b, a->condition, 0);
  dd_buf_puts(b, " THEN ");
  if (rc) return rc;
  switch (a->action_type_case) {
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_DELETE_ACTION: dd_buf_puts(b, "DELETE"); return 0;
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_UPDATE_STAR_ACTION: dd_buf_puts(b, "UPDATE SET *"); return 0;
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_INSERT_STAR_ACTION: dd_buf_puts(b, "INSERT *"); return 0;
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_UPDATE_ACTION:
      dd_buf_puts(b, "UPDATE SET ");
      return assignments(b, a->update_action->assignments, a->update_action->n_assignments);
    case DELTA__CONNECT__MERGE_INTO_TABLE__ACTION__ACTION_TYPE_INSERT_ACTION: {
      const Delta__Connect__MergeIntoTable__Action__InsertAction *in = a->insert_action;
      if (!in->n_assignments) return dd_err_set(DD_EINVAL, "an insert needs assignments");
      dd_buf_puts(b, "INSERT (");
      for (size_t i = 0; i < in->n_assignments && !rc; i++) dd_buf_puts(b, i ? ", " : ""), rc = expr(b, in->assignments[i]->field, 0);
      dd_buf_puts(b, ") VALUES (");
      for (size_t i = 0; i < in->n_assignments && !rc; i++) dd_buf_puts(b, i ? ", " : ""), rc = expr(b, in->assignments[i]->value, 0);
      dd_buf_putc(b, ')');
      return rc;
    }
    default: return dd_err_set(DD_EINVAL, "a merge action is required");
  }
}

static int merge(dd_buf *b, char **loc, const Delta__Connect__MergeIntoTable *m, const connect_exec_opts *o) {
  char *src = NULL;
  dd_buf_puts(b, m->_with_schema_evolution_case && m->with_schema_evolution ? "MERGE WITH SCHEMA EVOLUTION INTO " : "MERGE INTO ");
  int rc = target(b, loc, m->target, o, "target");
  if (!rc) dd_buf_puts(b, " USING "), rc = target(b, &src, m->source, o, "source");
  free(src);
  if (!rc) dd_buf_puts(b, " ON "), rc = expr(b, m->condition, 0);
  for (size_t i = 0; i < m->n_matched_actions && !rc; i++) rc = merge_action(b, "WHEN MATCHED", m->matched_actions[i]);
  for (size_t i = 0; i < m->n_not_matched_actions && !rc; i++) rc = merge_action(b, "WHEN NOT MATCHED", m->not_matched_actions[i]);
  for (size_t i = 0; i < m->n_not_matched_by_source_actions && !rc; i++)
    rc = merge_action(b, "WHEN NOT MATCHED BY SOURCE", m->not_matched_by_source_actions[i]);
  return rc;
}

static int optimize(dd_buf *b, char **loc, const Delta__Connect__OptimizeTable *op, const connect_exec_opts *o) {
  int rc = connect_exec_table_location(loc, op->table, o);
  if (rc) return rc;
  dd_buf_puts(b, "OPTIMIZE ");
  connect_fwd_sql_table(b, *loc);
  for (size_t i = 0; i < op->n_partition_filters; i++) dd_buf_printf(b, "%s(%s)", i ? " AND " : " WHERE ", op->partition_filters[i]);
  for (size_t i = 0; i < op->n_zorder_columns; i++) {
    dd_buf_puts(b, i ? ", " : " ZORDER BY (");
    connect_fwd_sql_ident(b, op->zorder_columns[i]);
  }
  if (op->n_zorder_columns) dd_buf_putc(b, ')');
  return 0;
}

int connect_fwd_sql_relation(char **sql, char **loc, const Delta__Connect__DeltaRelation *rel,
                             const connect_exec_opts *o) {
  *sql = *loc = NULL;
  dd_buf b = {0};
  int rc = 0;
  switch (rel->relation_type_case) {
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DELETE_FROM_TABLE:
      dd_buf_puts(&b, "DELETE FROM ");
      rc = target(&b, loc, rel->delete_from_table->target, o, "target");
      if (!rc && rel->delete_from_table->condition) dd_buf_puts(&b, " WHERE "), rc = expr(&b, rel->delete_from_table->condition, 0);
      break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_UPDATE_TABLE:
      dd_buf_puts(&b, "UPDATE ");
      rc = target(&b, loc, rel->update_table->target, o, "target");
      if (!rc) dd_buf_puts(&b, " SET "), rc = assignments(&b, rel->update_table->assignments, rel->update_table->n_assignments);
      if (!rc && rel->update_table->condition) dd_buf_puts(&b, " WHERE "), rc = expr(&b, rel->update_table->condition, 0);
      break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_MERGE_INTO_TABLE: rc = merge(&b, loc, rel->merge_into_table, o); break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_OPTIMIZE_TABLE: rc = optimize(&b, loc, rel->optimize_table, o); break;
    default: rc = dd_err_set(DD_EUNSUPPORTED, "this Delta Connect relation is not forwarded");
  }
  if (rc) free(*loc), *loc = NULL;
  return finish(sql, &b, rc);
}

int connect_fwd_sql_command(char **sql, char **loc, const Delta__Connect__DeltaCommand *cmd,
                            const connect_exec_opts *o) {
  *sql = *loc = NULL;
  if (cmd->command_type_case != DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_VACUUM_TABLE)
    return dd_err_set(DD_EUNSUPPORTED, "this Delta Connect command is not forwarded");
  const Delta__Connect__VacuumTable *v = cmd->vacuum_table;
  int rc = connect_exec_table_location(loc, v->table, o);
  if (rc) return rc;
  dd_buf b = {0};
  dd_buf_puts(&b, "VACUUM ");
  connect_fwd_sql_table(&b, *loc);
  if (v->_retention_hours_case) {
    if (!(v->retention_hours >= 0 && v->retention_hours <= CONNECT_MAX_RETENTION_HOURS))
      rc = dd_err_set(DD_EINVAL, "vacuum: retention hours must be within 0..%d", CONNECT_MAX_RETENTION_HOURS);
    dd_buf_printf(&b, " RETAIN %.17g HOURS", v->retention_hours);
  }
  if (rc) free(*loc), *loc = NULL;
  return finish(sql, &b, rc);
}

/* ======================= table names in SQL text ======================= */

/* Keywords after which a statement names a table. */
static const char *const TABLE_KEYWORDS[] = {"FROM", "JOIN", "INTO", "UPDATE", "USING", "TABLE",
                                             "OPTIMIZE", "VACUUM", "HISTORY", "DETAIL"};

static bool ident_char(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_'; }

/* Length of the token at p: a quoted string, a `quoted` name, a word, a comment, one char. */
static size_t token_len(const char *p) {
  if (*p == '\'' || *p == '"' || *p == '`') {
    char q = *p;
    size_t i = 1;
    while (p[i] && p[i] != q) i += (p[i] == '\\' && q != '`' && p[i + 1]) ? 2 : 1;
    return p[i] ? i + 1 : i;
  }
  if (p[0] == '-' && p[1] == '-') return strcspn(p, "\n");
  if (p[0] == '/' && p[1] == '*') {
    const char *e = strstr(p + 2, "*/");
    return e ? (size_t)(e - p) + 2 : strlen(p);
  }
  size_t i = 0;
  while (ident_char(p[i])) i++;
  return i ? i : 1;
}

/* A dotted name at p (words and `quoted` parts): its length, and its parts. */
static size_t name_len(const char *p, int *parts, bool *quoted_last) {
  size_t i = 0;
  *parts = 0;
  for (;;) {
    if (p[i] != '`' && !ident_char(p[i])) return i;
    *quoted_last = p[i] == '`';
    i += token_len(p + i);
    (*parts)++;
    if (p[i] != '.') return i;
    i++;
  }
}

static bool table_keyword(const char *p, size_t n) {
  for (size_t k = 0; k < sizeof TABLE_KEYWORDS / sizeof TABLE_KEYWORDS[0]; k++)
    if (strlen(TABLE_KEYWORDS[k]) == n && !strncasecmp(p, TABLE_KEYWORDS[k], n)) return true;
  return false;
}

static int add_loc(char ***locs, size_t *n, char *loc) {
  char **g = realloc(*locs, (*n + 1) * sizeof *g);
  if (!g) return free(loc), dd_err_set(DD_ENOMEM, "out of memory");
  *locs = g;
  g[(*n)++] = loc;
  return 0;
}

int connect_fwd_sql_rewrite(char **out, char ***locs, size_t *nlocs, const char *sql,
                            const connect_exec_opts *o) {
  *out = NULL;
  dd_buf b = {0};
  bool after_kw = false;
  int rc = 0;
  for (const char *p = sql; *p && !rc;) {
    if (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') {
      dd_buf_putc(&b, *p++);
      continue;
    }
    int parts = 0;
    bool quoted_last = false;
    size_t n = after_kw ? name_len(p, &parts, &quoted_last) : 0;
    /* catalog.schema.table, or delta.`path` */
    bool is_table = n && (parts == 3 || (parts == 2 && quoted_last && !strncasecmp(p, "delta.", 6)));
    if (is_table) {
      char *name = strndup(p, n), *loc = NULL;
      rc = name ? connect_exec_name_location(&loc, name, o) : dd_err_set(DD_ENOMEM, "out of memory");
      free(name);
      if (!rc) connect_fwd_sql_table(&b, loc), rc = add_loc(locs, nlocs, loc);
      p += n;
      after_kw = false;
      continue;
    }
    size_t t = token_len(p);
    after_kw = table_keyword(p, t);
    dd_buf_put(&b, p, t);
    p += t;
  }
  return finish(out, &b, rc);
}
