/* sign_gcs.c: Cloud Storage V4 signed URLs (GOOG4-RSA-SHA256) for Delta Sharing recipients,
 * signed with a service account's RSA private key through OpenSSL:
 *   CanonicalRequest = "GET\n" "/" bucket "/" UriEncode(key, keep '/') "\n" CanonicalQuery
 *                      "\n" "host:" host "\n" "\n" "host\n" "UNSIGNED-PAYLOAD"
 *   CanonicalQuery   = X-Goog-Algorithm=GOOG4-RSA-SHA256, X-Goog-Credential=
 *                      email/yyyymmdd/auto/storage/goog4_request, X-Goog-Date, X-Goog-Expires,
 *                      X-Goog-SignedHeaders=host (sorted, values UriEncode'd, '/' too)
 *   StringToSign     = "GOOG4-RSA-SHA256\n" yyyymmddThhmmssZ "\n" scope "\n" hex(SHA256(CR))
 *   Signature        = hex(RSASSA-PKCS1-v1_5-SHA256(private key, StringToSign))
 *   URL              = endpoint CanonicalURI "?" CanonicalQuery "&X-Goog-Signature=" sig
 * The endpoint is https://storage.googleapis.com unless the credential names another.
 * sign_rs256 is also the GCS backend's JWT signature (store/objstore/os_gcs_auth.c). */
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/pem.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

int sign_rs256(uint8_t **out, size_t *out_len, const char *pem, const char *msg) {
  *out = NULL;
  BIO *bio = BIO_new_mem_buf(pem, -1);
  EVP_PKEY *pk = bio ? PEM_read_bio_PrivateKey(bio, NULL, NULL, NULL) : NULL;
  EVP_MD_CTX *md = EVP_MD_CTX_new();
  int rc = pk && md ? 0 : dd_err_set(DD_EINVAL, "the GCP key's private_key is not a PEM private key");
  if (!rc && (EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, pk) != 1 ||
              EVP_DigestSign(md, NULL, out_len, (const unsigned char *)msg, strlen(msg)) != 1 ||
              !(*out = malloc(*out_len)) ||
              EVP_DigestSign(md, *out, out_len, (const unsigned char *)msg, strlen(msg)) != 1))
    rc = dd_err_set(DD_EINTERNAL, "RS256 signing with the GCP key failed");
  if (rc) free(*out), *out = NULL;
  EVP_MD_CTX_free(md);
  EVP_PKEY_free(pk);
  BIO_free(bio);
  return rc;
}

/* hex(RSA-SHA256(pem, msg)) into *out (malloc'ed). */
static int gcs_rsa_hex(char **out, const char *pem, const char *msg) {
  uint8_t *sig = NULL;
  size_t n = 0;
  int rc = sign_rs256(&sig, &n, pem, msg);
  if (!rc && !(*out = malloc(2 * n + 1))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) sign__hex(*out, sig, n);
  free(sig);
  return rc;
}

int sign_gcs_v4_url(char **out, const char *endpoint, const char *bucket, const char *key,
                    const char *email, const char *pem, int64_t now_s, int expires_s) {
  *out = NULL;
  if (!email || !*email || !pem || !*pem)
    return dd_err_set(DD_EINVAL, "a GCS signed URL needs a service account's email and key");
  const char *ep = endpoint && *endpoint ? endpoint : "https://storage.googleapis.com";
  const char *host = strstr(ep, "://");
  if (!host || !host[3] || strchr(host + 3, '/') || strchr(host + 3, '@'))
    return dd_err_set(DD_EINVAL, "GCS endpoint must be http[s]://host[:port]");
  host += 3;
  char stamp[17], day[9], hash_hex[2 * SIGN__SHA256_LEN + 1];
  int rc = sign__utc_format(stamp, sizeof stamp, now_s, "%Y%m%dT%H%M%SZ");
  if (rc >= 0) rc = sign__utc_format(day, sizeof day, now_s, "%Y%m%d");
  if (rc < 0) return rc;
  sign__buf uri = SIGN__BUF_INIT, q = SIGN__BUF_INIT, cr = SIGN__BUF_INIT, sts = SIGN__BUF_INIT,
            cred = SIGN__BUF_INIT, url = SIGN__BUF_INIT;
  sign__buf_printf(&cred, "%s/%s/auto/storage/goog4_request", email, day);
  sign__buf_puts(&uri, "/");
  sign__buf_pct(&uri, bucket, 0);
  sign__buf_puts(&uri, "/");
  sign__buf_pct(&uri, key, 1);
  sign__buf_puts(&q, "X-Goog-Algorithm=GOOG4-RSA-SHA256&X-Goog-Credential=");
  sign__buf_pct(&q, cred.p ? cred.p : "", 0);
  sign__buf_printf(&q, "&X-Goog-Date=%s&X-Goog-Expires=%d&X-Goog-SignedHeaders=host", stamp, expires_s);
  sign__buf_printf(&cr, "GET\n%s\n%s\nhost:%s\n\nhost\nUNSIGNED-PAYLOAD", uri.p ? uri.p : "",
                   q.p ? q.p : "", host);
  uint8_t h[SIGN__SHA256_LEN];
  char *sig = NULL;
  rc = uri.failed || q.failed || cr.failed || cred.failed ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
  if (!rc) rc = sign__sha256(h, cr.p, cr.len);
  if (!rc) {
    sign__hex(hash_hex, h, sizeof h);
    sign__buf_printf(&sts, "GOOG4-RSA-SHA256\n%s\n%s/auto/storage/goog4_request\n%s", stamp, day, hash_hex);
    rc = sts.failed ? dd_err_set(DD_ENOMEM, "out of memory") : gcs_rsa_hex(&sig, pem, sts.p);
  }
  if (!rc) {
    sign__buf_printf(&url, "%s%s?%s&X-Goog-Signature=%s", ep, uri.p, q.p, sig);
    rc = sign__buf_finish(&url, out);
  } else {
    sign__buf_free(&url);
  }
  free(sig);
  sign__buf_free(&uri), sign__buf_free(&q), sign__buf_free(&cr), sign__buf_free(&sts), sign__buf_free(&cred);
  return rc;
}
