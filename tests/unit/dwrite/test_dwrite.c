/* test_dwrite.c: the Delta data writer: Delta's string truncation for stats, the stats JSON
 * of a nested schema (physical names, nulls, indexed column limits, value formats), the
 * partition directory escaping, and a partitioned file written from an Arrow batch with
 * every flat kind plus a struct, a list and a map, read back by the Parquet reader; change
 * data files. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/dwrite/dw_int.h"

static void test_trunc(void **state) {
  (void)state;
  uint8_t out[64 * 4 + 8];
  bool ok;
  const char *s40 = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN";
  assert_int_equal(dw__trunc_min((const uint8_t *)s40, 40, 32), 32);
  size_t n = dw__trunc_max(out, (const uint8_t *)s40, 40, 32, &ok);
  assert_true(ok);
  assert_int_equal(n, 33); /* prefix + 0x7F: 'G' < 0x7F */
  assert_memory_equal(out, s40, 32);
  assert_int_equal(out[32], 0x7F);
  /* a short string is kept whole */
  n = dw__trunc_max(out, (const uint8_t *)"abc", 3, 32, &ok);
  assert_true(ok);
  assert_int_equal(n, 3);
  /* the 33rd character is not ASCII: U+10FFFF tops it */
  char s[80];
  memset(s, 'a', 32);
  memcpy(s + 32, "\xC3\xA9xyz", 5); /* é */
  n = dw__trunc_max(out, (const uint8_t *)s, 37, 32, &ok);
  assert_true(ok);
  assert_int_equal(n, 36);
  assert_memory_equal(out + 32, "\xF4\x8F\xBF\xBF", 4);
  /* a supplementary character straddling the limit is kept whole in the min */
  memset(s, 'a', 31);
  memcpy(s + 31, "\xF0\x9F\x98\x80zz", 6); /* U+1F600: two UTF-16 units */
  assert_int_equal(dw__trunc_min((const uint8_t *)s, 37, 32), 35);
  /* only U+10FFFF after the prefix, for longer than twice the prefix: no max */
  dd_buf b = {0};
  dd_buf_put(&b, s40, 32);
  for (int i = 0; i < 40; i++) dd_buf_put(&b, "\xF4\x8F\xBF\xBF", 4);
  dd_buf_put(&b, "q", 1);
  dw__trunc_max(out, (const uint8_t *)b.p, b.len, 32, &ok);
  assert_false(ok);
  dd_buf_free(&b);
}

static const char *SCHEMA =
    "{\"type\":\"struct\",\"fields\":["
    "{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"s\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"st\",\"type\":{\"type\":\"struct\",\"fields\":["
    "{\"name\":\"x\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"y\",\"type\":\"double\",\"nullable\":true,\"metadata\":{}}]},"
    "\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"arr\",\"type\":{\"type\":\"array\",\"elementType\":\"integer\","
    "\"containsNull\":true},\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"m\",\"type\":{\"type\":\"map\",\"keyType\":\"string\",\"valueType\":\"long\","
    "\"valueContainsNull\":true},\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"b\",\"type\":\"boolean\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"d\",\"type\":\"date\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"ts\",\"type\":\"timestamp\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"dec\",\"type\":\"decimal(10,2)\",\"nullable\":true,\"metadata\":{}},"
    "{\"name\":\"f\",\"type\":\"float\",\"nullable\":true,\"metadata\":{}}]}";

static void test_stats_json(void **state) {
  (void)state;
  dl_schema *sc;
  assert_int_equal(dl_schema_parse(&sc, SCHEMA, strlen(SCHEMA)), 0);
  const char *part[] = {"p"};
  dw__stats st;
  assert_int_equal(dw__stats_plan(&st, dl_schema_root(sc), part, 1, NULL), 0);
  assert_int_equal(st.n, 11); /* id s st.x st.y arr m b d ts dec f */
  dw__stat_int(&st.cols[0], 5);
  dw__stat_int(&st.cols[0], -3);
  st.cols[0].nulls = 1;
  dw__stat_str(&st.cols[1], (const uint8_t *)"m\"q", 3);
  dw__stat_str(&st.cols[1], (const uint8_t *)"abc", 3);
  dw__stat_int(&st.cols[2], 7);
  st.cols[3].nulls = 4; /* st.y: all null, no min/max */
  st.cols[4].nulls = 2;
  dw__stat_int(&st.cols[7], -1);           /* 1969-12-31 */
  dw__stat_int(&st.cols[7], 19723);        /* 2024-01-01 */
  dw__stat_int(&st.cols[8], 1704067200123456LL); /* 2024-01-01T00:00:00.123456Z */
  dw__stat_int(&st.cols[8], -1);                 /* 1969-12-31T23:59:59.999Z (floor) */
  dw__stat_dec(&st.cols[9], -5);   /* -0.05 */
  dw__stat_dec(&st.cols[9], 12345); /* 123.45 */
  dw__stat_real(&st.cols[10], 1.5);
  dw__stat_real(&st.cols[10], 0.0 / 0.0); /* NaN: no min/max for f */
  char *js = NULL;
  assert_int_equal(dw__stats_json(&js, &st, 4), 0);
  assert_string_equal(js,
      "{\"numRecords\":4,"
      "\"minValues\":{\"id\":-3,\"s\":\"abc\",\"st\":{\"x\":7},\"d\":\"1969-12-31\","
      "\"ts\":\"1969-12-31T23:59:59.999Z\",\"dec\":-0.05},"
      "\"maxValues\":{\"id\":5,\"s\":\"m\\\"q\",\"st\":{\"x\":7},\"d\":\"2024-01-01\","
      "\"ts\":\"2024-01-01T00:00:00.123Z\",\"dec\":123.45},"
      "\"nullCount\":{\"id\":1,\"s\":0,\"st\":{\"x\":0,\"y\":4},\"arr\":2,\"m\":0,\"b\":0,"
      "\"d\":0,\"ts\":0,\"dec\":0,\"f\":0}}");
  json_error_t err;
  json_t *parsed = json_loads(js, 0, &err);
  assert_non_null(parsed); /* valid JSON */
  json_decref(parsed);
  free(js);
  dw__stats_free(&st);

  /* the first 3 stats columns only; then the named ones (a struct names its leaves) */
  char *conf = NULL;
  const char *k1[] = {"delta.dataSkippingNumIndexedCols"}, *v1[] = {"3"};
  assert_int_equal(dl_kv_pack(&conf, k1, v1, 1), 0);
  assert_int_equal(dw__stats_plan(&st, dl_schema_root(sc), part, 1, conf), 0);
  assert_true(st.cols[2].indexed);
  assert_false(st.cols[3].indexed);
  assert_int_equal(dw__stats_json(&js, &st, 0), 0);
  assert_string_equal(js, "{\"numRecords\":0,\"minValues\":{},\"maxValues\":{},"
                          "\"nullCount\":{\"id\":0,\"s\":0,\"st\":{\"x\":0}}}");
  free(js);
  dw__stats_free(&st);
  free(conf);
  const char *k2[] = {"delta.dataSkippingStatsColumns", "delta.enableDeletionVectors"};
  const char *v2[] = {"ST, d", "true"};
  assert_int_equal(dl_kv_pack(&conf, k2, v2, 2), 0);
  assert_int_equal(dw__stats_plan(&st, dl_schema_root(sc), part, 1, conf), 0);
  assert_int_equal(dw__stats_json(&js, &st, 0), 0);
  assert_string_equal(js, "{\"numRecords\":0,\"minValues\":{},\"maxValues\":{},"
                          "\"nullCount\":{\"st\":{\"x\":0,\"y\":0},\"d\":0},"
                          "\"tightBounds\":true}");
  free(js);
  dw__stats_free(&st);
  free(conf);
  dl_schema_free(sc);
}

static void test_partition_dir(void **state) {
  (void)state;
  dd_buf b = {0};
  dw__escape_partition(&b, "a b/c:d=e%f#\x01");
  dd_buf_putc(&b, '|');
  dw__escape_partition(&b, NULL);
  dd_buf_putc(&b, '|');
  dw__escape_partition(&b, "é{x}");
  assert_string_equal(b.p, "a b%2Fc%3Ad%3De%25f%23%01|__HIVE_DEFAULT_PARTITION__|é%7Bx}");
  dd_buf_free(&b);
}

/* ---- a file from a batch --------------------------------------------------------------- */

static char *make_table(const char *schema, const char *part) {
  char tmpl[] = "/tmp/dw_test_XXXXXX";
  char *dir = strdup(mkdtemp(tmpl));
  dl_table *t;
  assert_int_equal(dl_table_open(&t, dir), 0);
  dl_txn *x;
  assert_int_equal(dl_txn_begin(&x, t, NULL), 0);
  dl_protocol p = {1, 2, 0, 0, NULL, NULL};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  const char *pc[] = {part};
  dl_metadata_spec md = {NULL, NULL, NULL, schema, part ? 1 : 0, pc, NULL, -1};
  assert_int_equal(dl_txn_set_metadata(x, &md), 0);
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.operation = "CREATE TABLE";
  int64_t v;
  assert_int_equal(dl_txn_commit(x, &co, &v), 0);
  dl_txn_free(x);
  dl_table_free(t);
  return dir;
}

/* A new table with its snapshot open; tw_close removes it. */
typedef struct tw_table {
  char *dir;
  dl_table *t;
  dl_snapshot *snap;
} tw_table;

static tw_table tw_open(const char *schema, const char *part) {
  tw_table w = {make_table(schema, part), NULL, NULL};
  assert_int_equal(dl_table_open(&w.t, w.dir), 0);
  assert_int_equal(dl_snapshot_open(&w.snap, w.t, NULL), 0);
  return w;
}

static void tw_close(tw_table *w) {
  dl_snapshot_free(w->snap);
  dl_table_free(w->t);
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", w->dir);
  assert_int_equal(system(cmd), 0);
  free(w->dir);
}

static void test_write_batch(void **state) {
  (void)state;
  tw_table tw = tw_open(SCHEMA, "p");
  char *dir = tw.dir;
  dl_table *t = tw.t;
  dl_snapshot *snap = tw.snap;

  arw_schema *s;
  assert_int_equal(arw_schema_new(&s), 0);
  int id, sc, st, x, y, arr, el, m, mk, mv, b, d, ts, dec, f;
  arw_schema_add(s, ARW_ROOT, "id", ARW_INT64, true, &id);
  arw_schema_add(s, ARW_ROOT, "s", ARW_UTF8, true, &sc);
  arw_schema_add(s, ARW_ROOT, "st", ARW_STRUCT, true, &st);
  arw_schema_add(s, st, "x", ARW_INT32, true, &x);
  arw_schema_add(s, st, "y", ARW_FLOAT64, true, &y);
  arw_schema_add(s, ARW_ROOT, "arr", ARW_LIST, true, &arr);
  arw_schema_add(s, arr, "element", ARW_INT32, true, &el);
  arw_schema_add(s, ARW_ROOT, "m", ARW_MAP, true, &m);
  arw_schema_add(s, m, "key", ARW_UTF8, false, &mk);
  arw_schema_add(s, m, "value", ARW_INT64, true, &mv);
  arw_schema_add(s, ARW_ROOT, "b", ARW_BOOL, true, &b);
  arw_schema_add(s, ARW_ROOT, "d", ARW_DATE32, true, &d);
  arw_schema_add(s, ARW_ROOT, "ts", ARW_TIMESTAMP_UTC, true, &ts);
  arw_schema_add_decimal(s, ARW_ROOT, "dec", 10, 2, true, &dec);
  arw_schema_add(s, ARW_ROOT, "f", ARW_FLOAT32, true, &f);
  arw_batch *bt;
  assert_int_equal(arw_batch_new(&bt, s), 0);
  for (int r = 0; r < 3; r++) {
    if (r == 1) arw_append_null(bt, id); else arw_append_i64(bt, id, r * 10);
    char txt[8];
    snprintf(txt, sizeof txt, "v%d", r);
    arw_append_str(bt, sc, txt, strlen(txt));
    if (r == 2) {
      arw_append_null(bt, st);
    } else {
      arw_append_i32(bt, x, r + 1);
      arw_append_f64(bt, y, 0.5 * r);
      arw_append_done(bt, st);
    }
    if (r == 0) {
      arw_append_i32(bt, el, 1);
      arw_append_null(bt, el);
      arw_append_done(bt, arr);
    } else if (r == 1) {
      arw_append_done(bt, arr); /* empty */
    } else {
      arw_append_null(bt, arr);
    }
    arw_append_str(bt, mk, "k", 1);
    arw_append_i64(bt, mv, r);
    arw_append_done(bt, m);
    arw_append_bool(bt, b, r == 1);
    arw_append_i32(bt, d, 19723 + r);
    arw_append_i64(bt, ts, 1704067200000000LL + r);
    uint8_t le[16] = {0};
    int64_t unscaled = r == 0 ? -5 : 12345;
    memcpy(le, &unscaled, 8);
    if (unscaled < 0) memset(le + 8, 0xff, 8);
    arw_append_dec128(bt, dec, le);
    arw_append_f32(bt, f, 1.25f * (float)r);
  }
  char *pv = NULL;
  const char *pk[] = {"p"}, *pvv[] = {"x/y"};
  assert_int_equal(dl_kv_pack(&pv, pk, pvv, 1), 0);
  dw_opts o = DW_OPTS_INIT;
  o.partition_values = pv;
  dw_writer *w;
  assert_int_equal(dw_open(&w, t, snap, s, &o), 0);
  assert_int_equal(dw_write(w, bt), 0);
  assert_int_equal(dw_finish(w), 0);
  assert_int_equal(dw_num_files(w), 1);
  const dl_file *df = dw_file(w, 0);
  assert_memory_equal(df->path, "p=x%2Fy/part-00000-", 19);
  assert_non_null(strstr(df->path, ".c000.snappy.parquet"));
  assert_string_equal(df->stats,
      "{\"numRecords\":3,"
      "\"minValues\":{\"id\":0,\"s\":\"v0\",\"st\":{\"x\":1,\"y\":0.0},\"d\":\"2024-01-01\","
      "\"ts\":\"2024-01-01T00:00:00.000Z\",\"dec\":-0.05,\"f\":0.0},"
      "\"maxValues\":{\"id\":20,\"s\":\"v2\",\"st\":{\"x\":2,\"y\":0.5},\"d\":\"2024-01-03\","
      "\"ts\":\"2024-01-01T00:00:00.000Z\",\"dec\":123.45,\"f\":2.5},"
      "\"nullCount\":{\"id\":1,\"s\":0,\"st\":{\"x\":1,\"y\":1},\"arr\":1,\"m\":0,\"b\":0,"
      "\"d\":0,\"ts\":0,\"dec\":0,\"f\":0}}");
  assert_string_equal(df->partition_values, "p");
  const char *got;
  assert_int_equal(dl_kv_get(df->partition_values, "p", &got), 1);
  assert_string_equal(got, "x/y");

  /* read it back */
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, df->path);
  assert_int_equal(df->size > 0, 1);
  pq_file *pf;
  assert_int_equal(pq_file_open_path(&pf, path), 0);
  assert_int_equal(pq_file_num_rows(pf), 3);
  assert_int_equal(pq_file_num_columns(pf), 12); /* id s x y element key value b d ts dec f */
  assert_null(pq_file_find(pf, "p"));
  const pq_field *fd = pq_file_find(pf, "dec");
  assert_non_null(fd);
  assert_int_equal(fd->type, PQ_T_INT64);
  assert_int_equal(fd->logical.kind, PQ_LT_DECIMAL);
  assert_int_equal(fd->logical.precision, 10);
  assert_int_equal(fd->logical.scale, 2);
  pq_cursor *c;
  assert_int_equal(pq_cursor_open(&c, pf, NULL), 0);
  const pq_value *row;
  assert_int_equal(pq_cursor_next(c, &row), 0);
  assert_int_equal(row->u.items[0].u.i64, 0);
  assert_memory_equal(row->u.items[1].u.bytes, "v0", 2);
  assert_int_equal(row->u.items[2].u.items[0].u.i32, 1);
  assert_int_equal(row->u.items[3].kind, PQ_V_LIST);
  assert_int_equal(row->u.items[3].len, 2);
  assert_int_equal(row->u.items[3].u.items[1].kind, PQ_V_NULL);
  assert_int_equal(row->u.items[8].u.i64, -5);
  assert_int_equal(pq_cursor_next(c, &row), 0);
  assert_int_equal(row->u.items[0].kind, PQ_V_NULL);
  assert_int_equal(row->u.items[3].len, 0); /* empty, not null */
  assert_int_equal(row->u.items[3].kind, PQ_V_LIST);
  assert_true(row->u.items[5].u.b);
  assert_int_equal(pq_cursor_next(c, &row), 0);
  assert_int_equal(row->u.items[2].kind, PQ_V_NULL);
  assert_int_equal(row->u.items[3].kind, PQ_V_NULL);
  assert_int_equal(row->u.items[4].len, 1);
  assert_int_equal(pq_cursor_next(c, &row), 0);
  assert_null(row);
  pq_cursor_free(c);
  pq_file_free(pf);

  /* zstd, plain encoding, one row per row group: the same rows read back */
  dw_opts oz = o;
  oz.codec = PQ_CODEC_ZSTD;
  oz.dictionary = false;
  oz.row_group_rows = 1;
  dw_writer *wz;
  assert_int_equal(dw_open(&wz, t, snap, s, &oz), 0);
  assert_int_equal(dw_write(wz, bt), 0);
  assert_int_equal(dw_finish(wz), 0);
  const dl_file *zf = dw_file(wz, 0);
  assert_non_null(strstr(zf->path, ".c000.zstd.parquet"));
  assert_string_equal(zf->stats, df->stats);
  snprintf(path, sizeof path, "%s/%s", dir, zf->path);
  assert_int_equal(pq_file_open_path(&pf, path), 0);
  assert_int_equal(pq_file_num_row_groups(pf), 3);
  pq_chunk_info ci;
  assert_int_equal(pq_chunk_get(&ci, pf, 0, 0), 0);
  assert_int_equal(ci.codec, PQ_CODEC_ZSTD);
  assert_int_equal(ci.dictionary_page_offset, -1);
  pq_file_free(pf);
  dw_free(wz);

  /* a batch that does not match: a column missing; nothing more is written */
  arw_schema *s2;
  arw_schema_new(&s2);
  arw_schema_add(s2, ARW_ROOT, "id", ARW_INT64, true, NULL);
  arw_batch *b2;
  arw_batch_new(&b2, s2);
  arw_append_i64(b2, 0, 1);
  dw_writer *w2;
  assert_int_equal(dw_open(&w2, t, snap, s2, &o), 0);
  assert_int_equal(dw_write(w2, b2), DD_EINVAL);
  dw_free(w2);
  arw_batch_free(b2);
  arw_schema_free(s2);

  dw_free(w);
  free(pv);
  arw_batch_free(bt);
  arw_schema_free(s);
  tw_close(&tw);
}

/* A row group past 4 MiB is encoded on two threads: the file must read back whole. */
static void test_large_row_group(void **state) {
  (void)state;
  const char *schema = "{\"type\":\"struct\",\"fields\":["
                       "{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},"
                       "{\"name\":\"s\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
                       "{\"name\":\"d\",\"type\":\"double\",\"nullable\":true,\"metadata\":{}}]}";
  tw_table tw = tw_open(schema, NULL);
  char *dir = tw.dir;
  dl_table *t = tw.t;
  dl_snapshot *snap = tw.snap;
  arw_schema *s;
  arw_schema_new(&s);
  int a, st, d;
  arw_schema_add(s, ARW_ROOT, "a", ARW_INT64, true, &a);
  arw_schema_add(s, ARW_ROOT, "s", ARW_UTF8, true, &st);
  arw_schema_add(s, ARW_ROOT, "d", ARW_FLOAT64, true, &d);
  arw_batch *b;
  arw_batch_new(&b, s);
  enum { N = 400000 };
  for (int64_t i = 0; i < N; i++) {
    char txt[24];
    int n = snprintf(txt, sizeof txt, "value-%lld", (long long)(i * 7));
    if (i % 1000 == 0) arw_append_null(b, a);
    else arw_append_i64(b, a, i);
    arw_append_str(b, st, txt, (size_t)n);
    arw_append_f64(b, d, (double)i / 8);
  }
  dw_writer *w;
  assert_int_equal(dw_open(&w, t, snap, s, NULL), 0);
  assert_int_equal(dw_write(w, b), 0);
  assert_int_equal(dw_finish(w), 0);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, dw_file(w, 0)->path);
  pq_file *pf;
  assert_int_equal(pq_file_open_path(&pf, path), 0);
  assert_int_equal(pq_file_num_rows(pf), N);
  assert_int_equal(pq_file_num_row_groups(pf), 1);
  pq_column *c;
  assert_int_equal(pq_column_read(&c, pf, 0, 0), 0);
  assert_int_equal(c->num_values, N - N / 1000);
  assert_int_equal(c->i64[0], 1);
  assert_int_equal(c->i64[c->num_values - 1], N - 1);
  pq_column_free(c);
  assert_int_equal(pq_column_read(&c, pf, 0, 1), 0);
  assert_int_equal(c->num_values, N);
  assert_memory_equal(c->ba[N - 1].ptr, "value-2799993", 13);
  pq_column_free(c);
  assert_int_equal(pq_column_read(&c, pf, 0, 2), 0);
  assert_true(c->d[N - 1] == (double)(N - 1) / 8);
  pq_column_free(c);
  pq_file_free(pf);
  dw_free(w);
  arw_batch_free(b);
  arw_schema_free(s);
  tw_close(&tw);
}

/* min/max taken from the Parquet writer's chunk statistics, merged over row groups (one
 * file of 5 row groups): the extremes lie in different row groups; a NaN in one row group
 * of g, an infinity in one of h, leave those columns without min/max; timestamps to ms. */
static void test_ranges_over_row_groups(void **state) {
  (void)state;
  const char *schema = "{\"type\":\"struct\",\"fields\":["
                       "{\"name\":\"a\",\"type\":\"integer\",\"nullable\":true,\"metadata\":{}},"
                       "{\"name\":\"s\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"
                       "{\"name\":\"g\",\"type\":\"double\",\"nullable\":true,\"metadata\":{}},"
                       "{\"name\":\"h\",\"type\":\"float\",\"nullable\":true,\"metadata\":{}},"
                       "{\"name\":\"ts\",\"type\":\"timestamp\",\"nullable\":true,\"metadata\":{}}]}";
  tw_table tw = tw_open(schema, NULL);
  arw_schema *s;
  arw_schema_new(&s);
  int a, st, g, hh, ts;
  arw_schema_add(s, ARW_ROOT, "a", ARW_INT32, true, &a);
  arw_schema_add(s, ARW_ROOT, "s", ARW_UTF8, true, &st);
  arw_schema_add(s, ARW_ROOT, "g", ARW_FLOAT64, true, &g);
  arw_schema_add(s, ARW_ROOT, "h", ARW_FLOAT32, true, &hh);
  arw_schema_add(s, ARW_ROOT, "ts", ARW_TIMESTAMP_UTC, true, &ts);
  arw_batch *b;
  arw_batch_new(&b, s);
  for (int i = 0; i < 50; i++) { /* 10 rows per row group */
    int v = i == 7 ? -40 : i == 43 ? 900 : i;
    if (i % 10 == 0) arw_append_null(b, a); else arw_append_i32(b, a, v);
    char txt[16];
    int n = snprintf(txt, sizeof txt, i == 31 ? "zz" : i == 12 ? "Aa" : "m%02d", i);
    arw_append_str(b, st, txt, (size_t)n);
    arw_append_f64(b, g, i == 25 ? 0.0 / 0.0 : (double)i);
    arw_append_f32(b, hh, i == 48 ? 1.0f / 0.0f : (float)i);
    arw_append_i64(b, ts, 1704067200000000LL + (i == 44 ? 1999 : i));
  }
  dw_opts o = DW_OPTS_INIT;
  o.row_group_rows = 10;
  dw_writer *w;
  assert_int_equal(dw_open(&w, tw.t, tw.snap, s, &o), 0);
  assert_int_equal(dw_write(w, b), 0);
  assert_int_equal(dw_finish(w), 0);
  assert_int_equal(dw_num_files(w), 1);
  assert_string_equal(dw_file(w, 0)->stats,
      "{\"numRecords\":50,"
      "\"minValues\":{\"a\":-40,\"s\":\"Aa\",\"ts\":\"2024-01-01T00:00:00.000Z\"},"
      "\"maxValues\":{\"a\":900,\"s\":\"zz\",\"ts\":\"2024-01-01T00:00:00.001Z\"},"
      "\"nullCount\":{\"a\":5,\"s\":0,\"g\":0,\"h\":0,\"ts\":0}}");
  dw_free(w);
  arw_batch_free(b);
  arw_schema_free(s);
  tw_close(&tw);
}

/* Change data files: under _change_data/ and the partition directory, named cdc-, the
 * data columns then _change_type, dataChange false. */
static void test_change_data(void **state) {
  (void)state;
  const char *schema = "{\"type\":\"struct\",\"fields\":["
                       "{\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},"
                       "{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}";
  tw_table tw = tw_open(schema, "p");
  char *dir = tw.dir;
  dl_table *t = tw.t;
  dl_snapshot *snap = tw.snap;
  arw_schema *s;
  arw_schema_new(&s);
  int a, p, ct;
  arw_schema_add(s, ARW_ROOT, "a", ARW_INT64, true, &a);
  arw_schema_add(s, ARW_ROOT, "p", ARW_UTF8, true, &p);
  arw_schema_add(s, ARW_ROOT, "_change_type", ARW_UTF8, true, &ct);
  arw_batch *b;
  arw_batch_new(&b, s);
  for (int64_t i = 0; i < 3; i++) {
    arw_append_i64(b, a, i);
    arw_append_str(b, p, "x", 1);
    arw_append_str(b, ct, i ? "delete" : "insert", 6);
  }
  char *pv = NULL;
  const char *k[] = {"p"}, *v[] = {"x"};
  assert_int_equal(dl_kv_pack(&pv, k, v, 1), 0);
  dw_opts o = DW_OPTS_INIT;
  o.partition_values = pv;
  o.change_data = true;
  dw_writer *w;
  assert_int_equal(dw_open(&w, t, snap, s, &o), 0);
  assert_int_equal(dw_write(w, b), 0);
  assert_int_equal(dw_finish(w), 0);
  assert_int_equal(dw_num_files(w), 1);
  const dl_file *f = dw_file(w, 0);
  assert_int_equal(strncmp(f->path, "_change_data/p=x/cdc-00000-", 27), 0);
  assert_false(f->data_change);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, f->path);
  pq_file *pf;
  assert_int_equal(pq_file_open_path(&pf, path), 0);
  assert_int_equal(pq_file_num_rows(pf), 3);
  pq_column *c;
  assert_int_equal(pq_column_read(&c, pf, 0, 1), 0); /* a, then _change_type (p is not there) */
  assert_int_equal(c->num_values, 3);
  assert_memory_equal(c->ba[0].ptr, "insert", 6);
  assert_memory_equal(c->ba[2].ptr, "delete", 6);
  pq_column_free(c);
  assert_int_equal(pq_file_num_columns(pf), 2);
  pq_file_free(pf);
  dw_free(w);
  free(pv);
  arw_batch_free(b);
  arw_schema_free(s);
  tw_close(&tw);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_trunc),
      cmocka_unit_test(test_stats_json),
      cmocka_unit_test(test_partition_dir),
      cmocka_unit_test(test_write_batch),
      cmocka_unit_test(test_large_row_group),
      cmocka_unit_test(test_ranges_over_row_groups),
      cmocka_unit_test(test_change_data),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
