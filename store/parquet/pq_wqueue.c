/* pq_wqueue.c: a large row group's column chunks encoded from one shared queue. The
 * leaves are queued dearest first by an estimate of their encoding cost (values probed in a
 * dictionary and compressed, bytes hashed and copied, levels packed), so that two workers
 * taking the next leaf each end at about the same time whatever the schema; each leaf is
 * encoded into its own buffer, and placing appends the buffers in leaf order (the order
 * the footer and readers expect) with their page offsets moved. */
#include "store/parquet/pq_writer_int.h"

#include <stdlib.h>
#include <string.h>

typedef struct costed { uint64_t cost; size_t leaf; } costed;

static int by_cost_desc(const void *a, const void *b) {
  const costed *x = a, *y = b;
  if (x->cost != y->cost) return x->cost < y->cost ? 1 : -1;
  return (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

/* Relative encoding cost: per value a dictionary probe and its index (or a PLAIN copy),
 * per byte of BYTE_ARRAY data a hash step and a copy, per level a packed entry. */
static uint64_t leaf_cost(const pq__wleaf *l) {
  uint64_t c = (uint64_t)l->nlev + 6 * (uint64_t)l->nvals;
  if (l->type == PQ_T_BYTE_ARRAY) c += 2 * (uint64_t)l->vals.len;
  else c += (uint64_t)l->vals.len / 2;
  return c;
}

int pq__wqueue_prepare(pq_writer *w, const pq__wleaf *leaves, pq__wchunk *chunks) {
  pq__wqueue *q = &w->q;
  if (!q->order) {
    q->order = calloc(w->nleaves, sizeof *q->order);
    q->bufs = calloc(w->nleaves, sizeof *q->bufs);
    if (!q->order || !q->bufs) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  }
  costed *c = malloc(w->nleaves * sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  for (size_t i = 0; i < w->nleaves; i++) c[i] = (costed){leaf_cost(&leaves[i]), i};
  qsort(c, w->nleaves, sizeof *c, by_cost_desc);
  for (size_t i = 0; i < w->nleaves; i++) {
    q->order[i] = c[i].leaf;
    q->bufs[i].len = 0;
  }
  free(c);
  q->leaves = leaves;
  q->chunks = chunks;
  q->o = &w->o;
  q->n = w->nleaves;
  atomic_store(&q->next, 0);
  atomic_store(&q->rc, 0);
  return 0;
}

void *pq__wqueue_work(void *p) {
  pq__wqueue *q = p;
  while (atomic_load(&q->rc) == 0) {
    size_t k = atomic_fetch_add(&q->next, 1);
    if (k >= q->n) break;
    size_t i = q->order[k];
    int rc = pq__wchunk_encode(&q->leaves[i], q->o, 0, &q->bufs[i], &q->chunks[i]);
    int none = 0;
    if (rc) atomic_compare_exchange_strong(&q->rc, &none, rc);
  }
  return NULL;
}

int pq__wqueue_place(pq_writer *w, pq__wrg *g) {
  pq__wqueue *q = &w->q;
  int rc = atomic_load(&q->rc);
  if (rc) /* the worker's message stayed on its thread */
    return dd_err_set(rc, "parquet writer: encoding a column chunk failed (%s)", dd_err_name(rc));
  size_t total = 0;
  for (size_t i = 0; i < q->n; i++) total += q->bufs[i].len;
  if ((rc = pq__buf_reserve(&w->out, total))) return rc;
  for (size_t i = 0; i < q->n; i++) {
    int64_t at = w->file_off + (int64_t)w->out.len;
    pq__wchunk *m = &q->chunks[i];
    m->data_off += at;
    if (m->has_dict) m->dict_off += at;
    g->total_bytes += m->uncomp_size;
    if (q->bufs[i].len) {
      memcpy(w->out.data + w->out.len, q->bufs[i].data, q->bufs[i].len);
      w->out.len += q->bufs[i].len;
    }
  }
  return 0;
}

void pq__wqueue_free(pq__wqueue *q) {
  for (size_t i = 0; q->bufs && i < q->n; i++) pq__buf_free(&q->bufs[i]);
  free(q->bufs);
  free(q->order);
  q->bufs = NULL;
  q->order = NULL;
}
