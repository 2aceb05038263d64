/* test_sign_s3.c: AWS SigV4 presigned URLs (store/sign/sign_s3.c) against AWS's
 * published examples, then endpoint styles, session tokens and key encoding.
 *
 * Where the vectors come from:
 *  - Signing-key derivation (secret wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY, 20120215,
 *    us-east-1, iam -> f4780e2d...): AWS General Reference, "Examples of how to derive a
 *    signing key for Signature Version 4" (signature-v4-examples).
 *  - Presigned GET of examplebucket/test.txt (AKIAIOSFODNN7EXAMPLE,
 *    wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY, 20130524T000000Z, us-east-1, 86400 s):
 *    Amazon S3 API Reference, "Authenticating Requests: Using Query Parameters (AWS
 *    Signature Version 4)", example section: canonical request, its SHA-256
 *    3bfa2928..., string to sign and signature aeeed9bb... The stored copy of that AWS
 *    page available while writing this test showed only its opening section; the
 *    intermediate values were taken as quoted from that page by several independent
 *    public SigV4 test suites, and they are self-consistent (the hash of the canonical
 *    request is the one in the string to sign, which yields the documented signature).
 *  - Header-auth "GET Object" example of the same S3 docs ("Signature Calculations for
 *    the Authorization Header", examplebucket, Range bytes=0-9): canonical request hash
 *    7344ae5b..., signature f0e8bdb8...; used to test the key derivation and HMAC step
 *    with a second published string to sign.
 *  - Session token, regional virtual-hosted and MinIO path-style cases: no published
 *    vector exists; the expected signatures were computed independently with AWS's own
 *    SigV4 signer (@smithy/signature-v4, presign with UNSIGNED-PAYLOAD and only "host"
 *    signed), configured so that it also reproduces the published aeeed9bb... above. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

static const sign_aws_creds doc_creds = {"AKIAIOSFODNN7EXAMPLE",
                                         "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", NULL};
#define DOC_TIME INT64_C(1369353600) /* 2013-05-24T00:00:00Z */
#define T2024 INT64_C(1710495000)    /* 2024-03-15T09:30:00Z */

static void hex32(char out[65], const uint8_t in[32]) { sign__hex(out, in, 32); }

static void test_signing_key_published(void **state) {
  (void)state;
  uint8_t k[32];
  char hex[65];
  assert_int_equal(sign__aws_signing_key(k, "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY",
                                         "20120215", "us-east-1", "iam"),
                   0);
  hex32(hex, k);
  assert_string_equal(hex, "f4780e2d9f65fa895f9c67b32ce1baf0b0d8a43505a000a1a9e090d414db404d");
}

static void test_header_example_signature(void **state) {
  (void)state;
  /* The published canonical request of the header-auth GET Object example. */
  const char *cr = "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\nrange:bytes=0-9\n"
                   "x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca"
                   "495991b7852b855\nx-amz-date:20130524T000000Z\n\n"
                   "host;range;x-amz-content-sha256;x-amz-date\n"
                   "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
  uint8_t h[32], k[32], sig[32];
  char hex[65];
  assert_int_equal(sign__sha256(h, cr, strlen(cr)), 0);
  hex32(hex, h);
  assert_string_equal(hex, "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972");
  const char *sts = "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n"
                    "7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972";
  assert_int_equal(sign__aws_signing_key(k, doc_creds.secret_access_key, "20130524",
                                         "us-east-1", "s3"),
                   0);
  assert_int_equal(sign__hmac_sha256(sig, k, 32, sts, strlen(sts)), 0);
  hex32(hex, sig);
  assert_string_equal(hex, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41");
}

static void test_presign_published_example(void **state) {
  (void)state;
  char *url = NULL, *cr = NULL, *sts = NULL;
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  o.endpoint = "https://s3.amazonaws.com"; /* the example uses the global endpoint */
  o.style = SIGN_S3_STYLE_VIRTUAL;
  assert_int_equal(sign__s3_presign_steps(&url, &cr, &sts, NULL, &doc_creds, "us-east-1",
                                          "examplebucket", "test.txt", DOC_TIME, 86400, &o),
                   0);
  assert_string_equal(cr, "GET\n/test.txt\n"
                          "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE"
                          "%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z"
                          "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\n"
                          "host:examplebucket.s3.amazonaws.com\n\nhost\nUNSIGNED-PAYLOAD");
  assert_string_equal(sts, "AWS4-HMAC-SHA256\n20130524T000000Z\n"
                           "20130524/us-east-1/s3/aws4_request\n"
                           "3bfa292879f6447bbcda7001decf97f4a54dc650c8942174ae0a9121cf58ad04");
  assert_string_equal(url,
                      "https://examplebucket.s3.amazonaws.com/test.txt"
                      "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE"
                      "%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z"
                      "&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature="
                      "aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404");
  free(url);
  free(cr);
  free(sts);
}

static void test_presign_session_token_regional(void **state) {
  (void)state;
  sign_aws_creds c = doc_creds;
  c.session_token = "FwoGZXIvYXdzEXAMPLE/token+with=chars";
  char *url = NULL;
  assert_int_equal(sign_s3_presign(&url, &c, "eu-west-1", "delta-bucket",
                                   "tables/t1/part-00000.snappy.parquet", T2024, 3600, NULL),
                   0);
  assert_string_equal(
      url, "https://delta-bucket.s3.eu-west-1.amazonaws.com/tables/t1/part-00000.snappy.parquet"
           "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE"
           "%2F20240315%2Feu-west-1%2Fs3%2Faws4_request&X-Amz-Date=20240315T093000Z"
           "&X-Amz-Expires=3600"
           "&X-Amz-Security-Token=FwoGZXIvYXdzEXAMPLE%2Ftoken%2Bwith%3Dchars"
           "&X-Amz-SignedHeaders=host&X-Amz-Signature="
           "5c3f39540ec1c80be0003eb7373d0087c69fca301b2ee435948b0125159b9ac2");
  free(url);
}

static void test_presign_minio_path_style_odd_key(void **state) {
  (void)state;
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  o.endpoint = "http://127.0.0.1:9000/";
  char *url = NULL, *cr = NULL;
  assert_int_equal(sign__s3_presign_steps(&url, &cr, NULL, NULL, &doc_creds, "us-east-1", "lake",
                                          "t/a=2021-01-01 00%3A00%3A00/part 0 \xc3\xbc+~.parquet",
                                          T2024, 900, &o),
                   0);
  /* Encoded once, '/' kept: "%" of the Hive escape becomes %25, never decoded. */
  assert_non_null(strstr(cr, "\n/lake/t/a%3D2021-01-01%2000%253A00%253A00/"
                             "part%200%20%C3%BC%2B~.parquet\n"));
  assert_non_null(strstr(cr, "\nhost:127.0.0.1:9000\n"));
  assert_string_equal(url, "http://127.0.0.1:9000/lake/t/a%3D2021-01-01%2000%253A00%253A00/"
                           "part%200%20%C3%BC%2B~.parquet"
                           "?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE"
                           "%2F20240315%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20240315T093000Z"
                           "&X-Amz-Expires=900&X-Amz-SignedHeaders=host&X-Amz-Signature="
                           "3007da1daca3ccd9d5c300119c687a9d02b0f6545a9941dd5ec048665ba82c48");
  free(url);
  free(cr);
}

static void test_presign_styles(void **state) {
  (void)state;
  char *url = NULL;
  /* A dotted bucket cannot be a TLS virtual host: AUTO picks path style. */
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-west-2", "my.bucket", "k", T2024, 60,
                                   NULL),
                   0);
  assert_true(strncmp(url, "https://s3.us-west-2.amazonaws.com/my.bucket/k?", 47) == 0);
  free(url);
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  o.style = SIGN_S3_STYLE_VIRTUAL;
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-west-2", "my.bucket", "k", T2024, 60,
                                   &o),
                   DD_EINVAL);
  assert_null(url);
  /* China regions live under amazonaws.com.cn. */
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "cn-north-1", "bkt", "a/b", T2024, 60,
                                   NULL),
                   0);
  assert_true(strncmp(url, "https://bkt.s3.cn-north-1.amazonaws.com.cn/a/b?", 47) == 0);
  free(url);
  /* A custom endpoint can still be virtual-hosted; the default https port is dropped. */
  o.endpoint = "https://store.example:443";
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "x", T2024, 60, &o),
                   0);
  assert_true(strncmp(url, "https://bkt.store.example/x?", 28) == 0);
  free(url);
}

static void test_presign_rejects(void **state) {
  (void)state;
  char *url = NULL;
  sign_aws_creds no_secret = {"AKID", "", NULL};
  assert_int_equal(sign_s3_presign(&url, &no_secret, "us-east-1", "b", "k", T2024, 60, NULL),
                   DD_EINVAL);
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "US_EAST", "bkt", "k", T2024, 60, NULL),
                   DD_EINVAL);
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "", T2024, 60, NULL),
                   DD_EINVAL);
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "b/x", "k", T2024, 60, NULL),
                   DD_EINVAL);
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "k", T2024, 0, NULL),
                   DD_EINVAL);
  assert_int_equal(
      sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "k", T2024, 604801, NULL),
      DD_EINVAL);
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "k", -1, 60, NULL),
                   DD_EINVAL);
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  o.endpoint = "ftp://x";
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "k", T2024, 60, &o),
                   DD_EINVAL);
  o.endpoint = NULL;
  o.version = 99;
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "k", T2024, 60, &o),
                   DD_EINVAL);
  o.version = SIGN_S3_OPTS_VERSION;
  o.endpoint = "https://host/base/path";
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "k", T2024, 60, &o),
                   DD_EINVAL);
  assert_null(url);
}

/* Fixed after comparing with botocore (tests/integration/test_s3_sigv4_botocore.py): a
 * path-style bucket request is /bucket, not /bucket/ (what AWS's SDKs send and sign), and
 * an endpoint's host is lower-cased in both the URL and the signed Host header. */
static void test_presign_bucket_request_and_host_case(void **state) {
  (void)state;
  static const sign_s3_param ps[] = {{"delimiter", "/"}, {"list-type", "2"}, {"prefix", "p/"}};
  sign_s3_request q = {"GET", ps, 3};
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  o.endpoint = "http://MinIO.Example:9000";
  char *url = NULL, *cr = NULL;
  assert_int_equal(sign__s3_presign_steps(&url, &cr, NULL, &q, &doc_creds, "us-east-1", "lake",
                                          "", T2024, 60, &o),
                   0);
  assert_true(strncmp(url, "http://minio.example:9000/lake?X-Amz-Algorithm=", 47) == 0);
  assert_true(strncmp(cr, "GET\n/lake\nX-Amz-Algorithm=", 26) == 0);
  assert_non_null(strstr(cr, "&delimiter=%2F&list-type=2&prefix=p%2F\nhost:minio.example:9000\n"));
  free(url);
  free(cr);
  o.endpoint = NULL; /* virtual-hosted: the bucket request is "/" */
  assert_int_equal(sign_s3_presign_req(&url, &q, &doc_creds, "eu-west-1", "lake", "", T2024, 60,
                                       &o),
                   0);
  assert_true(strncmp(url, "https://lake.s3.eu-west-1.amazonaws.com/?X-Amz-", 47) == 0);
  free(url);
}

/* Extra parameter names must sort after X-Amz-*: a lower-case letter first. */
static void test_presign_param_names(void **state) {
  (void)state;
  char *url = NULL;
  sign_s3_param bad[][1] = {{{"1abc", "x"}}, {{"-x", "x"}}, {{"Prefix", "x"}}, {{"", "x"}}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    sign_s3_request q = {"GET", bad[i], 1};
    assert_int_equal(sign_s3_presign_req(&url, &q, &doc_creds, "us-east-1", "bkt", "", T2024, 60,
                                         NULL),
                     DD_EINVAL);
    assert_null(url);
  }
  /* capitals after a lower-case first letter (the multipart parameters) are fine */
  sign_s3_param mpu[] = {{"partNumber", "1"}, {"uploadId", "a/b+c"}};
  sign_s3_request m = {"PUT", mpu, 2};
  assert_int_equal(sign_s3_presign_req(&url, &m, &doc_creds, "us-east-1", "bkt", "k", T2024, 60,
                                       NULL),
                   0);
  assert_non_null(strstr(url, "&partNumber=1&uploadId=a%2Fb%2Bc&X-Amz-Signature="));
  free(url);
  url = NULL;
  sign_s3_param bad_char[] = {{"upload_id", "x"}};
  sign_s3_request bc = {"PUT", bad_char, 1};
  assert_int_equal(sign_s3_presign_req(&url, &bc, &doc_creds, "us-east-1", "bkt", "k", T2024, 60,
                                       NULL),
                   DD_EINVAL);
  sign_s3_param unsorted[] = {{"prefix", ""}, {"list-type", "2"}};
  sign_s3_request q = {"GET", unsorted, 2};
  assert_int_equal(sign_s3_presign_req(&url, &q, &doc_creds, "us-east-1", "bkt", "", T2024, 60,
                                       NULL),
                   DD_EINVAL);
}

/* Review: endpoints that would send a presigned request (or a password in them) elsewhere
 * are refused, and the message never repeats the endpoint (it may hold user information). */
static void test_presign_endpoint_injection(void **state) {
  (void)state;
  char *url = NULL;
  static const char *const bad[] = {
      "http://admin:hunter2pw@127.0.0.1:9000",     /* user information */
      "https://hunter2pw@s3.example",
      "ftp://u:hunter2pw@host",                    /* odd scheme with a password */
      "http://host\\hunter2pw",                    /* backslash in the host */
      "http://host%2Fhunter2pw",                   /* escape in the host */
      "http://host\r\nX-Injected: hunter2pw",      /* CR/LF */
      "http://host hunter2pw",                     /* blank */
      "http://host/hunter2pw",                     /* path */
      "http://host?x=hunter2pw",                   /* query */
      "http://host#hunter2pw",                     /* fragment */
      "javascript:hunter2pw",
  };
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    o.endpoint = bad[i];
    int rc = sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "k", T2024, 60, &o);
    if (rc != DD_EINVAL || strstr(dd_err_msg(), "hunter2pw"))
      print_error("endpoint %zu: rc %d, message '%s'\n", i, rc, dd_err_msg());
    assert_int_equal(rc, DD_EINVAL);
    assert_null(strstr(dd_err_msg(), "hunter2pw"));
    assert_null(url);
  }
  o.endpoint = "http://[::1]:9000"; /* an IPv6 literal is a host */
  assert_int_equal(sign_s3_presign(&url, &doc_creds, "us-east-1", "bkt", "k", T2024, 60, &o), 0);
  assert_true(strncmp(url, "http://[::1]:9000/bkt/k?", 24) == 0);
  free(url);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_signing_key_published),
      cmocka_unit_test(test_header_example_signature),
      cmocka_unit_test(test_presign_published_example),
      cmocka_unit_test(test_presign_session_token_regional),
      cmocka_unit_test(test_presign_minio_path_style_odd_key),
      cmocka_unit_test(test_presign_styles),
      cmocka_unit_test(test_presign_rejects),
      cmocka_unit_test(test_presign_bucket_request_and_host_case),
      cmocka_unit_test(test_presign_param_names),
      cmocka_unit_test(test_presign_endpoint_injection),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
