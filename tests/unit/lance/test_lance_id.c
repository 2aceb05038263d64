/* test_lance_id.c: Lance identifiers in REST paths (server/http/native/lance_rest_id.h):
 * delimiters, the root, percent-encoding and '+', empty parts and size limits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "server/http/native/lance_rest_id.h"

/* Parses raw with delim and checks the parts (NULL-terminated list). */
static void expect_parts(const char *raw, const char *delim, ...) {
  dd_native__lance_id id = DD_NATIVE__LANCE_ID_INIT;
  va_list ap;
  int rc = dd_native__lance_id_parse(&id, raw, strlen(raw), delim);
  if (rc) fail_msg("%s: %s", raw, dd_err_msg());
  va_start(ap, delim);
  size_t i = 0;
  for (const char *p; (p = va_arg(ap, const char *)); i++) {
    assert_true(i < id.n);
    assert_string_equal(id.parts[i], p);
  }
  va_end(ap);
  assert_int_equal(id.n, i);
  dd_native__lance_id_free(&id);
}

static void expect_invalid(const char *raw, const char *delim, const char *text) {
  dd_native__lance_id id = DD_NATIVE__LANCE_ID_INIT;
  assert_int_equal(dd_native__lance_id_parse(&id, raw, strlen(raw), delim), DD_EINVAL);
  if (!strstr(dd_err_msg(), text)) fail_msg("%s: message '%s' lacks '%s'", raw, dd_err_msg(), text);
  assert_int_equal(id.n, 0);
  assert_null(id.parts);
}

static void test_split(void **state) {
  (void)state;
  expect_parts("a", NULL, "a", NULL);
  expect_parts("a$b$c", NULL, "a", "b", "c", NULL);
  expect_parts("a%24b", NULL, "a", "b", NULL);           /* %24 is '$': decoded first */
  expect_parts("a+b$c%20d", NULL, "a b", "c d", NULL);   /* '+' and %20 are spaces */
  expect_parts("p%2Bq", NULL, "p+q", NULL);              /* an encoded '+' stays */
  expect_parts("%C3%BCber$x", NULL, "\xc3\xbc" "ber", "x", NULL);
  expect_parts("a::b$c::d", "::", "a", "b$c", "d", NULL); /* another delimiter */
  expect_parts("a.b", ".", "a", "b", NULL);
  expect_parts("x__d__y", "__d__", "x", "y", NULL);
}

static void test_root(void **state) {
  (void)state;
  expect_parts("$", NULL, NULL);
  expect_parts("%24", NULL, NULL);
  expect_parts("::", "::", NULL);
  expect_parts("%3A%3A", "::", NULL);
  expect_parts("$", "::", "$", NULL); /* '$' is a name when it is not the delimiter */
}

static void test_invalid(void **state) {
  (void)state;
  expect_invalid("", NULL, "empty");
  expect_invalid("a$$b", NULL, "empty part");
  expect_invalid("$a", NULL, "empty part");
  expect_invalid("a$", NULL, "empty part");
  expect_invalid("$$", NULL, "empty part");
  expect_invalid("a%2", NULL, "percent");
  expect_invalid("a%zz", NULL, "percent");
  expect_invalid("a%00b", NULL, "percent");
  expect_invalid("a", "", "delimiter");
  expect_invalid("a", "12345678901234567", "delimiter");
  char big[DD_NATIVE__LANCE_ID_MAX_BYTES + 2];
  memset(big, 'x', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  expect_invalid(big, NULL, "longer");
  /* exactly the limit is fine */
  big[DD_NATIVE__LANCE_ID_MAX_BYTES] = '\0';
  dd_native__lance_id id = DD_NATIVE__LANCE_ID_INIT;
  assert_int_equal(dd_native__lance_id_parse(&id, big, strlen(big), NULL), 0);
  assert_int_equal(id.n, 1);
  dd_native__lance_id_free(&id);
  /* the limit is on the decoded id: %78 is one byte */
  char enc[3 * DD_NATIVE__LANCE_ID_MAX_BYTES + 1];
  for (int i = 0; i < DD_NATIVE__LANCE_ID_MAX_BYTES; i++) memcpy(enc + 3 * i, "%78", 3);
  enc[3 * DD_NATIVE__LANCE_ID_MAX_BYTES] = '\0';
  assert_int_equal(dd_native__lance_id_parse(&id, enc, strlen(enc), NULL), 0);
  dd_native__lance_id_free(&id);
}

static void test_len_bound_and_equal(void **state) {
  (void)state;
  dd_native__lance_id id = DD_NATIVE__LANCE_ID_INIT;
  /* only len bytes are read */
  assert_int_equal(dd_native__lance_id_parse(&id, "a$b/list", 3, NULL), 0);
  char *want[] = {"a", "b"};
  assert_true(dd_native__lance_id_equal(&id, want, 2));
  char *other[] = {"a", "c"};
  assert_false(dd_native__lance_id_equal(&id, other, 2));
  assert_false(dd_native__lance_id_equal(&id, want, 1));
  dd_native__lance_id_free(&id);
  dd_native__lance_id_free(&id); /* twice is fine */
  dd_native__lance_id_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_root),
      cmocka_unit_test(test_invalid),
      cmocka_unit_test(test_len_bound_and_equal),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
