/* connect_optimize.h: the delta.connect OptimizeTable relation (DeltaTable.optimize()
 * .where(...).executeCompaction() / .executeZOrderBy(...)) on store/optimize. */
#ifndef DD_SERVER_SERVICE_CONNECT_OPTIMIZE_H
#define DD_SERVER_SERVICE_CONNECT_OPTIMIZE_H

#include "delta/connect/relations.pb-c.h"
#include "store/deltaops/dop.h"

/* Optimizes the table at loc (already resolved and confined) as o asks: its partition
 * filters (SQL predicates, ANDed), Z-order columns, and a target size from the table's
 * hadoop_conf (OPT_TARGET_SIZE_CONF). *out is Delta's result row (path, metrics). */
int connect_optimize(dop_result **out, const char *loc, const Delta__Connect__OptimizeTable *o);

#endif
