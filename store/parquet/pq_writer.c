/* pq_writer.c: the public writer API: opening (memory or path), appending rows, cutting
 * row groups every row_group_rows rows, key-value metadata, and closing with the footer.
 * A writer that failed while writing output is marked failed and refuses further work.
 * Large row groups are encoded on two threads from a shared queue (flush_rg), optionally
 * behind the caller (pq_writer_encode_behind); the writer is still used from one thread
 * at a time. */
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

int pq_writer_open_sink(pq_writer **out, pq_sink_fn sink, void *ctx, const pq_wfield *schema,
                        const pq_writer_opts *opts) {
  int rc = writer_new(out, schema, opts);
  if (rc) return rc;
  (*out)->sink = sink;
  (*out)->sink_ctx = ctx;
  return 0;
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

/* Writes out->data to the file (path writer) or the sink and empties the staging buffer. */
static int drain(pq_writer *w) {
  if (!w->fp && !w->sink) return 0;
  if (w->sink && w->out.len) {
    int rc = w->sink(w->sink_ctx, w->out.data, w->out.len);
    if (rc) return rc;
  } else if (w->out.len && fwrite(w->out.data, 1, w->out.len, w->fp) != w->out.len)
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

/* A row group this large has its columns encoded on two threads from one shared queue
 * (pq_wqueue.c: dearest leaves first, each into its own buffer, then appended in order);
 * smaller ones (a checkpoint's, most tests') on the caller's thread. With encode_behind, a
 * large row group is moved out of the writer and encoded on those two threads while the
 * caller fills the next one (pq__wjob); it is placed at the next flush, at close, or when
 * bytes_written asks. */
#define PAR_MIN_BYTES (4u << 20)

static int encode_parallel(pq_writer *w, pq__wrg *g) {
  int rc = pq__wqueue_prepare(w, w->leaves, g->chunks);
  if (rc) return rc;
  pthread_t t;
  bool threaded = pthread_create(&t, NULL, pq__wqueue_work, &w->q) == 0;
  pq__wqueue_work(&w->q);
  if (threaded) pthread_join(t, NULL);
  return pq__wqueue_place(w, g);
}

/* The job's first thread: leaves from the queue, then (both workers done) the placing. */
static void *job_first(void *p) {
  pq__wjob *j = p;
  pq__wqueue_work(&j->w->q);
  if (j->tb_started) pthread_join(j->tb, NULL);
  j->tb_started = false;
  j->rc = pq__wqueue_place(j->w, &j->w->rgs[j->g_index]);
  return NULL;
}

/* Waits for the row group being encoded behind (placed by then) and drains it. */
static int job_join(pq_writer *w) {
  pq__wjob *j = &w->job;
  if (!j->running) return 0;
  j->running = false;
  if (j->ta_started) pthread_join(j->ta, NULL);
  else job_first(j);
  int rc = j->rc;
  if (rc && j->ta_started) /* the message stayed on the job's thread */
    rc = dd_err_set(rc, "parquet writer: encoding behind failed (%s)", dd_err_name(rc));
  for (size_t i = 0; i < w->nleaves; i++) pq__wleaf_reset(&j->leaves[i]);
  if (!rc) rc = drain(w);
  w->written = w->file_off + (int64_t)w->out.len;
  return rc;
}

/* Moves the buffered row group (already in rgs[g_index]) into the job and starts its two
 * threads; the writer's leaves get the job's previous (emptied) buffers. */
static int job_start(pq_writer *w, size_t g_index) {
  pq__wjob *j = &w->job;
  if (!j->leaves && !(j->leaves = calloc(w->nleaves, sizeof *j->leaves)))
    return dd_err_set(DD_ENOMEM, "parquet: out of memory");
  for (size_t i = 0; i < w->nleaves; i++) {
    pq__wleaf t = w->leaves[i];
    pq__wleaf *spare = &j->leaves[i];
    w->leaves[i].def = spare->def;
    w->leaves[i].rep = spare->rep;
    w->leaves[i].caplev = spare->caplev;
    w->leaves[i].vals = spare->vals;
    w->leaves[i].offs = spare->offs;
    pq__wleaf_reset(&w->leaves[i]);
    *spare = t;
  }
  j->w = w;
  j->g_index = g_index;
  j->rc = 0;
  int rc = pq__wqueue_prepare(w, j->leaves, w->rgs[g_index].chunks);
  if (rc) return rc;
  j->running = true;
  j->tb_started = pthread_create(&j->tb, NULL, pq__wqueue_work, &w->q) == 0;
  j->ta_started = pthread_create(&j->ta, NULL, job_first, j) == 0;
  return 0;
}

/* Cuts the buffered row group: behind the caller when allowed (not at close), else here. */
static int flush_rg(pq_writer *w, bool last) {
  int rc = job_join(w);
  if (rc || w->rows_in_rg == 0) return rc;
  pq__wrg *g = NULL;
  if ((rc = new_rg(w, &g))) return rc;
  int64_t base = w->file_off;
  g->num_rows = w->rows_in_rg;
  g->file_off = base + (int64_t)w->out.len;
  bool par = w->nleaves >= 2 && pq_writer_buffered_bytes(w) >= PAR_MIN_BYTES;
  w->rows_in_rg = 0;
  if (par && w->behind && !last) return job_start(w, w->nrgs - 1);
  if (par) {
    rc = encode_parallel(w, g);
  } else {
    for (size_t i = 0; i < w->nleaves && !rc; i++) {
      rc = pq__wchunk_encode(&w->leaves[i], &w->o, base, &w->out, &g->chunks[i]);
      g->total_bytes += g->chunks[i].uncomp_size;
    }
  }
  for (size_t i = 0; i < w->nleaves; i++) pq__wleaf_reset(&w->leaves[i]);
  return rc ? rc : drain(w);
}

void pq_writer_encode_behind(pq_writer *w, bool on) {
  w->behind = on;
  w->written = w->file_off + (int64_t)w->out.len;
}

int pq_writer_reserve(pq_writer *w, size_t bytes) {
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  if (w->fp || w->sink || w->job.running || bytes <= w->out.len) return 0;
  return pq__buf_reserve(&w->out, bytes - w->out.len);
}

int pq_writer_settle(pq_writer *w) {
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  int rc = job_join(w);
  if (rc) w->failed = rc;
  return rc;
}

int pq_writer_flush_row_group(pq_writer *w) {
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  int rc = flush_rg(w, false);
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
  if (w->rows_in_rg >= w->o.row_group_rows && (rc = flush_rg(w, false))) w->failed = rc;
  return rc;
}

int pq_writer_close(pq_writer *w, uint8_t **out_buf, size_t *out_len) {
  if (out_buf) *out_buf = NULL;
  if (out_len) *out_len = 0;
  if (w->closed || w->failed)
    return dd_err_set(DD_EPRECOND, "parquet writer: already closed or failed");
  w->closed = true;
  bool to_path = w->fp != NULL || w->sink;
  int rc = flush_rg(w, true);
  if (!rc) rc = pq__wfooter_write(w, &w->out);
  if (!rc && to_path) rc = drain(w);
  if (w->fp) {
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
  if (w->job.running) job_join(w); /* its result no longer matters */
  for (size_t i = 0; w->job.leaves && i < w->nleaves; i++) pq__wleaf_free(&w->job.leaves[i]);
  free(w->job.leaves);
  pq__wqueue_free(&w->q);
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

int pq_writer_leaf_range(const pq_writer *w, size_t leaf, pq_range *out) {
  memset(out, 0, sizeof *out);
  if (leaf >= w->nleaves) return dd_err_set(DD_EINVAL, "parquet writer: no leaf %zu", leaf);
  out->type = w->leaves[leaf].type;
  for (size_t g = 0; g < w->nrgs; g++) {
    if (w->job.running && g == w->job.g_index) continue; /* still being encoded */
    const pq__wchunk *m = &w->rgs[g].chunks[leaf];
    out->nan |= m->nan;
    if (!m->has_minmax) continue;
    if (!out->has || pq__wvalue_cmp(out->type, m->min.data, m->min.len, out->min.ptr, out->min.len) < 0)
      out->min = (pq_bytes){m->min.data, m->min.len};
    if (!out->has || pq__wvalue_cmp(out->type, m->max.data, m->max.len, out->max.ptr, out->max.len) > 0)
      out->max = (pq_bytes){m->max.data, m->max.len};
    out->has = true;
  }
  return 0;
}
