/* cat_backup.c: an online, consistent copy of the catalog store (cat_store_backup):
 * mdb_env_copy2 with MDB_CP_COMPACT writes the pages one read transaction sees (writers go
 * on meanwhile, readers never block them) into DIR/catalog.mdb/data.mdb, then the secrets
 * key is copied to DIR/secret.key (mode 0600). The result is a data directory's catalog
 * part: deltad --restore-from DIR copies it into a new data directory. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

/* dir exists (created 0700 when absent) and holds nothing. */
static int cat__backup_dir(const char *dir) {
  if (mkdir(dir, 0700) != 0 && errno != EEXIST)
    return dd_err_set(DD_EIO, "backup: create %s: %s", dir, strerror(errno));
  DIR *d = opendir(dir);
  if (!d) return dd_err_set(DD_EIO, "backup: open %s: %s", dir, strerror(errno));
  struct dirent *e;
  int found = 0;
  while (!found && (e = readdir(d)))
    found = strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return found ? dd_err_set(DD_EEXISTS, "backup: %s is not empty (back up into a new directory)", dir) : 0;
}

static int cat__backup_key(const cat_store *s, const char *path) {
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  if (fd < 0) return dd_err_set(DD_EIO, "backup: create %s: %s", path, strerror(errno));
  ssize_t n = write(fd, s->key, sizeof s->key);
  int rc = n == (ssize_t)sizeof s->key && fsync(fd) == 0 ? 0 : dd_err_set(DD_EIO, "backup: write %s: %s", path, strerror(errno));
  close(fd);
  return rc;
}

static int cat__backup_list(char ***files, size_t *n, uint64_t *bytes, const char *dir) {
  static const char *const names[] = {"catalog.mdb/data.mdb", "secret.key"};
  *files = calloc(2, sizeof **files);
  if (!*files) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < 2; i++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    if (stat(path, &st) == 0) *bytes += (uint64_t)st.st_size;
    if (!((*files)[i] = strdup(names[i]))) return dd_err_set(DD_ENOMEM, "out of memory");
    *n = i + 1;
  }
  return 0;
}

int cat_store_backup(cat_store *s, const char *dir, char ***files, size_t *n_files, uint64_t *bytes) {
  *files = NULL;
  *n_files = 0;
  *bytes = 0;
  char path[4096];
  if ((size_t)snprintf(path, sizeof path, "%s/catalog.mdb", dir) >= sizeof path - 16)
    return dd_err_set(DD_EINVAL, "backup: directory path too long");
  if (s->be != &cat__lmdb_backend)
    return s->be->backup(s, dir); /* says what to use instead, before touching dir */
  int rc = cat__backup_dir(dir);
  if (rc) return rc;
  if (mkdir(path, 0700) != 0) return dd_err_set(DD_EIO, "backup: create %s: %s", path, strerror(errno));
  if ((rc = s->be->backup(s, path)) != 0) return rc;
  snprintf(path, sizeof path, "%s/catalog.mdb/data.mdb", dir);
  if (chmod(path, 0600) != 0) return dd_err_set(DD_EIO, "backup: chmod %s: %s", path, strerror(errno));
  snprintf(path, sizeof path, "%s/secret.key", dir);
  if ((rc = cat__backup_key(s, path)) != 0) return rc;
  return cat__backup_list(files, n_files, bytes, dir);
}
