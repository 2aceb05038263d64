/* connect_merge.h: MERGE INTO on store/dml (dml_merge) from the delta.connect MergeIntoTable
 * relation (DeltaTable.merge(source, cond).whenMatched...().execute()) and from the SQL
 * statement (connect_sql_merge.c). The source is any relation or query deltad plans
 * (store/query): a LocalRelation from spark.createDataFrame, a Delta table read with a
 * filter or projection, a SQL subquery; it is materialised for the merge. */
#ifndef DD_SERVER_SERVICE_CONNECT_MERGE_H
#define DD_SERVER_SERVICE_CONNECT_MERGE_H

#include "delta/connect/relations.pb-c.h"
#include "server/service/connect_exec.h"
#include "store/deltaops/dop.h"
#include "store/dml/dml.h"
#include "store/query/qry.h"

/* The WHEN clauses of one MERGE and the trees and names they point to (all owned). */
typedef struct connect_merge_spec {
  dml_merge_clause *cl;
  size_t ncl, capcl;
  void **owned;            /* ex_node trees (kind 0), malloc'ed blocks (kind 1) */
  unsigned char *kind;
  size_t nown, capown;
} connect_merge_spec;

/* Appends a clause (its condition and assignments' trees taken into spec). */
int connect_merge_add(connect_merge_spec *s, dml_merge_kind kind, dml_merge_action action,
                      ex_node *cond, dml_assignment *as, size_t nas);
/* Takes tree e / block p into spec's keeping (freed by connect_merge_spec_free). */
int connect_merge_own_tree(connect_merge_spec *s, ex_node *e);
int connect_merge_own(connect_merge_spec *s, void *p);
void connect_merge_spec_free(connect_merge_spec *s);

/* MERGE into the latest snapshot of the table at loc (resolved and confined) from the rows
 * of src (taken), on condition on. *out is Delta's row (num_affected_rows,
 * num_updated_rows, num_deleted_rows, num_inserted_rows). */
int connect_merge_run(dop_result **out, const char *loc, const char *target_alias, qry_op *src,
                      const char *source_alias, const ex_node *on, const connect_merge_spec *spec,
                      bool schema_evolution, const connect_exec_opts *opts);

/* The relation. */
int connect_merge_relation(dop_result **out, const Delta__Connect__MergeIntoTable *m,
                           const connect_exec_opts *opts);

#endif
