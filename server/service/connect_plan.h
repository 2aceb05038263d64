/* connect_plan.h: spark.connect relations (Plan.root) as store/query operator trees, and
 * what AnalyzePlan answers about them (schema as a spark.connect.DataType, explain text,
 * tree string, is_local). The relations deltad answers: Read (DataSource "delta" with a
 * path / paths and versionAsOf / timestampAsOf, NamedTable through the catalog), the Delta
 * Connect extension (Scan, and the maintenance relations as one local batch), Filter,
 * Project, Limit, Offset, Sort, Aggregate (group by), Deduplicate, WithColumnsRenamed,
 * WithColumns, Drop, SubqueryAlias, ToDF, Range, LocalRelation (Arrow IPC), ShowString and
 * SQL (connect_sql.h). Anything else is DD_EUNSUPPORTED naming the relation. */
#ifndef DD_SERVER_SERVICE_CONNECT_PLAN_H
#define DD_SERVER_SERVICE_CONNECT_PLAN_H

#include "server/service/connect_exec.h"
#include "spark/connect/expressions.pb-c.h"
#include "spark/connect/relations.pb-c.h"
#include "spark/connect/types.pb-c.h"
#include "store/query/qry.h"

/* Deepest relation tree accepted (each relation nests its input). */
#define CONNECT_PLAN_MAX_DEPTH 128

/* The operator tree of rel (the caller's: qry_free). ShowString runs its input here. */
int connect_plan_build(qry_op **out, const Spark__Connect__Relation *rel, const connect_exec_opts *opts);
/* Builds the tree one level down (for connect_sql.c and nested relations). */
int connect_plan_build_at(qry_op **out, const Spark__Connect__Relation *rel, const connect_exec_opts *opts,
                          int depth);
/* The schema as a struct DataType (heap tree: protobuf_c_message_free_unpacked). */
int connect_plan_datatype(Spark__Connect__DataType **out, const arw_schema *s);
/* "== Physical Plan ==" and the operator tree, one operator a line. *out malloc'ed. */
int connect_plan_explain(char **out, const qry_op *op);
/* Is the relation computed from data in the plan alone (LocalRelation, Range)? */
bool connect_plan_is_local(const Spark__Connect__Relation *rel);
/* Opens the Delta table at the confined location and its snapshot (versionAsOf /
 * timestampAsOf when given: version >= 0, else timestamp text or NULL) as a scan source
 * with filter (may be NULL) for data skipping. */
int connect_plan_scan(qry_op **out, const char *location, int64_t version, const char *timestamp,
                      const ex_node *filter, const connect_exec_opts *opts);

#endif
