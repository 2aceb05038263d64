/* test_os_review.c: the S3 and Azure backends keep every request under the store's root:
 * absolute URLs into another prefix of the same bucket or container (tables/t2 next to
 * tables/t), another bucket, container or account, and relative paths with ".." segments
 * are refused with DD_EPERM before any request is sent. No store is needed: the stores
 * point at a closed loopback port, so a path that is (wrongly) accepted fails with DD_EIO
 * instead. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "common/err.h"
#include "store/objstore/os_remote.h"

#define DEAD_EP "http://127.0.0.1:9" /* discard port: nothing listens */

static os_store *open_s3(const char *url) {
  sign_cred c = {0};
  c.kind = SIGN_CRED_AWS;
  c.aws.access_key_id = "AKIDREVIEW";
  c.aws.secret_access_key = "review-secret";
  c.aws_region = "us-east-1";
  c.aws_endpoint = DEAD_EP;
  os_store *st = NULL;
  assert_int_equal(os_open_url(&st, url, &c), 0);
  return st;
}

static os_store *open_azure(const char *url) {
  sign_cred c = {0};
  c.kind = SIGN_CRED_AZURE_KEY;
  c.azure_account = "acct";
  c.azure_key_b64 = "a2V5a2V5a2V5a2V5";
  c.azure_endpoint = DEAD_EP "/acct";
  os_store *st = NULL;
  assert_int_equal(os_open_url(&st, url, &c), 0);
  return st;
}

static void assert_refused(os_store *st, const char *path) {
  uint8_t *data = NULL, buf[8];
  size_t len = 0;
  os_stat sb;
  int rc = os_read_all(st, path, &data, &len);
  if (rc != DD_EPERM) print_error("os_read_all('%s') = %d: %s\n", path, rc, dd_err_msg());
  assert_int_equal(rc, DD_EPERM);
  assert_null(data);
  assert_int_equal(os_read_range(st, path, 0, sizeof buf, buf), DD_EPERM);
  assert_int_equal(os_stat_path(st, path, &sb), DD_EPERM);
  assert_int_equal(os_put(st, path, "x", 1), DD_EPERM);
  assert_int_equal(os_delete(st, path), DD_EPERM);
}

static void test_s3_absolute_outside_prefix(void **state) {
  (void)state;
  os_store *st = open_s3("s3://lake/tables/t");
  assert_refused(st, "s3://lake/tables/t2/part-0.parquet"); /* sibling prefix */
  assert_refused(st, "s3://lake/tables/secret.json");        /* parent prefix */
  assert_refused(st, "s3://lake/other/t/x.bin");
  assert_refused(st, "s3a://lake/tables/t2/dv.bin");
  assert_refused(st, "s3://lake2/tables/t/x.bin");            /* other bucket */
  assert_refused(st, "abfss://lake@acct.dfs.core.windows.net/tables/t/x");
  os_store_free(st);
}

static void test_s3_relative_dotdot(void **state) {
  (void)state;
  os_store *st = open_s3("s3://lake/tables/t");
  assert_refused(st, "../t2/part-0.parquet");
  assert_refused(st, "a/../../t2/x.parquet");
  assert_refused(st, "_delta_log/../../t2/_delta_log/00000000000000000000.json");
  assert_refused(st, "..\\t2\\x.parquet");
  assert_refused(st, "..");
  os_store_free(st);
}

static void test_s3_inside_is_tried(void **state) {
  (void)state;
  os_store *st = open_s3("s3://lake/tables/t");
  uint8_t *data = NULL;
  size_t len = 0;
  /* under the root: sent (and failing only because nothing listens) */
  assert_int_equal(os_read_all(st, "s3://lake/tables/t/part-0.parquet", &data, &len), DD_EIO);
  assert_int_equal(os_read_all(st, "a..b/..c/x..", &data, &len), DD_EIO);
  assert_null(strstr(dd_err_msg(), "review-secret"));
  os_store_free(st);
}

static void test_azure_absolute_outside_prefix(void **state) {
  (void)state;
  os_store *st = open_azure("abfss://lake@acct.dfs.core.windows.net/tables/t");
  assert_refused(st, "abfss://lake@acct.dfs.core.windows.net/tables/t2/part-0.parquet");
  assert_refused(st, "wasbs://lake@acct.blob.core.windows.net/tables/x.json");
  assert_refused(st, "abfss://lake@other.dfs.core.windows.net/tables/t/x");
  assert_refused(st, "abfss://lake2@acct.dfs.core.windows.net/tables/t/x");
  assert_refused(st, "az://lake/tables/t2/x");
  assert_refused(st, "../t2/x.parquet");
  assert_refused(st, "a/../../t2/x.parquet");
  uint8_t *data = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(st, "abfss://lake@acct.dfs.core.windows.net/tables/t/x", &data,
                               &len),
                   DD_EIO);
  os_store_free(st);
}

/* A store whose endpoint, region or bucket cannot be signed for is refused when opened
 * (so deltad reports a misconfigured location, not a failed read), as Azure's is. */
static void test_s3_open_checks_names(void **state) {
  (void)state;
  sign_cred c = {0};
  c.kind = SIGN_CRED_AWS;
  c.aws.access_key_id = "AKIDREVIEW";
  c.aws.secret_access_key = "review-secret";
  c.aws_region = "us-east-1";
  os_store *st = NULL;
  c.aws_endpoint = "http://admin:pw@127.0.0.1:9";
  assert_int_equal(os_open_url(&st, "s3://lake/t", &c), DD_EINVAL);
  c.aws_endpoint = "ftp://127.0.0.1:9";
  assert_int_equal(os_open_url(&st, "s3://lake/t", &c), DD_EINVAL);
  c.aws_endpoint = DEAD_EP;
  c.aws_region = "EU WEST";
  assert_int_equal(os_open_url(&st, "s3://lake/t", &c), DD_EINVAL);
  assert_null(st);
  c.aws_region = "us-east-1";
  assert_int_equal(os_open_url(&st, "s3://lake/t", &c), 0);
  os_store_free(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_s3_absolute_outside_prefix),
      cmocka_unit_test(test_s3_relative_dotdot),
      cmocka_unit_test(test_s3_inside_is_tried),
      cmocka_unit_test(test_azure_absolute_outside_prefix),
      cmocka_unit_test(test_s3_open_checks_names),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
