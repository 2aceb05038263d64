/* os_azure_ad.c: Azure service principals (os_remote.h): OAuth access tokens from the
 * client-credentials grant, and user delegation keys (Get User Delegation Key) to sign
 * recipients' URLs with, both kept for the process. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/err.h"
#include "store/objstore/os_http.h"
#include "store/objstore/os_remote.h"

#define AD_AUTHORITY "https://login.microsoftonline.com"
#define AD_SCOPE "https://storage.azure.com/.default"
#define AD_REFRESH_S 300       /* fetch again this long before expiry */
#define AD_UDK_LIFE_S (2 * 86400)
#define AD_UDK_MAX_AHEAD_S (6 * 86400)
#define AD_CACHE_MAX 16

static pthread_mutex_t ad_lock = PTHREAD_MUTEX_INITIALIZER; /* guards both tables */
static struct { unsigned char id[32]; char *token; int64_t exp; } ad_tokens[AD_CACHE_MAX];
static size_t ad_ntokens;
static struct { unsigned char id[32]; os_azure_udk k; int64_t exp; } ad_udks[AD_CACHE_MAX];
static size_t ad_nudks;

static const char *ad_authority(const sign_cred *c) {
  if (c->azure_authority && *c->azure_authority) return c->azure_authority;
  const char *e = getenv("AZURE_AUTHORITY_HOST");
  return e && *e ? e : AD_AUTHORITY;
}

static int ad_check(const sign_cred *c) {
  if (!c || c->kind != SIGN_CRED_AZURE_CLIENT) return dd_err_set(DD_EINVAL, "not an Azure service principal");
  if (!c->azure_tenant || !*c->azure_tenant || !c->azure_client_id || !*c->azure_client_id)
    return dd_err_set(DD_EINVAL, "the Azure service principal has no tenant_id or client_id");
  if (!c->azure_client_secret || !*c->azure_client_secret)
    return dd_err_set(DD_EUNSUPPORTED, "Azure service principals sign in with a client secret "
                      "here (client certificates and federated tokens are not supported)");
  if (strpbrk(c->azure_tenant, "/?#@ \t\r\n"))
    return dd_err_set(DD_EINVAL, "bad Azure tenant_id '%s'", c->azure_tenant);
  const char *a = ad_authority(c);
  if (strncmp(a, "https://", 8) && strncmp(a, "http://", 7))
    return dd_err_set(DD_EINVAL, "the Azure authority '%s' is not an http(s) URL", a);
  return 0;
}

/* SHA-256 of the parts (each with its NUL), the cache key. */
static int ad_id(unsigned char out[32], const char *const *parts, size_t n) {
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  unsigned int len = 0;
  int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1;
  for (size_t i = 0; ok && i < n; i++)
    ok = EVP_DigestUpdate(md, parts[i] ? parts[i] : "", strlen(parts[i] ? parts[i] : "") + 1) == 1;
  ok = ok && EVP_DigestFinal_ex(md, out, &len) == 1 && len == 32;
  EVP_MD_CTX_free(md);
  return ok ? 0 : dd_err_set(DD_EINTERNAL, "SHA-256 failed");
}

static int ad_cred_id(unsigned char out[32], const sign_cred *c) {
  const char *parts[] = {ad_authority(c), c->azure_tenant, c->azure_client_id, c->azure_client_secret};
  return ad_id(out, parts, 4);
}

/* The slot of id in a table of n (growing it, or reusing slot 0 when full). */
static size_t ad_slot(unsigned char (*ids)[32], size_t stride, size_t *n, const unsigned char id[32],
                      bool *fresh) {
  for (size_t i = 0; i < *n; i++)
    if (!memcmp((const char *)ids + i * stride, id, 32)) return *fresh = false, i;
  *fresh = true;
  size_t i = *n < AD_CACHE_MAX ? (*n)++ : 0;
  memcpy((char *)ids + i * stride, id, 32);
  return i;
}

/* ---- tokens --------------------------------------------------------------------------- */

static int ad_fetch_token(const sign_cred *c, int64_t now, char **token, int64_t *exp) {
  *token = NULL;
  char *url = NULL, *body = NULL;
  char *id = curl_easy_escape(NULL, c->azure_client_id, 0);
  char *sec = curl_easy_escape(NULL, c->azure_client_secret, 0);
  char *scope = curl_easy_escape(NULL, AD_SCOPE, 0);
  int rc = 0;
  if (!id || !sec || !scope ||
      asprintf(&url, "%s/%s/oauth2/v2.0/token", ad_authority(c), c->azure_tenant) < 0)
    url = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  else if (asprintf(&body, "grant_type=client_credentials&client_id=%s&client_secret=%s&scope=%s",
                    id, sec, scope) < 0)
    body = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (sec) OPENSSL_cleanse(sec, strlen(sec));
  curl_free(id), curl_free(sec), curl_free(scope);
  char what[512];
  snprintf(what, sizeof what, "Azure sign-in of client %s in tenant %s at %s", c->azure_client_id,
           c->azure_tenant, ad_authority(c));
  if (!rc) rc = os__oauth_token(url, body, what, now, token, exp);
  if (body) OPENSSL_cleanse(body, strlen(body));
  free(body);
  free(url);
  return rc;
}

/* The cached token of c (fetched when absent or near expiry), under ad_lock, as the
 * "Authorization: Bearer <token>" header in hdr (cap bytes). */
static int ad_bearer_locked(const sign_cred *c, char *hdr, size_t cap) {
  unsigned char id[32];
  int rc = ad_cred_id(id, c);
  if (rc) return rc;
  int64_t now = (int64_t)time(NULL);
  bool fresh;
  size_t i = ad_slot(&ad_tokens[0].id, sizeof ad_tokens[0], &ad_ntokens, id, &fresh);
  if (fresh || !ad_tokens[i].token || ad_tokens[i].exp - AD_REFRESH_S <= now) {
    free(ad_tokens[i].token);
    ad_tokens[i].token = NULL;
    rc = ad_fetch_token(c, now, &ad_tokens[i].token, &ad_tokens[i].exp);
  }
  if (!rc && (size_t)snprintf(hdr, cap, "Authorization: Bearer %s", ad_tokens[i].token) >= cap)
    rc = dd_err_set(DD_EINVAL, "Azure access token too long");
  return rc;
}

int os_azure_bearer(const sign_cred *c, char *hdr, size_t cap) {
  int rc = ad_check(c);
  if (rc) return rc;
  pthread_mutex_lock(&ad_lock);
  rc = ad_bearer_locked(c, hdr, cap);
  pthread_mutex_unlock(&ad_lock);
  return rc;
}

/* ---- user delegation keys ------------------------------------------------------------- */

void os_azure_udk_free(os_azure_udk *k) {
  if (!k) return;
  if (k->value) OPENSSL_cleanse(k->value, strlen(k->value));
  free(k->oid), free(k->tid), free(k->start), free(k->expiry), free(k->service);
  free(k->version), free(k->value);
  memset(k, 0, sizeof *k);
}

static void ad_udk_view(os_azure_udk *k) {
  k->key = (sign_azure_udk){k->oid, k->tid, k->start, k->expiry, k->service, k->version, k->value};
}

static int ad_udk_copy(os_azure_udk *dst, const os_azure_udk *src) {
  memset(dst, 0, sizeof *dst);
  char **d[] = {&dst->oid, &dst->tid, &dst->start, &dst->expiry, &dst->service, &dst->version, &dst->value};
  char *const s[] = {src->oid, src->tid, src->start, src->expiry, src->service, src->version, src->value};
  for (size_t i = 0; i < 7; i++)
    if (!(*d[i] = strdup(s[i] ? s[i] : ""))) return os_azure_udk_free(dst), dd_err_set(DD_ENOMEM, "out of memory");
  ad_udk_view(dst);
  return 0;
}

/* The parts of a UserDelegationKey answer. */
static int ad_udk_parse(os_azure_udk *k, const char *xml) {
  static const char *const tags[] = {"SignedOid", "SignedTid", "SignedStart", "SignedExpiry",
                                     "SignedService", "SignedVersion", "Value"};
  char **slots[] = {&k->oid, &k->tid, &k->start, &k->expiry, &k->service, &k->version, &k->value};
  memset(k, 0, sizeof *k);
  for (size_t i = 0; i < 7; i++) {
    char v[512] = "";
    if (!os__xml_text(xml, tags[i], v, sizeof v) || !*v)
      return os_azure_udk_free(k), dd_err_set(DD_ECORRUPT, "Azure user delegation key: no <%s>", tags[i]);
    if (!(*slots[i] = strdup(v))) return os_azure_udk_free(k), dd_err_set(DD_ENOMEM, "out of memory");
  }
  ad_udk_view(k);
  return 0;
}

typedef struct ad_udk_req {
  const sign_cred *c;
  const char *account, *suffix;
} ad_udk_req;

static int ad_udk_url(void *ctx, char **out) {
  const ad_udk_req *q = ctx;
  const char *ep = q->c->azure_endpoint;
  size_t n = ep ? strlen(ep) : 0;
  while (n && ep[n - 1] == '/') n--;
  int w = ep && *ep ? asprintf(out, "%.*s/?restype=service&comp=userdelegationkey", (int)n, ep)
                    : asprintf(out, "https://%s.blob.%s/?restype=service&comp=userdelegationkey",
                               q->account, q->suffix ? q->suffix : "core.windows.net");
  if (w < 0) *out = NULL;
  return w < 0 ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

/* Asks for a key valid from 5 minutes ago for two days, or longer when need_until asks
 * (the service allows seven). */
static int ad_fetch_udk(const ad_udk_req *q, const char *bearer, int64_t now, int64_t need_until,
                        os_azure_udk *out, int64_t *exp) {
  char st[24], se[24], body[256];
  int64_t life = need_until - now + 2 * AD_REFRESH_S;
  if (life < AD_UDK_LIFE_S) life = AD_UDK_LIFE_S;
  time_t a = (time_t)(now - AD_REFRESH_S), b = (time_t)(now + life);
  struct tm ta, tb;
  strftime(st, sizeof st, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&a, &ta));
  strftime(se, sizeof se, "%Y-%m-%dT%H:%M:%SZ", gmtime_r(&b, &tb));
  snprintf(body, sizeof body, "<?xml version=\"1.0\" encoding=\"utf-8\"?><KeyInfo><Start>%s</Start>"
                              "<Expiry>%s</Expiry></KeyInfo>", st, se);
  const char *hl[] = {bearer, "x-ms-version: " SIGN_AZURE_VERSION, "Content-Type: application/xml", NULL};
  os__http_req rq = {0};
  rq.method = "POST";
  rq.headers = hl;
  rq.body = body;
  rq.body_len = strlen(body);
  os__http_resp r = {0};
  int rc = os__http_do(&rq, ad_udk_url, (void *)q, &r);
  if (!rc && r.status != 200) {
    char code[128] = "";
    if (!os__xml_text(r.body ? (const char *)r.body : "", "Code", code, sizeof code))
      os__http_header(&r, "x-ms-error-code", code, sizeof code);
    rc = dd_err_set(r.status == 401 || r.status == 403 ? DD_EPERM : DD_EIO,
                    "Azure Get User Delegation Key for account '%s': HTTP %ld %s", q->account,
                    r.status, code);
  }
  if (!rc) rc = ad_udk_parse(out, (const char *)r.body);
  *exp = now + life;
  os__http_resp_free(&r);
  return rc;
}

int os_azure_udk_get(os_azure_udk *out, const sign_cred *c, const char *account,
                     const char *endpoint_suffix, int64_t need_until_s) {
  memset(out, 0, sizeof *out);
  int rc = ad_check(c);
  if (rc) return rc;
  int64_t now = (int64_t)time(NULL);
  if (!account || !*account) return dd_err_set(DD_EINVAL, "no Azure account to ask a user delegation key of");
  if (need_until_s > now + AD_UDK_MAX_AHEAD_S)
    return dd_err_set(DD_EINVAL, "a user delegation SAS cannot outlive 6 days");
  unsigned char id[32];
  const char *parts[] = {ad_authority(c), c->azure_tenant, c->azure_client_id,
                         c->azure_client_secret, account, c->azure_endpoint, endpoint_suffix};
  if ((rc = ad_id(id, parts, 7))) return rc;
  pthread_mutex_lock(&ad_lock);
  bool fresh;
  size_t i = ad_slot(&ad_udks[0].id, sizeof ad_udks[0], &ad_nudks, id, &fresh);
  if (fresh || !ad_udks[i].k.value || ad_udks[i].exp - AD_REFRESH_S < need_until_s) {
    os_azure_udk_free(&ad_udks[i].k);
    char bearer[8192];
    rc = ad_bearer_locked(c, bearer, sizeof bearer);
    ad_udk_req q = {c, account, endpoint_suffix};
    if (!rc) rc = ad_fetch_udk(&q, bearer, now, need_until_s, &ad_udks[i].k, &ad_udks[i].exp);
    OPENSSL_cleanse(bearer, sizeof bearer);
  }
  if (!rc) rc = ad_udk_copy(out, &ad_udks[i].k);
  pthread_mutex_unlock(&ad_lock);
  return rc;
}
