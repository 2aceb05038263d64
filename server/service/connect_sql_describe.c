/* connect_sql_describe.c: the column listings of SQL, as Spark with Delta answers them:
 * DESCRIBE [TABLE] t (col_name, data_type, comment: one row per column, then for a
 * partitioned table "# Partition Information", "# col_name" and one row per partition
 * column) and SHOW COLUMNS IN t (col_name). Types are Spark's simpleString; comments come
 * from the field metadata's "comment". */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_sql.h"
#include "store/scan/scn.h"

typedef struct desc_out {
  arw_schema *s;
  arw_batch *b;
  int name, type, comment;
} desc_out;

static int row(desc_out *d, const char *name, const char *type, const char *comment) {
  int rc = arw_append_str(d->b, d->name, name, strlen(name));
  if (!rc && d->type >= 0) rc = arw_append_str(d->b, d->type, type, strlen(type));
  if (!rc && d->comment >= 0) rc = comment ? arw_append_str(d->b, d->comment, comment, strlen(comment))
                                           : arw_append_null(d->b, d->comment);
  return rc;
}

/* Column c's row: its name, type (from the scan's Arrow schema) and metadata comment. */
static int column_row(desc_out *d, const arw_schema *as, const dl_field *f, size_t c) {
  char *type = NULL;
  int rc = d->type >= 0 ? qry_type_string(&type, as, arw_schema_column(as, c)) : 0;
  json_t *md = f->metadata_json ? json_loads(f->metadata_json, 0, NULL) : NULL;
  const char *comment = json_string_value(json_object_get(md, "comment"));
  if (!rc) rc = row(d, f->name, type ? type : "", comment);
  json_decref(md);
  free(type);
  return rc;
}

static int columns(desc_out *d, dl_snapshot *snap) {
  const dl_type *root = dl_schema_root(dl_snapshot_schema(snap));
  const dl_metadata *md = dl_snapshot_metadata(snap);
  arw_schema *as = NULL;
  int rc = arw_schema_new(&as);
  if (!rc) rc = scn_arrow_schema(as, root, NULL, 0);
  for (size_t c = 0; !rc && c < root->num_fields; c++) rc = column_row(d, as, &root->fields[c], c);
  if (!rc && d->type >= 0 && md->num_partition_columns) {
    if (!(rc = row(d, "# Partition Information", "", ""))) rc = row(d, "# col_name", "data_type", "comment");
    for (size_t p = 0; !rc && p < md->num_partition_columns; p++)
      for (size_t c = 0; !rc && c < root->num_fields; c++)
        if (!strcmp(root->fields[c].name, md->partition_columns[p])) rc = column_row(d, as, &root->fields[c], c);
  }
  arw_schema_free(as);
  return rc;
}

int connect_sql_columns(qry_op **out, const char *location, bool describe) {
  *out = NULL;
  desc_out d = {NULL, NULL, 0, -1, -1};
  dl_table *t = NULL;
  dl_snapshot *snap = NULL;
  int rc = dl_table_open(&t, location);
  if (!rc) rc = dl_snapshot_open(&snap, t, NULL);
  if (!rc) rc = arw_schema_new(&d.s);
  if (!rc) rc = arw_schema_add(d.s, ARW_ROOT, "col_name", ARW_UTF8, false, &d.name);
  if (!rc && describe) rc = arw_schema_add(d.s, ARW_ROOT, "data_type", ARW_UTF8, false, &d.type);
  if (!rc && describe) rc = arw_schema_add(d.s, ARW_ROOT, "comment", ARW_UTF8, true, &d.comment);
  if (!rc) rc = arw_batch_new(&d.b, d.s);
  if (!rc) rc = columns(&d, snap);
  dl_snapshot_free(snap);
  dl_table_free(t);
  if (rc) {
    arw_batch_free(d.b);
    arw_schema_free(d.s);
    return rc;
  }
  return qry_local(out, d.s, &d.b, 1);
}
