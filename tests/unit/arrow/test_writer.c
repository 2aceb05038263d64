/* test_writer.c: the Arrow IPC stream framing and message contents written by dd_arrow
 * (store/arrow/writer.c, batch.c, schema.c): continuation markers, 8-byte alignment of
 * metadata, body and every buffer, the Message/Schema/RecordBatch flatbuffers (read back
 * with fbread.h), validity bitmaps and values, and the errors callers get for misuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow.h"
#include "tests/unit/arrow/fbread.h"

/* One framed message of a stream. */
typedef struct msg {
  const uint8_t *meta; /* the Message flatbuffer */
  size_t meta_len;     /* including padding */
  const uint8_t *body;
  int64_t body_len;
  size_t header;       /* position of the header table in meta */
  int header_type;
} msg;

/* Parses the message at *pos, checking framing and alignment, and advances *pos. */
static void read_msg(const arw_buf *s, size_t *pos, msg *m) {
  assert_int_equal(*pos % 8, 0);
  assert_true(*pos + 8 <= s->len);
  assert_int_equal(rd_u32(s->data, *pos), 0xFFFFFFFFu);
  m->meta_len = rd_u32(s->data, *pos + 4);
  assert_int_equal((8 + m->meta_len) % 8, 0);
  m->meta = s->data + *pos + 8;
  size_t root = fb_root(m->meta);
  assert_int_equal(rd_u16(m->meta, fb_field(m->meta, root, 0)), 4); /* MetadataVersion V5 */
  m->header_type = m->meta[fb_field(m->meta, root, 1)];
  m->header = fb_ref(m->meta, root, 2);
  size_t bl = fb_field(m->meta, root, 3);
  m->body_len = bl ? rd_i64(m->meta, bl) : 0;
  assert_int_equal(m->body_len % 8, 0);
  m->body = m->meta + m->meta_len;
  *pos += 8 + m->meta_len + (size_t)m->body_len;
  assert_true(*pos <= s->len);
}

static void test_eos(void **state) {
  (void)state;
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_eos(&out), 0);
  assert_int_equal(out.len, 8);
  assert_memory_equal(out.data, "\xff\xff\xff\xff\0\0\0\0", 8);
  arw_buf_free(&out);
}

static void test_schema_message(void **state) {
  (void)state;
  arw_schema *s;
  int id, tags, date, ts;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "id", ARW_INT64, false, &id), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "tags", ARW_LIST, true, &tags), 0);
  assert_int_equal(arw_schema_add(s, tags, "element", ARW_UTF8, true, NULL), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "d", ARW_DATE32, true, &date), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "ts", ARW_TIMESTAMP_UTC, true, &ts), 0);
  assert_int_equal(arw_schema_ncolumns(s), 4);
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_schema(&out, s), 0);
  size_t pos = 0;
  msg m;
  read_msg(&out, &pos, &m);
  assert_int_equal(pos, out.len);
  assert_int_equal(m.header_type, 1); /* Schema */
  assert_int_equal(m.body_len, 0);
  const uint8_t *b = m.meta;
  size_t fields = fb_ref(b, m.header, 1);
  assert_int_equal(fb_vec_len(b, fields), 4);
  /* id: Int{64, signed}, not nullable */
  size_t f0 = fb_vec_ref(b, fields, 0);
  assert_true(fb_str_eq(b, fb_ref(b, f0, 0), "id"));
  assert_int_equal(fb_field(b, f0, 1), 0);
  assert_int_equal(b[fb_field(b, f0, 2)], 2);
  size_t t0 = fb_ref(b, f0, 3);
  assert_int_equal(rd_u32(b, fb_field(b, t0, 0)), 64);
  assert_int_equal(b[fb_field(b, t0, 1)], 1);
  /* tags: List with one Utf8 child */
  size_t f1 = fb_vec_ref(b, fields, 1);
  assert_int_equal(b[fb_field(b, f1, 1)], 1);
  assert_int_equal(b[fb_field(b, f1, 2)], 12);
  size_t kids = fb_ref(b, f1, 5);
  assert_int_equal(fb_vec_len(b, kids), 1);
  size_t el = fb_vec_ref(b, kids, 0);
  assert_true(fb_str_eq(b, fb_ref(b, el, 0), "element"));
  assert_int_equal(b[fb_field(b, el, 2)], 5);
  /* d: Date with unit DAY written explicitly (the schema default is MILLISECOND) */
  size_t f2 = fb_vec_ref(b, fields, 2);
  assert_int_equal(b[fb_field(b, f2, 2)], 8);
  size_t du = fb_field(b, fb_ref(b, f2, 3), 0);
  assert_int_not_equal(du, 0);
  assert_int_equal(rd_u16(b, du), 0);
  /* ts: Timestamp{MICROSECOND, "UTC"} */
  size_t f3 = fb_vec_ref(b, fields, 3);
  assert_int_equal(b[fb_field(b, f3, 2)], 10);
  size_t t3 = fb_ref(b, f3, 3);
  assert_int_equal(rd_u16(b, fb_field(b, t3, 0)), 2);
  assert_true(fb_str_eq(b, fb_ref(b, t3, 1), "UTC"));
  arw_buf_free(&out);
  arw_schema_free(s);
}

/* Position of FieldNode / Buffer i of a RecordBatch header. */
static size_t node_at(const msg *m, size_t i) {
  return fb_vec_elem(fb_ref(m->meta, m->header, 1), i, 16);
}
static size_t buf_at(const msg *m, size_t i) {
  return fb_vec_elem(fb_ref(m->meta, m->header, 2), i, 16);
}

static void test_batch_message(void **state) {
  (void)state;
  arw_schema *s;
  arw_batch *bt;
  int name, n, ok;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "name", ARW_UTF8, true, &name), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "n", ARW_INT32, false, &n), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "ok", ARW_BOOL, true, &ok), 0);
  assert_int_equal(arw_batch_new(&bt, s), 0);
  assert_int_equal(arw_append_str(bt, name, "abc", 3), 0);
  assert_int_equal(arw_append_null(bt, name), 0);
  assert_int_equal(arw_append_str(bt, name, "de", 2), 0);
  for (int i = 0; i < 3; i++) assert_int_equal(arw_append_i32(bt, n, 10 * i - 1), 0);
  assert_int_equal(arw_append_bool(bt, ok, true), 0);
  assert_int_equal(arw_append_bool(bt, ok, false), 0);
  assert_int_equal(arw_append_bool(bt, ok, true), 0);
  assert_int_equal(arw_batch_rows(bt), 3);

  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_buf_put(&out, "12345678", 8), 0); /* stream already under way */
  assert_int_equal(arw_write_batch(&out, bt), 0);
  size_t pos = 8;
  msg m;
  read_msg(&out, &pos, &m);
  assert_int_equal(pos, out.len);
  assert_int_equal(m.header_type, 3); /* RecordBatch */
  assert_int_equal(rd_i64(m.meta, fb_field(m.meta, m.header, 0)), 3);
  assert_int_equal(fb_vec_len(m.meta, fb_ref(m.meta, m.header, 1)), 3);
  assert_int_equal(fb_vec_len(m.meta, fb_ref(m.meta, m.header, 2)), 3 + 2 + 2);
  for (size_t i = 0; i < 7; i++) {
    int64_t off = rd_i64(m.meta, buf_at(&m, i)), len = rd_i64(m.meta, buf_at(&m, i) + 8);
    assert_int_equal(off % 8, 0);
    assert_true(off + len <= m.body_len);
  }
  /* name: 3 slots, 1 null; bitmap 0b101; offsets 0,3,3,5; bytes "abcde" */
  assert_int_equal(rd_i64(m.meta, node_at(&m, 0)), 3);
  assert_int_equal(rd_i64(m.meta, node_at(&m, 0) + 8), 1);
  assert_int_equal(m.body[rd_i64(m.meta, buf_at(&m, 0))], 0x05);
  const uint8_t *offs = m.body + rd_i64(m.meta, buf_at(&m, 1));
  assert_int_equal(rd_i64(m.meta, buf_at(&m, 1) + 8), 16);
  assert_int_equal(rd_u32(offs, 4), 3);
  assert_int_equal(rd_u32(offs, 8), 3);
  assert_int_equal(rd_u32(offs, 12), 5);
  assert_memory_equal(m.body + rd_i64(m.meta, buf_at(&m, 2)), "abcde", 5);
  /* n: no nulls -> zero-length validity buffer; values -1, 9, 19 */
  assert_int_equal(rd_i64(m.meta, node_at(&m, 1) + 8), 0);
  assert_int_equal(rd_i64(m.meta, buf_at(&m, 3) + 8), 0);
  const uint8_t *vals = m.body + rd_i64(m.meta, buf_at(&m, 4));
  assert_int_equal((int32_t)rd_u32(vals, 0), -1);
  assert_int_equal((int32_t)rd_u32(vals, 8), 19);
  /* ok: value bits 0b101 */
  assert_int_equal(m.body[rd_i64(m.meta, buf_at(&m, 6))], 0x05);

  /* One-batch stream: schema, batch, end marker. */
  arw_buf one = ARW_BUF_INIT;
  size_t p1 = 0;
  assert_int_equal(arw_write_stream(&one, bt), 0);
  read_msg(&one, &p1, &m);
  assert_int_equal(m.header_type, 1);
  read_msg(&one, &p1, &m);
  assert_int_equal(m.header_type, 3);
  assert_int_equal(p1 + 8, one.len);
  assert_memory_equal(one.data + p1, "\xff\xff\xff\xff\0\0\0\0", 8);
  arw_buf_free(&one);

  /* Reuse: an empty batch is still a valid message. */
  arw_batch_clear(bt);
  assert_int_equal(arw_batch_rows(bt), 0);
  assert_int_equal(arw_write_batch(&out, bt), 0);
  read_msg(&out, &pos, &m);
  assert_int_equal(fb_field(m.meta, m.header, 0), 0); /* length 0: the default */
  arw_buf_free(&out);
  arw_batch_free(bt);
  arw_schema_free(s);
}

static void test_nested_layout(void **state) {
  (void)state;
  arw_schema *s;
  arw_batch *bt;
  int st, x, m, k, v;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "st", ARW_STRUCT, true, &st), 0);
  assert_int_equal(arw_schema_add(s, st, "x", ARW_INT64, false, &x), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "m", ARW_MAP, true, &m), 0);
  assert_int_equal(arw_schema_add(s, m, "key", ARW_UTF8, false, &k), 0);
  assert_int_equal(arw_schema_add(s, m, "value", ARW_UTF8, true, &v), 0);
  assert_int_equal(arw_batch_new(&bt, s), 0);
  assert_int_equal(arw_append_null(bt, st), 0); /* x gets a filler 0 */
  assert_int_equal(arw_append_i64(bt, x, 5), 0);
  assert_int_equal(arw_append_done(bt, st), 0);
  assert_int_equal(arw_append_str(bt, k, "a", 1), 0);
  assert_int_equal(arw_append_null(bt, v), 0);
  assert_int_equal(arw_append_done(bt, m), 0);
  assert_int_equal(arw_append_null(bt, m), 0);
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_batch(&out, bt), 0);
  size_t pos = 0;
  msg mm;
  read_msg(&out, &pos, &mm);
  /* pre-order nodes: st, x, m, entries, key, value */
  const int64_t want[6][2] = {{2, 1}, {2, 0}, {2, 1}, {1, 0}, {1, 0}, {1, 1}};
  assert_int_equal(fb_vec_len(mm.meta, fb_ref(mm.meta, mm.header, 1)), 6);
  for (size_t i = 0; i < 6; i++) {
    assert_int_equal(rd_i64(mm.meta, node_at(&mm, i)), want[i][0]);
    assert_int_equal(rd_i64(mm.meta, node_at(&mm, i) + 8), want[i][1]);
  }
  /* buffers: st 1, x 2, m 2, entries 1, key 3, value 3 */
  assert_int_equal(fb_vec_len(mm.meta, fb_ref(mm.meta, mm.header, 2)), 12);
  const uint8_t *xv = mm.body + rd_i64(mm.meta, buf_at(&mm, 2));
  assert_int_equal(rd_i64(xv, 0), 0);
  assert_int_equal(rd_i64(xv, 8), 5);
  arw_buf_free(&out);
  arw_batch_free(bt);
  arw_schema_free(s);
}

static void test_misuse(void **state) {
  (void)state;
  arw_schema *s;
  arw_batch *bt;
  int a, b, l, m;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "a", ARW_INT32, false, &a), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "b", ARW_UTF8, true, &b), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "l", ARW_LIST, true, &l), 0);
  assert_int_equal(arw_schema_add(s, l, "element", ARW_INT32, true, NULL), 0);
  assert_int_equal(arw_schema_add(s, l, "second", ARW_INT32, true, NULL), DD_EINVAL);
  assert_int_equal(arw_schema_add(s, a, "child", ARW_INT32, true, NULL), DD_EINVAL);
  assert_int_equal(arw_schema_add(s, 99, "orphan", ARW_INT32, true, NULL), DD_EINVAL);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "m", ARW_MAP, true, &m), 0);
  assert_int_equal(arw_schema_add(s, m, "key", ARW_UTF8, true, NULL), DD_EINVAL);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "x", ARW__ENTRIES, true, NULL), DD_EINVAL);
  assert_int_equal(arw_batch_new(&bt, s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "late", ARW_INT32, true, NULL), DD_EINVAL);
  assert_int_equal(arw_append_null(bt, a), DD_EINVAL);         /* not nullable */
  assert_int_equal(arw_append_str(bt, a, "x", 1), DD_EINVAL);  /* wrong type */
  assert_int_equal(arw_append_i64(bt, b, 1), DD_EINVAL);
  assert_int_equal(arw_append_done(bt, b), DD_EINVAL);
  assert_int_equal(arw_append_done(bt, m), DD_EINVAL);         /* map without key/value */
  assert_int_equal(arw_append_i32(bt, 1234, 1), DD_EINVAL);
  assert_int_equal(arw_append_i32(bt, a, 1), 0);
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_batch(&out, bt), DD_EINVAL); /* b, l, m have no rows */
  assert_non_null(strstr(dd_err_msg(), "'b'"));
  arw_batch_free(bt);
  arw_buf_free(&out);
  arw_schema_free(s);
}

static void test_dangling_child(void **state) {
  (void)state;
  arw_schema *s;
  arw_batch *bt;
  int l, e;
  assert_int_equal(arw_schema_new(&s), 0);
  assert_int_equal(arw_schema_add(s, ARW_ROOT, "l", ARW_LIST, true, &l), 0);
  assert_int_equal(arw_schema_add(s, l, "element", ARW_INT32, true, &e), 0);
  assert_int_equal(arw_batch_new(&bt, s), 0);
  assert_int_equal(arw_append_i32(bt, e, 1), 0);
  assert_int_equal(arw_append_done(bt, l), 0);
  assert_int_equal(arw_append_i32(bt, e, 2), 0); /* never closed by arw_append_done */
  arw_buf out = ARW_BUF_INIT;
  assert_int_equal(arw_write_batch(&out, bt), DD_EINVAL);
  assert_int_equal(arw_append_done(bt, l), 0);
  assert_int_equal(arw_write_batch(&out, bt), 0);
  arw_buf_free(&out);
  arw_batch_free(bt);
  arw_schema_free(s);
  arw_batch_free(NULL);
  arw_schema_free(NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_eos),
      cmocka_unit_test(test_schema_message),
      cmocka_unit_test(test_batch_message),
      cmocka_unit_test(test_nested_layout),
      cmocka_unit_test(test_misuse),
      cmocka_unit_test(test_dangling_child),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
