/* dl_history.c: walking commits: table history (the commitInfo of each version, newest
 * first) and the change data feed between two versions (cdc files where a commit has them,
 * else its dataChange add/remove actions), each tagged with version and commit timestamp. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

/* ======================= history ======================= */

typedef struct ci_ctx {
  char *json;
  char *operation;
  int64_t ict;
} ci_ctx;

static int ci_cb(void *vctx, dl__action *a) {
  ci_ctx *c = vctx;
  if (a->kind != DL__A_COMMITINFO || c->json) return 0;
  c->json = json_dumps(a->ci_json, JSON_COMPACT);
  const char *op = dl__json_str(a->ci_json, "operation");
  c->operation = op ? strdup(op) : NULL;
  c->ict = a->ict;
  return 0;
}

int dl_history(dl_table *t, size_t limit, dl_commit_cb cb, void *ctx) {
  dl__listing l;
  int64_t *ts = NULL;
  int rc = dl__list_log(&l, t->store);
  if (rc) return rc;
  rc = dl__commit_timestamps(t, &l, NULL, &ts);
  size_t done = 0;
  for (size_t i = l.n_commits; i-- > 0 && !rc && (!limit || done < limit); done++) {
    int64_t v = l.commits[i].version;
    char *path = dl__version_path(v, ".json");
    uint8_t *data = NULL;
    size_t len = 0;
    ci_ctx c = {.ict = -1};
    rc = path ? os_read_all(t->store, path, &data, &len) : dd_err_set(DD_ENOMEM, "out of memory");
    if (!rc) rc = dl__parse_commit((const char *)data, len, path, ci_cb, &c);
    if (!rc) {
      dl_commit_entry e = {v, c.ict >= 0 ? c.ict : ts[i], c.json, c.operation};
      rc = cb(ctx, &e);
    }
    free(c.json);
    free(c.operation);
    free(data);
    free(path);
  }
  free(ts);
  dl__listing_free(&l);
  return rc;
}

/* ======================= change data feed ======================= */

typedef struct scan_ctx {
  bool has_cdc;
  int cdf; /* -1 unchanged, 0 off, 1 on (from a metaData action) */
  int64_t ict;
} scan_ctx;

static int scan_cb(void *vctx, dl__action *a) {
  scan_ctx *c = vctx;
  if (a->kind == DL__A_CDC) c->has_cdc = true;
  if (a->kind == DL__A_COMMITINFO && c->ict < 0) c->ict = a->ict;
  if (a->kind == DL__A_METADATA) {
    const char *on = dl__json_str(json_object_get(a->md_json, "configuration"),
                                  "delta.enableChangeDataFeed");
    c->cdf = on && !strcmp(on, "true");
  }
  return 0;
}

typedef struct emit_ctx {
  bool cdc_only;
  int64_t version, ts;
  dl_change_cb cb;
  void *ctx;
  char *buf;
  size_t cap;
} emit_ctx;

static int emit_cb(void *vctx, dl__action *a) {
  emit_ctx *c = vctx;
  dl_change ch = {.version = c->version, .timestamp = c->ts, .file = &a->file};
  if (c->cdc_only) {
    if (a->kind != DL__A_CDC) return 0;
    ch.kind = DL_CHANGE_CDC;
  } else if (a->kind == DL__A_ADD && a->file.data_change) {
    ch.kind = DL_CHANGE_ADD;
  } else if (a->kind == DL__A_REMOVE && a->file.data_change) {
    ch.kind = DL_CHANGE_REMOVE;
  } else {
    return 0;
  }
  size_t need = strlen(a->file.raw_path) + 1;
  if (need > c->cap) {
    char *n = realloc(c->buf, need);
    if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
    c->buf = n;
    c->cap = need;
  }
  dl__url_decode(a->file.raw_path, c->buf);
  a->file.path = c->buf;
  return c->cb(c->ctx, &ch);
}

int dl_changes(dl_table *t, int64_t from, int64_t to, dl_change_cb cb, void *ctx) {
  dl_snapshot *s = NULL;
  dl__listing l = {0};
  int64_t *ts = NULL;
  emit_ctx ec = {.cb = cb, .ctx = ctx};
  if (from < 0) return dd_err_set(DD_EINVAL, "changes: starting version must be >= 0");
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  o.version = from;
  int rc = dl_snapshot_open(&s, t, &o);
  if (!rc) rc = dl__list_log(&l, t->store);
  if (rc) goto cleanup;
  int64_t latest = l.n_commits ? l.commits[l.n_commits - 1].version : -1;
  if (to < 0) to = latest;
  if (to < from || to > latest) {
    rc = dd_err_set(DD_ERANGE, "changes: bad version range [%lld, %lld] (latest is %lld)",
                    (long long)from, (long long)to, (long long)latest);
    goto cleanup;
  }
  if ((rc = dl__commit_timestamps(t, &l, &s->st, &ts))) goto cleanup;
  const char *on = dl_snapshot_property(s, "delta.enableChangeDataFeed");
  bool enabled = on && !strcmp(on, "true");
  for (int64_t v = from; v <= to && !rc; v++) {
    ssize_t i = dl__listing_find(&l, v);
    if (i < 0) {
      rc = dd_err_set(DD_ECORRUPT, "changes: commit version %lld is missing", (long long)v);
      break;
    }
    char *path = dl__version_path(v, ".json");
    uint8_t *data = NULL;
    size_t len = 0;
    scan_ctx sc = {.cdf = -1, .ict = -1};
    rc = path ? os_read_all(t->store, path, &data, &len) : dd_err_set(DD_ENOMEM, "out of memory");
    if (!rc) rc = dl__parse_commit((const char *)data, len, path, scan_cb, &sc);
    if (!rc && sc.cdf >= 0 && v > from) enabled = sc.cdf;
    if (!rc && !enabled)
      rc = dd_err_set(DD_EPRECOND, "change data feed is not enabled at version %lld "
                      "(delta.enableChangeDataFeed is not true)", (long long)v);
    if (!rc) {
      ec.cdc_only = sc.has_cdc;
      ec.version = v;
      ec.ts = sc.ict >= 0 ? sc.ict : ts[i];
      rc = dl__parse_commit((const char *)data, len, path, emit_cb, &ec);
    }
    free(data);
    free(path);
  }
cleanup:
  free(ec.buf);
  free(ts);
  dl__listing_free(&l);
  dl_snapshot_free(s);
  return rc;
}
