/* test_txi.c: store/textin on files written here: CSV quoting (commas, quotes and line
 * breaks in quoted fields, CRLF, empty fields NULL as Spark reads them), JSON-lines inference
 * (alphabetical columns; bigint, double, boolean, string; objects as text; keys missing
 * from a line are NULL), a schema's casts, batch bounds, and each malformed input refused
 * with its line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/err.h"
#include "store/textin/txi.h"

static char dir[] = "/tmp/test-txi-XXXXXX";

static const char *file(const char *name, const char *text) {
  static char path[256];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
  return path;
}

typedef struct got {
  arw_schema *s;
  arw_batch **b;
  size_t n;
} got;

static void got_free(got *g) {
  for (size_t i = 0; i < g->n; i++) arw_batch_free(g->b[i]);
  free(g->b);
  arw_schema_free(g->s);
}

static int rd(got *g, const char *path, const char *schema, size_t rows) {
  txi_opts o = {.schema = schema, .batch_rows = rows};
  memset(g, 0, sizeof *g);
  return txi_read(&g->s, &g->b, &g->n, path, &o);
}

/* The string value of column c row r of batch b, or NULL. */
static char *str(const got *g, size_t b, int c, size_t r) {
  arw_view v;
  static char buf[256];
  assert_int_equal(arw_batch_view(g->b[b], arw_schema_column(g->s, (size_t)c), &v), 0);
  if (v.validity && !(v.validity[r / 8] >> (r % 8) & 1)) return NULL;
  size_t len = (size_t)(v.offsets[r + 1] - v.offsets[r]);
  memcpy(buf, (const char *)v.values + v.offsets[r], len);
  buf[len] = 0;
  return buf;
}

static void test_csv(void **state) {
  (void)state;
  got g;
  const char *p = file("a.csv", "x,y,z\r\n1,\"a,b\",\r\n\"2\",\"say \"\"hi\"\"\nnext\",\"\"\n\n3,c,d");
  assert_int_equal(rd(&g, p, NULL, 2), 0);
  assert_int_equal(arw_schema_ncolumns(g.s), 3);
  assert_string_equal(arw_field_name(g.s, arw_schema_column(g.s, 1)), "y");
  assert_int_equal(arw_field_kind(g.s, arw_schema_column(g.s, 0)), ARW_UTF8);
  assert_int_equal(g.n, 2);
  assert_int_equal(arw_batch_rows(g.b[0]), 2);
  assert_int_equal(arw_batch_rows(g.b[1]), 1);
  assert_string_equal(str(&g, 0, 1, 0), "a,b");
  assert_null(str(&g, 0, 2, 0));                       /* unquoted empty: NULL */
  assert_string_equal(str(&g, 0, 1, 1), "say \"hi\"\nnext");
  assert_null(str(&g, 0, 2, 1));                       /* quoted empty: NULL too */
  assert_string_equal(str(&g, 1, 2, 0), "d");          /* no final line break */
  got_free(&g);
  /* a schema: chosen columns, cast, in its order */
  assert_int_equal(rd(&g, p, "z STRING, `X` BIGINT", 0), 0);
  assert_int_equal(arw_schema_ncolumns(g.s), 2);
  assert_int_equal(arw_field_kind(g.s, arw_schema_column(g.s, 1)), ARW_INT64);
  arw_view v;
  assert_int_equal(arw_batch_view(g.b[0], arw_schema_column(g.s, 1), &v), 0);
  assert_int_equal(((const int64_t *)v.values)[2], 3);
  got_free(&g);
}

static void test_json(void **state) {
  (void)state;
  got g;
  const char *p = file("a.jsonl", "{\"b\": 1, \"a\": \"x\", \"n\": 1}\n\n  {\"b\": 2.5, \"c\": true, \"o\": {\"k\": [1]}, \"n\": 2}\r\n"
                                  "{\"a\": 7, \"n\": null, \"c\": false}\n");
  assert_int_equal(rd(&g, p, NULL, 0), 0);
  static const char *const names[] = {"a", "b", "c", "n", "o"};
  static const arw_kind kinds[] = {ARW_UTF8, ARW_FLOAT64, ARW_BOOL, ARW_INT64, ARW_UTF8};
  assert_int_equal(arw_schema_ncolumns(g.s), 5);
  for (int i = 0; i < 5; i++) {
    assert_string_equal(arw_field_name(g.s, arw_schema_column(g.s, (size_t)i)), names[i]);
    assert_int_equal(arw_field_kind(g.s, arw_schema_column(g.s, (size_t)i)), kinds[i]);
  }
  assert_int_equal(arw_batch_rows(g.b[0]), 3);
  assert_string_equal(str(&g, 0, 0, 2), "7");          /* a number among strings: its text */
  assert_string_equal(str(&g, 0, 4, 1), "{\"k\":[1]}");
  assert_null(str(&g, 0, 4, 0));                       /* a key the line lacks */
  assert_null(str(&g, 0, 0, 1));
  got_free(&g);
}

static void test_bad(void **state) {
  (void)state;
  got g;
  static const struct { const char *name, *text, *schema, *msg; } cases[] = {
      {"q.csv", "x\n\"open\n", NULL, "line 2: a quoted field is not closed"},
      {"t.csv", "x,y\n\"a\"b,c\n", NULL, "line 2: text after a closing quote"},
      {"n.csv", "x,y\n1,2,3\n", NULL, "line 2: more fields than the header's 2"},
      {"f.csv", "x,y\n1\n", NULL, "line 2: 1 fields, the header has 2"},
      {"e.csv", "", NULL, "no header line"},
      {"c.csv", "x\nabc\n", "x INT", "CAST_INVALID_INPUT"},
      {"m.csv", "x\n1\n", "y INT", "the file has no column y"},
      {"s.csv", "x\n1\n", "x", "wants 'name TYPE"},
      {"j.json", "{\"a\": 1}\n[1, 2]\n", NULL, "line 2: not a JSON object"},
      {"k.json", "{\"a\": 1\n", NULL, "line 1: not a JSON object"},
      {"x.txt", "a\n", NULL, "not a .csv, .json"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    int rc = rd(&g, file(cases[i].name, cases[i].text), cases[i].schema, 0);
    if (rc == 0 || !strstr(dd_err_msg(), cases[i].msg)) fail_msg("%s: rc %d, %s", cases[i].name, rc, dd_err_msg());
    assert_null(g.s);
    assert_null(g.b);
  }
  assert_int_not_equal(rd(&g, "/nonexistent/a.csv", NULL, 0), 0);
  /* a header without rows: the schema, no batch */
  assert_int_equal(rd(&g, file("h.csv", "x,y\n"), NULL, 0), 0);
  assert_int_equal(arw_schema_ncolumns(g.s), 2);
  assert_int_equal(g.n, 0);
  got_free(&g);
}

int main(void) {
  if (!mkdtemp(dir)) return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_csv),
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_bad),
  };
  int rc = cmocka_run_group_tests(tests, NULL, NULL);
  char cmd[64];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  if (system(cmd)) rc = rc ? rc : 1;
  return rc;
}
