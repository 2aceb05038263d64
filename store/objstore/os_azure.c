/* os_azure.c: the Azure Blob Storage backend of os_store (see os_remote.h), over the Blob
 * service REST API: Get Blob (with Range), Get Blob Properties, List Blobs (delimiter '/',
 * followed across markers), Put Blob (block blobs), Delete Blob and Blob Batch deletes
 * (os_azure_batch.c), sent with os_http.c.
 * Every request carries a SAS: a container SAS (sr=c) made by store/sign for each request
 * from an account key, or the stored SAS token of the credential; with a service principal
 * it carries an OAuth bearer token instead (os_azure_ad.c). ADLS Gen2 (abfss://, dfs
 * host) tables are read through the blob endpoint of the same account. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/rand.h>

#include "common/buf.h"
#include "common/err.h"
#include "store/objstore/os_http.h"
#include "store/objstore/os_remote.h"

#define AZ_SAS_TTL_S 900
#define AZ_CLOCK_SKEW_S 300 /* st is set this far in the past */
#define AZ_SAS_PERMS "rcwdl"
#define AZ_NAME_MAX 2048

typedef struct az_impl {
  char *account, *container, *prefix; /* prefix: no leading or trailing '/', may be "" */
  char *endpoint;                     /* blob base URL (emulator) or NULL */
  char *suffix;                       /* endpoint suffix or NULL (core.windows.net) */
  char *key;                          /* account key (base64) or NULL */
  char *sas;                          /* stored SAS token or NULL */
  char *tenant, *client_id, *secret;  /* service principal (no key, no SAS) or NULL */
  char *authority;                    /* its authority host or NULL */
  char version[48];                   /* "x-ms-version: <v>" */
} az_impl;

/* ---- blob names and URLs -------------------------------------------------------------- */

/* The blob name of a path relative to the root (or an absolute URL in this container). */
static int az_blob(const az_impl *s, const char *rel, char **out) {
  *out = NULL;
  if (strstr(rel, "://")) {
    sign_location loc;
    int rc = sign_parse_location(&loc, rel);
    if (rc) return rc;
    bool same = loc.kind == SIGN_LOC_AZURE && strcmp(loc.bucket, s->container) == 0 &&
                (!loc.account || strcmp(loc.account, s->account) == 0) &&
                os__key_under(loc.path, s->prefix);
    if (!same) {
      sign_location_free(&loc);
      return dd_err_set(DD_EPERM, "'%s' is not under '%s/%s' of Azure account '%s'", rel,
                        s->container, s->prefix, s->account);
    }
    *out = loc.path;
    loc.path = NULL;
    sign_location_free(&loc);
    return 0;
  }
  while (rel[0] == '/') rel++;
  if (os__rel_has_dotdot(rel))
    return dd_err_set(DD_EPERM, "'%s' leaves '%s/%s' ('..')", rel, s->container, s->prefix);
  if (asprintf(out, "%s%s%s", s->prefix, *s->prefix && *rel ? "/" : "", rel) < 0) {
    *out = NULL;
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

typedef struct az_url_ctx {
  const az_impl *s;
  const char *blob; /* "" for container requests */
  const sign_azure_param *ps;
  size_t nps;
} az_url_ctx;

static int az_make_url(void *ctx, char **out) {
  az_url_ctx *u = ctx;
  const az_impl *s = u->s;
  sign_azure_opts o = SIGN_AZURE_OPTS_INIT;
  o.endpoint_suffix = s->suffix;
  o.blob_endpoint = s->endpoint;
  char *sas = NULL;
  int rc = 0;
  if (s->secret) /* a service principal: the bearer token is a header, not in the URL */
    return sign_azure_request_url(out, s->account, s->container, u->blob, u->ps, u->nps, NULL, &o);
  if (s->key) {
    int64_t now = (int64_t)time(NULL);
    rc = sign_azure_container_sas(&sas, s->account, s->key, s->container, now - AZ_CLOCK_SKEW_S,
                                  now + AZ_SAS_TTL_S, AZ_SAS_PERMS, SIGN_AZURE_VERSION);
  }
  if (!rc)
    rc = sign_azure_request_url(out, s->account, s->container, u->blob, u->ps, u->nps,
                                s->key ? sas : s->sas, &o);
  free(sas);
  return rc;
}

/* The error for a response that is not a success. */
static int az_status_err(const os__http_resp *r, const char *op, const char *blob) {
  char code[128] = "", msg[512] = "";
  const char *body = r->body ? (const char *)r->body : "";
  if (!os__xml_text(body, "Code", code, sizeof code))
    os__http_header(r, "x-ms-error-code", code, sizeof code);
  if (os__xml_text(body, "Message", msg, sizeof msg)) msg[strcspn(msg, "\r\n")] = 0;
  int e = DD_EIO;
  switch (r->status) {
    case 404: e = DD_ENOTFOUND; break;
    case 401: case 403: e = DD_EPERM; break;
    case 412: e = DD_EEXISTS; break;
    case 409: e = DD_ECONFLICT; break;
    default: break;
  }
  if (e == DD_ENOTFOUND && strcmp(code, "ContainerNotFound") != 0)
    return dd_err_set(e, "azure blob '%s' not found", blob);
  return dd_err_set(e, "Azure %s '%s': HTTP %ld %s%s%s", op, blob, r->status, code,
                    *msg ? ": " : "", msg);
}

/* The service principal of s as a credential (borrowed strings). */
static sign_cred az_client_cred(const az_impl *s) {
  sign_cred c = {0};
  c.kind = SIGN_CRED_AZURE_CLIENT;
  c.azure_account = s->account;
  c.azure_tenant = s->tenant;
  c.azure_client_id = s->client_id;
  c.azure_client_secret = s->secret;
  c.azure_authority = s->authority;
  c.azure_endpoint = s->endpoint;
  return c;
}

/* One request; *resp is filled on success (any status); free it. extra_hdr may be NULL. */
static int az_send(const az_impl *s, const char *method, const char *blob,
                   const sign_azure_param *ps, size_t nps, const char *const *extra_hdr,
                   const os__http_req *extra, os__http_resp *resp) {
  const char *hdrs[9];
  char bearer[8192];
  size_t n = 0;
  hdrs[n++] = s->version;
  if (s->secret) {
    sign_cred c = az_client_cred(s);
    int rc = os_azure_bearer(&c, bearer, sizeof bearer);
    if (rc) return rc;
    hdrs[n++] = bearer;
  }
  for (const char *const *h = extra_hdr; h && *h && n < 7; h++) hdrs[n++] = *h;
  hdrs[n] = NULL;
  os__http_req rq = {0};
  if (extra) rq = *extra;
  rq.method = method;
  rq.headers = hdrs;
  az_url_ctx u = {s, blob, ps, nps};
  return os__http_do(&rq, az_make_url, &u, resp);
}

static int az_need_blob(const char *blob, const char *path) {
  return *blob ? 0 : dd_err_set(DD_EINVAL, "'%s' names the container root, not a blob", path);
}

/* ---- reads ---------------------------------------------------------------------------- */

static int az_read_all(void *impl, const char *path, uint8_t **out, size_t *out_len) {
  az_impl *s = impl;
  char *blob = NULL;
  os__http_resp r = {0};
  *out = NULL;
  *out_len = 0;
  int rc = az_blob(s, path, &blob);
  if (!rc) rc = az_need_blob(blob, path);
  if (!rc) rc = az_send(s, "GET", blob, NULL, 0, NULL, NULL, &r);
  if (!rc && r.status != 200) rc = az_status_err(&r, "GET", blob);
  if (!rc) {
    *out = r.body;
    *out_len = r.len;
    r.body = NULL;
  }
  os__http_resp_free(&r);
  free(blob);
  return rc;
}

static int az_read_range(void *impl, const char *path, uint64_t offset, size_t len,
                         uint8_t *out) {
  az_impl *s = impl;
  if (len == 0) return 0;
  char *blob = NULL;
  os__http_resp r = {0};
  os__http_req ex = {0};
  ex.range_off = offset;
  ex.range_len = len;
  int rc = az_blob(s, path, &blob);
  if (!rc) rc = az_need_blob(blob, path);
  if (!rc) rc = az_send(s, "GET", blob, NULL, 0, NULL, &ex, &r);
  if (!rc && (rc = os__http_range_copy(&r, offset, len, out, "azure blob", blob)) == 1)
    rc = az_status_err(&r, "GET", blob);
  os__http_resp_free(&r);
  free(blob);
  return rc;
}

/* ---- listing -------------------------------------------------------------------------- */

/* One <Blob> element. On accounts with a hierarchical namespace (ADLS Gen2) a directory is
 * also listed as a blob whose ResourceType is "directory". */
static int az_list_blob(os_list *l, size_t *cap, const char *blk, const char *pfx) {
  char name[AZ_NAME_MAX] = "", num[64] = "", when[64] = "", kind[32] = "";
  os__xml_text(blk, "Name", name, sizeof name);
  os__xml_text(blk, "Content-Length", num, sizeof num);
  os__xml_text(blk, "Last-Modified", when, sizeof when);
  os__xml_text(blk, "ResourceType", kind, sizeof kind);
  size_t pl = strlen(pfx);
  const char *base = strncmp(name, pfx, pl) == 0 ? name + pl : NULL;
  if (!base || !*base || strchr(base, '/')) return 0;
  bool dir = strcmp(kind, "directory") == 0;
  return os_list_add(l, cap, base, dir ? 0 : strtoll(num, NULL, 10), os__http_date_ms(when),
                      dir);
}

/* See os_http.h. */
int os__azure_list_page(os_list *l, size_t *cap, const char *xml, const char *pfx, char *next,
                        size_t next_cap) {
  int rc = 0;
  const char *p = xml;
  while (!rc && (p = strstr(p, "<Blob>"))) {
    const char *end = strstr(p, "</Blob>");
    if (!end) return dd_err_set(DD_ECORRUPT, "Azure listing: unterminated <Blob>");
    char *blk = strndup(p, (size_t)(end - p));
    if (!blk) return dd_err_set(DD_ENOMEM, "out of memory");
    rc = az_list_blob(l, cap, blk, pfx);
    free(blk);
    p = end;
  }
  size_t pl = strlen(pfx);
  char name[AZ_NAME_MAX];
  for (p = xml; !rc && (p = strstr(p, "<BlobPrefix>"));) {
    const char *after = os__xml_text(p, "Name", name, sizeof name);
    if (!after) break;
    size_t nl = strlen(name);
    if (nl > pl && strncmp(name, pfx, pl) == 0 && name[nl - 1] == '/') {
      name[nl - 1] = 0; /* one level below pfx only: a store could answer anything */
      if (name[pl] && !strchr(name + pl, '/')) rc = os_list_add(l, cap, name + pl, 0, -1, true);
    }
    p = after;
  }
  next[0] = 0;
  if (!rc) os__xml_text(xml, "NextMarker", next, next_cap);
  return rc;
}

static int az_cmp_entry(const void *a, const void *b) {
  const os_entry *x = a, *y = b;
  int c = strcmp(x->name, y->name);
  return c ? c : (int)y->is_dir - (int)x->is_dir; /* a directory before a same-named blob */
}

/* Sorts and drops a blob listed under the same name as a directory (ADLS Gen2). */
static void az_sort_dedupe(os_list *l) {
  qsort(l->entries, l->count, sizeof *l->entries, az_cmp_entry);
  size_t w = 0;
  for (size_t i = 0; i < l->count; i++) {
    if (w > 0 && strcmp(l->entries[w - 1].name, l->entries[i].name) == 0) {
      free(l->entries[i].name);
      continue;
    }
    l->entries[w++] = l->entries[i];
  }
  l->count = w;
}

static int az_list(void *impl, const char *dir, os_list *out) {
  az_impl *s = impl;
  char *blob = NULL, *pfx = NULL;
  char marker[4096] = "";
  size_t cap = 0;
  memset(out, 0, sizeof *out);
  int rc = az_blob(s, dir, &blob);
  if (!rc && asprintf(&pfx, "%s%s", blob, *blob ? "/" : "") < 0) {
    pfx = NULL;
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  do {
    if (rc) break;
    sign_azure_param ps[5] = {{"restype", "container"}, {"comp", "list"}, {"delimiter", "/"},
                              {"prefix", pfx}, {"marker", marker}};
    os__http_resp r = {0};
    char prev[sizeof marker];
    memcpy(prev, marker, sizeof marker);
    rc = az_send(s, "GET", "", ps, marker[0] ? 5 : 4, NULL, NULL, &r);
    if (!rc && r.status != 200) rc = az_status_err(&r, "LIST", pfx);
    if (!rc) rc = os__azure_list_page(out, &cap, (const char *)r.body, pfx, marker, sizeof marker);
    if (!rc && marker[0] && strcmp(marker, prev) == 0)
      rc = dd_err_set(DD_ECORRUPT, "Azure listing of '%s' repeats its marker", pfx);
    os__http_resp_free(&r);
  } while (!rc && marker[0]);
  if (!rc && out->count == 0)
    rc = dd_err_set(DD_ENOTFOUND, "nothing under azure prefix '%s'", pfx);
  if (rc) os_list_free(out);
  else az_sort_dedupe(out);
  free(blob);
  free(pfx);
  return rc;
}

/* HEAD of a blob that is an ADLS Gen2 directory. */
static bool az_is_dir_blob(const os__http_resp *r) {
  char v[32];
  if (os__http_header(r, "x-ms-resource-type", v, sizeof v) && strcmp(v, "directory") == 0)
    return true;
  return os__http_header(r, "x-ms-meta-hdi_isfolder", v, sizeof v) && strcasecmp(v, "true") == 0;
}

static int az_stat(void *impl, const char *path, os_stat *out) {
  az_impl *s = impl;
  char *blob = NULL;
  os__http_resp r = {0};
  memset(out, 0, sizeof *out);
  int rc = az_blob(s, path, &blob);
  if (!rc && *blob) rc = az_send(s, "HEAD", blob, NULL, 0, NULL, NULL, &r);
  if (!rc && *blob && r.status == 200) {
    out->size = r.content_length;
    out->mtime_ms = r.mtime_ms;
    if (az_is_dir_blob(&r)) {
      out->is_dir = true;
      out->size = 0;
    }
  } else if (!rc && (!*blob || r.status == 404)) {
    os_list l; /* a "directory": something lives under blob/ */
    rc = az_list(impl, path, &l);
    if (!rc) out->is_dir = true;
    os_list_free(&l);
  } else if (!rc) {
    rc = az_status_err(&r, "HEAD", blob);
  }
  os__http_resp_free(&r);
  free(blob);
  return rc;
}

/* ---- writes --------------------------------------------------------------------------- */

static int az_put_common(az_impl *s, const char *path, const void *data, size_t len,
                         bool if_absent) {
  char *blob = NULL;
  os__http_resp r = {0};
  static const char *const cond[] = {"x-ms-blob-type: BlockBlob",
                                     "Content-Type: application/octet-stream",
                                     "If-None-Match: *", NULL};
  os__http_req ex = {0};
  ex.body = data;
  ex.body_len = len;
  int rc = az_blob(s, path, &blob);
  if (!rc) rc = az_need_blob(blob, path);
  /* without the condition: the first two headers only */
  const char *const plain[] = {cond[0], cond[1], NULL};
  if (!rc) rc = az_send(s, "PUT", blob, NULL, 0, if_absent ? cond : plain, &ex, &r);
  if (!rc && if_absent && (r.status == 409 || r.status == 412))
    rc = dd_err_set(DD_EEXISTS, "azure blob '%s' exists", blob);
  else if (!rc && r.status != 201 && r.status != 200)
    rc = az_status_err(&r, "PUT", blob);
  os__http_resp_free(&r);
  free(blob);
  return rc;
}

static int az_put_if_absent(void *impl, const char *path, const void *data, size_t len) {
  return az_put_common(impl, path, data, len, true);
}

static int az_put(void *impl, const char *path, const void *data, size_t len) {
  return az_put_common(impl, path, data, len, false);
}

static int az_del(void *impl, const char *path) {
  az_impl *s = impl;
  char *blob = NULL;
  os__http_resp r = {0};
  int rc = az_blob(s, path, &blob);
  if (!rc) rc = az_need_blob(blob, path);
  if (!rc) rc = az_send(s, "DELETE", blob, NULL, 0, NULL, NULL, &r);
  if (!rc && r.status != 202 && r.status != 200) rc = az_status_err(&r, "DELETE", blob);
  os__http_resp_free(&r);
  free(blob);
  return rc;
}

/* Up to OS__AZURE_BATCH_MAX blobs in one Blob Batch request (container-scoped). */
static int az_del_batch(az_impl *s, const char *const *paths, size_t n, size_t *done) {
  char **urls = calloc(n + 1, sizeof *urls), *body = NULL, *blob = NULL;
  long *st = calloc(n + 1, sizeof *st);
  char bearer[8192], boundary[64], ctype[128], err[256] = "";
  size_t blen = 0;
  os__http_resp r = {0};
  int rc = urls && st ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc && s->secret) {
    sign_cred c = az_client_cred(s);
    rc = os_azure_bearer(&c, bearer, sizeof bearer);
  }
  for (size_t i = 0; !rc && i < n; i++) {
    free(blob), blob = NULL;
    rc = az_blob(s, paths[i], &blob);
    if (!rc) rc = az_need_blob(blob, paths[i]);
    az_url_ctx u = {s, blob, NULL, 0};
    if (!rc) rc = az_make_url(&u, &urls[i]);
  }
  unsigned char rnd[8] = {0}; /* the boundary must not occur in the body: a random one */
  if (!rc && RAND_bytes(rnd, sizeof rnd) != 1) rc = dd_err_set(DD_EINTERNAL, "RAND_bytes failed");
  snprintf(boundary, sizeof boundary, "batch_%02x%02x%02x%02x%02x%02x%02x%02x", rnd[0], rnd[1], rnd[2], rnd[3],
           rnd[4], rnd[5], rnd[6], rnd[7]);
  snprintf(ctype, sizeof ctype, "Content-Type: multipart/mixed; boundary=%s", boundary);
  if (!rc) rc = os__azure_batch_body(&body, &blen, boundary, (const char *const *)urls, n, s->secret ? bearer : NULL);
  const char *const hdrs[] = {ctype, NULL};
  os__http_req ex = {0};
  ex.body = body, ex.body_len = blen;
  const sign_azure_param ps[2] = {{"restype", "container"}, {"comp", "batch"}};
  if (!rc) rc = az_send(s, "POST", "", ps, 2, hdrs, &ex, &r);
  if (!rc && r.status != 202) rc = az_status_err(&r, "Blob Batch", paths[0]);
  char rb[128] = "";
  if (!rc && (!os__http_header(&r, "Content-Type", rb, sizeof rb) || !strstr(rb, "boundary=")))
    rc = dd_err_set(DD_EIO, "Azure Blob Batch: the answer is not multipart");
  if (!rc) rc = os__azure_batch_parse(r.body ? (const char *)r.body : "", strstr(rb, "boundary=") + 9, n, st, err,
                                      sizeof err);
  for (size_t i = 0; !rc && i < n; i++) {
    if (st[i] == 202 || st[i] == 200 || st[i] == 404) (*done)++;
    else rc = dd_err_set(st[i] == 403 ? DD_EPERM : DD_EIO, "Azure Blob Batch: deleting '%s': %s", paths[i], err);
  }
  os__http_resp_free(&r);
  for (size_t i = 0; urls && i < n; i++) free(urls[i]);
  free(urls), free(st), free(body), free(blob);
  OPENSSL_cleanse(bearer, sizeof bearer);
  return rc;
}

static int az_del_many(void *impl, const char *const *paths, size_t n, size_t *out_done) {
  *out_done = 0;
  int rc = 0;
  for (size_t i = 0; i < n && !rc; i += OS__AZURE_BATCH_MAX)
    rc = az_del_batch(impl, paths + i, n - i < OS__AZURE_BATCH_MAX ? n - i : OS__AZURE_BATCH_MAX, out_done);
  return rc;
}

/* ---- streamed puts: blocks ------------------------------------------------------------ */

/* A put-if-absent in blocks (os_parts.c): Put Block for each part (block IDs of one length,
 * as Azure requires: base64 of "deltad%06u"), then Put Block List with If-None-Match: *
 * (409 or 412 when the blob exists by then). Uncommitted blocks are not a blob: a failed
 * or aborted stream leaves nothing to list or read (Azure drops them within a week, or at
 * the next commit of that name). An object below one part is one Put Blob. */
typedef struct az_stream {
  os__parts parts; /* first: the os__parts callbacks get it */
  az_impl *s;
  char *path, *blob;
  dd_buf ids; /* <Latest> elements of the blocks sent */
} az_stream;

static void az_block_id(char out[17], unsigned no) {
  char raw[13]; /* 12 bytes: 16 characters of base64, no padding */
  snprintf(raw, sizeof raw, "deltad%06u", no % 1000000u);
  EVP_EncodeBlock((unsigned char *)out, (const unsigned char *)raw, 12);
}

static int az_block_put(os__parts *p, const uint8_t *data, size_t n, unsigned no) {
  az_stream *w = (az_stream *)p;
  char id[17];
  az_block_id(id, no);
  const sign_azure_param ps[2] = {{"comp", "block"}, {"blockid", id}};
  os__http_req ex = {0};
  ex.body = data;
  ex.body_len = n;
  os__http_resp r = {0};
  w->parts.started = true; /* (nothing to remove: uncommitted blocks are not a blob) */
  int rc = az_send(w->s, "PUT", w->blob, ps, 2, NULL, &ex, &r);
  if (!rc && r.status != 201) rc = az_status_err(&r, "Put Block", w->blob);
  os__http_resp_free(&r);
  if (!rc) dd_buf_printf(&w->ids, "<Latest>%s</Latest>", id);
  return !rc && w->ids.oom ? dd_err_set(DD_ENOMEM, "out of memory") : rc;
}

static int az_block_single(os__parts *p, const uint8_t *data, size_t n) {
  az_stream *w = (az_stream *)p;
  return az_put_common(w->s, w->path, data, n, true);
}

static int az_block_finish(os__parts *p, const uint8_t *data, size_t n, unsigned nparts) {
  az_stream *w = (az_stream *)p;
  int rc = az_block_put(p, data, n, nparts + 1);
  dd_buf doc = {0};
  dd_buf_printf(&doc, "<?xml version=\"1.0\" encoding=\"utf-8\"?><BlockList>%s</BlockList>",
                w->ids.p ? w->ids.p : "");
  if (!rc && doc.oom) rc = dd_err_set(DD_ENOMEM, "out of memory");
  static const char *const hdrs[] = {"Content-Type: application/xml",
                                     "x-ms-blob-content-type: application/octet-stream",
                                     "If-None-Match: *", NULL};
  const sign_azure_param ps[1] = {{"comp", "blocklist"}};
  os__http_req ex = {0};
  ex.body = doc.p;
  ex.body_len = doc.len;
  os__http_resp r = {0};
  if (!rc) rc = az_send(w->s, "PUT", w->blob, ps, 1, hdrs, &ex, &r);
  if (!rc && (r.status == 409 || r.status == 412))
    rc = dd_err_set(DD_EEXISTS, "azure blob '%s' exists", w->blob);
  else if (!rc && r.status != 201)
    rc = az_status_err(&r, "Put Block List", w->blob);
  os__http_resp_free(&r);
  dd_buf_free(&doc);
  return rc;
}

static void az_block_cancel(os__parts *p) { (void)p; }

static void az_stream_free(os__parts *p) {
  az_stream *w = (az_stream *)p;
  os__parts_free(&w->parts);
  free(w->path);
  free(w->blob);
  dd_buf_free(&w->ids);
  free(w);
}

static const os__parts_ops az_block_ops = {az_block_put, az_block_single, az_block_finish,
                                           az_block_cancel, az_stream_free};

static int az_stream_open(void *impl, const char *path, void **out) {
  *out = NULL;
  az_stream *w = calloc(1, sizeof *w);
  if (!w) return dd_err_set(DD_ENOMEM, "out of memory");
  w->s = impl;
  os__parts_init(&w->parts, &az_block_ops);
  int rc = (w->path = strdup(path)) ? az_blob(w->s, path, &w->blob) : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = az_need_blob(w->blob, path);
  if (rc) {
    az_stream_free(&w->parts);
    return rc;
  }
  *out = w;
  return 0;
}

static int az_mkdirs(void *impl, const char *dir) {
  (void)impl;
  (void)dir;
  return 0;
}

static int az_rmdir(void *impl, const char *dir) {
  os_list l;
  int rc = az_list(impl, dir, &l);
  size_t n = l.count;
  os_list_free(&l);
  if (rc == DD_ENOTFOUND) return 0;
  if (rc) return rc;
  return n ? dd_err_set(DD_EPRECOND, "azure prefix '%s' is not empty", dir) : 0;
}

static void az_free(void *impl) {
  az_impl *s = impl;
  if (!s) return;
  free(s->account);
  free(s->container);
  free(s->prefix);
  free(s->endpoint);
  free(s->suffix);
  if (s->key) OPENSSL_cleanse(s->key, strlen(s->key));
  if (s->secret) OPENSSL_cleanse(s->secret, strlen(s->secret));
  free(s->key);
  free(s->sas);
  free(s->tenant);
  free(s->client_id);
  free(s->secret);
  free(s->authority);
  free(s);
}

static const os_vtable az_vt = {az_read_all, az_read_range, az_stat, az_list,
                                az_put_if_absent, az_put, az_del, az_mkdirs, az_rmdir,
                                az_free, az_del_many, az_stream_open, os__parts_write_cb,
                                os__parts_commit_cb, os__parts_abort_cb};

/* ---- opening -------------------------------------------------------------------------- */

static char *az_dup(const char *s, bool *oom) {
  if (!s || !*s) return NULL;
  char *d = strdup(s);
  if (!d) *oom = true;
  return d;
}

/* x-ms-version: the SAS version, so a request is understood as its SAS was written. */
static void az_version(az_impl *s) {
  const char *v = SIGN_AZURE_VERSION;
  char sv[16] = "";
  const char *p = s->sas ? strstr(s->sas, "sv=") : NULL;
  if (p && (p == s->sas || p[-1] == '&' || p[-1] == '?')) {
    size_t n = strcspn(p + 3, "&");
    if (n == 10 && p[3 + 4] == '-' && p[3 + 7] == '-') {
      memcpy(sv, p + 3, 10);
      v = sv;
    }
  }
  snprintf(s->version, sizeof s->version, "x-ms-version: %s", v);
}

/* The root as a URL (messages, cache keys, and absolute paths in logs made relative). */
static int az_where(char **out, const sign_location *loc, const az_impl *s) {
  const char *sch = loc->scheme;
  int n;
  if (loc->account) {
    bool dfs = strncmp(sch, "abfs", 4) == 0;
    n = asprintf(out, "%s://%s@%s.%s.%s%s%s", sch, s->container, s->account, dfs ? "dfs" : "blob",
                 loc->endpoint_suffix ? loc->endpoint_suffix : "core.windows.net",
                 *s->prefix ? "/" : "", s->prefix);
  } else {
    n = asprintf(out, "%s://%s%s%s", sch, s->container, *s->prefix ? "/" : "", s->prefix);
  }
  if (n < 0) {
    *out = NULL;
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

static int az_check_cred(const sign_location *loc, const sign_cred *cred, const char **acct) {
  if (!cred || (cred->kind != SIGN_CRED_AZURE_KEY && cred->kind != SIGN_CRED_AZURE_SAS &&
                cred->kind != SIGN_CRED_AZURE_CLIENT))
    return dd_err_set(DD_EINVAL, "Azure container '%s' needs an Azure account-key, SAS or "
                      "service-principal credential", loc->bucket);
  const char *ca = cred->azure_account && *cred->azure_account ? cred->azure_account : NULL;
  if (loc->account && ca && strcmp(loc->account, ca) != 0)
    return dd_err_set(DD_EINVAL, "credential is for Azure account '%s', location is in '%s'",
                      ca, loc->account);
  *acct = loc->account ? loc->account : ca;
  if (!*acct)
    return dd_err_set(DD_EINVAL, "%s://%s names no storage account and the credential has none",
                      loc->scheme, loc->bucket);
  if (cred->kind == SIGN_CRED_AZURE_KEY && (!cred->azure_key_b64 || !*cred->azure_key_b64))
    return dd_err_set(DD_EINVAL, "the Azure credential for account '%s' has no key", *acct);
  if (cred->kind == SIGN_CRED_AZURE_SAS && (!cred->azure_sas || !*cred->azure_sas))
    return dd_err_set(DD_EINVAL, "the Azure credential for account '%s' has no SAS token", *acct);
  return 0;
}

int os_azure_open(os_store **out, const sign_location *loc, const sign_cred *cred) {
  *out = NULL;
  if (!loc || loc->kind != SIGN_LOC_AZURE) return dd_err_set(DD_EINVAL, "not an Azure location");
  const char *acct = NULL;
  int rc = az_check_cred(loc, cred, &acct);
  if (rc) return rc;
  az_impl *s = calloc(1, sizeof *s);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  bool oom = false;
  s->account = az_dup(acct, &oom);
  s->container = az_dup(loc->bucket, &oom);
  s->prefix = strdup(loc->path ? loc->path : "");
  s->endpoint = az_dup(cred->azure_endpoint, &oom);
  s->suffix = az_dup(loc->endpoint_suffix, &oom);
  if (cred->kind == SIGN_CRED_AZURE_KEY) {
    s->key = az_dup(cred->azure_key_b64, &oom);
  } else if (cred->kind == SIGN_CRED_AZURE_CLIENT) {
    s->tenant = az_dup(cred->azure_tenant, &oom);
    s->client_id = az_dup(cred->azure_client_id, &oom);
    s->secret = strdup(cred->azure_client_secret ? cred->azure_client_secret : "");
    oom = oom || !s->secret;
    s->authority = az_dup(cred->azure_authority, &oom);
  } else {
    s->sas = az_dup(cred->azure_sas[0] == '?' ? cred->azure_sas + 1 : cred->azure_sas, &oom);
  }
  char *where = NULL, *probe = NULL;
  rc = oom || !s->prefix ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
  if (!rc) {
    az_version(s);
    az_url_ctx u = {s, "", NULL, 0}; /* checks names, key and token before any request */
    rc = az_make_url(&u, &probe);
    free(probe);
  }
  if (!rc) rc = os__http_init();
  if (!rc && s->secret) { /* sign in now: a refused client fails the open, not a read */
    sign_cred c = az_client_cred(s);
    char bearer[8192];
    rc = os_azure_bearer(&c, bearer, sizeof bearer);
    OPENSSL_cleanse(bearer, sizeof bearer);
  }
  if (!rc) rc = az_where(&where, loc, s);
  if (!rc) rc = os_store_new(out, &az_vt, s, where);
  free(where);
  if (rc) az_free(s);
  return rc;
}
