/* connect_exec.c: delta.connect messages to store/deltaops calls (see connect_exec.h).
 * Validates what the library cannot (missing table, empty feature name, unsupported
 * relations) and turns spark.connect.DataType into DDL text for CREATE and CONVERT. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/connect_exec.h"
#include "server/service/connect_dml.h"
#include "server/service/connect_merge.h"
#include "server/service/connect_optimize.h"
#include "store/catalog/cat_store.h"
#include "store/objstore/os.h"

/* ---- tables ---- */

/* The catalog of the command being executed on this thread: set for the duration of
 * connect_exec_command / connect_exec_relation from their options (so the ten places that
 * name a table need not carry it), NULL otherwise. */
static _Thread_local struct cat_store *exec__store;

/* Resolves a table name or path to its location and, in the server (a catalog is set),
 * confines it: the location must lie under a registered storage location and away from the
 * data directory (cat_location_confine). The CLI's --local mode has no catalog: there only
 * the library's own rules apply. */
static int resolve_confined(char **out, const char *name, bool allow_parquet, const char *what) {
  int rc = dop_resolve_table(out, name, allow_parquet);
  if (!rc && exec__store) rc = cat_location_confine(exec__store, NULL, what, *out);
  if (rc) free(*out), *out = NULL;
  return rc;
}

/* Where paths read from a table's log may point beyond the table itself (a shallow
 * clone's files live in its source): in the server, anything under a local storage
 * location and away from the data directory (cat_roots_cover); with --local (no catalog),
 * nowhere but the table. */
typedef struct {
  char **roots;
  size_t n;
} exec__roots;

static int exec__roots_load(exec__roots *r) {
  r->roots = NULL;
  r->n = 0;
  return exec__store ? cat_location_local_roots(exec__store, &r->roots, &r->n) : 0;
}

static void exec__roots_free(exec__roots *r) { cat_roots_free(r->roots, r->n); }

static bool exec__allow(void *ctx, const char *abs_path) {
  const exec__roots *r = ctx;
  if (exec__store && !os_is_local(abs_path)) { /* an object-store URL: under a location */
    bool ok = cat_location_confine(exec__store, NULL, "file", abs_path) == 0;
    return dd_err_clear(), ok;
  }
  return exec__store && cat_roots_cover(exec__store, r->roots, r->n, abs_path);
}

static dop_roots exec__dop_roots(exec__roots *r) {
  dop_roots d = DOP_ROOTS_INIT;
  d.allow = exec__allow;
  d.ctx = r;
  return d;
}

static int exec__restore(dop_result **out, const char *loc, int64_t version, const char *ts) {
  exec__roots r;
  int rc = exec__roots_load(&r);
  dop_roots d = exec__dop_roots(&r);
  if (!rc) rc = dop_restore_in(out, loc, version, ts, exec__store ? &d : NULL);
  exec__roots_free(&r);
  return rc;
}

static int exec__generate(dop_result **out, const char *loc, const char *mode) {
  exec__roots r;
  int rc = exec__roots_load(&r);
  dop_roots d = exec__dop_roots(&r);
  if (!rc) rc = dop_generate_in(out, loc, mode, exec__store ? &d : NULL);
  exec__roots_free(&r);
  return rc;
}

/* A Delta table record of the catalog named `name` -> its location; DD_ENOTFOUND (for the
 * Lance records to answer) when there is none. */
static int table_from_delta_record(char **out, const char *name) {
  cat_dtable *t = NULL;
  int rc = cat_dtable_get(exec__store, &t, name);
  if (!rc) rc = resolve_confined(out, t->storage_location, false, "table location");
  if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

/* `catalog.schema.table` (three plain parts) -> the location registered in the catalog: a
 * Delta table record first, then a Lance one (their names never clash). */
static int table_from_catalog(char **out, const char *name) {
  char *copy = strdup(name), *parts[3] = {NULL, NULL, NULL};
  if (!copy) return dd_err_set(DD_ENOMEM, "out of memory");
  char *save = NULL, *p = strtok_r(copy, ".", &save);
  size_t n = 0;
  for (; p && n < 3; p = strtok_r(NULL, ".", &save)) parts[n++] = p;
  int rc;
  if (n != 3 || p) {
    rc = resolve_confined(out, name, false, "table"); /* not a 3-part name: the library's answer */
  } else if ((rc = table_from_delta_record(out, name)) != DD_ENOTFOUND) {
    /* a Delta table of the catalog (TablesService), found or failed */
  } else {
    cat_lance_table *tbl = NULL;
    rc = cat_lance_table_get(exec__store, &tbl, (const char *const *)parts, 3);
    if (rc == DD_ENOTFOUND)
      rc = dd_err_set(DD_ENOTFOUND, "table '%s' is not registered in the catalog", name);
    else if (!rc) rc = resolve_confined(out, tbl->location, false, "table location");
    if (tbl) protobuf_c_message_free_unpacked(&tbl->base, NULL);
  }
  free(copy);
  return rc;
}

static int table_location(char **out, const Delta__Connect__DeltaTable *t) {
  if (!t) return dd_err_set(DD_EINVAL, "table: required");
  switch (t->access_type_case) {
    case DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH:
      if (!t->path || !t->path->path || !*t->path->path) return dd_err_set(DD_EINVAL, "table.path: required");
      return resolve_confined(out, t->path->path, false, "table");
    case DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_TABLE_OR_VIEW_NAME:
      if (exec__store && t->table_or_view_name && !strchr(t->table_or_view_name, '`') &&
          t->table_or_view_name[0] != '/')
        return table_from_catalog(out, t->table_or_view_name);
      return resolve_confined(out, t->table_or_view_name, false, "table");
    default: return dd_err_set(DD_EINVAL, "table: a path or a table name is required");
  }
}

/* A per-request setting from DeltaTable.path.hadoop_conf, or NULL. */
static const char *table_conf(const Delta__Connect__DeltaTable *t, const char *key) {
  if (!t || t->access_type_case != DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH || !t->path) return NULL;
  for (size_t i = 0; i < t->path->n_hadoop_conf; i++)
    if (!strcmp(t->path->hadoop_conf[i]->key, key)) return t->path->hadoop_conf[i]->value;
  return NULL;
}

/* ---- tables for the query engine (connect_plan.c, connect_sql.c) ---- */

int connect_exec_table_location(char **out, const Delta__Connect__DeltaTable *t, const connect_exec_opts *opts) {
  *out = NULL;
  /* Called from inside a relation's execution too: put back the store that was set. */
  struct cat_store *prev = exec__store;
  exec__store = opts ? opts->store : NULL;
  int rc = table_location(out, t);
  exec__store = prev;
  return rc;
}

int connect_exec_name_location(char **out, const char *name, const connect_exec_opts *opts) {
  Delta__Connect__DeltaTable t = DELTA__CONNECT__DELTA_TABLE__INIT;
  Delta__Connect__DeltaTable__Path p = DELTA__CONNECT__DELTA_TABLE__PATH__INIT;
  if (name && (name[0] == '/' || !strncmp(name, "file:", 5))) {
    p.path = (char *)name;
    t.access_type_case = DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH;
    t.path = &p;
  } else {
    t.access_type_case = DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_TABLE_OR_VIEW_NAME;
    t.table_or_view_name = (char *)(name ? name : "");
  }
  return connect_exec_table_location(out, &t, opts);
}

int connect_exec_local_roots(char ***roots, size_t *n, const connect_exec_opts *opts) {
  *roots = NULL, *n = 0;
  return opts && opts->store ? cat_location_local_roots(opts->store, roots, n) : 0;
}

/* ---- data types ---- */

static int ddl_append(char **buf, size_t *len, FILE *f, const Spark__Connect__DataType *t);

/* A name as a DDL quoted identifier: `name`, a backtick inside doubled (Spark's rule). */
static void ddl_quoted(FILE *f, const char *name) {
  fputc('`', f);
  for (const char *c = name ? name : ""; *c; c++) {
    if (*c == '`') fputc('`', f);
    fputc(*c, f);
  }
  fputc('`', f);
}

static int ddl_struct(FILE *f, char **buf, size_t *len, const Spark__Connect__DataType__Struct *s, bool colon) {
  for (size_t i = 0; i < s->n_fields; i++) {
    if (i) fputs(", ", f);
    ddl_quoted(f, s->fields[i]->name);
    fputs(colon ? ":" : " ", f);
    int rc = ddl_append(buf, len, f, s->fields[i]->data_type);
    if (rc) return rc;
    if (!colon && !s->fields[i]->nullable) fputs(" NOT NULL", f);
  }
  return 0;
}

static int ddl_append(char **buf, size_t *len, FILE *f, const Spark__Connect__DataType *t) {
  if (!t) return dd_err_set(DD_EINVAL, "data_type: required");
  int rc = 0;
  switch (t->kind_case) {
    case SPARK__CONNECT__DATA_TYPE__KIND_BINARY: fputs("binary", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_BOOLEAN: fputs("boolean", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_BYTE: fputs("tinyint", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_SHORT: fputs("smallint", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_INTEGER: fputs("int", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_LONG: fputs("bigint", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_FLOAT: fputs("float", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_DOUBLE: fputs("double", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_STRING:
    case SPARK__CONNECT__DATA_TYPE__KIND_CHAR:
    case SPARK__CONNECT__DATA_TYPE__KIND_VAR_CHAR: fputs("string", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_DATE: fputs("date", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_TIMESTAMP: fputs("timestamp", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_TIMESTAMP_NTZ: fputs("timestamp_ntz", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_VARIANT: fputs("variant", f); break;
    case SPARK__CONNECT__DATA_TYPE__KIND_DECIMAL: {
      const Spark__Connect__DataType__Decimal *d = t->decimal;
      fprintf(f, "decimal(%d,%d)", d->_precision_case ? d->precision : 10, d->_scale_case ? d->scale : 0);
      break;
    }
    case SPARK__CONNECT__DATA_TYPE__KIND_ARRAY:
      fputs("array<", f);
      rc = ddl_append(buf, len, f, t->array->element_type);
      fputs(">", f);
      break;
    case SPARK__CONNECT__DATA_TYPE__KIND_MAP:
      fputs("map<", f);
      rc = ddl_append(buf, len, f, t->map->key_type);
      fputs(",", f);
      if (!rc) rc = ddl_append(buf, len, f, t->map->value_type);
      fputs(">", f);
      break;
    case SPARK__CONNECT__DATA_TYPE__KIND_STRUCT:
      fputs("struct<", f);
      rc = ddl_struct(f, buf, len, t->struct_, true);
      fputs(">", f);
      break;
    case SPARK__CONNECT__DATA_TYPE__KIND_UNPARSED:
      fputs(t->unparsed->data_type_string, f);
      break;
    default: return dd_err_set(DD_EINVAL, "data_type: kind %d is not a Delta column type", (int)t->kind_case);
  }
  return rc;
}

int connect_datatype_ddl(char **out, const Spark__Connect__DataType *t) {
  size_t len = 0;
  *out = NULL;
  FILE *f = open_memstream(out, &len);
  if (!f) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = ddl_append(out, &len, f, t);
  fclose(f);
  if (rc) free(*out), *out = NULL;
  return rc;
}

/* A struct type as a DDL column list ("a INT, b STRING"). */
static int struct_columns_ddl(char **out, const Spark__Connect__DataType *t) {
  if (!t || t->kind_case != SPARK__CONNECT__DATA_TYPE__KIND_STRUCT)
    return dd_err_set(DD_EINVAL, "partition_schema_struct: must be a struct type");
  size_t len = 0;
  FILE *f = open_memstream(out, &len);
  if (!f) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = ddl_struct(f, out, &len, t->struct_, false);
  fclose(f);
  if (rc) free(*out), *out = NULL;
  return rc;
}

/* ---- commands ---- */

static int kv_arrays(const char ***keys, const char ***vals, size_t n, void **entries) {
  *keys = calloc(n + 1, sizeof **keys);
  *vals = calloc(n + 1, sizeof **vals);
  if (!*keys || !*vals) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) { /* every map entry type is {base, key, value} */
    Delta__Connect__CloneTable__PropertiesEntry *e = entries[i];
    (*keys)[i] = e->key;
    (*vals)[i] = e->value;
  }
  return 0;
}

static int run_clone(dop_result **out, const Delta__Connect__CloneTable *c) {
  char *src = NULL, *dst = NULL;
  const char **k = NULL, **v = NULL;
  dop_clone_opts o = DOP_CLONE_OPTS_INIT;
  exec__roots roots;
  int rc = exec__roots_load(&roots);
  dop_roots allowed = exec__dop_roots(&roots);
  if (exec__store) o.allowed_roots = &allowed;
  if (!rc) rc = table_location(&src, c->table);
  if (!rc) rc = resolve_confined(&dst, c->target, false, "clone target");
  if (!rc) rc = kv_arrays(&k, &v, c->n_properties, (void **)c->properties);
  if (!rc) {
    o.target = dst;
    o.shallow = c->is_shallow;
    o.replace = c->replace;
    if (c->version_or_timestamp_case == DELTA__CONNECT__CLONE_TABLE__VERSION_OR_TIMESTAMP_VERSION) {
      if (c->version < 0) rc = dd_err_set(DD_EINVAL, "version: must be >= 0");
      o.version = c->version;
    } else if (c->version_or_timestamp_case == DELTA__CONNECT__CLONE_TABLE__VERSION_OR_TIMESTAMP_TIMESTAMP) {
      o.timestamp = c->timestamp;
    }
    o.num_properties = c->n_properties;
    o.property_keys = k;
    o.property_values = v;
  }
  if (!rc) rc = dop_clone(out, src, &o);
  exec__roots_free(&roots);
  free(k);
  free(v);
  free(src);
  free(dst);
  return rc;
}

static int run_create(dop_result **out, const Delta__Connect__CreateDeltaTable *c) {
  dop_create_opts o = {.mode = (dop_create_mode)c->mode};
  char *loc = NULL;
  const char **k = NULL, **v = NULL;
  dop_column *cols = calloc(c->n_columns + 1, sizeof *cols);
  char **types = calloc(c->n_columns + 1, sizeof *types);
  int rc = cols && types ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc && c->mode == DELTA__CONNECT__CREATE_DELTA_TABLE__MODE__MODE_UNSPECIFIED)
    rc = dd_err_set(DD_EINVAL, "mode: required");
  if (!rc && c->_location_case) rc = resolve_confined(&loc, c->location, false, "location");
  else if (!rc && c->_table_name_case) rc = resolve_confined(&loc, c->table_name, false, "table");
  else if (!rc) rc = dd_err_set(DD_EINVAL, "create: a location or table name is required");
  for (size_t i = 0; !rc && i < c->n_columns; i++) {
    const Delta__Connect__CreateDeltaTable__Column *col = c->columns[i];
    rc = connect_datatype_ddl(&types[i], col->data_type);
    cols[i] = (dop_column){.name = col->name, .type = types[i], .nullable = col->nullable,
                           .comment = col->_comment_case ? col->comment : NULL,
                           .generated_as = col->_generated_always_as_case ? col->generated_always_as : NULL};
    if (col->_identity_info_case) {
      cols[i].identity = true;
      cols[i].identity_start = col->identity_info->start;
      cols[i].identity_step = col->identity_info->step;
      cols[i].identity_allow_explicit_insert = col->identity_info->allow_explicit_insert;
    }
  }
  if (!rc) rc = kv_arrays(&k, &v, c->n_properties, (void **)c->properties);
  if (!rc) {
    o.location = loc;
    o.name = c->_table_name_case && !strchr(c->table_name, '`') ? c->table_name : NULL;
    o.comment = c->_comment_case ? c->comment : NULL;
    o.num_columns = c->n_columns;
    o.columns = cols;
    o.num_partition_columns = c->n_partitioning_columns;
    o.partition_columns = (const char *const *)c->partitioning_columns;
    o.num_clustering_columns = c->n_clustering_columns;
    o.clustering_columns = (const char *const *)c->clustering_columns;
    o.num_properties = c->n_properties;
    o.property_keys = k;
    o.property_values = v;
    rc = dop_create(out, &o);
  }
  for (size_t i = 0; types && i < c->n_columns; i++) free(types[i]);
  free(types);
  free(cols);
  free(k);
  free(v);
  free(loc);
  return rc;
}

static int exec__command(dop_result **out, const Delta__Connect__DeltaCommand *cmd,
                         const connect_exec_opts *opts);
static int exec__relation(dop_result **out, const Delta__Connect__DeltaRelation *rel,
                          const connect_exec_opts *opts);

int connect_exec_command(dop_result **out, const Delta__Connect__DeltaCommand *cmd,
                         const connect_exec_opts *opts) {
  exec__store = opts ? opts->store : NULL;
  int rc = exec__command(out, cmd, opts);
  exec__store = NULL;
  return rc;
}

int connect_exec_relation(dop_result **out, const Delta__Connect__DeltaRelation *rel,
                          const connect_exec_opts *opts) {
  exec__store = opts ? opts->store : NULL;
  int rc = exec__relation(out, rel, opts);
  exec__store = NULL;
  return rc;
}

static int exec__command(dop_result **out, const Delta__Connect__DeltaCommand *cmd,
                         const connect_exec_opts *opts) {
  connect_exec_opts eo = CONNECT_EXEC_OPTS_INIT;
  if (opts) eo = *opts;
  *out = NULL;
  char *loc = NULL;
  int rc = 0;
  switch (cmd->command_type_case) {
    case DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_CLONE_TABLE: return run_clone(out, cmd->clone_table);
    case DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_CREATE_DELTA_TABLE: return run_create(out, cmd->create_delta_table);
    case DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_VACUUM_TABLE: {
      const Delta__Connect__VacuumTable *v = cmd->vacuum_table;
      dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
      o.has_retention = v->_retention_hours_case != 0;
      o.retention_hours = v->retention_hours;
      /* bounded so that hours -> milliseconds cannot overflow (NaN fails the test too) */
      if (o.has_retention &&
          !(v->retention_hours >= 0 && v->retention_hours <= CONNECT_MAX_RETENTION_HOURS)) {
        rc = dd_err_set(DD_EINVAL, "retention_hours: must be between 0 and %d",
                        CONNECT_MAX_RETENTION_HOURS);
        break;
      }
      o.retention_check = eo.retention_check;
      const char *conf = table_conf(v->table, CONNECT_RETENTION_CHECK_CONF);
      if (conf && !strcasecmp(conf, "false")) o.retention_check = false;
      conf = table_conf(v->table, CONNECT_DRY_RUN_CONF);
      o.dry_run = conf && !strcasecmp(conf, "true");
      if (!(rc = table_location(&loc, v->table))) rc = dop_vacuum(out, loc, &o, NULL);
      break;
    }
    case DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_UPGRADE_TABLE_PROTOCOL: {
      const Delta__Connect__UpgradeTableProtocol *u = cmd->upgrade_table_protocol;
      if (!(rc = table_location(&loc, u->table))) rc = dop_upgrade_protocol(out, loc, u->reader_version, u->writer_version);
      break;
    }
    case DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_GENERATE:
      if (!(rc = table_location(&loc, cmd->generate->table)))
        rc = exec__generate(out, loc, cmd->generate->mode);
      break;
    case DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_ADD_FEATURE_SUPPORT:
      if (!(rc = table_location(&loc, cmd->add_feature_support->table)))
        rc = dop_add_feature(out, loc, cmd->add_feature_support->feature_name);
      break;
    case DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_DROP_FEATURE_SUPPORT: {
      const Delta__Connect__DropFeatureSupport *d = cmd->drop_feature_support;
      if (!(rc = table_location(&loc, d->table)))
        rc = dop_drop_feature(out, loc, d->feature_name, d->_truncate_history_case && d->truncate_history);
      break;
    }
    default: rc = dd_err_set(DD_EINVAL, "DeltaCommand: no command set");
  }
  free(loc);
  return rc;
}

/* ---- relations ---- */

bool connect_relation_mutates(const Delta__Connect__DeltaRelation *rel) {
  return rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_RESTORE_TABLE ||
         rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_CONVERT_TO_DELTA ||
         rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_OPTIMIZE_TABLE ||
         rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DELETE_FROM_TABLE ||
         rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_UPDATE_TABLE ||
         rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_MERGE_INTO_TABLE;
}

static int unsupported(const char *what) {
  return dd_err_set(DD_EUNSUPPORTED, "%s is not supported by deltad (it needs a query engine); "
                    "supported relations: DescribeHistory, DescribeDetail, ConvertToDelta, "
                    "RestoreTable, IsDeltaTable, OptimizeTable, DeleteFromTable, UpdateTable, MergeIntoTable", what);
}

static int exec__relation(dop_result **out, const Delta__Connect__DeltaRelation *rel,
                          const connect_exec_opts *opts) {
  (void)opts;
  *out = NULL;
  char *loc = NULL, *ddl = NULL;
  int rc = 0;
  switch (rel->relation_type_case) {
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DESCRIBE_HISTORY:
      if (!(rc = table_location(&loc, rel->describe_history->table))) rc = dop_history(out, loc, 0);
      break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DESCRIBE_DETAIL:
      if (!(rc = table_location(&loc, rel->describe_detail->table))) rc = dop_detail(out, loc);
      break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_IS_DELTA_TABLE:
      if (!(rc = resolve_confined(&loc, rel->is_delta_table->path, false, "path")))
        rc = dop_is_delta(out, loc);
      break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_RESTORE_TABLE: {
      const Delta__Connect__RestoreTable *r = rel->restore_table;
      if (r->version_or_timestamp_case == DELTA__CONNECT__RESTORE_TABLE__VERSION_OR_TIMESTAMP__NOT_SET)
        rc = dd_err_set(DD_EINVAL, "restore: a version or a timestamp is required");
      else if (r->version_or_timestamp_case == DELTA__CONNECT__RESTORE_TABLE__VERSION_OR_TIMESTAMP_VERSION && r->version < 0)
        rc = dd_err_set(DD_EINVAL, "restore: version must be >= 0");
      if (!rc && !(rc = table_location(&loc, r->table)))
        rc = r->version_or_timestamp_case == DELTA__CONNECT__RESTORE_TABLE__VERSION_OR_TIMESTAMP_VERSION
                 ? exec__restore(out, loc, r->version, NULL)
                 : exec__restore(out, loc, -1, r->timestamp);
      break;
    }
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_CONVERT_TO_DELTA: {
      const Delta__Connect__ConvertToDelta *c = rel->convert_to_delta;
      const char *ps = NULL;
      if (c->partition_schema_case == DELTA__CONNECT__CONVERT_TO_DELTA__PARTITION_SCHEMA_PARTITION_SCHEMA_STRING)
        ps = c->partition_schema_string;
      else if (c->partition_schema_case == DELTA__CONNECT__CONVERT_TO_DELTA__PARTITION_SCHEMA_PARTITION_SCHEMA_STRUCT)
        rc = struct_columns_ddl(&ddl, c->partition_schema_struct), ps = ddl;
      if (!rc && exec__store) rc = resolve_confined(&loc, c->identifier, true, "table");
      if (!rc) rc = dop_convert(out, c->identifier, ps, NULL, NULL);
      break;
    }
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN: rc = unsupported("Scan"); break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_DELETE_FROM_TABLE: rc = connect_dml_delete(out, rel->delete_from_table, opts); break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_UPDATE_TABLE: rc = connect_dml_update(out, rel->update_table, opts); break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_MERGE_INTO_TABLE: rc = connect_merge_relation(out, rel->merge_into_table, opts); break;
    case DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_OPTIMIZE_TABLE:
      if (!(rc = table_location(&loc, rel->optimize_table->table))) rc = connect_optimize(out, loc, rel->optimize_table);
      break;
    default: rc = dd_err_set(DD_EINVAL, "DeltaRelation: no relation set");
  }
  free(ddl);
  free(loc);
  return rc;
}
