/* os_gcs.c: the Google Cloud Storage backend of os_store (see os_remote.h), over the JSON
 * API (storage/v1) with OAuth 2 access tokens of a service account:
 *  - the token: an RS256 JWT (OpenSSL) with the key's client_email as issuer, the
 *    devstorage.read_write scope and the key's token_uri as audience, exchanged at
 *    token_uri (jwt-bearer grant) for an access token, kept for the process (by the
 *    SHA-256 of the private key and the token_uri, so stores opened per operation share
 *    it) until a minute before it expires: the one mutable state of this backend, under
 *    its lock;
 *  - reads are alt=media GETs (ranged with Range), listings objects.list with prefix,
 *    delimiter '/' and pageToken, stat the object's metadata (or a listing: "directories"),
 *    puts media uploads, put-if-absent with ifGenerationMatch=0 after the same once-per-
 *    process probe as S3 (os_s3.c): a store that accepts a second put of one key with
 *    ifGenerationMatch=0 (fake-gcs-server) is refused for conditional puts, saying why.
 * The endpoint is https://storage.googleapis.com unless the credential names another
 * (an emulator). HMAC keys go to the S3 backend on the XML API instead (os_gcs_open). */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <curl/curl.h>
#include <jansson.h>

#include "common/err.h"
#include "store/objstore/os_gcs.h"
#include "store/objstore/os_http.h"
#include "store/objstore/os_remote.h"

#define GCS_DEFAULT_ENDPOINT "https://storage.googleapis.com"

typedef struct gcs_impl {
  char *bucket, *prefix; /* prefix: no leading or trailing '/', may be "" */
  char *endpoint;        /* no trailing '/' */
  os__gcs_key key;
  unsigned char key_id[32]; /* SHA-256 of private key and token_uri: the token cache key */
} gcs_impl;

/* ---- keys and URLs -------------------------------------------------------------------- */

static int gcs_key(const gcs_impl *s, const char *rel, char **out) {
  *out = NULL;
  if (strstr(rel, "://")) {
    sign_location loc;
    int rc = sign_parse_location(&loc, rel);
    if (rc) return rc;
    if (loc.kind != SIGN_LOC_GCS || strcmp(loc.bucket, s->bucket) || !os__key_under(loc.path, s->prefix)) {
      sign_location_free(&loc);
      return dd_err_set(DD_EPERM, "'%s' is not under gs://%s/%s", rel, s->bucket, s->prefix);
    }
    *out = loc.path;
    loc.path = NULL;
    sign_location_free(&loc);
    return 0;
  }
  while (rel[0] == '/') rel++;
  if (os__rel_has_dotdot(rel))
    return dd_err_set(DD_EPERM, "'%s' leaves gs://%s/%s ('..')", rel, s->bucket, s->prefix);
  if (asprintf(out, "%s%s%s", s->prefix, *s->prefix && *rel ? "/" : "", rel) < 0)
    return *out = NULL, dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

/* Percent-encodes everything but unreserved characters (an object name in a path). */
static char *gcs_enc(const char *s) {
  char *e = curl_easy_escape(NULL, s, 0), *r = e ? strdup(e) : NULL;
  curl_free(e);
  return r;
}

typedef struct gcs_url {
  char *url;
} gcs_url;

static int gcs_url_fn(void *ctx, char **out) {
  return (*out = strdup(((gcs_url *)ctx)->url)) ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* ---- tokens --------------------------------------------------------------------------- */

#define GCS_TOKENS_MAX 16

/* Access tokens of the process, by key_id; the lock guards the table (a fetch happens
 * under it, so concurrent first requests wait for one token rather than fetch many). */
static pthread_mutex_t gcs_token_lock = PTHREAD_MUTEX_INITIALIZER;
static struct { unsigned char id[32]; char *token; int64_t exp; } gcs_tokens[GCS_TOKENS_MAX];
static size_t gcs_ntokens;

static int gcs_token(gcs_impl *s, char *hdr, size_t cap) {
  int64_t now = (int64_t)time(NULL);
  pthread_mutex_lock(&gcs_token_lock);
  size_t i = 0;
  while (i < gcs_ntokens && memcmp(gcs_tokens[i].id, s->key_id, 32)) i++;
  if (i == gcs_ntokens && gcs_ntokens == GCS_TOKENS_MAX) i = 0; /* full: replace the first */
  else if (i == gcs_ntokens) memcpy(gcs_tokens[gcs_ntokens++].id, s->key_id, 32);
  int rc = 0;
  if (!gcs_tokens[i].token || gcs_tokens[i].exp - 60 <= now || memcmp(gcs_tokens[i].id, s->key_id, 32)) {
    free(gcs_tokens[i].token);
    gcs_tokens[i].token = NULL;
    memcpy(gcs_tokens[i].id, s->key_id, 32);
    rc = os__gcs_fetch_token(&s->key, now, &gcs_tokens[i].token, &gcs_tokens[i].exp);
  }
  if (!rc && (size_t)snprintf(hdr, cap, "Authorization: Bearer %s", gcs_tokens[i].token) >= cap)
    rc = dd_err_set(DD_EINVAL, "GCS access token too long");
  pthread_mutex_unlock(&gcs_token_lock);
  return rc;
}

/* One request; extra headers (NULL-terminated, at most 3) besides the token. */
static int gcs_send(gcs_impl *s, const char *method, char *url, const char *const *extra,
                    const os__http_req *base, os__http_resp *resp) {
  char auth[4096];
  int rc = gcs_token(s, auth, sizeof auth);
  const char *hl[5] = {auth, NULL};
  for (size_t i = 0; !rc && extra && extra[i] && i < 3; i++) hl[i + 1] = extra[i];
  os__http_req rq = {0};
  if (base) rq = *base;
  rq.method = method;
  rq.headers = hl;
  gcs_url u = {url};
  if (!rc) rc = os__http_do(&rq, gcs_url_fn, &u, resp);
  free(url);
  return rc;
}

static int gcs_status_err(const os__http_resp *r, const char *op, const char *key) {
  int e = r->status == 404 ? DD_ENOTFOUND : r->status == 401 || r->status == 403 ? DD_EPERM
        : r->status == 412 ? DD_EEXISTS : r->status == 409 ? DD_ECONFLICT : DD_EIO;
  if (e == DD_ENOTFOUND) return dd_err_set(e, "gcs object '%s' not found", key);
  json_t *j = r->body ? json_loads((const char *)r->body, 0, NULL) : NULL;
  const char *msg = json_string_value(json_object_get(json_object_get(j, "error"), "message"));
  int rc = dd_err_set(e, "GCS %s '%s': HTTP %ld%s%s", op, key, r->status, msg ? ": " : "", msg ? msg : "");
  json_decref(j);
  return rc;
}

/* "<endpoint>/storage/v1/b/<bucket>/o/<key>" + suffix. */
static char *gcs_obj_url(const gcs_impl *s, const char *key, const char *suffix) {
  char *k = gcs_enc(key), *u = NULL;
  if (k && asprintf(&u, "%s/storage/v1/b/%s/o/%s%s", s->endpoint, s->bucket, k, suffix) < 0) u = NULL;
  free(k);
  return u;
}

/* ---- reads ---------------------------------------------------------------------------- */

static int gcs_read(gcs_impl *s, const char *path, uint64_t off, size_t len, bool ranged,
                    os__http_resp *r, char **key) {
  int rc = gcs_key(s, path, key);
  char *url = rc ? NULL : gcs_obj_url(s, *key, "?alt=media");
  if (!rc && !url) rc = dd_err_set(DD_ENOMEM, "out of memory");
  os__http_req b = {0};
  b.range_off = off;
  b.range_len = ranged ? len : 0;
  if (!rc) rc = gcs_send(s, "GET", url, NULL, &b, r);
  return rc;
}

static int gcs_read_all(void *impl, const char *path, uint8_t **out, size_t *out_len) {
  char *key = NULL;
  os__http_resp r = {0};
  *out = NULL;
  int rc = gcs_read(impl, path, 0, 0, false, &r, &key);
  if (!rc && r.status != 200) rc = gcs_status_err(&r, "GET", key);
  if (!rc) {
    *out = r.body, *out_len = r.len;
    r.body = NULL;
  }
  os__http_resp_free(&r);
  free(key);
  return rc;
}

static int gcs_read_range(void *impl, const char *path, uint64_t offset, size_t len, uint8_t *out) {
  if (len == 0) return 0;
  char *key = NULL;
  os__http_resp r = {0};
  int rc = gcs_read(impl, path, offset, len, true, &r, &key);
  if (!rc) rc = os__http_range_copy(&r, offset, len, out, "gcs object", key);
  if (rc == 1) rc = gcs_status_err(&r, "GET", key);
  os__http_resp_free(&r);
  free(key);
  return rc;
}

/* ---- listings ------------------------------------------------------------------------- */

static int gcs_list_raw(void *impl, const char *dir, os_list *out) {
  gcs_impl *s = impl;
  char *key = NULL, *pfx = NULL, token[2048] = "";
  size_t cap = 0;
  memset(out, 0, sizeof *out);
  int rc = gcs_key(s, dir, &key);
  size_t kl = rc ? 0 : strlen(key);
  while (kl > 0 && key[kl - 1] == '/') key[--kl] = '\0';
  if (!rc && asprintf(&pfx, "%s%s", key, *key ? "/" : "") < 0) pfx = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  do {
    if (rc) break;
    char *ep = gcs_enc(pfx), *et = gcs_enc(token), *url = NULL;
    if (!ep || !et || asprintf(&url, "%s/storage/v1/b/%s/o?delimiter=%%2F&prefix=%s%s%s", s->endpoint,
                               s->bucket, ep, *token ? "&pageToken=" : "", *token ? et : "") < 0)
      url = NULL;
    free(ep);
    free(et);
    os__http_resp r = {0};
    rc = url ? gcs_send(s, "GET", url, NULL, NULL, &r) : dd_err_set(DD_ENOMEM, "out of memory");
    if (!rc && r.status != 200) rc = gcs_status_err(&r, "LIST", pfx);
    char prev[sizeof token];
    memcpy(prev, token, sizeof prev);
    if (!rc) rc = os__gcs_list_page(out, &cap, (const char *)r.body, pfx, token, sizeof token);
    if (!rc && token[0] && !strcmp(token, prev))
      rc = dd_err_set(DD_ECORRUPT, "GCS listing of '%s' repeats its page token", pfx);
    os__http_resp_free(&r);
  } while (!rc && token[0]);
  if (rc) os_list_free(out);
  else os_list_sort(out);
  free(key);
  free(pfx);
  return rc;
}

static int gcs_list(void *impl, const char *dir, os_list *out) {
  int rc = gcs_list_raw(impl, dir, out);
  if (!rc && out->count == 0)
    rc = dd_err_set(DD_ENOTFOUND, "nothing under gcs prefix '%s' of %s", dir, ((gcs_impl *)impl)->bucket);
  return rc;
}

static int gcs_stat(void *impl, const char *path, os_stat *out) {
  gcs_impl *s = impl;
  char *key = NULL;
  os__http_resp r = {0};
  memset(out, 0, sizeof *out);
  int rc = gcs_key(s, path, &key);
  bool dir = !rc && (!*key || key[strlen(key) - 1] == '/');
  if (!rc && !dir) {
    char *url = gcs_obj_url(s, key, "");
    rc = url ? gcs_send(s, "GET", url, NULL, NULL, &r) : dd_err_set(DD_ENOMEM, "out of memory");
    if (!rc && r.status == 200) rc = os__gcs_object_meta((const char *)r.body, &out->size, &out->mtime_ms);
    else if (!rc && r.status == 404) dir = true;
    else if (!rc) rc = gcs_status_err(&r, "GET metadata", key);
  }
  if (!rc && dir) {
    os_list l;
    rc = gcs_list(s, path, &l);
    out->is_dir = rc == 0;
    out->mtime_ms = -1;
    os_list_free(&l);
  }
  os__http_resp_free(&r);
  free(key);
  return rc;
}

/* ---- writes --------------------------------------------------------------------------- */

static int gcs_upload(gcs_impl *s, const char *key, const void *data, size_t len, bool if_absent,
                      long *status) {
  char *k = gcs_enc(key), *url = NULL;
  if (!k || asprintf(&url, "%s/upload/storage/v1/b/%s/o?uploadType=media&name=%s%s", s->endpoint,
                     s->bucket, k, if_absent ? "&ifGenerationMatch=0" : "") < 0)
    url = NULL;
  free(k);
  if (!url) return dd_err_set(DD_ENOMEM, "out of memory");
  static const char *const ct[] = {"Content-Type: application/octet-stream", NULL};
  os__http_req b = {0};
  b.body = data;
  b.body_len = len;
  os__http_resp r = {0};
  int rc = gcs_send(s, "POST", url, ct, &b, &r);
  *status = r.status;
  if (!rc && r.status != 200 && !(if_absent && r.status == 412)) rc = gcs_status_err(&r, "upload", key);
  os__http_resp_free(&r);
  return rc;
}

static int gcs_delete_key(gcs_impl *s, const char *key) {
  char *url = gcs_obj_url(s, key, "");
  os__http_resp r = {0};
  int rc = url ? gcs_send(s, "DELETE", url, NULL, NULL, &r) : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc && r.status != 204 && r.status != 200) rc = gcs_status_err(&r, "DELETE", key);
  os__http_resp_free(&r);
  return rc;
}

/* The probe (see the top of the file): 1 honoured, 0 ignored, or a negative error. */
static int gcs_probe(void *ctx) {
  gcs_impl *s = ctx;
  static atomic_uint seq;
  char rel[128], *key = NULL;
  snprintf(rel, sizeof rel, "_delta_log/.deltad-put-probe.%ld.%u.%lld", (long)getpid(),
           atomic_fetch_add(&seq, 1), (long long)time(NULL));
  long st[2] = {0, 0};
  int rc = gcs_key(s, rel, &key);
  for (int i = 0; i < 2 && !rc; i++) rc = gcs_upload(s, key, "probe", 5, true, &st[i]);
  if (!rc && st[0] != 200) rc = dd_err_set(DD_EIO, "GCS conditional put probe: HTTP %ld", st[0]);
  if (key && st[0] == 200 && gcs_delete_key(s, key)) dd_err_clear();
  free(key);
  return rc ? rc : st[1] == 412;
}

static int gcs_put_common(void *impl, const char *path, const void *data, size_t len, bool if_absent) {
  gcs_impl *s = impl;
  char *key = NULL, where[600];
  long st = 0;
  snprintf(where, sizeof where, "gcs|%s|%s", s->endpoint, s->bucket);
  int rc = gcs_key(s, path, &key);
  if (!rc && if_absent) rc = os__cond_put_check(where, gcs_probe, s, "GCS", s->endpoint, s->bucket,
                                                "ifGenerationMatch=0");
  if (!rc) rc = gcs_upload(s, key, data, len, if_absent, &st);
  if (!rc && st == 412) rc = dd_err_set(DD_EEXISTS, "gcs object '%s' exists", key);
  free(key);
  return rc;
}

static int gcs_put_if_absent(void *impl, const char *path, const void *data, size_t len) {
  return gcs_put_common(impl, path, data, len, true);
}

static int gcs_put(void *impl, const char *path, const void *data, size_t len) {
  return gcs_put_common(impl, path, data, len, false);
}

static int gcs_del(void *impl, const char *path) {
  char *key = NULL;
  int rc = gcs_key(impl, path, &key);
  if (!rc) rc = gcs_delete_key(impl, key);
  free(key);
  return rc;
}

/* ---- streamed puts: resumable uploads ------------------------------------------------- */

/* A put-if-absent in chunks (os_parts.c): a resumable upload session started with
 * ifGenerationMatch=0 at the first full part, each part a PUT to the session with
 * Content-Range bytes a-b/(any) (308 Resume Incomplete), the last one with the total size
 * (200; 412 when the object exists by then); a DELETE of the session cancels it. Part
 * sizes are multiples of 256 KiB, as GCS requires. An object below one part is one
 * media upload, as os_put_if_absent. */
typedef struct gcs_stream {
  os__parts parts; /* first: the os__parts callbacks get it */
  gcs_impl *s;
  char *path, *key, *session;
} gcs_stream;

static int gcs_session_start(gcs_stream *w) {
  char *k = gcs_enc(w->key), *url = NULL;
  if (!k || asprintf(&url, "%s/upload/storage/v1/b/%s/o?uploadType=resumable&name=%s"
                     "&ifGenerationMatch=0", w->s->endpoint, w->s->bucket, k) < 0)
    url = NULL;
  free(k);
  if (!url) return dd_err_set(DD_ENOMEM, "out of memory");
  static const char *const hdrs[] = {"Content-Type: application/json; charset=UTF-8",
                                     "X-Upload-Content-Type: application/octet-stream", NULL};
  os__http_req b = {0};
  b.body = "{}";
  b.body_len = 2;
  os__http_resp r = {0};
  char loc[4096] = "";
  int rc = gcs_send(w->s, "POST", url, hdrs, &b, &r);
  if (!rc && r.status == 412) rc = dd_err_set(DD_EEXISTS, "gcs object '%s' exists", w->key);
  if (!rc && r.status != 200) rc = gcs_status_err(&r, "resumable upload", w->key);
  if (!rc && (!os__http_header(&r, "Location", loc, sizeof loc) || !loc[0]))
    rc = dd_err_set(DD_EIO, "GCS resumable upload of '%s': no session in the answer", w->key);
  os__http_resp_free(&r);
  if (!rc && !(w->session = strdup(loc))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) w->parts.started = true;
  return rc;
}

/* One chunk at offset off; total is the object's size for the last one, else -1. */
static int gcs_chunk(gcs_stream *w, const uint8_t *data, size_t n, uint64_t off, int64_t total) {
  int rc = w->parts.started ? 0 : gcs_session_start(w);
  char range[96], *url = NULL;
  if (total >= 0 && n == 0)
    snprintf(range, sizeof range, "Content-Range: bytes */%lld", (long long)total);
  else if (total >= 0)
    snprintf(range, sizeof range, "Content-Range: bytes %llu-%llu/%lld", (unsigned long long)off,
             (unsigned long long)(off + n - 1), (long long)total);
  else
    snprintf(range, sizeof range, "Content-Range: bytes %llu-%llu/*", (unsigned long long)off,
             (unsigned long long)(off + n - 1));
  const char *const hdrs[] = {range, NULL};
  if (!rc && !(url = strdup(w->session))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  os__http_req b = {0};
  b.body = data;
  b.body_len = n;
  os__http_resp r = {0};
  if (!rc) rc = gcs_send(w->s, "PUT", url, hdrs, &b, &r);
  long want = total >= 0 ? 200 : 308;
  if (!rc && total >= 0 && r.status == 412) rc = dd_err_set(DD_EEXISTS, "gcs object '%s' exists", w->key);
  if (!rc && r.status != want && !(total >= 0 && r.status == 201))
    rc = gcs_status_err(&r, "resumable upload", w->key);
  /* GCS may keep fewer bytes than a chunk had (its Range says how many): not resent here,
   * the upload fails (and is cancelled) rather than leave a gap */
  char kept[96] = "";
  unsigned long long last = 0;
  if (!rc && total < 0 && (!os__http_header(&r, "Range", kept, sizeof kept) ||
                           sscanf(kept, "bytes=0-%llu", &last) != 1 || last + 1 != off + n))
    rc = dd_err_set(DD_EIO, "GCS resumable upload of '%s': the store kept '%s' of %llu bytes",
                    w->key, kept, (unsigned long long)(off + n));
  os__http_resp_free(&r);
  return rc;
}

static int gcs_up_part(os__parts *p, const uint8_t *data, size_t n, unsigned no) {
  (void)no;
  return gcs_chunk((gcs_stream *)p, data, n, p->sent, -1);
}

static int gcs_up_single(os__parts *p, const uint8_t *data, size_t n) {
  gcs_stream *w = (gcs_stream *)p;
  return gcs_put_common(w->s, w->path, data, n, true);
}

static int gcs_up_finish(os__parts *p, const uint8_t *data, size_t n, unsigned nparts) {
  (void)nparts;
  return gcs_chunk((gcs_stream *)p, data, n, p->sent, (int64_t)(p->sent + n));
}

static void gcs_up_cancel(os__parts *p) {
  gcs_stream *w = (gcs_stream *)p;
  char *url = w->session ? strdup(w->session) : NULL;
  os__http_resp r = {0};
  if (url && gcs_send(w->s, "DELETE", url, NULL, NULL, &r)) dd_err_clear(); /* 499: cancelled */
  os__http_resp_free(&r);
}

static void gcs_stream_free(os__parts *p) {
  gcs_stream *w = (gcs_stream *)p;
  os__parts_free(&w->parts);
  free(w->path);
  free(w->key);
  free(w->session);
  free(w);
}

static const os__parts_ops gcs_up_ops = {gcs_up_part, gcs_up_single, gcs_up_finish,
                                         gcs_up_cancel, gcs_stream_free};

static int gcs_stream_open(void *impl, const char *path, void **out) {
  gcs_impl *s = impl;
  *out = NULL;
  gcs_stream *w = calloc(1, sizeof *w);
  if (!w) return dd_err_set(DD_ENOMEM, "out of memory");
  w->s = s;
  os__parts_init(&w->parts, &gcs_up_ops);
  char where[600];
  snprintf(where, sizeof where, "gcs|%s|%s", s->endpoint, s->bucket);
  int rc = (w->path = strdup(path)) ? gcs_key(s, path, &w->key) : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = os__cond_put_check(where, gcs_probe, s, "GCS", s->endpoint, s->bucket,
                                   "ifGenerationMatch=0");
  if (rc) {
    gcs_stream_free(&w->parts);
    return rc;
  }
  *out = w;
  return 0;
}

/* Prefixes are not objects: see os__prefix_rmdir. */
static int gcs_rmdir(void *impl, const char *dir) {
  return os__prefix_rmdir(gcs_list_raw, impl, dir, "gcs");
}

static void gcs_free(void *impl) {
  gcs_impl *s = impl;
  if (!s) return;
  free(s->bucket);
  free(s->prefix);
  free(s->endpoint);
  os__gcs_key_free(&s->key);
  free(s);
}

static const os_vtable gcs_vt = {gcs_read_all, gcs_read_range, gcs_stat, gcs_list,
                                 gcs_put_if_absent, gcs_put, gcs_del, os__prefix_mkdirs, gcs_rmdir,
                                 gcs_free, NULL, gcs_stream_open, os__parts_write_cb,
                                 os__parts_commit_cb, os__parts_abort_cb};

/* ---- opening -------------------------------------------------------------------------- */

int os_gcs_open(os_store **out, const sign_location *loc, const sign_cred *cred) {
  *out = NULL;
  if (!loc || loc->kind != SIGN_LOC_GCS) return dd_err_set(DD_EINVAL, "not a gs location");
  if (cred && cred->kind == SIGN_CRED_AWS) { /* an HMAC key: the XML API, as S3 */
    sign_location s3 = *loc;
    sign_cred c = *cred;
    s3.kind = SIGN_LOC_S3;
    if (!c.aws_endpoint) c.aws_endpoint = GCS_DEFAULT_ENDPOINT;
    c.aws_region = "auto";
    c.aws_style = SIGN_S3_STYLE_PATH;
    return os_s3_open(out, &s3, &c);
  }
  if (!cred || cred->kind != SIGN_CRED_GCP_SA || !cred->gcp_key_json)
    return dd_err_set(DD_EINVAL, "gs://%s needs a gcp credential", loc->bucket);
  gcs_impl *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  const char *ep = cred->gcs_endpoint && *cred->gcs_endpoint ? cred->gcs_endpoint : GCS_DEFAULT_ENDPOINT;
  s->bucket = strdup(loc->bucket);
  s->prefix = strdup(loc->path ? loc->path : "");
  s->endpoint = strdup(ep);
  char *where = NULL;
  int rc = s->bucket && s->prefix && s->endpoint ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc && strncmp(ep, "https://", 8) && strncmp(ep, "http://", 7))
    rc = dd_err_set(DD_EINVAL, "GCS endpoint must start with https:// or http://");
  size_t n = rc ? 0 : strlen(s->endpoint);
  while (n > 0 && s->endpoint[n - 1] == '/') s->endpoint[--n] = '\0';
  if (!rc) rc = os__gcs_key_parse(&s->key, cred->gcp_key_json);
  if (!rc) rc = os__gcs_key_id(&s->key, s->key_id);
  if (!rc) rc = os__http_init();
  if (!rc && asprintf(&where, "gs://%s%s%s", s->bucket, *s->prefix ? "/" : "", s->prefix) < 0)
    where = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = os_store_new(out, &gcs_vt, s, where);
  free(where);
  if (rc) gcs_free(s);
  return rc;
}
