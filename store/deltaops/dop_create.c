/* dop_create.c: CREATE / CREATE IF NOT EXISTS / REPLACE / CREATE OR REPLACE of a Delta
 * table at a location. Columns come as DDL types; comments, generation expressions and
 * identity settings become field metadata (comment, delta.generationExpression,
 * delta.identity.*). The protocol is the smallest one the definition needs: legacy
 * (1,2), raised by generated columns (writer 4), identity columns (6), change data feed
 * (4), check constraints (3), column mapping (2,5); table features for deletion vectors,
 * clustering (+domainMetadata, with the delta.clustering domain), timestamp_ntz, variant,
 * in-commit timestamps, row tracking and delta.feature.<name>=supported properties;
 * delta.minReaderVersion/minWriterVersion properties raise it explicitly. A replace
 * removes every file of the old version, keeps the table id and never lowers the
 * protocol. Commit operations: CREATE TABLE, REPLACE TABLE, CREATE OR REPLACE TABLE. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/deltaops/dop_int.h"

static const dop_col NO_COLS[1] = {{"", "", true}};

/* ---- schema ---- */

static bool type_uses(json_t *t, const char *prim) {
  if (json_is_string(t)) return !strcmp(json_string_value(t), prim);
  if (!json_is_object(t)) return false;
  json_t *f, *e;
  size_t i;
  json_array_foreach(json_object_get(t, "fields"), i, f) if (type_uses(json_object_get(f, "type"), prim)) return true;
  if ((e = json_object_get(t, "elementType")) && type_uses(e, prim)) return true;
  if ((e = json_object_get(t, "keyType")) && type_uses(e, prim)) return true;
  return (e = json_object_get(t, "valueType")) && type_uses(e, prim);
}

static int build_schema(json_t **out, const dop_create_opts *o, dop__proto *p) {
  json_t *fields = json_array();
  int rc = 0;
  for (size_t i = 0; i < o->num_columns && !rc; i++) {
    const dop_column *c = &o->columns[i];
    json_t *t = NULL;
    if (!c->name || !*c->name) rc = dd_err_set(DD_EINVAL, "column %zu has no name", i);
    if (!rc) rc = dop__ddl_type(&t, c->type);
    if (rc) break;
    json_t *md = json_object();
    if (c->comment) json_object_set_new(md, "comment", json_string(c->comment));
    if (c->generated_as) {
      json_object_set_new(md, "delta.generationExpression", json_string(c->generated_as));
      rc = dop__proto_raise(p, p->reader, p->writer > 4 ? p->writer : 4);
    }
    if (c->identity) { /* Delta's errors: BIGINT only, a step other than 0 */
      const char *tn = json_is_string(t) ? json_string_value(t) : json_string_value(json_object_get(t, "type"));
      if (!tn || strcmp(tn, "long"))
        rc = dd_err_set(DD_EUNSUPPORTED, "[DELTA_IDENTITY_COLUMNS_UNSUPPORTED_DATA_TYPE] DataType %s is not "
                        "supported for IDENTITY columns.", tn ? tn : "?");
      else if (c->identity_step == 0)
        rc = dd_err_set(DD_EINVAL, "[DELTA_IDENTITY_COLUMNS_ILLEGAL_STEP] IDENTITY column step cannot be 0.");
      json_object_set_new(md, "delta.identity.start", json_integer(c->identity_start));
      json_object_set_new(md, "delta.identity.step", json_integer(c->identity_step));
      json_object_set_new(md, "delta.identity.allowExplicitInsert", json_boolean(c->identity_allow_explicit_insert));
      if (!rc) rc = dop__proto_raise(p, p->reader, p->writer > 6 ? p->writer : 6);
    }
    if (!rc && type_uses(t, "timestamp_ntz")) rc = dop__proto_add_feature(p, "timestampNtz");
    if (!rc && type_uses(t, "variant")) rc = dop__proto_add_feature(p, "variantType");
    json_array_append_new(fields, json_pack("{s:s,s:o,s:b,s:o}", "name", c->name, "type", t,
                                            "nullable", c->nullable, "metadata", md));
  }
  if (rc) return json_decref(fields), rc;
  *out = json_pack("{s:s,s:o}", "type", "struct", "fields", fields);
  return *out ? 0 : DOP_OOM();
}

static bool has_column(const dop_create_opts *o, const char *name) {
  for (size_t i = 0; i < o->num_columns; i++)
    if (!strcasecmp(o->columns[i].name, name)) return true;
  return false;
}

/* ---- commit ---- */

static json_t *strv_json(const char *const *v, size_t n) {
  json_t *a = json_array();
  for (size_t i = 0; a && i < n; i++) json_array_append_new(a, json_string(v[i]));
  return a;
}

static char *dump(json_t *j) {
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  return s;
}

static const char *op_name(dop_create_mode m, bool exists) {
  if (m == DOP_REPLACE) return "REPLACE TABLE";
  if (m == DOP_CREATE_OR_REPLACE) return exists ? "CREATE OR REPLACE TABLE" : "CREATE TABLE";
  return "CREATE TABLE";
}

static int remove_cb(void *ctx, const dl_file *f) {
  dl_file g = *f;
  g.data_change = true;
  g.deletion_timestamp = -1;
  return dl_txn_remove_file(ctx, &g);
}

static int check_opts(const dop_create_opts *o) {
  if (o->mode < DOP_CREATE || o->mode > DOP_CREATE_OR_REPLACE) return dd_err_set(DD_EINVAL, "create: mode must be set");
  if (!o->location) return dd_err_set(DD_EINVAL, "create: a location is required");
  if (!o->num_columns) return dd_err_set(DD_EINVAL, "create: the table needs at least one column");
  for (size_t i = 0; i < o->num_partition_columns; i++)
    if (!has_column(o, o->partition_columns[i]))
      return dd_err_set(DD_EINVAL, "partition column '%s' is not a column of the table", o->partition_columns[i]);
  int rc = dop__check_clustering_count(o->num_clustering_columns);
  for (size_t i = 0; i < o->num_clustering_columns && !rc; i++) {
    const char *c = o->clustering_columns[i], *type = NULL;
    if (!has_column(o, c))
      return dd_err_set(DD_EINVAL, "clustering column '%s' is not a column of the table", c);
    for (size_t j = 0; j < o->num_columns; j++)
      if (!strcasecmp(o->columns[j].name, c)) type = o->columns[j].type;
    static const char *const no_skipping[] = {"struct", "array", "map", "boolean", "binary", "variant", "void"};
    for (size_t j = 0; type && j < sizeof no_skipping / sizeof *no_skipping && !rc; j++)
      if (!strncasecmp(type, no_skipping[j], strlen(no_skipping[j]))) rc = dop__clustering_type_error(c);
  }
  if (rc) return rc;
  if (o->num_partition_columns && o->num_clustering_columns)
    return dd_err_set(DD_EINVAL, "a table cannot be both partitioned and clustered");
  return 0;
}

int dop_create(dop_result **out, const dop_create_opts *o) {
  *out = NULL;
  int rc = check_opts(o);
  if (rc) return rc;
  bool exists = dop__has_log(o->location);
  if (exists && o->mode == DOP_CREATE) return dd_err_set(DD_EEXISTS, "a Delta table already exists at %s", o->location);
  if (exists && o->mode == DOP_CREATE_IF_NOT_EXISTS) return dop__result_new(out, NO_COLS, 0);
  if (!exists && o->mode == DOP_REPLACE) return dd_err_set(DD_ENOTFOUND, "no Delta table at %s to replace", o->location);
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dl_txn *txn = NULL;
  json_t *schema = NULL;
  char *schema_s = NULL, *packed = NULL, **rf = NULL, **wf = NULL;
  const char **keys = calloc(o->num_properties + 1, sizeof *keys), **vals = calloc(o->num_properties + 1, sizeof *vals);
  dop__proto p = {.reader = 1, .writer = 2};
  size_t nprops = 0;
  if (!keys || !vals) { rc = DOP_OOM(); goto cleanup; }
  if ((rc = build_schema(&schema, o, &p)) || (rc = dop__apply_properties(&p, o->property_keys, o->property_values, o->num_properties, keys, vals, &nprops))) goto cleanup;
  if (o->num_clustering_columns && (rc = dop__proto_add_feature(&p, "clustering"))) goto cleanup;
  if (!(schema_s = dump(schema))) { rc = DOP_OOM(); goto cleanup; }
  if ((rc = dl_kv_pack(&packed, keys, vals, nprops)) || (rc = dop__rt_names(&packed))) goto cleanup;
  if (exists) rc = dop__open_latest(&t, &s, o->location);
  else rc = dl_table_open(&t, o->location);
  if (rc) goto cleanup;
  const char *id = NULL;
  if (s && dop_is_clustered(s) && o->num_partition_columns) {
    rc = dd_err_set(DD_EINVAL, "[DELTA_CLUSTERING_REPLACE_TABLE_WITH_PARTITIONED_TABLE] Replacing a "
                    "clustered Delta table with a partitioned table is not allowed.");
    goto cleanup;
  }
  if (s) { /* replace: keep the id, never lower the protocol */
    dop__proto old;
    dop__proto_from(&old, dl_snapshot_protocol(s));
    rc = dop__proto_merge(&p, &old);
    dop__proto_free(&old);
    id = dl_snapshot_metadata(s)->id;
    if (rc) goto cleanup;
  }
  if ((rc = dl_txn_begin(&txn, t, s))) goto cleanup;
  if (s) {
    dl_txn_read_all(txn);
    if ((rc = dl_snapshot_files(s, remove_cb, txn))) goto cleanup;
  }
  dl_protocol np;
  if ((rc = dop__proto_to(&p, &np, &rf, &wf)) || (rc = dl_txn_set_protocol(txn, &np))) goto cleanup;
  dl_metadata_spec md = {id, o->name, o->comment, schema_s, o->num_partition_columns,
                         o->partition_columns, packed, -1};
  if ((rc = dl_txn_set_metadata(txn, &md))) goto cleanup;
  if (!o->num_clustering_columns && s && (rc = dop__carry_clustering(txn, s, NULL))) goto cleanup;
  if (o->num_clustering_columns) {
    json_t *cols = json_array();
    for (size_t i = 0; i < o->num_clustering_columns; i++)
      json_array_append_new(cols, json_pack("[s]", o->clustering_columns[i]));
    char *cfg = dump(json_pack("{s:o,s:s}", "clusteringColumns", cols, "domainName", "delta.clustering"));
    rc = cfg ? dl_txn_set_domain(txn, "delta.clustering", cfg, false) : DOP_OOM();
    free(cfg);
    if (rc) goto cleanup;
  }
  char *pb = dump(strv_json(o->partition_columns, o->num_partition_columns));
  char *cb = dump(strv_json(o->clustering_columns, o->num_clustering_columns));
  json_t *cfg = json_object();
  for (size_t i = 0; i < nprops; i++) json_object_set_new(cfg, keys[i], json_string(vals[i]));
  char *props = dump(cfg);
  json_t *params = json_pack("{s:s,s:s?,s:s,s:s,s:s}", "isManaged", "false", "description", o->comment,
                             "partitionBy", pb ? pb : "[]", "clusterBy", cb ? cb : "[]", "properties",
                             props ? props : "{}");
  if (params && !o->comment) json_object_set_new(params, "description", json_null());
  free(pb);
  free(cb);
  free(props);
  if ((rc = dop__commit(txn, op_name(o->mode, exists), params, json_object(), NULL))) goto cleanup;
  rc = dop__result_new(out, NO_COLS, 0);
cleanup:
  dop__proto_free(&p);
  free(rf);
  free(wf);
  free(keys);
  free(vals);
  free(packed);
  free(schema_s);
  dl_txn_free(txn);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc;
}
