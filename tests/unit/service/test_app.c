/* test_app.c: the application object: data directory creation, admin token bootstrap
 * (from DELTAD_ADMIN_TOKEN or a random token file, written once, mode 0600), and token
 * authentication (admin, recipient, expired, wrong). */
#include <sys/stat.h>
#include <time.h>

#include "svc_test_util.h"

#include "deltad/system/v1/system.pb-c.h"

static char *read_file(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return NULL;
  char *buf = calloc(1, 256);
  size_t n = fread(buf, 1, 255, f);
  buf[n] = '\0';
  fclose(f);
  return buf;
}

static int auth(dd_app *app, const char *tok, dd_principal *p) {
  return dd_app_auth(app, tok, strlen(tok), p);
}

static void test_env_token(void **state) {
  (void)state;
  char dir[256], sub[300], path[400];
  st_mkdtemp(dir, sizeof dir);
  snprintf(sub, sizeof sub, "%s/a/b/data", dir);
  dd_app_opts o = DD_APP_OPTS_INIT;
  o.data_dir = sub;
  o.version = "9.9.9";
  dd_app *app = NULL;
  char *written = (char *)1;
  setenv("DELTAD_ADMIN_TOKEN", "from-the-environment", 1);
  assert_int_equal(dd_app_open(&app, &o, &written), 0);
  unsetenv("DELTAD_ADMIN_TOKEN");
  assert_null(written);
  struct stat st;
  assert_int_equal(stat(sub, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0700);
  snprintf(path, sizeof path, "%s/admin.token", sub);
  assert_int_not_equal(access(path, F_OK), 0); /* nothing written */
  assert_string_equal(dd_app_options(app)->version, "9.9.9");

  dd_principal p;
  assert_int_equal(auth(app, "from-the-environment", &p), 0);
  assert_int_equal(p.kind, DD_PRINCIPAL_ADMIN);
  assert_string_equal(p.name, "admin");
  assert_int_equal(auth(app, "from-the-environmenT", &p), DD_EUNAUTH);
  assert_string_equal(dd_err_msg(), "invalid or expired token");
  assert_int_equal(dd_app_auth(app, "from-the-environment", 4, &p), DD_EUNAUTH);
  assert_int_equal(dd_app_auth(app, "", 0, &p), DD_EUNAUTH);
  dd_app_close(app);

  /* a second start with another env token keeps the first one */
  setenv("DELTAD_ADMIN_TOKEN", "another", 1);
  assert_int_equal(dd_app_open(&app, &o, &written), 0);
  unsetenv("DELTAD_ADMIN_TOKEN");
  assert_null(written);
  assert_int_equal(auth(app, "from-the-environment", &p), 0);
  assert_int_equal(auth(app, "another", &p), DD_EUNAUTH);
  dd_app_close(app);
  st_rmrf(dir);
}

static void test_file_token(void **state) {
  (void)state;
  char dir[256];
  st_mkdtemp(dir, sizeof dir);
  unsetenv("DELTAD_ADMIN_TOKEN");
  dd_app_opts o = DD_APP_OPTS_INIT;
  o.data_dir = dir;
  dd_app *app = NULL;
  char *written = NULL;
  assert_int_equal(dd_app_open(&app, &o, &written), 0);
  assert_non_null(written);
  char want[400];
  snprintf(want, sizeof want, "%s/admin.token", dir);
  assert_string_equal(written, want);
  struct stat st;
  assert_int_equal(stat(written, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  char *tok = read_file(written);
  assert_non_null(tok);
  assert_int_equal(strlen(tok), 65);
  assert_int_equal(tok[64], '\n');
  tok[64] = '\0';
  assert_int_equal(strspn(tok, "0123456789abcdef"), 64);
  dd_principal p;
  assert_int_equal(auth(app, tok, &p), 0);
  assert_int_equal(p.kind, DD_PRINCIPAL_ADMIN);
  dd_app_close(app);

  /* reopening writes nothing and the token still works; the file is unchanged */
  char *path2 = (char *)1;
  assert_int_equal(dd_app_open(&app, &o, &path2), 0);
  assert_null(path2);
  char *again = read_file(written);
  again[64] = '\0';
  assert_string_equal(again, tok);
  assert_int_equal(auth(app, tok, &p), 0);
  /* the token itself is not in the store, only its hash */
  char data[400];
  snprintf(data, sizeof data, "%s/catalog.mdb/data.mdb", dir);
  FILE *f = fopen(data, "rb");
  static char bytes[1 << 20];
  size_t n = fread(bytes, 1, sizeof bytes, f);
  fclose(f);
  assert_null(memmem(bytes, n, tok, 64));
  dd_app_close(app);
  free(again);
  free(tok);
  free(written);
  st_rmrf(dir);
}

static void test_recipient_tokens(void **state) {
  st_env *e = *state;
  cat_store *s = dd_app_store(e->app);
  unsigned char h[CAT_TOKEN_HASH_LEN];
  cat_token_rec rec = {.kind = CAT_TOKEN_RECIPIENT, .name = "acme", .id = "rid-42"};
  rec.expiry_ms = (int64_t)time(NULL) * 1000 + 3600 * 1000;
  cat_token_hash(h, "recipient-live", 14);
  assert_int_equal(cat_token_put(s, h, &rec), 0);
  rec.expiry_ms = (int64_t)time(NULL) * 1000 - 1000;
  cat_token_hash(h, "recipient-old", 13);
  assert_int_equal(cat_token_put(s, h, &rec), 0);
  dd_principal p;
  assert_int_equal(auth(e->app, "recipient-live", &p), 0);
  assert_int_equal(p.kind, DD_PRINCIPAL_RECIPIENT);
  assert_string_equal(p.name, "acme");
  assert_string_equal(p.id, "rid-42");
  assert_int_equal(auth(e->app, "recipient-old", &p), DD_EUNAUTH);
  assert_string_equal(dd_err_msg(), "invalid or expired token");
  assert_int_equal(auth(e->app, "test-admin-token", &p), 0);
  assert_int_equal(p.kind, DD_PRINCIPAL_ADMIN);
  /* the system service still answers through the joint table */
  Deltad__System__V1__GetServerInfoRequest req = DELTAD__SYSTEM__V1__GET_SERVER_INFO_REQUEST__INIT;
  Deltad__System__V1__GetServerInfoResponse *info = NULL;
  assert_int_equal(st_call_as(e, &st_recipient, "/deltad.system.v1.SystemService/GetServerInfo",
                              &req, &info), 0);
  assert_string_equal(info->principal, "acme");
  ST_FREE(info);
}

static void test_bad_data_dir(void **state) {
  (void)state;
  dd_app *app = NULL;
  dd_app_opts o = DD_APP_OPTS_INIT;
  assert_int_equal(dd_app_open(&app, &o, NULL), DD_EINVAL);
  o.data_dir = "/proc/self/nonexistent/dir";
  assert_int_not_equal(dd_app_open(&app, &o, NULL), 0);
  assert_null(app);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_env_token),
      cmocka_unit_test(test_file_token),
      cmocka_unit_test_setup_teardown(test_recipient_tokens, st_setup, st_teardown),
      cmocka_unit_test(test_bad_data_dir),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
