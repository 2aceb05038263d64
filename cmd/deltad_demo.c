/* deltad_demo.c: creates the demo objects for `deltad --demo` by calling the service
 * handlers in-process as the admin (the same code path as a gRPC or REST call):
 *   catalog `demo`, schema `demo.default`, storage location `demo-tables` (LOCAL, at the
 *   directory `lake` beside the data directory: ./lake for ./data), and the Delta table
 *   lake/trips (deltad_demo_table.c). Tables never live inside the data directory (the
 *   server refuses them there). Objects that already exist are kept. */
#include "cmd/deltad_demo.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/credentials/v1/credentials.pb-c.h"

/* Calls one method of the app's table as the admin; an ALREADY_EXISTS answer is success. */
static int demo_call(dd_app *app, const char *path, const ProtobufCMessage *req) {
  size_t n = 0;
  const dd_method *m = dd_app_methods(&n);
  for (size_t i = 0; i < n; i++) {
    if (strcmp(m[i].path, path) != 0) continue;
    dd_principal admin = {.kind = DD_PRINCIPAL_ADMIN, .name = "admin", .id = ""};
    dd_call call = {.principal = &admin, .app = app};
    ProtobufCMessage *resp = NULL;
    int rc = m[i].fn(&call, req, &resp);
    if (resp) protobuf_c_message_free_unpacked(resp, NULL);
    return rc == DD_EEXISTS ? 0 : rc;
  }
  return dd_err_set(DD_EINTERNAL, "demo: method %s is not served", path);
}

int dd_demo_setup(dd_app *app, const char *data_dir) {
  char tables[PATH_MAX + 16], abs_dir[PATH_MAX], url[PATH_MAX + 32];
  int rc;

  Deltad__Catalog__V1__CreateCatalogRequest cat = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cat.name = "demo";
  cat.comment = "Created by deltad --demo";
  if ((rc = demo_call(app, "/deltad.catalog.v1.CatalogService/CreateCatalog", &cat.base)))
    return dd_err_wrap(rc, "demo catalog");

  Deltad__Catalog__V1__CreateSchemaRequest sch = DELTAD__CATALOG__V1__CREATE_SCHEMA_REQUEST__INIT;
  sch.name = "default";
  sch.catalog_name = "demo";
  sch.comment = "Created by deltad --demo";
  if ((rc = demo_call(app, "/deltad.catalog.v1.CatalogService/CreateSchema", &sch.base)))
    return dd_err_wrap(rc, "demo schema");

  if (!realpath(data_dir, abs_dir)) return dd_err_set(DD_EIO, "demo: cannot resolve %s", data_dir);
  char *slash = strrchr(abs_dir, '/');
  if (!slash || slash == abs_dir)
    return dd_err_set(DD_EINVAL, "demo: the data directory %s has no parent for ./lake", abs_dir);
  *slash = 0;
  snprintf(tables, sizeof tables, "%s/lake", abs_dir);
  if (mkdir(tables, 0700) != 0 && errno != EEXIST)
    return dd_err_set(DD_EIO, "demo: create %s: %s", tables, strerror(errno));
  snprintf(url, sizeof url, "file://%s", tables);
  Deltad__Credentials__V1__CreateStorageLocationRequest loc =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__INIT;
  loc.name = "demo-tables";
  loc.url = url;
  loc.type = DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL;
  loc.description = "Tables created by deltad --demo";
  if ((rc = demo_call(app, "/deltad.credentials.v1.CredentialService/CreateStorageLocation",
                      &loc.base)))
    return dd_err_wrap(rc, "demo storage location");
  char table[PATH_MAX + 32];
  snprintf(table, sizeof table, "%s/trips", tables);
  return dd_demo_table(table);
}
