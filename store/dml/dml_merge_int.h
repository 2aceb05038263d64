/* dml_merge_int.h: internals of MERGE (see dml.h): the plan (dml_merge_bind.c: names
 * resolved against the target and the source, the ON condition split into hash keys, a
 * residual and a target-only skipping predicate, each clause bound), the source's hash
 * index (dml_merge_join.c), the partition router of new rows (dml_route.c) and the change
 * data feed (dml_cdc.c, also used by DELETE and UPDATE).
 *
 * Three schemas: the target's (tb.schema, scn_arrow_schema of the table), the source's
 * (the caller's) and the pair schema ps: every target column named "target.<col>" then
 * every source column named "source.<col>", the rows of a candidate (target row, source
 * row) pair. WHEN MATCHED conditions and values are bound over ps, WHEN NOT MATCHED BY
 * SOURCE over the target schema, WHEN NOT MATCHED over the source schema. On a table with
 * row tracking the rows written have a fourth schema: the target's columns, then the
 * materialized row id and commit version columns (dml__rt_schema). */
#ifndef DD_STORE_DML_DML_MERGE_INT_H
#define DD_STORE_DML_DML_MERGE_INT_H

#include "store/dml/dml_int.h"

#include "common/buf.h"
#include "store/dwrite/dw.h"

#define DML__TPFX "target."
#define DML__SPFX "source."

typedef struct dml__mclause {
  dml_merge_kind kind;
  dml_merge_action action;
  ex_node *cond;   /* bound (see above); NULL: always */
  ex_node **outs;  /* [tb.ncols] new values of every target column; NULL for DELETE */
  char *cond_sql;  /* the condition's Spark SQL text, NULL without one */
} dml__mclause;

typedef struct dml__mplan {
  dml__bound tb;              /* target schema and CHECK constraints */
  const arw_schema *ss;       /* source schema (borrowed) */
  size_t nscols;
  arw_schema *ps;             /* pair schema */
  ex_node **fill_t, **fill_s; /* column refs over target / source filling the pair batch */
  size_t nkeys;
  ex_node **tkey, **skey;     /* [nkeys] bound over target / source, equal types */
  arw_schema *kschema;        /* the key columns' schema (both sides') */
  ex_node *residual;          /* bound over ps; NULL: none */
  ex_node *skip;              /* target-only conjuncts bound over target; NULL: none */
  char *on_sql;
  dml__mclause *cl;
  size_t ncl;
  bool has_matched, has_nmbs, has_insert;
  bool multi_ok;              /* the only WHEN MATCHED clause is an unconditional DELETE */
  bool *not_null;             /* [tb.ncols] NOT NULL target columns */
  ex_node **gen;              /* [tb.ncols] generation expressions (unbound), NULL: none */
  bool *identity;             /* [tb.ncols] identity columns */
  dml__ident ident;           /* with INSERT clauses: the values they hand out (an INSERT's
                               * outs[i] is NULL for identity column i without a value) */
} dml__mplan;

/* Schema evolution (dml_merge_evolve.c): *out the snapshot s with the target's schema
 * evolved for o's clauses (a new reference), NULL when o does not ask for evolution or
 * nothing changes. */
int dml__merge_evolve(dl_snapshot **out, const dl_snapshot *s, const dml_merge_opts *o);
/* The same evolution for a write's mergeSchema: source fields ids[0..n) appended as new
 * nullable columns; *schema (NULL when nothing changes) and *config (NULL without column
 * mapping), malloc'ed. */
int dml__evolve_columns(char **schema, char **config, const dl_snapshot *s, const arw_schema *src,
                        const int *ids, size_t n);
/* The value of target struct field tid (schema ts) from v, an unbound column of struct
 * field sid of s, bound by field name (dml_merge_struct.c): *rebuilt false and *out NULL
 * when the shapes are the same (v serves as is), else *out a new unbound expression.
 * evolve: fields the source lacks are filled (from keep, the target's own column, when
 * given, else NULL) instead of refused. */
int dml__merge_struct_value(ex_node **out, bool *rebuilt, const arw_schema *ts, int tid,
                            const ex_node *v, const arw_schema *s, int sid, bool evolve,
                            const ex_node *keep);
int dml__mplan_bind(dml__mplan *p, const dl_snapshot *s, const dml_merge_opts *o);
/* Commits x as MERGE (dml_merge_commit.c): p's clauses in the operation parameters, res's
 * metrics; res->version the version written. */
int dml__merge_commit(dl_txn *x, const dml__mplan *p, const dml_merge_opts *o, dml_merge_result *res);
/* The evolved metadata of snapshot e into the transaction. */
int dml__merge_set_metadata(dl_txn *x, const dl_snapshot *e);
void dml__mplan_free(dml__mplan *p);
/* The checks of new rows (target schema): NOT NULL columns and CHECK constraints. */
int dml__mplan_check(const dml__mplan *p, const arw_batch *out);
/* The pair batch of target rows ti[k] of tb and source rows si[k] of sb. */
int dml__mplan_pairs(arw_batch **out, const dml__mplan *p, const arw_batch *tb, const size_t *ti,
                     const arw_batch *sb, const size_t *si, size_t n);
/* A batch of the target schema holding outs evaluated over in (their schema's batch); of
 * schema instead when given (the target's columns first, the rest left for the caller). */
int dml__mplan_eval_outs(arw_batch **out, const dml__mplan *p, const arw_schema *schema,
                         ex_node *const *outs, const arw_batch *in);

/* ---- the source's hash index on the join keys ---- */
typedef struct dml__keyidx {
  size_t n;
  int64_t *off;     /* [n + 1] serialized key of row j at data[off[j] .. off[j+1]); */
  bool *null;       /* [n] a NULL key never matches */
  dd_buf data;
  uint64_t *slots;  /* [mask + 1] 0: empty; else hash tag << 32 | (last row of the key + 1) */
  int64_t *next;    /* [n] the previous row with the same key, -1 none */
  size_t mask;
  uint64_t *bits;   /* [(bmask + 1) / 64] bit (hash >> 24) & bmask set for every key */
  size_t bmask;
} dml__keyidx;

/* Serialized key of row i of kb (key columns only) appended to out; *null when one is NULL. */
int dml__key_row(dd_buf *out, const arw_batch *kb, size_t i, bool *null);
int dml__keyidx_build(dml__keyidx *k, const arw_batch *kb);
/* Source rows with the key of bytes key[0..len): first in *j, the next ones by
 * dml__keyidx_next; -1 at the end. */
int64_t dml__keyidx_first(const dml__keyidx *k, const uint8_t *key, size_t len);
int64_t dml__keyidx_next(const dml__keyidx *k, int64_t j, const uint8_t *key, size_t len);
void dml__keyidx_free(dml__keyidx *k);
/* Key columns of in (schema of the exprs' side) evaluated into a new batch of p->kschema. */
int dml__keys_eval(arw_batch **out, const dml__mplan *p, ex_node *const *keys, const arw_batch *in);

/* ---- new rows to data files, one writer per partition value ---- */
typedef struct dml__route {
  char *key;        /* the partition values, serialized for lookup */
  size_t klen;
  char *pv;         /* packed partitionValues */
  dw_writer *w;
} dml__route;

typedef struct dml__router {
  dl_table *t;
  const dl_snapshot *s;
  const arw_schema *schema;  /* the target schema (borrowed) */
  pq_codec codec;
  bool change_data;          /* cdc files (the schema ends with _change_type) */
  bool no_data_change;       /* adds with dataChange false (set after init) */
  bool row_tracking;         /* the writers write the rows' ids and commit versions, which
                              * the batches carry (dw_opts.row_tracking; set after init) */
  size_t npc;
  char **pkey;               /* partitionValues keys (physical names) */
  ex_node **pstr;            /* CAST(partition column AS STRING) bound over schema */
  arw_schema *sschema;       /* npc string columns */
  dml__route *r;
  size_t n, cap;
  int64_t rows;
} dml__router;

/* change_data: the writers write change data files (dw_opts.change_data), committed as
 * cdc actions. */
int dml__router_init(dml__router *r, dl_table *t, const dl_snapshot *s, const arw_schema *schema,
                     pq_codec codec, bool change_data);
int dml__router_write(dml__router *r, const arw_batch *b);
/* Finishes every writer and adds its files to x (add or cdc actions), counting them in
 * *files and their bytes in *bytes (may be NULL). */
int dml__router_commit(dml__router *r, dl_txn *x, int64_t *files, int64_t *bytes);
/* Frees the writers; with abort, deletes every file they put. */
void dml__router_free(dml__router *r, bool abort);

/* ---- the change data feed (dml_cdc.c), for MERGE and DELETE/UPDATE alike ---- */
typedef enum dml__change {
  DML__CH_DELETE, DML__CH_INSERT, DML__CH_PRE, DML__CH_POST, DML__CH_N
} dml__change;

/* Change rows of one operation on a table with delta.enableChangeDataFeed=true: rows of
 * the target schema with _change_type appended, routed to change data files by partition.
 * on is false (every call a no-op) when the table does not have the feed on. */
typedef struct dml__cdc {
  bool on;
  arw_schema *schema;           /* the target columns, then _change_type */
  size_t ncols;
  ex_node **cols;               /* [ncols] column refs bound over the target schema */
  ex_node *type[DML__CH_N];     /* the _change_type literals */
  dml__router rt;
  int64_t rows;
} dml__cdc;

int dml__cdc_init(dml__cdc *c, dl_table *t, const dl_snapshot *s, const arw_schema *target,
                  pq_codec codec);
/* Rows idx[0..n) of b (the target schema; idx NULL: rows 0..n) as changes of kind. */
int dml__cdc_write(dml__cdc *c, const arw_batch *b, const size_t *idx, size_t n, dml__change kind);
/* Finishes the files and adds them to x as cdc actions; *files counts them. */
int dml__cdc_commit(dml__cdc *c, dl_txn *x, int64_t *files);
/* Frees c; with abort, deletes the files it put. */
void dml__cdc_free(dml__cdc *c, bool abort);

#endif
