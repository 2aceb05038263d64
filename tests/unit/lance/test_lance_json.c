/* test_lance_json.c: the reflective Lance JSON codec (server/http/native/lance_rest_json.h)
 * over the deltad.lance.v1 messages: types, maps, optionals, unknown keys, wrong types,
 * what is emitted and what is left out; and the Lance error-code mapping. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "deltad/lance/v1/lance.pb-c.h"
#include "server/call/call.h"
#include "server/http/native/lance_rest_json.h"

static ProtobufCMessage *new_msg(const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = malloc(d->sizeof_message);
  d->message_init(m);
  return m;
}

static int parse(ProtobufCMessage *m, const char *text) {
  json_t *j = json_loads(text, 0, NULL);
  assert_non_null(j);
  int rc = dd_native__lance_json_to_msg(m, j);
  json_decref(j);
  return rc;
}

static void test_parse_create(void **state) {
  (void)state;
  Deltad__Lance__V1__CreateNamespaceRequest *r =
      (void *)new_msg(&deltad__lance__v1__create_namespace_request__descriptor);
  assert_int_equal(parse(&r->base, "{\"id\":[\"a\",\"b\"],\"mode\":\"ExistOk\",\"properties\":"
                                   "{\"k\":\"v\",\"x\":\"\"},\"identity\":{\"api_key\":\"z\"},"
                                   "\"context\":{},\"future\":[1]}"), 0);
  assert_int_equal(r->n_id, 2);
  assert_string_equal(r->id[1], "b");
  assert_string_equal(r->mode, "ExistOk");
  assert_int_equal(r->n_properties, 2);
  assert_string_equal(r->properties[0]->key, "k");
  assert_string_equal(r->properties[1]->value, "");
  protobuf_c_message_free_unpacked(&r->base, NULL);
}

static void test_parse_optionals_and_nulls(void **state) {
  (void)state;
  Deltad__Lance__V1__DescribeTableRequest *r =
      (void *)new_msg(&deltad__lance__v1__describe_table_request__descriptor);
  assert_int_equal(parse(&r->base, "{\"version\":7,\"load_detailed_metadata\":false,"
                                   "\"with_table_uri\":true,\"id\":null,\"check_declared\":null}"), 0);
  assert_int_equal(r->_version_case, DELTAD__LANCE__V1__DESCRIBE_TABLE_REQUEST___VERSION_VERSION);
  assert_int_equal(r->version, 7);
  assert_int_equal(r->_load_detailed_metadata_case,
                   DELTAD__LANCE__V1__DESCRIBE_TABLE_REQUEST___LOAD_DETAILED_METADATA_LOAD_DETAILED_METADATA);
  assert_false(r->load_detailed_metadata);
  assert_true(r->with_table_uri);
  assert_int_equal(r->n_id, 0);
  protobuf_c_message_free_unpacked(&r->base, NULL);
}

static void expect_bad(const ProtobufCMessageDescriptor *d, const char *text, const char *field) {
  ProtobufCMessage *m = new_msg(d);
  assert_int_equal(parse(m, text), DD_EINVAL);
  if (!strstr(dd_err_msg(), field)) fail_msg("%s: '%s' lacks '%s'", text, dd_err_msg(), field);
  protobuf_c_message_free_unpacked(m, NULL); /* a half-filled message frees cleanly */
}

static void test_parse_wrong_types(void **state) {
  (void)state;
  const ProtobufCMessageDescriptor *c = &deltad__lance__v1__create_namespace_request__descriptor;
  expect_bad(c, "{\"mode\":1}", "mode");
  expect_bad(c, "{\"id\":\"a$b\"}", "id");
  expect_bad(c, "{\"id\":[\"a\",2]}", "id");
  expect_bad(c, "{\"properties\":{\"a\":\"b\",\"k\":1}}", "properties.k");
  expect_bad(c, "{\"properties\":[]}", "properties");
  expect_bad(c, "[]", "object");
  const ProtobufCMessageDescriptor *l = &deltad__lance__v1__list_namespaces_request__descriptor;
  expect_bad(l, "{\"limit\":\"3\"}", "limit");
  expect_bad(l, "{\"limit\":1.5}", "limit");
  expect_bad(l, "{\"limit\":4294967296}", "limit");
  const ProtobufCMessageDescriptor *t = &deltad__lance__v1__describe_table_request__descriptor;
  expect_bad(t, "{\"with_table_uri\":\"true\"}", "with_table_uri");
}

static void test_query(void **state) {
  (void)state;
  Deltad__Lance__V1__ListTablesRequest *r =
      (void *)new_msg(&deltad__lance__v1__list_tables_request__descriptor);
  assert_int_equal(dd_native__lance_query_to_field(&r->base, "limit", "25"), 0);
  assert_int_equal(dd_native__lance_query_to_field(&r->base, "page_token", "t 2"), 0);
  assert_int_equal(dd_native__lance_query_to_field(&r->base, "include_declared", "false"), 0);
  assert_int_equal(r->limit, 25);
  assert_string_equal(r->page_token, "t 2");
  assert_int_equal(r->_include_declared_case, DELTAD__LANCE__V1__LIST_TABLES_REQUEST___INCLUDE_DECLARED_INCLUDE_DECLARED);
  assert_int_equal(dd_native__lance_query_to_field(&r->base, "limit", "x"), DD_EINVAL);
  assert_int_equal(dd_native__lance_query_to_field(&r->base, "limit", ""), DD_EINVAL);
  assert_int_equal(dd_native__lance_query_to_field(&r->base, "limit", "99999999999"), DD_EINVAL);
  assert_int_equal(dd_native__lance_query_to_field(&r->base, "include_declared", "yes"), DD_EINVAL);
  protobuf_c_message_free_unpacked(&r->base, NULL);
}

static char *emit(const ProtobufCMessage *m) {
  json_t *j = dd_native__lance_msg_to_json(m);
  assert_non_null(j);
  char *s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
  json_decref(j);
  return s;
}

static void test_emit(void **state) {
  (void)state;
  Deltad__Lance__V1__ListNamespacesResponse l = DELTAD__LANCE__V1__LIST_NAMESPACES_RESPONSE__INIT;
  char *s = emit(&l.base);
  assert_string_equal(s, "{\"namespaces\":[]}"); /* required key, no token on the last page */
  free(s);
  char *names[] = {"a", "b"};
  l.n_namespaces = 2;
  l.namespaces = names;
  l.page_token = "b";
  s = emit(&l.base);
  assert_string_equal(s, "{\"namespaces\":[\"a\",\"b\"],\"page_token\":\"b\"}");
  free(s);

  Deltad__Lance__V1__DropNamespaceResponse d = DELTAD__LANCE__V1__DROP_NAMESPACE_RESPONSE__INIT;
  s = emit(&d.base);
  assert_string_equal(s, "{\"properties\":{}}"); /* no empty transaction_id list */
  free(s);

  Deltad__Lance__V1__DescribeTableResponse t = DELTAD__LANCE__V1__DESCRIBE_TABLE_RESPONSE__INIT;
  Deltad__Lance__V1__DescribeTableResponse__PropertiesEntry e =
      DELTAD__LANCE__V1__DESCRIBE_TABLE_RESPONSE__PROPERTIES_ENTRY__INIT;
  Deltad__Lance__V1__DescribeTableResponse__PropertiesEntry *ep = &e;
  e.key = "k";
  e.value = "v";
  t.location = "/d";
  t.n_properties = 1;
  t.properties = &ep;
  s = emit(&t.base);
  assert_string_equal(s, "{\"location\":\"/d\",\"properties\":{\"k\":\"v\"}}");
  free(s);
  t._is_only_declared_case = DELTAD__LANCE__V1__DESCRIBE_TABLE_RESPONSE___IS_ONLY_DECLARED_IS_ONLY_DECLARED;
  t.is_only_declared = 0;
  s = emit(&t.base);
  assert_non_null(strstr(s, "\"is_only_declared\":false"));
  free(s);
}

/* The Lance codes and statuses of the call core's table (dd_call_status_lance), which the
 * REST codec answers with. */
static void test_error_codes(void **state) {
  (void)state;
  enum { NONE = DD_CALL_DETAIL_NONE, NS = DD_CALL_DETAIL_NAMESPACE, TABLE = DD_CALL_DETAIL_TABLE };
  const struct {
    int dd, detail, code, http;
  } cases[] = {
      {DD_ENOTFOUND, NS, 1, 404},   {DD_ENOTFOUND, TABLE, 4, 404}, {DD_EEXISTS, NS, 2, 409},
      {DD_EEXISTS, TABLE, 5, 409},  {DD_EPRECOND, NS, 3, 409},     {DD_EPRECOND, TABLE, 19, 409},
      {DD_EINVAL, NONE, 13, 400},   {DD_EINVAL, TABLE, 13, 400},   {DD_ERANGE, NONE, 13, 400},
      {DD_ECONFLICT, TABLE, 14, 409}, {DD_EPERM, NONE, 15, 403},   {DD_EUNAUTH, NONE, 16, 401},
      {DD_EIO, NONE, 17, 503},      {DD_ECANCELLED, NONE, 17, 503}, {DD_ENOMEM, NONE, 17, 503},
      {DD_ECORRUPT, NONE, 18, 500}, {DD_EINTERNAL, NONE, 18, 500}, {DD_EUNSUPPORTED, NONE, 0, 406},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    int http = 0;
    assert_int_equal(dd_call_status_lance(cases[i].dd, cases[i].detail, &http), cases[i].code);
    assert_int_equal(http, cases[i].http);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parse_create),
      cmocka_unit_test(test_parse_optionals_and_nulls),
      cmocka_unit_test(test_parse_wrong_types),
      cmocka_unit_test(test_query),
      cmocka_unit_test(test_emit),
      cmocka_unit_test(test_error_codes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
