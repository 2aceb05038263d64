/* os_store.c: the backend-independent part of the object store: the wrapper that holds a
 * vtable and dispatches every call to it, batch deletes (the backend's, or one delete per
 * path), plus the listing helpers (free, add, sort). */
#include "store/objstore/os.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "store/objstore/os_http.h"

struct os_store {
  const os_vtable *vt;
  void *impl;
  char *location;
  int backend; /* os_stats index, from the location's scheme */
};

/* ---- request counters (os_stats_get) ---- */

static const char *const os__backends[OS_STATS_BACKENDS] = {"local", "s3", "azure", "gcs"};
static const char *const os__outcomes[OS_STATS_OUTCOMES] = {"ok", "not_found", "error"};
static atomic_uint_fast64_t os__counts[OS_STATS_BACKENDS][OS_STATS_OUTCOMES];

static int os__backend_of(const char *loc) {
  if (!strncmp(loc, "s3://", 5) || !strncmp(loc, "s3a://", 6)) return 1;
  if (!strncmp(loc, "abfs", 4) || !strncmp(loc, "az://", 5) || !strncmp(loc, "azure://", 8) ||
      !strncmp(loc, "wasb", 4))
    return 2;
  if (!strncmp(loc, "gs://", 5)) return 3;
  return 0;
}

/* Counts one request of st by its outcome; returns rc unchanged. */
static int os__count(const os_store *st, int rc) {
  int o = rc == 0 ? 0 : rc == DD_ENOTFOUND ? 1 : 2;
  atomic_fetch_add_explicit(&os__counts[st->backend][o], 1, memory_order_relaxed);
  return rc;
}

void os_stats_get(uint64_t out[OS_STATS_BACKENDS][OS_STATS_OUTCOMES]) {
  for (int b = 0; b < OS_STATS_BACKENDS; b++)
    for (int o = 0; o < OS_STATS_OUTCOMES; o++)
      out[b][o] = atomic_load_explicit(&os__counts[b][o], memory_order_relaxed);
}
const char *os_stats_backend_name(int i) { return os__backends[i]; }
const char *os_stats_outcome_name(int i) { return os__outcomes[i]; }

int os_store_new(os_store **out, const os_vtable *vt, void *impl, const char *location) {
  *out = NULL;
  os_store *st = calloc(1, sizeof *st);
  if (!st || !(st->location = strdup(location ? location : ""))) {
    free(st);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  st->vt = vt;
  st->impl = impl;
  st->backend = os__backend_of(st->location);
  *out = st;
  return 0;
}

void os_store_free(os_store *st) {
  if (!st) return;
  if (st->vt && st->vt->free) st->vt->free(st->impl);
  free(st->location);
  free(st);
}

const char *os_store_location(const os_store *st) { return st->location; }

int os_read_all(const os_store *st, const char *path, uint8_t **out, size_t *out_len) {
  return os__count(st, st->vt->read_all(st->impl, path, out, out_len));
}

int os_read_range(const os_store *st, const char *path, uint64_t offset, size_t len,
                  uint8_t *out) {
  return os__count(st, st->vt->read_range(st->impl, path, offset, len, out));
}

int os_stat_path(const os_store *st, const char *path, os_stat *out) {
  return os__count(st, st->vt->stat(st->impl, path, out));
}

int os_list_dir(const os_store *st, const char *dir, os_list *out) {
  return os__count(st, st->vt->list(st->impl, dir, out));
}

void os_list_free(os_list *l) {
  if (!l) return;
  for (size_t i = 0; i < l->count; i++) free(l->entries[i].name);
  free(l->entries);
  l->entries = NULL;
  l->count = 0;
}

int os_list_add(os_list *l, size_t *cap, const char *name, int64_t size, int64_t mtime_ms,
                bool is_dir) {
  if (l->count == *cap) {
    size_t nc = *cap ? *cap * 2 : 64;
    os_entry *ne = realloc(l->entries, nc * sizeof *ne);
    if (!ne) return dd_err_set(DD_ENOMEM, "out of memory");
    l->entries = ne;
    *cap = nc;
  }
  os_entry *e = &l->entries[l->count];
  if (!(e->name = strdup(name))) return dd_err_set(DD_ENOMEM, "out of memory");
  e->size = size;
  e->mtime_ms = mtime_ms;
  e->is_dir = is_dir;
  e->is_link = false;
  l->count++;
  return 0;
}

static int os_entry_cmp(const void *a, const void *b) {
  return strcmp(((const os_entry *)a)->name, ((const os_entry *)b)->name);
}

void os_list_sort(os_list *l) {
  if (l->count > 1) qsort(l->entries, l->count, sizeof *l->entries, os_entry_cmp);
}

int os_put_if_absent(const os_store *st, const char *path, const void *data, size_t len) {
  return os__count(st, st->vt->put_if_absent(st->impl, path, data, len));
}

struct os_put_stream {
  const os_store *st;
  void *impl_ps;  /* the backend's stream, or NULL: the pieces gather in buf */
  char *path;
  dd_buf buf;
};

int os_put_stream_open(const os_store *st, const char *path, size_t size_hint,
                       os_put_stream **out) {
  *out = NULL;
  os_put_stream *ps = calloc(1, sizeof *ps);
  if (!ps || !(ps->path = strdup(path))) {
    free(ps);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  ps->st = st;
  int rc = st->vt->put_stream_open ? st->vt->put_stream_open(st->impl, path, &ps->impl_ps) : 0;
  if (!rc && !ps->impl_ps && size_hint && !dd_buf_reserve(&ps->buf, size_hint))
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (rc) {
    free(ps->path);
    free(ps);
    return os__count(st, rc);
  }
  *out = ps;
  return 0;
}

int os_put_stream_write(os_put_stream *ps, const void *data, size_t len) {
  if (ps->impl_ps) return ps->st->vt->put_stream_write(ps->impl_ps, data, len);
  dd_buf_put(&ps->buf, data, len);
  return ps->buf.oom ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

int os_put_stream_commit(os_put_stream *ps) {
  const os_store *st = ps->st;
  int rc = ps->impl_ps ? os__count(st, st->vt->put_stream_commit(ps->impl_ps))
                       : os_put_if_absent(st, ps->path, ps->buf.p ? ps->buf.p : "", ps->buf.len);
  dd_buf_free(&ps->buf);
  free(ps->path);
  free(ps);
  return rc;
}

void os_put_stream_abort(os_put_stream *ps) {
  if (!ps) return;
  if (ps->impl_ps) ps->st->vt->put_stream_abort(ps->impl_ps);
  dd_buf_free(&ps->buf);
  free(ps->path);
  free(ps);
}

int os_put_stream_copy(os_put_stream *ps, const os_store *src, const char *path) {
  os_stat sb;
  int rc = os_stat_path(src, path, &sb);
  if (!rc && (sb.is_dir || sb.size < 0))
    rc = dd_err_set(DD_EINVAL, "'%s' is not an object of known size", path);
  size_t piece = os__part_bytes();
  uint8_t *buf = rc ? NULL : malloc(piece);
  if (!rc && !buf) rc = dd_err_set(DD_ENOMEM, "out of memory");
  for (uint64_t off = 0; !rc && off < (uint64_t)sb.size; off += piece) {
    size_t n = (uint64_t)sb.size - off < piece ? (size_t)((uint64_t)sb.size - off) : piece;
    rc = os_read_range(src, path, off, n, buf);
    if (!rc) rc = os_put_stream_write(ps, buf, n);
  }
  free(buf);
  return rc;
}

int os_put(const os_store *st, const char *path, const void *data, size_t len) {
  return os__count(st, st->vt->put(st->impl, path, data, len));
}

int os_delete(const os_store *st, const char *path) { return os__count(st, st->vt->del(st->impl, path)); }

int os_delete_many(const os_store *st, const char *const *paths, size_t n, size_t *out_done,
                   void (*progress)(void *ctx, size_t done, size_t total), void *ctx) {
  size_t done = 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i += OS_DELETE_BATCH) {
    size_t k = n - i < OS_DELETE_BATCH ? n - i : OS_DELETE_BATCH, got = 0;
    if (st->vt->del_many) {
      rc = os__count(st, st->vt->del_many(st->impl, paths + i, k, &got));
    } else {
      for (; got < k && !rc; got++) {
        rc = os__count(st, st->vt->del(st->impl, paths[i + got]));
        if (rc == DD_ENOTFOUND) rc = 0, dd_err_clear();
        if (rc) break;
      }
    }
    done += got;
    if (progress) progress(ctx, done, n);
  }
  if (out_done) *out_done = done;
  return rc;
}

int os_mkdirs(const os_store *st, const char *dir) { return os__count(st, st->vt->mkdirs(st->impl, dir)); }

int os_rmdir(const os_store *st, const char *dir) { return os__count(st, st->vt->rmdir(st->impl, dir)); }
