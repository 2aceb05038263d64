/* tables_svc.c: deltad.tables.v1.TablesService: Delta tables in the catalog, admin only.
 * EXTERNAL tables are registered where they are (the location must lie under a storage
 * location and hold a Delta table); MANAGED tables are created empty under the schema's (or
 * catalog's) storage_root at <root>/tables/<table id>. GetTable adds what the table's latest
 * snapshot says. A dropped MANAGED table waits managed_retention_s (dd_app_opts) for an
 * undrop; its files are deleted by the purge that runs at start and at every DeleteTable,
 * UndropTable and ListDroppedTables call. Changes are audited as every admin change is
 * (audit_svc.c, by method name). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "common/log.h"
#include "google/protobuf/empty.pb-c.h"
#include "server/service/svc_util.h"
#include "server/service/tables_int.h"

#define TS_REQ(type) const Deltad__Tables__V1__##type *req = (const void *)msg

/* ---- locations ----------------------------------------------------------------------------- */

/* loc as recorded: an absolute path becomes a file:// URL; trailing '/'s go. */
static int ts__norm_loc(char **out, const char *loc) {
  size_t n = loc ? strlen(loc) : 0;
  while (n > 1 && loc[n - 1] == '/') n--;
  *out = NULL;
  if (n == 0) return dd_err_set(DD_EINVAL, "storage_location: required for an EXTERNAL table");
  if (asprintf(out, "%s%.*s", loc[0] == '/' ? "file://" : "", (int)n, loc) < 0)
    return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

static bool ts__is(const char *v, const char *want) { return v && !strcasecmp(v, want); }

/* ---- purge --------------------------------------------------------------------------------- */

void dd_tables_purge(dd_app *app) {
  cat_store *s = dd_app_store(app);
  int64_t keep_ms = dd_app_options(app)->managed_retention_s * 1000;
  struct timespec now;
  clock_gettime(CLOCK_REALTIME, &now);
  int64_t cutoff = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - keep_ms;
  Deltad__Tables__V1__ListTablesResponse *due = NULL;
  if (cat_dtable_purge_due(s, &due, cutoff, 100)) {
    dd_log(DD_LOG_WARN, "purge of dropped tables: %s", dd_err_msg());
    return;
  }
  for (size_t i = 0; i < due->n_tables; i++) {
    const cat_dtable *t = due->tables[i];
    int rc = ts_delete_files(t->storage_location);
    if (!rc) rc = cat_dtable_purge_done(s, t->table_id);
    if (rc) dd_log(DD_LOG_WARN, "purge of dropped table %s at %s: %s (kept for the next purge)",
                   t->table_id, t->storage_location, dd_err_msg());
    else dd_log(DD_LOG_INFO, "purged dropped table %s (%s)", t->table_id, t->storage_location);
  }
  protobuf_c_message_free_unpacked(&due->base, NULL);
}

/* ---- create -------------------------------------------------------------------------------- */

static int ts__create_external(dd_call *call, cat_dtable **out,
                               const Deltad__Tables__V1__CreateTableRequest *req) {
  cat_store *s = svc_store(call);
  char *loc = NULL;
  int rc = ts__norm_loc(&loc, req->storage_location);
  if (!rc) rc = cat_location_confine(s, NULL, "storage_location", loc);
  if (!rc) rc = ts_check_delta(loc);
  cat_dtable_new nw = {req, loc, false, NULL};
  if (!rc) rc = cat_dtable_create(s, out, svc_actor(call), &nw);
  free(loc);
  return rc;
}

static int ts__create_managed(dd_call *call, cat_dtable **out,
                              const Deltad__Tables__V1__CreateTableRequest *req) {
  cat_store *s = svc_store(call);
  char *root = NULL, *base = NULL, *loc = NULL, full[3 * 256 + 3], id[37];
  cat_dtable *old = NULL;
  if (req->storage_location && *req->storage_location)
    return dd_err_set(DD_EINVAL, "storage_location: a MANAGED table's location is chosen by the "
                      "server (under the schema's storage_root); leave it empty");
  int rc = cat_dtable_storage_root(s, &root, req->catalog_name, req->schema_name);
  if (!rc) rc = ts__norm_loc(&base, root);
  if (!rc) rc = cat_new_id(id);
  if (!rc && asprintf(&loc, "%s/tables/%s", base, id) < 0) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = cat_location_confine(s, NULL, "storage_root", loc);
  /* a name already taken is refused before any file is written */
  snprintf(full, sizeof full, "%s.%s.%s", req->catalog_name, req->schema_name, req->name);
  if (!rc && (rc = cat_dtable_get(s, &old, full)) == 0) rc = dd_err_set(DD_EEXISTS, "table '%s' already exists", full);
  else if (rc == DD_ENOTFOUND) rc = 0;
  if (!rc) rc = ts_create_empty(req, loc);
  cat_dtable_new nw = {req, loc, true, id};
  if (!rc && (rc = cat_dtable_create(s, out, svc_actor(call), &nw)) != 0) {
    int keep = rc;
    char *why = strdup(dd_err_msg());
    if (ts_delete_files(loc)) dd_log(DD_LOG_WARN, "managed table %s: files left at %s: %s", full, loc, dd_err_msg());
    rc = dd_err_set(keep, "%s", why ? why : "out of memory");
    free(why);
  }
  if (old) protobuf_c_message_free_unpacked(&old->base, NULL);
  free(root);
  free(base);
  free(loc);
  return rc;
}

static int ts_create(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  TS_REQ(CreateTableRequest);
  cat_dtable *t = NULL;
  int rc = svc_require_admin(call);
  if (!rc && req->data_source_format && *req->data_source_format && !ts__is(req->data_source_format, "DELTA"))
    rc = dd_err_set(DD_EINVAL, "data_source_format: only DELTA tables are kept here, not '%s'",
                    req->data_source_format);
  if (!rc) rc = cat_name_check("catalog_name", req->catalog_name, 0);
  if (!rc) rc = cat_name_check("schema_name", req->schema_name, 0);
  if (!rc) rc = cat_name_check("name", req->name, 0);
  if (rc) return svc_reply(out, NULL, rc);
  if (!req->table_type || !*req->table_type || ts__is(req->table_type, "EXTERNAL"))
    rc = req->n_columns ? dd_err_set(DD_EINVAL, "columns: an EXTERNAL table's columns are its Delta schema's")
                        : ts__create_external(call, &t, req);
  else if (ts__is(req->table_type, "MANAGED")) rc = ts__create_managed(call, &t, req);
  else rc = dd_err_set(DD_EINVAL, "table_type: EXTERNAL or MANAGED, not '%s'", req->table_type);
  if (!rc) rc = ts_snapshot_fill(t);
  return svc_reply(out, t ? &t->base : NULL, rc);
}

/* ---- get / list / update ------------------------------------------------------------------- */

static int ts_get(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  TS_REQ(GetTableRequest);
  cat_dtable *t = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_dtable_get(svc_store(call), &t, req->full_name);
  if (!rc) rc = ts_snapshot_fill(t);
  return svc_reply(out, t ? &t->base : NULL, rc);
}

static int ts_list(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  TS_REQ(ListTablesRequest);
  Deltad__Tables__V1__ListTablesResponse *r = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_dtable_list(svc_store(call), &r, req);
  return svc_reply(out, r ? &r->base : NULL, rc);
}

static int ts_update(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  TS_REQ(UpdateTableRequest);
  cat_dtable *t = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_dtable_update(svc_store(call), &t, svc_actor(call), req);
  return svc_reply(out, t ? &t->base : NULL, rc);
}

/* ---- drop / undrop ------------------------------------------------------------------------- */

static int ts_delete(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  TS_REQ(DeleteTableRequest);
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_dtable_delete(svc_store(call), NULL, req->full_name);
  if (!rc) dd_tables_purge(call->app);
  return svc_reply_empty(out, rc);
}

static int ts_undrop(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  TS_REQ(UndropTableRequest);
  cat_dtable *t = NULL;
  int rc = svc_require_admin(call);
  if (!rc) dd_tables_purge(call->app); /* what is past its window cannot come back */
  if (!rc) rc = cat_dtable_undrop(svc_store(call), &t, svc_actor(call), req->full_name, req->table_id);
  if (!rc) rc = ts_snapshot_fill(t);
  return svc_reply(out, t ? &t->base : NULL, rc);
}

static int ts_list_dropped(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  TS_REQ(ListDroppedTablesRequest);
  Deltad__Tables__V1__ListTablesResponse *r = NULL;
  int rc = svc_require_admin(call);
  if (!rc) dd_tables_purge(call->app);
  if (!rc) rc = cat_dtable_list_dropped(svc_store(call), &r, req->catalog_name, req->schema_name);
  return svc_reply(out, r ? &r->base : NULL, rc);
}

/* ---- temporary credentials ----------------------------------------------------------------- */

static int ts_temp_cred(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  TS_REQ(GenerateTemporaryTableCredentialRequest);
  cat_dtable *t = NULL;
  int rc = svc_require_admin(call);
  if (!rc && req->operation && *req->operation && !ts__is(req->operation, "READ") &&
      !ts__is(req->operation, "READ_WRITE"))
    rc = dd_err_set(DD_EINVAL, "operation: READ or READ_WRITE, not '%s'", req->operation);
  if (!rc) rc = cat_dtable_get_by_id(svc_store(call), &t, req->table_id);
  if (!rc && t->deleted_at) rc = dd_err_set(DD_ENOTFOUND, "table id '%s' not found (dropped)", req->table_id);
  Deltad__Tables__V1__TemporaryCredentials *res = NULL;
  if (!rc) rc = ts_temporary_credentials(&res, svc_store(call), t, ts__is(req->operation, "READ_WRITE"));
  if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
  return svc_reply(out, res ? &res->base : NULL, rc);
}

/* ---- the table ----------------------------------------------------------------------------- */

#define TS_METHOD(name, fn, in, outd)                                                   \
  {"/deltad.tables.v1.TablesService/" name, &deltad__tables__v1__##in##__descriptor,   \
   &outd, fn, 0}

const dd_method dd_tables_methods[] = {
    TS_METHOD("CreateTable", ts_create, create_table_request, deltad__tables__v1__table_info__descriptor),
    TS_METHOD("GetTable", ts_get, get_table_request, deltad__tables__v1__table_info__descriptor),
    TS_METHOD("ListTables", ts_list, list_tables_request, deltad__tables__v1__list_tables_response__descriptor),
    TS_METHOD("UpdateTable", ts_update, update_table_request, deltad__tables__v1__table_info__descriptor),
    TS_METHOD("DeleteTable", ts_delete, delete_table_request, google__protobuf__empty__descriptor),
    TS_METHOD("UndropTable", ts_undrop, undrop_table_request, deltad__tables__v1__table_info__descriptor),
    TS_METHOD("ListDroppedTables", ts_list_dropped, list_dropped_tables_request,
              deltad__tables__v1__list_tables_response__descriptor),
    TS_METHOD("GenerateTemporaryTableCredential", ts_temp_cred, generate_temporary_table_credential_request,
              deltad__tables__v1__temporary_credentials__descriptor),
};
const size_t dd_tables_methods_len = sizeof dd_tables_methods / sizeof dd_tables_methods[0];
