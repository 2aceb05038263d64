/* os_gcs_auth.c: the GCS backend's helpers (os_gcs.h): a service account's JSON key, the
 * RS256 JWT signed with OpenSSL and its exchange for an access token (RFC 7523 jwt-bearer
 * grant at the key's token_uri), and the storage/v1 JSON answers (object listings and
 * metadata). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/err.h"
#include "store/objstore/os_gcs.h"
#include "store/objstore/os_http.h"
#include "store/sign/sign.h"

#define GCS_TOKEN_URI "https://oauth2.googleapis.com/token"
#define GCS_SCOPE "https://www.googleapis.com/auth/devstorage.read_write"

/* ---- the key -------------------------------------------------------------------------- */

static char *dup_field(json_t *o, const char *name) {
  const char *v = json_string_value(json_object_get(o, name));
  return v && *v ? strdup(v) : NULL;
}

int os__gcs_key_parse(os__gcs_key *out, const char *json) {
  memset(out, 0, sizeof *out);
  json_t *o = json_loads(json, 0, NULL);
  if (!json_is_object(o)) return json_decref(o), dd_err_set(DD_EINVAL, "the GCP key is not a JSON object");
  out->client_email = dup_field(o, "client_email");
  out->private_key = dup_field(o, "private_key");
  out->private_key_id = dup_field(o, "private_key_id");
  out->token_uri = dup_field(o, "token_uri");
  json_decref(o);
  if (!out->token_uri) out->token_uri = strdup(GCS_TOKEN_URI);
  if (!out->client_email || !out->private_key)
    return dd_err_set(DD_EINVAL, "the GCP key has no client_email or private_key");
  if (!out->token_uri || (strncmp(out->token_uri, "https://", 8) && strncmp(out->token_uri, "http://", 7)))
    return dd_err_set(DD_EINVAL, "the GCP key's token_uri is not an http(s) URL");
  return 0;
}

void os__gcs_key_free(os__gcs_key *k) {
  if (!k) return;
  if (k->private_key) OPENSSL_cleanse(k->private_key, strlen(k->private_key));
  free(k->client_email);
  free(k->private_key);
  free(k->private_key_id);
  free(k->token_uri);
  memset(k, 0, sizeof *k);
}

int os__gcs_key_id(const os__gcs_key *k, unsigned char out[32]) {
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  unsigned int n = 0;
  int ok = md && EVP_DigestInit_ex(md, EVP_sha256(), NULL) == 1 &&
           EVP_DigestUpdate(md, k->private_key, strlen(k->private_key) + 1) == 1 &&
           EVP_DigestUpdate(md, k->token_uri, strlen(k->token_uri)) == 1 &&
           EVP_DigestFinal_ex(md, out, &n) == 1 && n == 32;
  EVP_MD_CTX_free(md);
  return ok ? 0 : dd_err_set(DD_EINTERNAL, "SHA-256 of the GCP key failed");
}

/* ---- the JWT -------------------------------------------------------------------------- */

/* base64url without padding of n bytes (malloc'ed). */
static char *b64url(const unsigned char *p, size_t n) {
  char *o = malloc(4 * ((n + 2) / 3) + 1);
  if (!o) return NULL;
  int len = EVP_EncodeBlock((unsigned char *)o, p, (int)n);
  while (len > 0 && o[len - 1] == '=') len--;
  o[len] = '\0';
  for (char *c = o; *c; c++) *c = *c == '+' ? '-' : *c == '/' ? '_' : *c;
  return o;
}

int os__gcs_jwt(char **out, const os__gcs_key *k, int64_t now) {
  *out = NULL;
  json_t *h = json_pack("{s:s,s:s}", "alg", "RS256", "typ", "JWT");
  if (h && k->private_key_id) json_object_set_new(h, "kid", json_string(k->private_key_id));
  json_t *c = json_pack("{s:s,s:s,s:s,s:I,s:I}", "iss", k->client_email, "scope", GCS_SCOPE,
                        "aud", k->token_uri, "iat", (json_int_t)now, "exp", (json_int_t)(now + 3600));
  char *hj = h ? json_dumps(h, JSON_COMPACT) : NULL, *cj = c ? json_dumps(c, JSON_COMPACT) : NULL;
  char *hb = hj ? b64url((unsigned char *)hj, strlen(hj)) : NULL;
  char *cb = cj ? b64url((unsigned char *)cj, strlen(cj)) : NULL, *input = NULL, *sb = NULL;
  uint8_t *sig = NULL;
  size_t slen = 0;
  int rc = hb && cb && asprintf(&input, "%s.%s", hb, cb) >= 0 ? 0 : (input = NULL, dd_err_set(DD_ENOMEM, "out of memory"));
  if (!rc) rc = sign_rs256(&sig, &slen, k->private_key, input);
  if (!rc && !(sb = b64url(sig, slen))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc && asprintf(out, "%s.%s", input, sb) < 0) *out = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  json_decref(h);
  json_decref(c);
  free(hj), free(cj), free(hb), free(cb), free(input), free(sig), free(sb);
  return rc;
}

/* ---- the token exchange --------------------------------------------------------------- */

int os__gcs_fetch_token(const os__gcs_key *k, int64_t now, char **token, int64_t *exp) {
  *token = NULL;
  char *jwt = NULL, *body = NULL;
  int rc = os__gcs_jwt(&jwt, k, now);
  char *enc = rc ? NULL : curl_easy_escape(NULL, jwt, 0);
  if (!rc && (!enc || asprintf(&body, "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Ajwt-bearer"
                                      "&assertion=%s", enc) < 0))
    body = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  curl_free(enc);
  char what[512];
  snprintf(what, sizeof what, "GCP token exchange at %s for %s", k->token_uri, k->client_email);
  if (!rc) rc = os__oauth_token(k->token_uri, body, what, now, token, exp);
  if (jwt) OPENSSL_cleanse(jwt, strlen(jwt));
  free(jwt);
  free(body);
  return rc;
}

/* ---- JSON answers --------------------------------------------------------------------- */

static int64_t json_i64_text(json_t *v) {
  const char *s = json_string_value(v); /* the JSON API sends int64 values as strings */
  return s ? strtoll(s, NULL, 10) : (int64_t)json_integer_value(v);
}

int os__gcs_object_meta(const char *json, int64_t *size, int64_t *mtime_ms) {
  json_t *o = json ? json_loads(json, 0, NULL) : NULL;
  if (!json_is_object(o)) return json_decref(o), dd_err_set(DD_ECORRUPT, "GCS object metadata is not JSON");
  *size = json_i64_text(json_object_get(o, "size"));
  const char *u = json_string_value(json_object_get(o, "updated"));
  *mtime_ms = u ? os__iso8601_ms(u) : -1;
  json_decref(o);
  return 0;
}

int os__gcs_list_page(os_list *l, size_t *cap, const char *json, const char *pfx, char *next,
                      size_t next_cap) {
  next[0] = '\0';
  json_t *o = json ? json_loads(json, 0, NULL) : NULL;
  if (!json_is_object(o)) return json_decref(o), dd_err_set(DD_ECORRUPT, "GCS listing is not JSON");
  size_t pl = strlen(pfx), i;
  int rc = 0;
  json_t *v;
  json_array_foreach(json_object_get(o, "items"), i, v) {
    const char *name = json_string_value(json_object_get(v, "name"));
    if (rc || !name || strncmp(name, pfx, pl) || !name[pl] || strchr(name + pl, '/')) continue;
    const char *u = json_string_value(json_object_get(v, "updated"));
    rc = os_list_add(l, cap, name + pl, json_i64_text(json_object_get(v, "size")),
                     u ? os__iso8601_ms(u) : -1, false);
  }
  json_array_foreach(json_object_get(o, "prefixes"), i, v) {
    const char *p = json_string_value(v);
    size_t n = p ? strlen(p) : 0;
    if (rc || !p || strncmp(p, pfx, pl) || n <= pl + 1 || p[n - 1] != '/') continue;
    char *d = strndup(p + pl, n - pl - 1);
    rc = d ? os_list_add(l, cap, d, 0, -1, true) : dd_err_set(DD_ENOMEM, "out of memory");
    free(d);
  }
  const char *t = json_string_value(json_object_get(o, "nextPageToken"));
  if (!rc && t && strlen(t) >= next_cap) rc = dd_err_set(DD_ECORRUPT, "GCS page token too long");
  else if (!rc && t) strcpy(next, t);
  json_decref(o);
  return rc;
}
