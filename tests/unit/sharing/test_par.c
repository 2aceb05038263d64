/* test_par.c: Query Table's file lines rendered on several threads (store/sharing/
 * shq_par.c) on a generated table of 12,000 files over two commits: the lines, their order
 * and the result are those of the one-thread loop; a line callback that refuses stops the
 * query at that line; a signer error part-way comes after exactly the lines before it. */
#include <pthread.h>
#include <sys/stat.h>

#include "shq_test_util.h"
#include "../tmp_dir.h"

#define NFILES 12000

static char dir[64];

typedef struct raw_lines {
  char **v;
  size_t n, cap;
  size_t stop_at; /* 0: never */
} raw_lines;

static int collect_raw(void *ctx, const char *json, size_t len) {
  raw_lines *l = ctx;
  assert_int_equal(json[len], '\0');
  if (l->stop_at && l->n == l->stop_at) return 7;
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 1024;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    assert_non_null(l->v);
  }
  l->v[l->n++] = strndup(json, len);
  return 0;
}

static void raw_free(raw_lines *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* A signer that fails on one path (when ctx names it). */
static int failing_sign(void *ctx, const char *path, int64_t size, char **url, int64_t *exp) {
  if (ctx && !strcmp(path, ctx)) return dd_err_set(DD_EPRECOND, "cannot sign %s", path);
  return test_sign(NULL, path, size, url, exp);
}

static void write_log(const char *path, size_t from, size_t to, const char *extra) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  if (from == 0) {
    fputs("{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n", f);
    fputs("{\"metaData\":{\"id\":\"par-1\",\"format\":{\"provider\":\"parquet\",\"options\":{}},"
          "\"schemaString\":\"{\\\"type\\\":\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":\\\"id\\\","
          "\\\"type\\\":\\\"long\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}},{\\\"name\\\":\\\"p\\\","
          "\\\"type\\\":\\\"string\\\",\\\"nullable\\\":true,\\\"metadata\\\":{}}]}\","
          "\"partitionColumns\":[\"p\"],\"configuration\":{},\"createdTime\":1}}\n", f);
  }
  for (size_t i = from; i < to; i++)
    fprintf(f, "{\"add\":{\"path\":\"p=%zu/f-%zu.parquet\",\"partitionValues\":{\"p\":\"%zu\"},"
               "\"size\":%zu,\"modificationTime\":1,\"dataChange\":true,"
               "\"stats\":\"{\\\"numRecords\\\":%zu}\"}}\n", i % 3, i, i % 3, 100 + i, i % 7 + 1);
  if (extra) fputs(extra, f);
  fclose(f);
}

static int setup(void **state) {
  (void)state;
  if (tu_tmp_dir_make(dir, "dd_shq_par_")) return -1;
  char p[128];
  snprintf(p, sizeof p, "%s/_delta_log", dir);
  if (mkdir(p, 0755)) return -1;
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000000.json", dir);
  write_log(p, 0, 9000, NULL);
  /* commit 1: more files and removes of some of commit 0's */
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000001.json", dir);
  write_log(p, 9000, NFILES,
            "{\"remove\":{\"path\":\"p=0/f-3.parquet\",\"deletionTimestamp\":2,\"dataChange\":true}}\n"
            "{\"remove\":{\"path\":\"p=1/f-4000.parquet\",\"deletionTimestamp\":2,\"dataChange\":true}}\n");
  return 0;
}

static int teardown(void **state) {
  (void)state;
  return tu_tmp_dir_remove(dir);
}

static dl_cache *cache; /* NULL: each query opens its snapshot */

static int query(raw_lines *out, bool concurrent, const char *fail_path, const char *body,
                 shq_result *res) {
  dl_table *t = open_table(dir);
  shq_signer sg = {.sign = failing_sign, .ctx = (void *)fail_path, .concurrent = concurrent};
  shq_table_opts o = topts(true);
  o.cache = cache;
  shq_query q;
  assert_int_equal(shq_query_parse_json(&q, body, strlen(body)), 0);
  shq_caps c = caps_of(NULL);
  int rc = shq_query_table(t, &q, &c, &o, &sg, 1700000000000LL, res, collect_raw, out);
  shq_query_clear(&q);
  dl_table_free(t);
  return rc;
}

static void assert_same(const raw_lines *a, const raw_lines *b) {
  assert_int_equal(a->n, b->n);
  for (size_t i = 0; i < a->n; i++) assert_string_equal(a->v[i], b->v[i]);
}

static void test_same_lines(void **state) {
  (void)state;
  const char *bodies[] = {"{}", "{\"predicateHints\":[\"p = '1'\"]}", "{\"version\":1}"};
  for (size_t i = 0; i < 3; i++) {
    raw_lines one = {0}, par = {0};
    shq_result r1, r2;
    assert_int_equal(query(&one, false, NULL, bodies[i], &r1), 0);
    assert_int_equal(query(&par, true, NULL, bodies[i], &r2), 0);
    if (i != 1) assert_int_equal(one.n, 2 + NFILES - 2); /* protocol, metaData, the files */
    assert_same(&one, &par);
    assert_int_equal(r1.version, r2.version);
    raw_free(&one);
    raw_free(&par);
  }
}

static void test_refusal_stops(void **state) {
  (void)state;
  raw_lines par = {.stop_at = 5000};
  shq_result r;
  assert_int_equal(query(&par, true, NULL, "{}", &r), 7);
  assert_int_equal(par.n, 5000);
  raw_free(&par);
}

static void test_error_after_lines_before(void **state) {
  (void)state;
  raw_lines one = {0}, par = {0};
  shq_result r1, r2;
  assert_int_equal(query(&one, false, "p=0/f-6000.parquet", "{}", &r1), DD_EPRECOND);
  assert_int_equal(query(&par, true, "p=0/f-6000.parquet", "{}", &r2), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "cannot sign p=0/f-6000.parquet"));
  assert_true(one.n > 5000);
  assert_same(&one, &par);
  raw_free(&one);
  raw_free(&par);
}

/* Through a snapshot cache the file ids are kept with the snapshot by the first query
 * (filtered or not: ids are by the file's place in the range, before any filter) and
 * reused by the next ones: every query's lines are still the one-thread loop's. */
static void test_kept_ids_same_lines(void **state) {
  (void)state;
  const char *bodies[] = {"{}", "{\"predicateHints\":[\"p = '1'\"]}"};
  for (int first = 0; first < 2; first++) {
    assert_int_equal(dl_cache_new(&cache, 1u << 30), 0);
    for (int round = 0; round < 3; round++)
      for (int k = 0; k < 2; k++) {
        const char *body = bodies[(first + k) % 2];
        raw_lines one = {0}, par = {0};
        shq_result r1, r2;
        assert_int_equal(query(&one, false, NULL, body, &r1), 0);
        assert_int_equal(query(&par, true, NULL, body, &r2), 0);
        assert_true(one.n > 2);
        assert_same(&one, &par);
        raw_free(&one);
        raw_free(&par);
      }
    /* the cached snapshot holds the ids */
    dl_table *t = open_table(dir);
    dl_snapshot *s = NULL;
    assert_int_equal(dl_cache_get(cache, t, &s), 0);
    assert_non_null(dl_snapshot_ext_get(s));
    dl_snapshot_free(s);
    dl_table_free(t);
    dl_cache_free(cache);
    cache = NULL;
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_same_lines),
      cmocka_unit_test(test_kept_ids_same_lines),
      cmocka_unit_test(test_refusal_stops),
      cmocka_unit_test(test_error_after_lines_before),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
