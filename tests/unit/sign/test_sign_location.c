/* test_sign_location.c: storage location parsing and the object-URL dispatcher
 * (store/sign/sign_location.c): every scheme, malformed URLs, and signing an object
 * under S3, Azure (key, SAS token, ADLS Gen2 dfs host) and GCS locations. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

#define AZ_KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

static void expect_loc(const char *url, sign_loc_kind kind, const char *scheme,
                       const char *bucket, const char *account, const char *suffix,
                       const char *path) {
  sign_location l;
  assert_int_equal(sign_parse_location(&l, url), 0);
  assert_int_equal(l.kind, kind);
  assert_string_equal(l.scheme, scheme);
  if (bucket)
    assert_string_equal(l.bucket, bucket);
  else
    assert_null(l.bucket);
  if (account)
    assert_string_equal(l.account, account);
  else
    assert_null(l.account);
  if (suffix)
    assert_string_equal(l.endpoint_suffix, suffix);
  else
    assert_null(l.endpoint_suffix);
  assert_string_equal(l.path, path);
  sign_location_free(&l);
  assert_null(l.path);
}

static void test_parse_file(void **state) {
  (void)state;
  expect_loc("file:///data/tables/t1", SIGN_LOC_FILE, "file", NULL, NULL, NULL, "/data/tables/t1");
  expect_loc("file:/tmp/delta/", SIGN_LOC_FILE, "file", NULL, NULL, NULL, "/tmp/delta");
  expect_loc("file://localhost/srv//x/./y", SIGN_LOC_FILE, "file", NULL, NULL, NULL, "/srv/x/y");
  expect_loc("FILE:///a%20b/c", SIGN_LOC_FILE, "file", NULL, NULL, NULL, "/a b/c");
  expect_loc("file:///", SIGN_LOC_FILE, "file", NULL, NULL, NULL, "/");
}

static void test_parse_s3_gcs(void **state) {
  (void)state;
  expect_loc("s3://bucket/prefix/tbl", SIGN_LOC_S3, "s3", "bucket", NULL, NULL, "prefix/tbl");
  expect_loc("s3a://my.bucket/p/", SIGN_LOC_S3, "s3a", "my.bucket", NULL, NULL, "p");
  expect_loc("s3n://b", SIGN_LOC_S3, "s3n", "b", NULL, NULL, "");
  expect_loc("s3://b/", SIGN_LOC_S3, "s3", "b", NULL, NULL, "");
  expect_loc("s3://b/a%20dir/t", SIGN_LOC_S3, "s3", "b", NULL, NULL, "a dir/t");
  expect_loc("gs://gbucket/warehouse/t", SIGN_LOC_GCS, "gs", "gbucket", NULL, NULL,
             "warehouse/t");
}

static void test_parse_azure(void **state) {
  (void)state;
  expect_loc("abfss://lake@acct01.dfs.core.windows.net/tables/t1", SIGN_LOC_AZURE, "abfss",
             "lake", "acct01", "core.windows.net", "tables/t1");
  expect_loc("abfs://lake@acct01.dfs.core.chinacloudapi.cn/", SIGN_LOC_AZURE, "abfs", "lake",
             "acct01", "core.chinacloudapi.cn", "");
  expect_loc("wasbs://lake@acct01.blob.core.windows.net/t", SIGN_LOC_AZURE, "wasbs", "lake",
             "acct01", "core.windows.net", "t");
  expect_loc("az://lake/tables/t1", SIGN_LOC_AZURE, "az", "lake", NULL, NULL, "tables/t1");
  expect_loc("azure://lake/t", SIGN_LOC_AZURE, "azure", "lake", NULL, NULL, "t");
  expect_loc("az://lake@acct01.blob.core.windows.net/t", SIGN_LOC_AZURE, "az", "lake", "acct01",
             "core.windows.net", "t");
}

static void test_parse_rejects(void **state) {
  (void)state;
  const char *bad[] = {
      "",
      "no-scheme",
      "://x",
      "ftp://host/x",
      "s3://",
      "s3:///key",
      "s3:bucket/key",
      "s3://user@bucket/k",
      "s3://bucket:9000/k",
      "s3://b/../other",
      "s3://b/a/%2e%2e/x",
      "s3://b/k?versionId=1",
      "s3://b/k#frag",
      "s3://b/a b",
      "s3://b/%zz",
      "file://otherhost/x",
      "file:relative/x",
      "file:///a/../b",
      "abfss://acct01.dfs.core.windows.net/t",
      "abfss://@acct01.dfs.core.windows.net/t",
      "abfss://lake@acct01.queue.core.windows.net/t",
      "abfss://lake@.dfs.core.windows.net/t",
      "abfss://lake@acct01.dfs./t",
      "wasbs://lake/t",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sign_location l;
    int rc = sign_parse_location(&l, bad[i]);
    if (rc != DD_EINVAL)
      fail_msg("'%s' gave %d, want DD_EINVAL", bad[i], rc);
    assert_null(l.scheme);
  }
  sign_location_free(NULL);
}

static void test_object_s3(void **state) {
  (void)state;
  sign_location l;
  assert_int_equal(sign_parse_location(&l, "s3a://delta-bucket/tables/t1"), 0);
  sign_cred c = {0};
  c.kind = SIGN_CRED_AWS;
  c.aws.access_key_id = "AKIAIOSFODNN7EXAMPLE";
  c.aws.secret_access_key = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
  c.aws_region = "eu-west-1";
  char *url = NULL, *direct = NULL;
  assert_int_equal(sign_object_url(&url, &l, "part-00000.snappy.parquet", &c, 1710495000, 3600),
                   0);
  assert_int_equal(sign_s3_presign(&direct, &c.aws, "eu-west-1", "delta-bucket",
                                   "tables/t1/part-00000.snappy.parquet", 1710495000, 3600, NULL),
                   0);
  assert_string_equal(url, direct);
  free(url);
  free(direct);
  /* Relative keys never leave the location prefix. */
  assert_int_equal(sign_object_url(&url, &l, "../t2/x.parquet", &c, 1710495000, 3600), DD_EPERM);
  assert_int_equal(sign_object_url(&url, &l, "/abs", &c, 1710495000, 3600), DD_EPERM);
  /* MinIO endpoint from the credential: path style. */
  c.aws_endpoint = "http://127.0.0.1:9000";
  assert_int_equal(sign_object_url(&url, &l, "p.parquet", &c, 1710495000, 60), 0);
  assert_true(strncmp(url, "http://127.0.0.1:9000/delta-bucket/tables/t1/p.parquet?", 55) == 0);
  free(url);
  c.kind = SIGN_CRED_AZURE_KEY;
  assert_int_equal(sign_object_url(&url, &l, "p.parquet", &c, 1710495000, 60), DD_EINVAL);
  c.kind = SIGN_CRED_AWS;
  assert_int_equal(sign_object_url(&url, &l, "p.parquet", &c, 1710495000, 0), DD_EINVAL);
  assert_null(url);
  sign_location_free(&l);
}

static void test_object_azure(void **state) {
  (void)state;
  sign_location l;
  /* An ADLS Gen2 location is read through the blob endpoint of the same account. */
  assert_int_equal(sign_parse_location(&l, "abfss://delta@devstoreaccount1.dfs.core.windows.net/tbl"),
                   0);
  sign_cred c = {0};
  c.kind = SIGN_CRED_AZURE_KEY;
  c.azure_key_b64 = AZ_KEY;
  char *url = NULL;
  /* now = 2021-01-01T00:05:00Z, 86100 s: st is 300 s earlier, se 2021-01-02T00:00:00Z;
   * the same blob, times and version as the SDK-checked vector of test_sign_azure.c. */
  assert_int_equal(sign_object_url(&url, &l, "part-00000.snappy.parquet", &c, 1609459500, 86100),
                   0);
  assert_string_equal(url, "https://devstoreaccount1.blob.core.windows.net/delta/tbl/"
                           "part-00000.snappy.parquet?sv=2020-12-06&st=2021-01-01T00%3A00%3A00Z"
                           "&se=2021-01-02T00%3A00%3A00Z&sr=b&sp=r"
                           "&sig=R9uTb8jG1csBf6xy%2BdSEa6hTdVpbhXYsJ1M4rvjJ3tA%3D");
  free(url);
  /* An emulator endpoint (Azurite) replaces the host; the signature does not change. */
  c.azure_endpoint = "http://127.0.0.1:10000/devstoreaccount1";
  assert_int_equal(sign_object_url(&url, &l, "part-00000.snappy.parquet", &c, 1609459500, 86100),
                   0);
  assert_string_equal(url, "http://127.0.0.1:10000/devstoreaccount1/delta/tbl/"
                           "part-00000.snappy.parquet?sv=2020-12-06&st=2021-01-01T00%3A00%3A00Z"
                           "&se=2021-01-02T00%3A00%3A00Z&sr=b&sp=r"
                           "&sig=R9uTb8jG1csBf6xy%2BdSEa6hTdVpbhXYsJ1M4rvjJ3tA%3D");
  free(url);
  c.azure_endpoint = "";
  sign_location cn;
  assert_int_equal(sign_parse_location(&cn, "abfss://delta@devstoreaccount1.dfs.core.chinacloudapi.cn/t"),
                   0);
  assert_int_equal(sign_object_url(&url, &cn, "f", &c, 1609459500, 60), 0);
  assert_true(strncmp(url, "https://devstoreaccount1.blob.core.chinacloudapi.cn/delta/t/f?", 61) == 0);
  free(url);
  sign_location_free(&cn);
  c.azure_account = "someoneelse";
  assert_int_equal(sign_object_url(&url, &l, "f", &c, 1609459500, 60), DD_EINVAL);
  c.azure_account = NULL;
  c.kind = SIGN_CRED_AZURE_CLIENT; /* a service principal: no user delegation key yet */
  assert_int_equal(sign_object_url(&url, &l, "f", &c, 1609459500, 60), DD_EPRECOND);
  sign_location_free(&l);

  /* With a user delegation key: the URL @azure/storage-blob 12.29.1's
   * generateBlobSASQueryParameters makes for the same key, blob and times (version
   * 2020-12-06, st = now - 300 s). */
  sign_azure_udk udk = {"11111111-2222-3333-4444-555555555555", "aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee",
                        "2021-01-01T00:00:00Z", "2021-01-02T00:00:00Z", "b", "2020-12-06",
                        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="};
  assert_int_equal(sign_parse_location(&l, "abfss://delta@acct01.dfs.core.windows.net/tbl"), 0);
  c.azure_udk = &udk;
  assert_int_equal(sign_object_url(&url, &l, "d/f 1.parquet", &c, 1609459500, 60), 0);
  assert_string_equal(url, "https://acct01.blob.core.windows.net/delta/tbl/d/f%201.parquet"
                           "?sv=2020-12-06&st=2021-01-01T00%3A00%3A00Z&se=2021-01-01T00%3A06%3A00Z"
                           "&skoid=11111111-2222-3333-4444-555555555555&sktid=aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
                           "&skt=2021-01-01T00%3A00%3A00Z&ske=2021-01-02T00%3A00%3A00Z&sks=b&skv=2020-12-06"
                           "&sr=b&sp=r&sig=KedBOHnGFoghLVHsJpTVh3dfsZ9DIHNS4%2F5i3jSv51s%3D");
  free(url);
  /* A URL that would outlive the key is refused. */
  assert_int_equal(sign_object_url(&url, &l, "f", &c, 1609459500, 86400 * 2), DD_EINVAL);
  assert_null(url);
  c.azure_udk = NULL;
  sign_location_free(&l);

  /* az:// takes its account from the credential; a SAS token is appended. */
  assert_int_equal(sign_parse_location(&l, "az://delta/tbl"), 0);
  c.kind = SIGN_CRED_AZURE_SAS;
  c.azure_account = "acct01";
  c.azure_sas = "sv=2021-08-06&sr=c&sp=rl&sig=xyz%3D";
  assert_int_equal(sign_object_url(&url, &l, "d/f 1.parquet", &c, 1609459500, 60), 0);
  assert_string_equal(url, "https://acct01.blob.core.windows.net/delta/tbl/d/f%201.parquet"
                           "?sv=2021-08-06&sr=c&sp=rl&sig=xyz%3D");
  free(url);
  c.azure_account = NULL;
  assert_int_equal(sign_object_url(&url, &l, "f", &c, 1609459500, 60), DD_EINVAL);
  assert_null(url);
  sign_location_free(&l);
}

static void test_object_unsupported(void **state) {
  (void)state;
  sign_location l;
  sign_cred c = {0};
  char *url = NULL;
  assert_int_equal(sign_parse_location(&l, "gs://gbucket/t"), 0);
  assert_int_equal(sign_object_url(&url, &l, "f.parquet", &c, 1, 60), DD_EUNSUPPORTED);
  sign_location_free(&l);
  assert_int_equal(sign_parse_location(&l, "file:///data/t"), 0);
  assert_int_equal(sign_object_url(&url, &l, "f.parquet", &c, 1, 60), DD_EINVAL);
  sign_location_free(&l);
  assert_null(url);
}

/* Review: an Azure host with a second '@' parses (the suffix is everything after the
 * account), but no URL is signed for it: the real host would become user information. */
static void test_object_azure_suffix_userinfo(void **state) {
  (void)state;
  sign_location l;
  sign_cred c = {0};
  char *url = NULL;
  c.kind = SIGN_CRED_AZURE_SAS;
  c.azure_sas = "sv=2021-08-06&sr=c&sp=rl&sig=xyz%3D";
  int rc = sign_parse_location(&l, "abfss://delta@acct01.dfs.core.windows.net@evil.example/t");
  if (rc == 0) {
    rc = sign_object_url(&url, &l, "f.parquet", &c, 1609459500, 60);
    if (url) print_error("signed: %s\n", url);
    sign_location_free(&l);
  }
  assert_int_equal(rc, DD_EINVAL);
  assert_null(url);
}

/* rel of url under root_url, or NULL when refused (DD_EPERM). */
static char *under(const char *root_url, const char *url) {
  sign_location root;
  assert_int_equal(sign_parse_location(&root, root_url), 0);
  char *rel = NULL;
  int rc = sign_location_under(&rel, &root, url);
  sign_location_free(&root);
  if (rc) {
    assert_int_equal(rc, DD_EPERM);
    assert_null(rel);
  }
  return rel;
}

static void test_location_under(void **state) {
  (void)state;
  char *r = under("s3://lake/tables/t", "s3a://lake/tables/t/part=1/a.parquet");
  assert_string_equal(r, "part=1/a.parquet");
  free(r);
  r = under("s3://lake", "s3://lake/x/y.parquet"); /* a table at the bucket root */
  assert_string_equal(r, "x/y.parquet");
  free(r);
  assert_null(under("s3://lake/tables/t", "s3://lake/tables/t2/a.parquet")); /* a sibling */
  assert_null(under("s3://lake/tables/t", "s3://lake/tables/t")); /* the root itself */
  assert_null(under("s3://lake/tables/t", "s3://other/tables/t/a.parquet"));
  assert_null(under("s3://lake/tables/t", "file:///tables/t/a.parquet"));
  r = under("abfss://c@acct.dfs.core.windows.net/t", "abfss://c@ACCT.dfs.core.windows.net/t/a");
  assert_string_equal(r, "a");
  free(r);
  assert_null(under("abfss://c@acct.dfs.core.windows.net/t", "abfss://c@evil.dfs.core.windows.net/t/a"));
  r = under("file:///data/t", "file:///data/t/a.parquet");
  assert_string_equal(r, "a.parquet");
  free(r);
  assert_null(under("file:///data/t", "file:///data/tt/a.parquet"));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_location_under),
      cmocka_unit_test(test_parse_file),     cmocka_unit_test(test_parse_s3_gcs),
      cmocka_unit_test(test_parse_azure),    cmocka_unit_test(test_parse_rejects),
      cmocka_unit_test(test_object_s3),      cmocka_unit_test(test_object_azure),
      cmocka_unit_test(test_object_unsupported),
      cmocka_unit_test(test_object_azure_suffix_userinfo),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
