/* os_local.c: the local file-system backend of os_store.
 *
 * Atomic writes: data goes to a hidden temp file in the destination directory
 * (".<name>.<pid>.<counter>.tmp"), is fsync'ed, then either linkat(2)ed to the final name
 * (put-if-absent: link fails with EEXIST rather than replace) or renameat(2)d over it
 * (put). The temp file is always unlinked. Readers therefore see a file whole or not at
 * all.
 *
 * Confinement: writes, deletes, directory creation and listings never follow a symlink
 * below the root. They take a path relative to the root (an absolute one only when it
 * lies under the root), refuse empty, "." and ".." segments (DD_EPERM), and walk it from
 * a descriptor of the root one directory at a time with O_NOFOLLOW|O_DIRECTORY, acting
 * with *at() calls on the last directory; a symlink on the way is DD_EPERM. A listing
 * reports a symlink entry as is_link (never is_dir); deleting one removes the link, not
 * its target. The root itself is opened by name (symlinks in the root's own path are the
 * caller's choice). Reads (read_all, read_range, stat) open the path by name: absolute
 * deletion-vector paths are read through them. */
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

/* ---------- confined walking ---------- */

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

/* See os.h. Every segment is checked before any directory is created. */
int os_local_open_dir(int *out_fd, const char *root, const char *rel, size_t len, bool create) {
  *out_fd = -1;
  for (size_t i = 0; i < len;) { /* validate every segment before creating any */
    size_t n = 0;
    while (i + n < len && rel[i + n] != '/') n++;
    if (n == 0 || (n == 1 && rel[i] == '.') || (n == 2 && rel[i] == '.' && rel[i + 1] == '.') ||
        (i + n < len && i + n + 1 == len))
      return errno = EINVAL, -1;
    i += n + 1;
  }
  int fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT && create) {
    char *r = strdup(root);
    if (!r) return errno = ENOMEM, -1;
    int m = mkdirs_abs(r);
    free(r);
    if (m == 0) fd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  }
  if (fd < 0) return -1;
  for (size_t i = 0; i < len;) {
    size_t n = 0;
    while (i + n < len && rel[i + n] != '/') n++;
    char seg[256];
    if (n >= sizeof seg) {
      close(fd);
      return errno = ENAMETOOLONG, -1;
    }
    memcpy(seg, rel + i, n);
    seg[n] = 0;
    int next = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (next < 0 && errno == ENOENT && create && (mkdirat(fd, seg, 0777) == 0 || errno == EEXIST))
      next = openat(fd, seg, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int e = errno;
    struct stat sb;
    if (next < 0 && e == ENOTDIR && fstatat(fd, seg, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(sb.st_mode))
      e = ELOOP; /* O_DIRECTORY reports a symlink as "not a directory" */
    close(fd);
    if (next < 0) return errno = e, -1;
    fd = next;
    i += n + 1;
  }
  *out_fd = fd;
  return 0;
}

/* rel (relative to the root, or absolute under it) split for a confined call: *dir_len
 * bytes of directory and the base name; NULL (DD_EPERM set) when outside the root. */
static const char *confined_rel(const local_impl *li, const char *rel, size_t *dir_len,
                                const char **base) {
  if (strncmp(rel, "file://", 7) == 0) rel += 7;
  else if (strncmp(rel, "file:", 5) == 0) rel += 5;
  if (rel[0] == '/') {
    size_t n = strlen(li->root);
    if (n == 1) rel++;
    else if (!strncmp(rel, li->root, n) && rel[n] == '/') rel += n + 1;
    else return dd_err_set(DD_EPERM, "%s is outside %s", rel, li->root), NULL;
  }
  const char *slash = strrchr(rel, '/');
  *dir_len = slash ? (size_t)(slash - rel) : 0;
  *base = slash ? slash + 1 : rel;
  return rel;
}

static int walk_err(const local_impl *li, const char *what, const char *rel) {
  int e = errno;
  if (e == ELOOP || e == EINVAL || e == ENAMETOOLONG)
    return dd_err_set(DD_EPERM, "%s %s/%s: %s", what, li->root, rel,
                      e == ELOOP ? "a symlink on the way (not followed)"
                      : e == EINVAL ? "empty, '.' or '..' path segment" : strerror(e));
  errno = e;
  char *p = NULL;
  if (asprintf(&p, "%s/%s", li->root, rel) < 0) p = NULL;
  int rc = sys_err(what, p ? p : rel);
  free(p);
  return rc;
}

/* Opens the directory holding rel's last segment; *base points into rel. */
static int open_parent(const local_impl *li, const char *rel_in, bool create, int *fd,
                       const char **base, const char **rel_out) {
  size_t dl;
  const char *rel = confined_rel(li, rel_in, &dl, base);
  if (!rel) return DD_EPERM;
  *rel_out = rel;
  if (!**base || !strcmp(*base, ".") || !strcmp(*base, ".."))
    return dd_err_set(DD_EPERM, "%s: empty, '.' or '..' path segment", rel_in);
  return os_local_open_dir(fd, li->root, rel, dl, create) ? walk_err(li, "open", rel) : 0;
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

static int local_list(void *impl, const char *rel_in, os_list *out) {
  const local_impl *li = impl;
  out->entries = NULL;
  out->count = 0;
  int rc = 0, fd = -1;
  size_t cap = 0, dl;
  const char *base, *rel = confined_rel(li, rel_in, &dl, &base);
  if (!rel) return DD_EPERM;
  if (os_local_open_dir(&fd, li->root, rel, strlen(rel), false)) return walk_err(li, "list", rel);
  DIR *d = fdopendir(fd);
  if (!d) {
    rc = walk_err(li, "list", rel);
    close(fd);
    return rc;
  }
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    struct stat sb;
    if (fstatat(dirfd(d), e->d_name, &sb, AT_SYMLINK_NOFOLLOW) != 0) continue; /* raced with a delete */
    int64_t mtime_ms = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
    if ((rc = os_list_add(out, &cap, e->d_name, (int64_t)sb.st_size, mtime_ms,
                          S_ISDIR(sb.st_mode))))
      goto cleanup;
    out->entries[out->count - 1].is_link = S_ISLNK(sb.st_mode);
  }
  os_list_sort(out);
cleanup:
  closedir(d);
  if (rc) os_list_free(out);
  return rc;
}

/* ---------- writes ---------- */

/* Creates a fresh hidden temp file in dirfd beside `base`: its malloc'ed name and fd. */
static int open_temp(int dirfd, const char *shown, const char *base, char **out_tmp, int *out_fd) {
  char *tmp = NULL;
  unsigned long n = atomic_fetch_add(&g_tmp_counter, 1);
  if (asprintf(&tmp, ".%s.%ld.%lu.tmp", base, (long)getpid(), n) < 0)
    return dd_err_set(DD_ENOMEM, "out of memory");
  int fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
  if (fd < 0) {
    free(tmp);
    return sys_err("create temp file for", shown);
  }
  *out_tmp = tmp;
  *out_fd = fd;
  return 0;
}

static int write_fd(int fd, const char *shown, const void *data, size_t len) {
  for (size_t put = 0; put < len;) {
    ssize_t w = write(fd, (const char *)data + put, len - put);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return sys_err("write", shown);
    put += (size_t)w;
  }
  return 0;
}

/* Writes data to a fresh temp file in dirfd beside `base`; returns its malloc'ed name. */
static int write_temp(int dirfd, const char *shown, const char *base, const void *data,
                      size_t len, char **out_tmp) {
  int fd = -1;
  char *tmp = NULL;
  int rc = open_temp(dirfd, shown, base, &tmp, &fd);
  if (!rc) rc = write_fd(fd, shown, data, len);
  if (!rc && fsync(fd) != 0) rc = sys_err("fsync", shown);
  if (fd >= 0) close(fd);
  if (rc && tmp) {
    unlinkat(dirfd, tmp, 0);
    free(tmp);
    tmp = NULL;
  }
  *out_tmp = tmp;
  return rc;
}

/* Links the written temp file into place: DD_EEXISTS when base is there already. */
static int link_temp(const local_impl *li, int dirfd, const char *tmp, const char *base,
                     const char *rel) {
  if (linkat(dirfd, tmp, dirfd, base, 0) == 0) return 0;
  if (errno == EEXIST) return dd_err_set(DD_EEXISTS, "%s/%s already exists", li->root, rel);
  return walk_err(li, "link to", rel);
}

static int local_put_common(void *impl, const char *rel_in, const void *data, size_t len,
                            bool replace) {
  const local_impl *li = impl;
  const char *base, *rel;
  char *tmp = NULL;
  int dirfd = -1, rc = open_parent(li, rel_in, true, &dirfd, &base, &rel);
  if (rc) return rc;
  if ((rc = write_temp(dirfd, rel, base, data, len, &tmp))) goto cleanup;
  if (replace) {
    if (renameat(dirfd, tmp, dirfd, base) != 0) rc = walk_err(li, "rename to", rel);
  } else {
    rc = link_temp(li, dirfd, tmp, base, rel);
  }
cleanup:
  if (tmp) { unlinkat(dirfd, tmp, 0); free(tmp); }
  close(dirfd);
  return rc;
}

static int local_put_if_absent(void *impl, const char *rel, const void *data, size_t len) {
  return local_put_common(impl, rel, data, len, false);
}

static int local_put(void *impl, const char *rel, const void *data, size_t len) {
  return local_put_common(impl, rel, data, len, true);
}

/* A streamed put-if-absent: a temp file beside the object, linked into place at commit. */
typedef struct local_stream {
  const local_impl *li;
  int dirfd, fd;
  char *tmp, *rel; /* rel: the object's confined path (its last segment at base) */
  const char *base;
} local_stream;

static void local_stream_free(local_stream *ls) {
  if (ls->fd >= 0) close(ls->fd);
  if (ls->tmp) unlinkat(ls->dirfd, ls->tmp, 0);
  if (ls->dirfd >= 0) close(ls->dirfd);
  free(ls->tmp);
  free(ls->rel);
  free(ls);
}

static int local_stream_open(void *impl, const char *rel_in, void **out) {
  *out = NULL;
  local_stream *ls = calloc(1, sizeof *ls);
  if (!ls) return dd_err_set(DD_ENOMEM, "out of memory");
  ls->li = impl;
  ls->dirfd = ls->fd = -1;
  const char *base, *rel;
  int rc = open_parent(ls->li, rel_in, true, &ls->dirfd, &base, &rel);
  if (!rc && !(ls->rel = strdup(rel))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) {
    ls->base = ls->rel + (base - rel);
    rc = open_temp(ls->dirfd, ls->rel, ls->base, &ls->tmp, &ls->fd);
  }
  if (rc) {
    local_stream_free(ls);
    return rc;
  }
  *out = ls;
  return 0;
}

static int local_stream_write(void *ps, const void *data, size_t len) {
  local_stream *ls = ps;
  return write_fd(ls->fd, ls->rel, data, len);
}

static int local_stream_commit(void *ps) {
  local_stream *ls = ps;
  int rc = fsync(ls->fd) != 0 ? sys_err("fsync", ls->rel) : 0;
  if (!rc) rc = link_temp(ls->li, ls->dirfd, ls->tmp, ls->base, ls->rel);
  local_stream_free(ls); /* the temp name goes either way */
  return rc;
}

static void local_stream_abort(void *ps) { local_stream_free(ps); }

static int unlink_confined(const local_impl *li, const char *rel_in, int flags, const char *what) {
  const char *base, *rel;
  int dirfd = -1, rc = open_parent(li, rel_in, false, &dirfd, &base, &rel);
  if (rc) return rc;
  if (unlinkat(dirfd, base, flags) != 0) rc = walk_err(li, what, rel);
  close(dirfd);
  return rc;
}

static int local_del(void *impl, const char *rel) { return unlink_confined(impl, rel, 0, "delete"); }

static int local_rmdir(void *impl, const char *rel) {
  return unlink_confined(impl, rel, AT_REMOVEDIR, "rmdir");
}

static int local_mkdirs(void *impl, const char *rel_in) {
  const local_impl *li = impl;
  size_t dl;
  const char *base, *rel = confined_rel(li, rel_in, &dl, &base);
  if (!rel) return DD_EPERM;
  int fd = -1;
  if (os_local_open_dir(&fd, li->root, rel, strlen(rel), true)) return walk_err(li, "mkdir", rel);
  close(fd);
  return 0;
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
    .put_stream_open = local_stream_open,
    .put_stream_write = local_stream_write,
    .put_stream_commit = local_stream_commit,
    .put_stream_abort = local_stream_abort,
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
