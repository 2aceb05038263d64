/* test_catalog.c: deltad.catalog.v1.CatalogService handlers through the method table:
 * every RPC, admin only, error codes and messages, no partial writes. */
#include "svc_test_util.h"

#include "deltad/admin/v1/admin.pb-c.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/credentials/v1/credentials.pb-c.h"
#include "deltad/sharing/v1/sharing.pb-c.h"
#include "deltad/tables/v1/tables.pb-c.h"
#include "server/service/sharing_files.h"

typedef Deltad__Catalog__V1__CatalogInfo CatalogInfo;
typedef Deltad__Catalog__V1__SchemaInfo SchemaInfo;

static int create_catalog(st_env *e, const char *name, const char *comment, CatalogInfo **out) {
  Deltad__Catalog__V1__CreateCatalogRequest req = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  req.name = (char *)name;
  req.comment = (char *)(comment ? comment : "");
  return st_call(e, CATSVC "CreateCatalog", &req, out);
}

static int create_schema(st_env *e, const char *cat, const char *name) {
  Deltad__Catalog__V1__CreateSchemaRequest req = DELTAD__CATALOG__V1__CREATE_SCHEMA_REQUEST__INIT;
  req.catalog_name = (char *)cat;
  req.name = (char *)name;
  return st_call(e, CATSVC "CreateSchema", &req, NULL);
}

static size_t count_catalogs(st_env *e) {
  Deltad__Catalog__V1__ListCatalogsRequest req = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  Deltad__Catalog__V1__ListCatalogsResponse *r = NULL;
  assert_int_equal(st_call(e, CATSVC "ListCatalogs", &req, &r), 0);
  size_t n = r->n_catalogs;
  ST_FREE(r);
  return n;
}

static void test_method_table(void **state) {
  (void)state;
  size_t n = 0;
  const dd_method *m = dd_app_methods(&n);
  assert_int_equal(n, dd_system_methods_len + dd_catalog_methods_len + dd_credential_methods_len +
                          dd_lance_methods_len + dd_connect_delta_methods_len +
                          dd_connect_spark_methods_len + dd_sharing_methods_len +
                          dd_sharing_ext_methods_len + dd_sharing_file_methods_len + dd_admin_methods_len +
                          dd_tables_methods_len);
  const ProtobufCServiceDescriptor *svcs[] = {
      &deltad__catalog__v1__catalog_service__descriptor,
      &deltad__credentials__v1__credential_service__descriptor,
      /* Delta Sharing (sharing branch) */
      &deltad__sharing__v1__delta_sharing_service__descriptor,
      &deltad__sharing__v1__delta_sharing_extension_service__descriptor,
      &deltad__sharing__v1__delta_sharing_file_service__descriptor,
      &deltad__admin__v1__admin_service__descriptor, /* administrators only, unary */
      &deltad__tables__v1__tables_service__descriptor, /* administrators only, unary */
  };
  /* every RPC of the service is in the table with the right message types */
  for (size_t s = 0; s < sizeof svcs / sizeof svcs[0]; s++) {
    for (unsigned i = 0; i < svcs[s]->n_methods; i++) {
      char path[256];
      snprintf(path, sizeof path, "/%s/%s", svcs[s]->name, svcs[s]->methods[i].name);
      const dd_method *dm = st_method(path);
      assert_ptr_equal(dm->input, svcs[s]->methods[i].input);
      assert_ptr_equal(dm->output, svcs[s]->methods[i].output);
      /* unary, needs a token (the sharing protocol also has streaming table calls); only
       * the sharing protocol is open to recipients; a quick method (run on REST's pool
       * thread) is unary */
      unsigned recipient = s == 2 ? DD_METHOD_RECIPIENT : 0;
      assert_int_equal(dm->flags & DD_METHOD_RECIPIENT, recipient);
      if (dm->flags & DD_METHOD_QUICK) assert_int_equal(dm->flags & DD_METHOD_STREAMING, 0);
      assert_int_equal(dm->flags & ~(unsigned)((s >= 2 && s <= 4 ? DD_METHOD_STREAMING : 0) | recipient |
                                               DD_METHOD_QUICK), 0);
    }
  }
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++) assert_string_not_equal(m[i].path, m[j].path);
  size_t n2 = 0;
  assert_ptr_equal(dd_app_methods(&n2), m); /* built once */
}

static void test_catalog_crud(void **state) {
  st_env *e = *state;
  CatalogInfo *c = NULL, *g = NULL;
  assert_int_equal(create_catalog(e, "Main", "first", &c), 0);
  assert_string_equal(c->name, "Main");
  assert_string_equal(c->owner, "admin");
  assert_int_equal(create_catalog(e, "main", NULL, NULL), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "catalog 'main' already exists");

  Deltad__Catalog__V1__GetCatalogRequest get = DELTAD__CATALOG__V1__GET_CATALOG_REQUEST__INIT;
  get.name = "MAIN";
  assert_int_equal(st_call(e, CATSVC "GetCatalog", &get, &g), 0);
  assert_string_equal(g->id, c->id);
  ST_FREE(g);

  Deltad__Catalog__V1__UpdateCatalogRequest up = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST__INIT;
  up.name = "main";
  up._new_name_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___NEW_NAME_NEW_NAME;
  up.new_name = "prod";
  assert_int_equal(st_call(e, CATSVC "UpdateCatalog", &up, &g), 0);
  assert_string_equal(g->name, "prod");
  assert_string_equal(g->comment, "first"); /* comment absent: unchanged */
  assert_string_equal(g->id, c->id);
  ST_FREE(g);

  get.name = "main";
  assert_int_equal(st_call(e, CATSVC "GetCatalog", &get, NULL), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'main' not found");
  get.name = "";
  assert_int_equal(st_call(e, CATSVC "GetCatalog", &get, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: must not be empty");

  assert_int_equal(create_catalog(e, "b", NULL, NULL), 0);
  Deltad__Catalog__V1__ListCatalogsRequest lr = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  Deltad__Catalog__V1__ListCatalogsResponse *l = NULL;
  lr.max_results = 1;
  assert_int_equal(st_call(e, CATSVC "ListCatalogs", &lr, &l), 0);
  assert_int_equal(l->n_catalogs, 1);
  assert_string_equal(l->catalogs[0]->name, "b");
  lr.page_token = l->next_page_token;
  Deltad__Catalog__V1__ListCatalogsResponse *l2 = NULL;
  assert_int_equal(st_call(e, CATSVC "ListCatalogs", &lr, &l2), 0);
  assert_int_equal(l2->n_catalogs, 1);
  assert_string_equal(l2->catalogs[0]->name, "prod");
  assert_string_equal(l2->next_page_token, "");
  ST_FREE(l2);
  ST_FREE(l);
  lr.page_token = "not a token";
  assert_int_equal(st_call(e, CATSVC "ListCatalogs", &lr, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "invalid page token");
  lr.page_token = "";
  lr.max_results = -3;
  assert_int_equal(st_call(e, CATSVC "ListCatalogs", &lr, NULL), DD_EINVAL);

  Deltad__Catalog__V1__DeleteCatalogRequest del = DELTAD__CATALOG__V1__DELETE_CATALOG_REQUEST__INIT;
  del.name = "prod";
  assert_int_equal(create_schema(e, "prod", "s"), 0);
  assert_int_equal(st_call(e, CATSVC "DeleteCatalog", &del, NULL), DD_EPRECOND);
  assert_string_equal(dd_err_msg(), "catalog 'prod' is not empty; use force");
  assert_int_equal(count_catalogs(e), 2);
  del.force = 1;
  assert_int_equal(st_call(e, CATSVC "DeleteCatalog", &del, NULL), 0);
  assert_int_equal(st_call(e, CATSVC "DeleteCatalog", &del, NULL), DD_ENOTFOUND);
  assert_int_equal(count_catalogs(e), 1);
  ST_FREE(c);
}

static void test_schema_rpcs(void **state) {
  st_env *e = *state;
  assert_int_equal(create_catalog(e, "c", NULL, NULL), 0);
  assert_int_equal(create_schema(e, "c", "s1"), 0);
  assert_int_equal(create_schema(e, "C", "S1"), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "schema 'c.S1' already exists");

  Deltad__Catalog__V1__GetSchemaRequest get = DELTAD__CATALOG__V1__GET_SCHEMA_REQUEST__INIT;
  SchemaInfo *s = NULL;
  get.full_name = "c.s1";
  assert_int_equal(st_call(e, CATSVC "GetSchema", &get, &s), 0);
  assert_string_equal(s->full_name, "c.s1");
  ST_FREE(s);
  get.full_name = "c";
  assert_int_equal(st_call(e, CATSVC "GetSchema", &get, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "full_name: 'c' is not of the form catalog.schema");

  Deltad__Catalog__V1__UpdateSchemaRequest up = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST__INIT;
  Deltad__Catalog__V1__UpdateSchemaRequest__PropertiesEntry p =
      DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST__PROPERTIES_ENTRY__INIT, *pp = &p;
  p.key = "owner-team";
  p.value = "x";
  up.full_name = "c.s1";
  up._comment_case = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___COMMENT_COMMENT;
  up.comment = "hello";
  up.n_properties = 1;
  up.properties = &pp;
  assert_int_equal(st_call(e, CATSVC "UpdateSchema", &up, &s), 0);
  assert_string_equal(s->comment, "hello");
  assert_int_equal(s->n_properties, 1);
  assert_string_equal(s->properties[0]->key, "owner-team");
  ST_FREE(s);
  up.full_name = "c.s1.x";
  assert_int_equal(st_call(e, CATSVC "UpdateSchema", &up, NULL), DD_EINVAL);

  Deltad__Catalog__V1__ListSchemasRequest lr = DELTAD__CATALOG__V1__LIST_SCHEMAS_REQUEST__INIT;
  Deltad__Catalog__V1__ListSchemasResponse *l = NULL;
  assert_int_equal(st_call(e, CATSVC "ListSchemas", &lr, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "catalog_name: must not be empty");
  lr.catalog_name = "missing";
  assert_int_equal(st_call(e, CATSVC "ListSchemas", &lr, NULL), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'missing' not found");
  lr.catalog_name = "c";
  assert_int_equal(st_call(e, CATSVC "ListSchemas", &lr, &l), 0);
  assert_int_equal(l->n_schemas, 1);
  ST_FREE(l);

  Deltad__Catalog__V1__DeleteSchemaRequest del = DELTAD__CATALOG__V1__DELETE_SCHEMA_REQUEST__INIT;
  del.full_name = "c.s1";
  assert_int_equal(st_call(e, CATSVC "DeleteSchema", &del, NULL), 0);
  assert_int_equal(st_call(e, CATSVC "DeleteSchema", &del, NULL), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "schema 'c.s1' not found");
}

static void test_no_partial_write(void **state) {
  st_env *e = *state;
  assert_int_equal(create_schema(e, "ghost", "s"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'ghost' not found");
  assert_int_equal(count_catalogs(e), 0);
  assert_int_equal(create_catalog(e, "ghost", NULL, NULL), 0);
  Deltad__Catalog__V1__ListSchemasRequest lr = DELTAD__CATALOG__V1__LIST_SCHEMAS_REQUEST__INIT;
  Deltad__Catalog__V1__ListSchemasResponse *l = NULL;
  lr.catalog_name = "ghost";
  assert_int_equal(st_call(e, CATSVC "ListSchemas", &lr, &l), 0);
  assert_int_equal(l->n_schemas, 0);
  ST_FREE(l);
  /* a rename onto a taken name changes nothing */
  assert_int_equal(create_catalog(e, "other", NULL, NULL), 0);
  Deltad__Catalog__V1__UpdateCatalogRequest up = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST__INIT;
  up.name = "ghost";
  up._new_name_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___NEW_NAME_NEW_NAME;
  up.new_name = "OTHER";
  up._comment_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___COMMENT_COMMENT;
  up.comment = "should not stick";
  assert_int_equal(st_call(e, CATSVC "UpdateCatalog", &up, NULL), DD_EEXISTS);
  Deltad__Catalog__V1__GetCatalogRequest get = DELTAD__CATALOG__V1__GET_CATALOG_REQUEST__INIT;
  CatalogInfo *g = NULL;
  get.name = "ghost";
  assert_int_equal(st_call(e, CATSVC "GetCatalog", &get, &g), 0);
  assert_string_equal(g->comment, "");
  ST_FREE(g);
}

/* Every CatalogService and CredentialService RPC refuses a recipient and an anonymous
 * caller, even with an empty request, and writes nothing. */
static void test_admin_only(void **state) {
  st_env *e = *state;
  const dd_method *tables[] = {dd_catalog_methods, dd_credential_methods, dd_tables_methods};
  size_t lens[] = {dd_catalog_methods_len, dd_credential_methods_len, dd_tables_methods_len};
  for (size_t t = 0; t < 3; t++) {
    for (size_t i = 0; i < lens[t]; i++) {
      const dd_method *m = &tables[t][i];
      ProtobufCMessage *req = calloc(1, m->input->sizeof_message);
      protobuf_c_message_init(m->input, req);
      assert_int_equal(st_call_as(e, &st_recipient, m->path, req, NULL), DD_EPERM);
      assert_non_null(strstr(dd_err_msg(), "permission denied"));
      assert_int_equal(st_call_as(e, &st_nobody, m->path, req, NULL), DD_EUNAUTH);
      free(req);
    }
  }
  Deltad__Catalog__V1__CreateCatalogRequest req = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  req.name = "sneaky";
  assert_int_equal(st_call_as(e, &st_recipient, CATSVC "CreateCatalog", &req, NULL), DD_EPERM);
  assert_int_equal(count_catalogs(e), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_method_table),
      cmocka_unit_test_setup_teardown(test_catalog_crud, st_setup, st_teardown),
      cmocka_unit_test_setup_teardown(test_schema_rpcs, st_setup, st_teardown),
      cmocka_unit_test_setup_teardown(test_no_partial_write, st_setup, st_teardown),
      cmocka_unit_test_setup_teardown(test_admin_only, st_setup, st_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
