/* test_err.c: the per-thread error message model of common/err.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "common/err.h"

static void test_set_returns_code(void **state) {
  (void)state;
  assert_int_equal(dd_err_set(DD_ENOTFOUND, "catalog '%s' not found", "x"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'x' not found");
}

static void test_wrap_prefixes(void **state) {
  (void)state;
  dd_err_set(DD_EIO, "disk full");
  assert_int_equal(dd_err_wrap(DD_EIO, "writing %d.json", 3), DD_EIO);
  assert_string_equal(dd_err_msg(), "writing 3.json: disk full");
  assert_string_equal(dd_err_name(DD_EIO), "UNAVAILABLE");
  dd_err_clear();
  assert_string_equal(dd_err_msg(), "");
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_set_returns_code),
      cmocka_unit_test(test_wrap_prefixes),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
