/* dl_snapshot.c: opening tables and snapshots (latest, at a version, at a timestamp) and
 * reading a snapshot: protocol, metadata, schema, properties, files, tombstones, txns,
 * domains. See dl_internal.h for how a snapshot is chosen and replayed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

/* ======================= tables ======================= */

int dl_table_open_store(dl_table **out, os_store *store, bool take_ownership) {
  *out = calloc(1, sizeof **out);
  if (!*out) return dd_err_set(DD_ENOMEM, "out of memory");
  (*out)->store = store;
  (*out)->own_store = take_ownership;
  return 0;
}

int dl_table_open(dl_table **out, const char *location) {
  *out = NULL;
  os_store *st = NULL;
  int rc = os_open(&st, location);
  if (!rc) rc = dl_table_open_store(out, st, true);
  if (rc) os_store_free(st);
  return rc;
}

void dl_table_free(dl_table *t) {
  if (!t) return;
  if (t->own_store) os_store_free(t->store);
  free(t);
}

const os_store *dl_table_store(const dl_table *t) { return t->store; }
const char *dl_table_location(const dl_table *t) { return os_store_location(t->store); }

/* ======================= construction ======================= */

int dl__snapshot_new(dl_snapshot **out, dl_table *t) {
  dl_snapshot *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  atomic_init(&s->refs, 1);
  atomic_init(&s->ext, NULL);
  s->table = t;
  s->version = s->checkpoint_version = s->timestamp = -1;
  int rc = dl__fileset_new(&s->base);
  if (rc) {
    free(s);
    return rc;
  }
  *out = s;
  return 0;
}

dl_snapshot *dl_snapshot_ref(dl_snapshot *s) {
  if (s) atomic_fetch_add(&s->refs, 1);
  return s;
}

void dl_snapshot_free(dl_snapshot *s) {
  if (!s || atomic_fetch_sub(&s->refs, 1) != 1) return;
  dl_snapshot_ext *e = atomic_load(&s->ext);
  if (e) e->free(e);
  dl__state_free(&s->st);
  dl__fileset_unref(s->base);
  dl__fileset_unref(s->over);
  free(s);
}

dl_snapshot_ext *dl_snapshot_ext_get(const dl_snapshot *s) {
  return atomic_load_explicit(&((dl_snapshot *)s)->ext, memory_order_acquire);
}

dl_snapshot_ext *dl_snapshot_ext_set(const dl_snapshot *s, dl_snapshot_ext *e) {
  dl_snapshot_ext *none = NULL;
  /* the slot is the one mutable part of a shared snapshot, as its reference count is */
  if (atomic_compare_exchange_strong_explicit(&((dl_snapshot *)s)->ext, &none, e, memory_order_acq_rel,
                                              memory_order_acquire))
    return e;
  return none;
}

int dl__snapshot_finish(dl_snapshot *s) {
  if (!s->st.has_proto || !s->st.has_md)
    return dd_err_set(DD_ECORRUPT, "version %lld has no %s", (long long)s->version,
                      s->st.has_proto ? "metaData" : "protocol");
  s->num_files = s->base->n_add;
  s->size_bytes = s->base->add_bytes;
  if (!s->over) return 0;
  /* O(overlay): base adds hidden by an overlay entry drop out, overlay adds come in. */
  for (size_t i = 0; i < s->over->n; i++) {
    const dl__entry *b = dl__fileset_find(s->base, &s->over->ents[i]);
    if (b && b->kind == DL__E_ADD) {
      s->num_files--;
      if (__builtin_sub_overflow(s->size_bytes, b->size > 0 ? b->size : 0, &s->size_bytes)) s->size_bytes = INT64_MIN;
    }
  }
  s->num_files += s->over->n_add;
  if (__builtin_add_overflow(s->size_bytes, s->over->add_bytes, &s->size_bytes))
    return dd_err_set(DD_ECORRUPT, "the sizes of the table's files add up to more than %lld bytes",
                      (long long)INT64_MAX);
  return 0;
}

/* Checks commits a..b are all listed; names the first missing one. */
static int check_range(const dl__listing *l, int64_t a, int64_t b) {
  if (a > b) return 0;
  ssize_t i = dl__listing_find(l, a);
  for (int64_t v = a; v <= b; v++, i++) {
    if (i < 0 || (size_t)i >= l->n_commits || l->commits[i].version != v) {
      return dd_err_set(DD_ECORRUPT, "log is incomplete: commit version %lld is missing", (long long)v);
    }
  }
  return 0;
}

static void reset(dl_snapshot *s) {
  dl__state_free(&s->st);
  dl__fileset_unref(s->base);
  s->base = NULL;
  dl__fileset_new(&s->base);
}

static int64_t listed_timestamp(const dl__listing *l, int64_t v) {
  int64_t prev = INT64_MIN, ts = -1;
  for (size_t i = 0; i < l->n_commits && l->commits[i].version <= v; i++) {
    ts = l->commits[i].mtime;
    if (prev != INT64_MIN && ts <= prev) ts = prev + 1;
    prev = ts;
  }
  return ts;
}

static int build_at(dl_snapshot *s, const dl__listing *l, int64_t target) {
  int rc = 0, cp_rc = 0;
  int64_t start = -1;
  for (size_t k = l->n_cps; k-- > 0;) {
    const dl__cp *cp = &l->cps[k];
    if (cp->version > target) continue;
    if ((rc = check_range(l, cp->version + 1, target))) return rc;
    if (!s->base) return dd_err_set(DD_ENOMEM, "out of memory");
    bool lacks = false;
    rc = dl__checkpoint_load(s->table, cp, &s->st, s->base, &lacks);
    if (!rc) {
      start = cp->version + 1;
      s->checkpoint_version = cp->version;
      break;
    }
    /* A checkpoint that reads but has no protocol or metaData is a damaged table, as Delta
     * and delta-kernel-rs see it; only one that cannot be read falls back to an older one. */
    if (rc == DD_ENOMEM || lacks) return rc;
    cp_rc = rc; /* unreadable: fall back to an older one */
    reset(s);
  }
  if (start < 0) {
    if (dl__listing_find(l, 0) < 0) {
      if (cp_rc) return cp_rc;
      return dd_err_set(DD_ERANGE, "version %lld cannot be reconstructed: no checkpoint at or "
                        "before it and commit 0 is gone", (long long)target);
    }
    if ((rc = check_range(l, 0, target))) return rc;
    start = 0;
    dd_err_clear();
  }
  int64_t ict = -1;
  for (int64_t v = start; v <= target; v++) {
    rc = dl__replay_commit(s->table, v, &s->st, s->base, &ict);
    if (rc) return rc;
  }
  s->version = target;
  const char *on = NULL;
  dl_kv_get(s->st.has_md ? s->st.md.configuration : "", "delta.enableInCommitTimestamps", &on);
  s->timestamp = (on && !strcmp(on, "true") && ict >= 0) ? ict : listed_timestamp(l, target);
  return dl__snapshot_finish(s);
}

static int64_t latest_version(const dl__listing *l) {
  int64_t v = -1;
  if (l->n_commits) v = l->commits[l->n_commits - 1].version;
  for (size_t i = 0; i < l->n_cps; i++)
    if (l->cps[i].version > v) v = l->cps[i].version;
  return v;
}

static int open_version(dl_snapshot **out, dl_table *t, const dl__listing *l, int64_t v) {
  dl_snapshot *s = NULL;
  int rc = dl__snapshot_new(&s, t);
  if (!rc) rc = build_at(s, l, v);
  if (rc) {
    dl_snapshot_free(s);
    return rc;
  }
  *out = s;
  return 0;
}

static int version_at_time(dl_table *t, const dl__listing *l, const dl_snapshot *latest,
                           int64_t ts_ms, int64_t *out) {
  int64_t *ts = NULL;
  int rc = dl__commit_timestamps(t, l, &latest->st, &ts);
  if (rc) return rc;
  int64_t v = -1;
  for (size_t i = 0; i < l->n_commits; i++)
    if (ts[i] <= ts_ms) v = l->commits[i].version;
  if (l->n_commits && ts_ms > ts[l->n_commits - 1]) { /* as Delta's time travel refuses it */
    rc = dd_err_set(DD_ERANGE, "The provided timestamp (%lld ms) is after the latest version "
                    "%lld of the table (committed at %lld ms). Please use a timestamp less "
                    "than or equal to it, or read the latest version without a timestamp.",
                    (long long)ts_ms, (long long)l->commits[l->n_commits - 1].version,
                    (long long)ts[l->n_commits - 1]);
  } else if (v < 0) {
    rc = l->n_commits ? dd_err_set(DD_ERANGE, "timestamp %lld is before the earliest commit "
                                   "(version %lld at %lld)", (long long)ts_ms,
                                   (long long)l->commits[0].version, (long long)ts[0])
                      : dd_err_set(DD_ERANGE, "table has no commits with timestamps");
  }
  free(ts);
  *out = v;
  return rc;
}

int dl_snapshot_open(dl_snapshot **out, dl_table *t, const dl_snapshot_opts *opts) {
  *out = NULL;
  dl_snapshot_opts o = DL_SNAPSHOT_OPTS_INIT;
  if (opts) o = *opts;
  dl__listing l;
  int rc = dl__list_log(&l, t->store);
  if (rc) return rc;
  dl_snapshot *s = NULL;
  int64_t latest = latest_version(&l);
  if (latest < 0) {
    rc = dd_err_set(DD_ENOTFOUND, "%s is not a Delta table (empty %s)", dl_table_location(t), DL__LOG);
    goto cleanup;
  }
  if (o.version > latest) {
    rc = dd_err_set(DD_ERANGE, "version %lld does not exist (latest is %lld)",
                    (long long)o.version, (long long)latest);
    goto cleanup;
  }
  rc = open_version(&s, t, &l, o.version >= 0 ? o.version : latest);
  if (!rc && o.version < 0 && o.timestamp_ms != INT64_MIN) {
    int64_t v;
    rc = version_at_time(t, &l, s, o.timestamp_ms, &v);
    if (!rc && v != s->version) {
      dl_snapshot *at = NULL;
      rc = open_version(&at, t, &l, v);
      dl_snapshot_free(s);
      s = at;
    }
  }
  if (!rc && !o.skip_protocol_check) rc = dl_protocol_check(&s->st.proto, false);
  if (!rc && l.n_commits) s->last_commit_mtime = l.commits[l.n_commits - 1].mtime;
cleanup:
  dl__listing_free(&l);
  if (rc) dl_snapshot_free(s);
  else *out = s;
  return rc;
}

int dl_commit_timestamps(dl_table *t, int64_t **out_versions, int64_t **out_ts, size_t *out_n) {
  *out_versions = *out_ts = NULL;
  *out_n = 0;
  dl_snapshot *s = NULL;
  dl__listing l;
  int rc = dl_snapshot_open(&s, t, NULL);
  if (rc) return rc;
  rc = dl__list_log(&l, t->store);
  if (rc) goto cleanup;
  rc = dl__commit_timestamps(t, &l, &s->st, out_ts);
  if (!rc) {
    *out_versions = malloc((l.n_commits ? l.n_commits : 1) * sizeof **out_versions);
    if (!*out_versions) {
      free(*out_ts);
      *out_ts = NULL;
      rc = dd_err_set(DD_ENOMEM, "out of memory");
    } else {
      for (size_t i = 0; i < l.n_commits; i++) (*out_versions)[i] = l.commits[i].version;
      *out_n = l.n_commits;
    }
  }
  dl__listing_free(&l);
cleanup:
  dl_snapshot_free(s);
  return rc;
}

/* ======================= accessors ======================= */

int64_t dl_snapshot_version(const dl_snapshot *s) { return s->version; }
int64_t dl_snapshot_timestamp(const dl_snapshot *s) { return s->timestamp; }
const dl_protocol *dl_snapshot_protocol(const dl_snapshot *s) { return &s->st.proto; }
const dl_metadata *dl_snapshot_metadata(const dl_snapshot *s) { return &s->st.md; }
const dl_schema *dl_snapshot_schema(const dl_snapshot *s) { return s->st.schema; }
size_t dl_snapshot_num_files(const dl_snapshot *s) { return s->num_files; }
int64_t dl_snapshot_size_bytes(const dl_snapshot *s) { return s->size_bytes; }
int64_t dl_snapshot_checkpoint_version(const dl_snapshot *s) { return s->checkpoint_version; }

int dl_snapshot_with_metadata(dl_snapshot **out, const dl_snapshot *s, const dl_metadata *md) {
  *out = NULL;
  dl_snapshot *n = calloc(1, sizeof *n);
  if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
  atomic_init(&n->refs, 1);
  n->table = s->table;
  n->version = s->version;
  n->timestamp = s->timestamp;
  n->checkpoint_version = s->checkpoint_version;
  n->num_files = s->num_files;
  n->size_bytes = s->size_bytes;
  n->last_commit_mtime = s->last_commit_mtime;
  n->base = dl__fileset_ref(s->base);
  n->over = s->over ? dl__fileset_ref(s->over) : NULL;
  int rc = dl__state_copy(&n->st, &s->st);
  if (!rc) rc = dl__state_set_metadata(&n->st, md);
  if (rc) dl_snapshot_free(n);
  else *out = n;
  return rc;
}

const char *dl_snapshot_property(const dl_snapshot *s, const char *key) {
  const char *v = NULL;
  dl_kv_get(s->st.md.configuration, key, &v);
  return v;
}

size_t dl_snapshot_num_app_txns(const dl_snapshot *s) { return s->st.n_txns; }
const dl_app_txn *dl_snapshot_app_txn(const dl_snapshot *s, size_t i) {
  return i < s->st.n_txns ? &s->st.txns[i] : NULL;
}
int dl_snapshot_find_app_txn(const dl_snapshot *s, const char *app_id, dl_app_txn *out) {
  for (size_t i = 0; i < s->st.n_txns; i++) {
    if (!strcmp(s->st.txns[i].app_id, app_id)) {
      *out = s->st.txns[i];
      return 1;
    }
  }
  return 0;
}

size_t dl_snapshot_num_domains(const dl_snapshot *s) { return s->st.n_domains; }
const dl_domain *dl_snapshot_domain(const dl_snapshot *s, size_t i) {
  return i < s->st.n_domains ? &s->st.domains[i] : NULL;
}

size_t dl_snapshot_memory(const dl_snapshot *s) {
  return sizeof *s + s->st.arena.bytes + dl__fileset_memory(s->base) + dl__fileset_memory(s->over);
}

/* ======================= iteration ======================= */

static int visit(const dl__entry *e, dl_file_cb cb, void *ctx, char **buf, size_t *cap) {
  size_t need = strlen(e->path) + 1;
  if (need > *cap) {
    char *n = realloc(*buf, need * 2);
    if (!n) return dd_err_set(DD_ENOMEM, "out of memory");
    *buf = n;
    *cap = need * 2;
  }
  dl_file f;
  dl__entry_view(e, &f, *buf);
  return cb(ctx, &f);
}

/* The entries of kind in slots [from, to) of the snapshot's order: the base's entries
 * (less those the overlay replaces), then the overlay's. */
static int iterate_range(const dl_snapshot *s, int kind, size_t from, size_t to, dl_file_cb cb, void *ctx) {
  char *buf = NULL;
  size_t cap = 0, nb = s->base->n;
  int rc = 0;
  for (size_t i = from; i < nb && i < to && !rc; i++) {
    const dl__entry *e = &s->base->ents[i];
    if (e->kind != kind || (s->over && dl__fileset_find(s->over, e))) continue;
    rc = visit(e, cb, ctx, &buf, &cap);
  }
  for (size_t i = from > nb ? from - nb : 0; s->over && i < s->over->n && nb + i < to && !rc; i++) {
    const dl__entry *e = &s->over->ents[i];
    if (e->kind == kind) rc = visit(e, cb, ctx, &buf, &cap);
  }
  free(buf);
  return rc;
}

static int iterate(const dl_snapshot *s, int kind, dl_file_cb cb, void *ctx) {
  return iterate_range(s, kind, 0, SIZE_MAX, cb, ctx);
}

size_t dl_snapshot_slots(const dl_snapshot *s) { return s->base->n + (s->over ? s->over->n : 0); }

int dl_snapshot_files_range(const dl_snapshot *s, size_t from, size_t to, dl_file_cb cb, void *ctx) {
  return iterate_range(s, DL__E_ADD, from, to, cb, ctx);
}

int dl_snapshot_files(const dl_snapshot *s, dl_file_cb cb, void *ctx) {
  return iterate(s, DL__E_ADD, cb, ctx);
}

int dl_snapshot_tombstones(const dl_snapshot *s, dl_file_cb cb, void *ctx) {
  return iterate(s, DL__E_REMOVE, cb, ctx);
}
