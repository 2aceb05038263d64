/* dop_path.c: confinement of paths read from a table's log (see "confinement" in dop.h).
 * A log path becomes an absolute local path only when it is a clean relative path under
 * the table root, or an absolute path under the table root or an allowed root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "store/deltaops/dop_int.h"

bool dop__clean_rel(const char *rel) { return rel && dl_rel_path_clean(rel, strlen(rel)); }

/* The local absolute path of a root or log URL ("/x", "file:/x", "file:///x"), or NULL
 * when it is not one (other schemes, "file://host/x", relative). Borrowed from s. */
static const char *local_abs(const char *s) {
  if (!strncmp(s, "file://", 7)) return s[7] == '/' ? s + 7 : NULL;
  if (!strncmp(s, "file:", 5)) s += 5;
  return s[0] == '/' ? s : NULL;
}

/* True when abs (absolute, clean below '/') lies under root (an absolute path or file
 * URL); *len gets the length of the root's prefix in abs (0 for "/"). */
static bool under(const char *abs, const char *root, ssize_t *len) {
  const char *r = local_abs(root);
  if (!r) return false;
  size_t n = strlen(r);
  while (n > 1 && r[n - 1] == '/') n--;
  if (n > 1 && !dl_rel_path_clean(r + 1, n - 1)) return false;
  if (n == 1) return *len = 0, abs[0] == '/' && abs[1];
  *len = (ssize_t)n;
  return !strncmp(abs, r, n) && abs[n] == '/' && abs[n + 1];
}

static bool roots_allow(const dop_roots *roots, const char *abs, ssize_t *len) {
  if (!roots) return false;
  for (size_t i = 0; i < roots->count; i++)
    if (roots->urls[i] && under(abs, roots->urls[i], len)) return true;
  *len = -1;
  return roots->allow && roots->allow(roots->ctx, abs);
}

bool dop__roots_allow(const dop_roots *roots, const char *abs) {
  ssize_t len;
  return roots_allow(roots, abs, &len);
}

int dop__log_path(char **out, ssize_t *root_len, const char *root, const char *path,
                  const dop_roots *roots) {
  *out = NULL;
  ssize_t len_ = -1, *len = root_len ? root_len : &len_;
  const char *abs = local_abs(path);
  if (!abs) {
    if (strchr(path, ':') && strcspn(path, ":") < strcspn(path, "/"))
      return dd_err_set(DD_EPERM, "file '%s' in the log of %s is not a local path", path, root);
    if (!dop__clean_rel(path))
      return dd_err_set(DD_EPERM, "file '%s' in the log of %s escapes the table (a path in "
                        "the log must be a clean relative path)", path, root);
    if (asprintf(out, "%s/%s", root, path) < 0) return *out = NULL, DOP_OOM();
    *len = (ssize_t)strlen(root);
    return 0;
  }
  if (!dop__clean_rel(abs + 1))
    return dd_err_set(DD_EPERM, "file '%s' in the log of %s is not a clean absolute path", path, root);
  if (!under(abs, root, len) && !roots_allow(roots, abs, len))
    return dd_err_set(DD_EPERM, "file '%s' in the log of %s is outside the table and every "
                      "allowed storage root", path, root);
  return (*out = strdup(abs)) ? 0 : DOP_OOM();
}

int dop__dv_log_path(char **out, ssize_t *root_len, const char *root, const dl_dv *dv,
                     const dop_roots *roots) {
  *out = NULL;
  char *p = NULL;
  int rc = dl_dv_path(&p, dv);
  if (!rc && dv->storage_type == 'u' && !dop__clean_rel(p))
    rc = dd_err_set(DD_EPERM, "deletion vector path '%s' in the log of %s escapes the table", p, root);
  else if (!rc && dv->storage_type == 'p' && !local_abs(p))
    rc = dd_err_set(DD_EPERM, "deletion vector path '%s' in the log of %s is not an absolute local path", p, root);
  if (!rc) rc = dop__log_path(out, root_len, root, p, roots);
  free(p);
  return rc;
}
