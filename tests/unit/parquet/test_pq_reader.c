/* test_pq_reader.c: Parquet files read by ranges (pq_file_open_reader), as scans read data
 * files in object storage. A file of three row groups (an id and a string column) made by
 * the writer is read through a callback over its bytes that counts what it is asked for:
 * the values must equal those of the same file opened in memory; decoding one column reads
 * the footer and that column's chunks only; a footer longer than the first read (large
 * key-value metadata) takes a second read; a file below 64 KiB is one read; a failing read
 * or a wrong size is an error, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/parquet/pq.h"

#define ROWS 30000
#define RGS 3

static const pq_wfield COLS[] = {
    {"id", PQ_W_INT64, false, 0, 0, 0, NULL},
    {"s", PQ_W_STRING, false, 0, 0, 0, NULL},
};
static const pq_wfield ROOT = {"schema", PQ_W_STRUCT, false, 0, 0, 2, COLS};

typedef struct src {
  const uint8_t *p;
  size_t len;
  size_t calls, bytes;
  int fail_at; /* the call that fails (1-based), 0: none */
} src;

static int src_read(void *ctx, uint64_t off, size_t len, uint8_t *out) {
  src *s = ctx;
  s->calls++;
  if (s->fail_at && (int)s->calls == s->fail_at) return dd_err_set(DD_EIO, "read refused by the test");
  if (off > s->len || len > s->len - off) return dd_err_set(DD_ECORRUPT, "read past the end");
  memcpy(out, s->p + off, len);
  s->bytes += len;
  return 0;
}

/* A file of rows rows in rgs row groups; kv_bytes of key-value metadata (0: none). */
static uint8_t *make_file(size_t rows, size_t rgs, size_t kv_bytes, size_t *len) {
  pq_writer_opts o = PQ_WRITER_OPTS_INIT;
  o.row_group_rows = 1 << 30;
  pq_writer *w = NULL;
  assert_int_equal(pq_writer_open_mem(&w, &ROOT, &o), 0);
  int64_t *ids = malloc(rows * sizeof *ids);
  int32_t *off = malloc((rows + 1) * sizeof *off);
  char *bytes = malloc(rows * 16);
  size_t per = rows / rgs;
  for (size_t g = 0; g < rgs; g++) {
    off[0] = 0;
    for (size_t r = 0; r < per; r++) {
      size_t i = g * per + r;
      ids[r] = (int64_t)i;
      off[r + 1] = off[r] + snprintf(bytes + off[r], 16, "v%09zu", i * 7919 % 1000003);
    }
    assert_int_equal(pq_writer_put_levels(w, 0, NULL, NULL, per), 0);
    assert_int_equal(pq_writer_put_fixed(w, 0, ids, per), 0);
    assert_int_equal(pq_writer_put_levels(w, 1, NULL, NULL, per), 0);
    assert_int_equal(pq_writer_put_bytes(w, 1, (const uint8_t *)bytes, off, per), 0);
    assert_int_equal(pq_writer_end_rows(w, per), 0);
    assert_int_equal(pq_writer_flush_row_group(w), 0);
  }
  if (kv_bytes) {
    char *v = malloc(kv_bytes + 1);
    memset(v, 'x', kv_bytes);
    v[kv_bytes] = 0;
    assert_int_equal(pq_writer_add_kv(w, "big", v), 0);
    free(v);
  }
  uint8_t *buf = NULL;
  assert_int_equal(pq_writer_close(w, &buf, len), 0);
  pq_writer_free(w);
  free(ids);
  free(off);
  free(bytes);
  return buf;
}

/* Column col of every row group of a and b decodes to the same values. */
static void same_column(const pq_file *a, const pq_file *b, size_t col) {
  assert_int_equal(pq_file_num_row_groups(a), pq_file_num_row_groups(b));
  for (size_t rg = 0; rg < pq_file_num_row_groups(a); rg++) {
    pq_column *x = NULL, *y = NULL;
    assert_int_equal(pq_column_read(&x, a, rg, col), 0);
    assert_int_equal(pq_column_read(&y, b, rg, col), 0);
    assert_int_equal(x->num_values, y->num_values);
    for (size_t i = 0; i < x->num_values; i++) {
      if (col == 0) {
        assert_int_equal(x->i64[i], y->i64[i]);
      } else {
        assert_int_equal(x->ba[i].len, y->ba[i].len);
        assert_memory_equal(x->ba[i].ptr, y->ba[i].ptr, x->ba[i].len);
      }
    }
    pq_column_free(x);
    pq_column_free(y);
  }
}

static void test_projected_reads(void **state) {
  (void)state;
  size_t len = 0;
  uint8_t *buf = make_file(ROWS, RGS, 0, &len);
  assert_true(len > (256u << 10));
  pq_file *mem = NULL, *rd = NULL;
  assert_int_equal(pq_file_open_mem(&mem, buf, len), 0);
  src s = {buf, len, 0, 0, 0};
  assert_int_equal(pq_file_open_reader(&rd, src_read, &s, len), 0);
  assert_int_equal(s.calls, 1); /* the footer came with the first read */
  assert_int_equal(s.bytes, 64u << 10);
  assert_int_equal(pq_file_num_rows(rd), ROWS);
  same_column(mem, rd, 0);
  int64_t want = 64 << 10, strings = 0; /* the tail, then each id chunk */
  for (size_t rg = 0; rg < RGS; rg++) {
    pq_chunk_info ci;
    assert_int_equal(pq_chunk_get(&ci, rd, rg, 0), 0);
    want += ci.total_compressed_size;
    assert_int_equal(pq_chunk_get(&ci, rd, rg, 1), 0);
    strings += ci.total_compressed_size;
  }
  assert_int_equal(s.calls, 1 + RGS);
  assert_int_equal((int64_t)s.bytes, want);
  assert_true(strings > (64 << 10)); /* ... and not the strings (beyond the tail) */
  assert_true((int64_t)s.bytes + strings <= (int64_t)len + (64 << 10));
  same_column(mem, rd, 1); /* values point into the column's own copy of its chunk */
  assert_int_equal(s.calls, 1 + 2 * RGS);
  pq_file_free(rd);
  pq_file_free(mem);
  free(buf);
}

static void test_long_footer_and_small_file(void **state) {
  (void)state;
  size_t len = 0;
  uint8_t *buf = make_file(3000, 1, 100000, &len); /* footer above 64 KiB */
  pq_file *rd = NULL;
  src s = {buf, len, 0, 0, 0};
  assert_int_equal(pq_file_open_reader(&rd, src_read, &s, len), 0);
  assert_int_equal(s.calls, 2);
  const char *k = NULL, *v = NULL;
  pq_file_kv(rd, 0, &k, &v);
  assert_string_equal(k, "big");
  assert_int_equal(strlen(v), 100000);
  pq_file *mem = NULL;
  assert_int_equal(pq_file_open_mem(&mem, buf, len), 0);
  same_column(mem, rd, 1);
  pq_file_free(mem);
  pq_file_free(rd);
  free(buf);
  buf = make_file(300, 1, 0, &len); /* below 64 KiB: one read, then memory */
  src t = {buf, len, 0, 0, 0};
  assert_int_equal(pq_file_open_reader(&rd, src_read, &t, len), 0);
  pq_column *c = NULL;
  assert_int_equal(pq_column_read(&c, rd, 0, 1), 0);
  assert_int_equal(c->num_values, 300);
  assert_int_equal(t.calls, 1);
  assert_int_equal(t.bytes, len);
  pq_column_free(c);
  pq_file_free(rd);
  free(buf);
}

static void test_errors(void **state) {
  (void)state;
  size_t len = 0;
  uint8_t *buf = make_file(ROWS, RGS, 0, &len);
  pq_file *rd = NULL;
  src s = {buf, len, 0, 0, 1};
  assert_int_equal(pq_file_open_reader(&rd, src_read, &s, len), DD_EIO);
  assert_null(rd);
  src t = {buf, len, 0, 0, 2}; /* the footer reads, the first chunk does not */
  assert_int_equal(pq_file_open_reader(&rd, src_read, &t, len), 0);
  pq_column *c = NULL;
  assert_int_equal(pq_column_read(&c, rd, 0, 1), DD_EIO);
  assert_non_null(strstr(dd_err_msg(), "read refused by the test"));
  assert_null(c);
  pq_file_free(rd);
  src u = {buf, len, 0, 0, 0}; /* a size too small: the tail is no footer */
  assert_int_equal(pq_file_open_reader(&rd, src_read, &u, len - 100), DD_ECORRUPT);
  src v = {buf, len, 0, 0, 0}; /* too large: the read goes past the end */
  assert_int_equal(pq_file_open_reader(&rd, src_read, &v, len + 100), DD_ECORRUPT);
  src w = {buf, 8, 0, 0, 0};
  assert_int_equal(pq_file_open_reader(&rd, src_read, &w, 8), DD_ECORRUPT);
  assert_int_equal(w.calls, 0);
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_projected_reads),
      cmocka_unit_test(test_long_footer_and_small_file),
      cmocka_unit_test(test_errors),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
