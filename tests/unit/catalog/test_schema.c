/* test_schema.c: schemas in the LMDB store: full names, per-catalog uniqueness, listing
 * scoped to one catalog, updates and renames, deletes, and no partial writes on error. */
#include "cat_test_util.h"

static int list_schemas(cat_store *s, const char *cat, int max, const char *token,
                        Deltad__Catalog__V1__ListSchemasResponse **out) {
  Deltad__Catalog__V1__ListSchemasRequest req = DELTAD__CATALOG__V1__LIST_SCHEMAS_REQUEST__INIT;
  req.catalog_name = (char *)cat;
  req.max_results = max;
  req.page_token = (char *)token;
  return cat_schema_list(s, out, &req);
}

static void test_create_get(void **state) {
  ct_env *e = *state;
  CT_FREE(ct_catalog(e->s, "Main"));
  Deltad__Catalog__V1__CreateSchemaRequest req = DELTAD__CATALOG__V1__CREATE_SCHEMA_REQUEST__INIT;
  cat_schema *s = NULL, *g = NULL;
  req.catalog_name = "main";
  req.name = "Raw";
  req.comment = "landing zone";
  assert_int_equal(cat_schema_create(e->s, &s, "alice", &req), 0);
  assert_string_equal(s->catalog_name, "Main"); /* the catalog's own spelling */
  assert_string_equal(s->full_name, "Main.Raw");
  assert_string_equal(s->comment, "landing zone");
  assert_string_equal(s->owner, "alice");
  assert_int_equal(strlen(s->schema_id), 36);
  assert_int_equal(cat_schema_get(e->s, &g, "MAIN.raw"), 0);
  assert_string_equal(g->schema_id, s->schema_id);
  assert_string_equal(g->name, "Raw");
  CT_FREE(g);
  CT_FREE(s);
  assert_int_equal(ct_schema_rc(e->s, "main", "RAW"), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "schema 'Main.RAW' already exists");
  CT_FREE(ct_catalog(e->s, "other"));
  assert_int_equal(ct_schema_rc(e->s, "other", "raw"), 0); /* same name, other catalog */
  assert_int_equal(ct_schema_rc(e->s, "main", "a.b"), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: must not contain '.'");
}

static void test_missing_catalog_writes_nothing(void **state) {
  ct_env *e = *state;
  assert_int_equal(ct_schema_rc(e->s, "nope", "s"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'nope' not found");
  CT_FREE(ct_catalog(e->s, "nope"));
  Deltad__Catalog__V1__ListSchemasResponse *r = NULL;
  assert_int_equal(list_schemas(e->s, "nope", 0, "", &r), 0);
  assert_int_equal(r->n_schemas, 0);
  CT_FREE(r);
  assert_int_equal(ct_schema_rc(e->s, "nope", "s"), 0);
}

static void test_full_name_forms(void **state) {
  ct_env *e = *state;
  cat_schema *g = NULL;
  const char *bad[] = {"", "main", "main.", ".raw", "a.b.c"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(cat_schema_get(e->s, &g, bad[i]), DD_EINVAL);
    assert_non_null(strstr(dd_err_msg(), "full_name"));
  }
  assert_int_equal(cat_schema_get(e->s, &g, "x.y"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'x' not found");
  CT_FREE(ct_catalog(e->s, "x"));
  assert_int_equal(cat_schema_get(e->s, &g, "x.y"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "schema 'x.y' not found");
  assert_int_equal(cat_schema_delete(e->s, "x.y", 0), DD_ENOTFOUND);
}

static void test_list_scoped_and_paged(void **state) {
  ct_env *e = *state;
  char name[16];
  Deltad__Catalog__V1__ListSchemasResponse *r = NULL;
  CT_FREE(ct_catalog(e->s, "a"));
  CT_FREE(ct_catalog(e->s, "b"));
  for (int i = 0; i < 7; i++) {
    snprintf(name, sizeof name, "s%d", i);
    assert_int_equal(ct_schema_rc(e->s, "a", name), 0);
    assert_int_equal(ct_schema_rc(e->s, "b", name), 0);
  }
  assert_int_equal(ct_schema_rc(e->s, "b", "zz"), 0);
  char token[256] = "";
  int total = 0;
  do {
    assert_int_equal(list_schemas(e->s, "a", 3, token, &r), 0);
    for (size_t i = 0; i < r->n_schemas; i++) {
      snprintf(name, sizeof name, "s%d", total++);
      assert_string_equal(r->schemas[i]->name, name);
      assert_string_equal(r->schemas[i]->catalog_name, "a");
    }
    snprintf(token, sizeof token, "%s", r->next_page_token);
    CT_FREE(r);
  } while (token[0]);
  assert_int_equal(total, 7);
  assert_int_equal(list_schemas(e->s, "", 0, "", &r), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "catalog_name: must not be empty");
  assert_int_equal(list_schemas(e->s, "c", 0, "", &r), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'c' not found");
  assert_int_equal(list_schemas(e->s, "a", 0, "%%%", &r), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "invalid page token");
}

static void test_update_and_rename(void **state) {
  ct_env *e = *state;
  CT_FREE(ct_catalog(e->s, "c"));
  assert_int_equal(ct_schema_rc(e->s, "c", "s"), 0);
  assert_int_equal(ct_schema_rc(e->s, "c", "t"), 0);
  cat_schema *before = NULL, *u = NULL;
  assert_int_equal(cat_schema_get(e->s, &before, "c.s"), 0);
  Deltad__Catalog__V1__UpdateSchemaRequest req = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST__INIT;
  req.full_name = "c.s";
  req._new_name_case = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___NEW_NAME_NEW_NAME;
  req.new_name = "T";
  assert_int_equal(cat_schema_update(e->s, &u, "bob", &req), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "schema 'c.T' already exists");
  req.new_name = "s2";
  req._comment_case = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___COMMENT_COMMENT;
  req.comment = "renamed";
  assert_int_equal(cat_schema_update(e->s, &u, "bob", &req), 0);
  assert_string_equal(u->schema_id, before->schema_id);
  assert_string_equal(u->full_name, "c.s2");
  assert_string_equal(u->comment, "renamed");
  assert_string_equal(u->updated_by, "bob");
  CT_FREE(u);
  assert_int_equal(cat_schema_get(e->s, &u, "c.s"), DD_ENOTFOUND);
  assert_int_equal(cat_schema_get(e->s, &u, "c.S2"), 0);
  assert_string_equal(u->schema_id, before->schema_id);
  CT_FREE(u);
  CT_FREE(before);
  assert_int_equal(cat_schema_delete(e->s, "c.s2", 0), 0);
  assert_int_equal(cat_schema_get(e->s, &u, "c.s2"), DD_ENOTFOUND);
  assert_int_equal(ct_schema_rc(e->s, "c", "s2"), 0); /* the name is free again */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_create_get, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_missing_catalog_writes_nothing, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_full_name_forms, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_list_scoped_and_paged, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_update_and_rename, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
