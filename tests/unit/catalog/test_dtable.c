/* test_dtable.c: Delta table records in the store: create (EXTERNAL, MANAGED with an id
 * given), get by name (case-insensitive) and id, names shared with Lance tables, paged
 * lists, update (rename keeps the id), drop / undrop / purge of MANAGED tables, schema
 * deletes, storage roots, and nothing half-written on a refused call. */
#include "cat_test_util.h"

typedef Deltad__Tables__V1__CreateTableRequest create_req;

static int mk(cat_store *s, cat_dtable **out, const char *cat, const char *sch, const char *name,
              const char *loc, bool managed) {
  create_req req = DELTAD__TABLES__V1__CREATE_TABLE_REQUEST__INIT;
  req.catalog_name = (char *)cat;
  req.schema_name = (char *)sch;
  req.name = (char *)name;
  req.comment = "c1";
  cat_dtable_new nw = {&req, loc, managed, NULL};
  cat_dtable *t = NULL;
  int rc = cat_dtable_create(s, out ? out : &t, "alice", &nw);
  if (t) CT_FREE(t);
  return rc;
}

static void setup_schema(cat_store *s) {
  CT_FREE(ct_catalog(s, "Main"));
  assert_int_equal(ct_schema_rc(s, "main", "Raw"), 0);
}

static void test_create_get(void **state) {
  ct_env *e = *state;
  setup_schema(e->s);
  cat_dtable *t = NULL, *g = NULL;
  assert_int_equal(mk(e->s, &t, "main", "raw", "Events", "file:///data/events", false), 0);
  assert_string_equal(t->full_name, "Main.Raw.Events");
  assert_string_equal(t->table_type, "EXTERNAL");
  assert_string_equal(t->data_source_format, "DELTA");
  assert_string_equal(t->owner, "alice");
  assert_int_equal(strlen(t->table_id), 36);
  assert_int_equal(cat_dtable_get(e->s, &g, "MAIN.raw.EVENTS"), 0);
  assert_string_equal(g->table_id, t->table_id);
  assert_string_equal(g->storage_location, "file:///data/events");
  assert_string_equal(g->comment, "c1");
  CT_FREE(g);
  assert_int_equal(cat_dtable_get_by_id(e->s, &g, t->table_id), 0);
  assert_string_equal(g->full_name, "Main.Raw.Events");
  CT_FREE(g);
  CT_FREE(t);
  /* bad input: nothing written */
  size_t before = ct_db_entries(e->s, CAT__DB_DELTA_TABLES);
  assert_int_equal(mk(e->s, NULL, "main", "raw", "events", "file:///x", false), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "table 'Main.Raw.events' already exists");
  assert_int_equal(mk(e->s, NULL, "main", "nope", "t", "file:///x", false), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "schema 'main.nope' not found");
  assert_int_equal(mk(e->s, NULL, "nope", "raw", "t", "file:///x", false), DD_ENOTFOUND);
  assert_int_equal(mk(e->s, NULL, "main", "raw", "t", "relative/x", false), DD_EINVAL);
  assert_int_equal(mk(e->s, NULL, "main", "raw", "a/b", "file:///x", false), DD_EINVAL);
  assert_int_equal(ct_db_entries(e->s, CAT__DB_DELTA_TABLES), before);
  assert_int_equal(cat_dtable_get(e->s, &g, "main.raw.nope"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "table 'main.raw.nope' not found");
  assert_int_equal(cat_dtable_get(e->s, &g, "main.raw"), DD_EINVAL);
}

static void test_lance_names_shared(void **state) {
  ct_env *e = *state;
  setup_schema(e->s);
  const char *path[] = {"main", "raw", "vecs"};
  cat_lance_table *lt = NULL;
  assert_int_equal(cat_lance_table_register(e->s, &lt, "bob", path, 3, "/data/vecs.lance", 0, 0, NULL), 0);
  CT_FREE(lt);
  assert_int_equal(mk(e->s, NULL, "main", "raw", "VECS", "file:///d", false), DD_EEXISTS);
  assert_int_equal(mk(e->s, NULL, "main", "raw", "delta1", "file:///d", false), 0);
  const char *path2[] = {"main", "raw", "Delta1"};
  assert_int_equal(cat_lance_table_register(e->s, &lt, "bob", path2, 3, "/x", 1, 0, NULL), DD_EEXISTS);
  assert_null(lt);
}

static void test_list_pages(void **state) {
  ct_env *e = *state;
  setup_schema(e->s);
  char name[16];
  for (int i = 0; i < 5; i++) {
    snprintf(name, sizeof name, "t%d", 4 - i);
    assert_int_equal(mk(e->s, NULL, "main", "raw", name, "file:///d", false), 0);
  }
  Deltad__Tables__V1__ListTablesRequest req = DELTAD__TABLES__V1__LIST_TABLES_REQUEST__INIT;
  req.catalog_name = "main";
  req.schema_name = "raw";
  req.max_results = 2;
  Deltad__Tables__V1__ListTablesResponse *r = NULL;
  char got[64] = "";
  char token[128] = "";
  do {
    req.page_token = token;
    assert_int_equal(cat_dtable_list(e->s, &r, &req), 0);
    for (size_t i = 0; i < r->n_tables; i++) {
      strcat(got, r->tables[i]->name);
      assert_string_equal(r->tables[i]->schema_name, "Raw");
    }
    snprintf(token, sizeof token, "%s", r->next_page_token);
    CT_FREE(r);
  } while (*token);
  assert_string_equal(got, "t0t1t2t3t4");
  req.schema_name = "nope";
  assert_int_equal(cat_dtable_list(e->s, &r, &req), DD_ENOTFOUND);
}

static void test_update(void **state) {
  ct_env *e = *state;
  setup_schema(e->s);
  cat_dtable *t = NULL, *u = NULL;
  assert_int_equal(mk(e->s, &t, "main", "raw", "a", "file:///d", false), 0);
  assert_int_equal(mk(e->s, NULL, "main", "raw", "b", "file:///d", false), 0);
  Deltad__Tables__V1__UpdateTableRequest req = DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST__INIT;
  req.full_name = "main.raw.a";
  req._new_name_case = DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST___NEW_NAME_NEW_NAME;
  req.new_name = "B";
  assert_int_equal(cat_dtable_update(e->s, &u, "bob", &req), DD_EEXISTS);
  req.new_name = "A2";
  req._comment_case = DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST___COMMENT_COMMENT;
  req.comment = "renamed";
  req._owner_case = DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST___OWNER_OWNER;
  req.owner = "carol";
  assert_int_equal(cat_dtable_update(e->s, &u, "bob", &req), 0);
  assert_string_equal(u->table_id, t->table_id);
  assert_string_equal(u->full_name, "Main.Raw.A2");
  assert_string_equal(u->owner, "carol");
  assert_string_equal(u->updated_by, "bob");
  CT_FREE(u);
  assert_int_equal(cat_dtable_get(e->s, &u, "main.raw.a"), DD_ENOTFOUND);
  assert_int_equal(cat_dtable_get(e->s, &u, "main.raw.a2"), 0);
  assert_string_equal(u->comment, "renamed");
  CT_FREE(u);
  CT_FREE(t);
}

static void test_drop_undrop_purge(void **state) {
  ct_env *e = *state;
  setup_schema(e->s);
  cat_dtable *m = NULL, *was = NULL, *u = NULL;
  assert_int_equal(mk(e->s, NULL, "main", "raw", "ext", "file:///d", false), 0);
  assert_int_equal(mk(e->s, &m, "main", "raw", "man", "file:///root/x", true), 0);
  assert_string_equal(m->table_type, "MANAGED");
  /* external: gone at once */
  assert_int_equal(cat_dtable_delete(e->s, NULL, "main.raw.ext"), 0);
  assert_int_equal(cat_dtable_undrop(e->s, &u, "bob", "main.raw.ext", ""), DD_ENOTFOUND);
  /* managed: kept as dropped */
  assert_int_equal(cat_dtable_delete(e->s, &was, "main.raw.man"), 0);
  assert_true(was->deleted_at > 0);
  CT_FREE(was);
  assert_int_equal(cat_dtable_get(e->s, &u, "main.raw.man"), DD_ENOTFOUND);
  Deltad__Tables__V1__ListTablesResponse *r = NULL;
  assert_int_equal(cat_dtable_list_dropped(e->s, &r, "main", "raw"), 0);
  assert_int_equal(r->n_tables, 1);
  assert_string_equal(r->tables[0]->full_name, "Main.Raw.man");
  CT_FREE(r);
  /* the name is free while dropped; undrop then refuses */
  assert_int_equal(mk(e->s, NULL, "main", "raw", "man", "file:///d2", false), 0);
  assert_int_equal(cat_dtable_undrop(e->s, &u, "bob", "main.raw.man", ""), DD_EEXISTS);
  assert_int_equal(cat_dtable_delete(e->s, NULL, "main.raw.man"), 0);
  assert_int_equal(cat_dtable_undrop(e->s, &u, "bob", "main.raw.MAN", ""), 0);
  assert_string_equal(u->table_id, m->table_id);
  assert_int_equal(u->deleted_at, 0);
  CT_FREE(u);
  assert_int_equal(cat_dtable_get(e->s, &u, "main.raw.man"), 0);
  CT_FREE(u);
  /* purge: only what is due */
  assert_int_equal(cat_dtable_delete(e->s, NULL, "main.raw.man"), 0);
  assert_int_equal(cat_dtable_purge_due(e->s, &r, 1, 0), 0);
  assert_int_equal(r->n_tables, 0);
  CT_FREE(r);
  assert_int_equal(cat_dtable_purge_due(e->s, &r, INT64_MAX, 0), 0);
  assert_int_equal(r->n_tables, 1);
  assert_string_equal(r->tables[0]->storage_location, "file:///root/x");
  assert_int_equal(cat_dtable_purge_done(e->s, r->tables[0]->table_id), 0);
  CT_FREE(r);
  assert_int_equal(cat_dtable_undrop(e->s, &u, "bob", "main.raw.man", ""), DD_ENOTFOUND);
  assert_int_equal(cat_dtable_get_by_id(e->s, &u, m->table_id), DD_ENOTFOUND);
  assert_int_equal(ct_db_entries(e->s, CAT__DB_DELTA_DROPPED), 0);
  CT_FREE(m);
}

static void test_schema_delete_and_roots(void **state) {
  ct_env *e = *state;
  setup_schema(e->s);
  char *root = NULL;
  assert_int_equal(cat_dtable_storage_root(e->s, &root, "main", "raw"), DD_EPRECOND);
  Deltad__Catalog__V1__CreateSchemaRequest sr = DELTAD__CATALOG__V1__CREATE_SCHEMA_REQUEST__INIT;
  sr.catalog_name = "main";
  sr.name = "managed";
  sr.storage_root = "s3://bucket/root";
  cat_schema *sc = NULL;
  assert_int_equal(cat_schema_create(e->s, &sc, "alice", &sr), 0);
  CT_FREE(sc);
  assert_int_equal(cat_dtable_storage_root(e->s, &root, "main", "managed"), 0);
  assert_string_equal(root, "s3://bucket/root");
  free(root);
  assert_int_equal(mk(e->s, NULL, "main", "raw", "t", "file:///d", false), 0);
  assert_int_equal(cat_schema_delete(e->s, "main.raw", 0), DD_EPRECOND);
  assert_int_equal(ct_db_entries(e->s, CAT__DB_DELTA_TABLES), 1);
  assert_int_equal(cat_schema_delete(e->s, "main.raw", 1), 0);
  assert_int_equal(ct_db_entries(e->s, CAT__DB_DELTA_TABLES), 0);
  assert_int_equal(ct_db_entries(e->s, CAT__DB_DELTA_TABLE_NAMES), 0);
  /* a catalog delete with force reaches the tables of its schemas */
  assert_int_equal(mk(e->s, NULL, "main", "managed", "t", "s3://bucket/root/t", false), 0);
  assert_int_equal(cat_catalog_delete(e->s, "main", 0), DD_EPRECOND);
  assert_int_equal(cat_catalog_delete(e->s, "main", 1), 0);
  assert_int_equal(ct_db_entries(e->s, CAT__DB_DELTA_TABLE_NAMES), 0);
}

static void test_schema_rename_followed(void **state) {
  ct_env *e = *state;
  setup_schema(e->s);
  cat_dtable *t = NULL, *g = NULL;
  assert_int_equal(mk(e->s, &t, "main", "raw", "t", "file:///d", false), 0);
  Deltad__Catalog__V1__UpdateSchemaRequest ur = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST__INIT;
  ur.full_name = "main.raw";
  ur._new_name_case = DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___NEW_NAME_NEW_NAME;
  ur.new_name = "bronze";
  cat_schema *sc = NULL;
  assert_int_equal(cat_schema_update(e->s, &sc, "bob", &ur), 0);
  CT_FREE(sc);
  assert_int_equal(cat_dtable_get(e->s, &g, "main.bronze.t"), 0);
  assert_string_equal(g->full_name, "Main.bronze.t");
  assert_string_equal(g->table_id, t->table_id);
  CT_FREE(g);
  assert_int_equal(cat_dtable_get_by_id(e->s, &g, t->table_id), 0);
  assert_string_equal(g->full_name, "Main.bronze.t");
  CT_FREE(g);
  assert_int_equal(cat_dtable_get(e->s, &g, "main.raw.t"), DD_ENOTFOUND);
  CT_FREE(t);
}

static void test_survives_reopen(void **state) {
  ct_env *e = *state;
  setup_schema(e->s);
  assert_int_equal(mk(e->s, NULL, "main", "raw", "t", "file:///d", false), 0);
  ct_reopen(e);
  cat_dtable *g = NULL;
  assert_int_equal(cat_dtable_get(e->s, &g, "main.raw.t"), 0);
  CT_FREE(g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_create_get, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_lance_names_shared, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_list_pages, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_update, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_drop_undrop_purge, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_schema_delete_and_roots, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_schema_rename_followed, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_survives_reopen, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
