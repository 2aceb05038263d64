/* dml_merge_evolve.c: MERGE's schema evolution (MERGE WITH SCHEMA EVOLUTION, the client's
 * withSchemaEvolution(), spark.databricks.delta.schema.autoMerge.enabled), as Delta does it:
 * a clause UPDATE SET * or INSERT * adds the source's top-level columns that the target
 * lacks, and an assignment to a column the target lacks (SET z = s.z, INSERT (x, z)) adds
 * that column with its source column's type. New columns go at the end of the target's
 * schema, nullable (under column mapping with new ids and physical names,
 * delta.columnMapping.maxColumnId raised).
 * The MERGE then reads and writes the target through a snapshot carrying that metadata
 * (dl_snapshot_with_metadata) and commits the metadata with its files. Columns of the
 * target the source lacks keep their value in UPDATE SET * and are NULL in INSERT *
 * (dml_merge_bind.c). A source struct column (in a star clause or assigned whole, SET s =
 * src.s) adds the fields the target's struct lacks, recursively through structs, array
 * elements and map values, at the end of each struct (as Delta); the rows' values then bind
 * when the source's struct has the evolved shape (dml_merge_bind.c casts no nested types). */
#include "store/dml/dml_merge_int.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct evo {
  bool cm;          /* column mapping (name or id): new fields get an id and a physical name */
  int64_t max_id;   /* delta.columnMapping.maxColumnId so far */
  bool has_ntz;     /* the protocol has the timestampNtz feature */
  int err;          /* the error set by type_json (0: out of memory) */
} evo;

static json_t *type_json(const arw_schema *a, int id, evo *e);

/* A struct field of the source's field id named name, its metadata carrying the column
 * mapping when the table has it. */
static json_t *field_json(const arw_schema *a, int id, const char *name, bool nullable, evo *e) {
  json_t *md = json_object();
  if (md && e->cm) { /* the field's id before its children's, as Delta numbers them */
    char uuid[37], phys[48];
    dl_uuid(uuid);
    snprintf(phys, sizeof phys, "col-%s", uuid);
    json_object_set_new(md, "delta.columnMapping.id", json_integer(++e->max_id));
    json_object_set_new(md, "delta.columnMapping.physicalName", json_string(phys));
  }
  json_t *t = md ? type_json(a, id, e) : NULL;
  if (!t || !md) return json_decref(t), json_decref(md), NULL;
  return json_pack("{s:s,s:o,s:b,s:o}", "name", name, "type", t, "nullable", nullable, "metadata", md);
}

static json_t *type_json(const arw_schema *a, int id, evo *e) {
  char dec[32];
  switch (arw_field_kind(a, id)) {
    case ARW_UTF8: return json_string("string");
    case ARW_BINARY: return json_string("binary");
    case ARW_INT8: return json_string("byte");
    case ARW_INT16: return json_string("short");
    case ARW_INT32: return json_string("integer");
    case ARW_INT64: return json_string("long");
    case ARW_FLOAT32: return json_string("float");
    case ARW_FLOAT64: return json_string("double");
    case ARW_BOOL: return json_string("boolean");
    case ARW_DATE32: return json_string("date");
    case ARW_TIMESTAMP_UTC: return json_string("timestamp");
    case ARW_TIMESTAMP:
      if (!e->has_ntz) {
        e->err = dd_err_set(DD_EUNSUPPORTED, "MERGE: schema evolution would add the timestamp_ntz column or field `%s`, "
                   "which needs the timestampNtz table feature: add it first (ALTER TABLE ... SET "
                   "TBLPROPERTIES ('delta.feature.timestampNtz' = 'supported'))", arw_field_name(a, id));
        return NULL;
      }
      return json_string("timestamp_ntz");
    case ARW_DECIMAL128:
      snprintf(dec, sizeof dec, "decimal(%d,%d)", arw_field_precision(a, id), arw_field_scale(a, id));
      return json_string(dec);
    case ARW_STRUCT: {
      json_t *fs = json_array();
      for (int i = 0; fs && i < arw_field_nchildren(a, id); i++) {
        int c = arw_field_child(a, id, i);
        json_t *f = field_json(a, c, arw_field_name(a, c), arw_field_nullable(a, c), e);
        if (!f) return json_decref(fs), NULL;
        json_array_append_new(fs, f);
      }
      return fs ? json_pack("{s:s,s:o}", "type", "struct", "fields", fs) : NULL;
    }
    case ARW_LIST: {
      int c = arw_field_child(a, id, 0);
      json_t *el = type_json(a, c, e);
      return el ? json_pack("{s:s,s:o,s:b}", "type", "array", "elementType", el, "containsNull",
                            arw_field_nullable(a, c)) : NULL;
    }
    case ARW_MAP: {
      int k = arw_field_child(a, id, 0), v = arw_field_child(a, id, 1);
      json_t *kt = type_json(a, k, e), *vt = kt ? type_json(a, v, e) : NULL;
      if (!vt) return json_decref(kt), NULL;
      return json_pack("{s:s,s:o,s:o,s:b}", "type", "map", "keyType", kt, "valueType", vt,
                       "valueContainsNull", arw_field_nullable(a, v));
    }
    default:
      e->err = dd_err_set(DD_EUNSUPPORTED, "MERGE: schema evolution cannot add the column or field `%s` of type void "
                 "(a NULL without a type): cast it in the source", arw_field_name(a, id));
      return NULL;
  }
}

static bool has_feature(const dl_snapshot *s, const char *name) {
  const dl_protocol *p = dl_snapshot_protocol(s);
  for (size_t i = 0; p->writer_features && i < p->num_writer_features; i++)
    if (!strcmp(p->writer_features[i], name)) return true;
  return false;
}

/* The configuration of s with delta.columnMapping.maxColumnId set to max_id, packed. */
static int config_with_max_id(char **out, const dl_snapshot *s, int64_t max_id) {
  static const char KEY[] = "delta.columnMapping.maxColumnId";
  const char *cur = dl_snapshot_metadata(s)->configuration, *k, *v;
  size_t n = 1;
  for (const char *c = cur; c && dl_kv_next(&c, &k, &v);) n++;
  const char **ks = calloc(n, sizeof *ks), **vs = calloc(n, sizeof *vs);
  char num[24];
  snprintf(num, sizeof num, "%" PRId64, max_id);
  size_t m = 0;
  int rc = ks && vs ? 0 : dml__oom();
  for (const char *c = cur; !rc && c && dl_kv_next(&c, &k, &v);)
    if (strcmp(k, KEY)) ks[m] = k, vs[m++] = v;
  if (!rc) ks[m] = KEY, vs[m++] = num, rc = dl_kv_pack(out, ks, vs, m);
  free(ks);
  free(vs);
  return rc;
}

/* The field of fields named name (case-insensitive), or NULL. */
static json_t *field_named(json_t *fields, const char *name) {
  size_t i;
  json_t *f;
  json_array_foreach(fields, i, f) {
    const char *n = json_string_value(json_object_get(f, "name"));
    if (n && !strcasecmp(n, name)) return f;
  }
  return NULL;
}

/* Appends source field id as a new nullable column called name, unless the target (or
 * an earlier addition) has it. */
static int add_column(json_t *fields, const dl_snapshot *s, const arw_schema *src, int id, const char *name,
                      evo *e, size_t *added) {
  if (dl_schema_field(dl_snapshot_schema(s), name) || field_named(fields, name)) return 0;
  json_t *f = field_json(src, id, name, true, e);
  if (!f) return e->err ? e->err : dml__oom();
  json_array_append_new(fields, f);
  (*added)++;
  return 0;
}

/* Adds to the target's type t (JSON, changed in place) the struct fields source field id
 * has and t lacks, recursively through structs, array elements and map values, each at
 * the end of its struct, nullable (as Delta). Other types are left as they are. */
static int merge_nested(json_t *t, const arw_schema *src, int id, evo *e, size_t *added) {
  const char *kind = json_string_value(json_object_get(t, "type"));
  if (!json_is_object(t) || !kind) return 0;
  int k = arw_field_kind(src, id), rc = 0;
  if (!strcmp(kind, "array") && k == ARW_LIST)
    return merge_nested(json_object_get(t, "elementType"), src, arw_field_child(src, id, 0), e, added);
  if (!strcmp(kind, "map") && k == ARW_MAP)
    return merge_nested(json_object_get(t, "valueType"), src, arw_field_child(src, id, 1), e, added);
  json_t *fields = json_object_get(t, "fields");
  if (strcmp(kind, "struct") || k != ARW_STRUCT || !json_is_array(fields)) return 0;
  for (int i = 0; !rc && i < arw_field_nchildren(src, id); i++) {
    int c = arw_field_child(src, id, i);
    json_t *have = field_named(fields, arw_field_name(src, c)), *f;
    if (have) {
      rc = merge_nested(json_object_get(have, "type"), src, c, e, added);
    } else if (!(f = field_json(src, c, arw_field_name(src, c), true, e))) {
      rc = e->err ? e->err : dml__oom();
    } else {
      json_array_append_new(fields, f);
      (*added)++;
    }
  }
  return rc;
}

/* add_column, or, when the target has the column, its nested struct fields evolved. */
static int add_or_merge(json_t *fields, const dl_snapshot *s, const arw_schema *src, int id, const char *name,
                        evo *e, size_t *added) {
  json_t *have = field_named(fields, name);
  if (have) return merge_nested(json_object_get(have, "type"), src, id, e, added);
  return add_column(fields, s, src, id, name, e, added);
}

/* The target column an assignment names (its alias qualifier dropped); NULL when it names
 * a nested field. */
static const char *target_name(const char *col, const char *alias) {
  const char *dot = col ? strchr(col, '.') : NULL;
  if (dot && alias && (size_t)(dot - col) == strlen(alias) && !strncasecmp(col, alias, (size_t)(dot - col)))
    col = dot + 1;
  return col && !strchr(col, '.') ? col : NULL;
}

/* The source field a value refers to (`s.col` or a plain `col` of the source), or -1. */
static int source_column(const ex_node *v, const arw_schema *src, const char *alias) {
  size_t n = 0;
  if (!v || ex_node_kind(v) != EX_COLUMN) return -1;
  const char *const *p = ex_column_parts(v, &n);
  if (n == 2 && alias && !strcasecmp(p[0], alias)) p++, n--;
  if (n != 1) return -1;
  for (size_t i = 0; i < arw_schema_ncolumns(src); i++) {
    int id = arw_schema_column(src, i);
    if (!strcasecmp(arw_field_name(src, id), p[0])) return id;
  }
  return -1;
}

/* The table's schema being evolved: its JSON, the fields array, the column mapping state. */
typedef struct evolving {
  json_t *schema, *fields;
  evo e;
  size_t added;
} evolving;

static int evolve_begin(evolving *v, const dl_snapshot *s, const char *op) {
  const char *mode = dl_snapshot_property(s, "delta.columnMapping.mode");
  const char *max = dl_snapshot_property(s, "delta.columnMapping.maxColumnId");
  memset(v, 0, sizeof *v);
  v->e = (evo){.cm = mode && (!strcasecmp(mode, "name") || !strcasecmp(mode, "id")),
               .max_id = max ? strtoll(max, NULL, 10) : 0, .has_ntz = has_feature(s, "timestampNtz")};
  json_error_t jerr;
  v->schema = json_loads(dl_snapshot_metadata(s)->schema_string, 0, &jerr);
  v->fields = json_object_get(v->schema, "fields");
  if (json_is_array(v->fields)) return 0;
  json_decref(v->schema);
  v->schema = NULL;
  return dd_err_set(DD_ECORRUPT, "%s: the table's schemaString is not a struct", op);
}

/* The evolved schema text and configuration (NULL when nothing was added; config NULL
 * without column mapping); frees v. */
static int evolve_end(evolving *v, const dl_snapshot *s, char **schema, char **config, int rc) {
  *schema = *config = NULL;
  if (!rc && v->added && !(*schema = json_dumps(v->schema, JSON_COMPACT))) rc = dml__oom();
  json_decref(v->schema);
  if (!rc && v->added && v->e.cm) rc = config_with_max_id(config, s, v->e.max_id);
  if (rc) free(*schema), free(*config), *schema = *config = NULL;
  return rc;
}

int dml__evolve_columns(char **schema, char **config, const dl_snapshot *s, const arw_schema *src,
                        const int *ids, size_t n) {
  evolving v;
  int rc = evolve_begin(&v, s, "write");
  for (size_t i = 0; !rc && i < n; i++)
    rc = add_column(v.fields, s, src, ids[i], arw_field_name(src, ids[i]), &v.e, &v.added);
  if (v.schema || rc) rc = evolve_end(&v, s, schema, config, rc);
  return rc;
}

int dml__merge_evolve(dl_snapshot **out, const dl_snapshot *s, const dml_merge_opts *o) {
  *out = NULL;
  const arw_schema *src = o->source_schema;
  if (!o->schema_evolution || !src) return 0;
  evolving v;
  int rc = evolve_begin(&v, s, "MERGE");
  if (rc) return rc;
  for (size_t c = 0; !rc && c < o->num_clauses; c++) {
    const dml_merge_clause *cl = &o->clauses[c];
    bool star = cl->action == DML_MERGE_UPDATE_STAR || cl->action == DML_MERGE_INSERT_STAR;
    for (size_t i = 0; star && !rc && i < arw_schema_ncolumns(src); i++) {
      int id = arw_schema_column(src, i);
      rc = add_or_merge(v.fields, s, src, id, arw_field_name(src, id), &v.e, &v.added);
    }
    for (size_t a = 0; !star && !rc && a < cl->num_assignments; a++) {
      const char *col = target_name(cl->assignments[a].column, o->target_alias);
      if (!col) continue;
      int id = source_column(cl->assignments[a].value, src, o->source_alias);
      if (dl_schema_field(dl_snapshot_schema(s), col) || field_named(v.fields, col)) {
        if (id >= 0) rc = add_or_merge(v.fields, s, src, id, col, &v.e, &v.added);
      } else if (id < 0)
        rc = dd_err_set(DD_EUNSUPPORTED, "MERGE: schema evolution adds the column `%s` from a source column "
                        "(SET %s = s.col): its value here is an expression; add the column first (ALTER TABLE "
                        "... ADD COLUMNS)", col, col);
      else
        rc = add_column(v.fields, s, src, id, col, &v.e, &v.added);
    }
  }
  char *text = NULL, *config = NULL;
  rc = evolve_end(&v, s, &text, &config, rc);
  if (!rc && text) {
    dl_metadata n = *dl_snapshot_metadata(s);
    n.schema_string = text;
    if (config) n.configuration = config;
    rc = dl_snapshot_with_metadata(out, s, &n);
  }
  free(text);
  free(config);
  return rc;
}
