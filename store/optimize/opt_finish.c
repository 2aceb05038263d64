/* opt_finish.c: finishing an OPTIMIZE bin's writer (its last row group encoded, its file put
 * into the store) on a thread of its own while the next bin is read and shredded. */
#include "store/optimize/opt_int.h"

#include <stdlib.h>
#include <string.h>

static void *finish_main(void *p) {
  opt__finisher *f = p;
  f->rc = dw_finish(f->w);
  f->msg = f->rc ? strdup(dd_err_msg()) : NULL;
  return NULL;
}

int opt__finish_wait(opt__finisher *f) {
  if (!f->running) return 0;
  pthread_join(f->th, NULL);
  f->running = false;
  int rc = f->rc;
  if (rc) rc = dd_err_set(rc, "%s", f->msg ? f->msg : "optimize: writing a file failed");
  free(f->msg);
  f->msg = NULL;
  return rc;
}

int opt__finish_start(opt__finisher *f, dw_writer *w) {
  f->w = w;
  f->rc = 0;
  if (pthread_create(&f->th, NULL, finish_main, f) != 0) return dw_finish(w);
  f->running = true;
  return 0;
}
