/* test_dml_keyidx.c: MERGE's join index (dml_merge_join.c): every source row of a key comes
 * back, last row first, and no other; NULL keys never match; keys alike in their low bits
 * (multiples of 2^20) and a string key part spread over the slots; a table of 20,000 keys
 * against every probe, present or absent, agrees with a plain scan. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/dml/dml_merge_int.h"

enum { N = 20000 };

/* Key of source row j: j / 3 * 2^20 (each key on three rows), row 7 NULL; s = "k<j / 3>". */
static arw_batch *keys(arw_schema **as) {
  int id, sc;
  assert_int_equal(arw_schema_new(as), 0);
  arw_schema_add(*as, ARW_ROOT, "id", ARW_INT64, true, &id);
  arw_schema_add(*as, ARW_ROOT, "s", ARW_UTF8, true, &sc);
  arw_batch *b;
  assert_int_equal(arw_batch_new(&b, *as), 0);
  for (int64_t j = 0; j < N; j++) {
    char txt[24];
    int n = snprintf(txt, sizeof txt, "k%lld", (long long)(j / 3));
    if (j == 7) arw_append_null(b, id);
    else arw_append_i64(b, id, j / 3 * (1 << 20));
    arw_append_str(b, sc, txt, (size_t)n);
  }
  return b;
}

/* The serialized key (id, "k<id>") of a probe. */
static void probe_key(dd_buf *out, int64_t k) {
  char txt[24];
  int32_t n = snprintf(txt, sizeof txt, "k%lld", (long long)k);
  int64_t v = k * (1 << 20);
  out->len = 0;
  dd_buf_put(out, &v, 8);
  dd_buf_put(out, &n, 4);
  dd_buf_put(out, txt, (size_t)n);
}

static void test_lookup(void **state) {
  (void)state;
  arw_schema *as;
  arw_batch *b = keys(&as);
  dml__keyidx k;
  assert_int_equal(dml__keyidx_build(&k, b), 0);
  dd_buf key = {0};
  for (int64_t p = -5; p < N / 3 + 50; p++) {
    probe_key(&key, p);
    const uint8_t *kp = (const uint8_t *)key.p;
    int64_t want[3], nw = 0;
    for (int64_t j = 3 * p + 2; p >= 0 && j >= 3 * p; j--) /* key p's rows, last first */
      if (j < N && j != 7) want[nw++] = j;
    int64_t got = 0;
    for (int64_t j = dml__keyidx_first(&k, kp, key.len); j >= 0; j = dml__keyidx_next(&k, j, kp, key.len)) {
      assert_true(got < nw);
      assert_int_equal(j, want[got++]);
    }
    assert_int_equal(got, nw);
  }
  /* the serialized key of a source row finds that row's key */
  dd_buf row = {0};
  bool null = false;
  assert_int_equal(dml__key_row(&row, b, 7, &null), 0);
  assert_true(null);
  row.len = 0;
  assert_int_equal(dml__key_row(&row, b, 100, &null), 0);
  assert_false(null);
  assert_int_equal(dml__keyidx_first(&k, (const uint8_t *)row.p, row.len), 101);
  dd_buf_free(&row);
  dd_buf_free(&key);
  dml__keyidx_free(&k);
  arw_batch_free(b);
  arw_schema_free(as);
}

static void test_empty(void **state) {
  (void)state;
  arw_schema *as;
  arw_batch *b;
  int id;
  assert_int_equal(arw_schema_new(&as), 0);
  arw_schema_add(as, ARW_ROOT, "id", ARW_INT64, true, &id);
  assert_int_equal(arw_batch_new(&b, as), 0);
  dml__keyidx k;
  assert_int_equal(dml__keyidx_build(&k, b), 0);
  int64_t v = 1;
  assert_int_equal(dml__keyidx_first(&k, (const uint8_t *)&v, 8), -1);
  dml__keyidx_free(&k);
  arw_batch_free(b);
  arw_schema_free(as);
}

int main(void) {
  const struct CMUnitTest tests[] = {cmocka_unit_test(test_lookup), cmocka_unit_test(test_empty)};
  return cmocka_run_group_tests(tests, NULL, NULL);
}
