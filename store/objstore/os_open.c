/* os_open.c: os_open, the one way the engines open the store of a table location (see
 * "opening a table location" in os.h): local paths and file URLs go to the local backend,
 * every other URL to the process's opener, which knows the credentials. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/objstore/os.h"

/* The process's opener: written by os_set_opener (at server start, before requests run,
 * and at shutdown), read by every os_open; the lock makes a late install safe too. */
static pthread_mutex_t open__lock = PTHREAD_MUTEX_INITIALIZER;
static os_open_fn open__fn;
static void *open__ctx;

void os_set_opener(os_open_fn fn, void *ctx) {
  pthread_mutex_lock(&open__lock);
  open__fn = fn;
  open__ctx = ctx;
  pthread_mutex_unlock(&open__lock);
}

void os_clear_opener(void *ctx) {
  pthread_mutex_lock(&open__lock);
  if (open__ctx == ctx) open__fn = NULL, open__ctx = NULL;
  pthread_mutex_unlock(&open__lock);
}

bool os_is_local(const char *location) {
  if (!location) return false;
  if (!strncmp(location, "file:", 5)) return true;
  return !strstr(location, "://") || strcspn(location, "/") < strcspn(location, ":");
}

int os_open(os_store **out, const char *location) {
  *out = NULL;
  if (!location || !*location) return dd_err_set(DD_EINVAL, "no table location");
  if (os_is_local(location)) return os_local_open(out, location); /* its rules, unchanged */
  pthread_mutex_lock(&open__lock);
  os_open_fn fn = open__fn;
  void *ctx = open__ctx;
  pthread_mutex_unlock(&open__lock);
  if (!fn)
    return dd_err_set(DD_EUNSUPPORTED, "%s is in object storage, which only the server reaches "
                      "(through the storage location and credential that cover it)", location);
  return fn(ctx, location, out);
}

int os_read_any(const os_store *st, const char *path, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  int rc = os_read_all(st, path, out, out_len);
  if (rc != DD_EPERM || os_is_local(path) || os_is_local(os_store_location(st))) return rc;
  /* an object-store URL outside st's root: through the store of its own directory, which
   * the opener gives only under a storage location */
  const char *slash = strrchr(path, '/');
  if (!slash || !slash[1]) return rc;
  char *dir = strndup(path, (size_t)(slash - path));
  if (!dir) return dd_err_set(DD_ENOMEM, "out of memory");
  os_store *other = NULL;
  dd_err_clear();
  rc = os_open(&other, dir);
  if (!rc) rc = os_read_all(other, slash + 1, out, out_len);
  os_store_free(other);
  free(dir);
  return rc;
}
