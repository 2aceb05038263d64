/* deltactl_schema.c: `deltactl schema list|create|get|update|delete`, over the schema
 * methods of deltad.catalog.v1.CatalogService. Schemas are named CATALOG.SCHEMA. */
#include <stdlib.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_groups.h"
#include "deltad/catalog/v1/catalog.pb-c.h"

#define SCH_SVC "/deltad.catalog.v1.CatalogService/"

static const dctl_col sch__cols[] = {
    {"NAME", "full_name", NULL},    {"ID", "schema_id", NULL},
    {"COMMENT", "comment", NULL},   {"CREATED", "create_at", NULL},
    {"PROPERTIES", "properties", NULL}, {NULL, NULL, NULL},
};

static int sch__print_free(int rc, ProtobufCMessage *resp) {
  if (!rc) rc = dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

static int sch_list(int argc, char **argv) {
  static const dctl_list_spec spec = {
      "usage: deltactl schema list CATALOG [--max-results N] [--page-token T] [--all]\n"
      "  Lists the schemas of a catalog: one page, or every page with --all.\n",
      SCH_SVC "ListSchemas", &deltad__catalog__v1__list_schemas_request__descriptor,
      &deltad__catalog__v1__list_schemas_response__descriptor, "catalog_name", "schemas",
      sch__cols, NULL};
  return dctl_run_list(&spec, argc, argv);
}

static int sch_create(int argc, char **argv) {
  const char *comment = NULL, *root = NULL, *pos[2];
  dctl_strv props = {.n = 0};
  const dctl_opt opts[] = {{"--comment", 1, &comment, NULL, NULL},
                           {"--property", 1, NULL, NULL, &props},
                           {"--storage-root", 1, &root, NULL, NULL},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl schema create CATALOG NAME [--comment C] [--property K=V ...] [--storage-root URL]\n"
                        "  Creates a schema in a catalog; its MANAGED tables go under --storage-root\n"
                        "  (else under the catalog's).\n",
                        opts, 2, 2};
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Catalog__V1__CreateSchemaRequest req = DELTAD__CATALOG__V1__CREATE_SCHEMA_REQUEST__INIT;
  req.catalog_name = (char *)pos[0];
  req.name = (char *)pos[1];
  if (comment) req.comment = (char *)comment;
  void *block;
  if ((rc = dctl_set_map(&req.base, "properties", &props, &block))) return rc;
  char *abs_root = root ? dctl_tbl_abs_path(root) : NULL;
  if (abs_root) req.storage_root = abs_root;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(SCH_SVC "CreateSchema", &req.base, &deltad__catalog__v1__schema_info__descriptor, &resp);
  free(abs_root);
  free(block);
  return sch__print_free(rc, resp);
}

static int sch_get(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl schema get CATALOG.SCHEMA\n  Shows one schema.\n", SCH_SVC "GetSchema",
      &deltad__catalog__v1__get_schema_request__descriptor,
      &deltad__catalog__v1__schema_info__descriptor, "full_name", NULL, 0};
  return dctl_run_named(&spec, argc, argv);
}

static int sch_update(int argc, char **argv) {
  const char *comment = NULL, *new_name = NULL, *pos[1];
  dctl_strv props = {.n = 0};
  const dctl_opt opts[] = {{"--new-name", 1, &new_name, NULL, NULL},
                           {"--comment", 1, &comment, NULL, NULL},
                           {"--property", 1, NULL, NULL, &props},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl schema update CATALOG.SCHEMA [--new-name N] [--comment C] [--property K=V ...]\n"
                        "  Changes a schema; N is the new schema name (without the catalog);\n"
                        "  given properties replace all of its properties.\n",
                        opts, 1, 1};
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Catalog__V1__UpdateSchemaRequest req = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST__INIT;
  req.full_name = (char *)pos[0];
  if (comment) {
    req._comment_case = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___COMMENT_COMMENT;
    req.comment = (char *)comment;
  }
  if (new_name) {
    req._new_name_case = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___NEW_NAME_NEW_NAME;
    req.new_name = (char *)new_name;
  }
  void *block;
  if ((rc = dctl_set_map(&req.base, "properties", &props, &block))) return rc;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(SCH_SVC "UpdateSchema", &req.base, &deltad__catalog__v1__schema_info__descriptor, &resp);
  free(block);
  return sch__print_free(rc, resp);
}

static int sch_delete(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl schema delete CATALOG.SCHEMA [--force]\n"
      "  Deletes a schema; --force also deletes the tables in it.\n",
      SCH_SVC "DeleteSchema", &deltad__catalog__v1__delete_schema_request__descriptor,
      &google__protobuf__empty__descriptor, "full_name", "deleted schema %s", 1};
  return dctl_run_named(&spec, argc, argv);
}

static const dctl_verb sch__verbs[] = {
    {"list", sch_list, "list the schemas of a catalog"},
    {"create", sch_create, "create a schema"},
    {"get", sch_get, "show a schema"},
    {"update", sch_update, "rename a schema or change its comment or properties"},
    {"delete", sch_delete, "delete a schema"},
    {NULL, NULL, NULL},
};

int dctl_schema_main(int argc, char **argv) {
  return dctl_group_run("schema", "Manage schemas (namespaces inside a catalog).", sch__verbs, argc, argv);
}
