/* connect_exec.h: runs a decoded delta.connect.DeltaCommand / DeltaRelation on the Delta
 * maintenance library (store/deltaops) and returns its dop_result. Shared by the
 * DeltaConnectService (connect_delta_svc.c) and the SparkConnectService
 * (connect_spark_svc.c), which only differ in how they put the rows on the wire. */
#ifndef DD_SERVER_SERVICE_CONNECT_EXEC_H
#define DD_SERVER_SERVICE_CONNECT_EXEC_H

#include <stdbool.h>

#include "delta/connect/commands.pb-c.h"
#include "delta/connect/relations.pb-c.h"
#include "store/deltaops/dop.h"

struct cat_store;
typedef struct connect_exec_opts {
  bool retention_check; /* spark.databricks.delta.retentionDurationCheck.enabled */
  /* Resolves `catalog.schema.table` names to the location registered in the catalog (table
   * registrations of the catalog's namespaces, e.g. through the Lance RegisterTable API).
   * NULL: such names are NOT_FOUND (the CLI's --local mode has no catalog). */
  struct cat_store *store;
  bool auto_merge; /* spark.databricks.delta.schema.autoMerge.enabled: MERGE evolves the schema */
} connect_exec_opts;
#define CONNECT_EXEC_OPTS_INIT {.retention_check = true}

/* The conf key (Spark's) that turns the vacuum retention check off, and the request
 * request header DeltaConnectService reads it from (value "false" turns it off). */
#define CONNECT_RETENTION_CHECK_CONF "spark.databricks.delta.retentionDurationCheck.enabled"
#define CONNECT_AUTO_MERGE_CONF "spark.databricks.delta.schema.autoMerge.enabled"
#define CONNECT_RETENTION_CHECK_HEADER "x-delta-retention-duration-check"
/* Per-request settings may also travel in DeltaTable.path.hadoop_conf: the retention
 * conf key above ("false"), and this one ("true") for a vacuum dry run (the Delta Connect
 * VacuumTable message has no dry-run field). */
#define CONNECT_DRY_RUN_CONF "deltad.vacuum.dryRun"
/* The longest vacuum retention accepted (100 years), so hours -> ms cannot overflow. */
#define CONNECT_MAX_RETENTION_HOURS 876000

int connect_exec_command(dop_result **out, const Delta__Connect__DeltaCommand *cmd,
                         const connect_exec_opts *opts);
int connect_exec_relation(dop_result **out, const Delta__Connect__DeltaRelation *rel,
                          const connect_exec_opts *opts);
/* True when running the relation changes the table (restore, convert): such a relation
 * must run once per plan even when the client asks for its schema first. */
bool connect_relation_mutates(const Delta__Connect__DeltaRelation *rel);
/* The confined location of a Delta Connect table (path or catalog name), and of a table
 * named in SQL or a Spark Read: an absolute path / file: URL, "delta.`/path`" or
 * "catalog.schema.table". *out malloc'ed. */
int connect_exec_table_location(char **out, const Delta__Connect__DeltaTable *t, const connect_exec_opts *opts);
int connect_exec_name_location(char **out, const char *name, const connect_exec_opts *opts);
/* The local storage-location roots data files may be read from (cat_roots_free them). */
int connect_exec_local_roots(char ***roots, size_t *n, const connect_exec_opts *opts);
/* A spark.connect.DataType as DDL text (malloc'ed). */
int connect_datatype_ddl(char **out, const Spark__Connect__DataType *t);

#endif
