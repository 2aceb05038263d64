/* dl_replay.c: applying log files to a snapshot under construction: checkpoints (classic,
 * multi-part, v2 with sidecars, JSON or Parquet) and JSON commits; and the commit timestamps
 * of a log (in-commit timestamps when enabled, else file times made monotonic). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

typedef struct apply_ctx {
  dl__state *st;
  dl__fileset *fs;
  int64_t ict;
  bool in_checkpoint;
  char **sidecars;
  size_t n_sidecars;
  bool saw_proto, saw_md;
} apply_ctx;

static int apply_cb(void *vctx, dl__action *a) {
  apply_ctx *c = vctx;
  switch (a->kind) {
    case DL__A_ADD:
    case DL__A_REMOVE: {
      int kind = a->kind == DL__A_ADD ? DL__E_ADD : DL__E_REMOVE;
      const dl_dv *dv = a->has_dv ? &a->dv : NULL;
      if (a->sized)
        return dl__fileset_apply_sized(c->fs, kind, &a->file, dv, a->path_len, a->stats_len,
                                       a->path_hash);
      return dl__fileset_apply(c->fs, kind, &a->file, dv);
    }
    case DL__A_PROTOCOL: c->saw_proto = true; return dl__state_apply(c->st, a);
    case DL__A_METADATA: c->saw_md = true; return dl__state_apply(c->st, a);
    case DL__A_TXN:
    case DL__A_DOMAIN: return dl__state_apply(c->st, a);
    case DL__A_COMMITINFO:
      if (c->ict < 0) c->ict = a->ict;
      return 0;
    case DL__A_SIDECAR: {
      if (!c->in_checkpoint) return 0;
      char **n = realloc(c->sidecars, (c->n_sidecars + 1) * sizeof *n);
      if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
      c->sidecars = n;
      if (!(n[c->n_sidecars] = strdup(a->sidecar_path))) return dd_err_set(DD_ENOMEM, "out of memory");
      c->n_sidecars++;
      return 0;
    }
    default: return 0;
  }
}

#define JSON_CHUNK (8u << 20)

/* Reads a newline-delimited JSON file and applies every action. Commits (whole) and small
 * files are read in one request; big JSON checkpoints stream through a fixed buffer so
 * memory stays flat. Commits skip the size check: on object stores it is a round trip. */
static int read_json_file(dl_table *t, const char *path, apply_ctx *c, bool whole) {
  os_stat sb = {0};
  int rc = whole ? 0 : os_stat_path(t->store, path, &sb);
  if (rc) return rc;
  if (whole || sb.size <= (int64_t)JSON_CHUNK) {
    uint8_t *data = NULL;
    size_t len = 0;
    if ((rc = os_read_all(t->store, path, &data, &len))) return rc;
    rc = dl__parse_commit((const char *)data, len, path, apply_cb, c);
    free(data);
    return rc;
  }
  size_t cap = JSON_CHUNK, have = 0;
  uint8_t *buf = malloc(cap);
  if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
  uint64_t off = 0, size = (uint64_t)sb.size;
  while (!rc && (off < size || have)) {
    size_t want = cap - have;
    if (want > size - off) want = (size_t)(size - off);
    if (want && (rc = os_read_range(t->store, path, off, want, buf + have))) break;
    off += want;
    have += want;
    const uint8_t *nl = NULL;
    for (size_t i = have; i-- > 0;)
      if (buf[i] == '\n') { nl = buf + i; break; }
    size_t upto = off >= size ? have : (nl ? (size_t)(nl - buf) + 1 : 0);
    if (!upto) {
      /* a single line longer than the buffer: grow */
      uint8_t *n = cap < (1u << 30) ? realloc(buf, cap * 2) : NULL;
      if (!n) { rc = dd_err_set(DD_ECORRUPT, "%s: line too long", path); break; }
      buf = n;
      cap *= 2;
      continue;
    }
    rc = dl__parse_commit((const char *)buf, upto, path, apply_cb, c);
    memmove(buf, buf + upto, have - upto);
    have -= upto;
  }
  free(buf);
  return rc;
}

static int load_file(dl_table *t, const char *path, apply_ctx *c) {
  size_t n = strlen(path);
  if (n > 5 && !strcmp(path + n - 5, ".json")) return read_json_file(t, path, c, false);
  return dl__parquet_actions(t, path, apply_cb, c, c->fs);
}

int dl__checkpoint_load(dl_table *t, const dl__cp *cp, dl__state *st, dl__fileset *fs,
                        bool *lacks_actions) {
  *lacks_actions = false;
  apply_ctx c = {.st = st, .fs = fs, .ict = -1, .in_checkpoint = true};
  int rc = 0;
  dl__fileset_bulk_begin(fs); /* a checkpoint's files are indexed once, at the end */
  for (size_t i = 0; i < cp->nfiles && !rc; i++) {
    char *path = NULL;
    if (asprintf(&path, DL__LOG "/%s", cp->files[i]) < 0) {
      rc = dd_err_set(DD_ENOMEM, "out of memory");
      break;
    }
    rc = load_file(t, path, &c);
    if (rc) rc = dd_err_wrap(rc, "checkpoint %s", cp->files[i]);
    free(path);
  }
  for (size_t i = 0; i < c.n_sidecars && !rc; i++) {
    const char *sc = c.sidecars[i];
    char *path = NULL;
    if (sc[0] == '/' || strstr(sc, "://")) path = strdup(sc);
    else if (asprintf(&path, DL__LOG "/_sidecars/%s", sc) < 0) path = NULL;
    c.in_checkpoint = false;
    rc = path ? load_file(t, path, &c) : dd_err_set(DD_ENOMEM, "out of memory");
    if (rc) rc = dd_err_wrap(rc, "sidecar %s", sc);
    free(path);
  }
  int brc = dl__fileset_bulk_end(fs);
  if (!rc) rc = brc;
  if (!rc && (!st->has_proto || !st->has_md)) {
    *lacks_actions = true;
    rc = dd_err_set(DD_ECORRUPT, "checkpoint %s (version %lld) has no %s action",
                    cp->nfiles ? cp->files[0] : "?", (long long)cp->version,
                    st->has_proto ? "metaData" : "protocol");
  }
  for (size_t i = 0; i < c.n_sidecars; i++) free(c.sidecars[i]);
  free(c.sidecars);
  return rc;
}

int dl__replay_commit(dl_table *t, int64_t v, dl__state *st, dl__fileset *fs, int64_t *ict) {
  char *path = dl__version_path(v, ".json");
  if (!path) return dd_err_set(DD_ENOMEM, "out of memory");
  apply_ctx c = {.st = st, .fs = fs, .ict = -1};
  int rc = read_json_file(t, path, &c, true);
  if (ict) *ict = c.ict;
  free(path);
  return rc;
}

/* ---------- commit timestamps ---------- */

static int first_ict_cb(void *ctx, dl__action *a) {
  int64_t *ict = ctx;
  if (a->kind == DL__A_COMMITINFO) {
    *ict = a->ict;
    return 1; /* stop: commitInfo comes first when ICT is on */
  }
  return 2; /* a different first action: no ICT */
}

static int64_t commit_ict(dl_table *t, int64_t v) {
  char *path = dl__version_path(v, ".json");
  uint8_t *data = NULL;
  size_t len = 0;
  int64_t ict = -1;
  if (path && os_read_all(t->store, path, &data, &len) == 0) {
    const char *nl = memchr(data, '\n', len);
    size_t n = nl ? (size_t)(nl - (const char *)data) : len;
    dl__parse_commit((const char *)data, n, path, first_ict_cb, &ict);
  }
  dd_err_clear();
  free(data);
  free(path);
  return ict;
}

int dl__commit_timestamps(dl_table *t, const dl__listing *l, const dl__state *latest,
                          int64_t **out_ts) {
  int64_t *ts = malloc((l->n_commits ? l->n_commits : 1) * sizeof *ts);
  if (!ts) return dd_err_set(DD_ENOMEM, "out of memory");
  const char *cfg = latest && latest->has_md ? latest->md.configuration : "";
  const char *ict_on = NULL, *en_v = NULL;
  dl_kv_get(cfg, "delta.enableInCommitTimestamps", &ict_on);
  dl_kv_get(cfg, "delta.inCommitTimestampEnablementVersion", &en_v);
  bool ict = ict_on && !strcmp(ict_on, "true");
  int64_t from = ict ? (en_v ? strtoll(en_v, NULL, 10) : 0) : INT64_MAX;
  int64_t prev = INT64_MIN;
  for (size_t i = 0; i < l->n_commits; i++) {
    int64_t x = -1;
    if (l->commits[i].version >= from) x = commit_ict(t, l->commits[i].version);
    if (x < 0) {
      x = l->commits[i].mtime;
      if (prev != INT64_MIN && x <= prev) x = prev + 1; /* monotonic file times */
    }
    ts[i] = x;
    prev = x;
  }
  *out_ts = ts;
  return 0;
}
