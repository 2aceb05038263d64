/* dml_write.c: writes of new rows into a Delta table (dml.h "Writes"), as Delta's
 * WriteIntoDelta does them for DataFrameWriter.save / saveAsTable, INSERT INTO / OVERWRITE
 * and CREATE TABLE AS SELECT: the table's schema decided first (the existing one, one
 * evolved by mergeSchema, or the source's for a new or replaced table), every source batch
 * cast to it (Spark's ANSI store assignment), checked (NOT NULL, CHECK constraints) and
 * routed to one data writer per partition (identity columns the source lacks get the
 * values dml_identity.c hands out), then one commit with the adds (and, for an overwrite,
 * the removes of every active file; the identity columns' new high water marks). On any
 * error the files written so far are deleted and nothing is committed. */
#include "store/dml/dml_int.h"
#include "store/dml/dml_merge_int.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "store/scan/scn.h"

typedef struct wr {
  const dml_write_opts *o;
  dl_table *t;
  dl_snapshot *old;     /* the table before (NULL: none) */
  dl_snapshot *snap;    /* the table as written (old, or the pending one) */
  dl_txn *x;
  dml__bound b;         /* the table's Arrow schema and CHECK constraints */
  ex_node **outs;       /* [b.ncols] the output columns, bound over the source schema */
  bool *not_null;       /* [b.ncols] */
  char *schema_json;    /* the schema being written when it changes */
  char *config_json;    /* its configuration when that changes too (column mapping) */
  dml__router rt;
  bool rt_open;
  ex_node *where;       /* replaceWhere, bound over b.schema (partition columns only) */
  ex_skipper *sk;       /* the files it covers */
  dml__ident id;        /* identity columns; outs[i] NULL: column i's values handed out */
} wr;

static const char *mode_name(dml_write_mode m) {
  switch (m) {
    case DML_WRITE_OVERWRITE: return "Overwrite";
    case DML_WRITE_ERROR: return "ErrorIfExists";
    case DML_WRITE_IGNORE: return "Ignore";
    default: return "Append";
  }
}

static int find_source(const arw_schema *s, const char *name) {
  for (size_t i = 0; i < arw_schema_ncolumns(s); i++)
    if (!strcasecmp(arw_field_name(s, arw_schema_column(s, i)), name)) return (int)i;
  return -1;
}

/* ---- the schema written ---- */

static void schema_text(dd_buf *b, const arw_schema *s) {
  for (size_t i = 0; i < arw_schema_ncolumns(s); i++) {
    int c = arw_schema_column(s, i);
    char t[64];
    ex_type_format(ex_type_of_arrow(s, c), t, sizeof t);
    dd_buf_printf(b, "\n |-- %s: %s (nullable = %s)", arw_field_name(s, c), t,
                  arw_field_nullable(s, c) ? "true" : "false");
  }
}

/* DD_EINVAL as Delta's schema mismatch (the source has columns the table does not). */
static int mismatch(const wr *w, const arw_schema *src, const char *extra) {
  dd_buf tb = {0}, sb = {0};
  arw_schema *ts = NULL;
  if (!arw_schema_new(&ts) && !scn_arrow_schema(ts, dl_schema_root(dl_snapshot_schema(w->old)), NULL, 0))
    schema_text(&tb, ts);
  arw_schema_free(ts);
  schema_text(&sb, src);
  int rc = dd_err_set(DD_EINVAL, "[_LEGACY_ERROR_TEMP_DELTA_0007] A schema mismatch detected when writing to the "
                      "Delta table (Table ID: %s).\nTo enable schema migration using DataFrameWriter or "
                      "DataStreamWriter, please set:\n'.option(\"mergeSchema\", \"true\")'.\nFor other operations, "
                      "set the session configuration\nspark.databricks.delta.schema.autoMerge.enabled to \"true\". "
                      "See the documentation\nspecific to the operation for details.\n\nTable schema:\nroot%s\n\n"
                      "Data schema:\nroot%s\n\nColumn not in the table: %s",
                      dl_snapshot_metadata(w->old)->id, tb.p ? tb.p : "", sb.p ? sb.p : "", extra);
  dd_buf_free(&tb), dd_buf_free(&sb);
  return rc;
}

/* The table's schema with the source's columns it lacks appended (mergeSchema, as MERGE's
 * schema evolution: column mapping ids and physical names when the table has it), in
 * w->schema_json and w->config_json; NULL there when nothing is added. */
static int merged_schema(wr *w, const arw_schema *src) {
  size_t n = arw_schema_ncolumns(src), k = 0;
  int *ids = calloc(n + 1, sizeof *ids);
  int rc = ids ? 0 : dml__oom();
  for (size_t i = 0; !rc && i < n; i++) {
    int id = arw_schema_column(src, i);
    if (dl_schema_field(dl_snapshot_schema(w->old), arw_field_name(src, id))) continue;
    if (!w->o->merge_schema) rc = mismatch(w, src, arw_field_name(src, id));
    else ids[k++] = id;
  }
  if (!rc && k) rc = dml__evolve_columns(&w->schema_json, &w->config_json, w->old, src, ids, k);
  free(ids);
  return rc;
}

static bool same_names(const char *const *a, size_t na, const char *const *b, size_t nb) {
  if (na != nb) return false;
  for (size_t i = 0; i < na; i++)
    if (strcasecmp(a[i], b[i])) return false;
  return true;
}

/* Sets the metadata (and for a new table the protocol) the write commits, when it changes
 * them, and w->snap to the table as written. */
static int plan_metadata(wr *w, const arw_schema *src) {
  const dml_write_opts *o = w->o;
  bool fresh = !w->old || o->replace || (o->mode == DML_WRITE_OVERWRITE && o->overwrite_schema);
  const dl_metadata *md = w->old ? dl_snapshot_metadata(w->old) : NULL;
  if (!fresh && o->has_partition_by &&
      !same_names(o->partition_by, o->num_partition_by, md->partition_columns, md->num_partition_columns)) {
    dd_buf g = {0}, t = {0};
    for (size_t i = 0; i < o->num_partition_by; i++) dd_buf_printf(&g, "%s`%s`", i ? ", " : "", o->partition_by[i]);
    for (size_t i = 0; i < md->num_partition_columns; i++)
      dd_buf_printf(&t, "%s`%s`", i ? ", " : "", md->partition_columns[i]);
    int rc = dd_err_set(DD_EINVAL, "[DELTA_PARTITION_COLUMNS_MISMATCH] Partition columns do not match the "
                        "partition columns of the table.\nGiven: [%s]\nTable: [%s]", g.p ? g.p : "", t.p ? t.p : "");
    dd_buf_free(&g), dd_buf_free(&t);
    return rc;
  }
  if (!fresh) {
    if (o->by_name && (o->mode == DML_WRITE_APPEND || o->mode == DML_WRITE_OVERWRITE)) {
      int rc = merged_schema(w, src);
      if (rc || !w->schema_json) return rc ? rc : (w->snap = dl_snapshot_ref(w->old), 0);
    } else {
      w->snap = dl_snapshot_ref(w->old);
      return 0;
    }
  }
  if (fresh && !o->schema_string) return dd_err_set(DD_EINVAL, "write: a schema for the new table is required");
  dl_metadata_spec m = {.created_time = -1};
  if (md && !fresh) {
    m = (dl_metadata_spec){md->id, md->name, md->description, w->schema_json, md->num_partition_columns,
                           md->partition_columns, w->config_json ? w->config_json : md->configuration,
                           md->created_time};
  } else {
    m.id = md ? md->id : NULL;
    m.name = o->name ? o->name : md ? md->name : NULL;
    m.description = o->description ? o->description : md ? md->description : NULL;
    m.schema_string = o->schema_string;
    m.partition_columns = o->partition_by; /* a replaced schema: the partitioning given, or none */
    m.num_partition_columns = o->num_partition_by;
    m.configuration = o->configuration ? o->configuration : md && !o->replace ? md->configuration : NULL;
  }
  int rc = dl_txn_set_metadata(w->x, &m);
  if (!rc && !w->old) {
    dl_protocol p = {.min_reader_version = 1, .min_writer_version = 2};
    rc = dl_txn_set_protocol(w->x, &p);
  }
  if (!rc) rc = dl_txn_pending_snapshot(&w->snap, w->x);
  /* every partition column must be a column of the schema */
  const dl_metadata *nm = rc ? NULL : dl_snapshot_metadata(w->snap);
  for (size_t i = 0; nm && !rc && i < nm->num_partition_columns; i++)
    if (!dl_schema_field(dl_snapshot_schema(w->snap), nm->partition_columns[i]))
      rc = dd_err_set(DD_EINVAL, "[DELTA_PARTITION_COLUMN_NOT_FOUND] Partition column `%s` not found in schema",
                      nm->partition_columns[i]);
  return rc;
}

/* ---- the output columns ---- */

static bool numeric(ex_type_id t) { return t >= EX_T_BYTE && t <= EX_T_DECIMAL; }
static bool datetime(ex_type_id t) { return t == EX_T_DATE || t == EX_T_TIMESTAMP || t == EX_T_TIMESTAMP_NTZ; }

/* May a value of type from be stored into a column of type to (Spark's ANSI store
 * assignment: numbers into numbers, datetimes into datetimes, anything into a string)? */
static bool assignable(ex_type from, ex_type to) {
  if (ex_type_equal(from, to) || from.id == EX_T_NULL) return true;
  if (numeric(from.id) && numeric(to.id)) return true;
  if (datetime(from.id) && datetime(to.id)) return true;
  return to.id == EX_T_STRING && from.id != EX_T_BINARY && from.id < EX_T_STRUCT;
}

static int cannot_cast(const char *col, ex_type from, ex_type to) {
  char f[64], t[64];
  ex_type_format(from, f, sizeof f);
  ex_type_format(to, t, sizeof t);
  for (char *p = f; *p; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  for (char *p = t; *p; p++) *p = (char)(*p >= 'a' && *p <= 'z' ? *p - 32 : *p);
  return dd_err_set(DD_EINVAL, "[INCOMPATIBLE_DATA_FOR_TABLE.CANNOT_SAFELY_CAST] Cannot write incompatible data "
                    "for the table: Cannot safely cast `%s` \"%s\" to \"%s\". SQLSTATE: KD000", col, f, t);
}

static int arity(const wr *w, const arw_schema *src, size_t want) {
  size_t have = arw_schema_ncolumns(src);
  return dd_err_set(DD_EINVAL, "[INSERT_COLUMN_ARITY_MISMATCH.%s] Cannot write to the table, the reason is %s data "
                    "columns: the table has %zu columns, the data %zu. SQLSTATE: 21S01",
                    have > want ? "TOO_MANY_DATA_COLUMNS" : "NOT_ENOUGH_DATA_COLUMNS", have > want ? "too many" : "not enough",
                    want, have);
  (void)w;
}

/* The source column of table column i: by name, by position, or through the INSERT column
 * list; -1 when the source has none (the column gets NULL). */
static int source_of(const wr *w, const arw_schema *src, size_t i, const char *name, int *out) {
  const dml_write_opts *o = w->o;
  *out = -1;
  if (o->num_columns) {
    for (size_t k = 0; k < o->num_columns; k++)
      if (!strcasecmp(o->columns[k], name)) return *out = (int)k, 0;
    return 0;
  }
  if (o->by_name) return *out = find_source(src, name), 0;
  *out = (int)i;
  return 0;
}

/* Table column i's value (unbound, over src): source column sc (-1: NULL) cast to the
 * column's type where the rules allow. */
static int out_value(ex_node **out, const wr *w, const arw_schema *src, size_t i, int sc) {
  int id = arw_schema_column(w->b.schema, i);
  const char *name = arw_field_name(w->b.schema, id);
  ex_type to = ex_type_of_arrow(w->b.schema, id);
  ex_node *e = NULL;
  int rc = 0;
  if (sc < 0) {
    ex_value nv = {.type = {EX_T_NULL, 0, 0}, .is_null = true};
    rc = ex_new_literal(&e, &nv);
    if (!rc && to.id < EX_T_STRUCT) rc = ex_new_cast(&e, e, to);
  } else {
    const char *sn = arw_field_name(src, arw_schema_column(src, (size_t)sc));
    ex_type from = ex_type_of_arrow(src, arw_schema_column(src, (size_t)sc));
    rc = ex_new_column(&e, &sn, 1);
    if (!rc && !ex_type_equal(from, to) && w->o->by_name && from.id != EX_T_NULL)
      rc = dd_err_set(DD_EINVAL, "[DELTA_FAILED_TO_MERGE_FIELDS] Failed to merge fields '%s' and '%s'", name, sn);
    else if (!rc && !ex_type_equal(from, to)) {
      if (to.id >= EX_T_STRUCT || from.id >= EX_T_STRUCT || !assignable(from, to)) rc = cannot_cast(name, from, to);
      else rc = ex_new_cast(&e, e, to);
    }
  }
  if (rc) ex_free(e), e = NULL;
  *out = e;
  return rc;
}

static int bind_outputs(wr *w, const arw_schema *src) {
  const dml_write_opts *o = w->o;
  size_t n = w->b.ncols, nsrc = arw_schema_ncolumns(src);
  if (o->num_columns) {
    if (o->num_columns != nsrc) return arity(w, src, o->num_columns);
    for (size_t k = 0; k < o->num_columns; k++) {
      bool known = false;
      for (size_t i = 0; i < n; i++) known |= !strcasecmp(o->columns[k], arw_field_name(w->b.schema, arw_schema_column(w->b.schema, i)));
      if (!known) return dd_err_set(DD_EINVAL, "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column with name `%s` cannot be resolved.", o->columns[k]);
    }
  } else if (!o->by_name && nsrc != n) {
    return arity(w, src, n);
  }
  w->outs = calloc(n + 1, sizeof *w->outs);
  w->not_null = calloc(n + 1, sizeof *w->not_null);
  ex_node **vals = calloc(n + 1, sizeof *vals), **gen = calloc(n + 1, sizeof *gen);
  int rc = w->outs && w->not_null && vals && gen ? 0 : dml__oom();
  const dl_schema *ds = dl_snapshot_schema(w->snap);
  for (size_t i = 0; i < n && !rc; i++) {
    int id = arw_schema_column(w->b.schema, i), sc;
    const char *name = arw_field_name(w->b.schema, id);
    const dl_field *df = dl_schema_field(ds, name);
    const dml__idcol *ic = dml__ident_find(&w->id, i);
    w->not_null[i] = df && !df->nullable;
    rc = source_of(w, src, i, name, &sc);
    if (!rc && ic && sc < 0) continue; /* values handed out as the rows are written */
    if (!rc && ic) rc = dml__ident_explicit(ic);
    if (!rc && sc < 0) rc = dml__gen_parse(&gen[i], df);
    if (!rc && !gen[i]) rc = out_value(&vals[i], w, src, i, sc);
  }
  /* generated columns the data lacks: computed from the row's other values (the ones it
   * has are checked by the "Generated Column" constraints) */
  for (size_t i = 0; i < n && !rc; i++) {
    bool touched = false;
    if (gen[i]) rc = dml__gen_value(&vals[i], &touched, gen[i], w->b.schema, vals);
  }
  ex_bind_opts bo = EX_BIND_OPTS_INIT;
  for (size_t i = 0; i < n && !rc; i++)
    if (vals[i]) rc = ex_bind(&w->outs[i], vals[i], src, &bo);
  for (size_t i = 0; i < n; i++) ex_free(vals ? vals[i] : NULL), ex_free(gen ? gen[i] : NULL);
  free(vals), free(gen);
  return rc;
}

/* ---- replaceWhere ---- */

/* Overwrite with replaceWhere: only the files of the partitions the predicate selects are
 * removed, and every written row must satisfy it. Predicates on other columns (Delta
 * rewrites the files then) are DD_EUNSUPPORTED. */
static int bind_where(wr *w) {
  const dml_write_opts *o = w->o;
  if (w->snap != w->old || o->replace)
    return dd_err_set(DD_EUNSUPPORTED, "write: replaceWhere with a schema change is not supported");
  ex_node *e = NULL;
  int rc = ex_parse(&e, o->replace_where, strlen(o->replace_where), NULL);
  if (!rc) rc = ex_bind(&w->where, e, w->b.schema, NULL);
  ex_free(e);
  if (rc) return dd_err_wrap(rc, "write: replaceWhere");
  if (ex_result_type(w->where).id != EX_T_BOOLEAN)
    return dd_err_set(DD_EINVAL, "write: replaceWhere must be a boolean condition");
  if (ex_check_partition_only(w->where, w->old))
    return dd_err_wrap(DD_EUNSUPPORTED, "write: replaceWhere on non-partition columns is not supported by deltad");
  return ex_skipper_new(&w->sk, w->where, w->old);
}

/* ---- rows ---- */

static int check_rows(const wr *w, const arw_batch *out) {
  size_t rows = arw_batch_rows(out);
  for (size_t i = 0; i < w->b.ncols; i++) {
    if (!w->not_null[i]) continue;
    arw_view v;
    int id = arw_schema_column(w->b.schema, i);
    int rc = arw_batch_view(out, id, &v);
    if (rc) return rc;
    for (size_t r = 0; r < rows; r++)
      if (!arw_view_valid(&v, r))
        return dd_err_set(DD_EINVAL, "[DELTA_NOT_NULL_CONSTRAINT_VIOLATED] NOT NULL constraint violated for column: %s.",
                          arw_field_name(w->b.schema, id));
  }
  if (w->where) {
    size_t ones = 0;
    uint8_t *mask = malloc(rows + 1);
    int rc = mask ? ex_eval_mask(w->where, out, mask, &ones) : dml__oom();
    free(mask);
    if (rc) return rc;
    if (ones < rows)
      return dd_err_set(DD_EINVAL, "[DELTA_REPLACE_WHERE_MISMATCH] Written data does not conform to partial table "
                        "overwrite condition or constraint '%s'.", w->o->replace_where);
  }
  for (size_t i = 0; i < w->b.ncons; i++) {
    size_t n = rows, ones = 0;
    uint8_t *mask = malloc(n + 1);
    if (!mask) return dml__oom();
    int rc = ex_eval_mask(w->b.cons[i], out, mask, &ones);
    free(mask);
    if (rc) return rc;
    if (ones < n)
      return dd_err_set(DD_EINVAL, "[DELTA_VIOLATE_CONSTRAINT_WITH_VALUES] CHECK constraint %s (%s) violated by a "
                        "row of the written data", w->b.cons_name[i], w->b.cons_sql[i]);
  }
  return 0;
}

static int write_rows(wr *w, dml_write_result *res) {
  const dml_write_opts *o = w->o;
  int rc = 0;
  for (;;) {
    const arw_batch *in = NULL;
    if ((rc = o->next(o->ctx, &in)) || !in) break;
    if (!arw_batch_rows(in)) continue;
    arw_batch *out = NULL;
    rc = arw_batch_new(&out, w->b.schema);
    for (size_t i = 0; !rc && i < w->b.ncols; i++)
      rc = w->outs[i] ? ex_eval(w->outs[i], in, out, arw_schema_column(w->b.schema, i))
                      : dml__ident_append(dml__ident_find(&w->id, i), out, arw_batch_rows(in));
    if (!rc) rc = check_rows(w, out);
    if (!rc) rc = dml__router_write(&w->rt, out);
    if (!rc) res->num_rows += (int64_t)arw_batch_rows(out);
    arw_batch_free(out);
    if (rc) break;
  }
  return rc;
}

/* ---- the commit ---- */

typedef struct rm_ctx {
  dl_txn *x;
  ex_skipper *sk;  /* replaceWhere: only the files it keeps */
  int64_t now, files, bytes;
} rm_ctx;

static int remove_one(void *ctx, const dl_file *f) {
  rm_ctx *c = ctx;
  if (c->sk && !ex_skipper_keep(c->sk, f)) return 0;
  c->files++;
  c->bytes += f->size > 0 ? f->size : 0;
  return dml__remove(c->x, f, c->now);
}

/* operationParameters as Delta writes them; partitionBy is the partitioning the write
 * gave (a SQL INSERT gives none: "[]"). */
static int params_json(char **out, const wr *w, bool ctas) {
  const dl_metadata *md = dl_snapshot_metadata(w->snap);
  const dml_write_opts *o = w->o;
  json_t *parts = json_array();
  for (size_t i = 0; parts && o->has_partition_by && i < o->num_partition_by; i++)
    json_array_append_new(parts, json_string(o->partition_by[i]));
  char *pb = parts ? json_dumps(parts, JSON_COMPACT) : NULL;
  json_decref(parts);
  json_t *p = pb ? json_object() : NULL;
  if (p && ctas) {
    json_object_set_new(p, "partitionBy", json_string(pb));
    json_object_set_new(p, "clusterBy", json_string("[]"));
    json_object_set_new(p, "description", md->description ? json_string(md->description) : json_null());
    json_object_set_new(p, "isManaged", json_string("false"));
    json_object_set_new(p, "properties", json_string("{}"));
  } else if (p) {
    json_object_set_new(p, "mode", json_string(mode_name(o->mode)));
    json_object_set_new(p, "partitionBy", json_string(pb));
    if (w->where) {
      json_t *pr = json_array();
      json_array_append_new(pr, json_string(o->replace_where));
      char *t = json_dumps(pr, JSON_COMPACT);
      json_decref(pr);
      json_object_set_new(p, "predicate", t ? json_string(t) : json_null());
      free(t);
    }
    if (o->merge_schema) json_object_set_new(p, "canMergeSchema", json_string("true"));
    if (o->overwrite_schema && o->mode == DML_WRITE_OVERWRITE) json_object_set_new(p, "canOverwriteSchema", json_string("true"));
  }
  free(pb);
  *out = p ? json_dumps(p, JSON_COMPACT) : NULL;
  json_decref(p);
  return *out ? 0 : dml__oom();
}

static int metrics_json(char **out, const dml_write_result *r) {
  char buf[256];
  int n = snprintf(buf, sizeof buf, "{\"numFiles\":\"%lld\",\"numOutputRows\":\"%lld\",\"numOutputBytes\":\"%lld\"",
                   (long long)r->num_files, (long long)r->num_rows, (long long)r->num_bytes);
  if (r->num_removed_files)
    n += snprintf(buf + n, sizeof buf - (size_t)n, ",\"numRemovedFiles\":\"%lld\",\"numRemovedBytes\":\"%lld\"",
                  (long long)r->num_removed_files, (long long)r->num_removed_bytes);
  snprintf(buf + n, sizeof buf - (size_t)n, "}");
  return (*out = strdup(buf)) ? 0 : dml__oom();
}

static int commit(wr *w, dml_write_result *res) {
  const dml_write_opts *o = w->o;
  int64_t now = o->now_ms ? o->now_ms : dml__wall_ms();
  int rc = dml__router_commit(&w->rt, w->x, &res->num_files, &res->num_bytes);
  bool overwrite = w->old && (o->mode == DML_WRITE_OVERWRITE || o->replace);
  if (!rc && overwrite) {
    rm_ctx c = {w->x, w->sk, now, 0, 0};
    dl_txn_read_all(w->x);
    rc = dl_snapshot_files(w->old, remove_one, &c);
    res->num_removed_files = c.files, res->num_removed_bytes = c.bytes;
  }
  bool ctas = o->ctas;
  const char *op = o->operation ? o->operation
                   : ctas ? (o->replace ? "CREATE OR REPLACE TABLE AS SELECT" : "CREATE TABLE AS SELECT")
                          : "WRITE";
  char *params = NULL, *metrics = NULL;
  if (!rc) rc = params_json(&params, w, ctas);
  if (!rc) rc = metrics_json(&metrics, res);
  if (!rc) rc = dml__ident_metadata(w->x, &w->id, w->snap);
  if (!rc) rc = dml__commit(w->x, op, params, metrics, o->max_retries, o->now_ms, &res->version);
  free(params), free(metrics);
  return rc;
}

/* ---- the write ---- */

static int open_old(wr *w) {
  int rc = dl_snapshot_open(&w->old, w->t, NULL);
  if (rc == DD_ENOTFOUND) return dd_err_clear(), w->old = NULL, 0;
  if (!rc) rc = dml__check_table(w->old, "WRITE", w->o->mode != DML_WRITE_OVERWRITE && !w->o->replace);
  return rc;
}

int dml_write(dml_write_result *out, dl_table *t, const dml_write_opts *o) {
  memset(out, 0, sizeof *out);
  out->version = -1;
  if (!o || !o->next || !o->source_schema) return dd_err_set(DD_EINVAL, "write: a source is required");
  wr w = {.o = o, .t = t};
  const arw_schema *src = o->source_schema;
  int rc = open_old(&w);
  if (!rc && w.old && o->mode == DML_WRITE_ERROR && !o->replace)
    rc = dd_err_set(DD_EEXISTS, "[DELTA_PATH_EXISTS] Cannot write to already existent path %s without setting "
                    "OVERWRITE = 'true'. SQLSTATE: 42K04", dl_table_location(t));
  if (!rc && w.old && o->mode == DML_WRITE_IGNORE && !o->replace) {
    out->skipped = true;
    goto cleanup;
  }
  out->created = !rc && !w.old;
  if (!rc) rc = dl_txn_begin(&w.x, t, w.old);
  if (!rc) rc = plan_metadata(&w, src);
  if (!rc) rc = arw_schema_new(&w.b.schema);
  if (!rc) rc = scn_arrow_schema(w.b.schema, dl_schema_root(dl_snapshot_schema(w.snap)), NULL, 0);
  w.b.ncols = rc ? 0 : arw_schema_ncolumns(w.b.schema);
  if (!rc) rc = dml__bind_constraints(&w.b, w.snap);
  if (!rc) rc = dml__ident_init(&w.id, w.snap, w.b.schema);
  if (!rc && o->replace_where && o->mode == DML_WRITE_OVERWRITE && w.old) rc = bind_where(&w);
  if (!rc) rc = bind_outputs(&w, src);
  if (!rc && !(rc = dml__router_init(&w.rt, t, w.snap, w.b.schema, o->codec, false))) {
    w.rt_open = true;
    w.rt.no_data_change = o->no_data_change;
  }
  if (!rc) rc = write_rows(&w, out);
  if (!rc) rc = commit(&w, out);
cleanup:
  if (w.rt_open) dml__router_free(&w.rt, rc != 0);
  for (size_t i = 0; w.outs && i < w.b.ncols; i++) ex_free(w.outs[i]);
  free(w.outs), free(w.not_null);
  ex_skipper_free(w.sk);
  ex_free(w.where);
  dml__bound_free(&w.b);
  dml__ident_free(&w.id);
  free(w.schema_json);
  free(w.config_json);
  dl_txn_free(w.x);
  dl_snapshot_free(w.snap);
  dl_snapshot_free(w.old);
  return rc;
}
