/* test_ops.c: store/query operators over a local relation built here (ids, a nullable
 * string, a double, a date, a timestamp, a decimal, a list): sort with Spark's null
 * ordering and stability, limit/offset, aggregates with Spark's names and types (and
 * ANSI overflow), deduplicate, rename, show() text as Spark prints every kind, printSchema. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "store/query/qry.h"

enum { ROWS = 5 };

/* id: 3 1 2 1 NULL-string row ...; a fixed table of five rows */
static qry_op *table(void) {
  arw_schema *s = NULL;
  int id, name, x, d, ts, dec, tags, tag;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "id", ARW_INT64, false, &id), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "name", ARW_UTF8, true, &name), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "x", ARW_FLOAT64, true, &x), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "d", ARW_DATE32, true, &d), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "ts", ARW_TIMESTAMP_UTC, true, &ts), 0);
  assert_int_equal(arw_schema_add_decimal(s, ARW_ROOT, "dec", 5, 2, true, &dec), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "tags", ARW_LIST, true, &tags), 0);
  assert_int_equal(arw_schema_add(s, tags, "element", ARW_UTF8, true, &tag), 0);
  arw_batch *b = NULL;
  assert_int_equal(arw_batch_new(&b, s), 0);
  static const int64_t ids[ROWS] = {3, 1, 2, 1, 9};
  static const char *const names[ROWS] = {"c", NULL, "b", "a", "a very long name over twenty chars"};
  static const double xs[ROWS] = {1.5, 1e7, -0.0, 0.001, NAN};
  for (int r = 0; r < ROWS; r++) {
    assert_int_equal(arw_append_i64(b, id, ids[r]), 0);
    assert_int_equal(names[r] ? arw_append_str(b, name, names[r], strlen(names[r])) : arw_append_null(b, name), 0);
    assert_int_equal(arw_append_f64(b, x, xs[r]), 0);
    assert_int_equal(r == 1 ? arw_append_null(b, d) : arw_append_i32(b, d, 19782 + r), 0); /* 2024-02-29 */
    assert_int_equal(arw_append_i64(b, ts, 1704110400000000LL + r * 500000LL), 0);   /* 2024-01-01 12:00 */
    uint8_t le[16] = {0};
    int64_t v = r == 2 ? -5 : 12345 - r;
    memcpy(le, &v, 8);
    if (v < 0) memset(le + 8, 0xFF, 8);
    assert_int_equal(arw_append_dec128(b, dec, le), 0);
    if (r < 2) {
      assert_int_equal(arw_append_str(b, tag, "t", 1), 0);
      assert_int_equal(r ? arw_append_null(b, tag) : 0, 0);
      assert_int_equal(arw_append_done(b, tags), 0);
    } else {
      assert_int_equal(arw_append_null(b, tags), 0);
    }
  }
  qry_op *op = NULL;
  assert_int_equal(qry_local(&op, s, &b, 1), 0);
  return op;
}

static ex_node *col(const char *name) {
  ex_node *e = NULL;
  assert_int_equal(ex_new_column(&e, &name, 1), 0);
  return e;
}

static char *show(qry_op *op, int n, int truncate, bool vertical) {
  char *s = NULL;
  assert_int_equal(qry_show_string(&s, op, n, truncate, vertical), 0);
  qry_free(op);
  return s;
}

static void test_show_every_kind(void **state) {
  (void)state;
  char *s = show(table(), 3, 20, false);
  assert_string_equal(s,
      "+---+----+-----+----------+--------------------+------+---------+\n"
      "| id|name|    x|         d|                  ts|   dec|     tags|\n"
      "+---+----+-----+----------+--------------------+------+---------+\n"
      "|  3|   c|  1.5|2024-02-29| 2024-01-01 12:00:00|123.45|      [t]|\n"
      "|  1|NULL|1.0E7|      NULL|2024-01-01 12:00:...|123.44|[t, NULL]|\n" /* 21 chars: cut to 20 */
      "|  2|   b| -0.0|2024-03-02| 2024-01-01 12:00:01| -0.05|     NULL|\n"
      "+---+----+-----+----------+--------------------+------+---------+\n"
      "only showing top 3 rows\n");
  free(s);
}

static void test_show_truncate_vertical(void **state) {
  (void)state;
  qry_op *op = table();
  assert_int_equal(qry_offset(&op, op, 4), 0);
  ex_node *e[2] = {col("name"), col("x")};
  assert_int_equal(qry_project(&op, op, e, 2, false), 0);
  ex_free(e[0]), ex_free(e[1]);
  char *s = show(op, 20, 20, false);
  assert_string_equal(s, "+--------------------+---+\n"
                         "|                name|  x|\n"
                         "+--------------------+---+\n"
                         "|a very long name ...|NaN|\n"
                         "+--------------------+---+\n");
  free(s);
  assert_int_equal(qry_range(&op, 0, 2, 1, 0), 0);
  s = show(op, 20, 0, true);
  assert_string_equal(s, "-RECORD 0--\n id  | 0   \n-RECORD 1--\n id  | 1   \n");
  free(s);
  assert_int_equal(qry_range(&op, 0, 0, 1, 0), 0);
  s = show(op, 20, 20, true);
  assert_string_equal(s, "(0 rows)\n");
  free(s);
}

/* The first column of every row as int64. */
static size_t ids(qry_op *op, int64_t *out, size_t cap) {
  size_t n = 0;
  const arw_batch *b;
  int rc;
  while (!(rc = qry_next(op, &b)) && b) {
    arw_view v;
    assert_int_equal(arw_batch_view(b, arw_schema_column(arw_batch_schema(b), 0), &v), 0);
    for (size_t i = 0; i < v.length && n < cap; i++) {
      out[n] = -1;
      if (arw_view_valid(&v, i)) memcpy(&out[n], v.values + 8 * i, 8);
      n++;
    }
  }
  assert_int_equal(rc, 0);
  qry_free(op);
  return n;
}

static void test_sort(void **state) {
  (void)state;
  qry_op *op = table();
  ex_node *k[2] = {NULL, NULL};
  assert_int_equal(ex_new_sort(&k[0], col("name"), false, -1), 0); /* DESC: nulls last */
  assert_int_equal(qry_sort(&op, op, k, 1), 0);
  ex_free(k[0]);
  int64_t v[8];
  assert_int_equal(ids(op, v, 8), ROWS);
  assert_int_equal(v[0], 3), assert_int_equal(v[1], 2), assert_int_equal(v[2], 9), assert_int_equal(v[3], 1);
  assert_int_equal(v[4], 1);
  op = table(); /* stable: the two id 1 rows keep their order under a sort by id */
  assert_int_equal(ex_new_sort(&k[0], col("id"), true, -1), 0);
  assert_int_equal(ex_new_sort(&k[1], col("d"), true, 0), 0);
  assert_int_equal(qry_sort(&op, op, k, 2), 0);
  ex_free(k[0]), ex_free(k[1]);
  assert_int_equal(qry_limit(&op, op, 3), 0);
  assert_int_equal(ids(op, v, 8), 3);
  assert_int_equal(v[0], 1), assert_int_equal(v[1], 1), assert_int_equal(v[2], 2);
  op = table();
  assert_int_equal(qry_limit(&op, op, -1), DD_EINVAL);
  assert_null(op);
}

static void test_aggregate(void **state) {
  (void)state;
  qry_op *op = table();
  ex_node *g = col("id"), *x = col("x"), *name = col("name"), *dec = col("dec");
  qry_agg aggs[] = {{QRY_COUNT, NULL, false, NULL}, {QRY_COUNT, name, true, NULL}, {QRY_SUM, dec, false, NULL},
                    {QRY_AVG, dec, false, NULL}, {QRY_MAX, name, false, "m"}, {QRY_MIN, x, false, NULL}};
  assert_int_equal(qry_aggregate(&op, op, &g, 1, aggs, 6), 0);
  const arw_schema *s = qry_schema(op);
  static const char *const want[] = {"id", "count(1)", "count(DISTINCT name)", "sum(dec)", "avg(dec)", "m", "min(x)"};
  for (size_t i = 0; i < 7; i++) assert_string_equal(arw_field_name(s, arw_schema_column(s, i)), want[i]);
  char *t = NULL;
  assert_int_equal(qry_type_string(&t, s, arw_schema_column(s, 3)), 0);
  assert_string_equal(t, "decimal(15,2)");
  free(t);
  assert_int_equal(qry_type_string(&t, s, arw_schema_column(s, 4)), 0);
  assert_string_equal(t, "decimal(9,6)");
  free(t);
  assert_false(arw_field_nullable(s, arw_schema_column(s, 1)));
  char *text = show(op, 20, 20, false);
  assert_string_equal(text,
      "+---+--------+--------------------+--------+----------+--------------------+------+\n"
      "| id|count(1)|count(DISTINCT name)|sum(dec)|  avg(dec)|                   m|min(x)|\n"
      "+---+--------+--------------------+--------+----------+--------------------+------+\n"
      "|  3|       1|                   1|  123.45|123.450000|                   c|   1.5|\n"
      "|  1|       2|                   1|  246.86|123.430000|                   a| 0.001|\n"
      "|  2|       1|                   1|   -0.05| -0.050000|                   b|  -0.0|\n"
      "|  9|       1|                   1|  123.41|123.410000|a very long name ...|   NaN|\n"
      "+---+--------+--------------------+--------+----------+--------------------+------+\n");
  free(text);
  /* no groups: one row, also over no input */
  qry_op *e = NULL;
  assert_int_equal(qry_range(&e, 0, 0, 1, 0), 0);
  qry_agg cnt = {QRY_COUNT, NULL, false, NULL}, sum = {QRY_SUM, g, false, NULL};
  ex_node *idcol = col("id");
  sum.arg = idcol;
  qry_agg two[] = {cnt, sum};
  assert_int_equal(qry_aggregate(&e, e, NULL, 0, two, 2), 0);
  text = show(e, 20, 20, false);
  assert_string_equal(text, "+--------+-------+\n|count(1)|sum(id)|\n+--------+-------+\n|       0|   NULL|\n+--------+-------+\n");
  free(text);
  /* ANSI: a long sum that overflows is an error */
  assert_int_equal(qry_range(&e, INT64_MAX - 1, INT64_MAX, 1, 0), 0);
  ex_node *two_ids[2] = {col("id"), col("id")};
  ex_node *plus = NULL;
  assert_int_equal(ex_new_call(&plus, "+", two_ids, 2), 0);
  qry_agg big = {QRY_SUM, plus, false, NULL};
  qry_op *u = NULL;
  assert_int_equal(qry_range(&u, INT64_MAX / 2, INT64_MAX / 2 + 3, 1, 0), 0);
  assert_int_equal(qry_aggregate(&u, u, NULL, 0, &big, 1), 0);
  const arw_batch *b;
  assert_int_equal(qry_next(u, &b), DD_ERANGE);
  assert_non_null(strstr(dd_err_msg(), "ARITHMETIC_OVERFLOW"));
  qry_free(u);
  qry_free(e);
  ex_free(plus);
  ex_free(idcol), ex_free(g), ex_free(x), ex_free(name), ex_free(dec);
}

static void test_dedup_rename_tree(void **state) {
  (void)state;
  qry_op *op = table();
  const char *k = "id";
  assert_int_equal(qry_dedup(&op, op, &k, 1), 0);
  int64_t v[8];
  assert_int_equal(ids(op, v, 8), 4);
  op = table();
  const char *bad = "nope";
  assert_int_equal(qry_dedup(&op, op, &bad, 1), DD_EINVAL);
  op = table();
  const char *from[] = {"ID"}, *to[] = {"key"};
  assert_int_equal(qry_rename(&op, op, from, to, 1), 0);
  char *t = NULL;
  assert_int_equal(qry_tree_string(&t, qry_schema(op), 0), 0);
  assert_string_equal(t, "root\n |-- key: long (nullable = false)\n |-- name: string (nullable = true)\n"
                         " |-- x: double (nullable = true)\n |-- d: date (nullable = true)\n"
                         " |-- ts: timestamp (nullable = true)\n |-- dec: decimal(5,2) (nullable = true)\n"
                         " |-- tags: array (nullable = true)\n |    |-- element: string (containsNull = true)\n");
  free(t);
  assert_int_equal(ids(op, v, 8), ROWS);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_show_every_kind),
      cmocka_unit_test(test_show_truncate_vertical),
      cmocka_unit_test(test_sort),
      cmocka_unit_test(test_aggregate),
      cmocka_unit_test(test_dedup_rename_tree),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
