/* test_ddl.c: the DDL type parser's bounds and quoting: nesting is refused past
 * DOP__DDL_MAX_DEPTH before the parser descends (10x the bound and the 200,000-level text of
 * issue 10 item 13 fail cleanly instead of overflowing the stack), a type at the bound makes a
 * table store/delta can read, quoted names take `` as one backtick, and long names are refused,
 * never cut. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "dop_test_util.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"
#include "store/deltaops/dop_int.h"
#include "tests/unit/nested_text.h"

static void expect_too_deep(const char *open, const char *close, size_t levels) {
  char *ddl = tu_nested(open, "int", close, levels), *j = NULL;
  assert_int_equal(dop_ddl_type_json(&j, ddl), DD_EINVAL);
  assert_null(j);
  assert_non_null(strstr(dd_err_msg(), "nested more than 64 levels"));
  free(ddl);
}

static void test_depth_bound(void **st) {
  (void)st;
  char *j = NULL, *ddl = tu_nested("array<", "int", ">", DOP__DDL_MAX_DEPTH - 1); /* 64 levels */
  assert_int_equal(dop_ddl_type_json(&j, ddl), 0);
  free(j);
  free(ddl);
  expect_too_deep("array<", ">", DOP__DDL_MAX_DEPTH);
  expect_too_deep("array<", ">", 10 * DOP__DDL_MAX_DEPTH);
  expect_too_deep("array<", ">", 200000);
  expect_too_deep("map<int,", ">", 10 * DOP__DDL_MAX_DEPTH);
  expect_too_deep("map<", ",int>", 10 * DOP__DDL_MAX_DEPTH);
  expect_too_deep("struct<a:", ">", 10 * DOP__DDL_MAX_DEPTH);
  expect_too_deep("struct<a:", ">", 200000);
  /* unbalanced: the bound holds before the missing '>' is noticed */
  ddl = tu_nested("array<", "", "", 200000);
  assert_int_equal(dop_ddl_type_json(&j, ddl), DD_EINVAL);
  free(ddl);
  /* a column list descends through the same bound */
  json_t *f = NULL;
  char *type = tu_nested("array<", "int", ">", 10 * DOP__DDL_MAX_DEPTH), *list = NULL;
  assert_true(asprintf(&list, "a %s", type) > 0);
  assert_int_equal(dop__ddl_fields(&f, list), DD_EINVAL);
  assert_null(f);
  free(list);
  free(type);
}

/* The deepest accepted column type makes a table store/delta opens (the two bounds agree). */
static void test_depth_at_bound_is_readable(void **st) {
  (void)st;
  char *base = tu_tmpdir(), *loc = NULL, *type = tu_nested("array<", "int", ">", DOP__DDL_MAX_DEPTH - 1);
  assert_true(asprintf(&loc, "%s/t", base) > 0);
  dop_column col = {.name = "deep", .type = type, .nullable = true};
  dop_create_opts o = {.mode = DOP_CREATE, .location = loc, .num_columns = 1, .columns = &col};
  dop_result *r = NULL;
  assert_int_equal(dop_create(&r, &o), 0);
  dop_result_free(r);
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  assert_int_equal(dl_table_open(&t, loc), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  dl_snapshot_free(s);
  dl_table_free(t);
  tu_rmrf(base);
  free(base);
  free(loc);
  free(type);
}

static void test_quoted_names(void **st) {
  (void)st;
  char *j = NULL;
  assert_int_equal(dop_ddl_type_json(&j, "struct<`a``b`:int,`c d`:string,``````:bigint>"), 0);
  json_t *t = json_loads(j, 0, NULL);
  assert_non_null(t);
  json_t *fields = json_object_get(t, "fields");
  assert_int_equal(json_array_size(fields), 3);
  assert_string_equal(json_string_value(json_object_get(json_array_get(fields, 0), "name")), "a`b");
  assert_string_equal(json_string_value(json_object_get(json_array_get(fields, 1), "name")), "c d");
  assert_string_equal(json_string_value(json_object_get(json_array_get(fields, 2), "name")), "``");
  json_decref(t);
  free(j);
  assert_int_equal(dop_ddl_type_json(&j, "struct<`a:int>"), DD_EINVAL);
  assert_int_equal(dop_ddl_type_json(&j, "struct<`a``:int>"), DD_EINVAL);
  json_t *f = NULL;
  assert_int_equal(dop__ddl_fields(&f, "`x``y` INT NOT NULL, `p` STRING"), 0);
  assert_string_equal(json_string_value(json_object_get(json_array_get(f, 0), "name")), "x`y");
  json_decref(f);
}

static void test_long_names_refused(void **st) {
  (void)st;
  char name[DOP__DDL_MAX_NAME + 2], *ddl = NULL, *j = NULL;
  memset(name, 'n', sizeof name - 1);
  name[sizeof name - 1] = '\0'; /* 256 bytes */
  assert_true(asprintf(&ddl, "struct<%s:int>", name) > 0);
  assert_int_equal(dop_ddl_type_json(&j, ddl), DD_EINVAL);
  free(ddl);
  name[DOP__DDL_MAX_NAME] = '\0'; /* 255 bytes: kept whole */
  assert_true(asprintf(&ddl, "struct<`%s`:int>", name) > 0);
  assert_int_equal(dop_ddl_type_json(&j, ddl), 0);
  assert_non_null(strstr(j, name));
  free(j);
  free(ddl);
}

/* Invalid UTF-8 is refused as bad input (it was "out of memory"), a comment in it is not
 * dropped silently, and a COMMENT keyword at the end of the text reads nothing past it. */
static void test_utf8_and_comments(void **st) {
  (void)st;
  char *j = NULL;
  assert_int_equal(dop_ddl_type_json(&j, "struct<`a\xff`:int>"), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "not valid UTF-8"));
  json_t *f = NULL;
  assert_int_equal(dop__ddl_fields(&f, "a INT COMMENT 'caf\xe9'"), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "not valid UTF-8"));
  assert_null(f);
  assert_int_equal(dop__ddl_fields(&f, "a INT COMMENT"), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "expected a quoted comment"));
  assert_int_equal(dop__ddl_fields(&f, "a INT COMMENT 'caf\xc3\xa9'"), 0);
  assert_string_equal(json_string_value(json_object_get(json_object_get(json_array_get(f, 0), "metadata"), "comment")),
                      "caf\xc3\xa9");
  json_decref(f);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_depth_bound),
      cmocka_unit_test(test_depth_at_bound_is_readable),
      cmocka_unit_test(test_quoted_names),
      cmocka_unit_test(test_long_names_refused),
      cmocka_unit_test(test_utf8_and_comments),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
