/* qry_int.h: store/query internals shared by its operator files.
 *
 * Every operator is a struct whose first member is a qry_op: the output schema (owned when
 * own_schema), the input (owned), a label for explain, and two functions: next (yield the
 * next batch or NULL) and drop (free what the operator keeps beyond the qry_op). Batches an
 * operator makes are kept in `cur` and freed at the next call; batches it passes through
 * belong to its input. */
#ifndef DD_STORE_QUERY_QRY_INT_H
#define DD_STORE_QUERY_QRY_INT_H

#include "store/query/qry.h"

struct qry_op {
  const arw_schema *schema;
  arw_schema *own_schema; /* freed with the op (after cur) */
  qry_op *in;
  char *label;
  arw_batch *cur;         /* the last batch this op made */
  int (*next)(qry_op *op, const arw_batch **out);
  void (*drop)(qry_op *op);
  qry_check_fn check;     /* run by qry_next before each batch (qry_set_check); may be NULL */
  void *check_ctx;
};

/* Allocates an operator struct of size bytes (a qry_op first) with next and drop, taking
 * in (freed when this fails). The label is printf-formatted. */
void *qry__new(size_t size, qry_op *in, int (*next)(qry_op *, const arw_batch **),
               void (*drop)(qry_op *), const char *label_fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* Replaces op->cur by b (freeing the previous one) and returns it. */
const arw_batch *qry__keep(qry_op *op, arw_batch *b);
/* An expression's Spark SQL text for labels (malloc'ed, "?" when it cannot be named). */
char *qry__expr_text(const ex_node *e);

/* Binds e to s with the default options. */
int qry__bind(ex_node **out, const ex_node *e, const arw_schema *s);

/* ---- values (qry_values.c) ---- */

/* Compares slot i of view a with slot j of view b (same kind; nulls first): <0, 0, >0.
 * Spark's ordering: strings and binary by unsigned bytes, NaN above every other double,
 * -0.0 equal to 0.0. Nested kinds are compared element by element (lists, maps by
 * entries in order, structs field by field), b0/b1 give their children. */
int qry__cmp(const arw_batch *ba, int fa, size_t i, const arw_batch *bb, int fb, size_t j);
/* A hash of slot i of field f of b consistent with qry__cmp == 0. */
uint64_t qry__hash(const arw_batch *b, int f, size_t i);

/* A set of distinct rows of key batches (all made for one schema `keys`): each inserted
 * row gets the index of its first equal row (nulls equal to nulls, as GROUP BY and
 * DISTINCT treat them). The distinct rows are kept in `rows`. */
typedef struct qry__keyset {
  const arw_schema *keys;
  arw_batch *rows;
  size_t n;
  size_t *slots;  /* open addressing: index + 1, 0 empty */
  uint64_t *hashes;
  size_t cap;     /* power of two */
} qry__keyset;
int qry__keyset_init(qry__keyset *k, const arw_schema *keys);
/* *idx: the row's group; *added: it is new. */
int qry__keyset_put(qry__keyset *k, const arw_batch *b, size_t row, size_t *idx, bool *added);
void qry__keyset_free(qry__keyset *k);
/* Bytes of column data held by a batch (an estimate for the held-memory bound). */
size_t qry__batch_bytes(const arw_batch *b);
int qry__held_check(size_t bytes, const char *what);

#endif
