/* dop_convert.c: CONVERT TO DELTA of a Parquet directory. Walks the directory (hidden
 * names skipped), expects partition directories "<col>=<value>" in the order of the given
 * partition schema (a DDL column list) and data files at the leaf level, reads each file's
 * footer (store/parquet) for the schema and row count, and commits version 0 with protocol
 * (1,2), the schema (data columns, then partition columns), an add per file (stats
 * numRecords) and commitInfo CONVERT {numFiles, partitionedBy, collectStats} /
 * {numConvertedFiles}. A directory that already is a Delta table is left alone. A symlink
 * anywhere in the tree is PERMISSION_DENIED: it is neither followed nor added. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/deltaops/dop_int.h"
#include "store/parquet/pq.h"

static const dop_col CONVERT_COLS[] = {{"identifier", "string", false}};

/* ---- Parquet schema to Delta types ---- */

static json_t *pq_type_json(const pq_field *f);

static json_t *struct_json(const pq_field *g) {
  json_t *fields = json_array();
  for (uint32_t i = 0; fields && i < g->num_children; i++) {
    const pq_field *c = &g->children[i];
    json_t *t = pq_type_json(c);
    if (!t) return json_decref(fields), NULL;
    json_array_append_new(fields, json_pack("{s:s,s:o,s:b,s:{}}", "name", c->name, "type", t, "nullable",
                                            c->repetition != PQ_REQUIRED, "metadata"));
  }
  return json_pack("{s:s,s:o}", "type", "struct", "fields", fields);
}

static json_t *leaf_json(const pq_field *f) {
  char b[40];
  const pq_logical *lt = &f->logical;
  bool dec = lt->kind == PQ_LT_DECIMAL || f->converted == PQ_CT_DECIMAL;
  if (dec) {
    snprintf(b, sizeof b, "decimal(%d,%d)", lt->kind == PQ_LT_DECIMAL ? lt->precision : f->precision,
             lt->kind == PQ_LT_DECIMAL ? lt->scale : f->scale);
    return json_string(b);
  }
  switch (f->type) {
    case PQ_T_BOOLEAN: return json_string("boolean");
    case PQ_T_INT32:
      if (lt->kind == PQ_LT_DATE || f->converted == PQ_CT_DATE) return json_string("date");
      if (f->converted == PQ_CT_INT_8 || (lt->kind == PQ_LT_INTEGER && lt->bit_width == 8)) return json_string("byte");
      if (f->converted == PQ_CT_INT_16 || (lt->kind == PQ_LT_INTEGER && lt->bit_width == 16)) return json_string("short");
      return json_string("integer");
    case PQ_T_INT64:
      if (lt->kind == PQ_LT_TIMESTAMP) return json_string(lt->adjusted_to_utc ? "timestamp" : "timestamp_ntz");
      if (f->converted == PQ_CT_TIMESTAMP_MICROS || f->converted == PQ_CT_TIMESTAMP_MILLIS) return json_string("timestamp");
      return json_string("long");
    case PQ_T_INT96: return json_string("timestamp");
    case PQ_T_FLOAT: return json_string("float");
    case PQ_T_DOUBLE: return json_string("double");
    case PQ_T_BYTE_ARRAY: return json_string(f->is_string ? "string" : "binary");
    case PQ_T_FIXED_LEN_BYTE_ARRAY: return json_string("binary");
    default: return NULL;
  }
}

/* The element node of a LIST-shaped node (3-level or 2-level, resolved by structure). */
static const pq_field *list_element(const pq_field *f) {
  if (f->repetition == PQ_REPEATED && f->num_children == 0) return f; /* bare repeated leaf */
  const pq_field *rep = f->num_children ? &f->children[0] : NULL;
  if (!rep) return NULL;
  if (rep->num_children == 1 && rep->type == PQ_T_GROUP) return &rep->children[0];
  return rep;
}

static json_t *pq_type_json(const pq_field *f) {
  if (f->shape == PQ_SHAPE_LIST) {
    const pq_field *e = list_element(f);
    json_t *et = e == f ? leaf_json(f) : e ? pq_type_json(e) : NULL;
    return et ? json_pack("{s:s,s:o,s:b}", "type", "array", "elementType", et, "containsNull",
                          e->repetition != PQ_REQUIRED) : NULL;
  }
  if (f->shape == PQ_SHAPE_MAP) {
    const pq_field *kv = f->num_children ? &f->children[0] : NULL;
    if (!kv || kv->num_children != 2) return NULL;
    json_t *k = pq_type_json(&kv->children[0]), *v = pq_type_json(&kv->children[1]);
    if (!k || !v) return json_decref(k), json_decref(v), NULL;
    return json_pack("{s:s,s:o,s:o,s:b}", "type", "map", "keyType", k, "valueType", v, "valueContainsNull",
                     kv->children[1].repetition != PQ_REQUIRED);
  }
  if (f->shape == PQ_SHAPE_STRUCT) return struct_json(f);
  return leaf_json(f);
}

/* ---- the walk ---- */

typedef struct pfile {
  char *path;     /* relative */
  char *pvals;    /* packed partition values */
  int64_t size, mtime, rows;
} pfile;

typedef struct conv {
  const char *location;
  os_store *st;
  json_t *pfields;   /* partition schema fields or NULL */
  size_t nparts;
  json_t *schema_fields; /* merged data fields */
  pfile *f;
  size_t n, cap;
  const char *keys[64], *vals[64];
  char *valbuf[64];
  dop_progress_fn progress;
  void *pctx;
} conv;

static char *hive_unescape(const char *s) {
  char *o = malloc(strlen(s) + 1), *q = o;
  for (; o && *s; s++) {
    if (*s == '%' && s[1] && s[2]) {
      char h[3] = {s[1], s[2], 0};
      *q++ = (char)strtol(h, NULL, 16);
      s += 2;
    } else *q++ = *s;
  }
  if (o) *q = '\0';
  return o;
}

static int merge_schema(conv *c, const char *abs, int64_t *rows) {
  pq_file *pf = NULL;
  uint8_t *buf = NULL; /* a file in object storage, read whole (the footer is at its end) */
  size_t len = 0;
  int rc = os_is_local(abs) ? pq_file_open_path(&pf, abs) : os_read_all(c->st, abs, &buf, &len);
  if (!rc && buf) rc = pq_file_open_mem(&pf, buf, len);
  if (rc) return free(buf), dd_err_wrap(rc, "convert: %s is not a readable Parquet file", abs);
  *rows = pq_file_num_rows(pf);
  json_t *st = struct_json(pq_file_schema(pf));
  pq_file_free(pf);
  free(buf);
  if (!st) return dd_err_set(DD_EUNSUPPORTED, "convert: cannot map the Parquet schema of %s", abs);
  json_t *fields = json_object_get(st, "fields"), *fl, *g;
  size_t i, j;
  json_array_foreach(fields, i, fl) {
    bool have = false;
    json_array_foreach(c->schema_fields, j, g)
      have |= !strcmp(json_string_value(json_object_get(g, "name")), json_string_value(json_object_get(fl, "name")));
    if (!have) json_array_append(c->schema_fields, fl);
  }
  json_decref(st);
  return 0;
}

static int add_file(conv *c, const char *rel, const os_entry *e, size_t depth) {
  if (depth != c->nparts)
    return dd_err_set(DD_EINVAL, "convert: data file %s is not at the partition depth %zu "
                      "(give the partition schema)", rel, c->nparts);
  if (c->n == c->cap) {
    size_t cap = c->cap ? c->cap * 2 : 64;
    pfile *n = realloc(c->f, cap * sizeof *n);
    if (!n) return DOP_OOM();
    c->f = n;
    c->cap = cap;
  }
  pfile *p = &c->f[c->n];
  memset(p, 0, sizeof *p);
  p->size = e->size;
  p->mtime = e->mtime_ms;
  char *abs = dop__abs_path(c->location, rel);
  int rc = abs ? merge_schema(c, abs, &p->rows) : DOP_OOM();
  free(abs);
  if (!rc && !(p->path = strdup(rel))) rc = DOP_OOM();
  if (!rc) rc = dl_kv_pack(&p->pvals, c->keys, c->vals, depth);
  if (!rc) c->n++;
  else free(p->path), free(p->pvals);
  if (c->progress && c->n % 256 == 0) c->progress(c->pctx, "converting", c->n, 0);
  return rc;
}

static int walk(conv *c, const char *dir, size_t depth) {
  os_list l = {0};
  int rc = os_list_dir(c->st, dir, &l);
  if (rc) return rc;
  for (size_t i = 0; i < l.count && !rc; i++) {
    const os_entry *e = &l.entries[i];
    if (e->name[0] == '_' || e->name[0] == '.') continue;
    if (e->is_link) { /* never follows a symlink out of the directory, nor adds one */
      rc = dd_err_set(DD_EPERM, "convert: %s%s%s is a symlink (not followed)", dir, *dir ? "/" : "", e->name);
      break;
    }
    char *rel = NULL;
    if (asprintf(&rel, "%s%s%s", dir, *dir ? "/" : "", e->name) < 0) { rc = DOP_OOM(); break; }
    if (!e->is_dir) {
      rc = add_file(c, rel, e, depth);
    } else {
      const char *eq = strchr(e->name, '=');
      json_t *pf = depth < c->nparts ? json_array_get(c->pfields, depth) : NULL;
      const char *want = pf ? json_string_value(json_object_get(pf, "name")) : NULL;
      if (!eq || !want || (size_t)(eq - e->name) != strlen(want) || strncasecmp(e->name, want, strlen(want)))
        rc = dd_err_set(DD_EINVAL, "convert: directory %s does not match the partition schema "
                        "(expected %s=<value>)", rel, want ? want : "no partition directory");
      if (!rc) {
        free(c->valbuf[depth]);
        c->valbuf[depth] = hive_unescape(eq + 1);
        if (!c->valbuf[depth]) rc = DOP_OOM();
        c->keys[depth] = want;
        c->vals[depth] = c->valbuf[depth] && strcmp(c->valbuf[depth], "__HIVE_DEFAULT_PARTITION__") ? c->valbuf[depth] : NULL;
      }
      if (!rc) rc = walk(c, rel, depth + 1);
    }
    free(rel);
  }
  os_list_free(&l);
  return rc;
}

/* ---- commit ---- */

static int commit_convert(conv *c, dl_table *t) {
  dl_txn *txn = NULL;
  json_t *fields = json_deep_copy(c->schema_fields), *pf, *pcols = json_array();
  size_t i;
  json_array_foreach(c->pfields, i, pf) {
    json_array_append(pcols, json_object_get(pf, "name"));
    json_array_append(fields, pf);
  }
  json_t *sj = json_pack("{s:s,s:o}", "type", "struct", "fields", fields);
  char *schema = sj ? json_dumps(sj, JSON_COMPACT) : NULL;
  json_decref(sj);
  const char *pnames[64];
  for (i = 0; i < c->nparts; i++) pnames[i] = json_string_value(json_object_get(json_array_get(c->pfields, i), "name"));
  dl_protocol p = {1, 2, 0, 0, NULL, NULL};
  dl_metadata_spec md = {NULL, NULL, NULL, schema, c->nparts, pnames, NULL, -1};
  int rc = schema ? dl_txn_begin(&txn, t, NULL) : DOP_OOM();
  if (!rc) rc = dl_txn_set_protocol(txn, &p);
  if (!rc) rc = dl_txn_set_metadata(txn, &md);
  for (i = 0; i < c->n && !rc; i++) {
    char stats[64];
    snprintf(stats, sizeof stats, "{\"numRecords\":%lld}", (long long)c->f[i].rows);
    dl_file f = {.path = c->f[i].path, .size = c->f[i].size, .modification_time = c->f[i].mtime,
                 .deletion_timestamp = -1, .data_change = true, .stats = stats,
                 .partition_values = c->f[i].pvals, .base_row_id = -1, .default_row_commit_version = -1};
    rc = dl_txn_add_file(txn, &f);
  }
  char *pb = json_dumps(pcols, JSON_COMPACT);
  json_t *params = json_pack("{s:I,s:s,s:b}", "numFiles", (json_int_t)c->n, "partitionedBy", pb ? pb : "[]",
                             "collectStats", 0);
  json_t *m = json_object();
  dop__metric(m, "numConvertedFiles", (int64_t)c->n);
  if (!rc) rc = dop__commit(txn, "CONVERT", params, m, NULL);
  else json_decref(params), json_decref(m);
  free(pb);
  free(schema);
  json_decref(pcols);
  dl_txn_free(txn);
  return rc;
}

int dop_convert(dop_result **out, const char *identifier, const char *partition_schema,
                dop_progress_fn progress, void *progress_ctx) {
  *out = NULL;
  char *loc = NULL, *ident = NULL;
  dl_table *t = NULL;
  conv c = {.progress = progress, .pctx = progress_ctx, .schema_fields = json_array()};
  int rc = dop_resolve_table(&loc, identifier, true);
  if (rc) goto cleanup;
  c.location = loc;
  if (partition_schema && *partition_schema) {
    if ((rc = dop__ddl_fields(&c.pfields, partition_schema))) goto cleanup;
    c.nparts = json_array_size(c.pfields);
    if (c.nparts > 64) { rc = dd_err_set(DD_EINVAL, "convert: too many partition columns"); goto cleanup; }
  }
  if (!dop__has_log(loc)) {
    if ((rc = os_open(&c.st, loc))) goto cleanup;
    if ((rc = walk(&c, "", 0))) {
      if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ENOTFOUND, "convert: directory %s does not exist", loc);
      goto cleanup;
    }
    if (!c.n) { rc = dd_err_set(DD_EPRECOND, "convert: no Parquet files under %s", loc); goto cleanup; }
    if ((rc = dl_table_open(&t, loc)) || (rc = commit_convert(&c, t))) goto cleanup;
  }
  dop_cell *row;
  if (asprintf(&ident, "delta.`%s`", loc) < 0) { ident = NULL; rc = DOP_OOM(); goto cleanup; }
  if (!(rc = dop__result_new(out, CONVERT_COLS, 1)) && !(rc = dop__result_row(*out, &row)))
    rc = dop__cell_str(row, ident);
cleanup:
  for (size_t i = 0; i < c.n; i++) free(c.f[i].path), free(c.f[i].pvals);
  for (size_t i = 0; i < 64; i++) free(c.valbuf[i]);
  free(c.f);
  json_decref(c.pfields);
  json_decref(c.schema_fields);
  os_store_free(c.st);
  dl_table_free(t);
  free(ident);
  free(loc);
  if (rc && *out) dop_result_free(*out), *out = NULL;
  return rc;
}
