/* test_pq_schema.c: list and map resolution by structure, not by names. A footer is
 * built by hand (Thrift compact) with the legacy shapes writers produce: 2-level lists
 * (repeated leaf, repeated group of several fields), 3-level lists with unusual inner
 * names, bare repeated fields, MAP_KEY_VALUE maps; the resolved shapes, levels and the
 * projected schema are checked. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "store/parquet/pq_internal.h"

typedef struct el { const char *name; int type, rep, nkids, conv; } el;

static const el schema[] = {
    {"root", -1, -1, 7, -1},
    {"a", -1, PQ_OPTIONAL, 1, PQ_CT_LIST},          /* 2-level: repeated leaf */
    {"array", PQ_T_INT32, PQ_REPEATED, 0, -1},
    {"b", -1, PQ_OPTIONAL, 1, PQ_CT_LIST},          /* 2-level: repeated group, 2 fields */
    {"bag", -1, PQ_REPEATED, 2, -1},
    {"s", PQ_T_BYTE_ARRAY, PQ_OPTIONAL, 0, PQ_CT_UTF8},
    {"n", PQ_T_INT32, PQ_OPTIONAL, 0, -1},
    {"c", -1, PQ_OPTIONAL, 1, PQ_CT_LIST},          /* 3-level, odd names */
    {"wrapper", -1, PQ_REPEATED, 1, -1},
    {"item", PQ_T_INT64, PQ_OPTIONAL, 0, -1},
    {"d", PQ_T_INT32, PQ_REPEATED, 0, -1},          /* bare repeated leaf */
    {"e", -1, PQ_OPTIONAL, 1, PQ_CT_MAP_KEY_VALUE}, /* legacy map */
    {"map", -1, PQ_REPEATED, 2, -1},
    {"key", PQ_T_BYTE_ARRAY, PQ_REQUIRED, 0, PQ_CT_UTF8},
    {"value", PQ_T_INT32, PQ_OPTIONAL, 0, -1},
    {"f", -1, PQ_OPTIONAL, 1, PQ_CT_MAP},           /* map with odd names, struct value */
    {"entries", -1, PQ_REPEATED, 2, -1},
    {"k", PQ_T_INT32, PQ_REQUIRED, 0, -1},
    {"v", -1, PQ_OPTIONAL, 1, -1},
    {"z", PQ_T_INT32, PQ_OPTIONAL, 0, -1},
    {"g", -1, PQ_REQUIRED, 1, -1},                  /* struct holding a bare repeated group */
    {"rec", -1, PQ_REPEATED, 1, -1},
    {"x", PQ_T_INT32, PQ_OPTIONAL, 0, -1},
};

static uint8_t *build_file(size_t *len) {
  pq__buf b = {0};
  pq__buf_put(&b, "PAR1", 4);
  size_t start = b.len;
  pq__tw t = {&b, {0}, 0, 0};
  pq__tw_i32(&t, 1, 1);
  size_t n = sizeof schema / sizeof schema[0];
  pq__tw_list(&t, 2, PQ__TT_STRUCT, (uint32_t)n);
  for (size_t i = 0; i < n; i++) {
    pq__tw_struct_begin(&t, -1);
    if (schema[i].type >= 0) pq__tw_i32(&t, 1, schema[i].type);
    if (schema[i].rep >= 0) pq__tw_i32(&t, 3, schema[i].rep);
    pq__tw_binary(&t, 4, schema[i].name, strlen(schema[i].name));
    if (schema[i].nkids) pq__tw_i32(&t, 5, schema[i].nkids);
    if (schema[i].conv >= 0) pq__tw_i32(&t, 6, schema[i].conv);
    pq__tw_i32(&t, 77, 5); /* an unknown field must be skipped */
    pq__tw_struct_end(&t);
  }
  pq__tw_i64(&t, 3, 0);
  pq__tw_list(&t, 4, PQ__TT_STRUCT, 0);
  pq__tw_struct_end(&t);
  assert_int_equal(t.err, 0);
  pq__buf_le32(&b, (uint32_t)(b.len - start));
  pq__buf_put(&b, "PAR1", 4);
  *len = b.len;
  return b.data;
}

static void test_shapes(void **state) {
  (void)state;
  size_t len;
  uint8_t *buf = build_file(&len);
  pq_file *f = NULL;
  assert_int_equal(pq_file_open_mem(&f, buf, len), 0);
  assert_int_equal(pq_file_num_columns(f), 10);
  assert_int_equal(pq_file_find(f, "a")->shape, PQ_SHAPE_LIST);
  assert_int_equal(pq_file_find(f, "b")->shape, PQ_SHAPE_LIST);
  assert_int_equal(pq_file_find(f, "c")->shape, PQ_SHAPE_LIST);
  assert_int_equal(pq_file_find(f, "e")->shape, PQ_SHAPE_MAP);
  assert_int_equal(pq_file_find(f, "f")->shape, PQ_SHAPE_MAP);
  assert_int_equal(pq_file_find(f, "g")->shape, PQ_SHAPE_STRUCT);
  const pq_field *z = pq_file_find(f, "f.entries.v.z");
  assert_non_null(z);
  assert_int_equal(z->max_def, 4);
  assert_int_equal(z->max_rep, 1);
  assert_true(pq_file_find(f, "b.bag.s")->is_string);
  pq_file_free(f);
  free(buf);
}

static void test_projected_schema(void **state) {
  (void)state;
  size_t len;
  uint8_t *buf = build_file(&len);
  pq_file *f = NULL;
  pq_cursor *c = NULL;
  assert_int_equal(pq_file_open_mem(&f, buf, len), 0);
  assert_int_equal(pq_cursor_open(&c, f, NULL), 0);
  const pq_pnode *r = pq_cursor_schema(c);
  assert_int_equal(r->num_children, 7);
  const pq_pnode *a = &r->children[0], *b = &r->children[1], *cc = &r->children[2];
  const pq_pnode *d = &r->children[3], *e = &r->children[4], *ff = &r->children[5];
  const pq_pnode *g = &r->children[6];
  assert_int_equal(a->shape, PQ_SHAPE_LIST);
  assert_int_equal(a->children[0].shape, PQ_SHAPE_PRIMITIVE); /* element = "array" leaf */
  assert_int_equal(b->children[0].shape, PQ_SHAPE_STRUCT);    /* element = "bag" group */
  assert_int_equal(b->children[0].num_children, 2);
  assert_string_equal(cc->children[0].name, "item");          /* 3-level element */
  assert_int_equal(d->shape, PQ_SHAPE_LIST);                   /* bare repeated */
  assert_int_equal(d->children[0].shape, PQ_SHAPE_PRIMITIVE);
  assert_int_equal(e->shape, PQ_SHAPE_MAP);
  assert_string_equal(e->children[1].name, "value");
  assert_int_equal(ff->children[1].shape, PQ_SHAPE_STRUCT);
  assert_int_equal(g->children[0].shape, PQ_SHAPE_LIST);
  assert_int_equal(g->children[0].children[0].shape, PQ_SHAPE_STRUCT);
  const pq_value *row;
  assert_int_equal(pq_cursor_next(c, &row), 0);
  assert_null(row);
  pq_cursor_free(c);
  const char *cols[] = {"f", "g.rec"};
  pq_read_opts o = PQ_READ_OPTS_INIT;
  o.columns = cols;
  o.num_columns = 1;
  assert_int_equal(pq_cursor_open(&c, f, &o), 0);
  assert_int_equal(pq_cursor_schema(c)->num_children, 1);
  pq_cursor_free(c);
  o.columns = cols + 1;
  assert_int_equal(pq_cursor_open(&c, f, &o), 0);
  pq_cursor_free(c);
  pq_file_free(f);
  free(buf);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shapes),
      cmocka_unit_test(test_projected_schema),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
