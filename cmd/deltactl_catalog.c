/* deltactl_catalog.c: `deltactl catalog list|create|get|update|delete`, over
 * deltad.catalog.v1.CatalogService. */
#include <stdio.h>
#include <stdlib.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_groups.h"
#include "deltad/catalog/v1/catalog.pb-c.h"

#define CAT_SVC "/deltad.catalog.v1.CatalogService/"

static const dctl_col cat__cols[] = {
    {"NAME", "name", NULL},       {"ID", "id", NULL},       {"COMMENT", "comment", NULL},
    {"CREATED", "create_at", NULL}, {"PROPERTIES", "properties", NULL}, {NULL, NULL, NULL},
};

/* Shared tail of verbs that print one returned object. */
static int cat__print_free(int rc, ProtobufCMessage *resp) {
  if (!rc) rc = dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

static int cat_list(int argc, char **argv) {
  static const dctl_list_spec spec = {
      "usage: deltactl catalog list [--max-results N] [--page-token T] [--all]\n"
      "  Lists catalogs: one page, or every page with --all.\n",
      CAT_SVC "ListCatalogs", &deltad__catalog__v1__list_catalogs_request__descriptor,
      &deltad__catalog__v1__list_catalogs_response__descriptor, NULL, "catalogs", cat__cols, NULL};
  return dctl_run_list(&spec, argc, argv);
}

static int cat_create(int argc, char **argv) {
  const char *comment = NULL, *root = NULL;
  dctl_strv props = {.n = 0};
  const dctl_opt opts[] = {{"--comment", 1, &comment, NULL, NULL},
                           {"--property", 1, NULL, NULL, &props},
                           {"--storage-root", 1, &root, NULL, NULL},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl catalog create NAME [--comment C] [--property K=V ...] [--storage-root URL]\n"
                        "  Creates a catalog; MANAGED tables of its schemas go under --storage-root\n"
                        "  (a path or URL under a storage location) unless the schema has its own.\n",
                        opts, 1, 1};
  const char *pos[1];
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Catalog__V1__CreateCatalogRequest req = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  req.name = (char *)pos[0];
  if (comment) req.comment = (char *)comment;
  void *block;
  if ((rc = dctl_set_map(&req.base, "properties", &props, &block))) return rc;
  char *abs_root = root ? dctl_tbl_abs_path(root) : NULL;
  if (abs_root) req.storage_root = abs_root;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(CAT_SVC "CreateCatalog", &req.base, &deltad__catalog__v1__catalog_info__descriptor, &resp);
  free(abs_root);
  free(block);
  return cat__print_free(rc, resp);
}

static int cat_get(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl catalog get NAME\n  Shows one catalog.\n", CAT_SVC "GetCatalog",
      &deltad__catalog__v1__get_catalog_request__descriptor,
      &deltad__catalog__v1__catalog_info__descriptor, "name", NULL, 0};
  return dctl_run_named(&spec, argc, argv);
}

static int cat_update(int argc, char **argv) {
  const char *comment = NULL, *new_name = NULL;
  dctl_strv props = {.n = 0};
  const dctl_opt opts[] = {{"--new-name", 1, &new_name, NULL, NULL},
                           {"--comment", 1, &comment, NULL, NULL},
                           {"--property", 1, NULL, NULL, &props},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl catalog update NAME [--new-name N] [--comment C] [--property K=V ...]\n"
                        "  Changes a catalog; given properties replace all of its properties.\n",
                        opts, 1, 1};
  const char *pos[1];
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__Catalog__V1__UpdateCatalogRequest req = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST__INIT;
  req.name = (char *)pos[0];
  if (comment) {
    req._comment_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___COMMENT_COMMENT;
    req.comment = (char *)comment;
  }
  if (new_name) {
    req._new_name_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___NEW_NAME_NEW_NAME;
    req.new_name = (char *)new_name;
  }
  void *block;
  if ((rc = dctl_set_map(&req.base, "properties", &props, &block))) return rc;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(CAT_SVC "UpdateCatalog", &req.base, &deltad__catalog__v1__catalog_info__descriptor, &resp);
  free(block);
  return cat__print_free(rc, resp);
}

static int cat_delete(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl catalog delete NAME [--force]\n"
      "  Deletes a catalog; --force also deletes the schemas in it.\n",
      CAT_SVC "DeleteCatalog", &deltad__catalog__v1__delete_catalog_request__descriptor,
      &google__protobuf__empty__descriptor, "name", "deleted catalog %s", 1};
  return dctl_run_named(&spec, argc, argv);
}

static const dctl_verb cat__verbs[] = {
    {"list", cat_list, "list catalogs"},
    {"create", cat_create, "create a catalog"},
    {"get", cat_get, "show a catalog"},
    {"update", cat_update, "rename a catalog or change its comment or properties"},
    {"delete", cat_delete, "delete a catalog"},
    {NULL, NULL, NULL},
};

int dctl_catalog_main(int argc, char **argv) {
  return dctl_group_run("catalog", "Manage catalogs (the top-level namespaces).", cat__verbs, argc, argv);
}
