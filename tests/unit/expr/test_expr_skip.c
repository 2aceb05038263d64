/* test_expr_skip.c: data skipping of store/expr over a real Delta log written here (a
 * partitioned table whose add actions carry stats): which files each predicate keeps,
 * never skipping one that could match (no stats, null partitions, millisecond timestamps,
 * truncated string maxima, NaN-blind double maxima, loose bounds), column mapping's
 * physical names, and the partition-only check of OPTIMIZE WHERE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "store/arrow/arrow.h"
#include "store/delta/dl.h"
#include "store/expr/ex.h"

static char dir[256];
static dl_table *T;
static dl_snapshot *S;
static arw_schema *A;

#define SCHEMA                                                                                 \
  "{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":["                                              \
  "{\\\"name\\\":\\\"p\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}," \
  "{\\\"name\\\":\\\"id\\\",\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}," \
  "{\\\"name\\\":\\\"name\\\",\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}," \
  "{\\\"name\\\":\\\"ts\\\",\\\"type\\\":\\\"timestamp\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}," \
  "{\\\"name\\\":\\\"d\\\",\\\"type\\\":\\\"double\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}," \
  "{\\\"name\\\":\\\"n\\\",\\\"type\\\":\\\"integer\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}," \
  "{\\\"name\\\":\\\"m\\\",\\\"type\\\":\\\"integer\\\",\\\"nullable\\\":true,\\\"metadata\\\":"  \
  "{\\\"delta.columnMapping.id\\\":7,\\\"delta.columnMapping.physicalName\\\":\\\"col-m\\\"}}]}"

static const char *LOG[] = {
  "{\"protocol\":{\"minReaderVersion\":2,\"minWriterVersion\":5}}",
  "{\"metaData\":{\"id\":\"t\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
  "\"schemaString\":\"" SCHEMA "\",\"partitionColumns\":[\"p\"],"
  "\"configuration\":{\"delta.columnMapping.mode\":\"name\",\"delta.columnMapping.maxColumnId\":\"7\"},"
  "\"createdTime\":0}}",
  /* f1: p=a, ids 1..10, n all null */
  "{\"add\":{\"path\":\"f1\",\"partitionValues\":{\"p\":\"a\"},\"size\":1,\"modificationTime\":0,"
  "\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":10,\\\"minValues\\\":{\\\"id\\\":1,"
  "\\\"name\\\":\\\"apple\\\",\\\"ts\\\":\\\"2024-01-01T00:00:00.000Z\\\",\\\"d\\\":0.0,\\\"col-m\\\":1},"
  "\\\"maxValues\\\":{\\\"id\\\":10,\\\"name\\\":\\\"banana\\\",\\\"ts\\\":\\\"2024-01-01T10:00:00.123Z\\\","
  "\\\"d\\\":5.0,\\\"col-m\\\":3},\\\"nullCount\\\":{\\\"id\\\":0,\\\"name\\\":0,\\\"ts\\\":0,\\\"d\\\":0,"
  "\\\"n\\\":10,\\\"col-m\\\":0}}\"}}",
  /* f2: p=b, ids 11..20 */
  "{\"add\":{\"path\":\"f2\",\"partitionValues\":{\"p\":\"b\"},\"size\":1,\"modificationTime\":0,"
  "\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":10,\\\"minValues\\\":{\\\"id\\\":11,"
  "\\\"name\\\":\\\"cherry\\\",\\\"d\\\":10.0,\\\"col-m\\\":10},\\\"maxValues\\\":{\\\"id\\\":20,"
  "\\\"name\\\":\\\"date\\\",\\\"d\\\":20.0,\\\"col-m\\\":20},\\\"nullCount\\\":{\\\"id\\\":0,\\\"n\\\":0}}\"}}",
  /* f3: a null partition, no stats */
  "{\"add\":{\"path\":\"f3\",\"partitionValues\":{\"p\":null},\"size\":1,\"modificationTime\":0,"
  "\"dataChange\":true}}",
  /* f4: p=a, loose bounds (deletion vectors): its counts are not to be trusted */
  "{\"add\":{\"path\":\"f4\",\"partitionValues\":{\"p\":\"a\"},\"size\":1,\"modificationTime\":0,"
  "\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":5,\\\"tightBounds\\\":false,\\\"minValues\\\":"
  "{\\\"id\\\":100},\\\"maxValues\\\":{\\\"id\\\":200},\\\"nullCount\\\":{\\\"n\\\":5}}\"}}",
  /* f5: p=b, a 32-character (truncated) string max */
  "{\"add\":{\"path\":\"f5\",\"partitionValues\":{\"p\":\"b\"},\"size\":1,\"modificationTime\":0,"
  "\"dataChange\":true,\"stats\":\"{\\\"numRecords\\\":3,\\\"minValues\\\":{\\\"name\\\":\\\"x\\\"},"
  "\\\"maxValues\\\":{\\\"name\\\":\\\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\\"}}\"}}",
};

static int setup(void **state) {
  (void)state;
  snprintf(dir, sizeof dir, "/tmp/dd_expr_skip_%d", (int)getpid());
  char path[512];
  snprintf(path, sizeof path, "%s/_delta_log", dir);
  mkdir(dir, 0700);
  mkdir(path, 0700);
  snprintf(path, sizeof path, "%s/_delta_log/00000000000000000000.json", dir);
  FILE *f = fopen(path, "w");
  for (size_t i = 0; i < sizeof LOG / sizeof LOG[0]; i++) fprintf(f, "%s\n", LOG[i]);
  fclose(f);
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  if (dl_table_open(&T, dir) || dl_snapshot_open(&S, T, &o)) {
    fprintf(stderr, "open: %s\n", dd_err_msg());
    return -1;
  }
  arw_schema_new(&A);
  arw_schema_add(A, ARW_ROOT, "p", ARW_UTF8, true, NULL);
  arw_schema_add(A, ARW_ROOT, "id", ARW_INT64, true, NULL);
  arw_schema_add(A, ARW_ROOT, "name", ARW_UTF8, true, NULL);
  arw_schema_add(A, ARW_ROOT, "ts", ARW_TIMESTAMP_UTC, true, NULL);
  arw_schema_add(A, ARW_ROOT, "d", ARW_FLOAT64, true, NULL);
  arw_schema_add(A, ARW_ROOT, "n", ARW_INT32, true, NULL);
  arw_schema_add(A, ARW_ROOT, "m", ARW_INT32, true, NULL);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  arw_schema_free(A);
  dl_snapshot_free(S);
  dl_table_free(T);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd);
}

typedef struct kept {
  ex_skipper *sk;
  char names[64];
} kept;

static int on_file(void *ctx, const dl_file *f) {
  kept *k = ctx;
  if (ex_skipper_keep(k->sk, f)) {
    if (k->names[0]) strcat(k->names, ",");
    strcat(k->names, f->path);
  }
  return 0;
}

/* The files (in log order) a predicate keeps, e.g. "f1,f3". */
static char *keep(const char *pred) {
  ex_node *e, *b;
  kept k = {0};
  static char out[128];
  if (ex_parse(&e, pred, strlen(pred), NULL) || ex_bind(&b, e, A, NULL)) {
    snprintf(out, sizeof out, "ERR %s", dd_err_msg());
    return out;
  }
  assert_int_equal(ex_skipper_new(&k.sk, b, S), 0);
  assert_int_equal(dl_snapshot_files(S, on_file, &k), 0);
  int64_t considered, skipped;
  ex_skipper_counts(k.sk, &considered, &skipped);
  assert_int_equal(considered, 5);
  ex_skipper_free(k.sk);
  ex_free(b);
  ex_free(e);
  /* dl_snapshot_files may visit in any order: sort the names */
  char *names[8];
  int n = 0;
  for (char *t = strtok(k.names, ","); t; t = strtok(NULL, ",")) names[n++] = t;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (strcmp(names[j], names[i]) < 0) {
        char *x = names[i];
        names[i] = names[j];
        names[j] = x;
      }
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    if (i) strcat(out, ",");
    strcat(out, names[i]);
  }
  return out;
}

static void expect(const char *pred, const char *files) {
  char *got = keep(pred);
  if (strcmp(got, files)) fprintf(stderr, "%s: kept [%s], want [%s]\n", pred, got, files);
  assert_string_equal(got, files);
}

static void test_stats(void **state) {
  (void)state;
  expect("true", "f1,f2,f3,f4,f5");
  expect("false", "");
  expect("id = NULL", "");
  expect("id = 5", "f1,f3,f5");
  expect("5 = id", "f1,f3,f5");
  expect("id > 10", "f2,f3,f4,f5");
  expect("id >= 10", "f1,f2,f3,f4,f5");
  expect("10 < id", "f2,f3,f4,f5");
  expect("id < 1", "f3,f5");
  expect("NOT (id > 5)", "f1,f3,f5");
  expect("id IN (15, 30)", "f2,f3,f5");
  expect("id BETWEEN 21 AND 99", "f3,f5");
  expect("id = 5 OR p = 'b'", "f1,f2,f3,f5");
  expect("id = 5 AND p = 'b'", "f5");
  expect("id + 1 = 5", "f1,f2,f3,f4,f5");
  expect("upper(name) = 'X'", "f1,f2,f3,f4,f5");
  expect("id <=> 5", "f1,f3,f5");
  /* an int literal against a long column, a long literal against an int column */
  expect("m = 2", "f1,f3,f4,f5");
  expect("m > 5L", "f2,f3,f4,f5");
}

static void test_nulls_and_partitions(void **state) {
  (void)state;
  expect("p = 'a'", "f1,f4");
  expect("p <> 'a'", "f2,f5");
  expect("p IS NULL", "f3");
  expect("p IS NOT NULL", "f1,f2,f4,f5");
  expect("p IN ('b', 'c')", "f2,f5");
  expect("p <=> NULL", "f3");
  /* all-null column in f1; f4's null count is loose and not trusted */
  expect("n IS NOT NULL", "f2,f3,f4,f5");
  expect("n = 1", "f2,f3,f4,f5");
  expect("n IS NULL", "f1,f3,f4,f5");
  expect("id IS NULL", "f3,f4,f5");
  /* TRY_CAST turns values into NULL: a file without nulls may still match */
  expect("try_cast(name AS INT) IS NULL", "f1,f2,f3,f4,f5");
  expect("try_cast(id AS TINYINT) > 5", "f1,f2,f3,f4,f5");
  expect("CAST(id AS TINYINT) IS NULL", "f3,f4,f5");
}

static void test_widened_bounds(void **state) {
  (void)state;
  /* millisecond stats: the max may be up to 999 us above */
  expect("ts > TIMESTAMP'2024-01-01 10:00:00.123'", "f1,f2,f3,f4,f5");
  expect("ts > TIMESTAMP'2024-01-01 10:00:00.124'", "f2,f3,f4,f5");
  expect("ts < TIMESTAMP'2023-12-31 23:59:59.999'", "f2,f3,f4,f5");
  /* a 32-character string max may be a truncated prefix */
  expect("name > 'zzz'", "f3,f4,f5");
  expect("name < 'a'", "f3,f4");
  /* double maxima ignore NaN, which Spark orders above every number */
  expect("d > 100", "f1,f2,f3,f4,f5");
  expect("d < -1", "f3,f4,f5");
}

static void test_partition_only(void **state) {
  (void)state;
  ex_node *e, *b;
  const char *ok = "p = 'a' OR p IS NULL", *bad = "p = 'a' AND id > 1";
  assert_int_equal(ex_parse(&e, ok, strlen(ok), NULL), 0);
  assert_int_equal(ex_bind(&b, e, A, NULL), 0);
  assert_int_equal(ex_check_partition_only(b, S), 0);
  ex_free(b);
  ex_free(e);
  assert_int_equal(ex_parse(&e, bad, strlen(bad), NULL), 0);
  assert_int_equal(ex_bind(&b, e, A, NULL), 0);
  assert_int_equal(ex_check_partition_only(b, S), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "non-partition column 'id'"));
  assert_non_null(strstr(dd_err_msg(), "[p]"));
  ex_free(b);
  ex_free(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_stats),          cmocka_unit_test(test_nulls_and_partitions),
    cmocka_unit_test(test_widened_bounds), cmocka_unit_test(test_partition_only),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
