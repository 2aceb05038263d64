/* test_pq_encodings.c: the low-level encodings (hybrid RLE round trip and the spec's
 * examples, legacy BIT_PACKED, DELTA_BINARY_PACKED, LZ4_RAW-free codecs) and robustness:
 * every truncation and thousands of byte flips of a written file must give 0 or a clean
 * DD_E* error, never a crash or sanitizer report. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/parquet/pq_internal.h"
#include "tests/unit/parquet/pq_sample.h"

static void test_rle_roundtrip(void **state) {
  (void)state;
  uint32_t v[3000], back[3000];
  srand(7);
  for (int width = 1; width <= 20; width += 3) {
    for (size_t i = 0; i < 3000; i++)
      v[i] = (i / 100) % 3 == 0 ? 5u % (1u << width) : (uint32_t)rand() & ((1u << width) - 1);
    pq__buf b = {0};
    assert_int_equal(pq__rle_encode(&b, v, 3000, width), 0);
    assert_int_equal(pq__rle_decode(b.data, b.len, width, back, 3000), 0);
    assert_memory_equal(v, back, sizeof v);
    assert_int_equal(pq__rle_decode(b.data, b.len / 2, width, back, 3000), DD_ECORRUPT);
    pq__buf_free(&b);
  }
}

static void test_spec_examples(void **state) {
  (void)state;
  uint32_t out[8];
  const uint8_t hybrid[] = {0x03, 0x88, 0xc6, 0xfa}; /* 0..7, width 3, one group */
  assert_int_equal(pq__rle_decode(hybrid, sizeof hybrid, 3, out, 8), 0);
  for (uint32_t i = 0; i < 8; i++) assert_int_equal(out[i], i);
  const uint8_t legacy[] = {0x05, 0x39, 0x77}; /* 0..7, width 3, MSB first */
  size_t used;
  assert_int_equal(pq__bitpacked_decode(legacy, sizeof legacy, 3, out, 8, &used), 0);
  assert_int_equal(used, 3);
  for (uint32_t i = 0; i < 8; i++) assert_int_equal(out[i], i);
  const uint8_t run[] = {0x10, 0x07}; /* 8 copies of 7 */
  assert_int_equal(pq__rle_decode(run, sizeof run, 3, out, 8), 0);
  assert_int_equal(out[7], 7);
  assert_int_equal(pq__rle_decode(run, 1, 3, out, 8), DD_ECORRUPT);
  /* pq__rle_one_run: only a leading repeated run of at least count values */
  uint32_t v = 99;
  assert_true(pq__rle_one_run(run, sizeof run, 3, 8, &v));
  assert_int_equal(v, 7);
  assert_true(pq__rle_one_run(run, sizeof run, 3, 5, &v));
  assert_false(pq__rle_one_run(run, sizeof run, 3, 9, &v)); /* a shorter run */
  assert_false(pq__rle_one_run(run, 1, 3, 8, &v));          /* value missing */
  assert_false(pq__rle_one_run(hybrid, sizeof hybrid, 3, 8, &v)); /* bit-packed */
  const uint8_t wide[] = {0xe8, 0x0f, 0x34, 0x12}; /* 1012 copies of 0x1234, width 13 */
  assert_true(pq__rle_one_run(wide, sizeof wide, 13, 1000, &v));
  assert_int_equal(v, 0x1234);
  const uint8_t endless[] = {0x80, 0x80}; /* a header that never ends */
  assert_false(pq__rle_one_run(endless, sizeof endless, 1, 1, &v));
}

static void test_delta_binary_packed(void **state) {
  (void)state;
  /* block 128, 4 miniblocks, 5 values, first 1; min delta 1, all widths 0 */
  const uint8_t d[] = {0x80, 0x01, 0x04, 0x05, 0x02, 0x02, 0, 0, 0, 0};
  int64_t out[5];
  size_t used;
  assert_int_equal(pq__delta_decode(d, sizeof d, out, 5, &used), 0);
  for (int i = 0; i < 5; i++) assert_int_equal(out[i], i + 1);
  assert_int_equal(used, sizeof d);
  /* width 2 deltas: values 10, 11, 13, 16 (deltas 1,2,3 = min 1 + 0,1,2) */
  uint8_t e[64] = {0x80, 0x01, 0x04, 0x04, 0x14, 0x02, 2, 0, 0, 0};
  e[10] = 0x24; /* 0b00100100: 0,1,2 in 2-bit LSB groups */
  assert_int_equal(pq__delta_decode(e, 10 + 8, out, 4, &used), 0);
  assert_int_equal(out[0], 10);
  assert_int_equal(out[3], 16);
  assert_int_equal(pq__delta_decode(e, 12, out, 4, &used), DD_ECORRUPT);
}

static int read_everything(const uint8_t *buf, size_t len) {
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  int rc = pq_file_open_mem(&f, buf, len);
  if (!rc) rc = pq_cursor_open(&c, f, NULL);
  const pq_value *row;
  while (!rc && !(rc = pq_cursor_next(c, &row)) && row) {
  }
  pq_cursor_free(c);
  pq_file_free(f);
  return rc;
}

static void check_clean(int rc) {
  if (rc != 0 && rc != DD_ECORRUPT && rc != DD_EUNSUPPORTED && rc != DD_ENOMEM)
    fail_msg("unexpected code %d: %s", rc, dd_err_msg());
}

static uint8_t *sample(size_t *len, bool dict, pq_codec codec) {
  pq_writer_opts o = PQ_WRITER_OPTS_INIT;
  o.dictionary = dict;
  o.codec = codec;
  o.row_group_rows = 20;
  o.page_size = 256;
  pq_writer *w = NULL;
  pq_sample_row s;
  assert_int_equal(pq_writer_open_mem(&w, pq_sample_schema(), &o), 0);
  for (long i = 0; i < 45; i++) assert_int_equal(pq_writer_write_row(w, pq_sample_make(&s, i)), 0);
  uint8_t *buf;
  assert_int_equal(pq_writer_close(w, &buf, len), 0);
  pq_writer_free(w);
  return buf;
}

static void test_truncations_and_flips(void **state) {
  (void)state;
  for (int variant = 0; variant < 2; variant++) {
    size_t len;
    uint8_t *buf = sample(&len, variant == 0, variant ? PQ_CODEC_UNCOMPRESSED : PQ_CODEC_SNAPPY);
    assert_int_equal(read_everything(buf, len), 0);
    uint8_t *copy = malloc(len);
    for (size_t cut = 0; cut < len; cut += 7) { /* keep the tail: truncate the front part */
      memcpy(copy, buf, len);
      memmove(copy + cut / 2, copy + cut, len - cut);
      check_clean(read_everything(copy, len - cut + cut / 2));
      check_clean(read_everything(buf, cut));
    }
    srand(11 + variant);
    for (int k = 0; k < 1000; k++) {
      memcpy(copy, buf, len);
      for (int j = 0; j < 1 + k % 3; j++) copy[(size_t)rand() % len] ^= (uint8_t)(1 + rand() % 255);
      check_clean(read_everything(copy, len));
    }
    free(copy);
    free(buf);
  }
}

static void test_bad_footers(void **state) {
  (void)state;
  assert_int_equal(read_everything((const uint8_t *)"PAR1", 4), DD_ECORRUPT);
  const uint8_t huge_len[] = {'P', 'A', 'R', '1', 0, 0xff, 0xff, 0xff, 0x7f, 'P', 'A', 'R', '1'};
  assert_int_equal(read_everything(huge_len, sizeof huge_len), DD_ECORRUPT);
  /* a footer whose schema list claims 2^28 elements in 6 bytes */
  const uint8_t big_list[] = {'P', 'A', 'R', '1', 0x19, 0xfc, 0x80, 0x80, 0x80, 0x01, 0x00,
                              7, 0, 0, 0, 'P', 'A', 'R', '1'};
  assert_int_equal(read_everything(big_list, sizeof big_list), DD_ECORRUPT);
  const uint8_t enc[] = {'P', 'A', 'R', '1', 0, 0, 0, 0, 'P', 'A', 'R', 'E'};
  assert_int_equal(read_everything(enc, sizeof enc), DD_EUNSUPPORTED);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_rle_roundtrip),
      cmocka_unit_test(test_spec_examples),
      cmocka_unit_test(test_delta_binary_packed),
      cmocka_unit_test(test_truncations_and_flips),
      cmocka_unit_test(test_bad_footers),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
