/* test_connect_expr.c: spark.connect Expression messages -> store/expr trees
 * (server/service/connect_expr.c), built as pyspark's client builds them and decoded from
 * the wire: literals of every kind, attributes with nested and backquoted parts, functions
 * (is_distinct kept), alias, cast by type and by type_str, expression_string, star,
 * sort_order defaults, UNIMPLEMENTED naming other kinds, and the depth bound (10x). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_expr.h"

typedef Spark__Connect__Expression X;

static X *lit_int(int v) {
  X *x = calloc(1, sizeof *x);
  spark__connect__expression__init(x);
  Spark__Connect__Expression__Literal *l = calloc(1, sizeof *l);
  spark__connect__expression__literal__init(l);
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_INTEGER;
  l->integer = v;
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL;
  x->literal = l;
  return x;
}

static X *attr(const char *name) {
  X *x = calloc(1, sizeof *x);
  spark__connect__expression__init(x);
  Spark__Connect__Expression__UnresolvedAttribute *a = calloc(1, sizeof *a);
  spark__connect__expression__unresolved_attribute__init(a);
  a->unparsed_identifier = strdup(name);
  a->_plan_id_case = SPARK__CONNECT__EXPRESSION__UNRESOLVED_ATTRIBUTE___PLAN_ID_PLAN_ID;
  a->plan_id = 42;
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE;
  x->unresolved_attribute = a;
  return x;
}

static X *fn(const char *name, X *a, X *b) {
  X *x = calloc(1, sizeof *x);
  spark__connect__expression__init(x);
  Spark__Connect__Expression__UnresolvedFunction *f = calloc(1, sizeof *f);
  spark__connect__expression__unresolved_function__init(f);
  f->function_name = strdup(name);
  f->n_arguments = b ? 2 : 1;
  f->arguments = calloc(2, sizeof *f->arguments);
  f->arguments[0] = a;
  if (b) f->arguments[1] = b;
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION;
  x->unresolved_function = f;
  return x;
}

static X *expr_string(const char *s) {
  X *x = calloc(1, sizeof *x);
  spark__connect__expression__init(x);
  Spark__Connect__Expression__ExpressionString *e = calloc(1, sizeof *e);
  spark__connect__expression__expression_string__init(e);
  e->expression = strdup(s);
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING;
  x->expression_string = e;
  return x;
}

/* Converts after a round trip over the wire, returns ex_name of the tree. */
static char *convert_name(X *x, int *rc) {
  size_t n = spark__connect__expression__get_packed_size(x);
  uint8_t *buf = malloc(n + 1);
  spark__connect__expression__pack(x, buf);
  protobuf_c_message_free_unpacked(&x->base, NULL);
  X *y = spark__connect__expression__unpack(NULL, n, buf);
  free(buf);
  assert_non_null(y);
  ex_node *e = NULL;
  char *name = NULL;
  *rc = connect_expr_from_proto(&e, y);
  if (*rc == 0) assert_int_equal(ex_name(&name, e), 0);
  ex_free(e);
  spark__connect__expression__free_unpacked(y, NULL);
  return name;
}

static void expect(X *x, const char *want) {
  int rc;
  char *got = convert_name(x, &rc);
  if (rc) fprintf(stderr, "%s\n", dd_err_msg());
  assert_int_equal(rc, 0);
  assert_string_equal(got, want);
  free(got);
}

static void test_shapes(void **state) {
  (void)state;
  expect(fn(">", attr("a"), lit_int(1)), "(a > 1)");
  expect(fn("==", attr("`x.y`.z"), lit_int(2)), "(x.y.z = 2)");
  expect(fn("isNull", attr("s"), NULL), "(s IS NULL)");
  expect(fn("not", fn("==", attr("a"), lit_int(1)), NULL), "(NOT (a = 1))");
  expect(expr_string("upper(s) AS u"), "u");
  /* alias, cast by type_str and by type, sort order defaults */
  X *al = calloc(1, sizeof *al);
  spark__connect__expression__init(al);
  Spark__Connect__Expression__Alias *a = calloc(1, sizeof *a);
  spark__connect__expression__alias__init(a);
  a->expr = fn("+", attr("a"), lit_int(1));
  a->n_name = 1;
  a->name = calloc(1, sizeof *a->name);
  a->name[0] = strdup("b");
  al->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_ALIAS;
  al->alias = a;
  expect(al, "b");

  X *c = calloc(1, sizeof *c);
  spark__connect__expression__init(c);
  Spark__Connect__Expression__Cast *k = calloc(1, sizeof *k);
  spark__connect__expression__cast__init(k);
  k->expr = attr("a");
  k->cast_to_type_case = SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE_STR;
  k->type_str = strdup("decimal(10,2)");
  c->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CAST;
  c->cast = k;
  expect(c, "CAST(a AS DECIMAL(10,2))");

  X *so = calloc(1, sizeof *so);
  spark__connect__expression__init(so);
  Spark__Connect__Expression__SortOrder *o = calloc(1, sizeof *o);
  spark__connect__expression__sort_order__init(o);
  o->child = attr("a");
  o->direction = SPARK__CONNECT__EXPRESSION__SORT_ORDER__SORT_DIRECTION__SORT_DIRECTION_DESCENDING;
  so->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_SORT_ORDER;
  so->sort_order = o;
  expect(so, "a DESC NULLS LAST");

  /* df.st.x: an extract_value of a struct field by name */
  X *ev = calloc(1, sizeof *ev);
  spark__connect__expression__init(ev);
  Spark__Connect__Expression__UnresolvedExtractValue *u = calloc(1, sizeof *u);
  spark__connect__expression__unresolved_extract_value__init(u);
  u->child = attr("st");
  X *key = lit_int(0);
  key->literal->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING;
  key->literal->string = strdup("x");
  u->extraction = key;
  ev->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_EXTRACT_VALUE;
  ev->unresolved_extract_value = u;
  expect(fn(">", ev, lit_int(1)), "(st.x > 1)");

  /* count(DISTINCT x) */
  X *d = fn("count", attr("x"), NULL);
  d->unresolved_function->is_distinct = 1;
  expect(d, "count(DISTINCT x)");
}

static void test_literals(void **state) {
  (void)state;
  X *x = lit_int(0);
  Spark__Connect__Expression__Literal *l = x->literal;
  l->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DECIMAL;
  Spark__Connect__Expression__Literal__Decimal *d = calloc(1, sizeof *d);
  spark__connect__expression__literal__decimal__init(d);
  d->value = strdup("-12.50");
  d->_precision_case = SPARK__CONNECT__EXPRESSION__LITERAL__DECIMAL___PRECISION_PRECISION;
  d->precision = 10;
  d->_scale_case = SPARK__CONNECT__EXPRESSION__LITERAL__DECIMAL___SCALE_SCALE;
  d->scale = 2;
  l->decimal = d;
  expect(x, "-12.50");
  x = lit_int(0);
  x->literal->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DATE;
  x->literal->date = 19782;
  expect(x, "DATE '2024-02-29'");
  x = lit_int(0);
  x->literal->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING;
  x->literal->string = strdup("hi");
  expect(x, "hi");
  x = lit_int(0);
  x->literal->literal_type_case = SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_NULL;
  Spark__Connect__DataType *t = calloc(1, sizeof *t);
  spark__connect__data_type__init(t);
  Spark__Connect__DataType__NULL *nt = calloc(1, sizeof *nt);
  spark__connect__data_type__null__init(nt);
  t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_NULL;
  t->null = nt;
  x->literal->null = t;
  expect(x, "NULL");
}

static void test_refusals(void **state) {
  (void)state;
  X *x = calloc(1, sizeof *x);
  spark__connect__expression__init(x);
  Spark__Connect__Expression__UnresolvedRegex *r = calloc(1, sizeof *r);
  spark__connect__expression__unresolved_regex__init(r);
  r->col_name = strdup("a.*");
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_REGEX;
  x->unresolved_regex = r;
  int rc;
  assert_null(convert_name(x, &rc));
  assert_int_equal(rc, DD_EUNSUPPORTED);
  assert_non_null(strstr(dd_err_msg(), "unresolved_regex"));
  /* 10x the depth bound: refused before it recurses that deep */
  X *deep = attr("a");
  for (int i = 0; i < 10 * EX_MAX_DEPTH; i++) deep = fn("negative", deep, NULL);
  ex_node *e = NULL;
  assert_int_equal(connect_expr_from_proto(&e, deep), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "deeper"));
  assert_null(e);
  /* freeing the deep message recursion is protobuf-c's; unwind it by hand */
  while (deep->expr_type_case == SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION) {
    X *next = deep->unresolved_function->arguments[0];
    deep->unresolved_function->n_arguments = 0;
    protobuf_c_message_free_unpacked(&deep->base, NULL);
    deep = next;
  }
  protobuf_c_message_free_unpacked(&deep->base, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
    cmocka_unit_test(test_shapes),
    cmocka_unit_test(test_literals),
    cmocka_unit_test(test_refusals),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
