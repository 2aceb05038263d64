/* dml_par.c: candidate files worked on several threads, for the copy-on-write paths of
 * DELETE / UPDATE (dml_run.c) and MERGE (dml_merge.c) (dml_int.h). The candidates are
 * listed first (their paths, in the snapshot's log order); then worker w of nw takes
 * candidates w, w + nw, ..., each found again by walking the snapshot's files (they come in
 * the same order every time), so which worker writes which file never depends on timing.
 * The first error of any worker is the run's (its message carried over to the calling
 * thread); the others stop before their next file. The caller then takes the results in the
 * candidates' order on its own thread (dml__par_each). */
#include "store/dml/dml_int.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum { PAR_DONE = 1 }; /* stops a walk over the files once every candidate is seen */

int dml__par_add(dml__par *p, const char *path) {
  void *v = p->paths;
  int rc = dml__reserve(&v, &p->cap, p->n, sizeof *p->paths);
  p->paths = v;
  if (rc) return rc;
  if (!(p->paths[p->n] = strdup(path))) return dml__oom();
  p->n++;
  return 0;
}

size_t dml__par_workers(const dml__par *p) { return p->n < DML__WORKERS ? p->n : DML__WORKERS; }

void dml__par_free(dml__par *p) {
  for (size_t i = 0; i < p->n; i++) free(p->paths[i]);
  free(p->paths);
  memset(p, 0, sizeof *p);
}

/* One walk over the files: fn on every candidate i with i % every == first. */
typedef struct walk {
  const dml__par *p;
  size_t cur;            /* the next candidate to look for */
  size_t first, every;
  void *ctx;
  dml__par_fn fn;
  dml__par_end_fn end;   /* NULL: none */
  atomic_bool *stop;     /* NULL: never stops early */
} walk;

static int walk_cb(void *ctx, const dl_file *f) {
  walk *k = ctx;
  if (k->cur >= k->p->n) return PAR_DONE;
  if (strcmp(f->path, k->p->paths[k->cur])) return 0;
  size_t i = k->cur++;
  if (i % k->every != k->first) return 0;
  if (k->stop && atomic_load(k->stop)) return PAR_DONE;
  return k->fn(k->ctx, f, i);
}

static int walk_run(walk *k, const dl_snapshot *s) {
  int rc = dl_snapshot_files(s, walk_cb, k);
  if (rc == PAR_DONE) rc = 0;
  bool stopped = k->stop && atomic_load(k->stop); /* another worker failed: no last step */
  return !rc && k->end && !stopped ? k->end(k->ctx) : rc;
}

int dml__par_each(const dml__par *p, const dl_snapshot *s, void *ctx, dml__par_fn fn) {
  walk k = {.p = p, .every = 1, .ctx = ctx, .fn = fn};
  return p->n ? walk_run(&k, s) : 0;
}

/* ---- the workers ------------------------------------------------------------------------ */

typedef struct shared {
  atomic_bool stop;
  pthread_mutex_t mu;    /* guards err and msg */
  int err;
  char *msg;
} shared;

typedef struct worker {
  walk k;
  const dl_snapshot *s;
  shared *sh;
  pthread_t th;
  bool started;
} worker;

static void *worker_main(void *arg) {
  worker *w = arg;
  int rc = walk_run(&w->k, w->s);
  if (rc) {
    atomic_store(&w->sh->stop, true);
    pthread_mutex_lock(&w->sh->mu);
    if (!w->sh->err) w->sh->err = rc, w->sh->msg = strdup(dd_err_msg()); /* the first error wins */
    pthread_mutex_unlock(&w->sh->mu);
  }
  return NULL;
}

int dml__par_run(const dml__par *p, const dl_snapshot *s, void *const *ctx, dml__par_fn fn,
                 dml__par_end_fn end) {
  size_t n = dml__par_workers(p);
  worker ws[DML__WORKERS];
  shared sh = {.err = 0};
  atomic_init(&sh.stop, false);
  pthread_mutex_init(&sh.mu, NULL);
  for (size_t i = 0; i < n; i++) {
    worker *w = &ws[i];
    *w = (worker){.k = {.p = p, .first = i, .every = n, .ctx = ctx[i], .fn = fn, .end = end,
                        .stop = &sh.stop},
                  .s = s, .sh = &sh};
    /* worker 0 is this thread; a thread that does not start runs here after it */
    w->started = i && pthread_create(&w->th, NULL, worker_main, w) == 0;
  }
  for (size_t i = 0; i < n; i++) {
    if (ws[i].started) pthread_join(ws[i].th, NULL);
    else worker_main(&ws[i]);
  }
  pthread_mutex_destroy(&sh.mu);
  int rc = sh.err ? dd_err_set(sh.err, "%s", sh.msg ? sh.msg : "dml: rewriting a file failed") : 0;
  free(sh.msg);
  return rc;
}
