/* test_route.c: unit tests of the REST router (server/call/call_route.h) as pure
 * functions: template matching, percent-decoding, literal-over-variable priority, `**`,
 * custom verbs, 404 versus 405, and bad templates. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/err.h"
#include "server/call/call_route.h"

static const dd_api_route test_routes[] = {
    {"/s.S/List", "GET", "/catalogs", ""},
    {"/s.S/Create", "POST", "/catalogs", "*"},
    {"/s.S/Get", "GET", "/catalogs/{name}", ""},
    {"/s.S/Special", "GET", "/catalogs/special", ""},
    {"/s.S/Delete", "DELETE", "/catalogs/{name}", ""},
    {"/s.S/Table", "GET", "/catalogs/{catalog}/tables/{table.name=*}", ""},
    {"/s.S/Vacuum", "POST", "/tables/{name}:vacuum", "*"},
    {"/s.S/File", "GET", "/files/{path=**}", ""},
    {"/s.S/FileMeta", "GET", "/files/meta/{id}", ""},
};
#define N_ROUTES (sizeof test_routes / sizeof test_routes[0])

static int setup(void **state) {
  dd_call_router *r;
  if (dd_call_router_new(&r, test_routes, N_ROUTES) != 0) return -1;
  *state = r;
  return 0;
}

static int teardown(void **state) {
  dd_call_router_free(*state);
  return 0;
}

/* Matches and checks the route's gRPC method and its variables ("field=value" pairs). */
static void expect(dd_call_router *r, const char *verb, const char *path, const char *method,
                   const char *var1, const char *var2) {
  dd_call_match m;
  int rc = dd_call_router_match(r, verb, path, &m);
  if (rc != 0) fail_msg("%s %s: %s", verb, path, dd_err_msg());
  assert_string_equal(test_routes[m.route].method, method);
  const char *want[] = {var1, var2};
  size_t n_want = var2 ? 2 : var1 ? 1 : 0;
  assert_int_equal(m.n_vars, n_want);
  for (size_t i = 0; i < n_want; i++) {
    char got[512];
    snprintf(got, sizeof got, "%s=%s", m.vars[i].field, m.vars[i].value);
    assert_string_equal(got, want[i]);
  }
  dd_call_match_clear(&m);
}

static void expect_rc(dd_call_router *r, const char *verb, const char *path, int want) {
  dd_call_match m;
  assert_int_equal(dd_call_router_match(r, verb, path, &m), want);
  assert_int_equal(m.n_vars, 0);
}

static void test_literals_and_variables(void **state) {
  dd_call_router *r = *state;
  expect(r, "GET", "/catalogs", "/s.S/List", NULL, NULL);
  expect(r, "POST", "/catalogs", "/s.S/Create", NULL, NULL);
  expect(r, "GET", "/catalogs/foo", "/s.S/Get", "name=foo", NULL);
  expect(r, "DELETE", "/catalogs/foo", "/s.S/Delete", "name=foo", NULL);
  expect(r, "GET", "/catalogs/c1/tables/t1", "/s.S/Table", "catalog=c1", "table.name=t1");
}

static void test_literal_wins(void **state) {
  dd_call_router *r = *state;
  expect(r, "GET", "/catalogs/special", "/s.S/Special", NULL, NULL);
  expect(r, "GET", "/catalogs/specials", "/s.S/Get", "name=specials", NULL);
  /* the literal route has no DELETE: the variable one serves it */
  expect(r, "DELETE", "/catalogs/special", "/s.S/Delete", "name=special", NULL);
  expect(r, "GET", "/files/meta/7", "/s.S/FileMeta", "id=7", NULL);
}

static void test_percent_decoding(void **state) {
  dd_call_router *r = *state;
  expect(r, "GET", "/catalogs/a%2Fb%20c", "/s.S/Get", "name=a/b c", NULL);
  expect(r, "GET", "/catalogs/caf%C3%A9+x", "/s.S/Get", "name=caf\xc3\xa9+x", NULL);
  expect_rc(r, "GET", "/catalogs/a%2", DD_EINVAL);
  expect_rc(r, "GET", "/catalogs/a%zz", DD_EINVAL);
  expect_rc(r, "GET", "/catalogs/a%00b", DD_EINVAL);
  char s[] = "a%41+b%2b";
  assert_int_equal(dd_call_pct_decode(s, 1), 0);
  assert_string_equal(s, "aA b+");
}

static void test_multi_and_verb(void **state) {
  dd_call_router *r = *state;
  expect(r, "GET", "/files/a/b/c.parquet", "/s.S/File", "path=a/b/c.parquet", NULL);
  expect(r, "GET", "/files/x", "/s.S/File", "path=x", NULL);
  expect_rc(r, "GET", "/files", DD_ENOTFOUND);
  expect_rc(r, "GET", "/files/", DD_ENOTFOUND);
  expect(r, "POST", "/tables/t%3A1:vacuum", "/s.S/Vacuum", "name=t:1", NULL);
  expect_rc(r, "POST", "/tables/t1", DD_ENOTFOUND);
  expect_rc(r, "POST", "/tables/t1:clone", DD_ENOTFOUND);
}

static void test_not_found_and_not_allowed(void **state) {
  dd_call_router *r = *state;
  expect_rc(r, "GET", "/nope", DD_ENOTFOUND);
  expect_rc(r, "GET", "/catalogs/", DD_ENOTFOUND);
  expect_rc(r, "GET", "/catalogs/a/b", DD_ENOTFOUND);
  expect_rc(r, "GET", "/catalogs//tables/t", DD_ENOTFOUND);
  expect_rc(r, "GET", "/", DD_ENOTFOUND);
  expect_rc(r, "PUT", "/catalogs/foo", DD_EUNSUPPORTED);
  dd_call_match m;
  assert_int_equal(dd_call_router_match(r, "PATCH", "/catalogs/special", &m), DD_EUNSUPPORTED);
  assert_string_equal(m.allow, "GET, DELETE");
  expect_rc(r, "DELETE", "/catalogs", DD_EUNSUPPORTED);
  char deep[256] = "";
  for (int i = 0; i < 40; i++) strcat(deep, "/x");
  expect_rc(r, "GET", deep, DD_ENOTFOUND);
}

static void test_bad_templates(void **state) {
  (void)state;
  const char *bad[] = {"catalogs", "/a/{", "/a/{}", "/a/{x=y}", "/a/{x=**}/b", "/a//b", "/a/b{x}"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    dd_api_route one = {"/m", "GET", bad[i], ""};
    dd_call_router *r = (dd_call_router *)1;
    assert_int_equal(dd_call_router_new(&r, &one, 1), DD_EINVAL);
    assert_null(r);
  }
}

/* The real generated table compiles and routes. */
static void test_generated_table(void **state) {
  (void)state;
  dd_call_router *r;
  assert_int_equal(dd_call_router_new(&r, dd_api_routes, dd_api_routes_len), 0);
  dd_call_match m;
  assert_int_equal(dd_call_router_match(r, "GET", "/schemas/main.default", &m), 0);
  assert_string_equal(dd_api_routes[m.route].method, "/deltad.catalog.v1.CatalogService/GetSchema");
  assert_string_equal(m.vars[0].field, "full_name");
  assert_string_equal(m.vars[0].value, "main.default");
  dd_call_match_clear(&m);
  dd_call_router_free(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_literals_and_variables, setup, teardown),
      cmocka_unit_test_setup_teardown(test_literal_wins, setup, teardown),
      cmocka_unit_test_setup_teardown(test_percent_decoding, setup, teardown),
      cmocka_unit_test_setup_teardown(test_multi_and_verb, setup, teardown),
      cmocka_unit_test_setup_teardown(test_not_found_and_not_allowed, setup, teardown),
      cmocka_unit_test(test_bad_templates),
      cmocka_unit_test(test_generated_table),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
