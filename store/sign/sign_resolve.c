/* sign_resolve.c: relative paths of table files: normalisation (no "..", no absolute
 * paths) and resolution to a real file strictly under the table root, so that a signed
 * URL can never reach a file outside its table, not even through a symlink. */
#include "store/sign/sign_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/err.h"

int sign__rel_normalize_into(sign__buf *b, const char *rel) {
  if (!rel || !*rel)
    return dd_err_set(DD_EPERM, "empty file path");
  if (rel[0] == '/')
    return dd_err_set(DD_EPERM, "absolute file path '%s' refused", rel);
  size_t start = b->len;
  const char *p = rel;
  while (*p) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if (n == 2 && p[0] == '.' && p[1] == '.')
      return dd_err_set(DD_EPERM, "'..' in file path '%s' refused", rel);
    if (n > 0 && !(n == 1 && p[0] == '.')) {
      if (b->len > start)
        sign__buf_put(b, "/", 1);
      sign__buf_put(b, p, n);
    }
    p += n;
    if (*p == '/')
      p++;
  }
  if (b->failed)
    return dd_err_set(DD_ENOMEM, "out of memory");
  if (b->len == start)
    return dd_err_set(DD_EPERM, "file path '%s' names no file", rel);
  return 0;
}

int sign__rel_normalize(char **out, const char *rel) {
  *out = NULL;
  sign__buf b = SIGN__BUF_INIT;
  int rc = sign__rel_normalize_into(&b, rel);
  if (rc) {
    sign__buf_free(&b);
    return rc;
  }
  return sign__buf_finish(&b, out);
}

/* realpath() with errors translated. */
static int sign__realpath(char **out, const char *path, const char *what) {
  *out = realpath(path, NULL);
  if (*out)
    return 0;
  if (errno == ENOENT || errno == ENOTDIR)
    return dd_err_set(DD_ENOTFOUND, "%s '%s' not found", what, path);
  if (errno == ENOMEM)
    return dd_err_set(DD_ENOMEM, "out of memory");
  if (errno == EACCES)
    return dd_err_set(DD_EPERM, "%s '%s': permission denied", what, path);
  return dd_err_set(DD_EIO, "%s '%s': %s", what, path, strerror(errno));
}

/* Is path equal to root or strictly below it (component-wise)? Both are realpaths. */
static int sign__is_under(const char *root, const char *path) {
  size_t n = strlen(root);
  if (n == 1 && root[0] == '/')
    return path[0] == '/' && path[1] != '\0';
  return strncmp(root, path, n) == 0 && path[n] == '/' && path[n + 1] != '\0';
}

int sign_resolve_under(char **out_abs, const char *table_root, const char *rel_path) {
  char *norm = NULL, *root = NULL, *joined = NULL, *real = NULL;
  sign__buf b = SIGN__BUF_INIT;
  *out_abs = NULL;
  if (!table_root || !*table_root)
    return dd_err_set(DD_EINVAL, "no table root");
  int rc = sign__rel_normalize(&norm, rel_path);
  if (rc < 0)
    goto cleanup;
  rc = sign__realpath(&root, table_root, "table root");
  if (rc < 0)
    goto cleanup;
  sign__buf_puts(&b, root);
  sign__buf_puts(&b, "/");
  sign__buf_puts(&b, norm);
  rc = sign__buf_finish(&b, &joined);
  if (rc < 0)
    goto cleanup;
  rc = sign__realpath(&real, joined, "file");
  if (rc < 0)
    goto cleanup;
  if (!sign__is_under(root, real)) {
    rc = dd_err_set(DD_EPERM, "file path '%s' leaves the table directory", rel_path);
    goto cleanup;
  }
  *out_abs = real;
  real = NULL;
cleanup:
  free(norm);
  free(root);
  free(joined);
  free(real);
  return rc;
}

/* ===================== opening without a race ===================== */

/* openat2(RESOLVE_BENEATH): the kernel refuses any step of the resolution that leaves
 * dirfd (a "..", an absolute symlink, a symlink climbing out), atomically with the open.
 * Returns the fd, or -1 with errno (ENOSYS on kernels older than 5.6). */
static int sign__openat2_beneath(int dirfd, const char *rel) {
#ifdef SYS_openat2
  struct open_how how;
  memset(&how, 0, sizeof how);
  how.flags = O_RDONLY | O_CLOEXEC | O_NOCTTY;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof how);
#else
  (void)dirfd;
  (void)rel;
  errno = ENOSYS;
  return -1;
#endif
}

/* Without openat2: check with realpath, then open the checked path without following a
 * final symlink (a directory swapped for a symlink in between is the remaining race). */
static int sign__open_checked(int *out_fd, const char *table_root, const char *rel) {
  char *abs = NULL;
  int rc = sign_resolve_under(&abs, table_root, rel);
  if (rc < 0)
    return rc;
  int fd = open(abs, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NOFOLLOW);
  if (fd < 0)
    rc = dd_err_set(errno == ENOENT ? DD_ENOTFOUND : DD_EIO, "opening '%s': %s", rel,
                    strerror(errno));
  free(abs);
  *out_fd = fd;
  return rc;
}

static int sign__open_errno(int err, const char *rel) {
  switch (err) {
  case EXDEV:
  case ELOOP:
    return dd_err_set(DD_EPERM, "file path '%s' leaves the table directory", rel);
  case ENOENT:
  case ENOTDIR:
    return dd_err_set(DD_ENOTFOUND, "file '%s' not found", rel);
  case EACCES:
    return dd_err_set(DD_EPERM, "file '%s': permission denied", rel);
  default:
    return dd_err_set(DD_EIO, "opening '%s': %s", rel, strerror(err));
  }
}

int sign_open_under(int *out_fd, const char *table_root, const char *rel_path) {
  char *norm = NULL;
  int root = -1, fd = -1;
  *out_fd = -1;
  if (!table_root || !*table_root)
    return dd_err_set(DD_EINVAL, "no table root");
  int rc = sign__rel_normalize(&norm, rel_path);
  if (rc < 0)
    return rc;
  root = open(table_root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) {
    rc = errno == ENOENT || errno == ENOTDIR
             ? dd_err_set(DD_ENOTFOUND, "table root '%s' not found", table_root)
             : dd_err_set(DD_EIO, "table root '%s': %s", table_root, strerror(errno));
    goto cleanup;
  }
  fd = sign__openat2_beneath(root, norm);
  if (fd < 0 && errno == ENOSYS)
    rc = sign__open_checked(&fd, table_root, norm);
  else if (fd < 0)
    rc = sign__open_errno(errno, rel_path);
  if (rc < 0)
    goto cleanup;
  struct stat st;
  if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
    rc = dd_err_set(DD_ENOTFOUND, "'%s' is not a regular file", rel_path);
    goto cleanup;
  }
  *out_fd = fd;
  fd = -1;
cleanup:
  if (fd >= 0)
    close(fd);
  if (root >= 0)
    close(root);
  free(norm);
  return rc;
}
