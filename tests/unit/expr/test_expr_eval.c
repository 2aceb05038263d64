/* test_expr_eval.c: binding and evaluation in store/expr over the fixture table
 * (expr_fixture.h): result types with Spark's implicit casts, three-valued logic, <=>,
 * arithmetic overflow and division by zero under ANSI and legacy modes, casts, strings,
 * dates, nested fields, filter masks, constants and the errors naming what is wrong. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "tests/unit/expr/expr_fixture.h"

static fx F;

static int setup(void **state) {
  (void)state;
  fx_open(&F);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  fx_close(&F);
  return 0;
}

typedef struct want {
  const char *expr, *result;
} want;

static void check(const want *w, size_t n, const ex_bind_opts *o) {
  int bad = 0;
  for (size_t i = 0; i < n; i++) {
    char *got = fx_eval_opts(&F, w[i].expr, o);
    bool ok = w[i].result[0] == '~' ? strstr(got, w[i].result + 1) != NULL : !strcmp(got, w[i].result);
    if (!ok) {
      fprintf(stderr, "%s\n   got  %s\n   want %s\n", w[i].expr, got, w[i].result);
      bad++;
    }
    free(got);
  }
  assert_int_equal(bad, 0);
}

static void test_types_and_arith(void **state) {
  (void)state;
  static const want w[] = {
    {"i + 1", "int:2|3|NULL|-4"},
    {"i + 1L", "bigint:2|3|NULL|-4"},
    {"i / 2", "double:0.5|1|NULL|-2.5"},
    {"i div 2", "bigint:0|1|NULL|-2"},
    {"i % 2", "int:1|0|NULL|-1"},
    {"-i", "int:-1|-2|NULL|5"},
    {"abs(i)", "int:1|2|NULL|5"},
    {"dec + 1", "decimal(11,2):225|10000000099|NULL|-210"},
    {"dec / 3", "decimal(14,6):416667|33333333330000|NULL|-1033333"},
    {"dec % 1", "decimal(3,2):25|99|NULL|-10"},
    {"1.5 + 2", "decimal(3,1):35|35|35|35"},
    {"1.5 * 2.25", "decimal(6,3):3375|3375|3375|3375"},
    {"1.5 / 3", "decimal(7,6):500000|500000|500000|500000"},
    {"CAST(5 AS DECIMAL(38,10)) / CAST(3 AS DECIMAL(38,10))", "~decimal(38,6):1666667|"},
    {"1L + 1.5", "decimal(3,1):25|25|25|25"},
    {"d * 2", "~double:3|"},
    {"CAST(1 AS FLOAT) + 1", "double:2|2|2|2"},
    {"CAST(1 AS TINYINT) + CAST(1 AS TINYINT)", "tinyint:2|2|2|2"},
    {"CAST(0.1 AS FLOAT) + CAST(0.2 AS FLOAT)", "float:0.300000012|0.300000012|0.300000012|0.300000012"},
    {"'1' + i", "bigint:2|3|NULL|-4"},
    {"'1.5' + 1.5", "double:3|3|3|3"},
    {"-'1'", "double:-1|-1|-1|-1"},
    {"NULL + 1", "int:NULL|NULL|NULL|NULL"},
    {"dt + 1", "date:19782|1|NULL|10957"},
    {"coalesce(1, '2')", "bigint:1|1|1|1"},
    {"coalesce(1.5, 2)", "decimal(11,1):15|15|15|15"},
    {"CASE WHEN true THEN 1 ELSE 2.5 END", "decimal(11,1):10|10|10|10"},
  };
  check(w, sizeof w / sizeof w[0], NULL);
}

/* Values checked against Spark 4.2 (integration.expr_spark_judge has the same cases). */
static void test_round_pmod_try_cast(void **state) {
  (void)state;
  static const want w[] = {
    {"round(2.675, 2)", "decimal(4,2):268|268|268|268"},
    {"round(CAST(2.675 AS DOUBLE), 2)", "~double:2.68"},
    {"bround(CAST(2.5 AS DOUBLE))", "double:2|2|2|2"},
    {"round(CAST(-2.5 AS DOUBLE))", "double:-3|-3|-3|-3"},
    {"round(CAST(0.35 AS FLOAT), 1)", "float:0.300000012|0.300000012|0.300000012|0.300000012"},
    {"round(CAST(-0.1 AS DOUBLE))", "double:0|0|0|0"},
    {"round(i, -1)", "int:0|0|NULL|-10"},
    {"bround(CAST(25 AS INT), -1)", "int:20|20|20|20"},
    {"round(dec, 1)", "decimal(10,1):13|1000000000|NULL|-31"},
    {"round(dec, -1)", "decimal(9,0):0|100000000|NULL|0"},
    {"round(i, NULL)", "int:NULL|NULL|NULL|NULL"},
    {"round('2.5')", "double:3|3|3|3"},
    {"round(CAST(127 AS TINYINT), -1)", "~[ARITHMETIC_OVERFLOW]"},
    {"round(d, i)", "~[DATATYPE_MISMATCH.NON_FOLDABLE_INPUT]"},
    {"pmod(i, 3)", "int:1|2|NULL|1"},
    {"pmod(-7, -3)", "int:-1|-1|-1|-1"},
    {"pmod(7, -3)", "int:1|1|1|1"},
    {"pmod(CAST(-7.5 AS DOUBLE), 2)", "double:0.5|0.5|0.5|0.5"},
    {"pmod(dec, 3)", "decimal(3,2):125|99|NULL|290"},
    {"pmod(i, 0)", "~[REMAINDER_BY_ZERO]"},
    {"try_cast('x' AS INT)", "int:NULL|NULL|NULL|NULL"},
    {"try_cast(2147483648L AS INT)", "int:NULL|NULL|NULL|NULL"},
    {"TRY_CAST(dec AS DECIMAL(2,1))", "decimal(2,1):13|NULL|NULL|-31"},
  };
  check(w, sizeof w / sizeof w[0], NULL);
}

static void test_null_logic(void **state) {
  (void)state;
  static const want w[] = {
    {"NULL AND false", "boolean:false|false|false|false"},
    {"NULL AND true", "boolean:NULL|NULL|NULL|NULL"},
    {"NULL OR true", "boolean:true|true|true|true"},
    {"NULL OR false", "boolean:NULL|NULL|NULL|NULL"},
    {"b AND i > 1", "boolean:false|false|NULL|false"},
    {"b OR i > 1", "boolean:true|true|NULL|true"},
    {"NOT b", "boolean:false|true|NULL|false"},
    {"NULL = NULL", "boolean:NULL|NULL|NULL|NULL"},
    {"NULL <=> NULL", "boolean:true|true|true|true"},
    {"i <=> NULL", "boolean:false|false|true|false"},
    {"i <=> 2", "boolean:false|true|false|false"},
    {"i = 2", "boolean:false|true|NULL|false"},
    {"i IN (1, NULL)", "boolean:true|NULL|NULL|NULL"},
    {"i NOT IN (1, NULL)", "boolean:false|NULL|NULL|NULL"},
    {"i IN (1, 3)", "boolean:true|false|NULL|false"},
    {"i BETWEEN 0 AND 1", "boolean:true|false|NULL|false"},
    {"i BETWEEN NULL AND 0", "boolean:false|false|NULL|NULL"},
    {"i IS NULL", "boolean:false|false|true|false"},
    {"s IS NOT NULL", "boolean:true|true|false|true"},
    {"coalesce(i, l, 0)", "bigint:1|2|0|-5"},
    {"if(b, 1, 2)", "int:1|2|2|1"},
    {"CASE WHEN i > 1 THEN 'big' WHEN i < 0 THEN 'neg' END", "string:NULL|big|NULL|neg"},
    {"CASE i WHEN 1 THEN 'one' ELSE 'other' END", "string:one|other|other|other"},
    {"nvl(s, 'none')", "string:abc|Hello|none|a_c"},
    {"d = d", "boolean:true|true|NULL|true"},
    {"d > 1e300", "boolean:false|true|NULL|false"},
    {"st.x", "int:1|NULL|NULL|4"},
    {"st.y", "string:p|NULL|r|NULL"},
    {"ST.X + 1", "int:2|NULL|NULL|5"},
    {"st IS NULL", "boolean:false|true|false|false"},
  };
  check(w, sizeof w / sizeof w[0], NULL);
}

static void test_strings_dates_casts(void **state) {
  (void)state;
  static const want w[] = {
    {"upper(s)", "string:ABC|HELLO|NULL|A_C"},
    {"lower(s)", "string:abc|hello|NULL|a_c"},
    {"s LIKE 'a%'", "boolean:true|false|NULL|true"},
    {"s LIKE 'a\\\\_c'", "boolean:false|false|NULL|true"},
    {"s LIKE '_b_'", "boolean:true|false|NULL|false"},
    {"s ILIKE 'h%'", "boolean:false|true|NULL|false"},
    {"s RLIKE '^H.l+o$'", "boolean:false|true|NULL|false"},
    {"substring(s, 2)", "string:bc|ello|NULL|_c"},
    {"substring(s, -2, 1)", "string:b|l|NULL|_"},
    {"substring(s, 0, 2)", "string:ab|He|NULL|a_"},
    {"substring('héllo', 2, 2)", "string:él|él|él|él"},
    {"length('héllo')", "int:5|5|5|5"},
    {"length(s)", "int:3|5|NULL|3"},
    {"concat(s, '-', i)", "string:abc-1|Hello-2|NULL|a_c--5"},
    {"s || '!'", "string:abc!|Hello!|NULL|a_c!"},
    {"trim('  a  ')", "string:a|a|a|a"},
    {"contains(s, 'l')", "boolean:false|true|NULL|false"},
    {"startswith(s, 'a')", "boolean:true|false|NULL|true"},
    {"endswith(s, 'c')", "boolean:true|false|NULL|true"},
    {"contains(s, '')", "boolean:true|true|NULL|true"},
    {"isnan(d)", "boolean:false|true|false|false"},
    {"ltrim('  a  ')", "string:a  |a  |a  |a  "},
    {"rtrim('  a  ')", "string:  a|  a|  a|  a"},
    {"year(dt)", "int:2024|1970|NULL|1999"},
    {"month(dt)", "int:2|1|NULL|12"},
    {"day(dt)", "int:28|1|NULL|31"},
    {"year(ts)", "int:2024|1970|NULL|2000"},
    {"date_add(dt, 2)", "date:19783|2|NULL|10958"},
    {"date_sub(dt, 1)", "date:19780|-1|NULL|10955"},
    {"datediff(dt, DATE'1970-01-01')", "int:19781|0|NULL|10956"},
    {"CAST(i AS STRING)", "string:1|2|NULL|-5"},
    {"CAST(d AS STRING)", "string:1.5|NaN|NULL|-0.25"},
    {"CAST(dec AS STRING)", "string:1.25|99999999.99|NULL|-3.10"},
    {"CAST(dt AS STRING)", "string:2024-02-28|1970-01-01|NULL|1999-12-31"},
    {"CAST(ts AS STRING)", "string:2024-01-01 10:00:00|1970-01-01 00:00:00.5|NULL|2000-01-01 00:00:00"},
    {"CAST(ts AS DATE)", "date:19723|0|NULL|10957"},
    {"CAST(ts AS BIGINT)", "bigint:1704103200|0|NULL|946684800"},
    {"CAST(b AS INT)", "int:1|0|NULL|1"},
    {"CAST(dec AS INT)", "int:1|99999999|NULL|-3"},
    {"CAST(1.005 AS DECIMAL(5,2))", "decimal(5,2):101|101|101|101"},
    {"CAST(-2.5D AS INT)", "int:-2|-2|-2|-2"},
    {"CAST(2.5 AS DECIMAL(5,0))", "decimal(5,0):3|3|3|3"},
    {"CAST('1.005' AS DECIMAL(5,2))", "decimal(5,2):101|101|101|101"},
    {"CAST(' 12 ' AS INT)", "int:12|12|12|12"},
    {"CAST('2024-1-1' AS DATE)", "date:19723|19723|19723|19723"},
    {"CAST('2024-01-01T10:00:00Z' AS TIMESTAMP)", "~timestamp:1704103200000000|"},
    {"CAST('2024-01-01 12:00:00+02:00' AS TIMESTAMP)", "~timestamp:1704103200000000|"},
    {"CAST('yes' AS BOOLEAN)", "boolean:true|true|true|true"},
    {"CAST('inf' AS DOUBLE)", "double:inf|inf|inf|inf"},
    {"CAST(1e-5 AS STRING)", "string:1.0E-5|1.0E-5|1.0E-5|1.0E-5"},
    {"CAST(1.0E7 AS STRING)", "string:1.0E7|1.0E7|1.0E7|1.0E7"},
    {"CAST(0.1 + 0.2D AS STRING)", "string:0.30000000000000004|0.30000000000000004|0.30000000000000004|0.30000000000000004"},
    {"CAST(X'414243' AS STRING)", "string:ABC|ABC|ABC|ABC"},
    {"ts > '2020-01-01'", "boolean:true|false|NULL|false"},
    {"dt = '2024-02-28'", "boolean:true|false|NULL|false"},
    {"i = '1'", "boolean:true|false|NULL|false"},
  };
  check(w, sizeof w / sizeof w[0], NULL);
}

static void test_errors(void **state) {
  (void)state;
  static const want w[] = {
    {"x + 1", "~[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column, variable, or function parameter with name `x` cannot be resolved"},
    {"st.z", "~[FIELD_NOT_FOUND]"},
    {"i.z", "~[INVALID_EXTRACT_BASE_FIELD_TYPE]"},
    {"nosuchfn(i)", "~ERR UNIMPLEMENTED: [UNRESOLVED_ROUTINE]"},
    {"upper(s, s)", "~[WRONG_NUM_ARGS"},
    {"l + 1", "~ERR OUT_OF_RANGE: [ARITHMETIC_OVERFLOW]"},
    {"1 / 0", "~ERR OUT_OF_RANGE: [DIVIDE_BY_ZERO]"},
    {"i / 0", "~ERR OUT_OF_RANGE: [DIVIDE_BY_ZERO]"},
    {"1.5 % 0", "~[REMAINDER_BY_ZERO]"},
    {"CAST(s AS INT)", "~ERR INVALID_ARGUMENT: [CAST_INVALID_INPUT] The value 'abc' of the type \"STRING\" cannot be cast to \"INT\""},
    {"CAST(300 AS TINYINT)", "~[CAST_OVERFLOW] The value 300 of the type \"INT\" cannot be cast to \"TINYINT\""},
    {"CAST(1e20 AS BIGINT)", "~[CAST_OVERFLOW] The value 1.0E20D of the type \"DOUBLE\""},
    {"CAST(12345.6 AS DECIMAL(5,2))", "~[NUMERIC_VALUE_OUT_OF_RANGE.WITH_SUGGESTION] 12345.6BD cannot be represented as Decimal(5, 2)"},
    {"CAST(dt AS INT)", "~cannot cast \"date\" to \"int\""},
    {"'1' + '2'", "~DATATYPE_MISMATCH"},
    {"NOT i", "~DATATYPE_MISMATCH"},
    {"s RLIKE '('", "~PATTERN"},
    /* refused before glibc's regcomp, which took over 2 GiB on 60 stacked '+' (fuzz.expr_parse) */
    {"s RLIKE 'ig++++++++++++++++++++++++++++++++++++++++++++++++++++++++++++'", "~PATTERN"},
    {"s RLIKE '(a{1001})'", "~PATTERN"},
    {"*", "~INVALID_USAGE_OF_STAR"},
  };
  check(w, sizeof w / sizeof w[0], NULL);
}

static void test_legacy_mode(void **state) {
  (void)state;
  ex_bind_opts o = EX_BIND_OPTS_INIT;
  o.ansi = false;
  static const want w[] = {
    {"l + 1", "bigint:11|-9223372036854775808|NULL|0"},
    {"i / 0", "double:NULL|NULL|NULL|NULL"},
    {"i % 0", "int:NULL|NULL|NULL|NULL"},
    {"CAST(s AS INT)", "int:NULL|NULL|NULL|NULL"},
    {"CAST(300 AS TINYINT)", "tinyint:44|44|44|44"},
    {"CAST('1.9' AS INT)", "int:1|1|1|1"},
    {"CAST(12345.6 AS DECIMAL(5,2))", "decimal(5,2):NULL|NULL|NULL|NULL"},
    {"'1' + i", "double:2|3|NULL|-4"},
    /* BigDecimal(127).setScale(-1).toByte: 130's low byte */
    {"round(CAST(127 AS TINYINT), -1)", "tinyint:-126|-126|-126|-126"},
    {"pmod(i, 0)", "int:NULL|NULL|NULL|NULL"},
    {"try_cast('x' AS INT)", "int:NULL|NULL|NULL|NULL"},
  };
  check(w, sizeof w / sizeof w[0], &o);
}

static void test_mask_const_names(void **state) {
  (void)state;
  ex_node *e, *b;
  const char *text = "i > 0 OR s LIKE 'a%'";
  assert_int_equal(ex_parse(&e, text, strlen(text), NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  uint8_t mask[4];
  size_t n;
  assert_int_equal(ex_eval_mask(b, F.b, mask, &n), 0);
  assert_int_equal(n, 3);
  assert_int_equal(mask[0], 1), assert_int_equal(mask[1], 1), assert_int_equal(mask[2], 0), assert_int_equal(mask[3], 1);
  ex_free(b);
  ex_free(e);
  /* a non-boolean filter is refused */
  assert_int_equal(ex_parse(&e, "i + 1", 5, NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  assert_int_equal(ex_eval_mask(b, F.b, mask, &n), DD_EINVAL);
  ex_free(b);
  ex_free(e);
  /* constants */
  text = "upper(concat('a', 'b')) || CAST(1 + 2 AS STRING)";
  assert_int_equal(ex_parse(&e, text, strlen(text), NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  assert_false(ex_uses_columns(b));
  ex_value v;
  char *st;
  assert_int_equal(ex_eval_const(&v, &st, b), 0);
  assert_int_equal(v.type.id, EX_T_STRING);
  assert_int_equal(v.len, 3);
  assert_memory_equal(v.str, "AB3", 3);
  free(st);
  char *name;
  assert_int_equal(ex_name(&name, e), 0);
  assert_string_equal(name, "concat(upper(concat(a, b)), CAST((1 + 2) AS STRING))");
  free(name);
  ex_free(b);
  ex_free(e);
  /* implicit casts of literals are folded at bind time (not cast again for every row) */
  assert_int_equal(ex_parse(&e, "d < 3000.5", 10, NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  assert_int_equal(ex_node_kind(ex_arg(b, 1)), EX_LITERAL);
  assert_int_equal(ex_literal(ex_arg(b, 1))->type.id, EX_T_DOUBLE);
  assert_true(ex_literal(ex_arg(b, 1))->f == 3000.5);
  ex_free(b);
  ex_free(e);
  /* a literal that does not cast stays a cast: the error comes at evaluation, naming it */
  assert_int_equal(ex_parse(&e, "i = 'abc'", 9, NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  assert_int_equal(ex_node_kind(ex_arg(b, 1)), EX_CAST);
  ex_free(b);
  ex_free(e);
  /* case-sensitive resolution */
  ex_bind_opts o = EX_BIND_OPTS_INIT;
  o.case_sensitive = true;
  assert_int_equal(ex_parse(&e, "I", 1, NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, &o), DD_EINVAL);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  assert_int_equal(ex_column_field(b), 0);
  ex_free(b);
  ex_free(e);
  /* a qualifier that names no column is skipped (t.i) */
  assert_int_equal(ex_parse(&e, "t.i + 0", 7, NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  ex_free(b);
  ex_free(e);
  /* a nested result column copies the struct */
  assert_int_equal(ex_parse(&e, "st", 2, NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  arw_schema *os;
  arw_batch *ob;
  int id;
  assert_int_equal(arw_schema_new(&os), 0);
  assert_int_equal(ex_add_field(os, ARW_ROOT, "st", b, &id), 0);
  assert_int_equal(arw_batch_new(&ob, os), 0);
  assert_int_equal(ex_eval(b, F.b, ob, id), 0);
  assert_int_equal(arw_batch_rows(ob), 4);
  char *txt = fx_column_text(ob, arw_field_child(os, id, 1), (ex_type){.id = EX_T_STRING});
  assert_string_equal(txt, "string:p|NULL|r|NULL");
  free(txt);
  arw_batch_free(ob);
  arw_schema_free(os);
  ex_free(b);
  ex_free(e);
  /* session time zone: a fixed offset */
  o = (ex_bind_opts)EX_BIND_OPTS_INIT;
  o.time_zone = "+02:00";
  static const want tz[] = {{"CAST(ts AS STRING)", "string:2024-01-01 12:00:00|1970-01-01 02:00:00.5|NULL|2000-01-01 02:00:00"}};
  check(tz, 1, &o);
  o.time_zone = "America/Los_Angeles";
  static const want tz2[] = {{"ts", "~ERR UNIMPLEMENTED: session time zone"}};
  check(tz2, 1, &o);
}

/* A struct column of out from expression text (or e itself when text is NULL). */
static arw_batch *struct_result(arw_schema **os, int *id, const char *text, ex_node *e) {
  ex_node *b = NULL;
  if (text) assert_int_equal(ex_parse(&e, text, strlen(text), NULL), 0);
  assert_int_equal(ex_bind(&b, e, F.s, NULL), 0);
  assert_int_equal(ex_result_type(b).id, EX_T_STRUCT);
  arw_batch *ob;
  assert_int_equal(arw_schema_new(os), 0);
  assert_int_equal(ex_add_field(*os, ARW_ROOT, "r", b, id), 0);
  assert_int_equal(arw_batch_new(&ob, *os), 0);
  assert_int_equal(ex_eval(b, F.b, ob, *id), 0);
  ex_free(b);
  ex_free(e);
  return ob;
}

static char *child_text(const arw_batch *ob, int id, int k, ex_type_id t) {
  return fx_column_text(ob, arw_field_child(arw_batch_schema(ob), id, k), (ex_type){.id = t});
}

/* A two-field struct result: valid in rows 0 and 2, NULL in row 1, its children's text
 * c0 and c1; frees ob and os. */
static void check_pair(arw_batch *ob, arw_schema *os, int id, ex_type_id t0, const char *c0,
                       ex_type_id t1, const char *c1) {
  arw_view v;
  assert_int_equal(arw_batch_view(ob, id, &v), 0);
  assert_true(arw_view_valid(&v, 0) && !arw_view_valid(&v, 1) && arw_view_valid(&v, 2));
  char *t = child_text(ob, id, 0, t0);
  assert_string_equal(t, c0);
  free(t);
  t = child_text(ob, id, 1, t1);
  assert_string_equal(t, c1);
  free(t);
  arw_batch_free(ob);
  arw_schema_free(os);
}

static void test_named_struct(void **state) {
  (void)state;
  arw_schema *os;
  int id;
  /* named_struct: fields by name from any expressions, never NULL itself */
  arw_batch *ob = struct_result(&os, &id, "named_struct('k', i + 1, 'v', upper(s), 'n', st.x)", NULL);
  assert_int_equal(arw_field_nchildren(os, id), 3);
  assert_string_equal(arw_field_name(os, arw_field_child(os, id, 1)), "v");
  char *t = child_text(ob, id, 0, EX_T_INT);
  assert_string_equal(t, "int:2|3|NULL|-4");
  free(t);
  t = child_text(ob, id, 1, EX_T_STRING);
  assert_string_equal(t, "string:ABC|HELLO|NULL|A_C");
  free(t);
  arw_view v;
  assert_int_equal(arw_batch_view(ob, id, &v), 0);
  for (size_t r = 0; r < 4; r++) assert_true(arw_view_valid(&v, r));
  arw_batch_free(ob);
  arw_schema_free(os);
  /* the internal struct_of: NULL where its guard is (st's row 1), fields reordered */
  const char *parts[] = {"st", "Y"}, *xp[] = {"st", "x"}, *gp[] = {"st"};
  ex_node *args[5] = {0};
  ex_value ny = {.type = {EX_T_STRING}, .str = "Y", .len = 1}, nx = {.type = {EX_T_STRING}, .str = "x", .len = 1};
  assert_int_equal(ex_new_column(&args[0], gp, 1), 0);
  assert_int_equal(ex_new_literal(&args[1], &ny), 0);
  assert_int_equal(ex_new_column(&args[2], parts, 2), 0);
  assert_int_equal(ex_new_literal(&args[3], &nx), 0);
  ex_node *x = NULL, *call = NULL;
  assert_int_equal(ex_new_column(&x, xp, 2), 0);
  assert_int_equal(ex_new_cast(&args[4], x, (ex_type){.id = EX_T_LONG}), 0);
  assert_int_equal(ex_new_call(&call, EX_FN_STRUCT_OF, args, 5), 0);
  ob = struct_result(&os, &id, NULL, call);
  check_pair(ob, os, id, EX_T_STRING, "string:p|NULL|r|NULL", EX_T_LONG, "bigint:1|NULL|NULL|4");
  /* if/when of structs: each row from the branch it takes (into a field shaped as st) */
  ex_node *col = NULL, *cb = NULL, *w = NULL, *wb = NULL;
  assert_int_equal(ex_parse(&col, "st", 2, NULL), 0);
  assert_int_equal(ex_bind(&cb, col, F.s, NULL), 0);
  const char *ws = "if(i > 1, st, named_struct('x', i * 10, 'Y', 'z'))";
  assert_int_equal(ex_parse(&w, ws, strlen(ws), NULL), 0);
  assert_int_equal(ex_bind(&wb, w, F.s, NULL), 0);
  assert_int_equal(arw_schema_new(&os), 0);
  assert_int_equal(ex_add_field(os, ARW_ROOT, "r", cb, &id), 0);
  assert_int_equal(arw_batch_new(&ob, os), 0);
  assert_int_equal(ex_eval(wb, F.b, ob, id), 0);
  /* i: 1, 2, NULL, -5; st: {1,'p'}, NULL, {NULL,'r'}, {4,NULL} */
  check_pair(ob, os, id, EX_T_INT, "int:10|NULL|NULL|-50", EX_T_STRING, "string:z|NULL|z|z");
  ex_free(col), ex_free(cb), ex_free(w), ex_free(wb);
  static const want bad[] = {
      {"named_struct('a', 1, 'b')", "~ERR INVALID_ARGUMENT: [WRONG_NUM_ARGS]"},
      {"named_struct(s, 1)", "~ERR INVALID_ARGUMENT: [DATATYPE_MISMATCH.CREATE_NAMED_STRUCT_WITHOUT_FOLDABLE_STRING]"},
      {"isnull(named_struct('a', 1))", "~ERR UNIMPLEMENTED: named_struct as an argument"},
  };
  check(bad, sizeof bad / sizeof bad[0], NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_types_and_arith),     cmocka_unit_test(test_null_logic),
    cmocka_unit_test(test_strings_dates_casts), cmocka_unit_test(test_errors),
    cmocka_unit_test(test_legacy_mode),         cmocka_unit_test(test_mask_const_names),
    cmocka_unit_test(test_named_struct),
    cmocka_unit_test(test_round_pmod_try_cast),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
