/* test_depth.c: the schema JSON of a table's metaData is untrusted; its nesting is refused
 * past 64 levels before the parser descends, at 10x the bound too, for arrays, maps and
 * structs, while the deepest accepted schema parses. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "store/delta/dl.h"

enum { BOUND = 64 };

/* {"type":"struct","fields":[{"name":"c","type":<open^levels "integer" close^levels>}]} */
static char *schema(const char *open, const char *close, int levels) {
  size_t lo = strlen(open), lc = strlen(close), n = 128 + (size_t)levels * (lo + lc);
  char *s = malloc(n), *p = s;
  assert_non_null(s);
  p += sprintf(p, "{\"type\":\"struct\",\"fields\":[{\"name\":\"c\",\"type\":");
  for (int i = 0; i < levels; i++) memcpy(p, open, lo), p += lo;
  p += sprintf(p, "\"integer\"");
  for (int i = 0; i < levels; i++) memcpy(p, close, lc), p += lc;
  sprintf(p, "}]}");
  return s;
}

static int parse(const char *open, const char *close, int levels) {
  char *text = schema(open, close, levels);
  dl_schema *s = NULL;
  int rc = dl_schema_parse(&s, text, strlen(text));
  if (!rc) assert_non_null(s);
  else assert_null(s);
  dl_schema_free(s);
  free(text);
  return rc;
}

#define ARR "{\"type\":\"array\",\"containsNull\":true,\"elementType\":"
#define MAPV "{\"type\":\"map\",\"keyType\":\"string\",\"valueContainsNull\":true,\"valueType\":"
#define STRUCT "{\"type\":\"struct\",\"fields\":[{\"name\":\"x\",\"type\":"

static void test_bound(void **st) {
  (void)st;
  /* the column's type is level 1: 63 wrappers reach level 64 */
  assert_int_equal(parse(ARR, "}", BOUND - 1), 0);
  assert_int_equal(parse(ARR, "}", BOUND), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "nested too deeply"));
  assert_int_equal(parse(ARR, "}", 10 * BOUND), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "nested too deeply"));
  assert_int_equal(parse(MAPV, "}", 10 * BOUND), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "nested too deeply"));
  assert_int_equal(parse(STRUCT, "}]}", 10 * BOUND), DD_ECORRUPT);
  assert_non_null(strstr(dd_err_msg(), "nested too deeply"));
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_bound)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
