/* test_arrow_type.c: the result type texts Delta Connect turns into Spark DataTypes and Arrow
 * schemas come from a table's schema, which is untrusted. Their parser refuses nesting past
 * 64 levels before descending (also at 10x the bound), takes the deepest accepted type, and
 * frees everything when a nested type is bad (ASan's leak check fails the test otherwise). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "server/service/connect_arrow.h"
#include "tests/unit/nested_text.h"

enum { BOUND = 64 };

/* Both consumers of the type text on a one-column, one-row result. */
static int convert(const char *type, const char *cell_json) {
  dop_col col = {"c", type, true};
  dop_cell cell = {.kind = cell_json ? DOP_JSON : DOP_NULL, .str = (char *)cell_json};
  dop_result r = {.ncols = 1, .cols = &col, .nrows = 1, .cells = &cell};
  Spark__Connect__DataType *dt = NULL;
  int rc = connect_result_datatype(&dt, &r);
  if (dt) protobuf_c_message_free_unpacked(&dt->base, NULL);
  arw_buf buf = {0};
  int rc2 = connect_result_arrow(&buf, &r);
  arw_buf_free(&buf);
  assert_int_equal(rc, rc2);
  return rc;
}

static void test_depth_bound(void **st) {
  (void)st;
  char *t = tu_nested("array<", "bigint", ">", BOUND - 1);
  assert_int_equal(convert(t, "[[[1]]]"), 0);
  free(t);
  t = tu_nested("array<", "bigint", ">", BOUND);
  assert_int_not_equal(convert(t, NULL), 0);
  assert_non_null(strstr(dd_err_msg(), "nested more than 64 levels"));
  free(t);
  const char *forms[][2] = {{"array<", ">"}, {"map<string,", ">"}, {"struct<a:", ">"}};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    t = tu_nested(forms[i][0], "int", forms[i][1], 10 * BOUND);
    assert_int_not_equal(convert(t, NULL), 0);
    assert_non_null(strstr(dd_err_msg(), "nested more than 64 levels"));
    free(t);
  }
}

static void test_bad_nested_type_frees(void **st) {
  (void)st;
  const char *bad[] = {"array<nope>", "map<string,nope>", "struct<a:int,b:nope>",
                       "struct<a:array<map<string,nope>>>", "struct<a>"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) assert_int_not_equal(convert(bad[i], NULL), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_depth_bound),
      cmocka_unit_test(test_bad_nested_type_frees),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
