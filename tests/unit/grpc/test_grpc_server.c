/* test_grpc_server.c: the gRPC runtime end to end over loopback: a real dd_grpc_server
 * serving the test method table (grpc_test_methods.h) and a real gRPC core client
 * (grpc_test_client.h). Covers status codes and messages, authentication, decoding,
 * message size limits, streaming, deadlines, concurrency, health, reflection and
 * graceful shutdown. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <grpc/grpc_security.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/system/v1/system.pb-c.h"
#include "google/protobuf/descriptor.pb-c.h"
#include "grpc/health/v1/health.pb-c.h"
#include "grpc/reflection/v1alpha/reflection.pb-c.h"
#include "server/grpc/grpc_int.h" /* dd_grpc__reflection_reply */
#include "server/grpc/grpc_server.h"
#include "tests/unit/grpc/grpc_test_client.h"
#include "tests/unit/grpc/grpc_test_methods.h"

#define MAX_MSG (64u << 10)
#define BEARER "Bearer " GT_TOKEN
#define REFLECT "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo"

static dd_grpc_server *g_srv;
static grpc_channel *g_ch;

/* ---- helpers ---- */

static grpc_channel *open_channel(int port) {
  char target[64];
  snprintf(target, sizeof target, "127.0.0.1:%d", port);
  grpc_arg arg;
  memset(&arg, 0, sizeof arg);
  arg.type = GRPC_ARG_INTEGER;
  arg.key = (char *)GRPC_ARG_MAX_SEND_MESSAGE_LENGTH;
  arg.value.integer = -1; /* let the client send oversize messages: the server must refuse */
  grpc_channel_args args = {1, &arg};
  grpc_channel_credentials *creds = grpc_insecure_credentials_create();
  grpc_channel *ch = grpc_channel_create(target, creds, &args);
  grpc_channel_credentials_release(creds);
  return ch;
}

static int start_server(dd_grpc_server **out, int threads, int grace_ms) {
  dd_grpc_opts o = DD_GRPC_OPTS_INIT;
  o.listen = "127.0.0.1:0";
  o.threads = threads;
  o.max_message_bytes = MAX_MSG;
  o.shutdown_grace_ms = grace_ms;
  return dd_grpc_server_start(out, &o, gt_registry());
}

static tc_bytes catalog_req(const char *name) {
  Deltad__Catalog__V1__GetCatalogRequest r = DELTAD__CATALOG__V1__GET_CATALOG_REQUEST__INIT;
  r.name = (char *)name;
  return tc_pack(&r.base);
}

/* One call with a single request message; frees the request bytes. */
static void call1(grpc_channel *ch, const char *method, const tc_opts *o, tc_bytes req, tc_result *out) {
  assert_int_equal(tc_call(ch, method, o, &req, 1, out), 0);
  free(req.data);
}

static Deltad__Catalog__V1__CatalogInfo *catalog_of(const tc_result *r, size_t i) {
  assert_true(i < r->n_msgs);
  Deltad__Catalog__V1__CatalogInfo *c = deltad__catalog__v1__catalog_info__unpack(NULL, r->msgs[i].len, r->msgs[i].data);
  assert_non_null(c);
  return c;
}

static void sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int64_t now_ms(void) { /* the clock of call deadlines */
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- fixture ---- */

static int group_setup(void **state) {
  (void)state;
  if (start_server(&g_srv, 4, 5000) != 0) {
    fprintf(stderr, "start: %s\n", dd_err_msg());
    return -1;
  }
  g_ch = open_channel(dd_grpc_server_port(g_srv));
  return 0;
}

static int group_teardown(void **state) {
  (void)state;
  grpc_channel_destroy(g_ch);
  dd_grpc_server_free(g_srv);
  return 0;
}

/* ---- unary, status, metadata ---- */

static void test_unary_ok(void **state) {
  (void)state;
  tc_opts o = {.authorization = BEARER, .echo = "hello metadata"};
  Deltad__System__V1__GetServerInfoRequest req = DELTAD__SYSTEM__V1__GET_SERVER_INFO_REQUEST__INIT;
  tc_result r;
  call1(g_ch, "/deltad.system.v1.SystemService/GetServerInfo", &o, tc_pack(&req.base), &r);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  assert_int_equal(r.n_msgs, 1);
  Deltad__System__V1__GetServerInfoResponse *info =
      deltad__system__v1__get_server_info_response__unpack(NULL, r.msgs[0].len, r.msgs[0].data);
  assert_non_null(info);
  assert_string_equal(info->version, "hello metadata");
  assert_string_equal(info->principal, GT_PRINCIPAL);
  deltad__system__v1__get_server_info_response__free_unpacked(info, NULL);
  tc_result_free(&r);

  Deltad__System__V1__PingRequest ping = DELTAD__SYSTEM__V1__PING_REQUEST__INIT;
  call1(g_ch, "/deltad.system.v1.SystemService/Ping", &o, tc_pack(&ping.base), &r);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  assert_int_equal(r.n_msgs, 1);
  assert_int_equal(r.msgs[0].len, 0); /* an empty PingResponse */
  tc_result_free(&r);
}

static void test_error_status_and_message(void **state) {
  (void)state;
  tc_opts o = {.authorization = BEARER};
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Echo", &o, catalog_req("notfound"), &r);
  assert_int_equal(r.status, GRPC_STATUS_NOT_FOUND);
  assert_string_equal(r.details, "catalog 'notfound' does not exist");
  assert_int_equal(r.n_msgs, 0);
  tc_result_free(&r);

  call1(g_ch, "/dd.test.v1.Test/Echo", &o, catalog_req("main"), &r);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  Deltad__Catalog__V1__CatalogInfo *c = catalog_of(&r, 0);
  assert_string_equal(c->name, "main");
  deltad__catalog__v1__catalog_info__free_unpacked(c, NULL);
  tc_result_free(&r);
}

static void test_unknown_method(void **state) {
  (void)state;
  tc_opts o = {.authorization = BEARER};
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Nope", &o, catalog_req("x"), &r);
  assert_int_equal(r.status, GRPC_STATUS_UNIMPLEMENTED);
  assert_non_null(strstr(r.details, "/dd.test.v1.Test/Nope"));
  tc_result_free(&r);
}

/* ---- authentication ---- */

static void expect_unauthenticated(const char *authorization, const char *detail_part) {
  tc_opts o = {.authorization = authorization};
  long before = atomic_load(&gt_handler_calls);
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Echo", &o, catalog_req("main"), &r);
  assert_int_equal(r.status, GRPC_STATUS_UNAUTHENTICATED);
  assert_non_null(strstr(r.details, detail_part));
  assert_int_equal(r.n_msgs, 0);
  assert_int_equal(atomic_load(&gt_handler_calls), before); /* the handler never ran */
  tc_result_free(&r);
}

static void test_unauthenticated(void **state) {
  (void)state;
  expect_unauthenticated(NULL, "missing 'authorization'");
  expect_unauthenticated("Bearer wrong-token", "unknown token");
  expect_unauthenticated("Basic dXNlcjpwYXNz", "Bearer <token>");
  expect_unauthenticated("Bearer ", "Bearer <token>");
}

static void test_public_method_needs_no_token(void **state) {
  (void)state;
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Public", NULL, catalog_req(""), &r);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  Deltad__Catalog__V1__CatalogInfo *c = catalog_of(&r, 0);
  assert_string_equal(c->name, "none");
  deltad__catalog__v1__catalog_info__free_unpacked(c, NULL);
  tc_result_free(&r);
}

/* ---- decoding and sizes ---- */

static void test_malformed_request(void **state) {
  (void)state;
  tc_opts o = {.authorization = BEARER};
  static const uint8_t bad[] = {0x0a, 0x05, 'a', 'b'}; /* field 1: 5 bytes promised, 2 given */
  tc_bytes req = {malloc(sizeof bad), sizeof bad};
  memcpy(req.data, bad, sizeof bad);
  long before = atomic_load(&gt_handler_calls);
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Echo", &o, req, &r);
  assert_int_equal(r.status, GRPC_STATUS_INVALID_ARGUMENT);
  assert_non_null(strstr(r.details, "malformed request"));
  assert_int_equal(atomic_load(&gt_handler_calls), before);
  tc_result_free(&r);
}

static void test_oversize_messages(void **state) {
  (void)state;
  tc_opts o = {.authorization = BEARER};
  char *name = malloc(MAX_MSG + 100);
  memset(name, 'n', MAX_MSG + 99);
  name[MAX_MSG + 99] = '\0';
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Echo", &o, catalog_req(name), &r);
  free(name);
  assert_int_equal(r.status, GRPC_STATUS_RESOURCE_EXHAUSTED);
  tc_result_free(&r);

  char big[32];
  snprintf(big, sizeof big, "big:%u", MAX_MSG + 1);
  call1(g_ch, "/dd.test.v1.Test/Echo", &o, catalog_req(big), &r);
  assert_int_equal(r.status, GRPC_STATUS_RESOURCE_EXHAUSTED);
  assert_non_null(strstr(r.details, "exceeds the limit"));
  tc_result_free(&r);

  snprintf(big, sizeof big, "big:%u", MAX_MSG - 100); /* just under: fine */
  call1(g_ch, "/dd.test.v1.Test/Echo", &o, catalog_req(big), &r);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  tc_result_free(&r);
}

/* ---- streaming and deadlines ---- */

static tc_bytes count_req(int n, const char *mode) {
  Deltad__Catalog__V1__ListCatalogsRequest r = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  r.max_results = n;
  r.page_token = (char *)mode;
  return tc_pack(&r.base);
}

static void test_streaming_count(void **state) {
  (void)state;
  tc_opts o = {.authorization = BEARER};
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Count", &o, count_req(250, ""), &r);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  assert_int_equal(r.n_msgs, 250);
  for (size_t i = 0; i < r.n_msgs; i += 83) {
    Deltad__Catalog__V1__CatalogInfo *c = catalog_of(&r, i);
    char want[32];
    snprintf(want, sizeof want, "item-%zu", i);
    assert_string_equal(c->name, want);
    deltad__catalog__v1__catalog_info__free_unpacked(c, NULL);
  }
  tc_result_free(&r);

  call1(g_ch, "/dd.test.v1.Test/Count", &o, count_req(0, ""), &r);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  assert_int_equal(r.n_msgs, 0);
  tc_result_free(&r);

  call1(g_ch, "/dd.test.v1.Test/Count", NULL, count_req(3, ""), &r); /* streams need tokens too */
  assert_int_equal(r.status, GRPC_STATUS_UNAUTHENTICATED);
  assert_int_equal(r.n_msgs, 0);
  tc_result_free(&r);
}

static void test_deadline_exceeded(void **state) {
  (void)state;
  tc_opts o = {.authorization = BEARER, .timeout_ms = 200};
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Sleep", &o, catalog_req("700"), &r);
  assert_int_equal(r.status, GRPC_STATUS_DEADLINE_EXCEEDED);
  tc_result_free(&r);
}

static void test_deadline_reaches_handler(void **state) {
  (void)state;
  tc_opts o = {.authorization = BEARER, .timeout_ms = 5000};
  int64_t expect = now_ms() + 5000;
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Deadline", &o, catalog_req(""), &r);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  Deltad__Catalog__V1__CatalogInfo *c = catalog_of(&r, 0);
  long long got = atoll(c->comment);
  assert_true(got > expect - 1000 && got < expect + 1000); /* monotonic ms: a wall-clock step cannot expire it */
  deltad__catalog__v1__catalog_info__free_unpacked(c, NULL);
  tc_result_free(&r);

  o.timeout_ms = 0;
  call1(g_ch, "/dd.test.v1.Test/Deadline", &o, catalog_req(""), &r);
  c = catalog_of(&r, 0);
  assert_string_equal(c->comment, "0");
  deltad__catalog__v1__catalog_info__free_unpacked(c, NULL);
  tc_result_free(&r);
}

static void test_stream_stops_after_deadline(void **state) {
  (void)state;
  long before = atomic_load(&gt_stream_cancelled);
  tc_opts o = {.authorization = BEARER, .timeout_ms = 300};
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Count", &o, count_req(1000, "slow"), &r); /* 20 s if not stopped */
  assert_int_equal(r.status, GRPC_STATUS_DEADLINE_EXCEEDED);
  assert_true(r.n_msgs > 0 && r.n_msgs < 1000);
  tc_result_free(&r);
  for (int i = 0; i < 200 && atomic_load(&gt_stream_cancelled) == before; i++) sleep_ms(10);
  assert_true(atomic_load(&gt_stream_cancelled) > before); /* send returned DD_ECANCELLED */
}

static void test_stream_stops_when_client_cancels(void **state) {
  (void)state;
  long before = atomic_load(&gt_stream_cancelled);
  tc_opts o = {.authorization = BEARER, .cancel_after = 3};
  tc_result r;
  call1(g_ch, "/dd.test.v1.Test/Count", &o, count_req(1000, "slow"), &r);
  assert_int_equal(r.status, GRPC_STATUS_CANCELLED);
  assert_int_equal(r.n_msgs, 3);
  tc_result_free(&r);
  for (int i = 0; i < 200 && atomic_load(&gt_stream_cancelled) == before; i++) sleep_ms(10);
  assert_true(atomic_load(&gt_stream_cancelled) > before); /* send returned DD_ECANCELLED */
}

/* ---- concurrency ---- */

#define CONC_THREADS 8
#define CONC_CALLS 500

static void *conc_worker(void *arg) {
  long *ok = arg;
  tc_opts o = {.authorization = BEARER};
  Deltad__System__V1__PingRequest ping = DELTAD__SYSTEM__V1__PING_REQUEST__INIT;
  tc_bytes req = tc_pack(&ping.base);
  for (int i = 0; i < CONC_CALLS; i++) {
    tc_result r;
    if (tc_call(g_ch, "/deltad.system.v1.SystemService/Ping", &o, &req, 1, &r) == 0 && r.status == GRPC_STATUS_OK &&
        r.n_msgs == 1)
      (*ok)++;
    tc_result_free(&r);
  }
  free(req.data);
  return NULL;
}

static void test_many_concurrent_calls(void **state) {
  (void)state;
  pthread_t t[CONC_THREADS];
  long ok[CONC_THREADS] = {0};
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (int i = 0; i < CONC_THREADS; i++) assert_int_equal(pthread_create(&t[i], NULL, conc_worker, &ok[i]), 0);
  long total = 0;
  for (int i = 0; i < CONC_THREADS; i++) {
    pthread_join(t[i], NULL);
    total += ok[i];
  }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
  printf("# %d concurrent calls in %.2f s (%.0f calls/s; informational, not a benchmark)\n",
         CONC_THREADS * CONC_CALLS, secs, (double)(CONC_THREADS * CONC_CALLS) / secs);
  assert_int_equal(total, CONC_THREADS * CONC_CALLS);
}

/* The slots of a method grow with its calls, to prepost_max a worker, and no further; a
 * method nobody calls keeps its starting slot (grpc_int.h, Slots). Runs after
 * test_many_concurrent_calls, whose 4,000 Ping calls grew Ping to the top. */
static void test_slots_grow_with_calls(void **state) {
  (void)state;
  const dd_grpc__method *ping = NULL, *v1 = NULL;
  for (size_t i = 0; i < g_srv->n_methods; i++) {
    if (!strcmp(g_srv->methods[i].m->path, "/deltad.system.v1.SystemService/Ping")) ping = &g_srv->methods[i];
    if (!strcmp(g_srv->methods[i].m->path, DD_GRPC__REFLECTION_V1_PATH)) v1 = &g_srv->methods[i];
  }
  assert_non_null(ping);
  assert_non_null(v1);
  assert_int_equal(ping->prepost, DD_GRPC__PREPOST_START);
  assert_int_equal(atomic_load(&ping->grown), (DD_GRPC__PREPOST - DD_GRPC__PREPOST_START) * g_srv->n_workers);
  assert_int_equal(atomic_load(&v1->grown), 0);
}

/* ---- health ---- */

static int health_check(const char *service, char *details, size_t details_len) {
  Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  req.service = (char *)service;
  tc_result r;
  call1(g_ch, "/grpc.health.v1.Health/Check", NULL, tc_pack(&req.base), &r);
  int out = -(int)r.status;
  if (r.status == GRPC_STATUS_OK) {
    Grpc__Health__V1__HealthCheckResponse *h =
        grpc__health__v1__health_check_response__unpack(NULL, r.msgs[0].len, r.msgs[0].data);
    assert_non_null(h);
    out = h->status;
    grpc__health__v1__health_check_response__free_unpacked(h, NULL);
  }
  if (details) snprintf(details, details_len, "%s", r.details);
  tc_result_free(&r);
  return out;
}

static void test_health(void **state) {
  (void)state;
  const int serving = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
  assert_int_equal(health_check("", NULL, 0), serving);
  assert_int_equal(health_check("dd.test.v1.Test", NULL, 0), serving);
  assert_int_equal(health_check("deltad.system.v1.SystemService", NULL, 0), serving);
  assert_int_equal(health_check("grpc.health.v1.Health", NULL, 0), serving);
  char details[1024];
  assert_int_equal(health_check("no.such.Service", details, sizeof details), -GRPC_STATUS_NOT_FOUND);
  assert_non_null(strstr(details, "no.such.Service"));

  /* Watch: the current status once, then the stream stays open (until our deadline). */
  Grpc__Health__V1__HealthCheckRequest req = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  req.service = (char *)"unknown.Svc";
  tc_opts o = {.timeout_ms = 300};
  tc_result r;
  call1(g_ch, "/grpc.health.v1.Health/Watch", &o, tc_pack(&req.base), &r);
  assert_int_equal(r.status, GRPC_STATUS_DEADLINE_EXCEEDED);
  assert_int_equal(r.n_msgs, 1);
  Grpc__Health__V1__HealthCheckResponse *h =
      grpc__health__v1__health_check_response__unpack(NULL, r.msgs[0].len, r.msgs[0].data);
  assert_int_equal(h->status, GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN);
  grpc__health__v1__health_check_response__free_unpacked(h, NULL);
  tc_result_free(&r);
}

/* ---- reflection ---- */

typedef Grpc__Reflection__V1alpha__ServerReflectionRequest refl_req;
typedef Grpc__Reflection__V1alpha__ServerReflectionResponse refl_resp;

static refl_resp *refl_msg(const tc_result *r, size_t i) {
  assert_true(i < r->n_msgs);
  refl_resp *m = grpc__reflection__v1alpha__server_reflection_response__unpack(NULL, r->msgs[i].len, r->msgs[i].data);
  assert_non_null(m);
  return m;
}

static bool has_service(const refl_resp *m, const char *name) {
  for (size_t i = 0; i < m->list_services_response->n_service; i++)
    if (strcmp(m->list_services_response->service[i]->name, name) == 0) return true;
  return false;
}

/* Decodes every FileDescriptorProto of m; returns their count, checks the first's name. */
static size_t check_files(const refl_resp *m, const char *first) {
  assert_int_equal(m->message_response_case,
                   GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_FILE_DESCRIPTOR_RESPONSE);
  const Grpc__Reflection__V1alpha__FileDescriptorResponse *f = m->file_descriptor_response;
  for (size_t i = 0; i < f->n_file_descriptor_proto; i++) {
    Google__Protobuf__FileDescriptorProto *fd = google__protobuf__file_descriptor_proto__unpack(
        NULL, f->file_descriptor_proto[i].len, f->file_descriptor_proto[i].data);
    assert_non_null(fd);
    if (i == 0) assert_string_equal(fd->name, first);
    google__protobuf__file_descriptor_proto__free_unpacked(fd, NULL);
  }
  return f->n_file_descriptor_proto;
}

static void test_reflection(void **state) {
  (void)state;
  refl_req q[6];
  for (int i = 0; i < 6; i++) grpc__reflection__v1alpha__server_reflection_request__init(&q[i]);
  q[0].message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_LIST_SERVICES;
  q[0].list_services = (char *)"*";
  q[1].message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL;
  q[1].file_containing_symbol = (char *)"deltad.system.v1.SystemService";
  q[2].message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL;
  q[2].file_containing_symbol = (char *)"no.such.Symbol";
  q[3].message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_BY_FILENAME;
  q[3].file_by_filename = (char *)"grpc/health/v1/health.proto";
  q[4].message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_SYMBOL;
  q[4].file_containing_symbol = (char *)"grpc.health.v1.HealthCheckResponse.status"; /* a field */
  q[5].message_request_case =
      GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_ALL_EXTENSION_NUMBERS_OF_TYPE;
  q[5].all_extension_numbers_of_type = (char *)"google.protobuf.MethodOptions";
  tc_bytes reqs[6];
  for (int i = 0; i < 6; i++) reqs[i] = tc_pack(&q[i].base);
  tc_result r;
  assert_int_equal(tc_call(g_ch, REFLECT, NULL, reqs, 6, &r), 0); /* public: no token */
  for (int i = 0; i < 6; i++) free(reqs[i].data);
  assert_int_equal(r.status, GRPC_STATUS_OK);
  assert_int_equal(r.n_msgs, 6);

  refl_resp *m = refl_msg(&r, 0);
  assert_non_null(m->original_request);
  assert_string_equal(m->original_request->list_services, "*");
  assert_true(has_service(m, "deltad.system.v1.SystemService"));
  assert_true(has_service(m, "grpc.health.v1.Health"));
  assert_true(has_service(m, "grpc.reflection.v1alpha.ServerReflection"));
  grpc__reflection__v1alpha__server_reflection_response__free_unpacked(m, NULL);

  m = refl_msg(&r, 1); /* system.proto + annotations.proto, http.proto, descriptor.proto */
  assert_int_equal(check_files(m, "deltad/system/v1/system.proto"), 4);
  grpc__reflection__v1alpha__server_reflection_response__free_unpacked(m, NULL);

  m = refl_msg(&r, 2);
  assert_int_equal(m->message_response_case,
                   GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ERROR_RESPONSE);
  assert_int_equal(m->error_response->error_code, GRPC_STATUS_NOT_FOUND);
  grpc__reflection__v1alpha__server_reflection_response__free_unpacked(m, NULL);

  m = refl_msg(&r, 3);
  assert_int_equal(check_files(m, "grpc/health/v1/health.proto"), 1);
  grpc__reflection__v1alpha__server_reflection_response__free_unpacked(m, NULL);

  m = refl_msg(&r, 4);
  assert_int_equal(check_files(m, "grpc/health/v1/health.proto"), 1);
  grpc__reflection__v1alpha__server_reflection_response__free_unpacked(m, NULL);

  m = refl_msg(&r, 5); /* google.api.http extends MethodOptions with field 72295728 */
  assert_int_equal(m->message_response_case,
                   GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_RESPONSE__MESSAGE_RESPONSE_ALL_EXTENSION_NUMBERS_RESPONSE);
  assert_int_equal(m->all_extension_numbers_response->n_extension_number, 1);
  assert_int_equal(m->all_extension_numbers_response->extension_number[0], 72295728);
  grpc__reflection__v1alpha__server_reflection_response__free_unpacked(m, NULL);
  tc_result_free(&r);
}

static void test_reflection_extension_file(void **state) {
  (void)state;
  Grpc__Reflection__V1alpha__ExtensionRequest ext = GRPC__REFLECTION__V1ALPHA__EXTENSION_REQUEST__INIT;
  ext.containing_type = (char *)"google.protobuf.MethodOptions";
  ext.extension_number = 72295728;
  refl_req q = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__INIT;
  q.message_request_case = GRPC__REFLECTION__V1ALPHA__SERVER_REFLECTION_REQUEST__MESSAGE_REQUEST_FILE_CONTAINING_EXTENSION;
  q.file_containing_extension = &ext;
  tc_bytes in = tc_pack(&q.base);
  uint8_t *out = NULL;
  size_t len = 0;
  assert_int_equal(dd_grpc__reflection_reply(in.data, in.len, &out, &len), 0);
  refl_resp *m = grpc__reflection__v1alpha__server_reflection_response__unpack(NULL, len, out);
  assert_non_null(m);
  assert_int_equal(check_files(m, "google/api/annotations.proto"), 3); /* + http, descriptor */
  grpc__reflection__v1alpha__server_reflection_response__free_unpacked(m, NULL);
  free(out);
  free(in.data);

  ext.extension_number = 1; /* no such extension */
  in = tc_pack(&q.base);
  assert_int_equal(dd_grpc__reflection_reply(in.data, in.len, &out, &len), 0);
  m = grpc__reflection__v1alpha__server_reflection_response__unpack(NULL, len, out);
  assert_int_equal(m->error_response->error_code, GRPC_STATUS_NOT_FOUND);
  grpc__reflection__v1alpha__server_reflection_response__free_unpacked(m, NULL);
  free(out);
  free(in.data);

  static const uint8_t junk[] = {0x22, 0x10, 'x'};
  assert_int_equal(dd_grpc__reflection_reply(junk, sizeof junk, &out, &len), DD_EINVAL);
  assert_null(out);
}

/* ---- start errors ---- */

static void test_start_errors(void **state) {
  (void)state;
  char listen[64];
  snprintf(listen, sizeof listen, "127.0.0.1:%d", dd_grpc_server_port(g_srv));
  dd_grpc_opts o = DD_GRPC_OPTS_INIT;
  o.listen = listen;
  o.threads = 1;
  dd_grpc_server *s = (dd_grpc_server *)1;
  assert_int_equal(dd_grpc_server_start(&s, &o, gt_registry()), DD_EIO);
  assert_null(s);
  assert_non_null(strstr(dd_err_msg(), "cannot listen on"));

  o.listen = "127.0.0.1:0";
  dd_method twice[2] = {gt_methods[0], gt_methods[0]};
  dd_call_registry *reg = (dd_call_registry *)1;
  assert_int_equal(dd_call_registry_new(&reg, twice, 2, NULL, gt_auth), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "registered twice"));
  assert_null(reg);
  dd_method bad = gt_methods[0];
  bad.path = "NoSlash";
  assert_int_equal(dd_call_registry_new(&reg, &bad, 1, NULL, gt_auth), 0);
  assert_int_equal(dd_grpc_server_start(&s, &o, reg), DD_EINVAL);
  dd_call_registry_free(reg);
  dd_grpc_server_free(NULL);
}

/* ---- graceful shutdown (servers of their own) ---- */

typedef struct bg_call {
  grpc_channel *ch;
  const char *method;
  tc_bytes req;
  atomic_long received;
  tc_result r;
  pthread_t t;
} bg_call;

static void *bg_main(void *arg) {
  bg_call *b = arg;
  tc_opts o = {.authorization = BEARER, .received = &b->received};
  tc_call(b->ch, b->method, &o, &b->req, 1, &b->r);
  free(b->req.data);
  return NULL;
}

static void bg_start(bg_call *b, grpc_channel *ch, const char *method, tc_bytes req) {
  b->ch = ch;
  b->method = method;
  b->req = req;
  assert_int_equal(pthread_create(&b->t, NULL, bg_main, b), 0);
}

/* Waits (up to 10 s) until *counter exceeds before. */
static void wait_above(atomic_long *counter, long before) {
  for (int i = 0; i < 1000 && atomic_load(counter) <= before; i++) sleep_ms(10);
  assert_true(atomic_load(counter) > before);
}

static void test_graceful_shutdown_finishes_calls(void **state) {
  (void)state;
  dd_grpc_server *s = NULL;
  assert_int_equal(start_server(&s, 2, 5000), 0);
  grpc_channel *ch = open_channel(dd_grpc_server_port(s));
  bg_call slow = {0}, watch = {0};
  long calls = atomic_load(&gt_handler_calls);
  bg_start(&slow, ch, "/dd.test.v1.Test/Sleep", catalog_req("600"));
  Grpc__Health__V1__HealthCheckRequest hreq = GRPC__HEALTH__V1__HEALTH_CHECK_REQUEST__INIT;
  bg_start(&watch, ch, "/grpc.health.v1.Health/Watch", tc_pack(&hreq.base));
  wait_above(&gt_handler_calls, calls); /* the slow handler is running */
  wait_above(&watch.received, 0);       /* the watch got its first status */
  dd_grpc_server_shutdown(s);
  dd_grpc_server_shutdown(s); /* idempotent */
  pthread_join(slow.t, NULL);
  pthread_join(watch.t, NULL);
  assert_int_equal(slow.r.status, GRPC_STATUS_OK); /* the slow call completed */
  assert_int_equal(slow.r.n_msgs, 1);
  assert_int_equal(watch.r.status, GRPC_STATUS_UNAVAILABLE); /* the watch was ended */
  assert_non_null(strstr(watch.r.details, "shutting down"));
  assert_int_equal(watch.r.n_msgs, 1);
  tc_result_free(&slow.r);
  tc_result_free(&watch.r);

  tc_result r; /* nobody listens any more */
  tc_opts o = {.authorization = BEARER, .timeout_ms = 2000};
  call1(ch, "/dd.test.v1.Test/Echo", &o, catalog_req("x"), &r);
  assert_int_not_equal(r.status, GRPC_STATUS_OK);
  tc_result_free(&r);
  grpc_channel_destroy(ch);
  dd_grpc_server_free(s);
}

/* After drain, a new unary or streaming call is UNAVAILABLE without reaching its handler,
 * while the call already running completes; shutdown then ends normally. */
static void test_drain_refuses_new_calls(void **state) {
  (void)state;
  dd_grpc_server *s = NULL;
  assert_int_equal(start_server(&s, 2, 5000), 0);
  grpc_channel *ch = open_channel(dd_grpc_server_port(s));
  bg_call slow = {0};
  long calls = atomic_load(&gt_handler_calls);
  bg_start(&slow, ch, "/dd.test.v1.Test/Sleep", catalog_req("600"));
  wait_above(&gt_handler_calls, calls);
  dd_grpc_server_drain(s);
  long after = atomic_load(&gt_handler_calls);
  tc_result r;
  tc_opts o = {.authorization = BEARER, .timeout_ms = 2000};
  call1(ch, "/dd.test.v1.Test/Echo", &o, catalog_req("x"), &r);
  assert_int_equal(r.status, GRPC_STATUS_UNAVAILABLE);
  assert_non_null(strstr(r.details, "shutting down"));
  tc_result_free(&r);
  call1(ch, "/dd.test.v1.Test/Count", &o, count_req(3, ""), &r);
  assert_int_equal(r.status, GRPC_STATUS_UNAVAILABLE);
  assert_int_equal(r.n_msgs, 0);
  tc_result_free(&r);
  assert_int_equal(atomic_load(&gt_handler_calls), after); /* no handler ran */
  pthread_join(slow.t, NULL);
  assert_int_equal(slow.r.status, GRPC_STATUS_OK);
  tc_result_free(&slow.r);
  dd_grpc_server_shutdown(s);
  grpc_channel_destroy(ch);
  dd_grpc_server_free(s);
}

static void test_shutdown_cancels_after_grace(void **state) {
  (void)state;
  dd_grpc_server *s = NULL;
  assert_int_equal(start_server(&s, 2, 100), 0);
  grpc_channel *ch = open_channel(dd_grpc_server_port(s));
  bg_call stream = {0};
  bg_start(&stream, ch, "/dd.test.v1.Test/Count", count_req(100000, "slow"));
  wait_above(&stream.received, 2);
  long before = atomic_load(&gt_stream_cancelled);
  dd_grpc_server_free(s); /* grace 100 ms, then cancel: the handler's send fails */
  pthread_join(stream.t, NULL);
  assert_int_not_equal(stream.r.status, GRPC_STATUS_OK);
  assert_true(stream.r.n_msgs > 0);
  assert_true(atomic_load(&gt_stream_cancelled) > before);
  tc_result_free(&stream.r);
  grpc_channel_destroy(ch);
}

/* A streaming handler that blocks must not hold the other calls of its connection: with
 * one worker thread and one channel, Hold waits until a Release call on the same channel
 * has run. Before streams had threads of their own, Release was matched to the blocked
 * worker's slot and waited behind Hold, which timed out. */
static void test_blocked_stream_holds_no_other_call(void **state) {
  (void)state;
  dd_grpc_server *s = NULL;
  assert_int_equal(start_server(&s, 1, 5000), 0);
  grpc_channel *ch = open_channel(dd_grpc_server_port(s));
  bg_call hold[2] = {{0}, {0}};
  long before = atomic_load(&gt_holding);
  bg_start(&hold[0], ch, "/dd.test.v1.Test/Hold", count_req(1, ""));
  wait_above(&gt_holding, before); /* the first Hold blocks */
  bg_start(&hold[1], ch, "/dd.test.v1.Test/Hold", count_req(1, ""));
  wait_above(&gt_holding, before + 1); /* a second stream starts beside it */
  for (int i = 0; i < 2; i++) {
    tc_result r;
    tc_opts o = {.authorization = BEARER};
    call1(ch, "/dd.test.v1.Test/Release", &o, catalog_req("x"), &r); /* answered meanwhile */
    assert_int_equal(r.status, GRPC_STATUS_OK);
    tc_result_free(&r);
    for (int k = 0; k < 1000 && atomic_load(&gt_holding) > before + 1 - i; k++) sleep_ms(10);
  }
  for (int i = 0; i < 2; i++) {
    pthread_join(hold[i].t, NULL);
    assert_int_equal(hold[i].r.status, GRPC_STATUS_OK);
    assert_int_equal(hold[i].r.n_msgs, 1);
    Deltad__Catalog__V1__CatalogInfo *m = catalog_of(&hold[i].r, 0);
    assert_string_equal(m->name, "released");
    deltad__catalog__v1__catalog_info__free_unpacked(m, NULL);
    tc_result_free(&hold[i].r);
  }
  grpc_channel_destroy(ch);
  dd_grpc_server_free(s);
}

int main(void) {
  grpc_init();
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_unary_ok),
      cmocka_unit_test(test_error_status_and_message),
      cmocka_unit_test(test_unknown_method),
      cmocka_unit_test(test_unauthenticated),
      cmocka_unit_test(test_public_method_needs_no_token),
      cmocka_unit_test(test_malformed_request),
      cmocka_unit_test(test_oversize_messages),
      cmocka_unit_test(test_streaming_count),
      cmocka_unit_test(test_deadline_exceeded),
      cmocka_unit_test(test_deadline_reaches_handler),
      cmocka_unit_test(test_stream_stops_after_deadline),
      cmocka_unit_test(test_stream_stops_when_client_cancels),
      cmocka_unit_test(test_many_concurrent_calls),
      cmocka_unit_test(test_slots_grow_with_calls),
      cmocka_unit_test(test_health),
      cmocka_unit_test(test_reflection),
      cmocka_unit_test(test_reflection_extension_file),
      cmocka_unit_test(test_start_errors),
      cmocka_unit_test(test_graceful_shutdown_finishes_calls),
      cmocka_unit_test(test_shutdown_cancels_after_grace),
      cmocka_unit_test(test_drain_refuses_new_calls),
      cmocka_unit_test(test_blocked_stream_holds_no_other_call),
  };
  int failed = cmocka_run_group_tests(tests, group_setup, group_teardown);
  grpc_shutdown();
  return failed;
}
