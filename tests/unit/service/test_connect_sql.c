/* test_connect_sql.c: the SQL of connect_sql.h on a real fixture table (simple_table, ids
 * 5, 7, 9 in version 4; DD_FIXTURES), without a catalog (the CLI's --local rules): queries
 * planned into store/query operators and read back, the maintenance statements, and bad
 * statements refused with PARSE_SYNTAX_ERROR / UNIMPLEMENTED (never a crash: hostile text,
 * 100,000 nested parentheses, a statement past the length bound). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "common/err.h"
#include "server/service/connect_sql.h"

static char table[4096];

static int setup(void **state) {
  (void)state;
  const char *f = getenv("DD_FIXTURES");
  snprintf(table, sizeof table, "delta.`%s/delta-rs-data/simple_table`", f ? f : "../shared/fixtures");
  return 0;
}

/* Runs sql; the first column's values as int64 (-1 for null) into vals, their count back. */
static int run(const char *sql, int64_t *vals, size_t cap, size_t *n, char **show) {
  qry_op *op = NULL;
  connect_exec_opts o = CONNECT_EXEC_OPTS_INIT;
  *n = 0;
  int rc = connect_sql_query(&op, sql, &o, 0);
  if (!rc && show) rc = qry_show_string(show, op, 20, 20, false);
  const arw_batch *b;
  while (!rc && !show && !(rc = qry_next(op, &b)) && b) {
    arw_view v;
    assert_int_equal(arw_batch_view(b, arw_schema_column(arw_batch_schema(b), 0), &v), 0);
    for (size_t i = 0; i < v.length && *n < cap; i++) {
      int64_t x = -1;
      if (arw_view_valid(&v, i)) {
        if (v.kind == ARW_INT64) memcpy(&x, v.values + 8 * i, 8);
        else if (v.kind == ARW_INT32) { int32_t y; memcpy(&y, v.values + 4 * i, 4); x = y; }
        else x = 1000 + (int64_t)i; /* a non-integer cell: its position */
      }
      vals[(*n)++] = x;
    }
  }
  qry_free(op);
  return rc;
}

static char *sqlf(const char *fmt) {
  static char buf[8192];
  snprintf(buf, sizeof buf, fmt, table);
  return buf;
}

static void test_select(void **state) {
  (void)state;
  int64_t v[16];
  size_t n;
  assert_int_equal(run(sqlf("SELECT id FROM %s WHERE id > 5 ORDER BY id DESC"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 2);
  assert_int_equal(v[0], 9);
  assert_int_equal(v[1], 7);
  assert_int_equal(run(sqlf("select * from %s order by id limit 1 offset 1;"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 1);
  assert_int_equal(v[0], 7);
  assert_int_equal(run(sqlf("SELECT id + 1 AS x FROM %s VERSION AS OF 4 ORDER BY x"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 3);
  assert_int_equal(v[0], 6);
  assert_int_equal(run("SELECT 41 + 1 AS answer", v, 16, &n, NULL), 0);
  assert_int_equal(n, 1);
  assert_int_equal(v[0], 42);
  assert_true(connect_sql_is_query("  select 1"));
  assert_false(connect_sql_is_query("VACUUM x"));
}

static void test_aggregate(void **state) {
  (void)state;
  int64_t v[16];
  size_t n;
  assert_int_equal(run(sqlf("SELECT count(*) AS n, sum(id), min(id), max(id) FROM %s"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 1);
  assert_int_equal(v[0], 3);
  char *show = NULL;
  assert_int_equal(run(sqlf("SELECT count(*), sum(id), count(DISTINCT id %% 2) AS odd FROM %s"), v, 16, &n, &show), 0);
  assert_string_equal(show, "+--------+-------+---+\n"
                            "|count(1)|sum(id)|odd|\n"
                            "+--------+-------+---+\n"
                            "|       3|     21|  1|\n"
                            "+--------+-------+---+\n");
  free(show);
  assert_int_equal(run(sqlf("SELECT id %% 2 AS m, count(*) FROM %s GROUP BY id %% 2"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 1);
  assert_int_equal(v[0], 1);
  /* a plain item must be grouped */
  assert_int_equal(run(sqlf("SELECT id, count(*) FROM %s"), v, 16, &n, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "MISSING_AGGREGATION"));
}

static void test_maintenance(void **state) {
  (void)state;
  int64_t v[16];
  size_t n;
  assert_int_equal(run(sqlf("DESCRIBE HISTORY %s"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 5);
  assert_int_equal(v[0], 4);
  assert_int_equal(run(sqlf("describe history %s limit 2"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 2);
  assert_int_equal(run(sqlf("DESCRIBE DETAIL %s"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 1);
  assert_int_equal(run(sqlf("SHOW TBLPROPERTIES %s"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 2); /* delta.minReaderVersion, delta.minWriterVersion */
  /* OPTIMIZE writes: it runs on a copy (it once ran on the shared fixture itself) */
  const char *fx = getenv("DD_FIXTURES");
  char tmpl[] = "/tmp/connect_sql_XXXXXX", cmd[8400], sql[4300];
  assert_non_null(mkdtemp(tmpl));
  snprintf(cmd, sizeof cmd, "cp -r '%s/delta-rs-data/simple_table/.' '%s/'",
           fx ? fx : "../shared/fixtures", tmpl);
  assert_int_equal(system(cmd), 0);
  snprintf(sql, sizeof sql, "OPTIMIZE delta.`%s` WHERE id > 1 ZORDER BY (`id`)", tmpl);
  assert_int_equal(run(sql, v, 16, &n, NULL), DD_EINVAL); /* id is not a partition column */
  snprintf(sql, sizeof sql, "OPTIMIZE delta.`%s` ZORDER BY (`id`)", tmpl);
  assert_int_equal(run(sql, v, 16, &n, NULL), 0);
  assert_int_equal(n, 1); /* Delta's result row (path, metrics) */
  snprintf(sql, sizeof sql, "OPTIMIZE delta.`%s` ZORDER id extra", tmpl);
  assert_int_equal(run(sql, v, 16, &n, NULL), DD_EINVAL);
  /* ALTER TABLE ... SET TBLPROPERTIES commits: on the copy too */
  snprintf(sql, sizeof sql, "ALTER TABLE delta.`%s` SET TBLPROPERTIES ('a' = 'b')", tmpl);
  assert_int_equal(run(sql, v, 16, &n, NULL), 0);
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpl);
  assert_int_equal(system(cmd), 0);
  /* a refused property commits nothing (the fixture keeps its 5 versions) */
  assert_int_equal(run(sqlf("ALTER TABLE %s SET TBLPROPERTIES ('delta.nope' = '1')"), v, 16, &n, NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "DELTA_UNKNOWN_CONFIGURATION"));
  assert_int_equal(run(sqlf("DESCRIBE HISTORY %s"), v, 16, &n, NULL), 0);
  assert_int_equal(n, 5);
}

static void test_bad_sql(void **state) {
  (void)state;
  static const char *const bad[] = {
      "SELEC 1", "SELECT", "SELECT id FROM", "SELECT id FROM delta.`/x", "SELECT id FROM t WHERE",
      "SELECT id FROM t ORDER id", "SELECT id FROM t LIMIT -1", "SELECT id FROM t LIMIT x", "VACUUM",
      "VACUUM delta.`/t` RETAIN", "VACUUM delta.`/t` RETAIN 1 DAYS", "RESTORE TABLE t TO",
      "DESCRIBE HISTORY", "'unterminated", "SELECT 'x FROM t", "", ";", "SELECT id FROM t extra junk",
  };
  int64_t v[4];
  size_t n;
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    int rc = run(bad[i], v, 4, &n, NULL);
    assert_true(rc == DD_EINVAL || rc == DD_ENOTFOUND || rc == DD_EPERM);
    if (rc == DD_EINVAL) assert_non_null(strstr(dd_err_msg(), "["));
  }
  assert_int_equal(run("DROP TABLE t", v, 4, &n, NULL), DD_EUNSUPPORTED);
  assert_non_null(strstr(dd_err_msg(), "DROP"));
  /* deep nesting stops at the expression parser's bound */
  size_t deep = 100000;
  char *s = malloc(2 * deep + 32);
  assert_non_null(s);
  strcpy(s, "SELECT ");
  memset(s + 7, '(', deep);
  strcpy(s + 7 + deep, "1");
  memset(s + 8 + deep, ')', deep);
  s[8 + 2 * deep] = 0;
  assert_int_equal(run(s, v, 4, &n, NULL), DD_EINVAL);
  free(s);
  /* past the length bound */
  s = malloc(CONNECT_SQL_MAX_LEN + 16);
  assert_non_null(s);
  memset(s, ' ', CONNECT_SQL_MAX_LEN + 8);
  memcpy(s, "SELECT 1", 8);
  s[CONNECT_SQL_MAX_LEN + 8] = 0;
  assert_int_equal(run(s, v, 4, &n, NULL), DD_EINVAL);
  free(s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_select),
      cmocka_unit_test(test_aggregate),
      cmocka_unit_test(test_maintenance),
      cmocka_unit_test(test_bad_sql),
  };
  return cmocka_run_group_tests(tests, setup, NULL);
}
