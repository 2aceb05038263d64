/* svc_test_util.h: helpers for the service tests: a real dd_app on a temporary data
 * directory, calls through the method table with an admin / recipient / anonymous
 * principal, and checks that every response is a well-formed heap tree. */
#ifndef DD_TESTS_UNIT_SERVICE_SVC_TEST_UTIL_H
#define DD_TESTS_UNIT_SERVICE_SVC_TEST_UTIL_H

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
#include "server/service/app.h"
#include "store/catalog/cat_store.h"

typedef struct st_env {
  char dir[256];
  dd_app *app;
} st_env;

static const dd_principal st_admin = {.kind = DD_PRINCIPAL_ADMIN, .name = "admin", .id = ""};
static const dd_principal st_recipient = {.kind = DD_PRINCIPAL_RECIPIENT, .name = "acme", .id = "r-1"};
static const dd_principal st_nobody = {.kind = DD_PRINCIPAL_NONE, .name = "", .id = ""};

static int st__rm(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(p);
}

static inline void st_mkdtemp(char *dir, size_t cap) {
  const char *tmp = getenv("TMPDIR");
  snprintf(dir, cap, "%s/ddsvc.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(dir)) fail_msg("mkdtemp");
}

static inline void st_rmrf(const char *dir) { nftw(dir, st__rm, 16, FTW_DEPTH | FTW_PHYS); }

static inline int st_setup(void **state) {
  st_env *e = calloc(1, sizeof *e);
  st_mkdtemp(e->dir, sizeof e->dir);
  dd_app_opts o = DD_APP_OPTS_INIT;
  o.data_dir = e->dir;
  setenv("DELTAD_ADMIN_TOKEN", "test-admin-token", 1);
  int rc = dd_app_open(&e->app, &o, NULL);
  unsetenv("DELTAD_ADMIN_TOKEN");
  if (rc) return -1;
  *state = e;
  return 0;
}

static inline int st_teardown(void **state) {
  st_env *e = *state;
  dd_app_close(e->app);
  st_rmrf(e->dir);
  free(e);
  return 0;
}

static inline const dd_method *st_method(const char *path) {
  size_t n = 0;
  const dd_method *m = dd_app_methods(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(m[i].path, path) == 0) return &m[i];
  fail_msg("no method %s", path);
  return NULL;
}

/* Calls the method as principal p. On success the response must be of the method's output
 * type and survive a pack/unpack round trip; it is returned in *out (or freed if out is
 * NULL). */
static inline int st_call_as(st_env *e, const dd_principal *p, const char *path,
                             const void *req, void *out) {
  const dd_method *m = st_method(path);
  dd_call call = {0};
  call.principal = p;
  call.app = e->app;
  ProtobufCMessage *resp = NULL;
  assert_ptr_equal(((const ProtobufCMessage *)req)->descriptor, m->input);
  dd_err_clear();
  int rc = m->fn(&call, req, &resp);
  if (rc) {
    assert_null(resp);
    assert_string_not_equal(dd_err_msg(), "");
  } else {
    assert_non_null(resp);
    assert_ptr_equal(resp->descriptor, m->output);
    size_t len = protobuf_c_message_get_packed_size(resp);
    uint8_t *buf = malloc(len + 1);
    protobuf_c_message_pack(resp, buf);
    ProtobufCMessage *back = protobuf_c_message_unpack(m->output, NULL, len, buf);
    assert_non_null(back);
    protobuf_c_message_free_unpacked(back, NULL);
    free(buf);
  }
  if (out) *(ProtobufCMessage **)out = resp;
  else if (resp) protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

#define st_call(e, path, req, out) st_call_as(e, &st_admin, path, req, out)
#define ST_FREE(m) protobuf_c_message_free_unpacked(&(m)->base, NULL)
#define CATSVC "/deltad.catalog.v1.CatalogService/"
#define CREDSVC "/deltad.credentials.v1.CredentialService/"

#endif
