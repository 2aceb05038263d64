/* test_sign_aws.c: SigV4 in the Authorization header (store/sign/sign_aws.c), the form STS
 * AssumeRole is sent in.
 *
 * Where the vectors come from: no published AWS example signs an STS form POST, so the
 * expected signatures were computed with botocore's SigV4Auth (botocore 1.44.8, the
 * signer moto uses to check requests) for the same request: POST https://sts.us-east-1.
 * amazonaws.com/, body "Action=AssumeRole&Version=2011-06-15", Content-Type
 * "application/x-www-form-urlencoded; charset=utf-8", X-Amz-Date 20150830T123600Z, keys
 * AKIDEXAMPLE / wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY (AWS's SigV4 test-suite keys),
 * without and with the session token "TOKEN/with+chars=". integration.tables_sts checks
 * the live path: moto verifies the signature of every AssumeRole deltad sends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/sign/sign.h"

#define T20150830 INT64_C(1440938160) /* 2015-08-30T12:36:00Z */
static const char body[] = "Action=AssumeRole&Version=2011-06-15";
static const char ct[] = "application/x-www-form-urlencoded; charset=utf-8";

static void check(const char *token, const char *headers, const char *sig) {
  sign_aws_creds c = {"AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", token};
  sign_aws_v4_request q = {"POST", "sts.us-east-1.amazonaws.com", "/", "", ct, body, strlen(body)};
  sign_aws_v4_signed_out s;
  assert_int_equal(sign_aws_v4_signed(&s, &q, &c, "us-east-1", "sts", T20150830), 0);
  assert_string_equal(s.amz_date, "20150830T123600Z");
  char want[400];
  snprintf(want, sizeof want, "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/sts/"
           "aws4_request, SignedHeaders=%s, Signature=%s", headers, sig);
  assert_string_equal(s.authorization, want);
  sign_aws_v4_signed_free(&s);
  assert_null(s.authorization);
}

static void test_botocore_vectors(void **st) {
  (void)st;
  check(NULL, "content-type;host;x-amz-date",
        "a9d52868dda2fc22bf38a4e44940d6188ec55df1b0294d9c3a9f8e49e41d7fa4");
  check("TOKEN/with+chars=", "content-type;host;x-amz-date;x-amz-security-token",
        "848f0451ba1f28b68009d04b167b579f51e146a7e09aaa592dbade0539acec7d");
}

static void test_rejects(void **st) {
  (void)st;
  sign_aws_creds c = {"AKID", "secret", NULL};
  sign_aws_v4_signed_out s;
  sign_aws_v4_request q = {"POST", "h", "/", "", ct, body, strlen(body)};
  q.host = "evil\r\nX-Injected: 1";
  assert_int_equal(sign_aws_v4_signed(&s, &q, &c, "us-east-1", "sts", T20150830), DD_EINVAL);
  sign_aws_v4_signed_free(&s);
  q.host = "h";
  q.path = "no-slash";
  assert_int_equal(sign_aws_v4_signed(&s, &q, &c, "us-east-1", "sts", T20150830), DD_EINVAL);
  q.path = "/";
  sign_aws_creds bad = {"AK/ID", "secret", NULL};
  assert_int_equal(sign_aws_v4_signed(&s, &q, &bad, "us-east-1", "sts", T20150830), DD_EINVAL);
  sign_aws_creds tok = {"AKID", "secret", "a\nb"};
  assert_int_equal(sign_aws_v4_signed(&s, &q, &tok, "us-east-1", "sts", T20150830), DD_EINVAL);
  assert_int_equal(sign_aws_v4_signed(&s, &q, &c, "us/east", "sts", T20150830), DD_EINVAL);
  sign_aws_creds none = {"AKID", "", NULL};
  assert_int_equal(sign_aws_v4_signed(&s, &q, &none, "us-east-1", "sts", T20150830), DD_EINVAL);
  sign_aws_v4_signed_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_botocore_vectors),
      cmocka_unit_test(test_rejects),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
