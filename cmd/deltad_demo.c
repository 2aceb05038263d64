/* deltad_demo.c: creates the demo objects for `deltad --demo` by running methods in-process
 * as the admin through the call core (dd_call_run: the path of every gRPC or REST call):
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

static const char *demo_header(void *cls, const char *name) {
  (void)cls;
  (void)name;
  return NULL;
}

static int demo_discard(void *cls, const ProtobufCMessage *msg) {
  (void)cls;
  (void)msg;
  return 0;
}

/* Runs one method as the admin; an ALREADY_EXISTS answer is success. */
static int demo_call(const dd_call_registry *reg, const char *path, const ProtobufCMessage *req) {
  const dd_method *m = dd_call_find(reg, path, strlen(path));
  if (!m) return dd_err_set(DD_EINTERNAL, "demo: method %s is not served", path);
  dd_principal admin = {.kind = DD_PRINCIPAL_ADMIN, .name = "admin", .id = ""};
  dd_call_sink sink = {.cls = NULL, .header = demo_header, .send = demo_discard};
  dd_call_result res;
  int rc = dd_call_run(reg, m, req, &admin, 0, &sink, &res);
  return rc == DD_EEXISTS ? 0 : rc;
}

int dd_demo_setup(const dd_call_registry *reg, const char *data_dir) {
  char tables[PATH_MAX + 16], abs_dir[PATH_MAX], url[PATH_MAX + 32];
  int rc;

  Deltad__Catalog__V1__CreateCatalogRequest cat = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cat.name = "demo";
  cat.comment = "Created by deltad --demo";
  if ((rc = demo_call(reg, "/deltad.catalog.v1.CatalogService/CreateCatalog", &cat.base)))
    return dd_err_wrap(rc, "demo catalog");

  Deltad__Catalog__V1__CreateSchemaRequest sch = DELTAD__CATALOG__V1__CREATE_SCHEMA_REQUEST__INIT;
  sch.name = "default";
  sch.catalog_name = "demo";
  sch.comment = "Created by deltad --demo";
  if ((rc = demo_call(reg, "/deltad.catalog.v1.CatalogService/CreateSchema", &sch.base)))
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
  if ((rc = demo_call(reg, "/deltad.credentials.v1.CredentialService/CreateStorageLocation",
                      &loc.base)))
    return dd_err_wrap(rc, "demo storage location");
  char table[PATH_MAX + 32];
  snprintf(table, sizeof table, "%s/trips", tables);
  return dd_demo_table(table);
}
