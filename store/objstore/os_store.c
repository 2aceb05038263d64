/* os_store.c: the backend-independent part of the object store: the wrapper that holds a
 * vtable and dispatches every call to it, batch deletes (the backend's, or one delete per
 * path), plus the listing helpers (free, add, sort). */
#include "store/objstore/os.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

struct os_store {
  const os_vtable *vt;
  void *impl;
  char *location;
};

int os_store_new(os_store **out, const os_vtable *vt, void *impl, const char *location) {
  *out = NULL;
  os_store *st = calloc(1, sizeof *st);
  if (!st || !(st->location = strdup(location ? location : ""))) {
    free(st);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  st->vt = vt;
  st->impl = impl;
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
  return st->vt->read_all(st->impl, path, out, out_len);
}

int os_read_range(const os_store *st, const char *path, uint64_t offset, size_t len,
                  uint8_t *out) {
  return st->vt->read_range(st->impl, path, offset, len, out);
}

int os_stat_path(const os_store *st, const char *path, os_stat *out) {
  return st->vt->stat(st->impl, path, out);
}

int os_list_dir(const os_store *st, const char *dir, os_list *out) {
  return st->vt->list(st->impl, dir, out);
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
  return st->vt->put_if_absent(st->impl, path, data, len);
}

int os_put(const os_store *st, const char *path, const void *data, size_t len) {
  return st->vt->put(st->impl, path, data, len);
}

int os_delete(const os_store *st, const char *path) { return st->vt->del(st->impl, path); }

int os_delete_many(const os_store *st, const char *const *paths, size_t n, size_t *out_done,
                   void (*progress)(void *ctx, size_t done, size_t total), void *ctx) {
  size_t done = 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i += OS_DELETE_BATCH) {
    size_t k = n - i < OS_DELETE_BATCH ? n - i : OS_DELETE_BATCH, got = 0;
    if (st->vt->del_many) {
      rc = st->vt->del_many(st->impl, paths + i, k, &got);
    } else {
      for (; got < k && !rc; got++) {
        rc = st->vt->del(st->impl, paths[i + got]);
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

int os_mkdirs(const os_store *st, const char *dir) { return st->vt->mkdirs(st->impl, dir); }

int os_rmdir(const os_store *st, const char *dir) { return st->vt->rmdir(st->impl, dir); }
