/* cat_confine.c: confinement of table locations to registered storage locations, the way
 * Unity Catalog confines paths to external locations. A table (a local path, a file:// URL
 * or an object-store URL) may be used by the server only when some storage location's URL
 * covers it, and a local table never overlaps the data directory (neither inside it nor
 * containing it). Local paths are compared by real path: the realpath of the longest
 * existing prefix, with the rest appended (no "." or ".." allowed in that rest), so
 * symlinks and ".." cannot lead out of a location. */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

/* ---- paths ------------------------------------------------------------------------------ */

/* The local path a table location names ("/p" or "file:///p"); NULL for other URLs. */
static const char *cat__local_path(const char *loc) {
  if (loc[0] == '/') return loc;
  if (strncasecmp(loc, "file://", 7) == 0) {
    const char *p = loc + 7;
    if (strncasecmp(p, "localhost/", 10) == 0) p += 9;
    return p;
  }
  return NULL;
}

int cat_real_prefix(char **out, const char *path) {
  *out = NULL;
  if (!path || path[0] != '/')
    return dd_err_set(DD_EINVAL, "'%s' is not an absolute path", path ? path : "");
  char *head = strdup(path), *tail = strdup("");
  int rc = head && tail ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  while (!rc) {
    char *real = realpath(head, NULL);
    if (real) {
      bool root = !strcmp(real, "/");
      size_t cap = strlen(real) + strlen(tail) + 2;
      if ((*out = malloc(cap)))
        snprintf(*out, cap, "%s%s%s", root ? "" : real, *tail || root ? "/" : "", tail);
      else
        rc = dd_err_set(DD_ENOMEM, "out of memory");
      free(real);
      break;
    }
    if (errno != ENOENT && errno != ENOTDIR) {
      rc = dd_err_set(errno == ENOMEM ? DD_ENOMEM : DD_EIO, "%s: %s", head, strerror(errno));
      break;
    }
    /* drop the last component of head (and trailing slashes) onto tail */
    size_t n = strlen(head);
    while (n > 1 && head[n - 1] == '/') head[--n] = 0;
    char *slash = strrchr(head, '/');
    const char *last = slash + 1;
    if (!strcmp(last, ".") || !strcmp(last, "..")) {
      rc = dd_err_set(DD_EINVAL, "'%s': '.' or '..' after a missing directory", path);
      break;
    }
    char *t = malloc(strlen(last) + strlen(tail) + 2);
    if (!t) {
      rc = dd_err_set(DD_ENOMEM, "out of memory");
      break;
    }
    sprintf(t, "%s%s%s", last, *tail ? "/" : "", tail);
    free(tail);
    tail = t;
    if (slash == head) strcpy(head, "/");
    else *slash = 0;
  }
  free(head);
  free(tail);
  return rc;
}

/* path is root or lies under it (both real paths, no trailing '/' except for "/"). */
static bool cat__path_under(const char *path, const char *root) {
  size_t n = strlen(root);
  if (n == 1 && root[0] == '/') return path[0] == '/';
  return strncmp(path, root, n) == 0 && (path[n] == 0 || path[n] == '/');
}

/* How much of url base covers (object-store URLs: the same text up to a '/' of url or its
 * end; a trailing '/' on base is ignored); 0 when base does not cover url. */
static size_t cat__url_prefix_len(const char *url, const char *base) {
  size_t n = strlen(base);
  while (n > 0 && base[n - 1] == '/') n--;
  if (n == 0 || strncmp(base, url, n) != 0) return 0;
  return url[n] == '/' || url[n] == 0 ? n : 0;
}

static bool cat__url_under(const char *url, const char *base) {
  return cat__url_prefix_len(url, base) > 0;
}

/* An object-store URL with "." or ".." segments (or their %-encodings) is refused. */
static int cat__url_segments_check(const char *url) {
  const char *p = strstr(url, "://");
  for (p = p ? p + 3 : url; p && *p;) {
    const char *end = strchr(p, '/');
    size_t n = end ? (size_t)(end - p) : strlen(p);
    if ((n == 1 && p[0] == '.') || (n == 2 && !strncmp(p, "..", 2)) ||
        memmem(p, n, "%2e", 3) || memmem(p, n, "%2E", 3))
      return dd_err_set(DD_EINVAL, "'%s': '.' and '..' segments are not allowed", url);
    p = end ? end + 1 : NULL;
  }
  return 0;
}

/* ---- the check -------------------------------------------------------------------------- */

typedef struct {
  const char *url;   /* as given */
  char *real;        /* local: real path of url; NULL for object-store URLs */
  char *found;       /* name of the covering location */
} cat__confine_walk;

static int cat__confine_one(void *arg, const cat_location *loc) {
  cat__confine_walk *w = arg;
  const char *lp = cat__local_path(loc->url);
  bool local_loc = lp || loc->type == DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL;
  if (w->real) {
    if (!local_loc) return 0;
    char *root = NULL;
    int rc = cat_real_prefix(&root, lp ? lp : loc->url);
    if (rc) {
      dd_err_clear();
      return 0; /* a location that cannot be resolved covers nothing */
    }
    bool under = cat__path_under(w->real, root);
    free(root);
    if (!under) return 0;
  } else if (local_loc || !cat__url_under(w->url, loc->url)) {
    return 0;
  }
  w->found = strdup(loc->name);
  return w->found ? 1 : dd_err_set(DD_ENOMEM, "out of memory");
}

int cat_data_dir_overlap(cat_store *s, const char *real) {
  if (s->data_real && (cat__path_under(real, s->data_real) || cat__path_under(s->data_real, real)))
    return dd_err_set(DD_EPERM, "'%s' overlaps deltad's data directory; tables must lie "
                      "outside it", real);
  return 0;
}

int cat_view_location_confine(cat_view *v, char **out_location, const char *what,
                              const char *url) {
  cat__confine_walk w = {.url = url};
  if (out_location) *out_location = NULL;
  if (!url || !*url) return dd_err_set(DD_EINVAL, "%s: a location is required", what);
  const char *lp = cat__local_path(url);
  int rc = 0;
  if (lp) {
    rc = cat_real_prefix(&w.real, lp);
    if (!rc) rc = cat_data_dir_overlap(v->s, w.real);
    if (rc) goto cleanup;
  } else if (!strstr(url, "://")) {
    rc = dd_err_set(DD_EINVAL, "%s: '%s' is neither an absolute path nor a URL", what, url);
    goto cleanup;
  } else if ((rc = cat__url_segments_check(url))) {
    goto cleanup;
  }
  if ((rc = cat_view_location_walk(v, cat__confine_one, &w)) < 0) goto cleanup;
  rc = 0;
  if (!w.found) {
    rc = lp ? dd_err_set(DD_EPERM, "%s '%s' is not under any registered storage location: an "
                         "admin must first create a LOCAL storage location whose url covers "
                         "file://%s", what, url, w.real)
            : dd_err_set(DD_EPERM, "%s '%s' is not under any registered storage location: an "
                         "admin must first create a storage location whose url is a prefix "
                         "of it", what, url);
    goto cleanup;
  }
  if (out_location) *out_location = w.found, w.found = NULL;
cleanup:
  free(w.real);
  free(w.found);
  return rc;
}

int cat_location_confine(cat_store *s, char **out_location, const char *what, const char *url) {
  cat_view v;
  if (out_location) *out_location = NULL;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_location_confine(&v, out_location, what, url);
  return cat__view_end(&v, rc);
}

/* ---- the covering location ------------------------------------------------------------- */

typedef struct {
  const char *url;
  char name[CAT__NAME_MAX + 1]; /* of the longest covering location so far */
  size_t len;                   /* how much of url it covers; 0: none yet */
} cat__cover_walk;

static int cat__cover_one(void *arg, const cat_location *loc) {
  cat__cover_walk *w = arg;
  size_t n = cat__url_prefix_len(w->url, loc->url);
  if (n > w->len && strlen(loc->name) < sizeof w->name) {
    w->len = n;
    strcpy(w->name, loc->name);
  }
  return 0;
}

int cat_view_location_covering(cat_view *v, cat_location **out, const char *url) {
  cat__cover_walk w = {.url = url};
  *out = NULL;
  int rc = cat_view_location_walk(v, cat__cover_one, &w);
  if (!rc && !w.len) rc = dd_err_set(DD_ENOTFOUND, "no storage location covers '%s'", url);
  return rc ? rc : cat_view_location_get(v, out, w.name);
}

typedef struct {
  char **roots;
  size_t n;
} cat__roots;

static int cat__roots_fn(void *arg, const cat_location *loc) {
  cat__roots *r = arg;
  const char *lp = cat__local_path(loc->url);
  if (!lp && loc->type != DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL) return 0;
  char *root = NULL, **grown = realloc(r->roots, (r->n + 2) * sizeof *r->roots);
  if (!grown) return dd_err_set(DD_ENOMEM, "out of memory");
  r->roots = grown;
  if (cat_real_prefix(&root, lp ? lp : loc->url)) {
    dd_err_clear(); /* a location that cannot be resolved covers nothing */
    return 0;
  }
  r->roots[r->n++] = root;
  r->roots[r->n] = NULL;
  return 0;
}

int cat_location_local_roots(cat_store *s, char ***out, size_t *n_out) {
  cat__roots r = {NULL, 0};
  int rc = cat_location_walk(s, cat__roots_fn, &r);
  *out = NULL;
  *n_out = 0;
  if (rc < 0) {
    cat_roots_free(r.roots, r.n);
    return rc;
  }
  *out = r.roots;
  *n_out = r.n;
  return 0;
}

void cat_roots_free(char **roots, size_t n) {
  for (size_t i = 0; roots && i < n; i++) free(roots[i]);
  free(roots);
}

int cat_roots_cover(cat_store *s, char *const *roots, size_t n, const char *path) {
  const char *lp = cat__local_path(path);
  char *real = NULL;
  if (!lp || cat_real_prefix(&real, lp)) {
    dd_err_clear();
    return 0;
  }
  int ok = 0;
  for (size_t i = 0; !ok && i < n; i++) ok = cat__path_under(real, roots[i]);
  if (ok && cat_data_dir_overlap(s, real)) ok = 0, dd_err_clear();
  free(real);
  return ok;
}
