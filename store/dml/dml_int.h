/* dml_int.h: internals of store/dml shared by dml_run.c (the file loop and the commit),
 * dml_bind.c (predicate, assignments and constraints bound to the table) and dml_result.c
 * (metrics and the result row). MERGE is meant to plug in here: its own row function
 * (dml__rows_fn) over the same file loop and commit. */
#ifndef DD_STORE_DML_DML_INT_H
#define DD_STORE_DML_DML_INT_H

#include "store/dml/dml.h"

#include "common/err.h"
#include "store/arrow/arrow.h"

/* A table bound for one operation: its logical schema (the scan's), the predicate, the
 * per-column output expressions of an UPDATE and the CHECK constraints. */
typedef struct dml__bound {
  arw_schema *schema;       /* every top-level column, Spark's Arrow types (scn_arrow_schema) */
  ex_node *pred;            /* bound boolean predicate; NULL: every row */
  char *pred_sql;           /* its Spark SQL text ("(x > 3)"), NULL without one */
  bool partition_only;      /* pred reads only partition columns (or there is none) */
  size_t ncols;             /* top-level columns */
  ex_node **outs;           /* UPDATE: [ncols] if(pred, CAST(value AS type), col) or col */
  bool *assigned;           /* UPDATE: [ncols] */
  bool moves_partitions;    /* UPDATE: a partition column is assigned (rows may move) */
  ex_node **not_null;       /* UPDATE: [ncols] isnotnull(outs[i]) for NOT NULL assigned columns */
  size_t ncons;             /* CHECK constraints, bound over the output batch */
  ex_node **cons;
  char **cons_name, **cons_sql;
} dml__bound;

/* Assignments to fields of struct columns (dml_nested_set.c), gathered for one UPDATE or
 * MERGE clause. */
typedef struct dml__nset_item dml__nset_item;
typedef struct dml__nset {
  dml__nset_item *v;
  size_t n;
} dml__nset;
/* Adds the assignment of value (borrowed) to text (`s.a`, `s.n.c`: a field path in a struct
 * column of ts, parts plain or `quoted`): *col its column. *whole when text names a column
 * itself (nothing added); *col SIZE_MAX when it names none. DD_EINVAL for a field the
 * struct lacks (FIELD_NOT_FOUND), a path through an array or map, or one that conflicts
 * with an earlier assignment (DELTA_CONFLICT_SET_COLUMN). */
int dml__nset_resolve(dml__nset *ns, const arw_schema *ts, const char *text, const ex_node *value,
                      size_t *col, bool *whole);
/* Delta's DELTA_CONFLICT_SET_COLUMN for assignments a and b (one inside the other). */
int dml__conflict(const char *a, const char *b);
/* The text of a nested assignment to column col (the first), NULL when there is none. */
const char *dml__nset_first(const dml__nset *ns, size_t col);
/* Column col's new value (unbound): its struct with the assigned fields replaced; ref the
 * column's name parts in the schema bs the values are bound over; pred (unbound, may be
 * NULL) the rows the assignments apply to (the others keep their value). */
int dml__nset_value(ex_node **out, const dml__nset *ns, size_t col, const arw_schema *ts,
                    const char *const *ref, size_t nref, const arw_schema *bs, const ex_node *pred);
void dml__nset_free(dml__nset *ns);

/* Generated and identity columns (dml_generated.c). */
bool dml__identity(const dl_field *f);
/* f's generation expression parsed (unbound), NULL when f is not a generated column. */
int dml__gen_parse(ex_node **out, const dl_field *f);
/* gen with each reference to a column i of ts that has a value vals[i] (unbound, may be
 * NULL: the reference stays) replaced by CAST(vals[i] AS its type); *touched when one was. */
int dml__gen_value(ex_node **out, bool *touched, const ex_node *gen, const arw_schema *ts,
                   ex_node *const *vals);
/* Appends the CHECK constraint "Generated Column (g <=> (expr))" of every generated column
 * of s to b's constraints. */
int dml__gen_constraints(dml__bound *b, const dl_snapshot *s);

/* Binds what opts asks (assignments only when update) against snapshot s. DD_EINVAL for
 * an unknown column, a non-boolean predicate, a bad assignment. */
int dml__bind(dml__bound *b, const dl_snapshot *s, const dml_opts *o, bool update);
void dml__bound_free(dml__bound *b);
/* The table's CHECK constraints (delta.constraints.*) bound over b->schema into b->cons. */
int dml__bind_constraints(dml__bound *b, const dl_snapshot *s);
/* UPDATE's checks on the new rows of batch out (before: the rows they came from, for the
 * NOT NULL test): DD_EINVAL naming the first violated constraint. */
int dml__check_not_null(const dml__bound *b, const arw_batch *in);
int dml__check_constraints(const dml__bound *b, const arw_batch *out);

/* The deletion vector file of one operation: every vector it writes goes into one
 * deletion_vector_<uuid>.bin (as Delta's tasks do), built in memory and put whole before
 * the commit; the descriptors point into it (z85 is their pathOrInlineDv). */
typedef struct dml__dvfile {
  char z85[21];
  char *path;       /* store path once named; the file exists once put is true */
  uint8_t *buf;     /* the version byte, then each framed vector */
  size_t len, cap;
  bool put;
} dml__dvfile;

/* The serialized bitmap (magic + portable 64-bit roaring) of sorted unique rows[0..n). */
int dml__dv_serialize(uint8_t **out, size_t *len, const uint64_t *rows, size_t n);
/* Appends rows[0..n) as one more vector of the file; *out its descriptor (path_or_inline
 * points into f). */
int dml__dv_append(dml__dvfile *f, const uint64_t *rows, size_t n, dl_dv *out);
/* Puts the file into table t's store (nothing when no vector was appended). */
int dml__dv_put(dml__dvfile *f, dl_table *t);
/* Frees f; with remove, deletes the file put (an operation that failed). */
void dml__dv_free(dml__dvfile *f, dl_table *t, bool remove);
/* Appends x to the growable list *v (*n used, *cap allocated). */
int dml__push_u64(uint64_t **v, size_t *n, size_t *cap, uint64_t x);
/* *out (malloc'ed, *nout long): the union of the sorted unique lists a and b. */
int dml__rows_union(uint64_t **out, size_t *nout, const uint64_t *a, size_t na, const uint64_t *b, size_t nb);
/* stats JSON with "tightBounds": false (an add with a deletion vector); NULL for none. */
int dml__stats_loose(char **out, const char *stats);

/* ---- shared by the operations (dml_common.c) ---- */
struct scn_scan;
int64_t dml__mono_ms(void);
/* Room for one more element of size bytes in the array *v of *cap (doubled, 16 at first)
 * holding n. */
int dml__reserve(void **v, size_t *cap, size_t n, size_t size);
int64_t dml__wall_ms(void);
bool dml__prop_true(const dl_snapshot *s, const char *key);
/* delta.enableDeletionVectors=true with the deletionVectors writer feature. */
bool dml__use_dv(const dl_snapshot *s);
/* The protocol and delta.appendOnly (unless append_only_ok). */
int dml__check_table(const dl_snapshot *s, const char *op, bool append_only_ok);
/* A scan of the one file path of snapshot s: the columns named (NULL: every column), with
 * threads decode threads (0: the scan's default), and with row_tracking the rows' ids and
 * commit versions after them (scn_opts.row_tracking). */
int dml__open_scan(struct scn_scan **sc, dl_table *t, dl_snapshot *s, const char *path,
                   size_t batch_rows, const char *const *roots, size_t nroots,
                   const char *const *columns, size_t ncolumns, unsigned threads,
                   bool row_tracking);
/* Row tracking (dml_rowtrack.c). The output schema of rewritten rows: b's columns, then the
 * table's materialized row id and commit version columns (the table enables it). */
int dml__rt_schema(arw_schema **out, const dml__bound *b, const dl_snapshot *s);
/* Appends the two row tracking columns of out (its last two) for in's rows, from in's
 * columns of those names: ids as they are, commit versions null for matched rows (matched
 * NULL: every row) (an updated row's version is its new file's). */
int dml__rt_append(arw_batch *out, const arw_batch *in, const uint8_t *matched);
/* The same for n updated rows, in's rows idx[0..n): their ids, null commit versions. */
int dml__rt_append_updated(arw_batch *out, const arw_batch *in, const size_t *idx, size_t n);
/* The remove action of active file f (dataChange, deletionTimestamp now) into x. */
int dml__remove(dl_txn *x, const dl_file *f, int64_t now);
/* Replaces file f in x by f with the deletion vector of rows[0..n) (f's old rows included),
 * appended to dvf; its stats marked loose. */
int dml__replace_dv(dl_txn *x, dml__dvfile *dvf, const dl_file *f, const uint64_t *rows, size_t n,
                    int64_t now);
int dml__commit(dl_txn *x, const char *op, const char *params, const char *metrics, int max_retries,
                int64_t now_ms, int64_t *version);
/* A one-row result of n bigint columns. */
int dml__i64_row(dop_result **out, const dop_col *cols, const int64_t *v, size_t n);

/* ---- candidate files on several threads (dml_par.c) ---- */
enum { DML__WORKERS = 2 }; /* threads rewriting files copy-on-write */
/* The candidates of a parallel run: their paths in the snapshot's log order. */
typedef struct dml__par {
  char **paths;
  size_t n, cap;
} dml__par;
/* Work on candidate i, whose active file is f (borrowed for the call), with a worker's
 * context; 0 or an error, which stops the run. */
typedef int (*dml__par_fn)(void *ctx, const dl_file *f, size_t i);
/* A worker's last step after its last candidate (on its thread; not after an error). */
typedef int (*dml__par_end_fn)(void *ctx);
int dml__par_add(dml__par *p, const char *path);
/* The workers a run uses: min(DML__WORKERS, candidates). */
size_t dml__par_workers(const dml__par *p);
/* fn(ctx[w], f, i) for every candidate i, on worker w = i % dml__par_workers(p), then
 * end(ctx[w]) (end may be NULL): worker 0 on this thread, the others on threads of their
 * own (contexts are per worker; whatever they share must be read-only). Every worker is
 * joined before it returns; the first error of any worker comes back with its message, the
 * others stopping before their next file. */
int dml__par_run(const dml__par *p, const dl_snapshot *s, void *const *ctx, dml__par_fn fn,
                 dml__par_end_fn end);
/* fn(ctx, f, i) for every candidate in order, on this thread. */
int dml__par_each(const dml__par *p, const dl_snapshot *s, void *ctx, dml__par_fn fn);
void dml__par_free(dml__par *p);

static inline int dml__oom(void) { return dd_err_set(DD_ENOMEM, "dml: out of memory"); }

#endif
