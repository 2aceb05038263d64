/* qry.h: store/query, relational operators over streams of arw_batch (store/arrow): the
 * engine behind the Spark Connect relations and SQL queries deltad answers.
 *
 * An operator (qry_op) has an output schema, fixed when it is built, and yields batches
 * one at a time:
 *
 *   qry_op *op;  rc = qry_range(&op, 0, 10, 1, 0);       a source
 *   rc = qry_limit(&op, op, 5);                          wrap it (takes the input)
 *   const arw_batch *b;
 *   while (!(rc = qry_next(op, &b)) && b) { ... }         b: valid until the next call
 *   qry_free(op);                                        frees the whole tree
 *
 * Sources: a Delta snapshot's scan (with the filter's data skipping), a local relation
 * (batches given whole), a range of longs, a dop_result-like table of batches.
 * Operators: filter, project, limit, offset, rename (ToDF / withColumnsRenamed), sort,
 * aggregate (group by with count, count distinct, sum, min, max, avg), deduplicate.
 * Constructors that take an input take ownership of it, also when they fail.
 *
 * Memory: streaming operators (scan, filter, project, limit, offset, rename) hold one
 * batch of each stage. Sort holds its whole input; aggregate holds one row per group (and
 * per distinct value for count distinct); deduplicate one row per distinct key: each is
 * bounded by QRY_MAX_HELD_BYTES of held column data (DD_ERANGE "the query needs more than
 * N bytes..." beyond it), as Spark's would spill or fail.
 *
 * Expressions are store/expr trees (ex.h), unbound: each operator binds them to its input
 * schema. Errors: 0 or a negative DD_E* code, message in dd_err_msg() (Spark's error class
 * in brackets where one applies). An operator belongs to one thread. */
#ifndef DD_STORE_QUERY_QRY_H
#define DD_STORE_QUERY_QRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/arrow/arrow.h"
#include "store/delta/dl.h"
#include "store/expr/ex.h"

/* Rows per batch a source produces by default. */
#define QRY_BATCH_ROWS 8192
/* Column data an operator that holds its input (sort, aggregate, deduplicate) may keep. */
#define QRY_MAX_HELD_BYTES ((size_t)1 << 30)

typedef struct qry_op qry_op;

/* The operator's output schema; borrowed, valid as long as the operator. */
const arw_schema *qry_schema(const qry_op *op);
/* The next batch in *out (at least one row), or *out = NULL at the end. The batch belongs
 * to the operator and is valid until the next qry_next or qry_free. */
int qry_next(qry_op *op, const arw_batch **out);
/* A check run before every batch of every operator of a tree (a deadline, a cancelled
 * call): non-zero stops the query, and qry_next returns that code (the check sets the
 * message). */
typedef int (*qry_check_fn)(void *ctx);
/* Sets the check on op and all its inputs (NULL fn: none). Call it on the finished tree. */
void qry_set_check(qry_op *op, qry_check_fn fn, void *ctx);
/* Frees op and its inputs. Accepts NULL. */
void qry_free(qry_op *op);
/* A one-line description of the operator ("Filter (id > 5)") for explain; borrowed. */
const char *qry_label(const qry_op *op);
/* The operator's input (i = 0, or 1.. for none), for walking the tree in explain. */
const qry_op *qry_input(const qry_op *op);

/* ======================= sources ======================= */

typedef struct qry_scan_opts {
  const ex_node *filter;      /* unbound predicate: applied, and used for data skipping; may be NULL */
  const char *const *roots;   /* extra local roots data files may be read from (scn_opts.roots) */
  size_t num_roots;
  size_t batch_rows;          /* 0: QRY_BATCH_ROWS */
  const char *const *columns; /* top-level columns to read, in this order (scn_opts.columns);
                                 NULL/0: all. With a filter, it must name every column the
                                 filter reads */
  size_t num_columns;
} qry_scan_opts;
#define QRY_SCAN_OPTS_INIT {NULL, NULL, 0, 0, NULL, 0}

/* The rows of snapshot snap of table t. Takes both (they are freed with the operator, also
 * when this fails). */
int qry_scan(qry_op **out, dl_table *t, dl_snapshot *snap, const qry_scan_opts *opts);
/* Batches given whole: takes schema and the n batches (all made for schema). */
int qry_local(qry_op **out, arw_schema *schema, arw_batch **batches, size_t n);
/* The longs start, start + step, ... below end (above it for a negative step), in a
 * column named "id" (non-nullable bigint), batch_rows per batch (0: QRY_BATCH_ROWS).
 * DD_EINVAL for step 0. */
int qry_range(qry_op **out, int64_t start, int64_t end, int64_t step, size_t batch_rows);

/* ======================= operators ======================= */

/* Rows where pred (unbound) is true. */
int qry_filter(qry_op **out, qry_op *in, const ex_node *pred);
/* One column per expression (unbound; `*` and `t.*` expand to the input's columns, an
 * alias names its column, else Spark's name for the expression, ex_name). keep_input:
 * the input's columns first, each replaced by an expression of the same name
 * (withColumns). */
int qry_project(qry_op **out, qry_op *in, ex_node *const *exprs, size_t n, bool keep_input);
int qry_limit(qry_op **out, qry_op *in, int64_t limit);
int qry_offset(qry_op **out, qry_op *in, int64_t offset);
/* New names for the input's columns: all of them in order (to_df: n must equal the column
 * count), or, when from is not NULL, from[i] -> to[i] (case-insensitive; unknown names
 * are ignored, as Spark does). */
int qry_rename(qry_op **out, qry_op *in, const char *const *from, const char *const *to, size_t n);
/* Sort by the keys (unbound EX_SORT nodes, or plain expressions: ascending, nulls first).
 * Stable: equal rows keep their input order. */
int qry_sort(qry_op **out, qry_op *in, ex_node *const *keys, size_t n);

typedef enum qry_agg_fn { QRY_COUNT, QRY_SUM, QRY_MIN, QRY_MAX, QRY_AVG } qry_agg_fn;

typedef struct qry_agg {
  qry_agg_fn fn;
  const ex_node *arg; /* unbound; NULL for count(*) */
  bool distinct;      /* count(DISTINCT arg) */
  const char *name;   /* output column name; NULL: Spark's ("count(1)", "sum(x)", ...) */
} qry_agg;

/* Looks up an aggregate function by Spark's name ("count", "sum", "min", "max", "avg",
 * "mean"): 0 and *out, or DD_ENOTFOUND. */
int qry_agg_lookup(qry_agg_fn *out, const char *name);
/* Group by the expressions (unbound; none: one group over all rows, one row even for no
 * input), then the aggregates: output columns are the group keys then the aggregates, with
 * Spark's types (count: bigint not null; sum: bigint for integral, double for floating,
 * decimal(p+10,s) for decimal; avg: double, decimal(p+4,s+4); min/max: the input type).
 * Groups come out in first-seen order. */
int qry_aggregate(qry_op **out, qry_op *in, ex_node *const *groups, size_t ngroups,
                  const qry_agg *aggs, size_t naggs);
/* The first row of each distinct combination of the named columns (NULL/0: all columns). */
int qry_dedup(qry_op **out, qry_op *in, const char *const *columns, size_t n);

/* ======================= output ======================= */

/* Spark's df.show() text (Dataset.showString) of up to num_rows rows of op: header,
 * +---+ borders, cells cut to truncate characters (0: no cut; > 3 keeps truncate - 3 and
 * "..."), right-aligned when truncating, or vertical "-RECORD n---" blocks; then
 * "only showing top N rows" when more rows exist. Reads at most num_rows + 1 rows.
 * *out malloc'ed. */
int qry_show_string(char **out, qry_op *op, int32_t num_rows, int32_t truncate, bool vertical);
/* Spark's printSchema tree ("root\n |-- id: long (nullable = false)\n"). *out malloc'ed. */
int qry_tree_string(char **out, const arw_schema *s, int level);
/* Spark's simpleString type name of field id ("bigint", "array<string>",
 * "struct<a:int>", "decimal(10,2)"). *out malloc'ed. */
int qry_type_string(char **out, const arw_schema *s, int id);

/* ======================= value text ======================= */

/* One text form of values for every consumer that prints rows without Arrow (deltactl table
 * scan, the JSON of nested cells in DeltaConnectService rows): decimals with their scale,
 * binary as lower-case hex, dates "YYYY-MM-DD", timestamps "YYYY-MM-DDTHH:MM:SS.ffffff"
 * (UTC, both timestamp types), structs and maps as JSON objects (a key that is not a string
 * as its JSON text), arrays as lists, floats as their shortest round-trip text, NaN and
 * infinities as NaN / Infinity / -Infinity (quoted in JSON).
 *
 * A growable buffer, p NUL-terminated once anything was put. After an allocation failure it
 * stops growing and sets oom (qry_text_value then answers DD_ENOMEM). */
typedef struct qry_text {
  char *p;
  size_t len, cap;
  bool oom;
} qry_text;
#define QRY_TEXT_INIT {NULL, 0, 0, false}

void qry_text_put(qry_text *t, const char *s, size_t n);
/* Empties the text (keeps its memory). */
void qry_text_clear(qry_text *t);
void qry_text_free(qry_text *t);
/* s[0..n) as a JSON string (quotes, backslash and control characters escaped). */
void qry_text_json_str(qry_text *t, const char *s, size_t n);
void qry_text_date(qry_text *t, int64_t days);
void qry_text_timestamp(qry_text *t, int64_t micros);
/* A Decimal128 (16 bytes little-endian two's complement) with scale digits after the point. */
void qry_text_decimal(qry_text *t, const uint8_t *le16, int scale);
/* single: as a float (the shortest text that reads back as the same float). quote_special:
 * NaN and the infinities in quotes (JSON). */
void qry_text_float(qry_text *t, double v, bool single, bool quote_special);
void qry_text_hex(qry_text *t, const uint8_t *p, size_t n);
/* Slot i of field id of b: json true: as a JSON value (null, quoted strings, dates,
 * timestamps, decimals and binary); false: bare text (strings unquoted, null as ""; nested
 * values are JSON either way). */
int qry_text_value(qry_text *t, const arw_batch *b, int id, size_t i, bool json);

#endif
