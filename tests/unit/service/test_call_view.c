/* test_call_view.c: one read view per call. Through the call core (dd_call_authenticate,
 * dd_call_run, the stream runner) with the services' view ops, a unary call's token check
 * and its handler's reads are one catalog read transaction (cat_store_stats_get); without
 * the ops they are two. A handler that writes still sees its write; a revoked token is
 * refused by the next call; the ticket gives the view back (ASan finds a leak). */
#include <pthread.h>

#include "server/call/call.h"
#include "server/service/auth.h"
#include "svc_test_util.h"

#define ADMIN_AUTH "Bearer test-admin-token"

typedef struct cv_env {
  st_env *e;
  dd_call_registry *reg;
} cv_env;

static int cv_setup(void **state) {
  cv_env *v = calloc(1, sizeof *v);
  void *inner = NULL;
  if (st_setup(&inner)) return -1;
  v->e = inner;
  size_t n = 0;
  const dd_method *m = dd_app_methods(&n);
  if (dd_call_registry_new(&v->reg, m, n, v->e->app, dd_app_auth)) return -1;
  dd_call_registry_set_view_ops(v->reg, &dd_auth_view_ops);
  Deltad__Catalog__V1__CreateCatalogRequest cr = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cr.name = "main";
  if (st_call(v->e, CATSVC "CreateCatalog", &cr, NULL)) return -1;
  *state = v;
  return 0;
}

static int cv_teardown(void **state) {
  cv_env *v = *state;
  dd_call_registry_free(v->reg);
  void *inner = v->e;
  free(v);
  return st_teardown(&inner);
}

static uint64_t cv_reads(cv_env *v) { return cat_store_stats_get(dd_app_store(v->e->app)).read_txns; }

static int cv_send(void *cls, const ProtobufCMessage *msg) {
  (void)cls;
  (void)msg;
  return 0;
}

/* Authenticates with auth and runs path on req, as a transport does; the ticket is
 * released at the end as the transport's end of call does. */
static int cv_call(cv_env *v, const char *auth, const char *path, const ProtobufCMessage *req) {
  const dd_method *m = dd_call_find(v->reg, path, strlen(path));
  assert_non_null(m);
  dd_principal who;
  rg_ticket ticket = {0};
  int rc = dd_call_authenticate(v->reg, m, DD_CALL_AUTH_GRPC, auth, NULL, &who, &ticket, NULL);
  if (!rc) {
    dd_call_sink sink = {.send = cv_send};
    dd_call_result res;
    rc = dd_call_run(v->reg, m, req, &who, 0, &sink, &res);
  }
  rg_release(&ticket);
  return rc;
}

static void test_get_catalog_one_txn(void **state) {
  cv_env *v = *state;
  Deltad__Catalog__V1__GetCatalogRequest rq = DELTAD__CATALOG__V1__GET_CATALOG_REQUEST__INIT;
  rq.name = "main";
  uint64_t r0 = cv_reads(v);
  assert_int_equal(cv_call(v, ADMIN_AUTH, CATSVC "GetCatalog", &rq.base), 0);
  assert_int_equal(cv_reads(v), r0 + 1); /* the token check and GetCatalog: one view */
  /* without the view ops: the token check and the handler each begin one */
  dd_call_registry_set_view_ops(v->reg, NULL);
  r0 = cv_reads(v);
  assert_int_equal(cv_call(v, ADMIN_AUTH, CATSVC "GetCatalog", &rq.base), 0);
  assert_int_equal(cv_reads(v), r0 + 2);
  dd_call_registry_set_view_ops(v->reg, &dd_auth_view_ops);
  /* a bad token: refused, its view given back with the ticket */
  assert_int_equal(cv_call(v, "Bearer nope", CATSVC "GetCatalog", &rq.base), DD_EUNAUTH);
}

static void test_list_shares_one_txn(void **state) {
  cv_env *v = *state;
  for (int i = 0; i < 3; i++) {
    Deltad__Sharing__V1__CreateShareRequest sr = DELTAD__SHARING__V1__CREATE_SHARE_REQUEST__INIT;
    char name[16];
    snprintf(name, sizeof name, "s%d", i);
    sr.name = name;
    assert_int_equal(st_call(v->e, "/deltad.sharing.v1.DeltaSharingExtensionService/CreateShare", &sr, NULL), 0);
  }
  Deltad__Sharing__V1__ListSharesRequest rq = DELTAD__SHARING__V1__LIST_SHARES_REQUEST__INIT;
  uint64_t r0 = cv_reads(v);
  assert_int_equal(cv_call(v, ADMIN_AUTH, "/deltad.sharing.v1.DeltaSharingService/ListShares", &rq.base), 0);
  assert_int_equal(cv_reads(v), r0 + 1);
}

/* A write in the call unbinds the view: the write's own later reads see it. */
static void test_write_then_read(void **state) {
  cv_env *v = *state;
  Deltad__Catalog__V1__CreateCatalogRequest cr = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cr.name = "fresh";
  assert_int_equal(cv_call(v, ADMIN_AUTH, CATSVC "CreateCatalog", &cr.base), 0);
  Deltad__Catalog__V1__GetCatalogRequest rq = DELTAD__CATALOG__V1__GET_CATALOG_REQUEST__INIT;
  rq.name = "fresh";
  assert_int_equal(cv_call(v, ADMIN_AUTH, CATSVC "GetCatalog", &rq.base), 0);
}

/* The next call after a revocation is refused: no view outlives its call. */
static void test_revoked_at_once(void **state) {
  cv_env *v = *state;
  cat_store *s = dd_app_store(v->e->app);
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  assert_int_equal(cat_token_hash(hash, "second", 6), 0);
  cat_token_rec tr = {.kind = CAT_TOKEN_ADMIN, .name = "admin2", .id = "", .expiry_ms = 0};
  assert_int_equal(cat_token_put(s, hash, &tr), 0);
  Deltad__Catalog__V1__GetCatalogRequest rq = DELTAD__CATALOG__V1__GET_CATALOG_REQUEST__INIT;
  rq.name = "main";
  assert_int_equal(cv_call(v, "Bearer second", CATSVC "GetCatalog", &rq.base), 0);
  assert_int_equal(cat_token_delete(s, hash), 0);
  assert_int_equal(cv_call(v, "Bearer second", CATSVC "GetCatalog", &rq.base), DD_EUNAUTH);
}

/* The stream runner (REST with --http-threads, every streaming call): a unary call run on
 * a worker thread still reads through the view its token was checked in. */
typedef struct cv_wait {
  pthread_mutex_t mu;
  pthread_cond_t cv;
  bool done;
} cv_wait;

static int cv_encode(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out) {
  (void)cls;
  (void)msg;
  (void)index;
  return dd_call_buf_append(out, "x", 1);
}

static void test_stream_runner_one_txn(void **state) {
  cv_env *v = *state;
  dd_call_runner *rn = NULL;
  assert_int_equal(dd_call_runner_new(&rn, 1), 0);
  const char *path = CATSVC "GetCatalog";
  const dd_method *m = dd_call_find(v->reg, path, strlen(path));
  Deltad__Catalog__V1__GetCatalogRequest *rq = malloc(sizeof *rq);
  deltad__catalog__v1__get_catalog_request__init(rq);
  rq->name = strdup("main");
  uint64_t r0 = cv_reads(v);
  dd_principal who;
  rg_ticket ticket = {0};
  assert_int_equal(dd_call_authenticate(v->reg, m, DD_CALL_AUTH_GRPC, ADMIN_AUTH, NULL, &who,
                                        &ticket, NULL), 0);
  dd_call_stream_hooks hooks = {.encode = cv_encode};
  dd_call_stream *st = NULL;
  assert_int_equal(dd_call_stream_start(&st, rn, v->reg, m, &rq->base, &who, NULL, 0, 0, &hooks), 0);
  rg_release(&ticket); /* the transport may let go first: the stream holds its own reference */
  assert_int_equal(dd_call_stream_wait(st), DD_CALL_STREAM_READY);
  char buf[8];
  ssize_t n;
  while ((n = dd_call_stream_read(st, buf, sizeof buf)) > 0) {
  }
  assert_int_equal(n, DD_CALL_STREAM_EOF);
  dd_call_stream_release(st);
  dd_call_runner_free(rn);
  assert_int_equal(cv_reads(v), r0 + 1);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_get_catalog_one_txn, cv_setup, cv_teardown),
      cmocka_unit_test_setup_teardown(test_list_shares_one_txn, cv_setup, cv_teardown),
      cmocka_unit_test_setup_teardown(test_write_then_read, cv_setup, cv_teardown),
      cmocka_unit_test_setup_teardown(test_revoked_at_once, cv_setup, cv_teardown),
      cmocka_unit_test_setup_teardown(test_stream_runner_one_txn, cv_setup, cv_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
