/* shq_changes.c: data-change responses read straight from the commit files: Query Table
 * with startingVersion (streaming: dataChange add/remove of every commit, historical
 * metaData after the starting version) and Read Change Data Feed (cdc files where a commit
 * has them, else its dataChange add/remove; CDF must be enabled across the range). Pages
 * are positions "version V, file action I" in those immutable commits. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

#define DEFAULT_PAGE_CAP 10000

/* ======================= reading one commit ======================= */

typedef struct commit {
  json_t **acts;       /* every action line of the commit, in order */
  size_t n;
  const json_t *info;  /* commitInfo or NULL */
  const json_t *md;    /* metaData or NULL */
  bool has_cdc;
} commit;

static void commit_free(commit *c) {
  for (size_t i = 0; i < c->n; i++) json_decref(c->acts[i]);
  free(c->acts);
  *c = (commit){0};
}

static int commit_read(commit *c, dl_table *t, int64_t v) {
  char path[64];
  snprintf(path, sizeof path, "_delta_log/%020lld.json", (long long)v);
  uint8_t *data = NULL;
  size_t len = 0;
  *c = (commit){0};
  int rc = os_read_all(dl_table_store(t), path, &data, &len);
  if (rc) return rc == DD_ENOTFOUND ? dd_err_set(DD_ECORRUPT, "commit %lld is missing", (long long)v) : rc;
  size_t cap = 0;
  for (size_t b = 0; b < len && !rc;) {
    const uint8_t *nl = memchr(data + b, '\n', len - b);
    size_t e = nl ? (size_t)(nl - data) : len;
    if (e > b) {
      json_t *j = json_loadb((const char *)data + b, e - b, 0, NULL);
      if (!json_is_object(j)) {
        json_decref(j);
        rc = dd_err_set(DD_ECORRUPT, "commit %lld has a line that is not a JSON object", (long long)v);
        break;
      }
      if (c->n == cap) {
        cap = cap ? cap * 2 : 16;
        json_t **n = realloc(c->acts, cap * sizeof *n);
        if (!n) {
          json_decref(j);
          rc = dd_err_set(DD_ENOMEM, "out of memory");
          break;
        }
        c->acts = n;
      }
      c->acts[c->n++] = j;
      if (json_object_get(j, "cdc")) c->has_cdc = true;
      if (!c->info) c->info = json_object_get(j, "commitInfo");
      if (json_object_get(j, "metaData")) c->md = json_object_get(j, "metaData");
    }
    b = e + 1;
  }
  free(data);
  if (rc) commit_free(c);
  return rc;
}

/* A MERGE that reports no inserted, updated or deleted rows changed no data (its file
 * actions are rewrites): the reference server serves no changes for it. */
static bool noop_merge(const json_t *info) {
  const char *op = json_string_value(json_object_get(info, "operation"));
  if (!op || strcmp(op, "MERGE")) return false;
  const json_t *m = json_object_get(info, "operationMetrics");
  static const char *const keys[] = {"numTargetRowsInserted", "numTargetRowsUpdated",
                                     "numTargetRowsDeleted"};
  for (int i = 0; i < 3; i++) {
    const char *v = json_string_value(json_object_get(m, keys[i]));
    if (!v || strcmp(v, "0")) return false;
  }
  return true;
}

static bool cdf_on(const json_t *md) {
  const char *v = json_string_value(
      json_object_get(json_object_get(md, "configuration"), "delta.enableChangeDataFeed"));
  return v && !strcmp(v, "true");
}

/* The data-change file action of a line, or NULL (and its key). */
static const json_t *change_of(const json_t *line, const commit *c, bool cdf, const char **key) {
  const json_t *a;
  if (cdf && c->has_cdc) {
    *key = "cdc";
    return json_object_get(line, "cdc");
  }
  if ((a = json_object_get(line, "add"))) *key = "add";
  else if ((a = json_object_get(line, "remove"))) *key = "remove";
  else return NULL;
  return json_is_false(json_object_get(a, "dataChange")) ? NULL : a;
}

/* ======================= the range walk ======================= */

static int64_t ts_of(const int64_t *vs, const int64_t *ts, size_t n, int64_t v) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (vs[mid] < v) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && vs[lo] == v ? ts[lo] : -1;
}

typedef struct walk {
  shq_out *o;
  const shq_range *r;
  int64_t emitted;
  int64_t stop_v, stop_i; /* where the next page starts, or -1 */
} walk;

static int walk_commit(walk *w, const commit *c, int64_t v, int64_t ts) {
  const shq_range *r = w->r;
  if (r->cdf && c->md && !cdf_on(c->md) && v > r->start)
    return dd_err_set(DD_EINVAL, "Error getting change data for range [%lld, %lld] as change "
                      "data was not recorded for version [%lld]", (long long)r->start,
                      (long long)r->end, (long long)v);
  bool skip_files = r->cdf && !c->has_cdc && noop_merge(c->info);
  int64_t idx = 0, first = v == r->resume_version ? r->resume_index : 0;
  for (size_t i = 0; i < c->n; i++) {
    const json_t *md = json_object_get(c->acts[i], "metaData");
    const json_t *pr = json_object_get(c->acts[i], "protocol");
    if (md && r->with_meta && v > r->start && first == 0) {
      int rc = shq__write_metadata_json(w->o, md, v);
      if (rc) return rc;
      continue;
    }
    if (pr && r->with_protocol && v > r->start && first == 0) {
      int rc = shq__write_protocol_json(w->o, pr, v);
      if (rc) return rc;
      continue;
    }
    const char *key = NULL;
    const json_t *a = skip_files ? NULL : change_of(c->acts[i], c, r->cdf, &key);
    if (!a) continue;
    if (idx++ < first) continue;
    if (r->max_files > 0 && w->emitted == r->max_files) {
      w->stop_v = v;
      w->stop_i = idx - 1;
      return 0;
    }
    int rc = shq__write_change(w->o, key, a, v, ts);
    if (rc) return rc;
    w->emitted++;
  }
  return 0;
}

int shq__write_changes(shq_out *o, dl_table *t, const shq_range *r, int64_t now_ms,
                       char **out_next) {
  int64_t *vs = NULL, *ts = NULL;
  size_t n = 0;
  walk w = {.o = o, .r = r, .stop_v = -1, .stop_i = -1};
  *out_next = NULL;
  int rc = dl_commit_timestamps(t, &vs, &ts, &n);
  int64_t from = r->resume_version >= 0 ? r->resume_version : r->start;
  for (int64_t v = from; !rc && v <= r->end && w.stop_v < 0; v++) {
    commit c;
    if ((rc = commit_read(&c, t, v))) break;
    rc = walk_commit(&w, &c, v, ts_of(vs, ts, n, v));
    commit_free(&c);
  }
  if (!rc && w.stop_v >= 0) {
    shq_token tk = {.kind = 'p', .table_id = (char *)o->opts->table_id,
                    .checksum = (char *)r->checksum, .version = -1, .start_version = w.stop_v,
                    .action_index = w.stop_i, .end_version = r->end, .latest_version = r->latest,
                    .expires_ms = o->opts->token_ttl_ms > 0 ? now_ms + o->opts->token_ttl_ms : 0};
    if (!(*out_next = shq__token_encode(&tk, o->opts))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  free(vs);
  free(ts);
  return rc;
}

/* ======================= shared request handling ======================= */

static int64_t page_size(int64_t max_files, const shq_table_opts *opts) {
  int64_t cap = opts->max_page_size > 0 ? opts->max_page_size : DEFAULT_PAGE_CAP;
  return max_files > 0 ? (max_files < cap ? max_files : cap) : -1;
}

static int latest_of(dl_table *t, const shq_table_opts *opts, int64_t *out) {
  dl_snapshot *s = NULL;
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  so.skip_protocol_check = true;
  int rc = opts->cache ? dl_cache_get(opts->cache, t, &s) : dl_snapshot_open(&s, t, &so);
  if (!rc) *out = dl_snapshot_version(s);
  dl_snapshot_free(s);
  return rc;
}

static int start_after_latest(int64_t start, int64_t latest) {
  return dd_err_set(DD_ERANGE, "Provided Start version(%lld) for reading change data is "
                    "invalid. Start version cannot be greater than the latest version of the "
                    "table(%lld).", (long long)start, (long long)latest);
}

/* Header lines, the walk, and the endStreamAction. */
static int run_changes(shq_out *o, dl_table *t, const dl_snapshot *s, int64_t meta_version,
                       shq_range *r, const shq_caps *caps, int64_t max_files, int64_t now_ms,
                       shq_result *res) {
  char *next = NULL;
  bool end = caps->end_stream_action || max_files > 0;
  res->format = o->format;
  res->end_stream_action = end;
  int rc = shq__write_protocol(o, s);
  if (!rc) rc = shq__write_metadata(o, s, meta_version, false);
  if (!rc) rc = shq__write_changes(o, t, r, now_ms, &next);
  if (!rc && end) rc = shq__write_end(o, next, NULL);
  free(next);
  return rc;
}

/* ======================= Query Table with startingVersion ======================= */

int shq__query_changes(dl_table *t, const shq_query *q, const shq_caps *caps,
                       const shq_table_opts *opts, const shq_signer *signer, int64_t now_ms,
                       const char *checksum, shq_result *res, shq_line_fn fn, void *ctx) {
  shq_token tk = {0};
  dl_snapshot *s = NULL;
  shq_out o;
  shq__out_init(&o, t, opts, signer, fn, ctx);
  shq_range r = {.start = q->starting_version, .with_meta = true, .checksum = checksum,
                 .resume_version = -1, .resume_index = -1,
                 .max_files = page_size(q->max_files, opts)};
  int rc = 0;
  if (q->page_token) {
    if ((rc = shq__token_decode(&tk, q->page_token, 'p', checksum, opts, now_ms))) goto cleanup;
    r.latest = tk.latest_version;
    r.end = tk.end_version;
    r.resume_version = tk.start_version;
    r.resume_index = tk.action_index;
  } else {
    if ((rc = latest_of(t, opts, &r.latest))) goto cleanup;
    if (q->starting_version > r.latest) {
      rc = start_after_latest(q->starting_version, r.latest);
      goto cleanup;
    }
    if (q->ending_version > r.latest) {
      rc = dd_err_set(DD_ERANGE, "Provided end version(%lld) is invalid. End version cannot be "
                      "greater than the latest version of the table(%lld).",
                      (long long)q->ending_version, (long long)r.latest);
      goto cleanup;
    }
    r.end = q->ending_version >= 0 ? q->ending_version : r.latest;
  }
  if ((rc = shq__open_snapshot(&s, t, q->starting_version, NULL, opts))) goto cleanup;
  if ((rc = shq__choose_format(&o, s, caps))) goto cleanup;
  r.with_protocol = q->include_historical_protocol && o.format == SHQ_FORMAT_DELTA;
  if (r.with_protocol) o.protocol_version = q->starting_version;
  res->version = q->starting_version;
  rc = run_changes(&o, t, s, q->starting_version, &r, caps, q->max_files, now_ms, res);
cleanup:
  shq__token_clear(&tk);
  dl_snapshot_free(s);
  shq__out_free(&o);
  return rc;
}

/* ======================= Read Change Data Feed ======================= */

static int cdf_checksum(const shq_changes *c, const shq_caps *caps, char out[33]) {
  json_t *j = json_pack("{s:I, s:I, s:s?, s:s?, s:b, s:b, s:i}", "sv",
                        (json_int_t)c->starting_version, "ev", (json_int_t)c->ending_version,
                        "st", c->starting_timestamp, "et", c->ending_timestamp, "hm",
                        c->include_historical_metadata, "hp", c->include_historical_protocol,
                        "f", (int)caps->formats);
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

static int cdf_check(const shq_changes *c, const shq_table_opts *opts) {
  if (c->max_files == 0 || c->max_files < -1) return dd_err_set(DD_EINVAL, "maxFiles must be positive.");
  if (!opts->history_shared)
    return dd_err_set(DD_EINVAL, "cdf is not enabled on table %s",
                      opts->table_name ? opts->table_name : "(table)");
  const char *fmt = "Multiple %s arguments provided for CDF read. Please provide one of either "
                    "%sTimestamp or %sVersion.";
  if (c->starting_version >= 0 && c->starting_timestamp)
    return dd_err_set(DD_EINVAL, fmt, "starting", "starting", "starting");
  if (c->ending_version >= 0 && c->ending_timestamp)
    return dd_err_set(DD_EINVAL, fmt, "ending", "ending", "ending");
  if (c->starting_version < 0 && !c->starting_timestamp) {
    if (c->starting_version < -1) return dd_err_set(DD_EINVAL, "startingVersion cannot be negative.");
    return dd_err_set(DD_EINVAL, "No startingVersion or startingTimestamp provided for CDF read.");
  }
  if (c->ending_version < -1) return dd_err_set(DD_EINVAL, "endingVersion cannot be negative.");
  return 0;
}

/* Start: earliest version at or after the timestamp. End: latest version at or before. */
static int cdf_version_of(dl_table *t, const char *tsz, bool start, int64_t *out) {
  int64_t ms, *vs = NULL, *ts = NULL;
  size_t n = 0;
  int rc = shq_parse_timestamp(tsz, &ms);
  if (!rc) rc = dl_commit_timestamps(t, &vs, &ts, &n);
  if (rc) goto cleanup;
  ssize_t hit = -1;
  for (size_t i = 0; i < n; i++) {
    if (start && ts[i] >= ms) {
      hit = (ssize_t)i;
      break;
    }
    if (!start && ts[i] <= ms) hit = (ssize_t)i;
  }
  if (hit < 0)
    rc = dd_err_set(DD_ERANGE, start ? "Invalid startingTimestamp: %s is after the latest "
                    "commit of the table" : "Invalid endingTimestamp: %s is before the earliest "
                    "commit of the table", tsz);
  else *out = vs[hit];
cleanup:
  free(vs);
  free(ts);
  return rc;
}

static int cdf_range(dl_table *t, const shq_changes *c, const shq_table_opts *opts,
                     const shq_token *tk, shq_range *r) {
  int rc;
  if (tk) {
    r->latest = tk->latest_version;
  } else if ((rc = latest_of(t, opts, &r->latest))) {
    return rc;
  }
  r->start = c->starting_version;
  if (c->starting_timestamp && (rc = cdf_version_of(t, c->starting_timestamp, true, &r->start)))
    return rc;
  if (r->start > r->latest) return start_after_latest(r->start, r->latest);
  r->end = c->ending_version >= 0 ? c->ending_version : r->latest;
  if (c->ending_timestamp && (rc = cdf_version_of(t, c->ending_timestamp, false, &r->end)))
    return rc;
  if (r->end < r->start)
    return dd_err_set(DD_EINVAL, "CDF range from start %lld to end %lld was invalid. End cannot "
                      "be before start.", (long long)r->start, (long long)r->end);
  if (r->end > r->latest) r->end = r->latest;
  if (opts->start_version > r->start)
    return dd_err_set(DD_EINVAL, "You can only query table changes since version %lld.",
                      (long long)opts->start_version);
  if (tk) {
    r->end = tk->end_version;
    r->resume_version = tk->start_version;
    r->resume_index = tk->action_index;
  }
  return 0;
}

int shq_table_changes(dl_table *t, const shq_changes *c, const shq_caps *caps,
                      const shq_table_opts *opts, const shq_signer *signer, int64_t now_ms,
                      shq_result *res, shq_line_fn fn, void *ctx) {
  char sum[33];
  shq_token tk = {0};
  dl_snapshot *s = NULL, *at_start = NULL;
  shq_out o;
  shq__out_init(&o, t, opts, signer, fn, ctx);
  shq_range r = {.cdf = true, .with_meta = c->include_historical_metadata, .checksum = sum,
                 .resume_version = -1, .resume_index = -1,
                 .max_files = page_size(c->max_files, opts)};
  int rc = cdf_check(c, opts);
  if (!rc) rc = cdf_checksum(c, caps, sum);
  if (!rc && c->page_token) rc = shq__token_decode(&tk, c->page_token, 'p', sum, opts, now_ms);
  if (!rc) rc = cdf_range(t, c, opts, c->page_token ? &tk : NULL, &r);
  if (rc) goto cleanup;
  if ((rc = shq__open_snapshot(&at_start, t, r.start, NULL, opts))) goto cleanup;
  const char *on = dl_snapshot_property(at_start, "delta.enableChangeDataFeed");
  if (!on || strcmp(on, "true")) {
    rc = dd_err_set(DD_EINVAL, "Error getting change data for range [%lld, %lld] as change "
                    "data was not recorded for version [%lld]", (long long)r.start,
                    (long long)r.end, (long long)r.start);
    goto cleanup;
  }
  if (c->include_historical_metadata) s = dl_snapshot_ref(at_start);
  else if ((rc = shq__open_snapshot(&s, t, r.latest, NULL, opts))) goto cleanup;
  if ((rc = shq__choose_format(&o, s, caps))) goto cleanup;
  r.with_protocol = c->include_historical_protocol && o.format == SHQ_FORMAT_DELTA;
  if (r.with_protocol) o.protocol_version = dl_snapshot_version(s);
  res->version = r.start;
  rc = run_changes(&o, t, s, dl_snapshot_version(s), &r, caps, c->max_files, now_ms, res);
cleanup:
  shq__token_clear(&tk);
  dl_snapshot_free(s);
  dl_snapshot_free(at_start);
  shq__out_free(&o);
  return shq__param_rc(rc);
}
