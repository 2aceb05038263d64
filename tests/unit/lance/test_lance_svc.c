/* test_lance_svc.c: deltad.lance.v1.NamespaceService handlers on a real dd_app (who may
 * call, modes, what a failure is about) and the REST adapter over a real loopback socket
 * with an auth function that knows an admin and a sharing recipient, so PermissionDenied
 * (403, code 15) is seen on the wire. */
#include <arpa/inet.h>
#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/err.h"
#include "deltad/lance/v1/lance.pb-c.h"
#include "server/http/native/lance_rest.h"
#include "server/service/app.h"
#include "server/service/lance_svc.h"

typedef struct env {
  char dir[256];
  dd_app *app;
  int detail; /* the last call's error detail (dd_call_set_detail) */
} env;

static int rm_cb(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(p);
}

static int setup(void **state) {
  env *e = calloc(1, sizeof *e);
  const char *tmp = getenv("TMPDIR");
  snprintf(e->dir, sizeof e->dir, "%s/ddlsvc.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(e->dir)) return -1;
  dd_app_opts o = DD_APP_OPTS_INIT;
  o.data_dir = e->dir;
  char *tok = NULL;
  setenv("DELTAD_ADMIN_TOKEN", "admintok", 1);
  if (dd_app_open(&e->app, &o, &tok)) return -1;
  free(tok);
  *state = e;
  return 0;
}

static int teardown(void **state) {
  env *e = *state;
  dd_app_close(e->app);
  nftw(e->dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
  free(e);
  return 0;
}

static const dd_principal admin = {.kind = DD_PRINCIPAL_ADMIN, .name = "admin", .id = ""};
static const dd_principal recipient = {.kind = DD_PRINCIPAL_RECIPIENT, .name = "acme", .id = "r-1"};
static const dd_principal nobody = {.kind = DD_PRINCIPAL_NONE, .name = "", .id = ""};

/* Calls method m with req as principal p; frees the response. */
static int call(env *e, lance_method_index m, const dd_principal *p, const ProtobufCMessage *req) {
  dd_call c = {.principal = p, .app = e->app};
  ProtobufCMessage *out = NULL;
  int rc = dd_lance_methods[m].fn(&c, req, &out);
  e->detail = c.detail;
  if (rc) assert_null(out);
  else assert_ptr_equal(out->descriptor, dd_lance_methods[m].output);
  if (out) protobuf_c_message_free_unpacked(out, NULL);
  return rc;
}

static int create_ns(env *e, const dd_principal *p, char **id, size_t n, const char *mode) {
  Deltad__Lance__V1__CreateNamespaceRequest r = DELTAD__LANCE__V1__CREATE_NAMESPACE_REQUEST__INIT;
  r.id = id;
  r.n_id = n;
  r.mode = (char *)mode;
  return call(e, LANCE_M_CREATE_NAMESPACE, p, &r.base);
}

static void test_method_table(void **state) {
  (void)state;
  assert_int_equal(dd_lance_methods_len, LANCE_M_COUNT);
  for (size_t i = 0; i < LANCE_M_COUNT; i++) {
    assert_non_null(dd_lance_methods[i].fn);
    assert_non_null(strstr(dd_lance_methods[i].path, "/deltad.lance.v1.NamespaceService/"));
  }
  assert_string_equal(dd_lance_methods[LANCE_M_TABLE_EXISTS].path,
                      "/deltad.lance.v1.NamespaceService/TableExists");
  size_t n = 0;
  const dd_method *all = dd_app_methods(&n);
  size_t found = 0;
  for (size_t i = 0; i < n; i++) found += strstr(all[i].path, "deltad.lance.v1") != NULL;
  assert_int_equal(found, LANCE_M_COUNT);
}

static void test_modes(void **state) {
  (void)state;
  static const char *const names[] = {"create", "existok", "overwrite"};
  int m;
  const char *ok[] = {"ExistOk", "exist_ok", "EXIST_OK", "existOk", "Exist_ok"};
  for (size_t i = 0; i < 5; i++) {
    assert_int_equal(lance_svc_parse_mode(&m, "mode", ok[i], names, 3, 0), 0);
    assert_int_equal(m, 1);
  }
  assert_int_equal(lance_svc_parse_mode(&m, "mode", "", names, 3, 2), 0);
  assert_int_equal(m, 2);
  assert_int_equal(lance_svc_parse_mode(&m, "mode", NULL, names, 3, 0), 0);
  assert_int_equal(lance_svc_parse_mode(&m, "mode", "exist ok", names, 3, 0), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "mode"));
  char big[200];
  memset(big, 'a', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  assert_int_equal(lance_svc_parse_mode(&m, "mode", big, names, 3, 0), DD_EINVAL);
  /* a long value whose first 31 bytes normalize to a name is still refused */
  assert_int_equal(lance_svc_parse_mode(&m, "mode", "create________________________________x", names, 3, 0),
                   DD_EINVAL);
}

static void test_who_may_call(void **state) {
  env *e = *state;
  char *id[] = {"w"};
  assert_int_equal(create_ns(e, &recipient, id, 1, ""), DD_EPERM);
  assert_int_equal(e->detail, DD_CALL_DETAIL_NONE);
  assert_int_equal(create_ns(e, &nobody, id, 1, ""), DD_EUNAUTH);
  Deltad__Lance__V1__ListNamespacesRequest l = DELTAD__LANCE__V1__LIST_NAMESPACES_REQUEST__INIT;
  assert_int_equal(call(e, LANCE_M_LIST_NAMESPACES, &recipient, &l.base), DD_EPERM);
  assert_int_equal(call(e, LANCE_M_LIST_NAMESPACES, &admin, &l.base), 0);
  assert_int_equal(create_ns(e, &admin, id, 1, "bogus"), DD_EINVAL);
  assert_int_equal(e->detail, DD_CALL_DETAIL_NONE);
  assert_int_equal(create_ns(e, &admin, id, 1, ""), 0);
  assert_int_equal(create_ns(e, &admin, id, 1, "CREATE"), DD_EEXISTS);
  assert_int_equal(e->detail, DD_CALL_DETAIL_NAMESPACE);
}

static void test_table_subjects(void **state) {
  env *e = *state;
  char *ns[] = {"c", "s"};
  assert_int_equal(create_ns(e, &admin, ns, 1, ""), 0);
  assert_int_equal(create_ns(e, &admin, ns, 2, ""), 0);
  Deltad__Lance__V1__DescribeTableRequest d = DELTAD__LANCE__V1__DESCRIBE_TABLE_REQUEST__INIT;
  char *missing_ns[] = {"c", "x", "t"}, *missing_t[] = {"c", "s", "t"};
  d.id = missing_ns;
  d.n_id = 3;
  assert_int_equal(call(e, LANCE_M_DESCRIBE_TABLE, &admin, &d.base), DD_ENOTFOUND);
  assert_int_equal(e->detail, DD_CALL_DETAIL_NAMESPACE);
  assert_string_equal(dd_err_msg(), "namespace 'c$x' not found"); /* the store's message kept */
  d.id = missing_t;
  assert_int_equal(call(e, LANCE_M_DESCRIBE_TABLE, &admin, &d.base), DD_ENOTFOUND);
  assert_int_equal(e->detail, DD_CALL_DETAIL_TABLE);
  assert_string_equal(dd_err_msg(), "table 'c$s$t' not found");
  Deltad__Lance__V1__RegisterTableRequest r = DELTAD__LANCE__V1__REGISTER_TABLE_REQUEST__INIT;
  r.id = missing_t;
  r.n_id = 3;
  r.location = "/d/t";
  assert_int_equal(call(e, LANCE_M_REGISTER_TABLE, &admin, &r.base), 0);
  assert_int_equal(call(e, LANCE_M_REGISTER_TABLE, &admin, &r.base), DD_EEXISTS);
  assert_int_equal(e->detail, DD_CALL_DETAIL_TABLE);
  r.location = "";
  r.mode = "overwrite";
  assert_int_equal(call(e, LANCE_M_REGISTER_TABLE, &admin, &r.base), DD_EINVAL);
  assert_int_equal(e->detail, DD_CALL_DETAIL_NONE);
  assert_int_equal(call(e, LANCE_M_DESCRIBE_TABLE, &admin, &d.base), 0);
  d._load_detailed_metadata_case =
      DELTAD__LANCE__V1__DESCRIBE_TABLE_REQUEST___LOAD_DETAILED_METADATA_LOAD_DETAILED_METADATA;
  d.load_detailed_metadata = 1;
  assert_int_equal(call(e, LANCE_M_DESCRIBE_TABLE, &admin, &d.base), DD_EUNSUPPORTED);
  Deltad__Lance__V1__DropNamespaceRequest dr = DELTAD__LANCE__V1__DROP_NAMESPACE_REQUEST__INIT;
  dr.id = ns;
  dr.n_id = 2;
  assert_int_equal(call(e, LANCE_M_DROP_NAMESPACE, &admin, &dr.base), DD_EPRECOND);
  assert_int_equal(e->detail, DD_CALL_DETAIL_NAMESPACE);
  dr.mode = "skip";
  dr.id = missing_ns;
  assert_int_equal(call(e, LANCE_M_DROP_NAMESPACE, &admin, &dr.base), 0);
}

/* ---- over the wire ------------------------------------------------------------------------ */

static int test_auth(void *app, const char *tok, size_t len, dd_principal *out) {
  (void)app;
  if (len == 8 && !memcmp(tok, "admintok", 8)) return *out = admin, 0;
  if (len == 3 && !memcmp(tok, "rcp", 3)) return *out = recipient, 0;
  return DD_EUNAUTH;
}

/* Sends one request on a fresh connection; returns the status, body in buf. */
static int http(int port, const char *method, const char *path, const char *hdr, const char *body,
                char *buf, size_t cap) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  char req[2048];
  int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n%s"
                   "Content-Length: %zu\r\n\r\n%s", method, path, hdr, strlen(body), body);
  assert_int_equal(write(fd, req, (size_t)n), n);
  size_t got = 0;
  ssize_t r;
  while (got + 1 < cap && (r = read(fd, buf + got, cap - 1 - got)) > 0) got += (size_t)r;
  buf[got] = '\0';
  close(fd);
  int status = 0;
  sscanf(buf, "HTTP/1.1 %d", &status);
  char *b = strstr(buf, "\r\n\r\n");
  if (b) memmove(buf, b + 4, strlen(b + 4) + 1);
  return status;
}

static void test_rest_wire(void **state) {
  env *e = *state;
  size_t n;
  const dd_method *methods = dd_app_methods(&n);
  dd_http_server *srv = NULL;
  dd_call_registry *reg = NULL;
  dd_http_opts o = DD_HTTP_OPTS_INIT;
  o.listen = "127.0.0.1:0";
  assert_int_equal(dd_call_registry_new(&reg, methods, n, e->app, test_auth), 0);
  assert_int_equal(dd_http_server_new(&srv, &o, reg), 0);
  assert_int_equal(dd_native_lance_register(srv), 0);
  assert_int_equal(dd_http_server_start(srv), 0);
  int port = dd_http_server_port(srv);
  char buf[8192];
  const char *adm = "Authorization: Bearer admintok\r\n", *rcp = "x-api-key: rcp\r\n";
  assert_int_equal(http(port, "POST", "/v1/namespace/w1/create", adm, "{\"properties\":{\"a\":\"b\"}}", buf, sizeof buf), 200);
  assert_string_equal(buf, "{\"properties\":{\"a\":\"b\"}}");
  assert_int_equal(http(port, "POST", "/v1/namespace/w1/describe", rcp, "{}", buf, sizeof buf), 403);
  assert_non_null(strstr(buf, "\"code\":15"));
  assert_int_equal(http(port, "GET", "/v1/namespace/%24/list", rcp, "", buf, sizeof buf), 403);
  assert_non_null(strstr(buf, "\"code\":15"));
  assert_int_equal(http(port, "GET", "/v1/namespace/%24/list", "", "", buf, sizeof buf), 401);
  assert_non_null(strstr(buf, "\"code\":16"));
  assert_int_equal(http(port, "GET", "/v1/namespace/%24/list", adm, "", buf, sizeof buf), 200);
  assert_string_equal(buf, "{\"namespaces\":[\"w1\"]}");
  assert_int_equal(http(port, "POST", "/v1/namespace/w1/exists/", adm, "{}", buf, sizeof buf), 200);
  assert_string_equal(buf, ""); /* trailing slash accepted; no body */
  assert_int_equal(http(port, "POST", "/v1/namespace/w1", adm, "{}", buf, sizeof buf), 406);
  assert_non_null(strstr(buf, "\"code\":0"));
  assert_int_equal(http(port, "POST", "/v1/transactionx", adm, "{}", buf, sizeof buf), 404); /* not ours */
  dd_http_server_free(srv);
  dd_call_registry_free(reg);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_method_table),
      cmocka_unit_test(test_modes),
      cmocka_unit_test_setup_teardown(test_who_may_call, setup, teardown),
      cmocka_unit_test_setup_teardown(test_table_subjects, setup, teardown),
      cmocka_unit_test_setup_teardown(test_rest_wire, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
