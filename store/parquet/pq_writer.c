/* pq_writer.c: the public writer API: opening (memory or path), appending rows, cutting
 * row groups every row_group_rows rows, key-value metadata, and closing with the footer.
 * A writer that failed while writing output is marked failed and refuses further work.
 * Large row groups are encoded on two threads (flush_rg); the writer is still used from one
 * thread at a time. */
#include "store/parquet/pq_writer_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int writer_new(pq_writer **out, const pq_wfield *schema, const pq_writer_opts *opts) {
  *out = NULL;
  pq_writer *w = calloc(1, sizeof *w);
  if (!w) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  pq_writer_opts def = PQ_WRITER_OPTS_INIT;
  w->o = opts ? *opts : def;
  if (w->o.row_group_rows <= 0) w->o.row_group_rows = 128 * 1024;
  int rc = 0;
  if (w->o.codec != PQ_CODEC_UNCOMPRESSED && w->o.codec != PQ_CODEC_SNAPPY &&
      w->o.codec != PQ_CODEC_GZIP && w->o.codec != PQ_CODEC_ZSTD)
    rc = dd_err_set(DD_EINVAL, "parquet writer: unsupported codec %d", (int)w->o.codec);
  if (!rc && w->o.created_by) {
    w->o.created_by = pq__arena_strndup(&w->mem, (const uint8_t *)w->o.created_by,
                                        strlen(w->o.created_by));
    if (!w->o.created_by) rc = dd_err_set(DD_ENOMEM, "parquet: out of memory");
  }
  if (!rc) rc = pq__wschema_build(w, schema);
  if (!rc) rc = pq__buf_put(&w->out, "PAR1", 4);
  if (rc) {
    pq_writer_free(w);
    return rc;
  }
  *out = w;
  return 0;
}

int pq_writer_open_mem(pq_writer **out, const pq_wfield *schema, const pq_writer_opts *opts) {
  return writer_new(out, schema, opts);
}

int pq_writer_open_path(pq_writer **out, const char *path, const pq_wfield *schema,
                        const pq_writer_opts *opts) {
  int rc = writer_new(out, schema, opts);
  if (rc) return rc;
  (*out)->fp = fopen(path, "wb");
  if (!(*out)->fp) {
    rc = dd_err_set(DD_EIO, "parquet writer: open %s: %s", path, strerror(errno));
    pq_writer_free(*out);
    *out = NULL;
  }
  return rc;
}

int pq_writer_add_kv(pq_writer *w, const char *key, const char *value) {
  if (!key) return dd_err_set(DD_EINVAL, "parquet writer: NULL metadata key");
  char **k = realloc(w->kv_k, (w->nkv + 1) * sizeof *k);
  if (k) w->kv_k = k;
  char **v = k ? realloc(w->kv_v, (w->nkv + 1) * sizeof *v) : NULL;
  if (v) w->kv_v = v;
  if (!k || !v) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  w->kv_k[w->nkv] = pq__arena_strndup(&w->mem, (const uint8_t *)key, strlen(key));
  w->kv_v[w->nkv] = value ? pq__arena_strndup(&w->mem, (const uint8_t *)value, strlen(value))
                          : NULL;
  if (!w->kv_k[w->nkv] || (value && !w->kv_v[w->nkv]))
    return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  w->nkv++;
  return 0;
}

/* Writes out->data to the file (path writer) and empties the staging buffer. */
static int drain(pq_writer *w) {
  if (!w->fp) return 0;
  if (w->out.len && fwrite(w->out.data, 1, w->out.len, w->fp) != w->out.len)
    return dd_err_set(DD_EIO, "parquet writer: write failed: %s", strerror(errno));
  w->file_off += (int64_t)w->out.len;
  w->out.len = 0;
  return 0;
}

static int new_rg(pq_writer *w, pq__wrg **g) {
  if (w->nrgs == w->caprgs) {
    size_t cap = w->caprgs ? w->caprgs * 2 : 8;
    pq__wrg *r = realloc(w->rgs, cap * sizeof *r);
    if (!r) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
    w->rgs = r;
    w->caprgs = cap;
  }
  *g = &w->rgs[w->nrgs];
  memset(*g, 0, sizeof **g);
  (*g)->chunks = calloc(w->nleaves + 1, sizeof *(*g)->chunks);
  if (!(*g)->chunks) return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  w->nrgs++;
  return 0;
}

/* A row group this large has its columns encoded on two threads (each half of the leaves
 * into its own buffer, then appended in order and their offsets moved); smaller ones (a
 * checkpoint's, most tests') on the caller's thread. */
#define PAR_MIN_BYTES (4u << 20)

typedef struct half {
  const pq_writer *w;
  pq__wrg *g;
  size_t from, to;
  pq__buf buf;
  int rc;
} half;

static void *encode_half(void *p) {
  half *h = p;
  for (size_t i = h->from; i < h->to && !h->rc; i++)
    h->rc = pq__wchunk_encode(&h->w->leaves[i], &h->w->o, 0, &h->buf, &h->g->chunks[i]);
  return NULL;
}

/* Appends half h's chunks at the end of the output, their offsets moved there. */
static int place_half(pq_writer *w, half *h) {
  int64_t at = w->file_off + (int64_t)w->out.len;
  for (size_t i = h->from; i < h->to; i++) {
    h->g->chunks[i].data_off += at;
    if (h->g->chunks[i].has_dict) h->g->chunks[i].dict_off += at;
  }
  return h->buf.len ? pq__buf_put(&w->out, h->buf.data, h->buf.len) : 0;
}

static int encode_parallel(pq_writer *w, pq__wrg *g) {
  size_t total = pq_writer_buffered_bytes(w), acc = 0, mid = 1;
  for (size_t i = 0; i + 1 < w->nleaves && acc < total / 2; i++, mid = i) {
    const pq__wleaf *l = &w->leaves[i];
    acc += l->vals.len + l->offs.len / 2 + l->nlev / 2;
  }
  half a = {w, g, 0, mid, {0}, 0}, b = {w, g, mid, w->nleaves, {0}, 0};
  pthread_t t;
  bool threaded = pthread_create(&t, NULL, encode_half, &a) == 0;
  if (!threaded) encode_half(&a);
  encode_half(&b);
  if (threaded) pthread_join(t, NULL);
  int rc = a.rc ? a.rc : b.rc;
  if (a.rc && threaded) /* the worker's message stayed on its thread */
    rc = dd_err_set(a.rc, "parquet writer: encoding a column chunk failed (%s)", dd_err_name(a.rc));
  if (!rc) rc = place_half(w, &a);
  if (!rc) rc = place_half(w, &b);
  pq__buf_free(&a.buf);
  pq__buf_free(&b.buf);
  return rc;
}

static int flush_rg(pq_writer *w) {
  if (w->rows_in_rg == 0) return 0;
  pq__wrg *g = NULL;
  int rc = new_rg(w, &g);
  if (rc) return rc;
  int64_t base = w->file_off;
  g->num_rows = w->rows_in_rg;
  g->file_off = base + (int64_t)w->out.len;
  bool par = w->nleaves >= 2 && pq_writer_buffered_bytes(w) >= PAR_MIN_BYTES;
  if (par) rc = encode_parallel(w, g);
  for (size_t i = 0; i < w->nleaves && !rc; i++) {
    if (!par) rc = pq__wchunk_encode(&w->leaves[i], &w->o, base, &w->out, &g->chunks[i]);
    g->total_bytes += g->chunks[i].uncomp_size;
  }
  for (size_t i = 0; i < w->nleaves; i++) pq__wleaf_reset(&w->leaves[i]);
  w->rows_in_rg = 0;
  return rc ? rc : drain(w);
}

int pq_writer_flush_row_group(pq_writer *w) {
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  int rc = flush_rg(w);
  if (rc) w->failed = rc;
  return rc;
}

int pq_writer_write_row(pq_writer *w, const pq_value *row) {
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  int rc = pq__wshred_row(w, row);
  if (rc) return rc;
  for (size_t i = 0; i < w->nleaves; i++) pq__wleaf_mark(&w->leaves[i]);
  w->rows_in_rg++;
  w->total_rows++;
  if (w->rows_in_rg >= w->o.row_group_rows && (rc = flush_rg(w))) w->failed = rc;
  return rc;
}

int pq_writer_close(pq_writer *w, uint8_t **out_buf, size_t *out_len) {
  if (out_buf) *out_buf = NULL;
  if (out_len) *out_len = 0;
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  w->closed = true;
  bool to_path = w->fp != NULL;
  int rc = flush_rg(w);
  if (!rc) rc = pq__wfooter_write(w, &w->out);
  if (!rc && to_path) {
    rc = drain(w);
    if (fclose(w->fp) != 0 && !rc)
      rc = dd_err_set(DD_EIO, "parquet writer: close failed: %s", strerror(errno));
    w->fp = NULL;
  }
  if (!rc && !to_path && out_buf) {
    *out_buf = w->out.data;
    *out_len = w->out.len;
    w->out.data = NULL;
    w->out.len = w->out.cap = 0;
  }
  if (rc) w->failed = rc;
  return rc;
}

void pq_writer_free(pq_writer *w) {
  if (!w) return;
  if (w->fp) fclose(w->fp);
  for (size_t i = 0; i < w->nleaves; i++) pq__wleaf_free(&w->leaves[i]);
  free(w->leaves);
  for (size_t g = 0; g < w->nrgs; g++) {
    for (size_t i = 0; i < w->nleaves; i++) pq__wchunk_free(&w->rgs[g].chunks[i]);
    free(w->rgs[g].chunks);
  }
  free(w->rgs);
  free(w->kv_k);
  free(w->kv_v);
  pq__buf_free(&w->out);
  pq__arena_free(&w->mem);
  free(w);
}
