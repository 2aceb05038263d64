/* test_expr_parse.c: the SQL expression parser of store/expr: precedence, predicates,
 * literals with Spark's typing, escapes, backquotes, aliases, prefixes, column names as
 * Spark generates them, type names, and the depth bound (10x the bound: an error, no
 * crash). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/expr/ex.h"

/* Parses text and returns ex_name of the tree (or "ERR <msg>"). */
static char *name_of(const char *text) {
  ex_node *e = NULL;
  char *n = NULL;
  if (ex_parse(&e, text, strlen(text), NULL) || ex_name(&n, e)) {
    char buf[600];
    snprintf(buf, sizeof buf, "ERR %s", dd_err_msg());
    n = strdup(buf);
  }
  ex_free(e);
  return n;
}

static void expect_name(const char *text, const char *want) {
  char *got = name_of(text);
  if (strcmp(got, want)) fprintf(stderr, "%s: got [%s] want [%s]\n", text, got, want);
  assert_string_equal(got, want);
  free(got);
}

static void test_precedence(void **state) {
  (void)state;
  expect_name("2 * 3 + 4 * 5", "((2 * 3) + (4 * 5))");
  expect_name("1 < 2 AND 2 < 3 OR false", "(((1 < 2) AND (2 < 3)) OR false)");
  expect_name("NOT 1 = 2", "(NOT (1 = 2))");
  expect_name("1 + 2 IS NULL", "((1 + 2) IS NULL)");
  expect_name("1 = 1 = true", "((1 = 1) = true)");
  expect_name("- - 1", "(- -1)");
  expect_name("a - b - c", "((a - b) - c)");
  expect_name("a != b", "(NOT (a = b))");
  expect_name("a <> b", "(NOT (a = b))");
  expect_name("a == b", "(a = b)");
  expect_name("a <=> NULL", "(a <=> NULL)");
  expect_name("x IS NOT NULL", "(x IS NOT NULL)");
  expect_name("x NOT IN (1, 2)", "(NOT (x IN (1, 2)))");
  expect_name("x IN (1, '2', 3L)", "(x IN (1, 2, 3))");
  expect_name("x BETWEEN 1 AND 3 AND y", "(between(x, 1, 3) AND y)");
  expect_name("s LIKE 'a%'", "s LIKE a%");
  expect_name("s NOT LIKE 'a%'", "(NOT s LIKE a%)");
  expect_name("s RLIKE '^a'", "RLIKE(s, ^a)");
  expect_name("'a' || 'b'", "concat(a, b)");
  expect_name("7 div 2", "(7 div 2)");
  expect_name("-x", "(- x)");
}

static void test_literals(void **state) {
  (void)state;
  expect_name("1.5", "1.5");
  expect_name("1e3", "1000.0");
  expect_name("1.5D", "1.5");
  expect_name("1.0E10", "1.0E10");
  expect_name("1E-5", "1.0E-5");
  expect_name("'It''s'", "It's");
  expect_name("'a\\tb'", "a\tb");
  expect_name("\"dq\"", "dq");
  expect_name("'a' 'b'", "ab");
  expect_name("X'0A0B'", "X'0A0B'");
  expect_name("DATE'2024-02-29'", "DATE '2024-02-29'");
  expect_name("TIMESTAMP '2024-01-01 10:00:00.5'", "TIMESTAMP '2024-01-01 10:00:00.5'");
  expect_name("CAST(1 AS TINYINT)", "CAST(1 AS TINYINT)");
  expect_name("cast(x as decimal(5, 2))", "CAST(x AS DECIMAL(5,2))");
  expect_name("x::bigint", "CAST(x AS BIGINT)");
  expect_name("CASE WHEN c THEN 1 ELSE 2.5 END", "CASE WHEN c THEN 1 ELSE 2.5 END");
  expect_name("CASE x WHEN 1 THEN 'a' END", "CASE WHEN (x = 1) THEN a END");
  expect_name("if(true, 1, 'a')", "(IF(true, 1, a))");
  expect_name("substring('hello', -3)", "substring(hello, -3, 2147483647)");
  expect_name("current_date", "current_date()");
  expect_name("count(DISTINCT a)", "count(DISTINCT a)");

  /* literal types */
  struct { const char *text; const char *type; } t[] = {
    {"1", "int"}, {"2147483648", "bigint"}, {"1L", "bigint"}, {"1S", "smallint"},
    {"1Y", "tinyint"}, {"9223372036854775808", "decimal(19,0)"}, {"1.5", "decimal(2,1)"},
    {"0.05", "decimal(2,2)"}, {"12.", "decimal(2,0)"}, {"1.23E2BD", "decimal(3,0)"},
    {"1e3", "double"}, {"1.5F", "float"}, {"-2147483648", "int"}, {"NULL", "void"},
    {"true", "boolean"}, {"'x'", "string"}, {"X'00'", "binary"}, {"DATE'2020-01-01'", "date"},
    {"TIMESTAMP_NTZ'2020-01-01 00:00:00'", "timestamp_ntz"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    ex_node *e;
    assert_int_equal(ex_parse(&e, t[i].text, strlen(t[i].text), NULL), 0);
    assert_int_equal(ex_node_kind(e), EX_LITERAL);
    char buf[40];
    ex_type_format(ex_literal(e)->type, buf, sizeof buf);
    if (strcmp(buf, t[i].type)) fprintf(stderr, "%s: %s\n", t[i].text, buf);
    assert_string_equal(buf, t[i].type);
    ex_free(e);
  }
}

static void test_names_and_columns(void **state) {
  (void)state;
  ex_node *e;
  size_t n;
  const char *text = "`a.b`.c.`x``y`";
  assert_int_equal(ex_parse(&e, text, strlen(text), NULL), 0);
  const char *const *parts = ex_column_parts(e, &n);
  assert_int_equal(n, 3);
  assert_string_equal(parts[0], "a.b");
  assert_string_equal(parts[1], "c");
  assert_string_equal(parts[2], "x`y");
  ex_free(e);
  assert_int_equal(ex_new_column_text(&e, "`a.b`.c", 7), 0);
  parts = ex_column_parts(e, &n);
  assert_int_equal(n, 2);
  assert_string_equal(parts[0], "a.b");
  ex_free(e);
  assert_int_equal(ex_new_column_text(&e, "a..b", 4), DD_EINVAL);
  assert_int_equal(ex_new_column_text(&e, "`a", 2), DD_EINVAL);

  /* aliases and stars */
  expect_name("a + 1 AS b", "b");
  expect_name("a + 1 b", "b");
  expect_name("a + 1 AS `odd name`", "odd name");
  expect_name("s.x", "x");
  assert_int_equal(ex_parse(&e, "t.*", 3, NULL), 0);
  assert_int_equal(ex_node_kind(e), EX_STAR);
  assert_string_equal(ex_star_target(e), "t");
  ex_free(e);

  /* prefix parsing stops at what cannot continue the expression */
  const char *sql = "a + 1 AS x, b FROM t";
  size_t used;
  assert_int_equal(ex_parse_prefix(&e, sql, strlen(sql), &used, NULL), 0);
  assert_int_equal(used, strlen("a + 1 AS x"));
  ex_free(e);
  sql = "b FROM t";
  assert_int_equal(ex_parse_prefix(&e, sql, strlen(sql), &used, NULL), 0);
  assert_int_equal(used, 2);
  ex_free(e);
}

static void test_errors(void **state) {
  (void)state;
  const char *bad[] = {"", "1 +", "(1", "a b c", "CAST(1 AS nosuchtype)", "'open", "1 IN ()",
                       "CASE END", "DATE'2020-13-01'", "1.5X", "@", "a.", "x IS 3"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ex_node *e = NULL;
    int rc = ex_parse(&e, bad[i], strlen(bad[i]), NULL);
    if (rc == 0) fprintf(stderr, "parsed: %s\n", bad[i]);
    assert_int_not_equal(rc, 0);
    assert_null(e);
  }
  ex_node *e;
  assert_int_equal(ex_parse(&e, "1 +", 3, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "PARSE_SYNTAX_ERROR"));
  assert_int_equal(ex_parse(&e, "a ) b", 5, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "')'"));
}

/* 10x the depth bound: a clear error, not a crash (ASan watches the stack). */
static void test_depth(void **state) {
  (void)state;
  size_t deep = 10 * EX_MAX_DEPTH;
  char *text = malloc(4 * deep + 8);
  size_t at = 0;
  for (size_t i = 0; i < deep; i++) text[at++] = '(';
  text[at++] = '1';
  for (size_t i = 0; i < deep; i++) text[at++] = ')';
  ex_node *e = NULL;
  assert_int_equal(ex_parse(&e, text, at, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "deeper"));
  at = 0;
  for (size_t i = 0; i < deep; i++) text[at++] = '-', text[at++] = ' ';
  text[at++] = 'x';
  assert_int_equal(ex_parse(&e, text, at, NULL), DD_EINVAL);
  at = 0;
  for (size_t i = 0; i < deep; i++) memcpy(text + at, "NOT ", 4), at += 4;
  text[at++] = 'x';
  assert_int_equal(ex_parse(&e, text, at, NULL), DD_EINVAL);
  /* a long flat chain builds a deep left tree: refused by the tree bound */
  at = 0;
  for (size_t i = 0; i < deep / 2; i++) text[at++] = '1', text[at++] = '+';
  text[at++] = '1';
  assert_int_equal(ex_parse(&e, text, at, NULL), DD_EINVAL);
  free(text);
  /* within the bound it parses */
  char ok[64] = "((((((((1))))))))";
  assert_int_equal(ex_parse(&e, ok, strlen(ok), NULL), 0);
  ex_free(e);
}

static void test_types(void **state) {
  (void)state;
  struct { const char *text; const char *want; } t[] = {
    {"INT", "int"}, {"integer", "int"}, {"bigint", "bigint"}, {"long", "bigint"},
    {"decimal", "decimal(10,0)"}, {"DECIMAL(38, 10)", "decimal(38,10)"}, {"numeric(5)", "decimal(5,0)"},
    {"varchar(10)", "string"}, {"timestamp_ltz", "timestamp"}, {"TIMESTAMP_NTZ", "timestamp_ntz"},
    {"tinyint", "tinyint"}, {"real", "float"}, {"void", "void"},
  };
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    ex_type ty;
    assert_int_equal(ex_type_parse(&ty, t[i].text, strlen(t[i].text)), 0);
    char buf[40];
    ex_type_format(ty, buf, sizeof buf);
    assert_string_equal(buf, t[i].want);
  }
  ex_type ty;
  assert_int_equal(ex_type_parse(&ty, "decimal(39,0)", 13), DD_EINVAL);
  assert_int_equal(ex_type_parse(&ty, "decimal(5,6)", 12), DD_EINVAL);
  assert_int_equal(ex_type_parse(&ty, "map<string,int>", 15), DD_EINVAL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_precedence),  cmocka_unit_test(test_literals),
    cmocka_unit_test(test_names_and_columns), cmocka_unit_test(test_errors),
    cmocka_unit_test(test_depth),       cmocka_unit_test(test_types),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
