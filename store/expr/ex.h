/* ex.h: store/expr, the one expression engine of deltad (Spark SQL semantics).
 *
 * An expression is a tree of ex_node: literals, column references, function calls by
 * Spark's names, casts, aliases, `*` and sort orders. Trees come from three places: the
 * SQL expression text parser (ex_parse), spark.connect Expression messages
 * (server/service/connect_expr.c) and the constructors below. A tree is then bound to an
 * arw_schema (ex_bind): columns resolved (case-insensitive by default, nested struct fields
 * by path), Spark's result types inferred and its implicit casts inserted. A bound tree is
 * evaluated over arw_batches (ex_eval into a field of an output batch, ex_eval_mask for
 * filters), and a bound predicate decides which Delta files may hold matching rows
 * (ex_skipper, from partition values and file stats; it never skips a file that could match).
 *
 * Semantics: Spark 4 with its default spark.sql.ansi.enabled=true (overflow, invalid casts
 * and division by zero are errors naming the value; ex_bind_opts.ansi=false gives the legacy
 * behaviour: null / wrap-around). Three-valued logic: NULL AND false = false, NULL OR true =
 * true, a comparison with NULL is NULL; `<=>` never returns NULL. A filter keeps rows whose
 * predicate is true (NULL drops the row). The session time zone is UTC unless
 * ex_bind_opts.time_zone names a fixed offset ("+02:00").
 *
 * Ownership: trees returned through `**out` belong to the caller (ex_free accepts NULL).
 * Constructors that take child nodes take ownership of them, also when they fail.
 * Pointers returned directly (ex_fn_name, ex_literal, ...) are borrowed from the node and
 * live as long as it. A bound tree borrows the arw_schema it was bound to: the schema must
 * outlive it.
 *
 * Threads: a tree is immutable once built; a bound tree may be evaluated by several
 * threads at once (each call with its own batches). An ex_skipper belongs to one thread.
 *
 * Limits: trees are at most EX_MAX_DEPTH deep (constructors and the parser refuse deeper
 * ones with DD_EINVAL before recursing, so no function here can exhaust the stack).
 *
 * Errors: 0 or a negative DD_E* code (common/err.h), the message in dd_err_msg() carrying
 * Spark's error class in brackets where Spark has one:
 *   DD_EINVAL        [PARSE_SYNTAX_ERROR], [UNRESOLVED_COLUMN.WITH_SUGGESTION] (naming the
 *                    column: "cannot resolve `x`"), [DATATYPE_MISMATCH...], [CAST_INVALID_INPUT]
 *   DD_ERANGE        [ARITHMETIC_OVERFLOW], [DIVIDE_BY_ZERO], [CAST_OVERFLOW],
 *                    [NUMERIC_VALUE_OUT_OF_RANGE] (the value in the message)
 *   DD_EUNSUPPORTED  a function or construct this engine does not implement (named) */
#ifndef DD_STORE_EXPR_EX_H
#define DD_STORE_EXPR_EX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/arrow/arrow.h"
#include "store/delta/dl.h"

/* Deepest tree accepted (parser nesting, constructor depth, connect messages). */
#define EX_MAX_DEPTH 256

/* ======================= types and values ======================= */

typedef enum ex_type_id {
  EX_T_NULL, /* the type of a bare NULL literal (Spark "void") */
  EX_T_BOOLEAN,
  EX_T_BYTE,
  EX_T_SHORT,
  EX_T_INT,
  EX_T_LONG,
  EX_T_FLOAT,
  EX_T_DOUBLE,
  EX_T_DECIMAL,       /* precision 1..38, scale 0..precision */
  EX_T_STRING,
  EX_T_BINARY,
  EX_T_DATE,          /* days since 1970-01-01 */
  EX_T_TIMESTAMP,     /* microseconds since the epoch, UTC (Spark TimestampType) */
  EX_T_TIMESTAMP_NTZ, /* microseconds since the epoch, no time zone */
  EX_T_STRUCT,        /* nested types: only passed through (column references, coalesce...) */
  EX_T_ARRAY,
  EX_T_MAP,
} ex_type_id;

typedef struct ex_type {
  ex_type_id id;
  int precision, scale; /* EX_T_DECIMAL */
} ex_type;

/* 128-bit two's complement (decimal unscaled values). */
__extension__ typedef __int128 ex_i128;

/* A literal value. */
typedef struct ex_value {
  ex_type type;
  bool is_null;
  bool b;          /* BOOLEAN */
  int64_t i;       /* BYTE..LONG, DATE (days), TIMESTAMP* (micros) */
  double f;        /* FLOAT, DOUBLE */
  ex_i128 dec;     /* DECIMAL: unscaled value */
  const char *str; /* STRING (UTF-8), BINARY: len bytes, not NUL-terminated */
  size_t len;
} ex_value;

/* Parses a Spark SQL type name: boolean, tinyint/byte, smallint/short, int/integer,
 * bigint/long, float/real, double, decimal/dec/numeric[(p[,s])] (decimal alone is
 * decimal(10,0)), string/varchar(n)/char(n), binary, date, timestamp, timestamp_ntz,
 * timestamp_ltz, void. Case-insensitive. DD_EINVAL naming the text otherwise. */
int ex_type_parse(ex_type *out, const char *text, size_t len);
/* Spark's simpleString ("int", "bigint", "decimal(10,2)", "timestamp_ntz", "void");
 * writes at most cap bytes (NUL-terminated when cap > 0), returns the needed length. */
size_t ex_type_format(ex_type t, char *buf, size_t cap);
/* The type of an arrow field kind (with its decimal precision/scale). */
ex_type ex_type_of_arrow(const arw_schema *s, int field);
bool ex_type_equal(ex_type a, ex_type b);

/* ======================= the tree ======================= */

typedef enum ex_kind {
  EX_LITERAL,
  EX_COLUMN, /* unresolved (parts) or, in a bound tree, resolved to an input field */
  EX_CALL,   /* a function by Spark's name, lowercase ("+", "and", "when", "substring"...) */
  EX_CAST,   /* one argument, a target type */
  EX_ALIAS,  /* one argument, a name */
  EX_STAR,   /* `*` or `t.*` (expanded by the caller, never bound) */
  EX_SORT,   /* one argument, a direction and a null ordering */
} ex_kind;

typedef struct ex_node ex_node;

void ex_free(ex_node *e);
/* A deep copy. */
int ex_clone(ex_node **out, const ex_node *e);
/* A deep copy of unbound e with each column reference col given by fn: *out its
 * replacement (owned by the copy), or left NULL to copy col as it is. */
typedef int (*ex_column_fn)(ex_node **out, const ex_node *col, void *ctx);
int ex_map_columns(ex_node **out, const ex_node *e, ex_column_fn fn, void *ctx);

/* Constructors. Strings are copied. */
int ex_new_literal(ex_node **out, const ex_value *v);
/* A column reference by its name parts ("a", "b", "c" for a.b.c). */
int ex_new_column(ex_node **out, const char *const *parts, size_t nparts);
/* A column reference from Spark's attribute syntax: dotted parts, each optionally
 * backquoted (`a.b`.c is two parts; `` inside backquotes is one backquote). */
int ex_new_column_text(ex_node **out, const char *text, size_t len);
/* A call of function fn (matched case-insensitively, stored lowercase); takes args[0..n). */
/* EX_FN_STRUCT_OF(guard, 'name', value, ...): named_struct's struct, NULL where guard is
 * NULL; a name SQL text cannot spell (MERGE's struct assignment by field name). */
#define EX_FN_STRUCT_OF "#struct_of"
int ex_new_call(ex_node **out, const char *fn, ex_node **args, size_t nargs);
/* Marks a call as an aggregate over distinct values (count(DISTINCT x)). */
void ex_set_distinct(ex_node *call, bool distinct);
int ex_new_cast(ex_node **out, ex_node *arg, ex_type to);
/* TRY_CAST: the ANSI cast, NULL where it would fail. */
int ex_new_try_cast(ex_node **out, ex_node *arg, ex_type to);
int ex_new_alias(ex_node **out, ex_node *arg, const char *name);
/* `*` (target NULL) or `target.*` (the dotted qualifier as text). */
int ex_new_star(ex_node **out, const char *target);
/* nulls_first: -1 = Spark's default for the direction (ASC NULLS FIRST, DESC NULLS LAST),
 * 0 = nulls last, 1 = nulls first. */
int ex_new_sort(ex_node **out, ex_node *arg, bool ascending, int nulls_first);

/* Inspection (any tree, bound or not). */
ex_kind ex_node_kind(const ex_node *e);
size_t ex_nargs(const ex_node *e);
const ex_node *ex_arg(const ex_node *e, size_t i);
const char *ex_fn_name(const ex_node *e);          /* EX_CALL; NULL otherwise */
bool ex_call_distinct(const ex_node *e);           /* EX_CALL with DISTINCT */
const char *ex_alias_name(const ex_node *e);       /* EX_ALIAS; NULL otherwise */
const char *ex_star_target(const ex_node *e);      /* EX_STAR; NULL for a bare `*` */
const ex_value *ex_literal(const ex_node *e);      /* EX_LITERAL; NULL otherwise */
/* EX_COLUMN: the name parts (as written, or in a bound tree as the schema spells them). */
const char *const *ex_column_parts(const ex_node *e, size_t *nparts);
ex_type ex_cast_type(const ex_node *e);            /* EX_CAST */
bool ex_cast_is_try(const ex_node *e);             /* EX_CAST made by ex_new_try_cast */
bool ex_sort_ascending(const ex_node *e);          /* EX_SORT */
bool ex_sort_nulls_first(const ex_node *e);        /* EX_SORT (default resolved) */

/* Spark's name of the column an expression produces: the alias, a column's last part, or
 * Spark's SQL text of the expression ("(a + 1)", "upper(s)", "CAST(a AS BIGINT)",
 * "(a IS NULL)"). Implicit casts added by binding do not show. malloc'ed. */
int ex_name(char **out, const ex_node *e);

/* ======================= SQL text ======================= */

typedef struct ex_parse_opts {
  int max_depth;     /* nesting bound, at most EX_MAX_DEPTH */
  bool allow_alias;  /* accept a trailing `AS name` / `name` (selectExpr) */
} ex_parse_opts;
#define EX_PARSE_OPTS_INIT {.max_depth = EX_MAX_DEPTH, .allow_alias = true}

/* Parses one Spark SQL expression (all of text). DD_EINVAL [PARSE_SYNTAX_ERROR] naming the
 * token and its offset. opts may be NULL. */
int ex_parse(ex_node **out, const char *text, size_t len, const ex_parse_opts *opts);
/* Parses the longest expression at the start of text and stops before the first token that
 * cannot continue it (`,`, `)`, FROM, WHERE, ORDER, ...: any keyword Spark reserves there);
 * *consumed is the bytes used (trailing spaces included). For SQL statement parsers. */
int ex_parse_prefix(ex_node **out, const char *text, size_t len, size_t *consumed,
                    const ex_parse_opts *opts);

/* ======================= binding ======================= */

typedef struct ex_bind_opts {
  bool case_sensitive; /* spark.sql.caseSensitive (default false) */
  bool ansi;           /* spark.sql.ansi.enabled (default true, Spark 4) */
  const char *time_zone; /* session time zone: NULL/"UTC"/"Z" or a fixed "+hh:mm" offset */
  int64_t now_us;      /* current_date/current_timestamp of the query; 0: the clock at bind */
} ex_bind_opts;
#define EX_BIND_OPTS_INIT {.case_sensitive = false, .ansi = true}

/* Resolves every column of e against schema s, checks argument types, infers result types
 * and inserts Spark's implicit casts; *out is a new bound tree (e is not changed). opts may
 * be NULL. EX_STAR anywhere is DD_EINVAL (expand it first); EX_ALIAS and EX_SORT are kept
 * (their argument is bound). */
int ex_bind(ex_node **out, const ex_node *e, const arw_schema *s, const ex_bind_opts *opts);
bool ex_is_bound(const ex_node *e);
/* Result type and nullability of a bound tree. */
ex_type ex_result_type(const ex_node *bound);
bool ex_result_nullable(const ex_node *bound);
/* EX_COLUMN of a bound tree: the input field id it reads (a nested field's own id). */
int ex_column_field(const ex_node *bound);
/* Does the bound tree read any column? (false: a constant expression) */
bool ex_uses_columns(const ex_node *bound);

/* ======================= evaluation ======================= */

/* Adds to schema out a field named name under parent for the result of bound (a nested
 * result copies the input field's subtree), its id in *out_id. */
int ex_add_field(arw_schema *out, int parent, const char *name, const ex_node *bound,
                 int *out_id);
/* Evaluates bound over every row of in and appends arw_batch_rows(in) values to field
 * out_field of out (a field added by ex_add_field for this tree, or of the same kind).
 * On error nothing is guaranteed about out_field's new rows: the caller drops the batch. */
int ex_eval(const ex_node *bound, const arw_batch *in, arw_batch *out, int out_field);
/* Evaluates a bound boolean predicate: mask[r] = 1 where it is true, 0 where false or NULL;
 * mask holds arw_batch_rows(in) bytes; *out_true (may be NULL) counts the ones. */
int ex_eval_mask(const ex_node *bound, const arw_batch *in, uint8_t *mask, size_t *out_true);
/* Evaluates a bound constant expression (!ex_uses_columns). String and binary results
 * point into *storage (malloc'ed, free() it; NULL when unused). */
int ex_eval_const(ex_value *out, char **storage, const ex_node *bound);

/* ======================= data skipping ======================= */

typedef struct ex_skipper ex_skipper;

/* A file filter for bound predicate pred (bound to the snapshot's logical schema, e.g.
 * scn_schema) over snapshot snap's partition values and file stats. pred and snap are
 * borrowed and must outlive the skipper. */
int ex_skipper_new(ex_skipper **out, const ex_node *pred, const dl_snapshot *snap);
void ex_skipper_free(ex_skipper *sk);
/* false only when no row of f can satisfy the predicate (scn_opts.keep_file: ctx is the
 * skipper). Missing or unparsable stats, truncated maxima, millisecond-truncated timestamps
 * and anything not understood keep the file. */
bool ex_skipper_keep(void *sk, const dl_file *f);
/* Files seen and files skipped so far. */
void ex_skipper_counts(const ex_skipper *sk, int64_t *considered, int64_t *skipped);

/* 0 when bound predicate pred reads only partition columns of snap (OPTIMIZE WHERE);
 * otherwise DD_EINVAL naming the first other column ("Predicate references non-partition
 * column 'x'. Only the partition columns may be referenced: [p1, p2]"). */
int ex_check_partition_only(const ex_node *pred, const dl_snapshot *snap);

#endif
