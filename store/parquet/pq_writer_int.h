/* pq_writer_int.h: internals of the writer, shared by pq_writer.c (API, row groups,
 * output), pq_wshred.c (schema and record shredding), pq_wchunk.c (column chunk
 * encoding: statistics, dictionary, pages) and pq_wfooter.c (FileMetaData).
 *
 * A row is shredded at once into per-leaf buffers (levels and PLAIN-ish values) so the
 * caller's value can be freed; a full row group is encoded chunk by chunk, written, and
 * the buffers are reset. Only per-chunk metadata survives until the footer. */
#ifndef DD_STORE_PARQUET_PQ_WRITER_INT_H
#define DD_STORE_PARQUET_PQ_WRITER_INT_H

#include "store/parquet/pq_internal.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

typedef struct pq__wnode pq__wnode;
struct pq__wnode {
  char *name;
  pq_wkind kind;
  bool nullable;
  int32_t type_length, field_id; /* type_length: FIXED width (DECIMAL: its bytes or 0) */
  int32_t precision, scale;      /* DECIMAL */
  int16_t def;          /* def level once this node is present (non-null) */
  int16_t rep;          /* LIST/MAP: rep level of the repeated layer; else inherited */
  size_t nkids;
  pq__wnode *kids;
  uint32_t lo, hi;      /* leaves under this node */
};

typedef struct pq__wleaf {
  const pq__wnode *node;
  pq_type type;
  int32_t elem;         /* bytes per fixed value; 0 for BYTE_ARRAY */
  int16_t max_def, max_rep;
  const char **path;    /* path_in_schema */
  size_t path_len;
  int16_t *def, *rep;
  size_t nlev, caplev;
  pq__buf vals;         /* fixed values back to back, or BYTE_ARRAY bytes */
  pq__buf offs;         /* BYTE_ARRAY: uint64 start offset of each value in vals */
  size_t nvals;
  size_t mark_lev, mark_vals, mark_offs, mark_nvals; /* column-wise: at the last end_rows */
} pq__wleaf;

typedef struct pq__wchunk {
  int64_t num_values, data_off, dict_off, comp_size, uncomp_size;
  bool has_dict, has_minmax;
  bool nan;             /* a NaN was seen (skipped by min/max) */
  int64_t nulls;
  pq__buf min, max;
} pq__wchunk;

typedef struct pq__wrg {
  int64_t num_rows, total_bytes, file_off;
  pq__wchunk *chunks;
} pq__wrg;

/* A row group's leaves encoded from one shared queue (pq_wqueue.c): the workers take the
 * next leaf in order of estimated encoding cost, dearest first, and encode it into its own
 * buffer (offsets from 0); pq__wqueue_place then appends the buffers in leaf order and moves
 * their offsets. order and bufs are kept (and their memory reused) across row groups. */
typedef struct pq__wqueue {
  const pq__wleaf *leaves;
  pq__wchunk *chunks;
  const pq_writer_opts *o;
  size_t n;
  size_t *order;         /* n leaf indices, costliest first */
  pq__buf *bufs;         /* n encoded chunks */
  atomic_size_t next;
  atomic_int rc;         /* the first worker error */
} pq__wqueue;

/* Encoding behind (pq_writer_encode_behind): the previous row group's leaf buffers, moved
 * out of the writer and encoded from the writer's queue on two threads while the caller
 * fills the next one. The first thread also places the encoded chunks and so owns the
 * writer's output (out, rgs[g_index]) until the job is joined; the caller touches neither
 * meanwhile. The leaf buffers are kept for reuse. */
typedef struct pq__wjob {
  pq__wleaf *leaves;     /* nleaves; buffers owned here */
  pq_writer *w;
  size_t g_index;
  pthread_t ta, tb;
  bool running, ta_started, tb_started;
  int rc;                /* placing (the first thread) */
} pq__wjob;

struct pq_writer {
  pq_writer_opts o;
  pq__arena mem;        /* schema copy and names */
  pq__wnode root;
  pq__wleaf *leaves;
  size_t nleaves;
  pq__buf out;          /* memory writer: the file; path writer: one row group */
  FILE *fp;
  pq_sink_fn sink;      /* or a sink writer's callback, with sink_ctx */
  void *sink_ctx;
  int64_t file_off;     /* bytes already written to fp or the sink */
  int64_t rows_in_rg, total_rows;
  pq__wrg *rgs;
  size_t nrgs, caprgs;
  char **kv_k, **kv_v;
  size_t nkv;
  bool closed;
  int failed;
  bool behind;          /* encode large row groups behind the caller */
  pq__wjob job;
  pq__wqueue q;         /* large row groups' column encoding (pq_wqueue.c) */
  int64_t written;      /* behind: bytes_written as of the last settle */
};

int pq__wschema_build(pq_writer *w, const pq_wfield *schema);
/* Physical type of a leaf node (DECIMAL by its precision). */
pq_type pq__wleaf_type(const pq__wnode *n);
int pq__wshred_row(pq_writer *w, const pq_value *row);
void pq__wleaf_reset(pq__wleaf *l);
/* Room for n more (def, rep) entries. */
int pq__wleaf_reserve_levels(pq__wleaf *l, size_t n);
/* Records the leaf's buffers as complete rows (column-wise batches roll back to it). */
void pq__wleaf_mark(pq__wleaf *l);
void pq__wleaf_free(pq__wleaf *l);
/* Encodes the leaf's buffered row group at file offset base (out->len maps to base). */
int pq__wchunk_encode(const pq__wleaf *l, const pq_writer_opts *o, int64_t base,
                      pq__buf *out, pq__wchunk *meta);
void pq__wchunk_free(pq__wchunk *m);
/* Orders two PLAIN values of physical type t (numbers signed, bytes unsigned). */
int pq__wvalue_cmp(pq_type t, const uint8_t *a, size_t an, const uint8_t *b, size_t bn);
/* Readies w->q for leaves/chunks (w->nleaves of them): the cost order and empty buffers. */
int pq__wqueue_prepare(pq_writer *w, const pq__wleaf *leaves, pq__wchunk *chunks);
/* A worker: encodes leaves from the queue until it is empty or a worker failed. */
void *pq__wqueue_work(void *q);
/* After the workers: the first error (restated on this thread), else the chunks appended
 * to w->out in leaf order with their offsets moved and g's total_bytes summed. */
int pq__wqueue_place(pq_writer *w, pq__wrg *g);
void pq__wqueue_free(pq__wqueue *q);
int pq__wfooter_write(const pq_writer *w, pq__buf *out);

#endif
