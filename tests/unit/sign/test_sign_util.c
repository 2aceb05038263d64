/* test_sign_util.c: the shared pieces of dd_sign (store/sign/sign_util.c and the path
 * normaliser): base64 against the RFC 4648 section 10 vectors, HMAC-SHA256 against RFC
 * 4231 test case 2, SHA-256 of "abc" (FIPS 180-2 example), percent-encoding and -decoding,
 * UTC formatting, relative path normalisation and the growable string. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

static void test_base64_rfc4648(void **state) {
  (void)state;
  const char *in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char *std[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  const char *url[] = {"", "Zg", "Zm8", "Zm9v", "Zm9vYg", "Zm9vYmE", "Zm9vYmFy"};
  char out[16];
  for (int i = 0; i < 7; i++) {
    assert_int_equal(sign__b64(out, (const uint8_t *)in[i], strlen(in[i]), 0), strlen(std[i]));
    assert_string_equal(out, std[i]);
    sign__b64(out, (const uint8_t *)in[i], strlen(in[i]), 1);
    assert_string_equal(out, url[i]);
    if (i == 0)
      continue;
    uint8_t *dec = NULL;
    size_t n = 0;
    assert_int_equal(sign__b64_decode(&dec, &n, std[i]), 0);
    assert_int_equal(n, strlen(in[i]));
    assert_memory_equal(dec, in[i], n);
    free(dec);
  }
  const uint8_t hi[] = {0xfb, 0xff, 0xfe};
  sign__b64(out, hi, 3, 0);
  assert_string_equal(out, "+//+");
  sign__b64(out, hi, 3, 1);
  assert_string_equal(out, "-__-");
}

static void test_base64_decode_strict(void **state) {
  (void)state;
  const char *bad[] = {"", "Zg", "Zg=", "Z===", "Zm9v\n", "Zm 9", "Zm9-", "=Zm9", "Zg==Zg=="};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    uint8_t *dec = NULL;
    size_t n = 0;
    if (sign__b64_decode(&dec, &n, bad[i]) != DD_EINVAL)
      fail_msg("'%s' decoded", bad[i]);
    assert_null(dec);
  }
}

static void test_hmac_sha256(void **state) {
  (void)state;
  uint8_t mac[32];
  char hex[65];
  const char *msg = "what do ya want for nothing?";
  assert_int_equal(sign__hmac_sha256(mac, "Jefe", 4, msg, strlen(msg)), 0);
  sign__hex(hex, mac, 32);
  assert_string_equal(hex, "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  assert_int_equal(sign__sha256(mac, "abc", 3), 0);
  sign__hex(hex, mac, 32);
  assert_string_equal(hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  /* Empty key and message are valid HMAC inputs. */
  assert_int_equal(sign__hmac_sha256(mac, "", 0, "", 0), 0);
  sign__hex(hex, mac, 32);
  assert_string_equal(hex, "b613679a0814d9ec772f95d778c35fc5ff1697c493715653c6c712144292c5ad");
}

static void test_percent(void **state) {
  (void)state;
  sign__buf b = SIGN__BUF_INIT;
  char *s = NULL;
  sign__buf_pct(&b, "a-z_.~/ %=+&?#\xc3\xbc", 1);
  sign__buf_puts(&b, "|");
  sign__buf_pct(&b, "a/b", 0);
  assert_int_equal(sign__buf_finish(&b, &s), 0);
  assert_string_equal(s, "a-z_.~/%20%25%3D%2B%26%3F%23%C3%BC|a%2Fb");
  char *d = NULL;
  assert_int_equal(sign_pct_decode(&d, "a-z_.~/%20%25%3d%2B%26%3F%23%C3%BC+"), 0);
  assert_string_equal(d, "a-z_.~/ %=+&?#\xc3\xbc+");
  free(d);
  free(s);
  assert_int_equal(sign_pct_decode(&d, "%"), DD_EINVAL);
  assert_int_equal(sign_pct_decode(&d, "%4"), DD_EINVAL);
  assert_int_equal(sign_pct_decode(&d, "%g0"), DD_EINVAL);
  assert_int_equal(sign_pct_decode(&d, "%00"), DD_EINVAL);
  assert_int_equal(sign_pct_decode(&d, NULL), DD_EINVAL);
  assert_null(d);
}

static void test_utc_format(void **state) {
  (void)state;
  char out[32];
  assert_int_equal(sign__utc_format(out, sizeof out, 0, "%Y-%m-%dT%H:%M:%SZ"), 0);
  assert_string_equal(out, "1970-01-01T00:00:00Z");
  assert_int_equal(sign__utc_format(out, sizeof out, 1369353600, "%Y%m%dT%H%M%SZ"), 0);
  assert_string_equal(out, "20130524T000000Z");
  assert_int_equal(sign__utc_format(out, sizeof out, INT64_C(253402300799), "%Y"), 0);
  assert_string_equal(out, "9999");
  assert_int_equal(sign__utc_format(out, sizeof out, INT64_C(253402300800), "%Y"), DD_EINVAL);
  assert_int_equal(sign__utc_format(out, sizeof out, -1, "%Y"), DD_EINVAL);
}

static void test_rel_normalize(void **state) {
  (void)state;
  const char *ok[][2] = {{"a", "a"},           {"a/b", "a/b"},       {"./a//b/", "a/b"},
                         {"a/./b/.", "a/b"},   {"...", "..."},       {"..a/b..", "..a/b.."},
                         {"a\\..\\b", "a\\..\\b"}};
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    char *out = NULL;
    assert_int_equal(sign__rel_normalize(&out, ok[i][0]), 0);
    assert_string_equal(out, ok[i][1]);
    free(out);
  }
  const char *bad[] = {"", ".", "./", "//", "/a", "..", "../a", "a/..", "a/../b", "a/.."};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *out = NULL;
    if (sign__rel_normalize(&out, bad[i]) != DD_EPERM)
      fail_msg("'%s' was accepted", bad[i]);
    assert_null(out);
  }
}

static void test_buf_growth(void **state) {
  (void)state;
  sign__buf b = SIGN__BUF_INIT;
  for (int i = 0; i < 10000; i++)
    sign__buf_printf(&b, "%04d,", i % 10000);
  char *s = NULL;
  assert_int_equal(sign__buf_finish(&b, &s), 0);
  assert_int_equal(strlen(s), 50000);
  assert_true(strncmp(s + 49995, "9999,", 5) == 0);
  free(s);
  sign__buf empty = SIGN__BUF_INIT;
  assert_int_equal(sign__buf_finish(&empty, &s), 0);
  assert_string_equal(s, "");
  free(s);
  sign__buf_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_base64_rfc4648), cmocka_unit_test(test_base64_decode_strict),
      cmocka_unit_test(test_hmac_sha256),    cmocka_unit_test(test_percent),
      cmocka_unit_test(test_utc_format),     cmocka_unit_test(test_rel_normalize),
      cmocka_unit_test(test_buf_growth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
