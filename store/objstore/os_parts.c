/* os_parts.c: the part buffer behind the streamed puts of the object-store backends
 * (S3 multipart uploads, Azure blocks, GCS resumable chunks; see os_http.h): the pieces of
 * os_put_stream_write gather in one buffer of os__part_bytes(); when it is full and more
 * bytes come, it goes to the backend as the next part, so memory stays one part whatever
 * the object's size. At commit an object that never filled a part goes in one
 * put-if-absent; a larger one sends its last part and completes the upload. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/objstore/os_http.h"

#define OS__PART_DEFAULT (8u << 20)
#define OS__PART_MIN (256u << 10) /* GCS takes chunks in multiples of 256 KiB */
#define OS__PART_MAX (512u << 20)

static size_t os__part_size = OS__PART_DEFAULT;
static pthread_once_t os__part_once = PTHREAD_ONCE_INIT;

/* $DD_OBJSTORE_PART_BYTES, rounded down to 256 KiB and kept in [256 KiB, 512 MiB]. */
static void os__part_init(void) {
  const char *e = getenv("DD_OBJSTORE_PART_BYTES");
  char *end = NULL;
  unsigned long long v = e && *e ? strtoull(e, &end, 10) : 0;
  if (!v || (end && *end)) return;
  if (v < OS__PART_MIN) v = OS__PART_MIN;
  if (v > OS__PART_MAX) v = OS__PART_MAX;
  os__part_size = (size_t)(v - v % OS__PART_MIN);
}

size_t os__part_bytes(void) {
  pthread_once(&os__part_once, os__part_init);
  return os__part_size;
}

void os__parts_init(os__parts *p, const os__parts_ops *ops) {
  memset(p, 0, sizeof *p);
  p->ops = ops;
  p->cap = os__part_bytes();
}

/* Sends the full buffer as the next part. */
static int os__parts_flush(os__parts *p) {
  int rc = p->ops->part(p, p->buf, p->len, p->nparts + 1);
  if (rc) return rc;
  p->nparts++;
  p->sent += p->len;
  p->len = 0;
  return 0;
}

int os__parts_write(os__parts *p, const void *data, size_t len) {
  const uint8_t *d = data;
  if (p->done) return dd_err_set(DD_EINTERNAL, "write to a finished put stream");
  if (len && !p->buf && !(p->buf = malloc(p->cap))) return dd_err_set(DD_ENOMEM, "out of memory");
  while (len) {
    if (p->len == p->cap) { /* full and more to come: it is not the last part */
      int rc = os__parts_flush(p);
      if (rc) return rc;
    }
    size_t take = p->cap - p->len < len ? p->cap - p->len : len;
    memcpy(p->buf + p->len, d, take);
    p->len += take;
    d += take;
    len -= take;
  }
  return 0;
}

int os__parts_commit(os__parts *p) {
  if (p->done) return dd_err_set(DD_EINTERNAL, "put stream committed twice");
  p->done = true;
  if (!p->nparts) return p->ops->single(p, p->buf ? p->buf : (const uint8_t *)"", p->len);
  int rc = p->ops->finish(p, p->buf, p->len, p->nparts);
  if (rc && p->started) p->ops->cancel(p); /* the upload goes: nothing of it stays */
  return rc;
}

void os__parts_abort(os__parts *p) {
  if (!p->done && p->started) p->ops->cancel(p);
  p->done = true;
}

void os__parts_free(os__parts *p) {
  free(p->buf);
  p->buf = NULL;
}

int os__parts_write_cb(void *ps, const void *data, size_t len) { return os__parts_write(ps, data, len); }

int os__parts_commit_cb(void *ps) {
  os__parts *p = ps;
  int rc = os__parts_commit(p);
  p->ops->release(p);
  return rc;
}

void os__parts_abort_cb(void *ps) {
  os__parts *p = ps;
  os__parts_abort(p);
  p->ops->release(p);
}
