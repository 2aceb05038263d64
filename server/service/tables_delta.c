/* tables_delta.c: what the TablesService handlers (tables_svc.c) do on the Delta table
 * itself: read a table's latest snapshot into a TableInfo (columns, partition columns,
 * configuration, version), check that a location holds a Delta table, create the empty
 * Delta table of a MANAGED table, and delete a purged MANAGED table's files. */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "server/service/tables_int.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"
#include "store/objstore/os.h"

typedef Deltad__Tables__V1__ColumnInfo ts_col;
typedef Deltad__Tables__V1__TableInfo__TablePropertiesEntry ts_prop;

/* The location as the engine opens it: a file:// URL becomes its path. */
static const char *ts__engine_loc(const char *loc) {
  return !strncmp(loc, "file://", 7) ? loc + 7 : loc;
}

/* ---- snapshot -> TableInfo ----------------------------------------------------------------- */

static char *ts__json_field(json_t *fields, size_t i) {
  json_t *f = json_array_get(fields, i);
  return f ? json_dumps(f, JSON_COMPACT | JSON_PRESERVE_ORDER) : strdup("");
}

static char *ts__comment(const dl_field *f) {
  json_t *m = f->metadata_json ? json_loads(f->metadata_json, 0, NULL) : NULL;
  const char *c = json_string_value(json_object_get(m, "comment"));
  char *r = strdup(c ? c : "");
  json_decref(m);
  return r;
}

static int ts__col(ts_col **out, const dl_field *f, int pos, json_t *fields,
                   const dl_metadata *md) {
  ts_col *c = malloc(sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__tables__v1__column_info__init(c);
  size_t need = dl_type_format(f->type, NULL, 0);
  char *type = malloc(need + 1);
  if (type) dl_type_format(f->type, type, need + 1);
  c->name = strdup(f->name);
  c->type_text = type;
  c->type_json = ts__json_field(fields, (size_t)pos);
  c->comment = ts__comment(f);
  c->nullable = f->nullable;
  c->position = pos;
  for (size_t i = 0; i < md->num_partition_columns; i++)
    if (!strcmp(md->partition_columns[i], f->name)) {
      c->_partition_index_case = DELTAD__TABLES__V1__COLUMN_INFO___PARTITION_INDEX_PARTITION_INDEX;
      c->partition_index = (int32_t)i;
    }
  *out = c;
  if (!c->name || !c->type_text || !c->type_json || !c->comment) return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

static int ts__columns(cat_dtable *t, const dl_snapshot *s) {
  const dl_metadata *md = dl_snapshot_metadata(s);
  const dl_type *root = dl_schema_root(dl_snapshot_schema(s));
  json_t *schema = json_loads(md->schema_string, 0, NULL);
  json_t *fields = json_object_get(schema, "fields");
  int rc = 0;
  t->columns = calloc(root->num_fields ? root->num_fields : 1, sizeof *t->columns);
  if (!t->columns) rc = dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; !rc && i < root->num_fields; i++) {
    rc = ts__col(&t->columns[i], &root->fields[i], (int)i, fields, md);
    if (t->columns[i]) t->n_columns = i + 1;
  }
  json_decref(schema);
  return rc;
}

static int ts__partitions(cat_dtable *t, const dl_metadata *md) {
  if (!md->num_partition_columns) return 0;
  t->partition_columns = calloc(md->num_partition_columns, sizeof *t->partition_columns);
  if (!t->partition_columns) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < md->num_partition_columns; i++) {
    if (!(t->partition_columns[i] = strdup(md->partition_columns[i]))) return dd_err_set(DD_ENOMEM, "out of memory");
    t->n_partition_columns = i + 1;
  }
  return 0;
}

static int ts__config(cat_dtable *t, const dl_metadata *md) {
  const char *cur = md->configuration, *k, *v;
  size_t n = 0;
  while (cur && dl_kv_next(&cur, &k, &v)) n++;
  if (!n) return 0;
  if (!(t->table_properties = calloc(n, sizeof *t->table_properties))) return dd_err_set(DD_ENOMEM, "out of memory");
  cur = md->configuration;
  for (size_t i = 0; i < n && dl_kv_next(&cur, &k, &v); i++) {
    ts_prop *p = malloc(sizeof *p);
    if (!p) return dd_err_set(DD_ENOMEM, "out of memory");
    deltad__tables__v1__table_info__table_properties_entry__init(p);
    t->table_properties[i] = p;
    t->n_table_properties = i + 1;
    p->key = strdup(k);
    p->value = strdup(v ? v : "");
    if (!p->key || !p->value) return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

static int ts__open_latest(dl_table **t, dl_snapshot **s, const char *loc) {
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  *t = NULL;
  *s = NULL;
  int rc = dl_table_open(t, ts__engine_loc(loc));
  if (!rc) rc = dl_snapshot_open(s, *t, &o);
  return rc;
}

int ts_snapshot_fill(cat_dtable *t) {
  dl_table *tb = NULL;
  dl_snapshot *s = NULL;
  int rc = ts__open_latest(&tb, &s, t->storage_location);
  if (rc) { /* the record stands; say why its table cannot be read */
    char *why = strdup(dd_err_msg());
    if (!why) return dd_err_set(DD_ENOMEM, "out of memory");
    free(t->snapshot_error == protobuf_c_empty_string ? NULL : t->snapshot_error);
    t->snapshot_error = why;
    dl_table_free(tb);
    return 0;
  }
  const dl_metadata *md = dl_snapshot_metadata(s);
  t->_version_case = DELTAD__TABLES__V1__TABLE_INFO___VERSION_VERSION;
  t->version = dl_snapshot_version(s);
  rc = ts__columns(t, s);
  if (!rc) rc = ts__partitions(t, md);
  if (!rc) rc = ts__config(t, md);
  dl_snapshot_free(s);
  dl_table_free(tb);
  return rc;
}

int ts_check_delta(const char *loc) {
  dl_table *tb = NULL;
  dl_snapshot *s = NULL;
  int rc = ts__open_latest(&tb, &s, loc);
  if (rc) rc = dd_err_set(DD_EINVAL, "storage_location: no readable Delta table at '%s': %s", loc, dd_err_msg());
  dl_snapshot_free(s);
  dl_table_free(tb);
  return rc;
}

/* ---- MANAGED: create the empty table ------------------------------------------------------- */

int ts_create_empty(const Deltad__Tables__V1__CreateTableRequest *req, const char *loc) {
  size_t n = req->n_columns;
  if (n == 0) return dd_err_set(DD_EINVAL, "columns: a MANAGED table needs at least one column");
  dop_column *cols = calloc(n, sizeof *cols);
  if (!cols) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i++) {
    const ts_col *c = req->columns[i];
    if (!c->name || !*c->name || !c->type_text || !*c->type_text)
      rc = dd_err_set(DD_EINVAL, "columns[%zu]: name and type_text are required", i);
    cols[i] = (dop_column){.name = c->name, .type = c->type_text, .nullable = c->nullable,
                           .comment = c->comment && *c->comment ? c->comment : NULL};
  }
  dop_create_opts o = {.mode = DOP_CREATE, .location = ts__engine_loc(loc), .name = req->name,
                       .comment = req->comment && *req->comment ? req->comment : NULL,
                       .num_columns = n, .columns = cols,
                       .num_partition_columns = req->n_partition_columns,
                       .partition_columns = (const char *const *)req->partition_columns};
  dop_result *r = NULL;
  if (!rc) rc = dop_create(&r, &o);
  dop_result_free(r);
  free(cols);
  return rc;
}

/* ---- purge: delete a table's files --------------------------------------------------------- */

static int ts__rm_dir(os_store *st, const char *dir) {
  os_list l = {0};
  int rc = os_list_dir(st, dir, &l);
  if (rc == DD_ENOTFOUND) return 0;
  for (size_t i = 0; !rc && i < l.count; i++) {
    char *p = NULL;
    if (asprintf(&p, "%s%s%s", dir, *dir ? "/" : "", l.entries[i].name) < 0) {
      rc = dd_err_set(DD_ENOMEM, "out of memory");
      break;
    }
    rc = l.entries[i].is_dir ? ts__rm_dir(st, p) : os_delete(st, p);
    if (rc == DD_ENOTFOUND) rc = 0;
    free(p);
  }
  os_list_free(&l);
  if (!rc && *dir) {
    rc = os_rmdir(st, dir);
    if (rc == DD_ENOTFOUND || rc == DD_EUNSUPPORTED) rc = 0;
  }
  return rc;
}

int ts_delete_files(const char *loc) {
  os_store *st = NULL;
  int rc = os_open(&st, ts__engine_loc(loc));
  if (rc == DD_ENOTFOUND) return 0;
  if (!rc) rc = ts__rm_dir(st, "");
  os_store_free(st);
  /* a local table's own (now empty) directory goes too; object stores have none */
  const char *path = ts__engine_loc(loc);
  if (!rc && path[0] == '/' && rmdir(path) != 0 && errno != ENOENT)
    rc = dd_err_set(DD_EIO, "remove %s: %s", path, strerror(errno));
  return rc;
}
