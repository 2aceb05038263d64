/* connect_sql_dml.h: the SQL statements DELETE FROM and UPDATE (connect_sql_dml.c). */
#ifndef DD_SERVER_SERVICE_CONNECT_SQL_DML_H
#define DD_SERVER_SERVICE_CONNECT_SQL_DML_H

#include "server/service/connect_exec.h"
#include "store/deltaops/dop.h"

/* The statement's text after the table name (rest) on the table at loc (resolved and
 * confined): `[WHERE condition]` / `SET col = expr, ... [WHERE condition]`. *out is Delta's
 * row (num_affected_rows). DD_EINVAL [PARSE_SYNTAX_ERROR] for text outside the grammar. */
int connect_sql_delete(dop_result **out, const char *loc, const char *rest, const connect_exec_opts *opts);
int connect_sql_update(dop_result **out, const char *loc, const char *rest, const connect_exec_opts *opts);

#endif
