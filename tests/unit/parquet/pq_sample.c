/* pq_sample.c: the sample schema and rows (see pq_sample.h). Row i is a pure function of
 * i: every few rows a field is null, a list is empty, a map has several entries, etc. */
#include "tests/unit/parquet/pq_sample.h"

#include "common/err.h"

#include <stdio.h>
#include <string.h>

#define F(n, k, nul) {n, k, nul, 0, 0, 0, NULL}
#define FIXED(n, len) {n, PQ_W_FIXED, true, len, 0, 0, NULL}
#define G(n, k, nul, kids) {n, k, nul, 0, 0, sizeof kids / sizeof kids[0], kids}

static const pq_wfield list_elem[] = {F("element", PQ_W_STRING, true)};
static const pq_wfield map_kv[] = {F("key", PQ_W_STRING, false), F("value", PQ_W_STRING, true)};
static const pq_wfield xy[] = {F("x", PQ_W_INT64, true), F("y", PQ_W_STRING, true)};
static const pq_wfield xy_elem[] = {G("element", PQ_W_STRUCT, true, xy)};
static const pq_wfield int_elem[] = {F("element", PQ_W_INT32, true)};
static const pq_wfield m_kv[] = {F("key", PQ_W_STRING, false),
                                 G("value", PQ_W_LIST, true, int_elem)};
static const pq_wfield nested[] = {F("a", PQ_W_INT32, false), G("b", PQ_W_LIST, true, xy_elem),
                                   G("m", PQ_W_MAP, true, m_kv)};
static const pq_wfield dv[] = {F("storageType", PQ_W_STRING, false),
                               F("cardinality", PQ_W_INT64, false)};
static const pq_wfield add[] = {F("path", PQ_W_STRING, false), F("size", PQ_W_INT64, false),
                                G("partitionValues", PQ_W_MAP, false, map_kv),
                                G("deletionVector", PQ_W_STRUCT, true, dv)};
static const pq_wfield top[] = {
    F("id", PQ_W_INT64, false), F("name", PQ_W_STRING, true), F("flag", PQ_W_BOOL, true),
    F("i32", PQ_W_INT32, true), F("f", PQ_W_FLOAT, true), F("d", PQ_W_DOUBLE, true),
    F("bin", PQ_W_BINARY, true), FIXED("fixed", 4), F("date", PQ_W_DATE, true),
    F("ts", PQ_W_TIMESTAMP_MICROS, true), G("tags", PQ_W_LIST, true, list_elem),
    G("props", PQ_W_MAP, true, map_kv), G("nested", PQ_W_STRUCT, true, nested),
    G("add", PQ_W_STRUCT, true, add)};
static const pq_wfield root = G("spark_schema", PQ_W_STRUCT, false, top);

const pq_wfield *pq_sample_schema(void) { return &root; }

static pq_value *alloc(pq_sample_row *s, size_t n) {
  pq_value *v = &s->v[s->nv];
  s->nv += n;
  memset(v, 0, n * sizeof *v);
  return v;
}

static pq_value str(pq_sample_row *s, const char *fmt, long i) {
  char *p = s->text + s->ntext;
  int n = snprintf(p, sizeof s->text - s->ntext, fmt, i);
  s->ntext += (size_t)n + 1;
  return (pq_value){.kind = PQ_V_BYTES, .is_string = 1, .len = (uint32_t)n,
                    .u.bytes = (const uint8_t *)p};
}

static pq_value i64(int64_t x) { return (pq_value){.kind = PQ_V_INT64, .u.i64 = x}; }
static pq_value i32(int32_t x) { return (pq_value){.kind = PQ_V_INT32, .u.i32 = x}; }
static pq_value group(int kind, pq_value *items, uint32_t n) {
  return (pq_value){.kind = (uint8_t)kind, .len = n, .u.items = items};
}

static pq_value make_tags(pq_sample_row *s, long i) {
  if (i % 7 == 3) return (pq_value){0};
  uint32_t n = (uint32_t)(i % 4);
  pq_value *it = alloc(s, n);
  for (uint32_t k = 0; k < n; k++) it[k] = k == 1 && i % 3 == 0 ? (pq_value){0} : str(s, "tag%ld", (long)k + i % 5);
  return group(PQ_V_LIST, it, n);
}

static pq_value make_props(pq_sample_row *s, long i) {
  if (i % 5 == 4) return (pq_value){0};
  uint32_t n = (uint32_t)(i % 3);
  pq_value *it = alloc(s, 2 * n);
  for (uint32_t k = 0; k < n; k++) {
    it[2 * k] = str(s, k ? "k1" : "k0", 0);
    it[2 * k + 1] = (i + k) % 4 == 0 ? (pq_value){0} : str(s, "v%ld", i * 10 + k);
  }
  return group(PQ_V_MAP, it, n);
}

static pq_value make_nested(pq_sample_row *s, long i) {
  if (i % 6 == 5) return (pq_value){0};
  pq_value *f = alloc(s, 3);
  f[0] = i32((int32_t)(i * 3));
  uint32_t nb = (uint32_t)(i % 3);
  pq_value *b = alloc(s, nb);
  for (uint32_t k = 0; k < nb; k++) {
    pq_value *xyv = alloc(s, 2);
    xyv[0] = (i + k) % 2 ? i64(-(int64_t)i * 1000000007LL) : (pq_value){0};
    xyv[1] = str(s, "y%ld", i + k);
    b[k] = k == 1 && i % 4 == 1 ? (pq_value){0} : group(PQ_V_STRUCT, xyv, 2);
  }
  f[1] = i % 8 == 7 ? (pq_value){0} : group(PQ_V_LIST, b, nb);
  pq_value *m = alloc(s, 2);
  pq_value *l = alloc(s, 2);
  l[0] = i32((int32_t)i);
  l[1] = i % 2 ? (pq_value){0} : i32(-1);
  m[0] = str(s, "key%ld", i % 3);
  m[1] = i % 9 == 2 ? (pq_value){0} : group(PQ_V_LIST, l, (uint32_t)(i % 3));
  f[2] = i % 10 == 0 ? (pq_value){0} : group(PQ_V_MAP, m, 1);
  return group(PQ_V_STRUCT, f, 3);
}

static pq_value make_add(pq_sample_row *s, long i) {
  if (i % 4 == 2) return (pq_value){0};
  pq_value *f = alloc(s, 4);
  f[0] = str(s, "part=%ld/part-00000-c000.snappy.parquet", i % 13);
  f[1] = i64(1000 + i);
  pq_value *pv = alloc(s, 2);
  pv[0] = str(s, "part", 0);
  pv[1] = i % 13 == 0 ? (pq_value){0} : str(s, "%ld", i % 13);
  f[2] = group(PQ_V_MAP, pv, i % 2 ? 1 : 0);
  pq_value *d = alloc(s, 2);
  d[0] = str(s, "u", 0);
  d[1] = i64(i % 17);
  f[3] = i % 3 == 0 ? group(PQ_V_STRUCT, d, 2) : (pq_value){0};
  return group(PQ_V_STRUCT, f, 4);
}

const pq_value *pq_sample_make(pq_sample_row *s, long i) {
  static const uint8_t bytes[] = {0, 1, 2, 0xfe, 0xff, 'a', 'b', 'c'};
  s->nv = 0;
  s->ntext = 0;
  pq_value *f = alloc(s, 14);
  f[0] = i64(i);
  f[1] = i % 5 == 1 ? (pq_value){0} : str(s, "name-%ld \"quoted\" \xc3\xa9", i % 50);
  f[2] = i % 3 == 2 ? (pq_value){0} : (pq_value){.kind = PQ_V_BOOL, .u.b = i % 2 == 0};
  f[3] = i % 4 == 3 ? (pq_value){0} : i32((int32_t)(i * 7919 % 100003 - 50000));
  f[4] = i % 6 == 1 ? (pq_value){0} : (pq_value){.kind = PQ_V_FLOAT, .u.f = (float)i / 3.0f};
  f[5] = i % 7 == 1 ? (pq_value){0} : (pq_value){.kind = PQ_V_DOUBLE, .u.d = (double)i * 1.5e-3 - 7};
  f[6] = i % 2 ? (pq_value){0} : (pq_value){.kind = PQ_V_BYTES, .len = (uint32_t)(i % 9), .u.bytes = bytes};
  f[7] = i % 3 ? (pq_value){.kind = PQ_V_FIXED, .len = 4, .u.bytes = bytes + i % 5} : (pq_value){0};
  f[8] = i32((int32_t)(18000 + i));
  f[9] = i % 11 == 0 ? (pq_value){0} : i64(1600000000000000LL + i * 1000003LL);
  f[10] = make_tags(s, i);
  f[11] = make_props(s, i);
  f[12] = make_nested(s, i);
  f[13] = make_add(s, i);
  s->row = group(PQ_V_STRUCT, f, 14);
  return &s->row;
}

bool pq_value_equal(const pq_value *a, const pq_value *b) {
  if (a->kind != b->kind) return false;
  switch (a->kind) {
    case PQ_V_NULL: return true;
    case PQ_V_BOOL: return a->u.b == b->u.b;
    case PQ_V_INT32: return a->u.i32 == b->u.i32;
    case PQ_V_INT64: return a->u.i64 == b->u.i64;
    case PQ_V_FLOAT: return memcmp(&a->u.f, &b->u.f, 4) == 0;
    case PQ_V_DOUBLE: return memcmp(&a->u.d, &b->u.d, 8) == 0;
    case PQ_V_BYTES: case PQ_V_FIXED: case PQ_V_INT96:
      return a->len == b->len && (a->len == 0 || memcmp(a->u.bytes, b->u.bytes, a->len) == 0);
    default: {
      uint32_t n = a->kind == PQ_V_MAP ? 2 * a->len : a->len;
      if (a->len != b->len) return false;
      for (uint32_t i = 0; i < n; i++)
        if (!pq_value_equal(&a->u.items[i], &b->u.items[i])) return false;
      return true;
    }
  }
}

int pq_sample_write(const char *path, long rows, int codec, bool dictionary) {
  pq_writer_opts o = PQ_WRITER_OPTS_INIT;
  o.codec = (pq_codec)codec;
  o.dictionary = dictionary;
  o.row_group_rows = rows > 10 ? rows / 3 : 0;
  o.page_size = 2048;
  pq_writer *w = NULL;
  pq_sample_row s;
  int rc = pq_writer_open_path(&w, path, pq_sample_schema(), &o);
  if (!rc) rc = pq_writer_add_kv(w, "writer", "deltad pq_sample");
  for (long i = 0; i < rows && !rc; i++) rc = pq_writer_write_row(w, pq_sample_make(&s, i));
  if (!rc) rc = pq_writer_close(w, NULL, NULL);
  pq_writer_free(w);
  return rc;
}
