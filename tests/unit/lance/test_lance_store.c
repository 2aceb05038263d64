/* test_lance_store.c: the store's Lance namespaces and tables (cat_namespace.c,
 * cat_table.c): levels 1 and 2 are catalogs and schemas, deeper levels and tables are
 * their own records; create modes, the root, drop restrict / cascade (nothing left behind),
 * paging, validation, and persistence across a reopen. */
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/err.h"
#include "tests/unit/catalog/cat_test_util.h"
#include "store/catalog/cat_internal.h"

typedef struct env {
  char dir[256];
  cat_store *s;
} env;

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(p);
}

static int setup(void **state) {
  env *e = calloc(1, sizeof *e);
  const char *tmp = getenv("TMPDIR");
  snprintf(e->dir, sizeof e->dir, "%s/ddlance.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(e->dir) || ct_open(&e->s, e->dir)) return -1;
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env *e = *state;
  cat_store_close(e->s);
  nftw(e->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  free(e);
  return 0;
}

#define FREE(m) protobuf_c_message_free_unpacked(&(m)->base, NULL)
#define P(...) ((const char *const[]){__VA_ARGS__})
#define N(...) (sizeof((const char *const[]){__VA_ARGS__}) / sizeof(const char *))
#define PATH(...) P(__VA_ARGS__), N(__VA_ARGS__)

typedef struct kv {
  ProtobufCMessage base;
  char *key, *value;
} kv;

/* Creates path with mode and one property k=v (k NULL: none); must succeed. */
static cat_namespace *mk(cat_store *s, const char *const *path, size_t depth, int mode,
                         const char *k, const char *v) {
  kv e = {PROTOBUF_C_MESSAGE_INIT(&deltad__lance__v1__create_namespace_request__properties_entry__descriptor),
          (char *)k, (char *)v};
  void *ep = &e;
  cat_namespace *ns = NULL;
  int rc = cat_ns_create(s, &ns, "tester", path, depth, mode, k ? 1 : 0, k ? &ep : NULL);
  if (rc) fail_msg("create: %s", dd_err_msg());
  return ns;
}

static void mk0(cat_store *s, const char *const *path, size_t depth) {
  FREE(mk(s, path, depth, CAT_NS_CREATE, NULL, NULL));
}

static const char *prop(const cat_namespace *ns, const char *k) {
  for (size_t i = 0; i < ns->n_properties; i++)
    if (!strcmp(ns->properties[i]->key, k)) return ns->properties[i]->value;
  return NULL;
}

/* The names listed under path (all of them), joined by ','. */
static char *names(cat_store *s, const char *const *path, size_t depth) {
  Deltad__Lance__V1__ListNamespacesResponse *r = NULL;
  if (cat_ns_list(s, &r, path, depth, 0, "")) fail_msg("list: %s", dd_err_msg());
  static char buf[4096];
  buf[0] = '\0';
  for (size_t i = 0; i < r->n_namespaces; i++)
    strcat(strcat(buf, i ? "," : ""), r->namespaces[i]);
  assert_string_equal(r->page_token, "");
  FREE(r);
  return buf;
}

static size_t db_entries(cat_store *s, int db) { return ct_db_entries(s, db); }

static void reg(cat_store *s, const char *const *path, size_t depth, const char *loc) {
  cat_lance_table *t = NULL;
  if (cat_lance_table_register(s, &t, "tester", path, depth, loc, 0, 0, NULL))
    fail_msg("register: %s", dd_err_msg());
  FREE(t);
}

/* ---- tests ------------------------------------------------------------------------------- */

static void test_levels_are_catalogs_and_schemas(void **state) {
  env *e = *state;
  cat_namespace *ns = mk(e->s, PATH("Sales"), CAT_NS_CREATE, "owner", "ralph");
  assert_int_equal(ns->level, 1);
  assert_string_equal(ns->name, "Sales");
  assert_string_equal(prop(ns, "owner"), "ralph");
  assert_string_equal(ns->created_by, "tester");
  cat_catalog *c = NULL;
  assert_int_equal(cat_catalog_get(e->s, &c, "sales"), 0);
  assert_string_equal(c->id, ns->id);
  assert_int_equal(c->n_properties, 1);
  assert_string_equal(c->properties[0]->value, "ralph");
  FREE(c);
  cat_namespace *sch = mk(e->s, PATH("Sales", "Gold"), CAT_NS_CREATE, "tier", "1");
  assert_int_equal(sch->level, 2);
  assert_string_equal(sch->parent_id, ns->id);
  cat_schema *sc = NULL;
  assert_int_equal(cat_schema_get(e->s, &sc, "sales.gold"), 0);
  assert_string_equal(sc->schema_id, sch->id);
  assert_string_equal(sc->full_name, "Sales.Gold");
  assert_string_equal(sc->properties[0]->key, "tier");
  FREE(sc);
  cat_namespace *deep = mk(e->s, PATH("sales", "gold", "a.b"), CAT_NS_CREATE, NULL, NULL);
  assert_int_equal(deep->level, 3);
  assert_string_equal(deep->parent_id, sch->id);
  FREE(deep);
  mk0(e->s, PATH("sales", "gold", "a.b", "four"));
  assert_string_equal(names(e->s, PATH("SALES", "gold", "A.B")), "four");
  /* and the reverse: the catalog API's objects are namespaces */
  Deltad__Catalog__V1__CreateCatalogRequest creq = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  creq.name = "fromcat";
  assert_int_equal(cat_catalog_create(e->s, &c, "x", &creq), 0);
  FREE(c);
  assert_string_equal(names(e->s, NULL, 0), "fromcat,Sales");
  cat_namespace *got = NULL;
  assert_int_equal(cat_ns_get(e->s, &got, PATH("FromCat")), 0);
  assert_int_equal(got->level, 1);
  FREE(got);
  /* a rename through the catalog API keeps what lies below (keyed by id) */
  Deltad__Catalog__V1__UpdateCatalogRequest ureq = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST__INIT;
  ureq.name = "sales";
  ureq._new_name_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___NEW_NAME_NEW_NAME;
  ureq.new_name = "revenue";
  assert_int_equal(cat_catalog_update(e->s, &c, "x", &ureq), 0);
  FREE(c);
  assert_string_equal(names(e->s, PATH("revenue", "gold", "a.b")), "four");
  assert_int_equal(cat_ns_get(e->s, &got, PATH("revenue", "gold")), 0);
  assert_string_equal(got->parent_id, ns->id);
  FREE(got);
  FREE(sch);
  FREE(ns);
}

static void test_create_modes(void **state) {
  env *e = *state;
  cat_namespace *ns = NULL;
  FREE(mk(e->s, PATH("m"), CAT_NS_CREATE, "v", "1"));
  mk0(e->s, PATH("m", "s"));
  mk0(e->s, PATH("m", "s", "d"));
  reg(e->s, PATH("m", "s", "t"), "/d/t");
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("M"), CAT_NS_CREATE, 0, NULL), DD_EEXISTS);
  assert_null(ns);
  assert_non_null(strstr(dd_err_msg(), "already exists"));
  ns = mk(e->s, PATH("m"), CAT_NS_EXIST_OK, "v", "2");
  assert_string_equal(prop(ns, "v"), "1"); /* kept as it was */
  char old_id[64];
  strcpy(old_id, ns->id);
  FREE(ns);
  ns = mk(e->s, PATH("m", "s", "d"), CAT_NS_EXIST_OK, NULL, NULL);
  assert_int_equal(ns->level, 3);
  FREE(ns);
  ns = mk(e->s, PATH("m"), CAT_NS_OVERWRITE, "v", "3");
  assert_string_equal(prop(ns, "v"), "3");
  assert_string_not_equal(ns->id, old_id);
  FREE(ns);
  assert_string_equal(names(e->s, PATH("m")), "");
  /* what was below is gone from every sub-database */
  assert_int_equal(db_entries(e->s, CAT__DB_SCHEMAS), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_NAMESPACES), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_NAMESPACE_NAMES), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_LANCE_TABLES), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_LANCE_TABLE_NAMES), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_CATALOGS), 1);
  /* overwrite of a missing namespace creates it; the parent must exist */
  FREE(mk(e->s, PATH("m", "new"), CAT_NS_OVERWRITE, NULL, NULL));
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("nope", "child"), CAT_NS_EXIST_OK, 0, NULL), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "namespace 'nope' not found");
}

static void test_root(void **state) {
  env *e = *state;
  cat_namespace *ns = NULL;
  assert_int_equal(cat_ns_get(e->s, &ns, NULL, 0), 0);
  assert_int_equal(ns->level, 0);
  assert_int_equal(ns->n_properties, 0);
  FREE(ns);
  assert_int_equal(cat_ns_create(e->s, &ns, "x", NULL, 0, CAT_NS_CREATE, 0, NULL), DD_EEXISTS);
  assert_int_equal(cat_ns_create(e->s, &ns, "x", NULL, 0, CAT_NS_OVERWRITE, 0, NULL), DD_EINVAL);
  assert_int_equal(cat_ns_create(e->s, &ns, "x", NULL, 0, CAT_NS_EXIST_OK, 0, NULL), 0);
  FREE(ns);
  assert_int_equal(cat_ns_drop(e->s, NULL, NULL, 0, 1), DD_EINVAL);
  cat_lance_table *t = NULL;
  assert_int_equal(cat_lance_table_register(e->s, &t, "x", PATH("t"), "/d", 0, 0, NULL), DD_EINVAL);
  assert_int_equal(cat_lance_table_get(e->s, &t, PATH("t")), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "table 't' not found");
  mk0(e->s, PATH("c"));
  reg(e->s, PATH("c", "t"), "/d/t");
  Deltad__Lance__V1__ListTablesResponse *tl = NULL;
  assert_int_equal(cat_lance_table_list(e->s, &tl, NULL, 0, 0, ""), 0);
  assert_int_equal(tl->n_tables, 0); /* the root holds none, whatever is elsewhere */
  FREE(tl);
}

static void test_validation(void **state) {
  env *e = *state;
  cat_namespace *ns = NULL;
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("a.b"), CAT_NS_CREATE, 0, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "id[0]"));
  mk0(e->s, PATH("a"));
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("a", "b.c"), CAT_NS_CREATE, 0, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "id[1]"));
  mk0(e->s, PATH("a", "b"));
  mk0(e->s, PATH("a", "b", "c.d"));
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("a", "b", "c/d"), CAT_NS_CREATE, 0, NULL), DD_EINVAL);
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("a", "b", ""), CAT_NS_CREATE, 0, NULL), DD_EINVAL);
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("a", "b", "\x01"), CAT_NS_CREATE, 0, NULL), DD_EINVAL);
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("a", "b", "\xff"), CAT_NS_CREATE, 0, NULL), DD_EINVAL);
  const char *deep[CAT_NS_MAX_DEPTH + 1];
  for (size_t i = 0; i <= CAT_NS_MAX_DEPTH; i++) deep[i] = "n";
  assert_int_equal(cat_ns_create(e->s, &ns, "x", deep, CAT_NS_MAX_DEPTH + 1, CAT_NS_CREATE, 0, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "deeper"));
  kv bad = {PROTOBUF_C_MESSAGE_INIT(&deltad__lance__v1__create_namespace_request__properties_entry__descriptor), "", "v"};
  void *bp = &bad;
  assert_int_equal(cat_ns_create(e->s, &ns, "x", PATH("a", "b", "e"), CAT_NS_CREATE, 1, &bp), DD_EINVAL);
  cat_lance_table *t = NULL;
  assert_int_equal(cat_lance_table_register(e->s, &t, "x", PATH("a", "b", "t"), "", 0, 0, NULL), DD_EINVAL);
  assert_int_equal(cat_lance_table_register(e->s, &t, "x", PATH("a", "b", "t"), "/x\ty", 0, 0, NULL), DD_EINVAL);
  assert_int_equal(cat_lance_table_register(e->s, &t, "x", PATH("a", "b", "t/u"), "/x", 0, 0, NULL), DD_EINVAL);
  assert_null(t);
  assert_string_equal(names(e->s, PATH("a", "b")), "c.d"); /* nothing written */
  assert_int_equal(db_entries(e->s, CAT__DB_LANCE_TABLES), 0);
}

static void test_drop(void **state) {
  env *e = *state;
  mk0(e->s, PATH("d"));
  mk0(e->s, PATH("d", "s"));
  mk0(e->s, PATH("d", "s", "x"));
  mk0(e->s, PATH("d", "s", "x", "y"));
  mk0(e->s, PATH("d", "s2"));
  reg(e->s, PATH("d", "s", "x", "y", "t1"), "/d/1");
  reg(e->s, PATH("d", "t0"), "/d/0");
  mk0(e->s, PATH("keep"));
  mk0(e->s, PATH("keep", "s"));
  reg(e->s, PATH("keep", "s", "t"), "/k");
  /* restrict: tables or namespaces inside refuse the drop */
  assert_int_equal(cat_ns_drop(e->s, NULL, PATH("d", "s", "x", "y"), 0), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "not empty"));
  assert_int_equal(cat_ns_drop(e->s, NULL, PATH("d", "s"), 0), DD_EPRECOND);
  assert_int_equal(cat_ns_drop(e->s, NULL, PATH("d"), 0), DD_EPRECOND);
  assert_int_equal(cat_ns_drop(e->s, NULL, PATH("d", "nope"), 0), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "namespace 'd$nope' not found");
  cat_namespace *was = NULL;
  assert_int_equal(cat_ns_drop(e->s, &was, PATH("d", "s2"), 0), 0);
  assert_string_equal(was->name, "s2");
  FREE(was);
  /* cascade: the whole subtree, tables too, and nothing of it left behind */
  assert_int_equal(cat_ns_drop(e->s, NULL, PATH("d"), 1), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_CATALOGS), 1);
  assert_int_equal(db_entries(e->s, CAT__DB_SCHEMAS), 1);
  assert_int_equal(db_entries(e->s, CAT__DB_NAMESPACES), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_NAMESPACE_NAMES), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_LANCE_TABLES), 1);
  assert_int_equal(db_entries(e->s, CAT__DB_LANCE_TABLE_NAMES), 1);
  cat_catalog *c = NULL;
  assert_int_equal(cat_catalog_get(e->s, &c, "d"), DD_ENOTFOUND);
  cat_lance_table *t = NULL;
  assert_int_equal(cat_lance_table_get(e->s, &t, PATH("keep", "s", "t")), 0);
  FREE(t);
}

static void test_paging(void **state) {
  env *e = *state;
  mk0(e->s, PATH("p"));
  const char *n[] = {"b", "D", "a", "c", "E"};
  for (size_t i = 0; i < 5; i++) mk0(e->s, P("p", n[i]), 2);
  Deltad__Lance__V1__ListNamespacesResponse *r = NULL;
  assert_int_equal(cat_ns_list(e->s, &r, PATH("p"), 2, ""), 0);
  assert_int_equal(r->n_namespaces, 2);
  assert_string_equal(r->namespaces[0], "a");
  assert_string_equal(r->namespaces[1], "b");
  assert_string_equal(r->page_token, "b");
  FREE(r);
  mk0(e->s, PATH("p", "bb")); /* added after the boundary: listed next */
  mk0(e->s, PATH("p", "0"));  /* before it: not */
  assert_int_equal(cat_ns_list(e->s, &r, PATH("p"), 3, "B"), 0);
  assert_int_equal(r->n_namespaces, 3);
  assert_string_equal(r->namespaces[0], "bb");
  assert_string_equal(r->namespaces[1], "c");
  assert_string_equal(r->namespaces[2], "D");
  assert_string_equal(r->page_token, "D");
  FREE(r);
  assert_int_equal(cat_ns_list(e->s, &r, PATH("p"), 3, "D"), 0);
  assert_int_equal(r->n_namespaces, 1);
  assert_string_equal(r->page_token, ""); /* the last page */
  FREE(r);
  assert_int_equal(cat_ns_list(e->s, &r, PATH("p"), 1, "zzz"), 0);
  assert_int_equal(r->n_namespaces, 0);
  FREE(r);
  assert_int_equal(cat_ns_list(e->s, &r, PATH("p"), -1, ""), DD_EINVAL);
  assert_int_equal(cat_ns_list(e->s, &r, PATH("p"), 1, "a/b"), DD_EINVAL);
  assert_int_equal(cat_ns_list(e->s, &r, PATH("nope"), 1, ""), DD_ENOTFOUND);
  assert_null(r);
  /* tables page the same way, per namespace */
  reg(e->s, PATH("p", "a", "t2"), "/2");
  reg(e->s, PATH("p", "a", "T1"), "/1");
  reg(e->s, PATH("p", "b", "t0"), "/0");
  Deltad__Lance__V1__ListTablesResponse *tl = NULL;
  assert_int_equal(cat_lance_table_list(e->s, &tl, PATH("p", "a"), 1, ""), 0);
  assert_int_equal(tl->n_tables, 1);
  assert_string_equal(tl->tables[0], "T1");
  assert_string_equal(tl->page_token, "T1");
  FREE(tl);
  assert_int_equal(cat_lance_table_list(e->s, &tl, PATH("p", "a"), 0, "T1"), 0);
  assert_int_equal(tl->n_tables, 1);
  assert_string_equal(tl->tables[0], "t2");
  assert_string_equal(tl->page_token, "");
  FREE(tl);
}

static void test_tables(void **state) {
  env *e = *state;
  mk0(e->s, PATH("t"));
  mk0(e->s, PATH("t", "s"));
  kv p = {PROTOBUF_C_MESSAGE_INIT(&deltad__lance__v1__register_table_request__properties_entry__descriptor), "k", "v"};
  void *pp = &p;
  cat_lance_table *t = NULL;
  assert_int_equal(cat_lance_table_register(e->s, &t, "me", PATH("t", "s", "Ev.1"), "s3://b/e", 0, 1, &pp), 0);
  assert_string_equal(t->format, "lance");
  assert_string_equal(t->location, "s3://b/e");
  assert_string_equal(t->owner, "me");
  char id[64];
  strcpy(id, t->id);
  FREE(t);
  assert_int_equal(cat_lance_table_register(e->s, &t, "me", PATH("t", "s", "ev.1"), "/x", 0, 0, NULL), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "table 't$s$ev.1' already exists");
  assert_int_equal(cat_lance_table_register(e->s, &t, "me", PATH("t", "s", "ev.1"), "/x", 1, 0, NULL), 0);
  assert_string_equal(t->id, id); /* the registration is replaced in place */
  assert_string_equal(t->name, "ev.1");
  assert_int_equal(t->n_properties, 0);
  FREE(t);
  assert_int_equal(cat_lance_table_register(e->s, &t, "me", PATH("t", "nope", "x"), "/x", 0, 0, NULL), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "namespace 't$nope' not found");
  assert_int_equal(cat_lance_table_get(e->s, &t, PATH("t", "nope", "x")), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "namespace 't$nope' not found");
  assert_int_equal(cat_lance_table_get(e->s, &t, PATH("t", "s", "x")), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "table 't$s$x' not found");
  /* persistence */
  cat_store_close(e->s);
  e->s = NULL;
  assert_int_equal(ct_open(&e->s, e->dir), 0);
  assert_int_equal(cat_lance_table_get(e->s, &t, PATH("T", "S", "EV.1")), 0);
  assert_string_equal(t->location, "/x");
  FREE(t);
  assert_int_equal(cat_lance_table_deregister(e->s, &t, PATH("t", "s", "ev.1")), 0);
  assert_string_equal(t->location, "/x");
  FREE(t);
  assert_int_equal(cat_lance_table_deregister(e->s, NULL, PATH("t", "s", "ev.1")), DD_ENOTFOUND);
  assert_int_equal(db_entries(e->s, CAT__DB_LANCE_TABLES), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_LANCE_TABLE_NAMES), 0);
}

/* The hook the catalog API's deletes are meant to call (cat__lance_below_drop). */
static void test_below_drop_hook(void **state) {
  env *e = *state;
  cat_namespace *c = mk(e->s, PATH("hc"), CAT_NS_CREATE, NULL, NULL);
  cat_namespace *sc = mk(e->s, PATH("hc", "s"), CAT_NS_CREATE, NULL, NULL);
  mk0(e->s, PATH("hc", "s", "deep"));
  reg(e->s, PATH("hc", "s", "deep", "t"), "/1");
  reg(e->s, PATH("hc", "t"), "/2");
  mk0(e->s, PATH("other"));
  mk0(e->s, PATH("other", "s"));
  reg(e->s, PATH("other", "s", "t"), "/3");
  cat_txn *txn = NULL;
  assert_int_equal(cat__txn_begin(e->s, &txn, true), 0);
  assert_int_equal(cat__lance_below_drop(e->s, txn, 1, c->id, "hc", 0), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "'hc' is not empty"));
  assert_int_equal(cat__lance_below_drop(e->s, txn, 2, sc->id, "hc.s", 0), DD_EPRECOND);
  assert_int_equal(cat__lance_below_drop(e->s, txn, 1, c->id, "hc", 1), 0);
  assert_int_equal(cat__txn_commit(txn), 0);
  /* the catalog and schema stay (they are the catalog API's to delete); Lance content goes */
  assert_string_equal(names(e->s, PATH("hc")), "s");
  assert_string_equal(names(e->s, PATH("hc", "s")), "");
  assert_int_equal(db_entries(e->s, CAT__DB_NAMESPACES), 0);
  assert_int_equal(db_entries(e->s, CAT__DB_LANCE_TABLES), 1); /* other's */
  cat_lance_table *t = NULL;
  assert_int_equal(cat_lance_table_get(e->s, &t, PATH("other", "s", "t")), 0);
  FREE(t);
  FREE(c);
  FREE(sc);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_levels_are_catalogs_and_schemas, setup, teardown),
      cmocka_unit_test_setup_teardown(test_create_modes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_root, setup, teardown),
      cmocka_unit_test_setup_teardown(test_validation, setup, teardown),
      cmocka_unit_test_setup_teardown(test_drop, setup, teardown),
      cmocka_unit_test_setup_teardown(test_paging, setup, teardown),
      cmocka_unit_test_setup_teardown(test_tables, setup, teardown),
      cmocka_unit_test_setup_teardown(test_below_drop_hook, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
