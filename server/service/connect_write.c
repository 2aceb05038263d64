/* connect_write.c: the Spark Connect WriteOperation command on store/dml's dml_write (see
 * connect_write.h). The target: .save(path) a path, .saveAsTable(name) / .insertInto(name)
 * a name resolved as other Spark Connect names are (delta.`/path`, a path, or a catalog
 * table registered with a location; an unregistered catalog name is NOT_FOUND: deltad's
 * catalog does not create tables for a write). Options (case-insensitive keys): mergeSchema,
 * overwriteSchema, dataChange, replaceWhere (partition columns only), userMetadata is ignored. Formats
 * other than delta, bucketBy, sortBy and clusterBy are UNIMPLEMENTED.
 * WriteOperationV2 (df.writeTo(name)): create (CREATE TABLE AS SELECT; ALREADY_EXISTS when
 * there is one), append and overwrite(lit(True)) (an existing table), replace (REPLACE
 * TABLE AS SELECT, an existing table), createOrReplace; partitionedBy column names,
 * tableProperty, option; overwrite(condition) and overwritePartitions are UNIMPLEMENTED. */
#include "server/service/connect_write.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/connect_plan.h"
#include "store/deltaops/dop.h"

typedef struct src_ctx {
  qry_op *op;
} src_ctx;

static int src_next(void *ctx, const arw_batch **out) {
  src_ctx *c = ctx;
  return qry_next(c->op, out);
}

/* The source's schema as Delta's JSON struct type (every column nullable, as Spark's). */
static int schema_json(char **out, const arw_schema *s) {
  Spark__Connect__DataType *dt = NULL;
  char *ddl = NULL;
  int rc = connect_plan_datatype(&dt, s);
  if (!rc) rc = connect_datatype_ddl(&ddl, dt);
  if (!rc) rc = dop_ddl_schema_json(out, ddl);
  if (dt) protobuf_c_message_free_unpacked(&dt->base, NULL);
  free(ddl);
  return rc;
}

int connect_write_run(dml_write_result *out, const char *loc, qry_op *src, dml_write_opts *o) {
  src_ctx c = {src};
  char *json = NULL;
  dl_table *t = NULL;
  int rc = schema_json(&json, qry_schema(src));
  o->source_schema = qry_schema(src);
  o->next = src_next;
  o->ctx = &c;
  o->schema_string = json;
  if (!rc) rc = dl_table_open(&t, loc);
  if (!rc) rc = dml_write(out, t, o);
  o->schema_string = NULL;
  dl_table_free(t);
  free(json);
  return rc;
}

/* The options of either message, as (key, value) pairs (borrowed). */
typedef struct wopts {
  size_t n;
  const char *const *k, *const *v;
} wopts;

static const char *opt(const wopts *w, const char *key) {
  for (size_t i = 0; i < w->n; i++)
    if (w->k[i] && !strcasecmp(w->k[i], key)) return w->v[i];
  return NULL;
}

static bool opt_true(const wopts *w, const char *key, bool dflt) {
  const char *v = opt(w, key);
  return v ? !strcasecmp(v, "true") : dflt;
}

/* The options every write takes (mergeSchema, overwriteSchema, dataChange, replaceWhere). */
static void common_options(dml_write_opts *o, const wopts *w) {
  o->merge_schema = opt_true(w, "mergeSchema", o->merge_schema);
  o->overwrite_schema = opt_true(w, "overwriteSchema", false);
  o->no_data_change = !opt_true(w, "dataChange", true);
  o->replace_where = opt(w, "replaceWhere");
}

#define WOPTS_OF(msg, out)                                                                   \
  do {                                                                                       \
    (out)->n = (msg)->n_options;                                                             \
    const char **k_ = calloc((msg)->n_options + 1, sizeof *k_), **v_ = calloc((msg)->n_options + 1, sizeof *v_); \
    for (size_t i_ = 0; k_ && v_ && i_ < (msg)->n_options; i_++)                              \
      k_[i_] = (msg)->options[i_]->key, v_[i_] = (msg)->options[i_]->value;                    \
    if (!k_ || !v_) (out)->n = 0;                                                            \
    (out)->k = k_, (out)->v = v_;                                                            \
  } while (0)

static void wopts_free(wopts *w) {
  free((void *)w->k);
  free((void *)w->v);
}

/* Is there a Delta table at loc? */
static bool table_exists(const char *loc) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  bool exists = !dl_table_open(&t, loc) && !dl_snapshot_open(&s, t, NULL);
  dd_err_clear();
  dl_snapshot_free(s);
  dl_table_free(t);
  return exists;
}

static int not_found(const char *name) {
  return dd_err_set(DD_ENOTFOUND, "[TABLE_OR_VIEW_NOT_FOUND] The table or view %s cannot be found. SQLSTATE: 42P01", name);
}

static int already_exists(const char *name) {
  return dd_err_set(DD_EEXISTS, "[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view %s because it already "
                    "exists. SQLSTATE: 42P07", name);
}

static int mode_of(dml_write_mode *out, Spark__Connect__WriteOperation__SaveMode m) {
  switch (m) {
    case SPARK__CONNECT__WRITE_OPERATION__SAVE_MODE__SAVE_MODE_APPEND: *out = DML_WRITE_APPEND; return 0;
    case SPARK__CONNECT__WRITE_OPERATION__SAVE_MODE__SAVE_MODE_OVERWRITE: *out = DML_WRITE_OVERWRITE; return 0;
    case SPARK__CONNECT__WRITE_OPERATION__SAVE_MODE__SAVE_MODE_IGNORE: *out = DML_WRITE_IGNORE; return 0;
    case SPARK__CONNECT__WRITE_OPERATION__SAVE_MODE__SAVE_MODE_UNSPECIFIED: /* Spark's default */
    case SPARK__CONNECT__WRITE_OPERATION__SAVE_MODE__SAVE_MODE_ERROR_IF_EXISTS: *out = DML_WRITE_ERROR; return 0;
    default: return dd_err_set(DD_EINVAL, "write: unknown save mode %d", (int)m);
  }
}

/* What deltad does not write, named. */
static int refuse_unsupported(const Spark__Connect__WriteOperation *w) {
  if (w->_source_case && w->source && *w->source && strcasecmp(w->source, "delta"))
    return dd_err_set(DD_EUNSUPPORTED, "write: deltad writes Delta tables only (format \"delta\"), not \"%s\"", w->source);
  if (w->bucket_by || w->n_sort_column_names)
    return dd_err_set(DD_EUNSUPPORTED, "write: bucketBy and sortBy are not supported for Delta tables");
  if (w->n_clustering_columns)
    return dd_err_set(DD_EUNSUPPORTED, "write: clusterBy (liquid clustering) is not supported by deltad");
  if (!w->input) return dd_err_set(DD_EINVAL, "write: an input relation is required");
  return 0;
}

int connect_write_operation(const Spark__Connect__WriteOperation *w, const connect_exec_opts *opts) {
  dml_write_opts o = DML_WRITE_OPTS_INIT;
  wopts wo;
  char *loc = NULL;
  qry_op *src = NULL;
  WOPTS_OF(w, &wo);
  int rc = refuse_unsupported(w);
  if (!rc) rc = mode_of(&o.mode, w->mode);
  bool named = w->save_type_case == SPARK__CONNECT__WRITE_OPERATION__SAVE_TYPE_TABLE;
  /* insertInto: by position, into an existing table */
  o.by_name = !(named && w->table->save_method ==
                             SPARK__CONNECT__WRITE_OPERATION__SAVE_TABLE__TABLE_SAVE_METHOD__TABLE_SAVE_METHOD_INSERT_INTO);
  if (!o.by_name && o.mode != DML_WRITE_OVERWRITE) o.mode = DML_WRITE_APPEND;
  const char *path = w->save_type_case == SPARK__CONNECT__WRITE_OPERATION__SAVE_TYPE_PATH ? w->path
                     : named ? w->table->table_name : opt(&wo, "path");
  if (!rc && (!path || !*path)) rc = dd_err_set(DD_EINVAL, "write: a path or a table name is required");
  if (!rc) rc = connect_exec_name_location(&loc, path, opts);
  common_options(&o, &wo);
  o.has_partition_by = w->n_partitioning_columns > 0;
  o.partition_by = (const char *const *)w->partitioning_columns;
  o.num_partition_by = w->n_partitioning_columns;
  bool exists = !rc && table_exists(loc);
  /* saveAsTable records CREATE TABLE AS SELECT when it creates the table */
  o.ctas = named && o.by_name && !exists;
  if (!rc && !o.by_name && !exists) rc = not_found(path);
  if (!rc) rc = connect_plan_build(&src, w->input, opts);
  dml_write_result res;
  if (!rc) rc = connect_write_run(&res, loc, src, &o);
  if (rc == DD_EEXISTS && named) rc = already_exists(path);
  qry_free(src);
  free(loc);
  wopts_free(&wo);
  return rc;
}

/* ---- DataFrameWriterV2 ---- */

/* partitionedBy(col, ...): plain column references only (no transforms). */
static int v2_partitions(char ***out, const Spark__Connect__WriteOperationV2 *w) {
  *out = calloc(w->n_partitioning_columns + 1, sizeof **out);
  if (!*out) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < w->n_partitioning_columns; i++) {
    const Spark__Connect__Expression *e = w->partitioning_columns[i];
    if (!e || e->expr_type_case != SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE ||
        !e->unresolved_attribute->unparsed_identifier || strchr(e->unresolved_attribute->unparsed_identifier, '.'))
      return dd_err_set(DD_EUNSUPPORTED, "writeTo: partitionedBy takes column names only (no transforms) in deltad");
    (*out)[i] = e->unresolved_attribute->unparsed_identifier;
  }
  return 0;
}

/* overwrite(condition) with a condition other than the literal true replaces rows by a
 * predicate (replaceWhere), which deltad does not do. */
static bool literal_true(const Spark__Connect__Expression *e) {
  return e && e->expr_type_case == SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL && e->literal &&
         e->literal->literal_type_case == SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_BOOLEAN && e->literal->boolean;
}

static int v2_mode(dml_write_opts *o, const Spark__Connect__WriteOperationV2 *w, bool exists) {
  switch (w->mode) {
    case SPARK__CONNECT__WRITE_OPERATION_V2__MODE__MODE_CREATE:
      if (exists) return already_exists(w->table_name);
      o->mode = DML_WRITE_ERROR, o->ctas = true;
      return 0;
    case SPARK__CONNECT__WRITE_OPERATION_V2__MODE__MODE_APPEND:
      o->mode = DML_WRITE_APPEND;
      return exists ? 0 : not_found(w->table_name);
    case SPARK__CONNECT__WRITE_OPERATION_V2__MODE__MODE_OVERWRITE:
      if (!literal_true(w->overwrite_condition))
        return dd_err_set(DD_EUNSUPPORTED, "writeTo: overwrite(condition) is not supported by deltad (only lit(True))");
      o->mode = DML_WRITE_OVERWRITE;
      return exists ? 0 : not_found(w->table_name);
    case SPARK__CONNECT__WRITE_OPERATION_V2__MODE__MODE_REPLACE:
      if (!exists)
        return dd_err_set(DD_ENOTFOUND, "[TABLE_OR_VIEW_NOT_FOUND] Table %s cannot be replaced as it does not exist. "
                          "SQLSTATE: 42P01", w->table_name);
      o->replace = o->ctas = true, o->operation = "REPLACE TABLE AS SELECT";
      return 0;
    case SPARK__CONNECT__WRITE_OPERATION_V2__MODE__MODE_CREATE_OR_REPLACE:
      o->replace = o->ctas = true;
      return 0;
    case SPARK__CONNECT__WRITE_OPERATION_V2__MODE__MODE_OVERWRITE_PARTITIONS:
      return dd_err_set(DD_EUNSUPPORTED, "writeTo: overwritePartitions (dynamic partition overwrite) is not supported by deltad");
    default: return dd_err_set(DD_EINVAL, "writeTo: a mode is required");
  }
}

int connect_write_operation_v2(const Spark__Connect__WriteOperationV2 *w, const connect_exec_opts *opts) {
  dml_write_opts o = DML_WRITE_OPTS_INIT;
  o.by_name = true;
  o.merge_schema = w->with_schema_evolution;
  wopts wo;
  char *loc = NULL, **parts = NULL, *conf = NULL;
  qry_op *src = NULL;
  WOPTS_OF(w, &wo);
  int rc = 0;
  if (w->_provider_case && w->provider && *w->provider && strcasecmp(w->provider, "delta"))
    rc = dd_err_set(DD_EUNSUPPORTED, "writeTo: deltad writes Delta tables only (using(\"delta\")), not \"%s\"", w->provider);
  if (!rc && w->n_clustering_columns)
    rc = dd_err_set(DD_EUNSUPPORTED, "writeTo: clusterBy (liquid clustering) is not supported by deltad");
  if (!rc && (!w->input || !w->table_name || !*w->table_name))
    rc = dd_err_set(DD_EINVAL, "writeTo: an input relation and a table name are required");
  if (!rc) rc = connect_exec_name_location(&loc, w->table_name, opts);
  if (!rc) rc = v2_mode(&o, w, table_exists(loc));
  if (!rc) rc = v2_partitions(&parts, w);
  o.has_partition_by = w->n_partitioning_columns > 0 || o.replace || o.ctas;
  o.partition_by = (const char *const *)parts;
  o.num_partition_by = w->n_partitioning_columns;
  common_options(&o, &wo);
  const char **k = calloc(w->n_table_properties + 1, sizeof *k), **v = calloc(w->n_table_properties + 1, sizeof *v);
  if (!rc && (!k || !v)) rc = dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < w->n_table_properties; i++)
    k[i] = w->table_properties[i]->key, v[i] = w->table_properties[i]->value;
  if (!rc && w->n_table_properties) rc = dl_kv_pack(&conf, k, v, w->n_table_properties);
  o.configuration = conf;
  if (!rc) rc = connect_plan_build(&src, w->input, opts);
  dml_write_result res;
  if (!rc) rc = connect_write_run(&res, loc, src, &o);
  qry_free(src);
  free(k), free(v), free(conf), free(parts), free(loc);
  wopts_free(&wo);
  return rc;
}
