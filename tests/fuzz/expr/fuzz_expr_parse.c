/* fuzz_expr_parse.c: libFuzzer target of store/expr: the SQL expression parser, then, for
 * what parses, the Spark name, a clone, binding against a small schema and evaluation over
 * one row. Properties: a parse either succeeds with a tree or fails with a message, never
 * both; every tree has a name (empty only where Spark's is: the literal ''); a clone has the
 * same name. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/arrow/arrow.h"
#include "store/expr/ex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ex_node *e = NULL, *c = NULL, *b = NULL;
  arw_schema *s = NULL, *os = NULL;
  arw_batch *in = NULL, *out = NULL;
  char *n1 = NULL, *n2 = NULL;
  size_t used = 0;
  if (ex_parse_prefix(&e, (const char *)data, size, &used, NULL) == 0) {
    if (used > size) abort();
    ex_free(e);
    e = NULL;
  }
  if (ex_parse(&e, (const char *)data, size, NULL) != 0) {
    if (e) abort();
    if (!*dd_err_msg()) abort();
    return 0;
  }
  if (!e || ex_name(&n1, e)) abort();
  if (ex_clone(&c, e) || ex_name(&n2, c) || strcmp(n1, n2)) abort();
  int id;
  arw_schema_new(&s);
  arw_schema_add(s, ARW_ROOT, "a", ARW_INT64, true, NULL);
  arw_schema_add(s, ARW_ROOT, "s", ARW_UTF8, true, NULL);
  arw_schema_add(s, ARW_ROOT, "d", ARW_DATE32, true, NULL);
  arw_batch_new(&in, s);
  arw_append_i64(in, 0, 7);
  arw_append_str(in, 1, "x", 1);
  arw_append_null(in, 2);
  ex_bind_opts o = EX_BIND_OPTS_INIT;
  o.now_us = 1;
  if (ex_bind(&b, e, s, &o) == 0 && arw_schema_new(&os) == 0 &&
      ex_add_field(os, ARW_ROOT, "r", b, &id) == 0 && arw_batch_new(&out, os) == 0 &&
      ex_eval(b, in, out, id) == 0 && arw_batch_rows(out) != 1)
    abort();
  arw_batch_free(out);
  arw_schema_free(os);
  arw_batch_free(in);
  arw_schema_free(s);
  ex_free(b);
  ex_free(c);
  ex_free(e);
  free(n1);
  free(n2);
  return 0;
}
