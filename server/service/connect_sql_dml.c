/* connect_sql_dml.c: the tails of the SQL statements
 *   DELETE FROM table [WHERE condition]
 *   UPDATE table SET col = expr [, col = expr ...] [WHERE condition]
 * after the table name (connect_sql.c reads the keyword and the table), run through
 * connect_dml_run. Expressions are store/expr's (ex_parse_prefix); column names plain or
 * `backquoted` (`` inside is one backquote). Table aliases are not accepted. */
#include "server/service/connect_sql_dml.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/connect_dml.h"
#include "server/service/connect_sql_int.h"

#define MAX_ASSIGNMENTS 1024

static const char *skip_ws(const char *p) {
  while (isspace((unsigned char)*p)) p++;
  return p;
}

static bool keyword(const char **p, const char *kw) {
  size_t n = strlen(kw);
  if (strncasecmp(*p, kw, n) || isalnum((unsigned char)(*p)[n]) || (*p)[n] == '_') return false;
  *p = skip_ws(*p + n);
  return true;
}

static int syntax(const char *what, const char *p) {
  if (!*p) return dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] Syntax error at or near end of input (%s). "
                             "SQLSTATE: 42601", what);
  return dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] Syntax error at or near '%.24s' (%s). SQLSTATE: 42601",
                    p, what);
}

/* The end of the statement: nothing but an optional ';'. */
static int at_end(const char *what, const char *p) {
  p = skip_ws(p);
  if (*p == ';') p = skip_ws(p + 1);
  return *p ? syntax(what, p) : 0;
}

static int expr(const char **p, ex_node **out) {
  ex_parse_opts po = EX_PARSE_OPTS_INIT;
  po.allow_alias = false;
  size_t used = 0;
  int rc = ex_parse_prefix(out, *p, strlen(*p), &used, &po);
  if (!rc) *p = skip_ws(*p + used);
  return rc;
}

/* [WHERE condition] to the end: the condition's text in *sql (malloc'ed, NULL without). */
static int where(const char **p, char **sql, const char *what) {
  *sql = NULL;
  if (!keyword(p, "WHERE")) return at_end(what, *p);
  const char *start = *p;
  ex_node *pred = NULL;
  int rc = expr(p, &pred);
  ex_free(pred);
  size_t n = (size_t)(*p - start);
  while (n && isspace((unsigned char)start[n - 1])) n--;
  if (!rc && !(*sql = strndup(start, n))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = at_end(what, *p);
  return rc;
}

int connect_sql_delete(dop_result **out, const char *loc, const char *rest, const connect_exec_opts *opts) {
  *out = NULL;
  const char *p = skip_ws(rest);
  char *pred = NULL;
  int rc = where(&p, &pred, "DELETE FROM table [WHERE condition]");
  if (!rc) rc = connect_dml_run(out, loc, false, NULL, pred, NULL, 0, opts);
  free(pred);
  return rc;
}

/* A column name, plain or `quoted`, or a field path (s.a), into *out (connect_sql__column_path). */
static int column(const char **p, char **out) {
  connect_sql_cur c = {*p, 0, strlen(*p)};
  int rc = connect_sql__column_path(&c, out);
  if (!rc && !**out) free(*out), *out = NULL, rc = -1;
  if (rc) return syntax("UPDATE table SET column = value", *p);
  *p = skip_ws(*p + c.pos);
  return 0;
}

int connect_sql_update(dop_result **out, const char *loc, const char *rest, const connect_exec_opts *opts) {
  *out = NULL;
  const char *p = skip_ws(rest);
  static const char what[] = "UPDATE table SET column = value [, ...] [WHERE condition]";
  char *names[MAX_ASSIGNMENTS];
  ex_node *vals[MAX_ASSIGNMENTS];
  dml_assignment as[MAX_ASSIGNMENTS];
  size_t n = 0;
  char *pred = NULL;
  int rc = keyword(&p, "SET") ? 0 : syntax(what, p);
  while (!rc) {
    if (n == MAX_ASSIGNMENTS) {
      rc = dd_err_set(DD_EINVAL, "UPDATE: at most %d assignments", MAX_ASSIGNMENTS);
      break;
    }
    if ((rc = column(&p, &names[n]))) break;
    if (*p != '=') {
      free(names[n]);
      rc = syntax(what, p);
      break;
    }
    p = skip_ws(p + 1);
    if ((rc = expr(&p, &vals[n]))) {
      free(names[n]);
      break;
    }
    as[n] = (dml_assignment){names[n], vals[n]};
    n++;
    if (*p != ',') break;
    p = skip_ws(p + 1);
  }
  if (!rc) rc = where(&p, &pred, what);
  if (!rc) rc = connect_dml_run(out, loc, true, NULL, pred, as, n, opts);
  for (size_t i = 0; i < n; i++) {
    free(names[i]);
    ex_free(vals[i]);
  }
  free(pred);
  return rc;
}
