/* connect_sql.h: the SQL deltad answers through Spark Connect (the SQL relation and the
 * SqlCommand of spark.sql(...)):
 *
 *   SELECT [DISTINCT] item, ... [FROM table [VERSION|TIMESTAMP AS OF x] [[AS] alias]]
 *     [WHERE expr] [GROUP BY expr, ...] [HAVING expr]
 *     [ORDER BY expr [ASC|DESC] [NULLS FIRST|LAST], ...] [LIMIT n] [OFFSET n]
 *       item: * | expr [[AS] name] | count(*) | count([DISTINCT] expr) | sum|min|max|avg(expr)
 *       table: delta.`/path` | catalog.schema.table
 *   VACUUM table [RETAIN n HOURS] [DRY RUN]
 *   RESTORE [TABLE] table TO VERSION AS OF n | TO TIMESTAMP AS OF 'ts'
 *   DESCRIBE HISTORY table [LIMIT n] | DESCRIBE DETAIL table | DESCRIBE [TABLE] table
 *   SHOW COLUMNS IN|FROM table
 *   CONVERT TO DELTA parquet.`/path` [PARTITIONED BY (col type, ...)]
 *   ALTER TABLE table ADD FEATURE name | DROP FEATURE name [TRUNCATE HISTORY]
 *   GENERATE symlink_format_manifest FOR TABLE table
 *   SHOW TBLPROPERTIES table [('key')]
 *   CREATE [OR REPLACE] TABLE [IF NOT EXISTS] table (col type [NOT NULL] [COMMENT 'c'], ...)
 *     USING DELTA [PARTITIONED BY (...)] [LOCATION '..'] [TBLPROPERTIES (..)] [COMMENT '..']
 *   CREATE [OR REPLACE] TABLE [IF NOT EXISTS] table USING DELTA [...] AS SELECT ...
 *   INSERT INTO|OVERWRITE [TABLE] table [(col, ...)] VALUES (...), ... | SELECT ...
 *                                (connect_sql_write.c, docs/dml.md "Writes")
 *   OPTIMIZE table ...           (CONNECT_SQL_OPTIMIZE_HOOK below; UNIMPLEMENTED until set)
 *   DELETE FROM table [WHERE cond] | UPDATE table SET col = expr, ... [WHERE cond]
 *                                (connect_sql_dml.c, docs/dml.md)
 * Keywords are case-insensitive; one statement, an optional trailing ';'. Expressions are
 * store/expr's SQL text (ex_parse_prefix). A statement outside this grammar is DD_EINVAL
 * "[PARSE_SYNTAX_ERROR] Syntax error at or near ..." or DD_EUNSUPPORTED naming it. */
#ifndef DD_SERVER_SERVICE_CONNECT_SQL_H
#define DD_SERVER_SERVICE_CONNECT_SQL_H

#include <stdbool.h>

#include "server/service/connect_exec.h"
#include "spark/connect/commands.pb-c.h"
#include "store/query/qry.h"

/* The longest statement accepted. */
#define CONNECT_SQL_MAX_LEN (1 << 20)

/* The rows of the statement: a query as an operator tree; a maintenance statement runs
 * now and its result becomes a local relation. depth: the plan depth it appears at. */
int connect_sql_query(qry_op **out, const char *sql, const connect_exec_opts *opts, int depth);
/* Is the statement a query (SELECT), as opposed to a command that runs eagerly? */
bool connect_sql_is_query(const char *sql);
/* The statement of a spark.sql(...) command (Spark 4 clients send it as its `input` SQL
 * relation, older ones as `sql`), borrowed from c; NULL when it has none. */
const char *connect_sql_command_text(const Spark__Connect__SqlCommand *c);

/* DESCRIBE [TABLE] (describe: col_name, data_type, comment and the partition section) or
 * SHOW COLUMNS (col_name) of the table at location, as a local relation
 * (connect_sql_describe.c). */
int connect_sql_columns(qry_op **out, const char *location, bool describe);

/* OPTIMIZE: set by the OPTIMIZE module when it is linked in (table location, the text
 * after the table name); NULL answers UNIMPLEMENTED. */
typedef int (*connect_sql_optimize_fn)(dop_result **out, const char *location, const char *rest,
                                       const connect_exec_opts *opts);
extern connect_sql_optimize_fn connect_sql_optimize_hook;

#endif
