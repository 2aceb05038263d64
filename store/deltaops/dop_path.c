/* dop_path.c: confinement of paths read from a table's log (see "confinement" in dop.h).
 * A log path becomes an absolute local path only when it is a clean relative path under
 * the table root, or an absolute path under the table root or an allowed root; in a table
 * in object storage, an absolute URL under the table or an allowed root. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "store/deltaops/dop_int.h"
#include "store/sign/sign.h"

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

/* ---- tables in object storage ----
 * A table at an object-store URL: a relative path resolves under it as above; an absolute
 * URL is used when it names an object below the table root or below one of the roots
 * (sign_location_under: same store, bucket or container, account, by whole segments), or
 * when roots->allow accepts it; a local path in such a log is refused. */

/* True when url lies below the object-store root (a clean relative rest). */
static bool url_under(const char *url, const char *root) {
  if (os_is_local(root)) return false;
  sign_location r;
  char *rel = NULL;
  if (sign_parse_location(&r, root)) return dd_err_clear(), false;
  bool ok = sign_location_under(&rel, &r, url) == 0 && dop__clean_rel(rel);
  free(rel);
  sign_location_free(&r);
  dd_err_clear();
  return ok;
}

static int remote_log_path(char **out, ssize_t *len, const char *root, const char *path,
                           const dop_roots *roots) {
  if (os_is_local(path)) {
    if (local_abs(path))
      return dd_err_set(DD_EPERM, "file '%s' in the log of %s is a local path in a table in "
                        "object storage", path, root);
    if (!dop__clean_rel(path))
      return dd_err_set(DD_EPERM, "file '%s' in the log of %s escapes the table (a path in "
                        "the log must be a clean relative path)", path, root);
    if (asprintf(out, "%s/%s", root, path) < 0) return *out = NULL, DOP_OOM();
    *len = (ssize_t)strlen(root);
    return 0;
  }
  bool ok = url_under(path, root);
  if (ok) *len = (ssize_t)strlen(root);
  for (size_t i = 0; !ok && roots && i < roots->count; i++)
    if (roots->urls[i] && url_under(path, roots->urls[i])) ok = true, *len = -1;
  if (!ok && roots && roots->allow && roots->allow(roots->ctx, path)) ok = true, *len = -1;
  if (!ok)
    return dd_err_set(DD_EPERM, "file '%s' in the log of %s is outside the table and every "
                      "allowed storage root", path, root);
  return (*out = strdup(path)) ? 0 : DOP_OOM();
}

int dop__log_path(char **out, ssize_t *root_len, const char *root, const char *path,
                  const dop_roots *roots) {
  *out = NULL;
  ssize_t len_ = -1, *len = root_len ? root_len : &len_;
  if (!os_is_local(root)) return remote_log_path(out, len, root, path, roots);
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
  else if (!rc && dv->storage_type == 'p' && !local_abs(p) && os_is_local(root))
    rc = dd_err_set(DD_EPERM, "deletion vector path '%s' in the log of %s is not an absolute local path", p, root);
  if (!rc) rc = dop__log_path(out, root_len, root, p, roots);
  free(p);
  return rc;
}
