/* connect_write.c: the Spark Connect WriteOperation command on store/dml's dml_write (see
 * connect_write.h). The target: .save(path) a path, .saveAsTable(name) / .insertInto(name)
 * a name resolved as other Spark Connect names are (delta.`/path`, a path, or a catalog
 * table registered with a location; an unregistered catalog name is NOT_FOUND: deltad's
 * catalog does not create tables for a write). Options (case-insensitive keys): mergeSchema,
 * overwriteSchema, dataChange, replaceWhere (refused), userMetadata is ignored. Formats
 * other than delta, bucketBy, sortBy and clusterBy are UNIMPLEMENTED. */
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

static bool opt_true(const Spark__Connect__WriteOperation *w, const char *key, bool dflt) {
  for (size_t i = 0; i < w->n_options; i++)
    if (w->options[i]->key && !strcasecmp(w->options[i]->key, key))
      return w->options[i]->value && !strcasecmp(w->options[i]->value, "true");
  return dflt;
}

static const char *opt(const Spark__Connect__WriteOperation *w, const char *key) {
  for (size_t i = 0; i < w->n_options; i++)
    if (w->options[i]->key && !strcasecmp(w->options[i]->key, key)) return w->options[i]->value;
  return NULL;
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
  char *loc = NULL;
  qry_op *src = NULL;
  int rc = refuse_unsupported(w);
  if (!rc) rc = mode_of(&o.mode, w->mode);
  bool named = w->save_type_case == SPARK__CONNECT__WRITE_OPERATION__SAVE_TYPE_TABLE;
  if (!rc && named && w->table->save_method ==
                          SPARK__CONNECT__WRITE_OPERATION__SAVE_TABLE__TABLE_SAVE_METHOD__TABLE_SAVE_METHOD_INSERT_INTO) {
    o.by_name = false; /* insertInto: by position, into an existing table */
    if (o.mode != DML_WRITE_OVERWRITE) o.mode = DML_WRITE_APPEND;
  } else {
    o.by_name = true;
  }
  const char *path = w->save_type_case == SPARK__CONNECT__WRITE_OPERATION__SAVE_TYPE_PATH ? w->path
                     : named ? w->table->table_name : opt(w, "path");
  if (!rc && (!path || !*path)) rc = dd_err_set(DD_EINVAL, "write: a path or a table name is required");
  if (!rc) rc = connect_exec_name_location(&loc, path, opts);
  o.ctas = named && o.by_name;
  o.merge_schema = opt_true(w, "mergeSchema", false);
  o.overwrite_schema = opt_true(w, "overwriteSchema", false);
  o.no_data_change = !opt_true(w, "dataChange", true);
  o.replace_where = opt(w, "replaceWhere");
  o.has_partition_by = w->n_partitioning_columns > 0;
  o.partition_by = (const char *const *)w->partitioning_columns;
  o.num_partition_by = w->n_partitioning_columns;
  if (!rc) rc = connect_plan_build(&src, w->input, opts);
  dml_write_result res;
  if (!rc) {
    /* saveAsTable records CREATE TABLE AS SELECT only when it creates the table;
     * insertInto needs one */
    dl_table *t = NULL;
    dl_snapshot *s = NULL;
    bool exists = !dl_table_open(&t, loc) && !dl_snapshot_open(&s, t, NULL);
    dd_err_clear();
    dl_snapshot_free(s);
    dl_table_free(t);
    if (exists) o.ctas = false;
    if (!o.by_name && !exists)
      rc = dd_err_set(DD_ENOTFOUND, "[TABLE_OR_VIEW_NOT_FOUND] The table or view %s cannot be found. SQLSTATE: 42P01", path);
  }
  if (!rc) {
    rc = connect_write_run(&res, loc, src, &o);
  }
  if (rc == DD_EEXISTS && named)
    rc = dd_err_set(DD_EEXISTS, "[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view %s because it already "
                    "exists. SQLSTATE: 42P07", path);
  qry_free(src);
  free(loc);
  return rc;
}
