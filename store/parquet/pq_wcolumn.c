/* pq_wcolumn.c: the writer's column-wise entry. A caller that already holds columns (an
 * Arrow batch) hands each leaf its levels and values directly instead of building one
 * pq_value tree per row; pq_writer_end_rows checks the batch leaf by leaf (rows, values)
 * and either keeps it whole or drops it from every leaf, as a rejected row is. */
#include "store/parquet/pq_writer_int.h"

#include <stdlib.h>
#include <string.h>

static int bad_leaf(const pq_writer *w, size_t leaf) {
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  if (leaf >= w->nleaves)
    return dd_err_set(DD_EINVAL, "parquet writer: leaf %zu out of range (%zu leaves)", leaf,
                      w->nleaves);
  return 0;
}

size_t pq_writer_num_leaves(const pq_writer *w) { return w->nleaves; }

int pq_writer_put_levels(pq_writer *w, size_t leaf, const int16_t *def, const int16_t *rep,
                         size_t n) {
  int rc = bad_leaf(w, leaf);
  if (rc) return rc;
  pq__wleaf *l = &w->leaves[leaf];
  if ((!def && l->max_def > 0) || (!rep && l->max_rep > 0))
    return dd_err_set(DD_EINVAL, "parquet writer: leaf %zu needs its levels", leaf);
  if ((rc = pq__wleaf_reserve_levels(l, n))) return rc;
  if (def) memcpy(l->def + l->nlev, def, n * sizeof *def);
  else memset(l->def + l->nlev, 0, n * sizeof *def);
  if (rep) memcpy(l->rep + l->nlev, rep, n * sizeof *rep);
  else memset(l->rep + l->nlev, 0, n * sizeof *rep);
  l->nlev += n;
  return 0;
}

int pq_writer_put_fixed(pq_writer *w, size_t leaf, const void *values, size_t n) {
  int rc = bad_leaf(w, leaf);
  if (rc) return rc;
  pq__wleaf *l = &w->leaves[leaf];
  if (l->type == PQ_T_BYTE_ARRAY)
    return dd_err_set(DD_EINVAL, "parquet writer: leaf %zu takes byte values", leaf);
  if (n && (rc = pq__buf_put(&l->vals, values, n * (size_t)l->elem))) return rc;
  l->nvals += n;
  return 0;
}

int pq_writer_put_bytes(pq_writer *w, size_t leaf, const uint8_t *data,
                        const int32_t *offsets, size_t n) {
  int rc = bad_leaf(w, leaf);
  if (rc) return rc;
  pq__wleaf *l = &w->leaves[leaf];
  if (l->type != PQ_T_BYTE_ARRAY)
    return dd_err_set(DD_EINVAL, "parquet writer: leaf %zu takes fixed values", leaf);
  if (n == 0) return 0;
  if (offsets[n] < offsets[0])
    return dd_err_set(DD_EINVAL, "parquet writer: leaf %zu: offsets go backwards", leaf);
  if ((rc = pq__buf_reserve(&l->offs, n * sizeof(uint64_t)))) return rc;
  uint64_t base = (uint64_t)l->vals.len - (uint64_t)offsets[0];
  for (size_t i = 0; i < n; i++) {
    if (offsets[i + 1] < offsets[i])
      return dd_err_set(DD_EINVAL, "parquet writer: leaf %zu: offsets go backwards", leaf);
    uint64_t off = base + (uint64_t)offsets[i];
    memcpy(l->offs.data + l->offs.len + i * sizeof off, &off, sizeof off);
  }
  l->offs.len += n * sizeof(uint64_t);
  size_t len = (size_t)(offsets[n] - offsets[0]);
  if (len && (rc = pq__buf_put(&l->vals, data + offsets[0], len))) return rc;
  l->nvals += n;
  return 0;
}

/* Rows and defined values a leaf got since its mark. */
static int leaf_check(const pq__wleaf *l, int64_t nrows) {
  int64_t rows = 0;
  size_t defined = 0;
  for (size_t i = l->mark_lev; i < l->nlev; i++) {
    rows += l->rep[i] == 0;
    defined += l->def[i] == l->max_def;
    if (l->def[i] > l->max_def || l->rep[i] > l->max_rep || l->def[i] < 0 || l->rep[i] < 0)
      return dd_err_set(DD_EINVAL, "parquet writer: column '%s': level out of range",
                        l->node->name);
  }
  if (l->nlev > l->mark_lev && l->rep[l->mark_lev] != 0)
    return dd_err_set(DD_EINVAL, "parquet writer: column '%s': a batch must start a row",
                      l->node->name);
  if (rows != nrows)
    return dd_err_set(DD_EINVAL, "parquet writer: column '%s' got %lld rows, expected %lld",
                      l->node->name, (long long)rows, (long long)nrows);
  if (defined != l->nvals - l->mark_nvals)
    return dd_err_set(DD_EINVAL, "parquet writer: column '%s' got %zu values for %zu "
                      "defined entries", l->node->name, l->nvals - l->mark_nvals, defined);
  return 0;
}

void pq__wleaf_mark(pq__wleaf *l) {
  l->mark_lev = l->nlev;
  l->mark_vals = l->vals.len;
  l->mark_offs = l->offs.len;
  l->mark_nvals = l->nvals;
}

int pq_writer_end_rows(pq_writer *w, int64_t nrows) {
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  int rc = 0;
  for (size_t i = 0; i < w->nleaves && !rc; i++) rc = leaf_check(&w->leaves[i], nrows);
  for (size_t i = 0; i < w->nleaves; i++) {
    pq__wleaf *l = &w->leaves[i];
    if (rc) { /* drop the batch */
      l->nlev = l->mark_lev;
      l->vals.len = l->mark_vals;
      l->offs.len = l->mark_offs;
      l->nvals = l->mark_nvals;
    } else {
      pq__wleaf_mark(l);
    }
  }
  if (rc) return rc;
  w->rows_in_rg += nrows;
  w->total_rows += nrows;
  if (w->rows_in_rg >= w->o.row_group_rows) rc = pq_writer_flush_row_group(w);
  return rc;
}

size_t pq_writer_buffered_bytes(const pq_writer *w) {
  size_t n = 0;
  for (size_t i = 0; i < w->nleaves; i++) {
    const pq__wleaf *l = &w->leaves[i];
    n += l->vals.len + l->offs.len / 2 + l->nlev * (l->max_rep ? 4 : 2) / 4;
  }
  return n;
}

int64_t pq_writer_bytes_written(const pq_writer *w) {
  /* a job behind owns the output until it is settled */
  return w->job.running ? w->written : w->file_off + (int64_t)w->out.len;
}
