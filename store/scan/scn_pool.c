/* scn_pool.c: the scan's decode workers (scn_opts.threads > 1). The work is the sequence
 * one thread would do: for each file in log order, open it (scn__file_open), then decode
 * each of its row groups in order (scn__decode_rg). Each piece of that sequence, when a
 * worker claims it, gets the next sequence number; the consumer (scn_next's thread) takes
 * the decoded units strictly by sequence number, so the batches, their rows and the place
 * of an error are those of one thread.
 *
 * Locking: one mutex guards everything shared: the claim cursor (next_file, cur,
 * cur_next_rg, cur_base, opening, next_seq, exhausted, stop), each slot's state and seq,
 * the refs of the opened files, and want_seq. A slot's unit, scratch and error are written
 * only by its worker while the slot is BUSY and read (swapped) only by the consumer while
 * it is READY; the state change happens under the mutex, which orders the accesses. Opened
 * files (pq_file, bindings, deletion vector) are read-only once published; the scan itself
 * (columns, schema, files, roots) is read-only after scn_open. Opening a file happens
 * outside the lock by one worker at a time (`opening`), and the others wait for it to be
 * published before claiming its row groups. cv_work wakes workers (a slot taken, a file
 * published, stop); cv_ready wakes the consumer (a unit ready, a worker gone, exhausted).
 *
 * Bound: a worker holds one unit, READY or BUSY, and claims the next only once the
 * consumer took it: at most threads decoded row groups plus the consumer's own. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/scan/scn_int.h"

enum { SLOT_FREE, SLOT_BUSY, SLOT_READY };

typedef struct scn__slot {
  scn__pool *p;
  pthread_t th;
  bool started;
  int state;
  uint64_t seq;
  scn__unit u;
  int rc;
  char *msg;             /* the worker's error message (dd_err_msg is per thread) */
  scn__open *held;       /* the file the scratch is bound to (one ref) */
  scn__rg rg;
} scn__slot;

struct scn__pool {
  const scn_scan *s;
  pthread_mutex_t mu;
  pthread_cond_t cv_work, cv_ready;
  scn__slot *slots;
  size_t nslots, running;
  /* the claim cursor */
  size_t next_file;
  scn__open *cur;        /* the last file opened (one ref), its row groups being claimed */
  size_t cur_next_rg;
  int64_t cur_base;
  bool opening, exhausted, stop;
  uint64_t next_seq, want_seq;
};

/* A claimed piece of work. */
typedef struct claim {
  uint64_t seq;
  size_t open_file;      /* SIZE_MAX: a row group of `o` */
  scn__open *o;          /* one ref, transferred to the claimant */
  size_t rg;
  int64_t base;
} claim;

static void unref(scn__open *o) {
  if (o && --o->refs == 0) scn__file_close(o);
}

/* Takes the claim cursor's next row group of p->cur into *c. Locked. */
static void claim_rg(scn__pool *p, claim *c) {
  c->o = p->cur;
  c->o->refs++;
  c->rg = p->cur_next_rg++;
  c->base = p->cur_base;
  p->cur_base += pq_row_group_num_rows(p->cur->pf, c->rg);
}

/* The next piece of work; false when there is none (stop or exhausted). Locked. */
static bool claim_next(scn__pool *p, claim *c) {
  memset(c, 0, sizeof *c);
  for (;;) {
    if (p->stop) return false;
    if (p->cur && p->cur_next_rg < p->cur->nrg) {
      c->open_file = SIZE_MAX;
      c->seq = p->next_seq++;
      claim_rg(p, c);
      return true;
    }
    if (p->opening) {
      pthread_cond_wait(&p->cv_work, &p->mu);
      continue;
    }
    if (p->next_file == p->s->nfiles) {
      p->exhausted = true;
      pthread_cond_broadcast(&p->cv_ready);
      return false;
    }
    c->open_file = p->next_file++;
    c->seq = p->next_seq++;
    p->opening = true;
    return true;
  }
}

/* Publishes file o (opened for claim c) as the cursor's, claiming its first row group for
 * c when it has one. Locked. */
static void publish(scn__pool *p, claim *c, scn__open *o) {
  p->opening = false;
  if (o) {
    unref(p->cur);
    p->cur = o;
    o->refs = 1;
    p->cur_next_rg = 0;
    p->cur_base = 0;
    if (o->nrg) claim_rg(p, c);
  }
  pthread_cond_broadcast(&p->cv_work);
}

/* Does claim c (unlocked) into w's unit. */
static int work(scn__slot *w, claim *c, scn__open **drop) {
  const scn_scan *s = w->p->s;
  scn__unit *u = &w->u;
  *drop = NULL;
  u->first_of_file = c->open_file != SIZE_MAX;
  if (!c->o) { /* a file without row groups */
    arw_batch_clear(u->b);
    u->decoded = false;
    u->nrows = u->nkeep = 0;
    return 0;
  }
  if (c->o != w->held) { /* the scratch moves to the new file (scn__rg_bind) */
    *drop = w->held;
    w->held = c->o;
  } else {
    *drop = c->o; /* w->held keeps its own ref */
  }
  c->o = NULL;
  scn__rg_bind(&w->rg, w->held);
  return scn__decode_rg(s, w->held, c->rg, c->base, &w->rg, u);
}

static void *worker(void *arg) {
  scn__slot *w = arg;
  scn__pool *p = w->p;
  pthread_mutex_lock(&p->mu);
  for (;;) {
    while (w->state == SLOT_READY && !p->stop) pthread_cond_wait(&p->cv_work, &p->mu);
    claim c;
    if (!claim_next(p, &c)) break;
    w->state = SLOT_BUSY;
    w->seq = c.seq;
    int rc = 0;
    if (c.open_file != SIZE_MAX) {
      pthread_mutex_unlock(&p->mu);
      scn__open *o = NULL;
      rc = scn__file_open(p->s, &p->s->files[c.open_file], &o);
      pthread_mutex_lock(&p->mu);
      publish(p, &c, rc ? NULL : o);
    }
    scn__open *drop = NULL;
    pthread_mutex_unlock(&p->mu);
    if (!rc) rc = work(w, &c, &drop);
    free(w->msg);
    w->msg = rc ? strdup(dd_err_msg()) : NULL;
    pthread_mutex_lock(&p->mu);
    unref(drop);
    w->rc = rc;
    if (rc) {
      p->stop = true; /* claimed units still finish: the consumer meets this one in order */
      pthread_cond_broadcast(&p->cv_work);
    }
    w->state = SLOT_READY;
    pthread_cond_broadcast(&p->cv_ready);
  }
  p->running--;
  pthread_cond_broadcast(&p->cv_ready);
  pthread_mutex_unlock(&p->mu);
  return NULL;
}

int scn__pool_next(scn__pool *p, scn__unit *cu, bool *end) {
  *end = false;
  pthread_mutex_lock(&p->mu);
  scn__slot *w = NULL;
  for (;;) {
    for (size_t i = 0; i < p->nslots && !w; i++)
      if (p->slots[i].state == SLOT_READY && p->slots[i].seq == p->want_seq) w = &p->slots[i];
    if (w) break;
    /* every claimed unit is BUSY or READY in some slot until taken, so it comes */
    if (p->want_seq == p->next_seq && !p->opening && (p->exhausted || p->stop || !p->running)) {
      pthread_mutex_unlock(&p->mu);
      *end = true;
      return 0;
    }
    pthread_cond_wait(&p->cv_ready, &p->mu);
  }
  scn__unit t = *cu;
  *cu = w->u;
  w->u = t;
  int rc = w->rc;
  char *msg = w->msg;
  w->msg = NULL;
  w->state = SLOT_FREE;
  p->want_seq++;
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  if (rc) rc = dd_err_set(rc, "%s", msg ? msg : "scan: a decode worker failed");
  free(msg);
  return rc;
}

int scn__pool_start(scn__pool **out, const scn_scan *s) {
  *out = NULL;
  scn__pool *p = calloc(1, sizeof *p);
  if (!p) return dd_err_set(DD_ENOMEM, "scan: out of memory starting decode threads");
  p->s = s;
  p->slots = calloc(s->threads, sizeof *p->slots);
  if (!p->slots) {
    free(p);
    return dd_err_set(DD_ENOMEM, "scan: out of memory starting decode threads");
  }
  pthread_mutex_init(&p->mu, NULL);
  pthread_cond_init(&p->cv_work, NULL);
  pthread_cond_init(&p->cv_ready, NULL);
  int rc = 0;
  for (; p->nslots < s->threads; p->nslots++) {
    scn__slot *w = &p->slots[p->nslots];
    w->p = p;
    if ((rc = scn__unit_init(&w->u, s->schema))) break;
  }
  pthread_mutex_lock(&p->mu);
  for (size_t i = 0; !rc && i < p->nslots; i++) {
    scn__slot *w = &p->slots[i];
    w->started = pthread_create(&w->th, NULL, worker, w) == 0;
    if (!w->started) break; /* fewer workers: still correct */
    p->running++;
  }
  bool none = p->running == 0;
  pthread_mutex_unlock(&p->mu);
  if (rc || none) { /* decode in the caller's thread instead */
    scn__pool_free(p);
    return rc;
  }
  *out = p;
  return 0;
}

void scn__pool_free(scn__pool *p) {
  if (!p) return;
  pthread_mutex_lock(&p->mu);
  p->stop = true;
  pthread_cond_broadcast(&p->cv_work);
  pthread_mutex_unlock(&p->mu);
  for (size_t i = 0; i < p->nslots; i++)
    if (p->slots[i].started) pthread_join(p->slots[i].th, NULL);
  for (size_t i = 0; i < p->nslots; i++) {
    scn__slot *w = &p->slots[i];
    scn__rg_free(&w->rg);
    unref(w->held);
    scn__unit_free(&w->u);
    free(w->msg);
  }
  unref(p->cur);
  pthread_cond_destroy(&p->cv_ready);
  pthread_cond_destroy(&p->cv_work);
  pthread_mutex_destroy(&p->mu);
  free(p->slots);
  free(p);
}
