/* test_depth.c: predicate hints are untrusted recipient input; both parsers (JSON
 * predicateHints, SQL-like hints) refuse nesting past 64 levels before descending, and do so
 * at 10x the bound, where a recursive parser without the check would go 640 frames deep.
 * The stats lookup skips containers to the same bound. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"
#include "tests/unit/nested_text.h"

enum { BOUND = 64 };

#define LEAF "{\"op\":\"isNull\",\"children\":[{\"op\":\"column\",\"name\":\"a\",\"valueType\":\"int\"}]}"

static void test_json_hints(void **st) {
  (void)st;
  shq_pred *p = NULL;
  char *ok = tu_nested("{\"op\":\"not\",\"children\":[", LEAF, "]}", BOUND - 2);
  assert_int_equal(shq__pred_parse_json(&p, ok, strlen(ok)), 0);
  shq__pred_free(p);
  free(ok);
  p = NULL;
  char *deep = tu_nested("{\"op\":\"not\",\"children\":[", LEAF, "]}", 10 * BOUND);
  assert_int_equal(shq__pred_parse_json(&p, deep, strlen(deep)), DD_EINVAL);
  assert_null(p);
  assert_non_null(strstr(dd_err_msg(), "too deep"));
  free(deep);
}

static void test_sql_hints(void **st) {
  (void)st;
  static const char schema_json[] =
      "{\"type\":\"struct\",\"fields\":[{\"name\":\"a\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}}]}";
  dl_schema *schema = NULL;
  assert_int_equal(dl_schema_parse(&schema, schema_json, strlen(schema_json)), 0);
  shq_pred *p = NULL;
  const char *forms[][2] = {{"(", ")"}, {"not ", ""}, {"not (", ")"}};
  for (size_t i = 0; i < sizeof forms / sizeof forms[0]; i++) {
    char *deep = tu_nested(forms[i][0], "a = 1", forms[i][1], 10 * BOUND);
    assert_int_equal(shq__pred_parse_sql(&p, deep, schema), DD_EINVAL);
    assert_null(p);
    assert_non_null(strstr(dd_err_msg(), "too deeply nested"));
    free(deep);
  }
  char *ok = tu_nested("(", "a = 1", ")", BOUND / 2);
  assert_int_equal(shq__pred_parse_sql(&p, ok, schema), 0);
  shq__pred_free(p);
  free(ok);
  dl_schema_free(schema);
}

static void test_stats_lookup(void **st) {
  (void)st;
  shq_col_stats cs;
  char *inner = tu_nested("[", "1", "]", 10 * BOUND), *stats = NULL;
  assert_true(asprintf(&stats, "{\"numRecords\":1,\"x\":%s,\"minValues\":{\"a\":1}}", inner) > 0);
  assert_false(shq__stats_lookup(stats, "a", &cs));
  free(stats);
  char *path = tu_nested("{\"a\":", "1", "}", 10 * BOUND);
  assert_true(asprintf(&stats, "{\"minValues\":%s}", path) > 0);
  assert_false(shq__stats_lookup(stats, "a.a.a", &cs));
  free(stats);
  free(path);
  free(inner);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_json_hints),
      cmocka_unit_test(test_sql_hints),
      cmocka_unit_test(test_stats_lookup),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
