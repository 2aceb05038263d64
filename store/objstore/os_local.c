/* os_local.c: the local file-system backend of os_store.
 *
 * Atomic writes: data goes to a hidden temp file in the destination directory
 * (".<name>.<pid>.<counter>.tmp"), is fsync'ed, then either link(2)ed to the final name
 * (put-if-absent: link fails with EEXIST rather than replace) or rename(2)d over it (put).
 * The temp file is always unlinked. Readers therefore see a file whole or not at all. */
#include "store/objstore/os.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"

typedef struct local_impl {
  char *root;
} local_impl;

static atomic_ulong g_tmp_counter;

/* ---------- paths ---------- */

/* Joins root and rel into a malloc'ed absolute path; absolute rel paths pass through. */
static char *local_path(const local_impl *li, const char *rel) {
  if (strncmp(rel, "file://", 7) == 0) rel += 7;
  else if (strncmp(rel, "file:", 5) == 0) rel += 5;
  char *p = NULL;
  if (rel[0] == '/') p = strdup(rel);
  else if (asprintf(&p, "%s/%s", li->root, rel) < 0) p = NULL;
  return p;
}

static int errno_code(int e) {
  switch (e) {
    case ENOENT: case ENOTDIR: return DD_ENOTFOUND;
    case EEXIST: return DD_EEXISTS;
    case ENOTEMPTY: return DD_EPRECOND;
    case EACCES: case EPERM: return DD_EPERM;
    case ENOMEM: return DD_ENOMEM;
    default: return DD_EIO;
  }
}

static int sys_err(const char *what, const char *path) {
  int e = errno;
  return dd_err_set(errno_code(e), "%s %s: %s", what, path, strerror(e));
}

/* ---------- reads ---------- */

static int local_read_all(void *impl, const char *rel, uint8_t **out, size_t *out_len) {
  *out = NULL;
  *out_len = 0;
  int rc = 0, fd = -1;
  uint8_t *buf = NULL;
  char *path = local_path(impl, rel);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) { rc = sys_err("open", path); goto cleanup; }
  if (S_ISDIR(sb.st_mode)) { rc = dd_err_set(DD_EINVAL, "%s is a directory", path); goto cleanup; }
  size_t cap = (size_t)sb.st_size, len = 0;
  buf = malloc(cap + 1);
  if (!buf) { rc = dd_err_set(DD_ENOMEM, "out of memory reading %s", path); goto cleanup; }
  while (len < cap) {
    ssize_t n = read(fd, buf + len, cap - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) { rc = sys_err("read", path); goto cleanup; }
    if (n == 0) break;
    len += (size_t)n;
  }
  buf[len] = 0;
  *out = buf;
  *out_len = len;
  buf = NULL;
cleanup:
  if (fd >= 0) close(fd);
  free(buf);
  free(path);
  return rc;
}

static int local_read_range(void *impl, const char *rel, uint64_t offset, size_t len,
                            uint8_t *out) {
  int rc = 0, fd = -1;
  char *path = local_path(impl, rel);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) { rc = sys_err("open", path); goto cleanup; }
  size_t got = 0;
  while (got < len) {
    ssize_t n = pread(fd, out + got, len - got, (off_t)(offset + got));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) { rc = sys_err("read", path); goto cleanup; }
    if (n == 0) {
      rc = dd_err_set(DD_ECORRUPT, "%s: short read (%zu of %zu bytes at offset %llu)", path,
                      got, len, (unsigned long long)offset);
      goto cleanup;
    }
    got += (size_t)n;
  }
cleanup:
  if (fd >= 0) close(fd);
  free(path);
  return rc;
}

static int local_stat(void *impl, const char *rel, os_stat *out) {
  char *path = local_path(impl, rel);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  struct stat sb;
  int rc = 0;
  if (stat(path, &sb) != 0) rc = sys_err("stat", path);
  else {
    out->size = (int64_t)sb.st_size;
    out->mtime_ms = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
    out->is_dir = S_ISDIR(sb.st_mode);
  }
  free(path);
  return rc;
}

static int local_list(void *impl, const char *rel, os_list *out) {
  out->entries = NULL;
  out->count = 0;
  int rc = 0;
  size_t cap = 0;
  DIR *d = NULL;
  char *path = local_path(impl, rel);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  d = opendir(path);
  if (!d) { rc = sys_err("list", path); goto cleanup; }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat sb;
    if (fstatat(dirfd(d), e->d_name, &sb, 0) != 0) continue; /* raced with a delete */
    int64_t mtime_ms = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
    if ((rc = os_list_add(out, &cap, e->d_name, (int64_t)sb.st_size, mtime_ms,
                          S_ISDIR(sb.st_mode))))
      goto cleanup;
  }
  os_list_sort(out);
cleanup:
  if (d) closedir(d);
  if (rc) os_list_free(out);
  free(path);
  return rc;
}

/* ---------- writes ---------- */

static int mkdirs_abs(char *path) {
  size_t n = strlen(path);
  for (size_t i = 1; i <= n; i++) {
    if (path[i] != '/' && path[i] != 0) continue;
    char c = path[i];
    path[i] = 0;
    int r = mkdir(path, 0777);
    int e = errno;
    path[i] = c;
    if (r != 0 && e != EEXIST) {
      errno = e;
      return -1;
    }
  }
  return 0;
}

/* Writes data to a fresh temp file beside `path`; returns its malloc'ed name or NULL. */
static int write_temp(const char *path, const void *data, size_t len, char **out_tmp) {
  *out_tmp = NULL;
  int rc = 0, fd = -1;
  char *tmp = NULL, *dir = strdup(path);
  if (!dir) return dd_err_set(DD_ENOMEM, "out of memory");
  char *slash = strrchr(dir, '/');
  const char *base = slash ? slash + 1 : path;
  if (slash) *slash = 0;
  if (slash && mkdirs_abs(dir) != 0) { rc = sys_err("mkdir", dir); goto cleanup; }
  unsigned long n = atomic_fetch_add(&g_tmp_counter, 1);
  if (asprintf(&tmp, "%s/.%s.%ld.%lu.tmp", slash ? dir : ".", base, (long)getpid(), n) < 0) {
    tmp = NULL;
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
  if (fd < 0) { rc = sys_err("create", tmp); goto cleanup; }
  size_t put = 0;
  while (put < len) {
    ssize_t w = write(fd, (const char *)data + put, len - put);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) { rc = sys_err("write", tmp); goto cleanup; }
    put += (size_t)w;
  }
  if (fsync(fd) != 0) { rc = sys_err("fsync", tmp); goto cleanup; }
  *out_tmp = tmp;
  tmp = NULL;
cleanup:
  if (fd >= 0) close(fd);
  if (tmp) { unlink(tmp); free(tmp); }
  free(dir);
  return rc;
}

static int local_put_common(void *impl, const char *rel, const void *data, size_t len,
                            bool replace) {
  char *tmp = NULL, *path = local_path(impl, rel);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = write_temp(path, data, len, &tmp);
  if (rc) goto cleanup;
  if (replace) {
    if (rename(tmp, path) != 0) rc = sys_err("rename to", path);
  } else if (link(tmp, path) != 0) {
    if (errno == EEXIST) rc = dd_err_set(DD_EEXISTS, "%s already exists", path);
    else rc = sys_err("link to", path);
  }
cleanup:
  if (tmp) { unlink(tmp); free(tmp); }
  free(path);
  return rc;
}

static int local_put_if_absent(void *impl, const char *rel, const void *data, size_t len) {
  return local_put_common(impl, rel, data, len, false);
}

static int local_put(void *impl, const char *rel, const void *data, size_t len) {
  return local_put_common(impl, rel, data, len, true);
}

static int local_del(void *impl, const char *rel) {
  char *path = local_path(impl, rel);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = unlink(path) != 0 ? sys_err("delete", path) : 0;
  free(path);
  return rc;
}

static int local_mkdirs(void *impl, const char *rel) {
  char *path = local_path(impl, rel);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = mkdirs_abs(path) != 0 ? sys_err("mkdir", path) : 0;
  free(path);
  return rc;
}

static int local_rmdir(void *impl, const char *rel) {
  char *path = local_path(impl, rel);
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = rmdir(path) != 0 ? sys_err("rmdir", path) : 0;
  free(path);
  return rc;
}

static void local_free(void *impl) {
  local_impl *li = impl;
  if (!li) return;
  free(li->root);
  free(li);
}

static const os_vtable LOCAL_VT = {
    .read_all = local_read_all,
    .read_range = local_read_range,
    .stat = local_stat,
    .list = local_list,
    .put_if_absent = local_put_if_absent,
    .put = local_put,
    .del = local_del,
    .mkdirs = local_mkdirs,
    .rmdir = local_rmdir,
    .free = local_free,
};

int os_local_open(os_store **out, const char *root) {
  *out = NULL;
  if (strncmp(root, "file://", 7) == 0) root += 7;
  else if (strncmp(root, "file:", 5) == 0) root += 5;
  local_impl *li = calloc(1, sizeof *li);
  if (!li || !(li->root = strdup(root))) {
    free(li);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  size_t n = strlen(li->root);
  while (n > 1 && li->root[n - 1] == '/') li->root[--n] = 0;
  int rc = os_store_new(out, &LOCAL_VT, li, li->root);
  if (rc) local_free(li);
  return rc;
}
