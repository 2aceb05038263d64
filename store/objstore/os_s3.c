/* os_s3.c: the S3 backend of os_store (see os_remote.h). Every request is a SigV4
 * presigned URL (store/sign) sent with os_http.c; listings are ListObjectsV2 with the
 * delimiter '/', followed across continuation tokens; batch deletes are DeleteObjects
 * (1,000 keys a request).
 *
 * Conditional puts: os_put_if_absent is one PUT with If-None-Match: *, atomic on stores
 * that honour it (AWS S3 since 2024, MinIO, moto) and silently an overwrite on stores that
 * ignore it (s3rver, older S3-compatible servers). So before the first conditional put to
 * an endpoint and bucket, this process probes it: it puts a probe object twice with
 * If-None-Match: * and expects 412 the second time, then deletes it. A store that accepts
 * the second put is refused for every conditional put (DD_EPRECOND saying why); Delta
 * commits and new data files are never written there. The answer is kept per process. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "common/err.h"
#include "store/objstore/os_http.h"
#include "store/objstore/os_remote.h"

#define S3_URL_TTL_S 900
#define S3_KEY_MAX 2048

typedef struct s3_impl {
  char *bucket, *prefix; /* prefix: no leading or trailing '/', may be "" */
  char *region, *endpoint, *akid, *secret, *token;
  sign_s3_style style;
} s3_impl;

/* ---- keys and URLs -------------------------------------------------------------------- */

/* The object key of a path relative to the root (or an absolute s3 URL in this bucket). */
static int s3_key(const s3_impl *s, const char *rel, char **out) {
  *out = NULL;
  if (strstr(rel, "://")) {
    sign_location loc;
    int rc = sign_parse_location(&loc, rel);
    if (rc) return rc;
    if (loc.kind != SIGN_LOC_S3 || strcmp(loc.bucket, s->bucket) != 0 ||
        !os__key_under(loc.path, s->prefix)) {
      sign_location_free(&loc);
      return dd_err_set(DD_EPERM, "'%s' is not under s3://%s/%s", rel, s->bucket, s->prefix);
    }
    *out = loc.path;
    loc.path = NULL;
    sign_location_free(&loc);
    return 0;
  }
  while (rel[0] == '/') rel++;
  if (os__rel_has_dotdot(rel))
    return dd_err_set(DD_EPERM, "'%s' leaves s3://%s/%s ('..')", rel, s->bucket, s->prefix);
  if (asprintf(out, "%s%s%s", s->prefix, *s->prefix && *rel ? "/" : "", rel) < 0) {
    *out = NULL;
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

typedef struct s3_url_ctx {
  const s3_impl *s;
  sign_s3_request q;
  const char *key;
} s3_url_ctx;

static int s3_make_url(void *ctx, char **out) {
  s3_url_ctx *u = ctx;
  const s3_impl *s = u->s;
  sign_aws_creds c = {s->akid, s->secret, s->token};
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  o.endpoint = s->endpoint;
  o.style = s->style;
  return sign_s3_presign_req(out, &u->q, &c, s->region, s->bucket, u->key, (int64_t)time(NULL),
                             S3_URL_TTL_S, &o);
}

/* The error for a response that is not a success. A missing bucket (404 NoSuchBucket) is
 * DD_ENOTFOUND like a missing key, but says so: it is a configuration error to fix. */
static int s3_status_err(const s3_impl *s, const os__http_resp *r, const char *method,
                         const char *key) {
  char code[128] = "", msg[512] = "";
  const char *body = r->body ? (const char *)r->body : "";
  os__xml_text(body, "Code", code, sizeof code);
  os__xml_text(body, "Message", msg, sizeof msg);
  int e = DD_EIO;
  switch (r->status) {
    case 404: e = DD_ENOTFOUND; break;
    case 401: case 403: e = DD_EPERM; break;
    case 412: e = DD_EEXISTS; break;
    case 409: e = DD_ECONFLICT; break;
    default: break;
  }
  if (e == DD_ENOTFOUND && strcmp(code, "NoSuchBucket") == 0)
    return dd_err_set(e, "S3 %s '%s': bucket '%s' does not exist (NoSuchBucket)", method, key,
                      s->bucket);
  if (e == DD_ENOTFOUND) return dd_err_set(e, "s3 object '%s' not found", key);
  /* (a HEAD response has no body, so no code or message) */
  return dd_err_set(e, "S3 %s '%s': HTTP %ld%s%s%s%s", method, key, r->status, *code ? " " : "",
                    code, *msg ? ": " : "", msg);
}

/* One request on key; *resp is filled on success (any status); free it. */
static int s3_send(const s3_impl *s, const char *method, const char *key,
                   const sign_s3_param *ps, size_t nps, const os__http_req *extra,
                   os__http_resp *resp) {
  os__http_req rq = {0};
  if (extra) rq = *extra;
  rq.method = method;
  s3_url_ctx u = {s, {method, ps, nps}, key};
  return os__http_do(&rq, s3_make_url, &u, resp);
}

/* ---- reads ---------------------------------------------------------------------------- */

static int s3_read_all(void *impl, const char *path, uint8_t **out, size_t *out_len) {
  s3_impl *s = impl;
  char *key = NULL;
  os__http_resp r = {0};
  *out = NULL;
  *out_len = 0;
  int rc = s3_key(s, path, &key);
  if (!rc) rc = s3_send(s, "GET", key, NULL, 0, NULL, &r);
  if (!rc && r.status != 200) rc = s3_status_err(s, &r, "GET", key);
  if (!rc) {
    *out = r.body;
    *out_len = r.len;
    r.body = NULL;
  }
  os__http_resp_free(&r);
  free(key);
  return rc;
}

static int s3_read_range(void *impl, const char *path, uint64_t offset, size_t len,
                         uint8_t *out) {
  s3_impl *s = impl;
  if (len == 0) return 0;
  char *key = NULL;
  os__http_resp r = {0};
  os__http_req ex = {0};
  ex.range_off = offset;
  ex.range_len = len;
  int rc = s3_key(s, path, &key);
  if (!rc) rc = s3_send(s, "GET", key, NULL, 0, &ex, &r);
  if (!rc && (rc = os__http_range_copy(&r, offset, len, out, "s3 object", key)) == 1)
    rc = s3_status_err(s, &r, "GET", key);
  os__http_resp_free(&r);
  free(key);
  return rc;
}

/* ---- listing -------------------------------------------------------------------------- */

/* See os_http.h. */
int os__s3_list_page(os_list *l, size_t *cap, const char *xml, const char *pfx,
                     char *next, size_t next_cap) {
  size_t pl = strlen(pfx);
  char key[S3_KEY_MAX], num[64], when[64];
  int rc = 0;
  const char *p = xml;
  while (!rc && (p = strstr(p, "<Contents>"))) {
    const char *end = strstr(p, "</Contents>");
    if (!end) return dd_err_set(DD_ECORRUPT, "S3 listing: unterminated <Contents>");
    size_t n = (size_t)(end - p);
    char *blk = strndup(p, n);
    if (!blk) return dd_err_set(DD_ENOMEM, "out of memory");
    key[0] = num[0] = when[0] = 0;
    os__xml_text(blk, "Key", key, sizeof key);
    os__xml_text(blk, "Size", num, sizeof num);
    os__xml_text(blk, "LastModified", when, sizeof when);
    free(blk);
    const char *name = strncmp(key, pfx, pl) == 0 ? key + pl : NULL;
    if (name && *name && !strchr(name, '/'))
      rc = os_list_add(l, cap, name, strtoll(num, NULL, 10), os__iso8601_ms(when), false);
    p = end;
  }
  for (p = xml; !rc && (p = strstr(p, "<CommonPrefixes>"));) {
    const char *after = os__xml_text(p, "Prefix", key, sizeof key);
    if (!after) break;
    size_t kl = strlen(key);
    if (kl > pl && strncmp(key, pfx, pl) == 0 && key[kl - 1] == '/') {
      key[kl - 1] = 0; /* one level below pfx only: a store could answer anything */
      if (key[pl] && !strchr(key + pl, '/')) rc = os_list_add(l, cap, key + pl, 0, -1, true);
    }
    p = after;
  }
  char trunc[16] = "";
  os__xml_text(xml, "IsTruncated", trunc, sizeof trunc);
  next[0] = 0;
  if (!rc && strcmp(trunc, "true") == 0 &&
      (!os__xml_text(xml, "NextContinuationToken", next, next_cap) || !next[0]))
    rc = dd_err_set(DD_ECORRUPT, "S3 listing is truncated but has no continuation token");
  return rc;
}

/* Lists dir into *out; an empty or absent prefix gives 0 and no entries. */
static int s3_list_raw(void *impl, const char *dir, os_list *out) {
  s3_impl *s = impl;
  char *key = NULL, *pfx = NULL;
  char token[1024] = "", prev[1024] = "";
  size_t cap = 0;
  memset(out, 0, sizeof *out);
  int rc = s3_key(s, dir, &key);
  size_t kl = rc ? 0 : strlen(key);
  while (kl > 0 && key[kl - 1] == '/') key[--kl] = '\0'; /* "dir/" names dir */
  if (!rc && asprintf(&pfx, "%s%s", key, *key ? "/" : "") < 0) {
    pfx = NULL;
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  do {
    if (rc) break;
    sign_s3_param ps[4];
    size_t n = 0;
    if (token[0]) ps[n++] = (sign_s3_param){"continuation-token", token};
    ps[n++] = (sign_s3_param){"delimiter", "/"};
    ps[n++] = (sign_s3_param){"list-type", "2"};
    ps[n++] = (sign_s3_param){"prefix", pfx};
    os__http_resp r = {0};
    rc = s3_send(s, "GET", "", ps, n, NULL, &r);
    if (!rc && r.status != 200) rc = s3_status_err(s, &r, "LIST", pfx);
    memcpy(prev, token, sizeof prev);
    if (!rc) rc = os__s3_list_page(out, &cap, (const char *)r.body, pfx, token, sizeof token);
    /* a store that hands back the token it was given would be listed forever */
    if (!rc && token[0] && strcmp(token, prev) == 0)
      rc = dd_err_set(DD_ECORRUPT, "S3 listing of '%s' repeats its continuation token", pfx);
    os__http_resp_free(&r);
  } while (!rc && token[0]);
  if (rc) os_list_free(out);
  else os_list_sort(out);
  free(key);
  free(pfx);
  return rc;
}

static int s3_list(void *impl, const char *dir, os_list *out) {
  int rc = s3_list_raw(impl, dir, out);
  if (!rc && out->count == 0)
    rc = dd_err_set(DD_ENOTFOUND, "nothing under s3 prefix '%s' of %s", dir,
                    ((s3_impl *)impl)->bucket);
  return rc;
}

/* A "directory": something lives under path/. */
static int s3_stat_dir(s3_impl *s, const char *path, os_stat *out) {
  os_list l;
  int rc = s3_list(s, path, &l);
  if (!rc) out->is_dir = true;
  out->mtime_ms = -1;
  os_list_free(&l);
  return rc;
}

static int s3_stat(void *impl, const char *path, os_stat *out) {
  s3_impl *s = impl;
  char *key = NULL;
  os__http_resp r = {0};
  memset(out, 0, sizeof *out);
  int rc = s3_key(s, path, &key);
  /* The root (key "") and "dir/" can only be directories: a HEAD there would ask about the
   * bucket itself (path style /bucket) or an object named "dir/". */
  if (!rc && (!*key || key[strlen(key) - 1] == '/')) {
    rc = s3_stat_dir(s, path, out);
    goto done;
  }
  if (!rc) rc = s3_send(s, "HEAD", key, NULL, 0, NULL, &r);
  if (!rc && r.status == 200) {
    out->size = r.content_length;
    out->mtime_ms = r.mtime_ms;
  } else if (!rc && r.status == 404) {
    rc = s3_stat_dir(s, path, out);
  } else if (!rc) {
    rc = s3_status_err(s, &r, "HEAD", key);
  }
done:
  os__http_resp_free(&r);
  free(key);
  return rc;
}

/* ---- the conditional-put probe -------------------------------------------------------- */

static atomic_uint s3_probe_seq;

/* Two conditional PUTs of one new key: 200 then 412 (or 409, a conditional write in
 * flight) means honoured, 200 then 200 ignored; anything else is an error (not kept). */
static int s3_probe_run(void *ctx) {
  const s3_impl *s = ctx;
  char *key = NULL, rel[128];
  static const char *const cond[] = {"If-None-Match: *", NULL};
  os__http_req ex = {0};
  ex.headers = cond;
  ex.body = "deltad conditional put probe";
  ex.body_len = strlen(ex.body);
  snprintf(rel, sizeof rel, "_delta_log/.deltad-put-probe.%ld.%u.%lld", (long)getpid(),
           atomic_fetch_add(&s3_probe_seq, 1), (long long)time(NULL));
  int rc = s3_key(s, rel, &key);
  long st[2] = {0, 0};
  for (int i = 0; i < 2 && !rc; i++) {
    os__http_resp r = {0};
    rc = s3_send(s, "PUT", key, NULL, 0, &ex, &r);
    st[i] = r.status;
    if (!rc && i == 0 && r.status != 200) rc = s3_status_err(s, &r, "PUT (conditional put probe)", key);
    os__http_resp_free(&r);
  }
  if (key && st[0] == 200) { /* the probe object goes whatever the answer */
    os__http_resp r = {0};
    if (s3_send(s, "DELETE", key, NULL, 0, NULL, &r) == 0 && r.status >= 300) dd_err_clear();
    os__http_resp_free(&r);
  }
  if (!rc && st[1] != 200 && st[1] != 412 && st[1] != 409)
    rc = dd_err_set(DD_EIO, "S3 conditional put probe of '%s': HTTP %ld", key, st[1]);
  free(key);
  return rc ? rc : st[1] != 200;
}

/* 0 when conditional puts to this endpoint and bucket are safe; DD_EPRECOND when the store
 * ignores If-None-Match (probed once per process). */
static int s3_conditional_ok(const s3_impl *s) {
  char where[1024];
  snprintf(where, sizeof where, "s3|%s|%s", s->endpoint ? s->endpoint : "aws", s->bucket);
  return os__cond_put_check(where, s3_probe_run, (void *)s, "S3", s->endpoint ? s->endpoint : "AWS",
                            s->bucket, "If-None-Match: *");
}

/* ---- writes --------------------------------------------------------------------------- */

static int s3_put_common(s3_impl *s, const char *path, const void *data, size_t len,
                         bool if_absent) {
  char *key = NULL;
  os__http_resp r = {0};
  static const char *const cond[] = {"If-None-Match: *", NULL};
  static const char *const plain[] = {"Content-Type: application/octet-stream", NULL};
  os__http_req ex = {0};
  ex.headers = if_absent ? cond : plain;
  ex.body = data;
  ex.body_len = len;
  int rc = s3_key(s, path, &key);
  if (!rc && if_absent) rc = s3_conditional_ok(s);
  if (!rc) rc = s3_send(s, "PUT", key, NULL, 0, &ex, &r);
  if (!rc && if_absent && r.status == 412) rc = dd_err_set(DD_EEXISTS, "s3 object '%s' exists", key);
  if (!rc && r.status != 200 && r.status != 201) rc = s3_status_err(s, &r, "PUT", key);
  os__http_resp_free(&r);
  free(key);
  return rc;
}

static int s3_put_if_absent(void *impl, const char *path, const void *data, size_t len) {
  return s3_put_common(impl, path, data, len, true);
}

static int s3_put(void *impl, const char *path, const void *data, size_t len) {
  return s3_put_common(impl, path, data, len, false);
}

static int s3_del(void *impl, const char *path) {
  s3_impl *s = impl;
  char *key = NULL;
  os__http_resp r = {0};
  int rc = s3_key(s, path, &key);
  if (!rc) rc = s3_send(s, "HEAD", key, NULL, 0, NULL, &r);
  if (!rc && r.status != 200) rc = s3_status_err(s, &r, "HEAD", key);
  os__http_resp_free(&r);
  if (!rc) rc = s3_send(s, "DELETE", key, NULL, 0, NULL, &r);
  if (!rc && r.status != 204 && r.status != 200) rc = s3_status_err(s, &r, "DELETE", key);
  os__http_resp_free(&r);
  free(key);
  return rc;
}

/* ---- batch deletes (DeleteObjects) ---------------------------------------------------- */

typedef struct s3_buf {
  char *p;
  size_t len, cap;
  bool oom;
} s3_buf;

static void s3_buf_add(s3_buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap * 2 : 4096;
    while (cap < b->len + n + 1) cap *= 2;
    char *np = realloc(b->p, cap);
    if (!np) {
      b->oom = true;
      return;
    }
    b->p = np;
    b->cap = cap;
  }
  memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

static void s3_buf_str(s3_buf *b, const char *s) { s3_buf_add(b, s, strlen(s)); }

/* Appends text with the XML special characters escaped. */
static void s3_buf_xml(s3_buf *b, const char *s) {
  for (; *s; s++) {
    const char *e = *s == '&' ? "&amp;" : *s == '<' ? "&lt;" : *s == '>' ? "&gt;"
                  : *s == '"' ? "&quot;" : *s == '\'' ? "&apos;" : NULL;
    if (e) s3_buf_str(b, e);
    else s3_buf_add(b, s, 1);
  }
}

/* The <Delete> document of a quiet DeleteObjects request for the keys of paths. */
static int s3_delete_doc(const s3_impl *s, const char *const *paths, size_t n, s3_buf *b) {
  s3_buf_str(b, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>");
  for (size_t i = 0; i < n; i++) {
    char *key = NULL;
    int rc = s3_key(s, paths[i], &key);
    if (rc) return rc;
    s3_buf_str(b, "<Object><Key>");
    s3_buf_xml(b, key);
    s3_buf_str(b, "</Key></Object>");
    free(key);
  }
  s3_buf_str(b, "</Delete>");
  return b->oom ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

static int s3_del_many(void *impl, const char *const *paths, size_t n, size_t *out_done) {
  s3_impl *s = impl;
  s3_buf b = {0};
  os__http_resp r = {0};
  *out_done = 0;
  int rc = s3_delete_doc(s, paths, n, &b);
  unsigned char md5[EVP_MAX_MD_SIZE];
  unsigned int mlen = 0;
  char hdr[64] = "Content-MD5: ";
  if (!rc && !EVP_Digest(b.p, b.len, md5, &mlen, EVP_md5(), NULL))
    rc = dd_err_set(DD_EINTERNAL, "MD5 of a DeleteObjects request failed");
  if (!rc) EVP_EncodeBlock((unsigned char *)hdr + strlen(hdr), md5, (int)mlen);
  const char *const headers[] = {hdr, "Content-Type: application/xml", NULL};
  os__http_req ex = {0};
  ex.headers = headers;
  ex.body = b.p;
  ex.body_len = b.len;
  sign_s3_param ps[1] = {{"delete", ""}};
  if (!rc) rc = s3_send(s, "POST", "", ps, 1, &ex, &r);
  if (!rc && r.status != 200) rc = s3_status_err(s, &r, "DeleteObjects", paths[0]);
  const char *body = r.body ? (const char *)r.body : "";
  const char *err = rc ? NULL : strstr(body, "<Error>");
  if (err) { /* quiet mode lists only the keys that failed */
    char key[S3_KEY_MAX] = "", code[128] = "", msg[512] = "";
    os__xml_text(err, "Key", key, sizeof key);
    os__xml_text(err, "Code", code, sizeof code);
    os__xml_text(err, "Message", msg, sizeof msg);
    size_t failed = 0;
    for (const char *e = err; (e = strstr(e, "<Error>")); e++) failed++;
    *out_done = n - failed;
    rc = dd_err_set(strcmp(code, "AccessDenied") ? DD_EIO : DD_EPERM,
                    "S3 DeleteObjects: %zu of %zu keys not deleted, first '%s': %s %s", failed, n,
                    key, code, msg);
  } else if (!rc) {
    *out_done = n;
  }
  os__http_resp_free(&r);
  free(b.p);
  return rc;
}

/* ---- streamed puts: multipart uploads ------------------------------------------------ */

/* A put-if-absent in parts (os_parts.c): CreateMultipartUpload at the first full part,
 * UploadPart for each, CompleteMultipartUpload with If-None-Match: * (AWS refuses it with
 * 412 when the key exists by then), AbortMultipartUpload when anything fails. An object
 * below one part is one conditional PUT, as os_put_if_absent. */
typedef struct s3_stream {
  os__parts parts; /* first: the os__parts callbacks get it */
  s3_impl *s;
  char *path, *key;
  char upload_id[1024];
  s3_buf done; /* <Part> elements of the parts sent */
} s3_stream;

static int s3_mpu_create(s3_stream *w) {
  static const char *const ct[] = {"Content-Type: application/octet-stream", NULL};
  os__http_req ex = {0};
  ex.headers = ct;
  sign_s3_param ps[1] = {{"uploads", ""}};
  os__http_resp r = {0};
  int rc = s3_send(w->s, "POST", w->key, ps, 1, &ex, &r);
  if (!rc && r.status != 200) rc = s3_status_err(w->s, &r, "CreateMultipartUpload", w->key);
  if (!rc && (!os__xml_text(r.body ? (const char *)r.body : "", "UploadId", w->upload_id,
                            sizeof w->upload_id) || !w->upload_id[0]))
    rc = dd_err_set(DD_EIO, "S3 CreateMultipartUpload '%s': no UploadId in the answer", w->key);
  os__http_resp_free(&r);
  if (!rc) w->parts.started = true;
  return rc;
}

static int s3_mpu_part(os__parts *p, const uint8_t *data, size_t n, unsigned no) {
  s3_stream *w = (s3_stream *)p;
  int rc = w->parts.started ? 0 : s3_mpu_create(w);
  char num[16], etag[256] = "";
  snprintf(num, sizeof num, "%u", no);
  sign_s3_param ps[2] = {{"partNumber", num}, {"uploadId", w->upload_id}};
  os__http_req ex = {0};
  ex.body = data;
  ex.body_len = n;
  os__http_resp r = {0};
  if (!rc) rc = s3_send(w->s, "PUT", w->key, ps, 2, &ex, &r);
  if (!rc && r.status != 200) rc = s3_status_err(w->s, &r, "UploadPart", w->key);
  if (!rc && !os__http_header(&r, "ETag", etag, sizeof etag))
    rc = dd_err_set(DD_EIO, "S3 UploadPart %u of '%s': no ETag in the answer", no, w->key);
  os__http_resp_free(&r);
  if (rc) return rc;
  s3_buf_str(&w->done, "<Part><PartNumber>");
  s3_buf_str(&w->done, num);
  s3_buf_str(&w->done, "</PartNumber><ETag>");
  s3_buf_xml(&w->done, etag);
  s3_buf_str(&w->done, "</ETag></Part>");
  return w->done.oom ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

static int s3_mpu_single(os__parts *p, const uint8_t *data, size_t n) {
  s3_stream *w = (s3_stream *)p;
  return s3_put_common(w->s, w->path, data, n, true);
}

static int s3_mpu_finish(os__parts *p, const uint8_t *data, size_t n, unsigned nparts) {
  s3_stream *w = (s3_stream *)p;
  int rc = s3_mpu_part(p, data, n, nparts + 1);
  s3_buf doc = {0};
  s3_buf_str(&doc, "<?xml version=\"1.0\" encoding=\"UTF-8\"?><CompleteMultipartUpload>");
  if (w->done.p) s3_buf_add(&doc, w->done.p, w->done.len);
  s3_buf_str(&doc, "</CompleteMultipartUpload>");
  if (!rc && doc.oom) rc = dd_err_set(DD_ENOMEM, "out of memory");
  static const char *const hdrs[] = {"If-None-Match: *", "Content-Type: application/xml", NULL};
  os__http_req ex = {0};
  ex.headers = hdrs;
  ex.body = doc.p;
  ex.body_len = doc.len;
  sign_s3_param ps[1] = {{"uploadId", w->upload_id}};
  os__http_resp r = {0};
  if (!rc) rc = s3_send(w->s, "POST", w->key, ps, 1, &ex, &r);
  if (!rc && r.status == 412) rc = dd_err_set(DD_EEXISTS, "s3 object '%s' exists", w->key);
  if (!rc && r.status != 200) rc = s3_status_err(w->s, &r, "CompleteMultipartUpload", w->key);
  /* a 200 may still carry an error: the store answers before it has assembled the parts */
  const char *body = r.body ? (const char *)r.body : "";
  if (!rc && strstr(body, "<Error>")) {
    char code[128] = "", msg[512] = "";
    os__xml_text(body, "Code", code, sizeof code);
    os__xml_text(body, "Message", msg, sizeof msg);
    rc = dd_err_set(strcmp(code, "PreconditionFailed") ? DD_EIO : DD_EEXISTS,
                    "S3 CompleteMultipartUpload '%s': %s %s", w->key, code, msg);
  }
  os__http_resp_free(&r);
  free(doc.p);
  return rc;
}

static void s3_mpu_cancel(os__parts *p) {
  s3_stream *w = (s3_stream *)p;
  sign_s3_param ps[1] = {{"uploadId", w->upload_id}};
  os__http_resp r = {0};
  if (s3_send(w->s, "DELETE", w->key, ps, 1, NULL, &r) == 0 && r.status >= 300) dd_err_clear();
  os__http_resp_free(&r);
}

static void s3_stream_free(os__parts *p) {
  s3_stream *w = (s3_stream *)p;
  os__parts_free(&w->parts);
  free(w->path);
  free(w->key);
  free(w->done.p);
  free(w);
}

static const os__parts_ops s3_mpu_ops = {s3_mpu_part, s3_mpu_single, s3_mpu_finish,
                                         s3_mpu_cancel, s3_stream_free};

static int s3_stream_open(void *impl, const char *path, void **out) {
  s3_impl *s = impl;
  *out = NULL;
  s3_stream *w = calloc(1, sizeof *w);
  if (!w) return dd_err_set(DD_ENOMEM, "out of memory");
  w->s = s;
  os__parts_init(&w->parts, &s3_mpu_ops);
  int rc = (w->path = strdup(path)) ? s3_key(s, path, &w->key) : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = s3_conditional_ok(s); /* as os_put_if_absent: refused where ignored */
  if (rc) {
    s3_stream_free(&w->parts);
    return rc;
  }
  *out = w;
  return 0;
}

/* Prefixes are not objects: see os__prefix_rmdir. */
static int s3_rmdir(void *impl, const char *dir) {
  return os__prefix_rmdir(s3_list_raw, impl, dir, "s3");
}

static void s3_free(void *impl) {
  s3_impl *s = impl;
  if (!s) return;
  free(s->bucket);
  free(s->prefix);
  free(s->region);
  free(s->endpoint);
  free(s->akid);
  free(s->secret);
  free(s->token);
  free(s);
}

static const os_vtable s3_vt = {s3_read_all, s3_read_range, s3_stat, s3_list,
                                s3_put_if_absent, s3_put, s3_del, os__prefix_mkdirs, s3_rmdir,
                                s3_free, s3_del_many, s3_stream_open, os__parts_write_cb,
                                os__parts_commit_cb, os__parts_abort_cb};

/* ---- opening -------------------------------------------------------------------------- */

static char *s3_dup(const char *s, bool *oom) {
  if (!s || !*s) return NULL;
  char *d = strdup(s);
  if (!d) *oom = true;
  return d;
}

int os_s3_open(os_store **out, const sign_location *loc, const sign_cred *cred) {
  *out = NULL;
  if (!loc || loc->kind != SIGN_LOC_S3) return dd_err_set(DD_EINVAL, "not an s3 location");
  if (!cred || cred->kind != SIGN_CRED_AWS)
    return dd_err_set(DD_EINVAL, "s3://%s needs an AWS access-key credential", loc->bucket);
  s3_impl *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  bool oom = false;
  s->bucket = s3_dup(loc->bucket, &oom);
  s->prefix = strdup(loc->path ? loc->path : "");
  s->region = s3_dup(cred->aws_region && *cred->aws_region ? cred->aws_region : "us-east-1", &oom);
  s->endpoint = s3_dup(cred->aws_endpoint, &oom);
  s->akid = s3_dup(cred->aws.access_key_id, &oom);
  s->secret = s3_dup(cred->aws.secret_access_key, &oom);
  s->token = s3_dup(cred->aws.session_token, &oom);
  s->style = cred->aws_style;
  char *where = NULL;
  int rc = oom || !s->prefix ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
  if (!rc && (!s->akid || !s->secret))
    rc = dd_err_set(DD_EINVAL, "the AWS credential for s3://%s has no access key or secret",
                    loc->bucket);
  if (!rc) { /* checks the endpoint, region and bucket before any request, as os_azure does */
    char *probe = NULL;
    s3_url_ctx u = {s, {"GET", NULL, 0}, ""};
    rc = s3_make_url(&u, &probe);
    free(probe);
  }
  if (!rc) rc = os__http_init();
  if (!rc && asprintf(&where, "s3://%s%s%s", s->bucket, *s->prefix ? "/" : "", s->prefix) < 0) {
    where = NULL;
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  if (!rc) rc = os_store_new(out, &s3_vt, s, where);
  free(where);
  if (rc) s3_free(s);
  return rc;
}
