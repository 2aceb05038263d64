/* shq_query.c: Query Table Version, Query Table Metadata and the snapshot form of Query
 * Table: request checks (reference server messages), file filtering by predicate hints,
 * limitHint, and paging with maxFiles / pageToken. Pages follow the order of the files'
 * log paths, so a token ("every file after path P of version V") gives the same page
 * however the snapshot was replayed. The startingVersion form lives in shq_changes.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

#define DEFAULT_PAGE_CAP 10000
#define REFRESH_TTL_MS 3600000

/* ======================= shared helpers ======================= */

static const char *tname(const shq_table_opts *o) {
  return o->table_name ? o->table_name : "(table)";
}

static int no_history(const shq_table_opts *o) {
  return dd_err_set(DD_EINVAL, "Reading table by version or timestamp is not supported because "
                    "history sharing is not enabled on table: %s", tname(o));
}

static int since(int64_t start) {
  return dd_err_set(DD_EINVAL, "You can only query table data since version %lld.",
                    (long long)start);
}

static int latest_version(dl_table *t, const shq_table_opts *opts, int64_t *out) {
  dl_snapshot *s = NULL;
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  so.skip_protocol_check = true;
  int rc = opts->cache ? dl_cache_get(opts->cache, t, &s) : dl_snapshot_open(&s, t, &so);
  if (!rc) *out = dl_snapshot_version(s);
  dl_snapshot_free(s);
  return rc;
}

int shq__open_snapshot(dl_snapshot **out, dl_table *t, int64_t version, const char *timestamp,
                       const shq_table_opts *opts) {
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  int rc;
  if (timestamp && (rc = shq_parse_timestamp(timestamp, &so.timestamp_ms))) return rc;
  so.version = version;
  if (version >= 0) {
    int64_t latest;
    if ((rc = latest_version(t, opts, &latest))) return rc;
    if (version > latest)
      return dd_err_set(DD_ERANGE, "Cannot time travel Delta table to version %lld: it is "
                        "beyond the latest version %lld", (long long)version, (long long)latest);
  }
  if (version < 0 && !timestamp && opts->cache) return dl_cache_get(opts->cache, t, out);
  return dl_snapshot_open(out, t, &so); /* refuses a timestamp after the latest commit */
}

/* ======================= table version ======================= */

int shq_table_version(int64_t *out, dl_table *t, const char *starting_timestamp,
                      const shq_table_opts *opts) {
  if (!starting_timestamp) return shq__param_rc(latest_version(t, opts, out));
  if (!opts->history_shared) return no_history(opts);
  int64_t ms, *vs = NULL, *ts = NULL;
  size_t n = 0;
  int rc = shq_parse_timestamp(starting_timestamp, &ms);
  if (!rc) rc = dl_commit_timestamps(t, &vs, &ts, &n);
  if (rc) goto cleanup;
  size_t i = 0;
  while (i < n && ts[i] < ms) i++;
  if (i == n) {
    rc = dd_err_set(DD_ERANGE, "The provided timestamp (%s) is after the latest version %lld "
                    "of the table", starting_timestamp, (long long)(n ? vs[n - 1] : -1));
  } else if (vs[i] < opts->start_version) {
    rc = dd_err_set(DD_EINVAL, "You can only query table data since version %lld.The provided "
                    "timestamp(%s) corresponds to %lld.", (long long)opts->start_version,
                    starting_timestamp, (long long)vs[i]);
  } else {
    *out = vs[i];
  }
cleanup:
  free(vs);
  free(ts);
  return shq__param_rc(rc);
}

/* ======================= metadata ======================= */

int shq_table_metadata(dl_table *t, int64_t version, const char *timestamp, const shq_caps *caps,
                 const shq_table_opts *opts, shq_result *res, shq_line_fn fn, void *ctx) {
  if (version >= 0 && timestamp)
    return dd_err_set(DD_EINVAL, "Please only provide one of: version,timestamp");
  if (version < -1) return dd_err_set(DD_EINVAL, "version cannot be negative.");
  bool travel = version >= 0 || timestamp;
  if (travel && !opts->history_shared) return no_history(opts);
  dl_snapshot *s = NULL;
  shq_out o;
  shq__out_init(&o, t, opts, NULL, fn, ctx);
  int rc = shq__open_snapshot(&s, t, version, timestamp, opts);
  if (rc) goto cleanup;
  if (travel && dl_snapshot_version(s) < opts->start_version) {
    rc = since(opts->start_version);
    goto cleanup;
  }
  if ((rc = shq__choose_format(&o, s, caps))) goto cleanup;
  *res = (shq_result){.version = dl_snapshot_version(s), .format = o.format};
  if (!(rc = shq__write_protocol(&o, s)))
    rc = shq__write_metadata(&o, s, travel ? dl_snapshot_version(s) : -1, true);
cleanup:
  shq__out_free(&o);
  dl_snapshot_free(s);
  return shq__param_rc(rc);
}

/* ======================= query checks ======================= */

static int query_check(const shq_query *q, const shq_table_opts *opts) {
  int rc = shq_query_check_hints(q); /* gRPC requests come here without shq_query_parse_json */
  if (rc) return rc;
  int n = (q->version >= 0) + (q->timestamp != NULL) + (q->starting_version >= 0);
  if (n > 1)
    return dd_err_set(DD_EINVAL, "Please only provide one of: version,timestamp,startingVersion");
  if (q->max_files == 0 || q->max_files < -1)
    return dd_err_set(DD_EINVAL, "maxFiles must be positive.");
  if (q->version < -1) return dd_err_set(DD_EINVAL, "table version cannot be negative.");
  if (q->starting_version < -1) return dd_err_set(DD_EINVAL, "startingVersion cannot be negative.");
  if (n && q->include_refresh_token)
    return dd_err_set(DD_EINVAL, "includeRefreshToken cannot be used when querying a specific version.");
  if (q->page_token && q->include_refresh_token)
    return dd_err_set(DD_EINVAL, "includeRefreshToken must be used in the first page request.");
  if (n && q->refresh_token)
    return dd_err_set(DD_EINVAL, "refreshToken cannot be used when querying a specific version.");
  if (q->page_token && q->refresh_token)
    return dd_err_set(DD_EINVAL, "refreshToken must be used in the first page request.");
  if (!n) return 0;
  if (!opts->history_shared) return no_history(opts);
  if ((q->version >= 0 && q->version < opts->start_version) ||
      (q->starting_version >= 0 && q->starting_version < opts->start_version))
    return since(opts->start_version);
  if (q->ending_version >= 0 && q->starting_version > q->ending_version)
    return dd_err_set(DD_EINVAL, "startingVersion(%lld) must be smaller than or equal to "
                      "endingVersion(%lld).", (long long)q->starting_version,
                      (long long)q->ending_version);
  return 0;
}

/* Hex SHA-256 (first 32 digits) of the parameters a page token is bound to. */
static int query_checksum(const shq_query *q, const shq_caps *caps, char out[33]) {
  json_t *ph = json_array();
  for (size_t i = 0; i < q->num_predicate_hints; i++)
    json_array_append_new(ph, json_string(q->predicate_hints[i]));
  json_t *j = json_pack("{s:o, s:s?, s:I, s:I, s:s?, s:I, s:I, s:b, s:b, s:i}", "ph", ph,
                        "jph", q->json_predicate_hints, "lh", (json_int_t)q->limit_hint, "v",
                        (json_int_t)q->version, "ts", q->timestamp, "sv",
                        (json_int_t)q->starting_version, "ev", (json_int_t)q->ending_version,
                        "hm", q->include_historical_metadata, "hp",
                        q->include_historical_protocol, "f", (int)caps->formats);
  char *txt = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
  json_decref(j);
  if (!txt) return dd_err_set(DD_ENOMEM, "out of memory");
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  EVP_Digest(txt, strlen(txt), md, &len, EVP_sha256(), NULL);
  for (int i = 0; i < 16; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
  free(txt);
  return 0;
}

/* The predicate of the query bound to the snapshot: the JSON predicate (already
 * validated, taken over from *json) AND-ed with the SQL hints that parse (best effort).
 * NULL when nothing is usable. */
static shq_pred *query_pred(const shq_query *q, const dl_snapshot *s, shq_pred **json) {
  size_t n = q->num_predicate_hints + 1, k = 0;
  shq_pred **v = calloc(n, sizeof *v);
  if (!v) return NULL;
  const dl_schema *schema = dl_snapshot_schema(s);
  if (*json) v[k++] = *json;
  *json = NULL;
  for (size_t i = 0; i < q->num_predicate_hints; i++)
    if (shq__pred_parse_sql(&v[k], q->predicate_hints[i], schema) == 0) k++;
  shq_pred *p = shq__pred_and(v, k);
  free(v);
  dd_err_clear();
  if (p && shq__pred_bind(p, dl_snapshot_metadata(s), schema)) {
    shq__pred_free(p);
    p = NULL;
  }
  return p;
}

/* ======================= snapshot files ======================= */

typedef struct scan {
  shq_out *o;
  const shq_pred *pred;
  const char *after;       /* emit only paths > after */
  const char *upto;        /* and <= upto (NULL: no bound) */
  int64_t limit, records;  /* limitHint (-1 none) and the records emitted so far */
  int64_t version, ts;     /* per-file version/timestamp, or -1 */
  bool stopped;            /* limitHint reached */
  /* pass 1 of paging: the page_size smallest matching paths (a max-heap by path) */
  struct page_ent *heap;
  size_t nheap, page_size, matches;
} scan;

/* A file of the page being built: its path and its records (-1: unknown). */
typedef struct page_ent {
  char *path;
  int64_t records;
} page_ent;

/* The file's top-level stats numRecords (not a column that happens to be so named), less
 * the rows its deletion vector removes; -1 when unknown. */
static int64_t num_records(const dl_file *f) {
  shq_col_stats cs;
  if (!f->stats || !shq__stats_lookup(f->stats, NULL, &cs) || cs.num_records.kind != SHQ_TOK_INT ||
      cs.num_records.n > 18)
    return -1;
  int64_t n = strtoll(cs.num_records.p, NULL, 10);
  if (f->dv && f->dv->cardinality > 0) n -= f->dv->cardinality;
  return n;
}

static bool in_window(const scan *sc, const dl_file *f) {
  if (sc->after && strcmp(f->raw_path, sc->after) <= 0) return false;
  if (sc->upto && strcmp(f->raw_path, sc->upto) > 0) return false;
  return shq__pred_keep(sc->pred, f->partition_values, f->stats);
}

static int emit_cb(void *vctx, const dl_file *f) {
  scan *sc = vctx;
  if (sc->o->ids) shq__par_file_seen(sc->o, f);
  if (!in_window(sc, f)) return 0;
  if (sc->limit >= 0 && sc->records >= sc->limit) { /* enough rows: stop */
    sc->stopped = true;
    return 1;
  }
  int64_t n = sc->limit >= 0 ? num_records(f) : -1;
  if (n > 0) sc->records += n;
  return shq__write_file(sc->o, f, sc->version, sc->ts);
}

static void ent_swap(page_ent *a, page_ent *b) {
  page_ent t = *a;
  *a = *b;
  *b = t;
}

static void heap_sift_down(page_ent *h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < n && strcmp(h[l].path, h[m].path) > 0) m = l;
    if (r < n && strcmp(h[r].path, h[m].path) > 0) m = r;
    if (m == i) return;
    ent_swap(&h[i], &h[m]);
    i = m;
  }
}

static int select_cb(void *vctx, const dl_file *f) {
  scan *sc = vctx;
  if (!in_window(sc, f)) return 0;
  sc->matches++;
  int64_t n = sc->limit >= 0 ? num_records(f) : -1;
  if (sc->nheap == sc->page_size) {
    if (strcmp(f->raw_path, sc->heap[0].path) >= 0) return 0;
    free(sc->heap[0].path);
    if (!(sc->heap[0].path = strdup(f->raw_path))) return dd_err_set(DD_ENOMEM, "out of memory");
    sc->heap[0].records = n;
    heap_sift_down(sc->heap, sc->nheap, 0);
    return 0;
  }
  size_t i = sc->nheap++;
  if (!(sc->heap[i].path = strdup(f->raw_path))) return dd_err_set(DD_ENOMEM, "out of memory");
  sc->heap[i].records = n;
  while (i && strcmp(sc->heap[(i - 1) / 2].path, sc->heap[i].path) < 0) {
    ent_swap(&sc->heap[i], &sc->heap[(i - 1) / 2]);
    i = (i - 1) / 2;
  }
  return 0;
}

static int ent_cmp(const void *a, const void *b) {
  return strcmp(((const page_ent *)a)->path, ((const page_ent *)b)->path);
}

/* limitHint across pages: how many of the page's files (in path order) are sent, given
 * the records already sent by earlier pages (sc->records, from the page token). A file
 * goes out while fewer than limit records went before it, as without paging; once the
 * limit is reached the query ends (sc->stopped: no next page). */
static size_t page_cut(scan *sc) {
  if (sc->limit < 0) return sc->nheap;
  qsort(sc->heap, sc->nheap, sizeof *sc->heap, ent_cmp);
  size_t k = 0;
  while (k < sc->nheap && sc->records < sc->limit) {
    if (sc->heap[k].records > 0) sc->records += sc->heap[k].records;
    k++;
  }
  sc->stopped = sc->records >= sc->limit;
  return k;
}

/* One page: the page_size smallest matching paths after `after`, cut by limitHint; *next
 * is the token position (the page's last path) when more files remain. */
static int write_page(const dl_snapshot *s, scan *sc, char **next) {
  *next = NULL;
  if (!(sc->heap = calloc(sc->page_size, sizeof *sc->heap)))
    return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = dl_snapshot_files(s, select_cb, sc);
  size_t k = rc ? 0 : page_cut(sc);
  if (k) {
    /* the page's largest path: heap[0] (a max-heap) or, once sorted, heap[k - 1] */
    sc->upto = sc->limit >= 0 ? sc->heap[k - 1].path : sc->heap[0].path;
    sc->limit = -1; /* applied by page_cut */
    rc = dl_snapshot_files(s, emit_cb, sc);
    if (!rc && !sc->stopped && sc->matches > sc->nheap && !(*next = strdup(sc->upto)))
      rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  for (size_t i = 0; i < sc->nheap; i++) free(sc->heap[i].path);
  free(sc->heap);
  return rc;
}

/* ======================= Query Table ======================= */

typedef struct qstate {
  shq_token page, refresh;
  char checksum[33];
  char *next_path, *next_token, *refresh_token;
  int64_t next_records;    /* records sent up to next_path (limitHint across pages) */
  dl_snapshot *snap;
  shq_pred *json_pred;     /* jsonPredicateHints, validated before anything is read */
  shq_pred *pred;
  shq_out o;
} qstate;

static void qstate_free(qstate *st) {
  shq__token_clear(&st->page);
  shq__token_clear(&st->refresh);
  free(st->next_path);
  free(st->next_token);
  free(st->refresh_token);
  dl_snapshot_free(st->snap);
  shq__pred_free(st->json_pred);
  shq__pred_free(st->pred);
  shq__out_free(&st->o);
}

static int64_t page_cap(const shq_table_opts *opts) {
  return opts->max_page_size > 0 ? opts->max_page_size : DEFAULT_PAGE_CAP;
}

/* The files of slots [from, to) rendered into wo (shq__par_render). */
typedef struct par_src {
  const scan *sc;
  const dl_snapshot *s;
} par_src;

static int render_range(void *ud, shq_out *wo, size_t from, size_t to) {
  const par_src *src = ud;
  scan sc = *src->sc;
  sc.o = wo;
  return dl_snapshot_files_range(src->s, from, to, emit_cb, &sc);
}

static int snapshot_files(qstate *st, const shq_query *q, const shq_table_opts *opts,
                          bool travel) {
  scan sc = {.o = &st->o, .pred = st->pred, .limit = q->limit_hint, .version = -1, .ts = -1};
  if (travel) {
    sc.version = dl_snapshot_version(st->snap);
    sc.ts = dl_snapshot_timestamp(st->snap);
  }
  sc.after = q->page_token ? st->page.after : NULL;
  size_t slots = dl_snapshot_slots(st->snap);
  if (q->max_files <= 0 && sc.limit < 0 && shq__par_worth(&st->o, slots)) {
    par_src src = {&sc, st->snap};
    return shq__par_render(&st->o, st->snap, slots, render_range, &src);
  }
  if (q->max_files <= 0) {
    int rc = dl_snapshot_files(st->snap, emit_cb, &sc);
    return sc.stopped ? 0 : rc;
  }
  sc.records = q->page_token ? st->page.records : 0;
  sc.page_size = (size_t)(q->max_files < page_cap(opts) ? q->max_files : page_cap(opts));
  int rc = write_page(st->snap, &sc, &st->next_path);
  st->next_records = sc.records;
  return rc;
}

static int make_tokens(qstate *st, const shq_query *q, const shq_table_opts *opts,
                       int64_t now_ms) {
  int64_t v = dl_snapshot_version(st->snap);
  if (st->next_path) {
    shq_token t = {.kind = 'p', .table_id = (char *)opts->table_id, .checksum = st->checksum,
                   .version = v, .after = st->next_path, .records = st->next_records,
                   .expires_ms = opts->token_ttl_ms > 0 ? now_ms + opts->token_ttl_ms : 0};
    if (!(st->next_token = shq__token_encode(&t, opts))) return dd_err_set(DD_ENOMEM, "out of memory");
  }
  if (q->include_refresh_token) {
    shq_token t = {.kind = 'r', .table_id = (char *)opts->table_id, .version = v,
                   .expires_ms = now_ms + (opts->token_ttl_ms > 0 ? opts->token_ttl_ms : REFRESH_TTL_MS)};
    if (!(st->refresh_token = shq__token_encode(&t, opts)))
      return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

int shq_query_table(dl_table *t, const shq_query *q, const shq_caps *caps,
              const shq_table_opts *opts, const shq_signer *signer, int64_t now_ms,
              shq_result *res, shq_line_fn fn, void *ctx) {
  qstate st = {0};
  int rc = query_check(q, opts);
  if (!rc) rc = query_checksum(q, caps, st.checksum);
  if (!rc && q->json_predicate_hints) /* a malformed tree is the client's error */
    rc = shq__pred_parse_json(&st.json_pred, q->json_predicate_hints,
                              strlen(q->json_predicate_hints));
  if (rc || q->starting_version >= 0) {
    if (!rc) rc = shq__query_changes(t, q, caps, opts, signer, now_ms, st.checksum, res, fn, ctx);
    goto cleanup;
  }
  shq__out_init(&st.o, t, opts, signer, fn, ctx);
  int64_t version = q->version;
  if (q->page_token) {
    if ((rc = shq__token_decode(&st.page, q->page_token, 'p', st.checksum, opts, now_ms))) goto cleanup;
    version = st.page.version;
  } else if (q->refresh_token) {
    if ((rc = shq__token_decode(&st.refresh, q->refresh_token, 'r', NULL, opts, now_ms))) goto cleanup;
    version = st.refresh.version;
  }
  if ((rc = shq__open_snapshot(&st.snap, t, version, q->page_token ? NULL : q->timestamp, opts))) goto cleanup;
  if (dl_snapshot_version(st.snap) < opts->start_version) {
    rc = since(opts->start_version);
    goto cleanup;
  }
  if ((rc = shq__choose_format(&st.o, st.snap, caps))) goto cleanup;
  bool travel = q->version >= 0 || q->timestamp;
  bool end = caps->end_stream_action || q->max_files > 0 || q->include_refresh_token;
  *res = (shq_result){.version = dl_snapshot_version(st.snap), .format = st.o.format,
                      .end_stream_action = end};
  st.pred = query_pred(q, st.snap, &st.json_pred);
  /* every path of the snapshot is checked once, before its first line is sent */
  if (!shq__kept_paths_ok(st.snap)) {
    if ((rc = shq__check_paths(&st.o, st.snap))) goto cleanup;
    shq__kept_set_paths_ok(st.snap);
  }
  if ((rc = shq__write_protocol(&st.o, st.snap))) goto cleanup;
  if ((rc = shq__write_metadata(&st.o, st.snap, travel ? dl_snapshot_version(st.snap) : -1, false)))
    goto cleanup;
  if ((rc = snapshot_files(&st, q, opts, travel))) goto cleanup;
  if ((rc = make_tokens(&st, q, opts, now_ms))) goto cleanup;
  if (end) rc = shq__write_end(&st.o, st.next_token, st.refresh_token);
cleanup:
  qstate_free(&st);
  return shq__param_rc(rc);
}
