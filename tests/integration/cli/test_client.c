/* test_client.c: dd_client (cmd/client.h) against the real gRPC transport of deltad
 * (server/grpc) serving the gRPC runtime's test method table on a free loopback port:
 * unary success, server errors with their status and message, authentication, deadlines
 * (expiry and propagation),
 * large replies, server streaming (whole, stopped by the callback), an unknown method, an
 * unreachable server, and the status name and code tables. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/client.h"
#include "common/err.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "server/grpc/grpc_server.h"
#include "tests/unit/grpc/grpc_test_methods.h"

static dd_grpc_server *srv;
static char target[64];

static int setup(void **state) {
  (void)state;
  dd_grpc_opts o = DD_GRPC_OPTS_INIT;
  o.listen = "127.0.0.1:0";
  o.threads = 2;
  o.shutdown_grace_ms = 200;
  if (dd_grpc_server_start(&srv, &o, gt_registry()) != 0) return -1;
  snprintf(target, sizeof target, "127.0.0.1:%d", dd_grpc_server_port(srv));
  return 0;
}

static int teardown(void **state) {
  (void)state;
  dd_grpc_server_free(srv);
  return 0;
}

static dd_client *open_client(const char *token, int64_t timeout_ms) {
  dd_client_opts o = DD_CLIENT_OPTS_INIT;
  o.target = target;
  o.token = token;
  o.timeout_ms = timeout_ms;
  dd_client *c = NULL;
  assert_int_equal(dd_client_open(&c, &o), 0);
  return c;
}

/* Calls a /dd.test.v1.Test method with GetCatalogRequest{name}. */
static int call_test(dd_client *c, const char *method, const char *name,
                     Deltad__Catalog__V1__CatalogInfo **out) {
  Deltad__Catalog__V1__GetCatalogRequest req = DELTAD__CATALOG__V1__GET_CATALOG_REQUEST__INIT;
  req.name = (char *)name;
  ProtobufCMessage *resp = NULL;
  int rc = dd_client_call(c, method, &req.base, &deltad__catalog__v1__catalog_info__descriptor, &resp);
  *out = (Deltad__Catalog__V1__CatalogInfo *)resp;
  return rc;
}

static void test_unary_ok(void **state) {
  (void)state;
  dd_client *c = open_client(GT_TOKEN, 0);
  Deltad__Catalog__V1__CatalogInfo *ci = NULL;
  assert_int_equal(call_test(c, "/dd.test.v1.Test/Echo", "hello", &ci), 0);
  assert_non_null(ci);
  assert_string_equal(ci->name, "hello");
  assert_int_equal(dd_client_last_status(c), 0);
  protobuf_c_message_free_unpacked(&ci->base, NULL);
  /* The same client makes further calls. */
  assert_int_equal(call_test(c, "/dd.test.v1.Test/Echo", "again", &ci), 0);
  assert_string_equal(ci->name, "again");
  protobuf_c_message_free_unpacked(&ci->base, NULL);
  dd_client_free(c);
}

static void test_server_error_keeps_message(void **state) {
  (void)state;
  dd_client *c = open_client(GT_TOKEN, 0);
  Deltad__Catalog__V1__CatalogInfo *ci = NULL;
  assert_int_equal(call_test(c, "/dd.test.v1.Test/Echo", "notfound", &ci), DD_ENOTFOUND);
  assert_null(ci);
  assert_int_equal(dd_client_last_status(c), 5);
  assert_string_equal(dd_err_msg(), "catalog 'notfound' does not exist");
  dd_client_free(c);
}

static void test_authentication(void **state) {
  (void)state;
  dd_client *bad = open_client("wrong-token", 0);
  Deltad__Catalog__V1__CatalogInfo *ci = NULL;
  assert_int_equal(call_test(bad, "/dd.test.v1.Test/Echo", "x", &ci), DD_EUNAUTH);
  assert_int_equal(dd_client_last_status(bad), 16);
  dd_client_free(bad);

  dd_client *none = open_client(NULL, 0);
  assert_int_equal(call_test(none, "/dd.test.v1.Test/Echo", "x", &ci), DD_EUNAUTH);
  assert_int_equal(call_test(none, "/dd.test.v1.Test/Public", "", &ci), 0);
  assert_string_equal(ci->name, "none");
  protobuf_c_message_free_unpacked(&ci->base, NULL);
  dd_client_free(none);
}

static void test_deadline(void **state) {
  (void)state;
  dd_client *c = open_client(GT_TOKEN, 150);
  Deltad__Catalog__V1__CatalogInfo *ci = NULL;
  assert_int_equal(call_test(c, "/dd.test.v1.Test/Sleep", "1500", &ci), DD_ECANCELLED);
  assert_int_equal(dd_client_last_status(c), 4); /* DEADLINE_EXCEEDED */
  assert_string_equal(dd_client_status_name(dd_client_last_status(c)), "DEADLINE_EXCEEDED");
  dd_client_free(c);
  /* The server sees the deadline the client set (CLOCK_MONOTONIC ms, about now + 5 s). */
  c = open_client(GT_TOKEN, 5000);
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  long long now_ms = (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
  assert_int_equal(call_test(c, "/dd.test.v1.Test/Deadline", "", &ci), 0);
  long long deadline = atoll(ci->comment);
  assert_true(deadline > now_ms + 3000 && deadline < now_ms + 7000);
  protobuf_c_message_free_unpacked(&ci->base, NULL);
  dd_client_free(c);
}

static void test_large_reply(void **state) {
  (void)state;
  dd_client *c = open_client(GT_TOKEN, 0);
  Deltad__Catalog__V1__CatalogInfo *ci = NULL;
  assert_int_equal(call_test(c, "/dd.test.v1.Test/Echo", "big:5000000", &ci), 0);
  assert_int_equal(strlen(ci->comment), 5000000);
  protobuf_c_message_free_unpacked(&ci->base, NULL);
  dd_client_free(c);
}

typedef struct seen {
  int n, stop_at, bad;
} seen;

static int on_item(void *ud, const ProtobufCMessage *msg) {
  seen *s = ud;
  const Deltad__Catalog__V1__CatalogInfo *ci = (const Deltad__Catalog__V1__CatalogInfo *)msg;
  char want[32];
  snprintf(want, sizeof want, "item-%d", s->n);
  if (msg->descriptor != &deltad__catalog__v1__catalog_info__descriptor || strcmp(ci->name, want))
    s->bad++;
  s->n++;
  return s->n == s->stop_at ? 7 : 0;
}

static int stream_count(dd_client *c, int n, const char *token, seen *s) {
  Deltad__Catalog__V1__ListCatalogsRequest req = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  req.max_results = n;
  req.page_token = (char *)token;
  return dd_client_stream(c, "/dd.test.v1.Test/Count", &req.base,
                          &deltad__catalog__v1__catalog_info__descriptor, on_item, s);
}

static void test_stream(void **state) {
  (void)state;
  dd_client *c = open_client(GT_TOKEN, 0);
  seen s = {0, -1, 0};
  assert_int_equal(stream_count(c, 50, "", &s), 0);
  assert_int_equal(s.n, 50);
  assert_int_equal(s.bad, 0);
  assert_int_equal(dd_client_last_status(c), 0);
  seen empty = {0, -1, 0};
  assert_int_equal(stream_count(c, 0, "", &empty), 0);
  assert_int_equal(empty.n, 0);
  dd_client_free(c);
}

static void test_stream_stopped_by_callback(void **state) {
  (void)state;
  dd_client *c = open_client(GT_TOKEN, 0);
  seen s = {0, 3, 0};
  assert_int_equal(stream_count(c, 100, "slow", &s), 7);
  assert_int_equal(s.n, 3);
  assert_int_equal(s.bad, 0);
  assert_int_equal(dd_client_last_status(c), 1); /* CANCELLED */
  /* The client is still usable after a cancelled stream. */
  seen again = {0, -1, 0};
  assert_int_equal(stream_count(c, 4, "", &again), 0);
  assert_int_equal(again.n, 4);
  dd_client_free(c);
}

static void test_stream_error_status(void **state) {
  (void)state;
  dd_client *c = open_client("wrong-token", 0);
  seen s = {0, -1, 0};
  assert_int_equal(stream_count(c, 5, "", &s), DD_EUNAUTH);
  assert_int_equal(s.n, 0);
  dd_client_free(c);
}

static void test_unknown_method(void **state) {
  (void)state;
  dd_client *c = open_client(GT_TOKEN, 0);
  Deltad__Catalog__V1__CatalogInfo *ci = NULL;
  assert_int_equal(call_test(c, "/dd.test.v1.Test/NoSuchMethod", "x", &ci), DD_EUNSUPPORTED);
  assert_int_equal(dd_client_last_status(c), 12);
  dd_client_free(c);
}

static void test_unreachable(void **state) {
  (void)state;
  dd_client_opts o = DD_CLIENT_OPTS_INIT;
  o.target = "127.0.0.1:1";
  o.timeout_ms = 3000;
  dd_client *c = NULL;
  assert_int_equal(dd_client_open(&c, &o), 0);
  Deltad__Catalog__V1__CatalogInfo *ci = NULL;
  int rc = call_test(c, "/dd.test.v1.Test/Echo", "x", &ci);
  assert_true(rc == DD_EIO || rc == DD_ECANCELLED);
  assert_true(dd_client_last_status(c) == 14 || dd_client_last_status(c) == 4);
  assert_true(strlen(dd_err_msg()) > 0);
  dd_client_free(c);
}

static void test_status_tables(void **state) {
  (void)state;
  assert_string_equal(dd_client_status_name(0), "OK");
  assert_string_equal(dd_client_status_name(5), "NOT_FOUND");
  assert_string_equal(dd_client_status_name(16), "UNAUTHENTICATED");
  assert_string_equal(dd_client_status_name(17), "UNKNOWN");
  assert_string_equal(dd_client_status_name(-1), "UNKNOWN");
  /* Every DD_E* code survives the trip through its gRPC status (dd_call_status_grpc's table). */
  const int codes[] = {DD_EINVAL, DD_ENOTFOUND, DD_EEXISTS, DD_ECONFLICT, DD_EPRECOND,
                       DD_EUNAUTH, DD_EPERM, DD_EUNSUPPORTED, DD_EIO, DD_ENOMEM,
                       DD_ECORRUPT, DD_ERANGE, DD_ECANCELLED, DD_EINTERNAL};
  const int grpc[] = {3, 5, 6, 10, 9, 16, 7, 12, 14, 8, 15, 11, 1, 13};
  for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
    assert_int_equal(dd_client_code_from_grpc(grpc[i]), codes[i]);
    assert_string_equal(dd_client_status_name(grpc[i]), dd_err_name(codes[i]));
  }
  assert_int_equal(dd_client_code_from_grpc(0), 0);
  assert_int_equal(dd_client_code_from_grpc(2), DD_EINTERNAL);  /* UNKNOWN */
  assert_int_equal(dd_client_code_from_grpc(4), DD_ECANCELLED); /* DEADLINE_EXCEEDED */
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unary_ok),
      cmocka_unit_test(test_server_error_keeps_message),
      cmocka_unit_test(test_authentication),
      cmocka_unit_test(test_deadline),
      cmocka_unit_test(test_large_reply),
      cmocka_unit_test(test_stream),
      cmocka_unit_test(test_stream_stopped_by_callback),
      cmocka_unit_test(test_stream_error_status),
      cmocka_unit_test(test_unknown_method),
      cmocka_unit_test(test_unreachable),
      cmocka_unit_test(test_status_tables),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
