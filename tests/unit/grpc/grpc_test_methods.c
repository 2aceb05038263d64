/* grpc_test_methods.c: the test method table and fake authenticator (see the header). */
#include "tests/unit/grpc/grpc_test_methods.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/system/v1/system.pb-c.h"

atomic_long gt_handler_calls;
atomic_long gt_stream_cancelled;
atomic_long gt_holding;
static pthread_mutex_t gt__gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gt__gate_cv = PTHREAD_COND_INITIALIZER;
static bool gt__gate_open;

int gt_auth(void *app, const char *token, size_t len, dd_principal *out) {
  (void)app;
  if (len != strlen(GT_TOKEN) || memcmp(token, GT_TOKEN, len) != 0)
    return dd_err_set(DD_EUNAUTH, "unknown token");
  memset(out, 0, sizeof *out);
  out->kind = DD_PRINCIPAL_ADMIN;
  snprintf(out->name, sizeof out->name, "%s", GT_PRINCIPAL);
  return 0;
}

static void gt_sleep_ms(long ms) {
  struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

static int gt_catalog(ProtobufCMessage **out, const char *name, char *comment) {
  Deltad__Catalog__V1__CatalogInfo *c = malloc(sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__catalog__v1__catalog_info__init(c);
  c->name = strdup(name);
  if (comment) c->comment = comment;
  else c->comment = strdup("");
  *out = &c->base;
  if (!c->name || !c->comment) return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

static int gt_ping(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)call;
  (void)req;
  atomic_fetch_add(&gt_handler_calls, 1);
  Deltad__System__V1__PingResponse *resp = malloc(sizeof *resp);
  if (!resp) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__system__v1__ping_response__init(resp);
  *out = &resp->base;
  return 0;
}

static int gt_info(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)req;
  atomic_fetch_add(&gt_handler_calls, 1);
  Deltad__System__V1__GetServerInfoResponse *resp = malloc(sizeof *resp);
  if (!resp) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__system__v1__get_server_info_response__init(resp);
  const char *echo = call->header(call, "x-echo");
  resp->version = strdup(echo ? echo : "none");
  resp->principal = strdup(call->principal->name);
  *out = &resp->base;
  if (!resp->version || !resp->principal) return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

static int gt_echo(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)call;
  atomic_fetch_add(&gt_handler_calls, 1);
  const char *name = ((const Deltad__Catalog__V1__GetCatalogRequest *)req)->name;
  if (strcmp(name, "notfound") == 0) return dd_err_set(DD_ENOTFOUND, "catalog '%s' does not exist", name);
  char *comment = NULL;
  if (strncmp(name, "big:", 4) == 0) {
    size_t n = strtoul(name + 4, NULL, 10);
    if (!(comment = malloc(n + 1))) return dd_err_set(DD_ENOMEM, "out of memory");
    memset(comment, 'x', n);
    comment[n] = '\0';
  }
  return gt_catalog(out, name, comment);
}

static int gt_sleep(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)call;
  atomic_fetch_add(&gt_handler_calls, 1);
  const char *name = ((const Deltad__Catalog__V1__GetCatalogRequest *)req)->name;
  gt_sleep_ms(strtol(name, NULL, 10));
  return gt_catalog(out, name, NULL);
}

static int gt_deadline(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)req;
  atomic_fetch_add(&gt_handler_calls, 1);
  char buf[32];
  snprintf(buf, sizeof buf, "%" PRId64, call->deadline_ms);
  return gt_catalog(out, "deadline", strdup(buf));
}

static int gt_public(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)req;
  atomic_fetch_add(&gt_handler_calls, 1);
  return gt_catalog(out, call->principal->kind == DD_PRINCIPAL_NONE ? "none" : "admin", NULL);
}

static int gt_count(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)out;
  atomic_fetch_add(&gt_handler_calls, 1);
  const Deltad__Catalog__V1__ListCatalogsRequest *r = (const Deltad__Catalog__V1__ListCatalogsRequest *)req;
  bool slow = strcmp(r->page_token, "slow") == 0;
  for (int i = 0; i < r->max_results; i++) {
    char name[32];
    snprintf(name, sizeof name, "item-%d", i);
    Deltad__Catalog__V1__CatalogInfo item = DELTAD__CATALOG__V1__CATALOG_INFO__INIT;
    item.name = name;
    int rc = call->send(call, &item.base);
    if (rc == DD_ECANCELLED) atomic_fetch_add(&gt_stream_cancelled, 1);
    if (rc) return rc;
    if (slow) gt_sleep_ms(20);
  }
  return 0;
}

static int gt_hold(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)req;
  (void)out;
  atomic_fetch_add(&gt_handler_calls, 1);
  struct timespec until;
  clock_gettime(CLOCK_REALTIME, &until);
  until.tv_sec += 30; /* a safety net so a broken runtime fails instead of hanging */
  pthread_mutex_lock(&gt__gate_mu);
  atomic_fetch_add(&gt_holding, 1);
  int w = 0;
  while (!gt__gate_open && w == 0) w = pthread_cond_timedwait(&gt__gate_cv, &gt__gate_mu, &until);
  bool released = gt__gate_open;
  gt__gate_open = false;
  atomic_fetch_sub(&gt_holding, 1);
  pthread_mutex_unlock(&gt__gate_mu);
  Deltad__Catalog__V1__CatalogInfo item = DELTAD__CATALOG__V1__CATALOG_INFO__INIT;
  item.name = released ? "released" : "timed-out";
  return call->send(call, &item.base);
}

static int gt_release(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)call;
  (void)req;
  atomic_fetch_add(&gt_handler_calls, 1);
  pthread_mutex_lock(&gt__gate_mu);
  gt__gate_open = true;
  pthread_cond_broadcast(&gt__gate_cv);
  pthread_mutex_unlock(&gt__gate_mu);
  return gt_catalog(out, "released", NULL);
}

#define GT_SYS(name, fn, in, outd) {"/deltad.system.v1.SystemService/" name, &in, &outd, fn, 0}
#define GT_TEST(name, fn, in, flags)                                                       \
  {"/dd.test.v1.Test/" name, &in, &deltad__catalog__v1__catalog_info__descriptor, fn, flags}

const dd_method gt_methods[] = {
    GT_SYS("Ping", gt_ping, deltad__system__v1__ping_request__descriptor,
           deltad__system__v1__ping_response__descriptor),
    GT_SYS("GetServerInfo", gt_info, deltad__system__v1__get_server_info_request__descriptor,
           deltad__system__v1__get_server_info_response__descriptor),
    GT_TEST("Echo", gt_echo, deltad__catalog__v1__get_catalog_request__descriptor, 0),
    GT_TEST("Sleep", gt_sleep, deltad__catalog__v1__get_catalog_request__descriptor, 0),
    GT_TEST("Deadline", gt_deadline, deltad__catalog__v1__get_catalog_request__descriptor, 0),
    GT_TEST("Public", gt_public, deltad__catalog__v1__get_catalog_request__descriptor, DD_METHOD_PUBLIC),
    GT_TEST("Count", gt_count, deltad__catalog__v1__list_catalogs_request__descriptor, DD_METHOD_STREAMING),
    GT_TEST("Hold", gt_hold, deltad__catalog__v1__list_catalogs_request__descriptor, DD_METHOD_STREAMING),
    GT_TEST("Release", gt_release, deltad__catalog__v1__get_catalog_request__descriptor, 0),
};
const size_t gt_methods_len = sizeof gt_methods / sizeof gt_methods[0];

static dd_call_registry *gt__reg;

static void gt__build_registry(void) {
  if (dd_call_registry_new(&gt__reg, gt_methods, gt_methods_len, NULL, gt_auth) != 0) abort();
}

const dd_call_registry *gt_registry(void) {
  static pthread_once_t once = PTHREAD_ONCE_INIT;
  pthread_once(&once, gt__build_registry);
  return gt__reg;
}
