/* ex_int.h: store/expr internals shared by the tree, parser, binder, evaluator and skipper.
 *
 * A node is one struct for every kind; the fields a kind does not use stay zero. Binding
 * copies the tree and fills the `bound` part of every node: its result type, nullability,
 * for a column the input field id, for a call the function's descriptor (ex__fn) and any
 * state compiled once (a regex), and the session options evaluation needs.
 *
 * Evaluation is vectorised: every node evaluates to an ex__vec, one typed array of the
 * batch's rows plus a validity byte array, and functions work array by array:
 *   BOOLEAN                 b[i] (0/1 bytes)
 *   BYTE..LONG, DATE, TS*   i[i] (int64; the result type's range is checked where made)
 *   FLOAT, DOUBLE           f[i] (double; a FLOAT result is rounded to float where made)
 *   DECIMAL                 d[i] (unscaled int128 at the type's scale)
 *   STRING, BINARY          bytes data[off[i] .. off[i+1])
 *   NULL, nested            no values (nested columns are copied by ex_eval itself)
 * valid is NULL when every row is valid, else one byte per row (0 = null). */
#ifndef DD_STORE_EXPR_EX_INT_H
#define DD_STORE_EXPR_EX_INT_H

#include "store/expr/ex.h"

typedef struct ex__vec {
  ex_type type;
  size_t n;
  uint8_t *valid;
  uint8_t *b;
  int64_t *i;
  double *f;
  ex_i128 *d;
  char *data;
  size_t *off;
  size_t data_len, data_cap;
} ex__vec;

typedef struct ex__fn ex__fn;

typedef struct ex__opts {
  bool ansi;
  bool case_sensitive;
  int32_t tz_offset_s; /* session time zone as a fixed offset from UTC */
  int64_t now_us;
} ex__opts;

struct ex_node {
  ex_kind kind;
  int depth;           /* 1 for a leaf */
  char *name;          /* CALL: function (lowercase); ALIAS: name; STAR: target or NULL */
  ex_node **args;
  size_t nargs;
  ex_value lit;        /* LITERAL (lit.str owned) */
  char **parts;        /* COLUMN */
  size_t nparts;
  ex_type cast_to;     /* CAST */
  bool implicit;       /* CAST inserted by binding (hidden from ex_name) */
  bool try_;           /* CAST: try_cast (an ANSI cast giving NULL instead of an error) */
  bool asc, nulls_first; /* SORT */
  bool distinct;       /* CALL: aggregate over distinct values */
  /* bound part */
  bool bound;
  ex_type type;
  bool nullable;
  int field;                 /* COLUMN: input field id; path of ids in fpath */
  int *fpath;                /* COLUMN: field ids from the top-level column down */
  const arw_schema *schema;  /* the input schema (borrowed) */
  const ex__fn *fn;          /* CALL */
  void *aux;                 /* CALL: compiled state, freed by fn->free_aux */
  ex__opts opts;
};

/* ---- tree (ex_tree.c) ---- */
int ex__node_new(ex_node **out, ex_kind kind);
int ex__set_args(ex_node *e, ex_node **args, size_t nargs); /* takes args, checks depth */
char *ex__strdup(const char *s);
char *ex__strndup(const char *s, size_t n);

/* ---- types (ex_type.c) ---- */
bool ex__is_integral(ex_type_id t);  /* BYTE..LONG */
bool ex__is_numeric(ex_type_id t);   /* integral, FLOAT, DOUBLE, DECIMAL */
bool ex__is_nested(ex_type_id t);
ex_type ex__t(ex_type_id id);
ex_type ex__dec(int p, int s);
/* Decimal type an integral type converts to (byte: (3,0), int: (10,0), long: (20,0)). */
ex_type ex__dec_of(ex_type t);
/* Bounded decimal type (p > 38: Spark's adjustment keeping at least 6 fraction digits). */
ex_type ex__dec_bounded(int p, int s);
/* Wider of two types for comparison / coalesce / in (Spark's findWiderTypeForTwo); false
 * when none. */
bool ex__wider(ex_type a, ex_type b, ex_type *out, bool ansi);
int64_t ex__int_min(ex_type_id t);
int64_t ex__int_max(ex_type_id t);
ex_i128 ex__pow10(int n);
/* "123.45" text of an unscaled decimal. buf >= 48 bytes. */
void ex__dec_format(char *buf, ex_i128 v, int scale);
/* arw kind of a (non-nested) type. */
arw_kind ex__arrow_kind(ex_type t);

/* ---- vectors (ex_vec.c) ---- */
int ex__vec_init(ex__vec *v, ex_type t, size_t n);   /* values zeroed, all valid */
void ex__vec_free(ex__vec *v);
int ex__vec_valid_alloc(ex__vec *v);                  /* makes v->valid (all 1) */
static inline bool ex__ok(const ex__vec *v, size_t i) { return !v->valid || v->valid[i]; }
int ex__vec_set_null(ex__vec *v, size_t i);
/* Appends string bytes for row i (rows appended in order 0..n-1). */
int ex__vec_str_push(ex__vec *v, size_t i, const char *s, size_t len);
/* The bytes of string/binary row i; a column of empty strings may have no buffer at all
 * (data NULL), and NULL + 0 is undefined in C. */
static inline const char *ex__vec_str(const ex__vec *v, size_t i) { return v->data ? v->data + v->off[i] : ""; }
/* ANDs the validity of src into dst (dst->valid made when needed). */
int ex__vec_and_valid(ex__vec *dst, const ex__vec *src);
/* Evaluates a bound node over batch in. */
int ex__eval_node(ex__vec *out, const ex_node *e, const arw_batch *in);
/* Fills out with n copies of a literal. */
int ex__vec_literal(ex__vec *out, const ex_value *v, size_t n);
/* Row i of v as a value; string bytes are copied to *storage (free()). */
int ex__vec_value(ex_value *out, char **storage, const ex__vec *v, size_t i);
/* Reads a (non-nested) input column into a vector. */
int ex__vec_column(ex__vec *out, const ex_node *col, const arw_batch *in);

/* ---- functions (ex_fn.c and friends) ---- */
struct ex__fn {
  const char *name;
  int min_args, max_args; /* max -1: any */
  /* Checks argument types (args bound), may wrap args in casts, sets e->type/nullable. */
  int (*bind)(ex_node *e);
  int (*eval)(ex__vec *out, const ex_node *e, const arw_batch *in);
  void (*free_aux)(void *aux);
};
/* The canonical function for a Spark name or alias; NULL when none. */
const ex__fn *ex__fn_find(const char *name);
extern const ex__fn ex__fns_arith[]; /* ex_fn_arith.c; ended by a NULL name */
extern const ex__fn ex__fns_str[];   /* ex_fn_str.c */
extern const ex__fn ex__fns_more[];  /* ex_fn_more.c */
extern const ex__fn ex__fns_round[]; /* ex_fn_round.c */
/* Struct-building calls (ex_fn_more.c): named_struct and the internal EX__STRUCT_OF (a
 * name no SQL text can spell), built by ex_eval into a STRUCT field (ex_eval.c). */
#define EX__STRUCT_OF EX_FN_STRUCT_OF
bool ex__is_struct_call(const ex_node *e);
bool ex__is_when_call(const ex_node *e); /* if / when (ex_fn.c) */
/* Nested results (ex_eval_nested.c): a struct call's output field and values, and an
 * if/when of nested values into output field of. */
int ex__add_struct_field(arw_schema *out, int parent, const char *name, const ex_node *e, int *out_id);
int ex__eval_struct(arw_batch *out, int of, const ex_node *e, const arw_batch *in);
int ex__eval_when_nested(arw_batch *out, int of, const ex_node *e, const arw_batch *in);
/* Appends the value at slot of in's field inf (any kind, nested too) to out's field of. */
int ex__copy_value(arw_batch *out, int of, const arw_batch *in, int inf, size_t slot);
/* *out (type t, n rows): row i copied from vals[pick[i]], null where pick[i] < 0 or that
 * row is null. */
int ex__gather(ex__vec *out, ex_type t, ex__vec *vals, const int *pick, size_t n);
/* Binds a call whose arguments all take their wider (atomic) type, which is its type;
 * nullable unless an argument is not (coalesce, greatest, least). */
int ex__bind_common(ex_node *e);
int ex__eval_args(ex__vec *v, const ex_node *e, const arw_batch *in); /* v[e->nargs] */
void ex__free_args(ex__vec *v, size_t n);
/* Allocates *out (e->nargs vectors) and evaluates every argument into it; ex__free_all. */
int ex__eval_all(ex__vec **out, const ex_node *e, const arw_batch *in);
void ex__free_all(ex__vec *v, size_t n);
/* DD_EINVAL [DATATYPE_MISMATCH...] naming the function, what it wants and what it got. */
int ex__type_error(const ex_node *e, const char *want);
bool ex__common_type(const ex_node *e, size_t from, size_t step, ex_type *out);
int ex__compare(int8_t *r, const ex__vec *a, const ex__vec *b);
/* Wraps e->args[i] in an implicit cast to t (no-op when already t). */
int ex__coerce_arg(ex_node *e, size_t i, ex_type t);
/* Spark's implicit cast for function arguments (ImplicitTypeCasts); false when none. */
bool ex__can_implicit(ex_type from, ex_type to);

/* ---- casts (ex_cast.c) ---- */
/* Can a value of type from be cast to to at all (Cast.canCast / canAnsiCast)? */
bool ex__can_cast(ex_type from, ex_type to, bool ansi);
int ex__cast_vec(ex__vec *out, const ex__vec *in, ex_type to, const ex__opts *o);
/* The same, NULL for each row whose cast fails (TRY_CAST; only out of memory is an error). */
int ex__cast_vec_try(ex__vec *out, const ex__vec *in, ex_type to, const ex__opts *o);
/* Text to date/timestamp (Spark's formats); false when invalid. */
bool ex__parse_date(const char *s, size_t len, int64_t *days);
bool ex__parse_timestamp(const char *s, size_t len, bool ntz, int32_t tz_offset_s,
                         int64_t *micros);
void ex__format_date(char *buf, int64_t days);          /* buf >= 16 */
void ex__format_timestamp(char *buf, int64_t micros);   /* buf >= 40 */
int64_t ex__days_from_civil(int64_t y, unsigned m, unsigned d);
void ex__civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d);
/* Java's Double.toString (Float.toString with is_float) form; buf >= 40. */
void ex__format_double(char *buf, double d, bool is_float);
/* Text to decimal of type t; false when invalid or it does not fit. */
bool ex__parse_decimal(const char *s, size_t len, ex_type t, ex_i128 *out);


#endif
