/* test_connect_forward_sql.c: the Delta SQL that --spark-connect sends Spark
 * (server/service/connect_forward_sql.c): expressions as pyspark's Column API builds them
 * (infix operators, NOT, IS NULL, IN, casts, aliases, literals with quotes, backslashes and
 * non-finite doubles), UNIMPLEMENTED for a kind SQL cannot spell, table names rewritten only
 * after FROM/JOIN/... and never inside strings or comments, a name the catalog does not
 * know refused, the forwarder's settings checked (bad URL, unknown operation), and an
 * Interrupt answered after its operation ended still naming the client's id. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "server/service/connect_forward.h"

typedef Spark__Connect__Expression X;

static X *new_x(void) {
  X *x = calloc(1, sizeof *x);
  spark__connect__expression__init(x);
  return x;
}

/* A literal expression of kind k; *l its Literal for the caller to fill. */
static X *new_lit(Spark__Connect__Expression__Literal **l, Spark__Connect__Expression__Literal__LiteralTypeCase k) {
  X *x = new_x();
  *l = calloc(1, sizeof **l);
  spark__connect__expression__literal__init(*l);
  (*l)->literal_type_case = k;
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_LITERAL;
  x->literal = *l;
  return x;
}

static X *lit_long(int64_t v) {
  Spark__Connect__Expression__Literal *l;
  X *x = new_lit(&l, SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_LONG);
  l->long_ = v;
  return x;
}

static X *lit_str(const char *s) {
  Spark__Connect__Expression__Literal *l;
  X *x = new_lit(&l, SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_STRING);
  l->string = strdup(s);
  return x;
}

static X *lit_double(double v) {
  Spark__Connect__Expression__Literal *l;
  X *x = new_lit(&l, SPARK__CONNECT__EXPRESSION__LITERAL__LITERAL_TYPE_DOUBLE);
  l->double_ = v;
  return x;
}

static X *attr(const char *name) {
  X *x = new_x();
  Spark__Connect__Expression__UnresolvedAttribute *a = calloc(1, sizeof *a);
  spark__connect__expression__unresolved_attribute__init(a);
  a->unparsed_identifier = strdup(name);
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE;
  x->unresolved_attribute = a;
  return x;
}

static X *fn(const char *name, size_t n, X *a, X *b, X *c) {
  X *x = new_x();
  Spark__Connect__Expression__UnresolvedFunction *f = calloc(1, sizeof *f);
  spark__connect__expression__unresolved_function__init(f);
  f->function_name = strdup(name);
  f->n_arguments = n;
  f->arguments = calloc(3, sizeof *f->arguments);
  f->arguments[0] = a, f->arguments[1] = b, f->arguments[2] = c;
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION;
  x->unresolved_function = f;
  return x;
}

static X *cast(X *e, const char *type) {
  X *x = new_x();
  Spark__Connect__Expression__Cast *c = calloc(1, sizeof *c);
  spark__connect__expression__cast__init(c);
  c->expr = e;
  c->cast_to_type_case = SPARK__CONNECT__EXPRESSION__CAST__CAST_TO_TYPE_TYPE_STR;
  c->type_str = strdup(type);
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_CAST;
  x->cast = c;
  return x;
}

/* The SQL of x (x freed), or NULL with the code in *rc. */
static char *sql_of(X *x, int *rc) {
  dd_buf b = {0};
  *rc = connect_fwd_sql_expr(&b, x);
  protobuf_c_message_free_unpacked(&x->base, NULL);
  if (*rc) {
    dd_buf_free(&b);
    return NULL;
  }
  return b.p;
}

static void expect(X *x, const char *want) {
  int rc;
  char *got = sql_of(x, &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(got, want);
  free(got);
}

static void test_expressions(void **state) {
  (void)state;
  expect(fn("==", 2, attr("t.id"), lit_long(5), NULL), "(t.id = 5L)");
  expect(fn("or", 2, fn("<", 2, attr("id"), lit_long(3), NULL), fn("not", 1, fn("isNull", 1, attr("s"), NULL, NULL), NULL, NULL), NULL),
         "((id < 3L) OR (NOT (s IS NULL)))");
  expect(fn("in", 3, attr("id"), lit_long(1), lit_long(2)), "(id IN (1L, 2L))");
  expect(fn("coalesce", 2, attr("v"), lit_long(0), NULL), "coalesce(v, 0L)");
  expect(cast(attr("v"), "decimal(10,2)"), "CAST(v AS decimal(10,2))");
  expect(lit_str("it's a \\ test"), "'it\\'s a \\\\ test'");
  expect(lit_double(NAN), "CAST('NaN' AS DOUBLE)");
  expect(lit_double(-INFINITY), "CAST('-Infinity' AS DOUBLE)");
  expect(lit_double(0.5), "0.5D");
}

static void test_unsupported(void **state) {
  (void)state;
  int rc;
  X *x = new_x();
  x->expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_REGEX;
  x->unresolved_regex = calloc(1, sizeof *x->unresolved_regex);
  spark__connect__expression__unresolved_regex__init(x->unresolved_regex);
  assert_null(sql_of(x, &rc));
  assert_int_equal(rc, DD_EUNSUPPORTED);
  /* a function name that would let text into the statement */
  assert_null(sql_of(fn("f); DROP TABLE x; --", 1, attr("a"), NULL, NULL), &rc));
  assert_int_equal(rc, DD_EUNSUPPORTED);
}

static void test_rewrite(void **state) {
  (void)state;
  connect_exec_opts o = CONNECT_EXEC_OPTS_INIT; /* no catalog: paths only */
  char *out = NULL, **locs = NULL;
  size_t n = 0;
  int rc = connect_fwd_sql_rewrite(&out, &locs, &n,
                                   "SELECT 'FROM a.b.c' AS s, x.y.z FROM delta.`/tmp/a` t -- FROM d.e.f\n"
                                   "JOIN delta.`/tmp/b` u ON t.id = u.id", &o);
  assert_int_equal(rc, 0);
  assert_string_equal(out, "SELECT 'FROM a.b.c' AS s, x.y.z FROM delta.`/tmp/a` t -- FROM d.e.f\n"
                           "JOIN delta.`/tmp/b` u ON t.id = u.id");
  assert_int_equal(n, 2);
  assert_string_equal(locs[0], "/tmp/a");
  assert_string_equal(locs[1], "/tmp/b");
  for (size_t i = 0; i < n; i++) free(locs[i]);
  free(locs), locs = NULL, n = 0;
  free(out), out = NULL;
  /* a catalog name with no catalog to resolve it: refused, nothing returned */
  rc = connect_fwd_sql_rewrite(&out, &locs, &n, "DELETE FROM main.sales.orders WHERE id = 1", &o);
  assert_int_equal(rc, DD_ENOTFOUND);
  assert_null(out);
  assert_int_equal(n, 0);
  free(locs);
}

static int ok_stream(void *ctx, const char *e, int64_t t, const char *m, const ProtobufCMessage *r,
                     const ProtobufCMessageDescriptor *d, connect_fwd_msg_fn fn, void *ud) {
  (void)ctx, (void)e, (void)t, (void)m, (void)r, (void)d, (void)fn, (void)ud;
  return 0;
}

static int ok_unary(void *ctx, const char *e, int64_t t, const char *m, const ProtobufCMessage *r,
                    const ProtobufCMessageDescriptor *d, ProtobufCMessage **out) {
  (void)ctx, (void)e, (void)t, (void)m, (void)r, (void)d;
  *out = NULL;
  return 0;
}

static void test_configure(void **state) {
  (void)state;
  connect_fwd_opts o = CONNECT_FWD_OPTS_INIT;
  o.rpc.stream = ok_stream, o.rpc.unary = ok_unary;
  o.target = "sc://spark:15002";
  o.ops = "delete,merge";
  assert_int_equal(connect_forward_configure(&o), 0);
  assert_true(connect_forward_enabled());
  assert_string_equal(connect_forward_target(), "sc://spark:15002");
  o.ops = "delete,drop";
  assert_int_equal(connect_forward_configure(&o), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "'drop'"));
  o.ops = "all";
  o.target = "sc://spark";
  assert_int_equal(connect_forward_configure(&o), DD_EINVAL);
  o.target = "sc://spark:15002/;token=x";
  assert_int_equal(connect_forward_configure(&o), DD_EINVAL);
  connect_forward_shutdown();
  assert_false(connect_forward_enabled());
}

#define SPARK_SID "5a0e5c3e-0000-4000-8000-000000000001" /* ids are UUIDs */
#define SPARK_OP "5a0e5c3e-0000-4000-8000-000000000002"

/* Spark's Interrupt, answered the way a race makes it: the interrupted operation ended (and
 * left the running list) before the answer arrived. */
static int interrupt_unary(void *ctx, const char *e, int64_t t, const char *m, const ProtobufCMessage *r,
                           const ProtobufCMessageDescriptor *d, ProtobufCMessage **out) {
  (void)ctx, (void)e, (void)t, (void)r;
  assert_non_null(strstr(m, "Interrupt"));
  connect_fwd_op_remove(SPARK_OP);
  char *ids[] = {SPARK_OP};
  Spark__Connect__InterruptResponse resp = SPARK__CONNECT__INTERRUPT_RESPONSE__INIT;
  resp.session_id = SPARK_SID, resp.n_interrupted_ids = 1, resp.interrupted_ids = ids;
  uint8_t buf[256];
  size_t len = spark__connect__interrupt_response__pack(&resp, buf);
  *out = protobuf_c_message_unpack(d, NULL, len, buf);
  return *out ? 0 : DD_EINVAL;
}

static void test_interrupt_ended_operation(void **state) {
  (void)state;
  connect_fwd_opts o = CONNECT_FWD_OPTS_INIT;
  o.rpc.stream = ok_stream, o.rpc.unary = interrupt_unary;
  o.target = "sc://spark:15002";
  o.ops = "all";
  assert_int_equal(connect_forward_configure(&o), 0);
  assert_int_equal(connect_fwd_op_add("client-session", "client-op-1", SPARK_SID, SPARK_OP), 0);
  Spark__Connect__InterruptRequest req = SPARK__CONNECT__INTERRUPT_REQUEST__INIT;
  req.session_id = "client-session";
  req.interrupt_type = SPARK__CONNECT__INTERRUPT_REQUEST__INTERRUPT_TYPE__INTERRUPT_TYPE_ALL;
  char **ids = NULL;
  size_t n = 0;
  assert_int_equal(connect_forward_interrupt(&req, &ids, &n), 0);
  assert_int_equal(n, 1); /* the client's id, though the operation is gone */
  assert_string_equal(ids[0], "client-op-1");
  free(ids[0]);
  free(ids);
  connect_forward_shutdown();
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_expressions),
      cmocka_unit_test(test_unsupported),
      cmocka_unit_test(test_rewrite),
      cmocka_unit_test(test_configure),
      cmocka_unit_test(test_interrupt_ended_operation),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
