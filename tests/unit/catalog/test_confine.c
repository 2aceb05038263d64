/* test_confine.c: cat_location_confine and its helpers: the real path of the longest
 * existing prefix, locations compared by real path (symlinks and ".." do not lead out),
 * the data directory never a table, object URLs by '/' boundary, grant generations. */
#include <sys/stat.h>

#include "cat_test_util.h"

static void add_location(cat_store *s, const char *name, const char *url) {
  Deltad__Credentials__V1__CreateStorageLocationRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__INIT;
  cat_location *l = NULL;
  req.name = (char *)name;
  req.url = (char *)url;
  req.type = DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL;
  if (cat_location_create(s, &l, "admin", &req)) fail_msg("location %s: %s", url, dd_err_msg());
  CT_FREE(l);
}

static void test_real_prefix(void **state) {
  ct_env *e = *state;
  char real[300], path[400], *got = NULL;
  assert_non_null(realpath(e->dir, real));
  snprintf(path, sizeof path, "%s/a/b", e->dir);
  assert_int_equal(cat_real_prefix(&got, path), 0);
  snprintf(path, sizeof path, "%s/a/b", real);
  assert_string_equal(got, path);
  free(got);
  snprintf(path, sizeof path, "%s/a/../b", e->dir); /* '..' after a missing directory */
  assert_int_equal(cat_real_prefix(&got, path), DD_EINVAL);
  assert_int_equal(cat_real_prefix(&got, "relative/x"), DD_EINVAL);
  assert_int_equal(cat_real_prefix(&got, "/"), 0);
  assert_string_equal(got, "/");
  free(got);
}

static void test_confine_local(void **state) {
  ct_env *e = *state;
  char lake[300], url[320], p[400], *name = NULL;
  snprintf(lake, sizeof lake, "%s.lake", e->dir);
  assert_int_equal(mkdir(lake, 0700), 0);
  snprintf(p, sizeof p, "%s/out", lake);
  assert_int_equal(symlink("/etc", p), 0);
  /* nothing registered: every path is refused, naming the location it needs */
  assert_int_equal(cat_location_confine(e->s, NULL, "table", lake), DD_EPERM);
  assert_non_null(strstr(dd_err_msg(), "not under any registered storage location"));
  snprintf(url, sizeof url, "file://%s", lake);
  add_location(e->s, "lake", url);
  snprintf(p, sizeof p, "%s/t1", lake);
  assert_int_equal(cat_location_confine(e->s, &name, "table", p), 0);
  assert_string_equal(name, "lake");
  free(name);
  snprintf(p, sizeof p, "file://%s/t1/x", lake);
  assert_int_equal(cat_location_confine(e->s, NULL, "table", p), 0);
  snprintf(p, sizeof p, "%s/out/passwd", lake); /* symlink out of the location */
  assert_int_equal(cat_location_confine(e->s, NULL, "table", p), DD_EPERM);
  assert_non_null(strstr(dd_err_msg(), "file:///etc/passwd"));
  snprintf(p, sizeof p, "%s/../x", lake); /* '..' out of it */
  assert_int_equal(cat_location_confine(e->s, NULL, "table", p), DD_EPERM);
  snprintf(p, sizeof p, "%sx/t", lake); /* a sibling sharing the prefix */
  assert_int_equal(cat_location_confine(e->s, NULL, "table", p), DD_EPERM);
  assert_int_equal(cat_location_confine(e->s, NULL, "table", "rel/t"), DD_EINVAL);
  /* cat_roots_cover agrees */
  char **roots = NULL;
  size_t n = 0;
  assert_int_equal(cat_location_local_roots(e->s, &roots, &n), 0);
  assert_int_equal(n, 1);
  snprintf(p, sizeof p, "%s/t1/part-0.parquet", lake);
  assert_true(cat_roots_cover(e->s, roots, n, p));
  snprintf(p, sizeof p, "%s/out/hostname", lake);
  assert_false(cat_roots_cover(e->s, roots, n, p));
  cat_roots_free(roots, n);
  snprintf(p, sizeof p, "rm -rf '%s'", lake);
  assert_int_equal(system(p), 0);
}

static void test_data_dir_never_a_table(void **state) {
  ct_env *e = *state;
  char url[320], p[400];
  snprintf(url, sizeof url, "file://%s", e->dir);
  add_location(e->s, "all", "file:///"); /* a location may contain the data directory */
  assert_int_equal(cat_location_confine(e->s, NULL, "table", e->dir), DD_EPERM);
  assert_non_null(strstr(dd_err_msg(), "data directory"));
  snprintf(p, sizeof p, "%s/catalog.mdb", e->dir);
  assert_int_equal(cat_location_confine(e->s, NULL, "table", p), DD_EPERM);
  assert_int_equal(cat_location_confine(e->s, NULL, "table", "/"), DD_EPERM); /* contains it */
  assert_int_equal(cat_location_confine(e->s, NULL, "table", "/usr/share"), 0);
}

static void test_confine_object_urls(void **state) {
  ct_env *e = *state;
  Deltad__Credentials__V1__CreateCredentialRequest cr =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AwsAccessKeyCredential aws =
      DELTAD__CREDENTIALS__V1__AWS_ACCESS_KEY_CREDENTIAL__INIT;
  aws.access_key_id = "AKID";
  aws.secret_access_key = "s";
  cr.name = "c";
  cr.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AWS;
  cr.aws = &aws;
  cat_credential *c = NULL;
  assert_int_equal(cat_credential_create(e->s, &c, "admin", &cr), 0);
  CT_FREE(c);
  Deltad__Credentials__V1__CreateStorageLocationRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__INIT;
  cat_location *l = NULL;
  req.name = "s3";
  req.url = "s3://bucket/tables/";
  req.credential = "c";
  assert_int_equal(cat_location_create(e->s, &l, "admin", &req), 0);
  CT_FREE(l);
  assert_int_equal(cat_location_confine(e->s, NULL, "t", "s3://bucket/tables/a"), 0);
  assert_int_equal(cat_location_confine(e->s, NULL, "t", "s3://bucket/tablesx/a"), DD_EPERM);
  assert_int_equal(cat_location_confine(e->s, NULL, "t", "s3://other/tables/a"), DD_EPERM);
  assert_int_equal(cat_location_confine(e->s, NULL, "t", "s3://bucket/tables/../x"), DD_EINVAL);
  assert_int_equal(cat_location_confine(e->s, NULL, "t", "s3://bucket/tables/%2e%2e/x"), DD_EINVAL);
  /* user:password@ is refused at creation; Azure's container@account is not userinfo */
  req.name = "pw";
  req.url = "s3://u:p@bucket/x";
  assert_int_equal(cat_location_create(e->s, &l, "admin", &req), DD_EINVAL);
  assert_null(strstr(dd_err_msg(), "u:p"));
}

static void test_grant_generations(void **state) {
  ct_env *e = *state;
  Deltad__Sharing__V1__CreateShareRequest sr = DELTAD__SHARING__V1__CREATE_SHARE_REQUEST__INIT;
  cat_share *sh = NULL;
  cat_recipient *r = NULL;
  unsigned char hash[CAT_TOKEN_HASH_LEN] = {1};
  char g1[40], g2[40];
  sr.name = "s";
  assert_int_equal(cat_share_create(e->s, &sh, "admin", &sr), 0);
  assert_int_equal(cat_recipient_create(e->s, &r, "admin", "bob", "", hash, 0), 0);
  assert_int_equal(cat_grant_generation(e->s, sh->id, r->id, g1), DD_ENOTFOUND);
  assert_int_equal(cat_grant_add(e->s, "s", "bob"), 0);
  assert_int_equal(cat_grant_generation(e->s, sh->id, r->id, g1), 0);
  assert_int_equal(cat_grant_add(e->s, "s", "bob"), 0); /* granting twice keeps it */
  assert_int_equal(cat_grant_generation(e->s, sh->id, r->id, g2), 0);
  assert_string_equal(g1, g2);
  assert_int_equal(cat_grant_remove(e->s, "s", "bob"), 0);
  assert_int_equal(cat_grant_generation(e->s, sh->id, r->id, g2), DD_ENOTFOUND);
  assert_int_equal(cat_grant_add(e->s, "s", "bob"), 0); /* a new grant, a new generation */
  assert_int_equal(cat_grant_generation(e->s, sh->id, r->id, g2), 0);
  assert_string_not_equal(g1, g2);
  assert_int_equal(cat_recipient_delete(e->s, "bob"), 0);
  assert_int_equal(cat_grant_generation(e->s, sh->id, r->id, g2), DD_ENOTFOUND);
  CT_FREE(sh);
  CT_FREE(r);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_real_prefix, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_confine_local, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_data_dir_never_a_table, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_confine_object_urls, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_grant_generations, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
