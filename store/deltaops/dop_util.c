/* dop_util.c: the small pieces every operation uses: result rows and cells, a string hash
 * set, table names to locations, opening the latest snapshot, committing with a Spark-style
 * commitInfo, retention intervals and file copies. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "store/deltaops/dop_int.h"
#include "store/sign/sign.h"

/* ======================= results ======================= */

int dop__result_new(dop_result **out, const dop_col *cols, size_t ncols) {
  *out = calloc(1, sizeof **out);
  if (!*out) return DOP_OOM();
  (*out)->cols = cols;
  (*out)->ncols = ncols;
  return 0;
}

int dop__result_row(dop_result *r, dop_cell **row) {
  if ((r->nrows + 1) * r->ncols > r->cap) {
    size_t cap = r->cap ? r->cap * 2 : 16 * (r->ncols ? r->ncols : 1);
    while (cap < (r->nrows + 1) * r->ncols) cap *= 2;
    dop_cell *n = realloc(r->cells, cap * sizeof *n);
    if (!n) return DOP_OOM();
    r->cells = n;
    r->cap = cap;
  }
  *row = r->cells + r->nrows * r->ncols;
  memset(*row, 0, r->ncols * sizeof **row);
  r->nrows++;
  return 0;
}

int dop__cell_str(dop_cell *c, const char *s) {
  if (!s) return c->kind = DOP_NULL, 0;
  if (!(c->str = strdup(s))) return DOP_OOM();
  c->kind = DOP_STR;
  return 0;
}

int dop__cell_json(dop_cell *c, json_t *v) {
  if (!v) return c->kind = DOP_NULL, 0;
  c->str = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
  json_decref(v);
  if (!c->str) return DOP_OOM();
  c->kind = DOP_JSON;
  return 0;
}

void dop__cell_i64(dop_cell *c, int64_t v) { c->kind = DOP_I64, c->i64 = v; }
void dop__cell_bool(dop_cell *c, bool v) { c->kind = DOP_BOOL, c->i64 = v; }
void dop__cell_ts(dop_cell *c, int64_t ms) { c->kind = DOP_TS_MS, c->i64 = ms; }

void dop_result_free(dop_result *r) {
  if (!r) return;
  for (size_t i = 0; i < r->nrows * r->ncols; i++) free(r->cells[i].str);
  free(r->cells);
  free(r);
}

const dop_cell *dop_result_cell(const dop_result *r, size_t row, size_t col) {
  return &r->cells[row * r->ncols + col];
}

/* ======================= string set ======================= */

static uint64_t set_hash(const char *k) {
  uint64_t h = 1469598103934665603ull;
  for (; *k; k++) h = (h ^ (unsigned char)*k) * 1099511628211ull;
  return h;
}

static int set_grow(dop__set *s) {
  size_t cap = s->cap ? s->cap * 2 : 64;
  char **n = calloc(cap, sizeof *n);
  if (!n) return DOP_OOM();
  for (size_t i = 0; i < s->cap; i++) {
    if (!s->slots[i]) continue;
    size_t j = set_hash(s->slots[i]) & (cap - 1);
    while (n[j]) j = (j + 1) & (cap - 1);
    n[j] = s->slots[i];
  }
  free(s->slots);
  s->slots = n;
  s->cap = cap;
  return 0;
}

int dop__set_add(dop__set *s, const char *k) {
  if ((s->n + 1) * 2 > s->cap) {
    int rc = set_grow(s);
    if (rc) return rc;
  }
  size_t j = set_hash(k) & (s->cap - 1);
  while (s->slots[j]) {
    if (!strcmp(s->slots[j], k)) return 0;
    j = (j + 1) & (s->cap - 1);
  }
  if (!(s->slots[j] = strdup(k))) return DOP_OOM();
  s->n++;
  return 0;
}

bool dop__set_has(const dop__set *s, const char *k) {
  if (!s->cap) return false;
  size_t j = set_hash(k) & (s->cap - 1);
  while (s->slots[j]) {
    if (!strcmp(s->slots[j], k)) return true;
    j = (j + 1) & (s->cap - 1);
  }
  return false;
}

void dop__set_free(dop__set *s) {
  for (size_t i = 0; i < s->cap; i++) free(s->slots[i]);
  free(s->slots);
  memset(s, 0, sizeof *s);
}

/* ======================= names and tables ======================= */

/* "fmt.`path`" -> path (malloc'ed) or NULL when s is not of that form. */
static char *backquoted(const char *s, const char *fmt) {
  size_t fl = strlen(fmt), n = strlen(s);
  if (strncasecmp(s, fmt, fl) || s[fl] != '.' || s[fl + 1] != '`' || n < fl + 4 || s[n - 1] != '`')
    return NULL;
  return strndup(s + fl + 2, n - fl - 3);
}

/* An object-store URL ("s3://b/t", "abfss://c@a.dfs.core.windows.net/t", "gs://b/t"):
 * parsed by store/sign, with no "." or ".." segment; a trailing '/' dropped. */
static int remote_url(char **out, const char *name, char *url) {
  *out = NULL;
  sign_location loc;
  int rc = sign_parse_location(&loc, url);
  if (!rc && loc.kind == SIGN_LOC_FILE) rc = dd_err_set(DD_EINVAL, "table: '%s' is not an absolute path", name);
  if (!rc && *loc.path && !dl_rel_path_clean(loc.path, strlen(loc.path)))
    rc = dd_err_set(DD_EINVAL, "table: '%s' has an empty, '.' or '..' segment", name);
  sign_location_free(&loc);
  if (rc) return free(url), rc == DD_EINVAL ? rc : dd_err_wrap(DD_EINVAL, "table '%s'", name);
  size_t n = strlen(url);
  while (n > 0 && url[n - 1] == '/') url[--n] = '\0';
  *out = url;
  return 0;
}

int dop_resolve_table(char **out, const char *name, bool allow_parquet) {
  *out = NULL;
  if (!name || !*name) return dd_err_set(DD_EINVAL, "table: a path or name is required");
  char *p = backquoted(name, "delta");
  if (!p && allow_parquet) p = backquoted(name, "parquet");
  if (!p && strstr(name, "://") && strncmp(name, "file:", 5)) p = strdup(name);
  if (p && !os_is_local(p)) return remote_url(out, name, p);
  if (!p && !strncmp(name, "file://", 7)) p = strdup(name + 7);
  if (!p && name[0] == '/') p = strdup(name);
  if (!p && strchr(name, '`')) return dd_err_set(DD_EINVAL, "table: cannot parse name '%s'", name);
  if (!p) {
    return dd_err_set(DD_ENOTFOUND, "table '%s' not found: named tables need the catalog's table "
                      "registry, which deltad does not have yet; name the table by path "
                      "(delta.`/path/to/table`)", name);
  }
  if (!*p || p[0] != '/') {
    free(p);
    return dd_err_set(DD_EINVAL, "table: '%s' is not an absolute path", name);
  }
  size_t n = strlen(p);
  while (n > 1 && p[n - 1] == '/') p[--n] = '\0';
  *out = p;
  return 0;
}

bool dop__has_log(const char *location) {
  os_store *st = NULL;
  os_list l = {0};
  bool found = false;
  if (os_open(&st, location) == 0 && os_list_dir(st, "_delta_log", &l) == 0) {
    for (size_t i = 0; i < l.count && !found; i++) {
      const char *nm = l.entries[i].name;
      size_t n = strlen(nm);
      found = (n > 5 && !strcmp(nm + n - 5, ".json") && isdigit((unsigned char)nm[0])) ||
              strstr(nm, ".checkpoint.") != NULL;
    }
  }
  os_list_free(&l);
  os_store_free(st);
  dd_err_clear();
  return found;
}

int dop__open_latest(dl_table **t, dl_snapshot **s, const char *location) {
  return dop__open_at(t, s, location, -1, NULL);
}

int dop__open_at(dl_table **t, dl_snapshot **s, const char *location, int64_t version,
                 const char *timestamp) {
  *t = NULL;
  *s = NULL;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = version;
  if (version < 0 && timestamp && dl_parse_timestamp(timestamp, &o.timestamp_ms))
    return dd_err_set(DD_EINVAL, "bad timestamp '%s' (want epoch ms or ISO-8601)", timestamp);
  struct stat sb;
  if (os_is_local(location) && stat(location, &sb) != 0)
    return dd_err_set(DD_ENOTFOUND, "table %s does not exist", location);
  if (!dop__has_log(location))
    return dd_err_set(DD_ENOTFOUND, "%s is not a Delta table (no _delta_log commits)", location);
  int rc = dl_table_open(t, location);
  if (!rc) rc = dl_snapshot_open(s, *t, &o);
  if (rc) {
    dl_table_free(*t);
    *t = NULL;
  }
  return rc;
}

int64_t dop__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void dop__metric(json_t *m, const char *key, int64_t v) {
  char b[32];
  snprintf(b, sizeof b, "%lld", (long long)v);
  json_object_set_new(m, key, json_string(b));
}

int dop__commit(dl_txn *txn, const char *op, json_t *params, json_t *metrics, int64_t *version) {
  char *p = params ? json_dumps(params, JSON_COMPACT) : NULL;
  char *m = metrics ? json_dumps(metrics, JSON_COMPACT) : NULL;
  json_decref(params);
  json_decref(metrics);
  dl_commit_opts o = DL_COMMIT_OPTS_INIT;
  o.operation = op;
  o.operation_parameters = p;
  o.operation_metrics = m;
  o.max_retries = 20;
  int rc = dl_txn_commit(txn, &o, version);
  free(p);
  free(m);
  return rc;
}

/* ======================= retention intervals ======================= */

int dop_parse_interval_ms(const char *text, int64_t *out_ms) {
  const char *p = text;
  while (isspace((unsigned char)*p)) p++;
  if (!strncasecmp(p, "interval", 8)) p += 8;
  char *end;
  errno = 0;
  double n = strtod(p, &end);
  if (end == p || errno) return dd_err_set(DD_EINVAL, "bad interval '%s'", text);
  while (isspace((unsigned char)*end)) end++;
  static const struct { const char *u; double ms; } units[] = {
      {"week", 604800000.0}, {"day", 86400000.0}, {"hour", 3600000.0}, {"minute", 60000.0},
      {"second", 1000.0}, {"millisecond", 1.0}, {"ms", 1.0}, {"h", 3600000.0}, {"d", 86400000.0},
  };
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
    size_t ul = strlen(units[i].u);
    if (strncasecmp(end, units[i].u, ul)) continue;
    const char *rest = end + ul;
    if (*rest == 's' || *rest == 'S') rest++;
    while (isspace((unsigned char)*rest)) rest++;
    if (*rest) continue;
    double ms = n * units[i].ms;
    if (!(ms >= 0 && ms < 9.2e18)) /* also NaN: the cast below would be undefined */
      return dd_err_set(DD_EINVAL, "interval '%s' is negative or too long", text);
    *out_ms = (int64_t)ms;
    return 0;
  }
  return dd_err_set(DD_EINVAL, "bad interval '%s' (want e.g. 'interval 7 days')", text);
}

/* ======================= paths and copies ======================= */

char *dop__abs_path(const char *location, const char *path) {
  if (!strncmp(path, "file://", 7)) path += 7;
  if (!strncmp(path, "file:", 5)) path += 5;
  if (path[0] == '/' || !os_is_local(path)) return strdup(path);
  size_t a = strlen(location), b = strlen(path);
  char *r = malloc(a + b + 2);
  if (r) snprintf(r, a + b + 2, "%s/%s", location, path);
  return r;
}

int dop__open_under(int *fd, const char *abs, ssize_t root_len) {
  *fd = -1;
  if (root_len < 0) {
    if ((*fd = open(abs, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) return 0;
    return dd_err_set(errno == ENOENT ? DD_EPRECOND : DD_EIO, "copy %s: %s", abs, strerror(errno));
  }
  char *root = root_len ? strndup(abs, (size_t)root_len) : strdup("/");
  if (!root) return DOP_OOM();
  const char *rel = abs + root_len;
  while (*rel == '/') rel++;
  const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
  int dfd = -1, rc = 0;
  if (os_local_open_dir(&dfd, root, rel, slash ? (size_t)(slash - rel) : 0, false) != 0 ||
      (*fd = openat(dfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
    rc = dd_err_set(errno == ENOENT ? DD_EPRECOND : errno == ELOOP ? DD_EPERM : DD_EIO, "copy %s: %s",
                    abs, errno == ELOOP ? "a symlink on the way (not followed)" : strerror(errno));
  if (dfd >= 0) close(dfd);
  free(root);
  return rc;
}

static int copy_err(const char *src, const char *root, const char *rel, int e) {
  return dd_err_set(e == ENOSPC || e == EDQUOT ? DD_ENOMEM : e == ELOOP ? DD_EPERM : DD_EIO,
                    "copy %s -> %s/%s: %s", src, root, rel,
                    e == ELOOP ? "a symlink on the way (not followed)" : strerror(e));
}

/* Writes all of buf, retrying short writes; -1 with errno on failure. */
static int write_all(int fd, const char *buf, size_t n) {
  while (n) {
    ssize_t w = write(fd, buf, n);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return -1;
    if (w == 0) return errno = ENOSPC, -1;
    buf += w, n -= (size_t)w;
  }
  return 0;
}

int dop__copy_file(int in, const char *src, const char *dst_root, const char *dst_rel,
                   bool *created) {
  if (created) *created = false;
  const char *slash = strrchr(dst_rel, '/'), *base = slash ? slash + 1 : dst_rel;
  char *tmp = NULL, buf[1 << 16];
  int dfd = -1, out = -1, rc = 0;
  if (!*base || !strcmp(base, ".") || !strcmp(base, ".."))
    return dd_err_set(DD_EPERM, "copy %s: bad target name '%s'", src, dst_rel);
  if (os_local_open_dir(&dfd, dst_root, dst_rel, slash ? (size_t)(slash - dst_rel) : 0, true) != 0)
    return copy_err(src, dst_root, dst_rel, errno == EINVAL ? ELOOP : errno);
  static atomic_ulong counter;
  if (asprintf(&tmp, ".%s.%ld.%lu.copy.tmp", base, (long)getpid(), atomic_fetch_add(&counter, 1)) < 0) {
    tmp = NULL;
    rc = DOP_OOM();
    goto cleanup;
  }
  if ((out = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644)) < 0) {
    rc = copy_err(src, dst_root, dst_rel, errno);
    goto cleanup;
  }
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      rc = dd_err_set(DD_EIO, "copy %s: read: %s", src, strerror(errno));
      goto cleanup;
    }
    if (n == 0) break;
    if (write_all(out, buf, (size_t)n) != 0) {
      rc = copy_err(src, dst_root, dst_rel, errno);
      goto cleanup;
    }
  }
  struct stat sb;
  bool existed = fstatat(dfd, base, &sb, AT_SYMLINK_NOFOLLOW) == 0;
  if (fsync(out) != 0 || close(out) != 0) {
    out = -1;
    rc = copy_err(src, dst_root, dst_rel, errno);
    goto cleanup;
  }
  out = -1;
  if (renameat(dfd, tmp, dfd, base) != 0) rc = copy_err(src, dst_root, dst_rel, errno);
  else if (created) *created = !existed;
cleanup:
  if (out >= 0) close(out);
  if (rc && tmp) unlinkat(dfd, tmp, 0);
  free(tmp);
  close(dfd);
  return rc;
}
