/* os_probe.c: what the prefix-keyed backends (os_s3.c, os_gcs.c) share: the once-per-
 * process answer to "does this store honour conditional puts?" (kept per store, endpoint
 * and bucket), and directories as key prefixes. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/objstore/os_http.h"

#define PROBES_MAX 64

/* Stores probed so far; guarded by the lock. */
static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { char *where; bool honoured; } probes[PROBES_MAX];
static size_t nprobes;

/* 1 honoured, 0 ignored, -1 not probed yet. */
static int probe_known(const char *where) {
  int r = -1;
  pthread_mutex_lock(&probe_lock);
  for (size_t i = 0; i < nprobes && r < 0; i++)
    if (!strcmp(probes[i].where, where)) r = probes[i].honoured;
  pthread_mutex_unlock(&probe_lock);
  return r;
}

static void probe_keep(const char *where, bool honoured) {
  pthread_mutex_lock(&probe_lock);
  if (nprobes < PROBES_MAX && (probes[nprobes].where = strdup(where)))
    probes[nprobes++].honoured = honoured; /* (a full table: probed again next time) */
  pthread_mutex_unlock(&probe_lock);
}

int os__cond_put_check(const char *where, os__probe_fn probe, void *ctx, const char *store,
                       const char *endpoint, const char *bucket, const char *condition) {
  int known = probe_known(where);
  if (known < 0) {
    int rc = probe(ctx);
    if (rc < 0) return rc;
    probe_keep(where, rc == 1);
    known = rc;
  }
  if (known) return 0;
  return dd_err_set(DD_EPRECOND, "the %s store at %s (bucket %s) ignores %s (a second "
                    "conditional put of one key succeeded), so a commit there could silently "
                    "overwrite a concurrent writer's: deltad does not write Delta commits or data "
                    "files to it; use a store with conditional writes", store, endpoint, bucket,
                    condition);
}

int os__prefix_mkdirs(void *impl, const char *dir) {
  (void)impl;
  (void)dir;
  return 0;
}

int os__prefix_rmdir(int (*list_raw)(void *impl, const char *dir, os_list *out), void *impl,
                     const char *dir, const char *what) {
  os_list l;
  int rc = list_raw(impl, dir, &l);
  size_t n = l.count;
  os_list_free(&l);
  if (rc) return rc;
  return n ? dd_err_set(DD_EPRECOND, "%s prefix '%s' is not empty", what, dir) : 0;
}
