/* test_pq_roundtrip.c: the writer, read back by the reader: nested structs, lists, maps,
 * nulls and empties, every codec, dictionary and PLAIN, several row groups, statistics,
 * key-value metadata, schema annotations, and rejection of rows that do not fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "store/parquet/pq.h"
#include "tests/unit/parquet/pq_sample.h"

static void write_sample(pq_codec codec, bool dict, int64_t rg_rows, long rows, uint8_t **buf,
                         size_t *len) {
  pq_writer_opts o = PQ_WRITER_OPTS_INIT;
  o.codec = codec;
  o.dictionary = dict;
  o.row_group_rows = rg_rows;
  o.page_size = 1024;
  pq_writer *w = NULL;
  pq_sample_row s;
  assert_int_equal(pq_writer_open_mem(&w, pq_sample_schema(), &o), 0);
  assert_int_equal(pq_writer_add_kv(w, "delta.k", "v"), 0);
  for (long i = 0; i < rows; i++) assert_int_equal(pq_writer_write_row(w, pq_sample_make(&s, i)), 0);
  assert_int_equal(pq_writer_close(w, buf, len), 0);
  pq_writer_free(w);
}

static void check_read_back(const uint8_t *buf, size_t len, long rows, int64_t rg_rows) {
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  pq_sample_row s;
  assert_int_equal(pq_file_open_mem(&f, buf, len), 0);
  assert_int_equal(pq_file_num_rows(f), rows);
  assert_int_equal(pq_file_num_row_groups(f), (size_t)((rows + rg_rows - 1) / rg_rows));
  assert_int_equal(pq_cursor_open(&c, f, NULL), 0);
  const pq_value *row;
  long i = 0;
  while (pq_cursor_next(c, &row) == 0 && row) {
    if (!pq_value_equal(row, pq_sample_make(&s, i))) fail_msg("row %ld differs", i);
    i++;
  }
  assert_int_equal(i, rows);
  pq_cursor_free(c);
  pq_file_free(f);
}

static void test_roundtrip_matrix(void **state) {
  (void)state;
  pq_codec codecs[] = {PQ_CODEC_UNCOMPRESSED, PQ_CODEC_SNAPPY, PQ_CODEC_GZIP, PQ_CODEC_ZSTD};
  for (size_t k = 0; k < 4; k++)
    for (int dict = 0; dict < 2; dict++) {
      uint8_t *buf;
      size_t len;
      write_sample(codecs[k], dict, 97, 500, &buf, &len);
      check_read_back(buf, len, 500, 97);
      free(buf);
    }
}

static void test_statistics_and_metadata(void **state) {
  (void)state;
  uint8_t *buf;
  size_t len;
  write_sample(PQ_CODEC_SNAPPY, true, 100, 250, &buf, &len);
  pq_file *f = NULL;
  assert_int_equal(pq_file_open_mem(&f, buf, len), 0);
  const pq_field *id = pq_file_find(f, "id"), *name = pq_file_find(f, "name");
  pq_chunk_info ci;
  assert_int_equal(pq_chunk_get(&ci, f, 1, (size_t)id->column), 0);
  assert_true(ci.has_stats && ci.stats.has_min_value && ci.stats.has_max_value);
  int64_t mn, mx;
  memcpy(&mn, ci.stats.min_value.ptr, 8);
  memcpy(&mx, ci.stats.max_value.ptr, 8);
  assert_int_equal(mn, 100);
  assert_int_equal(mx, 199);
  assert_true(ci.stats.has_min && ci.stats.has_null_count && ci.stats.null_count == 0);
  assert_true(ci.dictionary_page_offset > 0);
  assert_int_equal(pq_chunk_get(&ci, f, 0, (size_t)name->column), 0);
  assert_int_equal(ci.stats.null_count, 20); /* i % 5 == 1 for i < 100 */
  assert_int_equal(ci.stats.min_value.len, strlen("name-0 \"quoted\" \xc3\xa9"));
  assert_false(ci.stats.has_min); /* legacy fields only for numbers */
  assert_int_equal(pq_file_kv_count(f), 1);
  const char *k, *v;
  pq_file_kv(f, 0, &k, &v);
  assert_string_equal(k, "delta.k");
  assert_string_equal(v, "v");
  assert_true(name->is_string && name->logical.kind == PQ_LT_STRING);
  assert_int_equal(pq_file_find(f, "tags")->shape, PQ_SHAPE_LIST);
  assert_int_equal(pq_file_find(f, "props")->shape, PQ_SHAPE_MAP);
  assert_int_equal(pq_file_find(f, "nested.m")->shape, PQ_SHAPE_MAP);
  const pq_field *ts = pq_file_find(f, "ts");
  assert_int_equal(ts->logical.kind, PQ_LT_TIMESTAMP);
  assert_int_equal(ts->logical.unit, PQ_UNIT_MICROS);
  assert_int_equal(ts->converted, PQ_CT_TIMESTAMP_MICROS);
  assert_int_equal(pq_file_find(f, "fixed")->type_length, 4);
  pq_file_free(f);
  free(buf);
}

/* Byte-array chunk statistics in unsigned byte order, where the writer compares 8-byte
 * prefixes first: a shared 8-byte prefix, a value that is another's prefix (with and
 * without a trailing NUL), bytes >= 0x80, the empty value, ties (the first wins). */
static void check_bytes_minmax(const char *const *vals, const size_t *lens, size_t n,
                               size_t want_min, size_t want_max) {
  static const pq_wfield col = {"b", PQ_W_BINARY, false, 0, 0, 0, NULL};
  static const pq_wfield root = {"schema", PQ_W_STRUCT, false, 0, 0, 1, &col};
  pq_writer *w = NULL;
  assert_int_equal(pq_writer_open_mem(&w, &root, NULL), 0);
  for (size_t i = 0; i < n; i++) {
    pq_value v = {.kind = PQ_V_BYTES, .len = (uint32_t)lens[i]};
    v.u.bytes = (const uint8_t *)vals[i];
    pq_value row = {.kind = PQ_V_STRUCT, .len = 1};
    row.u.items = &v;
    assert_int_equal(pq_writer_write_row(w, &row), 0);
  }
  uint8_t *buf;
  size_t len;
  assert_int_equal(pq_writer_close(w, &buf, &len), 0);
  pq_writer_free(w);
  pq_file *f = NULL;
  assert_int_equal(pq_file_open_mem(&f, buf, len), 0);
  pq_chunk_info ci;
  assert_int_equal(pq_chunk_get(&ci, f, 0, 0), 0);
  assert_true(ci.stats.has_min_value && ci.stats.has_max_value);
  assert_int_equal(ci.stats.min_value.len, lens[want_min]);
  assert_int_equal(ci.stats.max_value.len, lens[want_max]);
  if (lens[want_min]) assert_memory_equal(ci.stats.min_value.ptr, vals[want_min], lens[want_min]);
  if (lens[want_max]) assert_memory_equal(ci.stats.max_value.ptr, vals[want_max], lens[want_max]);
  pq_file_free(f);
  free(buf);
}

static void test_byte_array_min_max(void **state) {
  (void)state;
  const char *a[] = {"prefix12b", "prefix12", "prefix12\0", "prefix12a", "prefix12az"};
  const size_t al[] = {9, 8, 9, 9, 10};
  check_bytes_minmax(a, al, 5, 1, 0);
  const char *b[] = {"abc", "ab", "ab\0", "abc\x80", "abc\x7f", "\xff", "\xfe\xff\xff"};
  const size_t bl[] = {3, 2, 3, 4, 4, 1, 3};
  check_bytes_minmax(b, bl, 7, 1, 5);
  const char *c[] = {"same-long-value", "", "same-long-value", "same-long-valud"};
  const size_t cl[] = {15, 0, 15, 15};
  check_bytes_minmax(c, cl, 4, 1, 0);
  const char *d[] = {"12345678\x90", "12345678\x10", "123456789"};
  const size_t dl[] = {9, 9, 9};
  check_bytes_minmax(d, dl, 3, 1, 0);
}

static void test_projection_of_written_file(void **state) {
  (void)state;
  uint8_t *buf;
  size_t len;
  write_sample(PQ_CODEC_UNCOMPRESSED, false, 1000, 64, &buf, &len);
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  const char *cols[] = {"add.path", "nested.b"};
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = cols;
  o.num_columns = 2;
  assert_int_equal(pq_file_open_mem(&f, buf, len), 0);
  assert_int_equal(pq_cursor_open(&c, f, &o), 0);
  const pq_pnode *sch = pq_cursor_schema(c);
  assert_int_equal(sch->num_children, 2);
  assert_string_equal(sch->children[0].name, "nested");
  assert_int_equal(sch->children[0].num_children, 1);
  const pq_value *row;
  pq_sample_row s;
  long i = 0;
  while (pq_cursor_next(c, &row) == 0 && row) {
    const pq_value *want = pq_sample_make(&s, i);
    const pq_value *wn = &want->u.items[12], *wa = &want->u.items[13];
    const pq_value *gn = &row->u.items[0], *ga = &row->u.items[1];
    assert_int_equal(gn->kind, wn->kind);
    if (wn->kind != PQ_V_NULL) assert_true(pq_value_equal(&gn->u.items[0], &wn->u.items[1]));
    assert_int_equal(ga->kind, wa->kind);
    if (wa->kind != PQ_V_NULL) assert_true(pq_value_equal(&ga->u.items[0], &wa->u.items[0]));
    i++;
  }
  assert_int_equal(i, 64);
  pq_cursor_free(c);
  pq_file_free(f);
  free(buf);
}

static bool same_column(const pq_column *a, const pq_column *b) {
  if (a->num_levels != b->num_levels || a->num_values != b->num_values) return false;
  if ((a->def && memcmp(a->def, b->def, a->num_levels * sizeof *a->def)) ||
      (a->rep && memcmp(a->rep, b->rep, a->num_levels * sizeof *a->rep)))
    return false;
  for (size_t i = 0; i < a->num_values; i++) {
    switch (a->field->type) {
      case PQ_T_BYTE_ARRAY:
        if (a->ba[i].len != b->ba[i].len || memcmp(a->ba[i].ptr, b->ba[i].ptr, a->ba[i].len))
          return false;
        break;
      case PQ_T_INT64: if (a->i64[i] != b->i64[i]) return false; break;
      case PQ_T_INT32: if (a->i32[i] != b->i32[i]) return false; break;
      case PQ_T_BOOLEAN: if (a->b[i] != b->b[i]) return false; break;
      default: break;
    }
  }
  return true;
}

/* pq_column_reread into a column from another row group (or another leaf) decodes what a
 * fresh pq_column_read does. */
static void test_column_reread(void **state) {
  (void)state;
  uint8_t *buf;
  size_t len;
  write_sample(PQ_CODEC_SNAPPY, true, 70, 300, &buf, &len);
  pq_file *f = NULL;
  assert_int_equal(pq_file_open_mem(&f, buf, len), 0);
  size_t nrg = pq_file_num_row_groups(f), ncol = pq_file_num_columns(f);
  assert_true(nrg >= 4);
  for (size_t col = 0; col < ncol; col++) {
    pq_column *reused = NULL;
    assert_int_equal(pq_column_read(&reused, f, nrg - 1, col), 0); /* the short last group first */
    for (size_t rg = 0; rg < nrg; rg++) {
      pq_column *fresh = NULL;
      assert_int_equal(pq_column_read(&fresh, f, rg, col), 0);
      assert_int_equal(pq_column_reread(reused, f, rg, col), 0);
      if (!same_column(fresh, reused)) fail_msg("column %zu row group %zu differs", col, rg);
      pq_column_free(fresh);
    }
    size_t other = (col + 1) % ncol; /* another leaf in the same column object */
    pq_column *fresh = NULL;
    assert_int_equal(pq_column_read(&fresh, f, 1, other), 0);
    assert_int_equal(pq_column_reread(reused, f, 1, other), 0);
    assert_true(same_column(fresh, reused));
    assert_int_equal(pq_column_reread(reused, f, nrg, col), DD_EINVAL);
    pq_column_free(fresh);
    pq_column_free(reused);
  }
  pq_file_free(f);
  free(buf);
}

static void test_rejects_bad_rows(void **state) {
  (void)state;
  pq_writer *w = NULL;
  assert_int_equal(pq_writer_open_mem(&w, pq_sample_schema(), NULL), 0);
  pq_sample_row s;
  pq_value *items = (pq_value *)pq_sample_make(&s, 3)->u.items;
  items[0].kind = PQ_V_NULL; /* id is required */
  assert_int_equal(pq_writer_write_row(w, &s.row), DD_EINVAL);
  pq_sample_make(&s, 3);
  items[1] = (pq_value){.kind = PQ_V_INT32};
  assert_int_equal(pq_writer_write_row(w, &s.row), DD_EINVAL);
  assert_int_equal(pq_writer_write_row(w, pq_sample_make(&s, 0)), 0);
  uint8_t *buf;
  size_t len;
  assert_int_equal(pq_writer_close(w, &buf, &len), 0);
  pq_writer_free(w);
  check_read_back(buf, len, 1, 1); /* the rejected rows left nothing behind */
  free(buf);
  pq_wfield bad = {"root", PQ_W_LIST, false, 0, 0, 0, NULL};
  assert_int_equal(pq_writer_open_mem(&w, &bad, NULL), DD_EINVAL);
  pq_writer_free(NULL);
}

static void test_path_writer_and_empty_file(void **state) {
  (void)state;
  char path[] = "/tmp/pq_rt_XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  pq_writer *w = NULL;
  assert_int_equal(pq_writer_open_path(&w, path, pq_sample_schema(), NULL), 0);
  assert_int_equal(pq_writer_close(w, NULL, NULL), 0);
  pq_writer_free(w);
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  assert_int_equal(pq_file_open_path(&f, path), 0);
  assert_int_equal(pq_file_num_rows(f), 0);
  assert_int_equal(pq_cursor_open(&c, f, NULL), 0);
  const pq_value *row;
  assert_int_equal(pq_cursor_next(c, &row), 0);
  assert_null(row);
  pq_cursor_free(c);
  pq_file_free(f);
  unlink(path);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_roundtrip_matrix),
      cmocka_unit_test(test_statistics_and_metadata),
      cmocka_unit_test(test_byte_array_min_max),
      cmocka_unit_test(test_projection_of_written_file),
      cmocka_unit_test(test_rejects_bad_rows),
      cmocka_unit_test(test_column_reread),
      cmocka_unit_test(test_path_writer_and_empty_file),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
