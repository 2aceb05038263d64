/* connect_write.h: writes of rows into Delta tables through Spark Connect (store/dml's
 * dml_write): the WriteOperation command (df.write.format("delta").mode(m)
 * .partitionBy(...).option(...).save(path) / .saveAsTable(name) / .insertInto(name)) and the
 * SQL statements INSERT INTO|OVERWRITE and CREATE [OR REPLACE] TABLE ... AS SELECT
 * (connect_sql_write.c). The source is any relation deltad plans (connect_plan.h). */
#ifndef DD_SERVER_SERVICE_CONNECT_WRITE_H
#define DD_SERVER_SERVICE_CONNECT_WRITE_H

#include "server/service/connect_exec.h"
#include "spark/connect/commands.pb-c.h"
#include "store/dml/dml.h"
#include "store/query/qry.h"

/* Runs the command; a write answers no rows. */
int connect_write_operation(const Spark__Connect__WriteOperation *w, const connect_exec_opts *opts);

/* df.writeTo(name)...create() / append() / replace() / createOrReplace() / overwrite(). */
int connect_write_operation_v2(const Spark__Connect__WriteOperationV2 *w, const connect_exec_opts *opts);

/* Writes the rows of src (borrowed) to the table at the confined location loc with o (its
 * source fields are filled in here: source_schema, next, ctx and schema_string). */
int connect_write_run(dml_write_result *out, const char *loc, qry_op *src, dml_write_opts *o);

#endif
