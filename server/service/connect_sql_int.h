/* connect_sql_int.h: what the files of the SQL front end share (connect_sql.c, the statement
 * dispatch and SELECT; connect_sql_ddl.c, CREATE and ALTER ... TBLPROPERTIES): the cursor
 * over the statement text (connect_sql_cur.c). A cursor reads forward; every reader skips
 * white space and -- comments first. Errors are DD_EINVAL "[PARSE_SYNTAX_ERROR] ..." at the
 * cursor (connect_sql__syntax) unless a reader says otherwise. */
#ifndef DD_SERVER_SERVICE_CONNECT_SQL_INT_H
#define DD_SERVER_SERVICE_CONNECT_SQL_INT_H

#include <stdbool.h>
#include <stdint.h>

#include "server/service/connect_sql.h"

typedef struct connect_sql_cur {
  const char *s;
  size_t pos, len;
} connect_sql_cur;

void connect_sql__ws(connect_sql_cur *c);
bool connect_sql__ident_char(char ch);
/* DD_EINVAL [PARSE_SYNTAX_ERROR] naming the text at the cursor. */
int connect_sql__syntax(const connect_sql_cur *c);
/* Consumes keyword k (case-insensitive, a whole word) when it is next. */
bool connect_sql__kw(connect_sql_cur *c, const char *k);
bool connect_sql__peek_kw(connect_sql_cur *c, const char *k);
/* Consumes the character ch when it is next. */
bool connect_sql__punct(connect_sql_cur *c, char ch);
/* Only an optional ';' and white space remain. */
bool connect_sql__at_end(connect_sql_cur *c);
/* An identifier (plain or `backquoted`); *out malloc'ed. */
int connect_sql__ident(connect_sql_cur *c, char **out);
/* A column or field path: one identifier (*out its name), or several joined by '.' (*out
 * the path as store/expr's column text: connect_sql__path_text). */
int connect_sql__column_path(connect_sql_cur *c, char **out);
/* Name parts as one text: one part as it is, several joined by '.', each `quoted` (``
 * inside) where it is not a plain identifier. */
int connect_sql__path_text(char **out, const char *const *parts, size_t n);
/* A string literal '...' or "..." (backslash escapes, doubled quotes); *out malloc'ed. */
int connect_sql__string_lit(connect_sql_cur *c, char **out);
int connect_sql__number(connect_sql_cur *c, double *out);
/* A whole number >= 0. */
int connect_sql__integer(connect_sql_cur *c, int64_t *out);
/* A table name as written (delta.`/path`, cat.sch.tbl); *out malloc'ed. */
int connect_sql__table_name(connect_sql_cur *c, char **out);
/* A table name resolved and confined to its location (connect_exec_name_location). */
int connect_sql__table_loc(connect_sql_cur *c, char **loc, const connect_exec_opts *o);
/* An expression (store/expr's prefix parser); allow_alias: `e [AS] name`. */
int connect_sql__expr(connect_sql_cur *c, ex_node **out, bool allow_alias);

/* A command's result (run with code rc) as a local relation; frees res. */
int connect_sql__result(qry_op **out, dop_result *res, int rc);

/* Statements of connect_sql_ddl.c (after their first keyword). */
int connect_sql__create(qry_op **out, connect_sql_cur *c, const connect_exec_opts *o);
/* INSERT INTO|OVERWRITE ... (connect_sql_write.c), after INSERT. */
int connect_sql__insert(qry_op **out, connect_sql_cur *c, const connect_exec_opts *o);
/* CREATE TABLE ... AS SELECT: c after AS, m the parsed CREATE (connect_sql_write.c). */
int connect_sql__ctas(qry_op **out, connect_sql_cur *c, const Delta__Connect__CreateDeltaTable *m,
                      const connect_exec_opts *o);
/* MERGE INTO ... (connect_sql_merge.c), after MERGE. */
int connect_sql__merge(qry_op **out, connect_sql_cur *c, const connect_exec_opts *o);
/* After ALTER TABLE name SET | UNSET, of the confined table at location. */
int connect_sql__alter_props(qry_op **out, connect_sql_cur *c, const char *location, bool set);
/* ALTER TABLE name CLUSTER (after CLUSTER): BY (col, ...) | BY NONE. */
int connect_sql__alter_cluster(qry_op **out, connect_sql_cur *c, const char *location);

#endif
