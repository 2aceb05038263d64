/* shq_par.c: the file lines of a large snapshot rendered on several threads, sent in the
 * order and with the outcome one thread would give (shq_internal.h, shq__par_render), and
 * what a snapshot keeps for the queries after the first (its file ids, its path check).
 *
 * The snapshot's slots are cut into chunks of PAR_CHUNK slots. Workers claim chunks in
 * order and render each with a shq_out of their own into the chunk's text (lines, each
 * followed by a NUL); the calling thread hands the chunks' lines to the line callback in
 * chunk order. A ring of PAR_RING chunks bounds what is buffered; a worker waits for a
 * free place. A chunk's error is kept with its message and returned when its turn comes,
 * after the lines before it, as the sequential loop would; the callback's refusal stops
 * the workers.
 *
 * Locking: one mutex guards the ring's states, the claim and emit counters and `stop`;
 * a chunk's text and counters are written by its worker while RENDERING and read by the
 * emitter once DONE (the state change under the mutex orders them).
 *
 * File ids: each line carries the MD5 of its file's path, a fifth of a line's CPU. They
 * are kept with the snapshot (dl_snapshot_ext, freed with it), PAR_CHUNK digests a chunk
 * by the file's ordinal in the chunk's range (the same files in the same order for every
 * query of the snapshot). A chunk's ids are filled by the first worker that claims them
 * (its state EMPTY -> FILLING, compare-and-swap), for every file of the range before any
 * filter, and published READY once the range was walked to its end (release; readers
 * acquire); a worker that finds another filling them computes its own. */
#include <stdatomic.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

enum { PAR_CHUNK = 1024, PAR_RING = 8, PAR_MAX_THREADS = 4 };
enum { CH_FREE, CH_RENDERING, CH_DONE };

typedef struct par_chunk {
  int state;
  size_t index;      /* which chunk of the snapshot */
  dd_buf text;       /* the lines, each followed by a NUL */
  size_t *lens;      /* [nlines] */
  size_t nlines, cap_lines;
  int rc;
  char err[1024];
  size_t num_files;
  int64_t min_expiry;
} par_chunk;

enum { IDS_EMPTY, IDS_FILLING, IDS_READY };

/* What a snapshot keeps for later queries: that its paths passed shq__check_paths, and
 * (for a snapshot large enough to render in parallel) its file ids. */
typedef struct par_ids {
  dl_snapshot_ext base; /* first: the snapshot frees it through base.free */
  atomic_int paths_ok;
  size_t nchunks;       /* 0: no ids kept */
  atomic_uchar *state;  /* [nchunks] */
  unsigned char (*md5)[16]; /* [nchunks * PAR_CHUNK] */
} par_ids;

static void ids_free(dl_snapshot_ext *e) {
  par_ids *ids = (par_ids *)e;
  free(ids->state);
  free(ids->md5);
  free(ids);
}

/* The snapshot's kept state: found, or made and attached now (NULL: no memory, or the
 * snapshot keeps something else). */
static par_ids *kept_of(const dl_snapshot *snap) {
  dl_snapshot_ext *e = dl_snapshot_ext_get(snap);
  if (!e) {
    par_ids *ids = calloc(1, sizeof *ids);
    if (!ids) return NULL;
    ids->base.free = ids_free;
    atomic_init(&ids->paths_ok, 0);
    size_t slots = dl_snapshot_slots(snap);
    if (slots >= 4 * PAR_CHUNK) {
      ids->nchunks = (slots + PAR_CHUNK - 1) / PAR_CHUNK;
      ids->state = calloc(ids->nchunks, sizeof *ids->state);
      ids->md5 = malloc(ids->nchunks * PAR_CHUNK * sizeof *ids->md5);
      if (!ids->state || !ids->md5) {
        ids_free(&ids->base);
        return NULL;
      }
      for (size_t i = 0; i < ids->nchunks; i++) atomic_init(&ids->state[i], IDS_EMPTY);
    }
    e = dl_snapshot_ext_set(snap, &ids->base);
    if (e != &ids->base) ids_free(&ids->base);
  }
  return e->free == ids_free ? (par_ids *)e : NULL;
}

static par_ids *ids_of(const dl_snapshot *snap, size_t nchunks) {
  par_ids *k = kept_of(snap);
  return k && k->nchunks == nchunks ? k : NULL;
}

bool shq__kept_paths_ok(const dl_snapshot *snap) {
  par_ids *k = kept_of(snap);
  return k && atomic_load_explicit(&k->paths_ok, memory_order_acquire);
}

void shq__kept_set_paths_ok(const dl_snapshot *snap) {
  par_ids *k = kept_of(snap);
  if (k) atomic_store_explicit(&k->paths_ok, 1, memory_order_release);
}

void shq__par_file_seen(shq_out *wo, const dl_file *f) {
  if (wo->id_at >= wo->ids_cap) {
    wo->id = NULL; /* more files than slots: cannot happen; computed as without ids */
    return;
  }
  unsigned char *md = wo->ids[wo->id_at++];
  if (wo->ids_fill) shq__md5(f->raw_path, strlen(f->raw_path), md);
  wo->id = md;
}

typedef struct par {
  const shq_out *o;
  par_ids *ids; /* NULL: every id computed */
  shq_par_render_fn fn;
  void *ud;
  size_t slots, nchunks;
  pthread_mutex_t mu;
  pthread_cond_t cv;     /* a chunk done, a place freed, stop */
  size_t next_claim;     /* the next chunk to render */
  size_t next_emit;      /* the next chunk to send */
  bool stop;
  par_chunk ring[PAR_RING];
} par;

/* The worker's line sink: the line is already in the chunk's text (the worker's shq_out
 * renders into it, keep_lines); only its length is noted. */
static int collect_line(void *ctx, const char *json, size_t len) {
  par_chunk *c = ctx;
  (void)json;
  if (c->nlines == c->cap_lines) {
    size_t cap = c->cap_lines ? 2 * c->cap_lines : 256;
    size_t *n = realloc(c->lens, cap * sizeof *n);
    if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
    c->lens = n, c->cap_lines = cap;
  }
  c->lens[c->nlines++] = len;
  return 0;
}

static void render(par *p, par_chunk *c) {
  shq_out wo = *p->o; /* the settings; its own buffers, counters and line sink */
  c->text.len = 0, c->text.oom = false, c->nlines = 0;
  wo.b = c->text, wo.url = (dd_buf){0}; /* the lines are rendered into the chunk's text */
  c->text = (dd_buf){0};
  wo.keep_lines = true, wo.line_start = 0;
  wo.min_expiry = INT64_MAX, wo.num_files = 0;
  wo.fn = collect_line, wo.ctx = c;
  size_t from = c->index * PAR_CHUNK, to = from + PAR_CHUNK < p->slots ? from + PAR_CHUNK : p->slots;
  wo.ids = NULL, wo.ids_fill = false, wo.id = NULL, wo.id_at = 0, wo.ids_cap = PAR_CHUNK;
  atomic_uchar *st = p->ids ? &p->ids->state[c->index] : NULL;
  unsigned char seen = IDS_EMPTY;
  bool filling = false;
  if (st && atomic_load_explicit(st, memory_order_acquire) == IDS_READY) {
    wo.ids = p->ids->md5 + from;
  } else if (st && atomic_compare_exchange_strong_explicit(st, &seen, IDS_FILLING, memory_order_acq_rel,
                                                           memory_order_acquire)) {
    wo.ids = p->ids->md5 + from;
    wo.ids_fill = filling = true;
  }
  dd_err_clear();
  c->rc = p->fn(p->ud, &wo, from, to);
  /* every file of the range was seen only when the walk ended well */
  if (filling) atomic_store_explicit(st, c->rc ? IDS_EMPTY : IDS_READY, memory_order_release);
  if (c->rc) snprintf(c->err, sizeof c->err, "%s", dd_err_msg());
  c->num_files = wo.num_files, c->min_expiry = wo.min_expiry;
  c->text = wo.b; /* the chunk's lines, each followed by a NUL */
  wo.b = (dd_buf){0};
  shq__out_free(&wo);
}

static void *worker(void *arg) {
  par *p = arg;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (!p->stop && p->next_claim < p->nchunks && p->next_claim >= p->next_emit + PAR_RING)
      pthread_cond_wait(&p->cv, &p->mu);
    if (p->stop || p->next_claim >= p->nchunks) break;
    par_chunk *c = &p->ring[p->next_claim % PAR_RING];
    c->index = p->next_claim++;
    c->state = CH_RENDERING;
    pthread_mutex_unlock(&p->mu);
    render(p, c);
    pthread_mutex_lock(&p->mu);
    c->state = CH_DONE;
    pthread_cond_broadcast(&p->cv);
  }
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

/* Sends chunk c's lines and adds its counters to o; its error, if any, after its lines. */
static int emit(shq_out *o, par_chunk *c) {
  const char *line = c->text.p;
  for (size_t i = 0; i < c->nlines; i++) {
    int rc = o->fn(o->ctx, line, c->lens[i]);
    if (rc) return rc;
    line += c->lens[i] + 1;
  }
  o->num_files += c->num_files;
  if (c->min_expiry < o->min_expiry) o->min_expiry = c->min_expiry;
  return c->rc ? dd_err_set(c->rc, "%s", c->err) : 0;
}

static size_t thread_count(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 2 ? 1 : n > PAR_MAX_THREADS ? PAR_MAX_THREADS : (size_t)n;
}

bool shq__par_worth(const shq_out *o, size_t slots) {
  return o->signer && o->signer->concurrent && slots >= 4 * PAR_CHUNK && thread_count() > 1;
}

int shq__par_render(shq_out *o, const dl_snapshot *snap, size_t slots, shq_par_render_fn fn, void *ud) {
  par *p = calloc(1, sizeof *p);
  if (!p) return dd_err_set(DD_ENOMEM, "out of memory");
  p->o = o, p->fn = fn, p->ud = ud, p->slots = slots;
  p->nchunks = (slots + PAR_CHUNK - 1) / PAR_CHUNK;
  p->ids = snap ? ids_of(snap, p->nchunks) : NULL;
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv, NULL);
  pthread_t th[PAR_MAX_THREADS];
  size_t nth = 0, want = thread_count();
  while (nth < want && pthread_create(&th[nth], NULL, worker, p) == 0) nth++;
  int rc = nth ? 0 : dd_err_set(DD_EINTERNAL, "cannot start the threads rendering the file lines");
  pthread_mutex_lock(&p->mu);
  while (!rc && p->next_emit < p->nchunks) {
    par_chunk *c = &p->ring[p->next_emit % PAR_RING];
    while (c->state != CH_DONE || c->index != p->next_emit) pthread_cond_wait(&p->cv, &p->mu);
    pthread_mutex_unlock(&p->mu);
    rc = emit(o, c);
    pthread_mutex_lock(&p->mu);
    c->state = CH_FREE;
    p->next_emit++;
    pthread_cond_broadcast(&p->cv);
  }
  p->stop = true;
  pthread_cond_broadcast(&p->cv);
  pthread_mutex_unlock(&p->mu);
  for (size_t i = 0; i < nth; i++) pthread_join(th[i], NULL);
  for (size_t i = 0; i < PAR_RING; i++) {
    dd_buf_free(&p->ring[i].text);
    free(p->ring[i].lens);
  }
  pthread_mutex_destroy(&p->mu);
  pthread_cond_destroy(&p->cv);
  free(p);
  return rc;
}
