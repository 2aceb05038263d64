/* test_fb.c: the flatbuffer builder of dd_arrow (store/arrow/fb.c): tables, defaults,
 * strings, vectors, nesting, growth and alignment, checked by reading the result back
 * with the independent reader in fbread.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>

#include "store/arrow/fb.h"
#include "tests/unit/arrow/fbread.h"

static void test_table_scalars_and_string(void **state) {
  (void)state;
  arw_fb b = ARW_FB_INIT;
  arw_fb_ref s, t;
  const uint8_t *buf;
  size_t len;
  assert_int_equal(arw_fb_string(&b, "hi", 2, &s), 0);
  assert_int_equal(arw_fb_table_start(&b), 0);
  assert_int_equal(arw_fb_add_u8(&b, 1, 3, 0), 0);
  assert_int_equal(arw_fb_add_i64(&b, 3, 0x0102030405060708LL, 0), 0);
  assert_int_equal(arw_fb_add_ref(&b, 2, s), 0);
  assert_int_equal(arw_fb_add_i16(&b, 0, 4, 0), 0);
  assert_int_equal(arw_fb_add_bool(&b, 4, false, false), 0); /* default: left out */
  assert_int_equal(arw_fb_table_end(&b, &t), 0);
  assert_int_equal(arw_fb_finish(&b, t, &buf, &len), 0);

  assert_int_equal(len % 8, 0);
  size_t root = fb_root(buf);
  assert_int_equal(root % 4, 0);
  size_t vt = fb_vtable(buf, root);
  assert_int_equal(rd_u16(buf, vt), 4 + 2 * 4); /* slots 0..3 */
  assert_int_equal(rd_u16(buf, fb_field(buf, root, 0)), 4);
  assert_int_equal(buf[fb_field(buf, root, 1)], 3);
  assert_true(fb_str_eq(buf, fb_ref(buf, root, 2), "hi"));
  size_t f64 = fb_field(buf, root, 3);
  assert_int_equal(f64 % 8, 0);
  assert_int_equal(rd_i64(buf, f64), 0x0102030405060708LL);
  assert_int_equal(fb_field(buf, root, 4), 0);
  assert_int_equal(fb_field(buf, root, 9), 0); /* beyond the vtable: absent */
  arw_fb_free(&b);
}

static void test_defaults(void **state) {
  (void)state;
  arw_fb b = ARW_FB_INIT;
  arw_fb_ref t;
  const uint8_t *buf;
  size_t len;
  assert_int_equal(arw_fb_table_start(&b), 0);
  assert_int_equal(arw_fb_add_i32(&b, 0, 0, 0), 0);  /* equals default: omitted */
  assert_int_equal(arw_fb_add_i16(&b, 1, 0, 1), 0);  /* 0 with default 1: written */
  assert_int_equal(arw_fb_table_end(&b, &t), 0);
  assert_int_equal(arw_fb_finish(&b, t, &buf, &len), 0);
  size_t root = fb_root(buf);
  assert_int_equal(fb_field(buf, root, 0), 0);
  size_t f = fb_field(buf, root, 1);
  assert_int_not_equal(f, 0);
  assert_int_equal(rd_u16(buf, f), 0);
  arw_fb_free(&b);
}

static void test_vectors(void **state) {
  (void)state;
  arw_fb b = ARW_FB_INIT;
  arw_fb_ref s0, s1, refs, structs, t;
  const uint8_t *buf;
  size_t len;
  uint8_t elems[3 * 16];
  for (size_t i = 0; i < sizeof elems; i++) elems[i] = (uint8_t)i;
  assert_int_equal(arw_fb_string(&b, "a", 1, &s0), 0); /* odd sizes to disturb alignment */
  assert_int_equal(arw_fb_vec_structs(&b, elems, 16, 3, 8, &structs), 0);
  assert_int_equal(arw_fb_string(&b, "bcdef", 5, &s1), 0);
  arw_fb_ref both[2] = {s0, s1};
  assert_int_equal(arw_fb_vec_refs(&b, both, 2, &refs), 0);
  assert_int_equal(arw_fb_table_start(&b), 0);
  assert_int_equal(arw_fb_add_ref(&b, 0, refs), 0);
  assert_int_equal(arw_fb_add_ref(&b, 1, structs), 0);
  assert_int_equal(arw_fb_table_end(&b, &t), 0);
  assert_int_equal(arw_fb_finish(&b, t, &buf, &len), 0);
  assert_int_equal(len % 8, 0);
  size_t root = fb_root(buf);
  size_t v = fb_ref(buf, root, 0);
  assert_int_equal(fb_vec_len(buf, v), 2);
  assert_true(fb_str_eq(buf, fb_vec_ref(buf, v, 0), "a"));
  assert_true(fb_str_eq(buf, fb_vec_ref(buf, v, 1), "bcdef"));
  size_t sv = fb_ref(buf, root, 1);
  assert_int_equal(fb_vec_len(buf, sv), 3);
  assert_int_equal(fb_vec_elem(sv, 0, 16) % 8, 0); /* elements 8-aligned, length just before */
  assert_memory_equal(buf + fb_vec_elem(sv, 0, 16), elems, sizeof elems);
  arw_fb_free(&b);
}

static void test_empty_vector_and_nested_tables(void **state) {
  (void)state;
  arw_fb b = ARW_FB_INIT;
  arw_fb_ref empty, inner, outer;
  const uint8_t *buf;
  size_t len;
  assert_int_equal(arw_fb_vec_refs(&b, NULL, 0, &empty), 0);
  assert_int_equal(arw_fb_table_start(&b), 0);
  assert_int_equal(arw_fb_add_i32(&b, 0, -7, 0), 0);
  assert_int_equal(arw_fb_add_ref(&b, 1, empty), 0);
  assert_int_equal(arw_fb_table_end(&b, &inner), 0);
  assert_int_equal(arw_fb_table_start(&b), 0);
  assert_int_equal(arw_fb_add_ref(&b, 2, inner), 0);
  assert_int_equal(arw_fb_table_end(&b, &outer), 0);
  assert_int_equal(arw_fb_finish(&b, outer, &buf, &len), 0);
  size_t root = fb_root(buf);
  size_t in = fb_ref(buf, root, 2);
  assert_int_not_equal(in, 0);
  assert_int_equal((int32_t)rd_u32(buf, fb_field(buf, in, 0)), -7);
  assert_int_equal(fb_vec_len(buf, fb_ref(buf, in, 1)), 0);
  arw_fb_free(&b);
}

/* Enough data to move the buffer several times; every string must survive the moves. */
static void test_growth(void **state) {
  (void)state;
  enum { N = 2000 };
  arw_fb b = ARW_FB_INIT;
  static arw_fb_ref refs[N];
  char s[32];
  for (int i = 0; i < N; i++) {
    int n = snprintf(s, sizeof s, "string-%d", i);
    assert_int_equal(arw_fb_string(&b, s, (size_t)n, &refs[i]), 0);
  }
  arw_fb_ref vec, t;
  const uint8_t *buf;
  size_t len;
  assert_int_equal(arw_fb_vec_refs(&b, refs, N, &vec), 0);
  assert_int_equal(arw_fb_table_start(&b), 0);
  assert_int_equal(arw_fb_add_ref(&b, 0, vec), 0);
  assert_int_equal(arw_fb_table_end(&b, &t), 0);
  assert_int_equal(arw_fb_finish(&b, t, &buf, &len), 0);
  size_t v = fb_ref(buf, fb_root(buf), 0);
  assert_int_equal(fb_vec_len(buf, v), N);
  for (int i = 0; i < N; i += 97) {
    snprintf(s, sizeof s, "string-%d", i);
    assert_true(fb_str_eq(buf, fb_vec_ref(buf, v, (size_t)i), s));
  }
  arw_fb_free(&b);
  arw_fb_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_table_scalars_and_string),
      cmocka_unit_test(test_defaults),
      cmocka_unit_test(test_vectors),
      cmocka_unit_test(test_empty_vector_and_nested_tables),
      cmocka_unit_test(test_growth),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
