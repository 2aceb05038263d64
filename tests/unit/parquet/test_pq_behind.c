/* test_pq_behind.c: the writer's large row groups: encoded on two threads, and encoded
 * behind the caller (pq_writer_encode_behind) while the next row group is appended. The
 * file must be byte for byte the one written without encoding behind, its row groups in
 * order with every value read back; small pages exercise the page cuts of flat columns
 * (with and without nulls, dictionary and PLAIN) and of a list column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/parquet/pq.h"

#define BATCH 20000
#define BATCHES 22 /* 440,000 rows: three large row groups and a small one */
#define RG_BATCHES 7 /* a row group every 140,000 rows: about 5 MiB buffered */

static const pq_wfield ELEM = {"element", PQ_W_INT32, true, 0, 0, 0, NULL};
static const pq_wfield LIST_KIDS[] = {{"list", PQ_W_STRUCT, false, 0, 0, 1, &ELEM}};
static const pq_wfield COLS[] = {
    {"id", PQ_W_INT64, false, 0, 0, 0, NULL},     /* distinct: PLAIN */
    {"k", PQ_W_INT32, false, 0, 0, 0, NULL},      /* few values: dictionary */
    {"v", PQ_W_DOUBLE, true, 0, 0, 0, NULL},      /* nulls */
    {"s", PQ_W_STRING, true, 0, 0, 0, NULL},      /* distinct strings, nulls */
    {"t", PQ_W_STRING, false, 0, 0, 0, NULL},     /* dictionary strings */
    {"l", PQ_W_LIST, true, 0, 0, 1, LIST_KIDS},   /* repeated */
};
static const pq_wfield ROOT = {"schema", PQ_W_STRUCT, false, 0, 0, 6, COLS};

static void s_value(char *buf, size_t i) { snprintf(buf, 16, "s%09zu", (i * 7919) % 1000003); }

/* One batch of rows [lo, lo + BATCH) into every leaf (id, k, v, s, t, l.element). */
static void put_batch(pq_writer *w, size_t lo) {
  static int64_t ids[BATCH];
  static int32_t ks[BATCH], elems[3 * BATCH], soff[BATCH + 1], toff[BATCH + 1];
  static double vs[BATCH];
  static int16_t vdef[BATCH], sdef[BATCH], ldef[3 * BATCH], lrep[3 * BATCH];
  static uint8_t sbytes[BATCH * 16], tbytes[BATCH * 8];
  size_t nv = 0, ns = 0, nl = 0, ne = 0;
  soff[0] = toff[0] = 0;
  for (size_t r = 0; r < BATCH; r++) {
    size_t i = lo + r;
    ids[r] = (int64_t)i;
    ks[r] = (int32_t)(i % 37);
    vdef[r] = i % 11 != 0;
    if (vdef[r]) vs[nv++] = (double)i * 0.5;
    sdef[r] = i % 13 != 0;
    if (sdef[r]) {
      s_value((char *)sbytes + soff[ns], i);
      soff[ns + 1] = soff[ns] + 10;
      ns++;
    }
    int tl = snprintf((char *)tbytes + toff[r], 8, "tag%zu", i % 50);
    toff[r + 1] = toff[r] + tl;
    size_t len = i % 4; /* 0..3 elements; every 9th row a null list */
    if (i % 9 == 0) {
      ldef[nl] = 0;
      lrep[nl++] = 0;
    } else if (len == 0) {
      ldef[nl] = 1;
      lrep[nl++] = 0;
    } else {
      for (size_t e = 0; e < len; e++) {
        ldef[nl] = 3;
        lrep[nl++] = e ? 1 : 0;
        elems[ne++] = (int32_t)(i + e);
      }
    }
  }
  assert_int_equal(pq_writer_put_levels(w, 0, NULL, NULL, BATCH), 0);
  assert_int_equal(pq_writer_put_fixed(w, 0, ids, BATCH), 0);
  assert_int_equal(pq_writer_put_levels(w, 1, NULL, NULL, BATCH), 0);
  assert_int_equal(pq_writer_put_fixed(w, 1, ks, BATCH), 0);
  assert_int_equal(pq_writer_put_levels(w, 2, vdef, NULL, BATCH), 0);
  assert_int_equal(pq_writer_put_fixed(w, 2, vs, nv), 0);
  assert_int_equal(pq_writer_put_levels(w, 3, sdef, NULL, BATCH), 0);
  assert_int_equal(pq_writer_put_bytes(w, 3, sbytes, soff, ns), 0);
  assert_int_equal(pq_writer_put_levels(w, 4, NULL, NULL, BATCH), 0);
  assert_int_equal(pq_writer_put_bytes(w, 4, tbytes, toff, BATCH), 0);
  assert_int_equal(pq_writer_put_levels(w, 5, ldef, lrep, nl), 0);
  assert_int_equal(pq_writer_put_fixed(w, 5, elems, ne), 0);
  assert_int_equal(pq_writer_end_rows(w, BATCH), 0);
}

static uint8_t *write_file(bool behind, size_t *len, int64_t *written) {
  pq_writer_opts o = PQ_WRITER_OPTS_INIT;
  o.row_group_rows = 1 << 30; /* cut by hand */
  o.page_size = 64 * 1024;
  pq_writer *w = NULL;
  assert_int_equal(pq_writer_open_mem(&w, &ROOT, &o), 0);
  pq_writer_encode_behind(w, behind);
  for (size_t b = 0; b < BATCHES; b++) {
    put_batch(w, b * BATCH);
    if ((b + 1) % RG_BATCHES == 0) {
      assert_true(pq_writer_buffered_bytes(w) >= (4u << 20)); /* a large row group */
      assert_int_equal(pq_writer_flush_row_group(w), 0);
      assert_int_equal(pq_writer_buffered_bytes(w), 0);
    }
    if (b == 2 * RG_BATCHES + 1) { /* settled, the output is the one written without */
      assert_int_equal(pq_writer_settle(w), 0);
      written[0] = pq_writer_bytes_written(w);
    }
  }
  uint8_t *buf = NULL;
  assert_int_equal(pq_writer_close(w, &buf, len), 0);
  pq_writer_free(w);
  return buf;
}

static void check_values(const uint8_t *buf, size_t len) {
  pq_file *f = NULL;
  assert_int_equal(pq_file_open_mem(&f, buf, len), 0);
  assert_int_equal(pq_file_num_rows(f), BATCH * BATCHES);
  size_t nrg = pq_file_num_row_groups(f);
  assert_int_equal(nrg, BATCHES / RG_BATCHES + 1);
  size_t row = 0;
  for (size_t rg = 0; rg < nrg; rg++) {
    pq_column *id = NULL, *s = NULL, *l = NULL;
    assert_int_equal(pq_column_read(&id, f, rg, 0), 0);
    assert_int_equal(pq_column_read(&s, f, rg, 3), 0);
    assert_int_equal(pq_column_read(&l, f, rg, 5), 0);
    size_t sv = 0, le = 0, ev = 0;
    for (size_t r = 0; r < id->num_values; r++, row++) {
      assert_int_equal(id->i64[r], (int64_t)row); /* row groups in order */
      assert_int_equal(s->def[r], row % 13 != 0);
      if (row % 13 != 0) {
        char want[16];
        s_value(want, row);
        assert_int_equal(s->ba[sv].len, 10);
        assert_memory_equal(s->ba[sv].ptr, want, 10);
        sv++;
      }
      size_t n = row % 9 == 0 || row % 4 == 0 ? 1 : row % 4;
      for (size_t e = 0; e < n; e++, le++) {
        assert_int_equal(l->rep[le], e ? 1 : 0);
        assert_int_equal(l->def[le], row % 9 == 0 ? 0 : row % 4 == 0 ? 1 : 3);
        if (l->def[le] == 3) assert_int_equal(l->i32[ev++], (int32_t)(row + e));
      }
    }
    assert_int_equal(le, l->num_levels);
    assert_int_equal(ev, l->num_values);
    pq_column_free(id);
    pq_column_free(s);
    pq_column_free(l);
  }
  assert_int_equal(row, BATCH * BATCHES);
  pq_file_free(f);
}

static void test_behind_same_bytes(void **state) {
  (void)state;
  size_t la = 0, lb = 0;
  int64_t wa = 0, wb = 0;
  uint8_t *a = write_file(false, &la, &wa);
  uint8_t *b = write_file(true, &lb, &wb);
  assert_int_equal(la, lb);
  assert_memory_equal(a, b, la);
  assert_int_equal(wa, wb);
  assert_true(wa > 0);
  check_values(b, lb);
  free(a);
  free(b);
}

/* A writer freed with a row group still being encoded behind: no leak, no crash. */
static void test_behind_free_while_encoding(void **state) {
  (void)state;
  pq_writer_opts o = PQ_WRITER_OPTS_INIT;
  o.row_group_rows = 1 << 30;
  pq_writer *w = NULL;
  assert_int_equal(pq_writer_open_mem(&w, &ROOT, &o), 0);
  pq_writer_encode_behind(w, true);
  for (size_t b = 0; b < RG_BATCHES; b++) put_batch(w, b * BATCH);
  assert_int_equal(pq_writer_flush_row_group(w), 0);
  put_batch(w, RG_BATCHES * BATCH);
  pq_writer_free(w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_behind_same_bytes),
      cmocka_unit_test(test_behind_free_while_encoding),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
