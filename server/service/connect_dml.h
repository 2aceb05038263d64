/* connect_dml.h: the delta.connect DeleteFromTable and UpdateTable relations
 * (DeltaTable.delete(...) / .update(...)) and the SQL DELETE / UPDATE statements
 * (connect_sql_dml.c) on store/dml. */
#ifndef DD_SERVER_SERVICE_CONNECT_DML_H
#define DD_SERVER_SERVICE_CONNECT_DML_H

#include <stdbool.h>

#include "delta/connect/relations.pb-c.h"
#include "server/service/connect_exec.h"
#include "store/deltaops/dop.h"
#include "store/dml/dml.h"

/* The relations: the target table from the target relation (a Delta Scan extension, a
 * named table or a delta data source read, under any SubqueryAlias), the condition and
 * assignments from spark.connect Expressions. *out is Delta's row (num_affected_rows). */
int connect_dml_delete(dop_result **out, const Delta__Connect__DeleteFromTable *d,
                       const connect_exec_opts *opts);
int connect_dml_update(dop_result **out, const Delta__Connect__UpdateTable *u,
                       const connect_exec_opts *opts);

/* The table a target relation names (see above), confined, in *out (malloc'ed); *alias
 * (may be NULL) the outermost SubqueryAlias's name, borrowed from rel, NULL without one. */
int connect_dml_target(char **out, const char **alias, const Spark__Connect__Relation *rel,
                       const connect_exec_opts *o);

/* An assignment's field (a column reference: the column, qualified or not, or a field
 * path in a struct column) as assignment text for dml (connect_sql__path_text). */
int connect_dml_field(char **out, const Spark__Connect__Expression *f);
/* DELETE (update false) or UPDATE of the latest snapshot of the table at loc (resolved and
 * confined); the condition a tree (pred) or SQL text (pred_sql: lets a partition-only
 * DELETE drop whole files unread), neither for every row; reads files only under the
 * table and the local storage roots of opts. */
int connect_dml_run(dop_result **out, const char *loc, bool update, const ex_node *pred,
                    const char *pred_sql, const dml_assignment *as, size_t nas,
                    const connect_exec_opts *opts);

#endif
