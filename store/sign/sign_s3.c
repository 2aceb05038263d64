/* sign_s3.c: AWS Signature Version 4 presigned GET URLs for S3 and S3-compatible stores
 * (query-string authentication, UNSIGNED-PAYLOAD, signed header "host"). The steps and
 * their formats are listed in sign_int.h. */
#include "store/sign/sign_int.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define SIGN__S3_MAX_EXPIRES 604800 /* seven days: the SigV4 presign limit */

/* ===================== signing key ===================== */

int sign__aws_signing_key(uint8_t out[SIGN__SHA256_LEN], const char *secret,
                          const char *date8, const char *region, const char *service) {
  uint8_t k[SIGN__SHA256_LEN];
  char *k0 = NULL;
  if (asprintf(&k0, "AWS4%s", secret) < 0)
    return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = sign__hmac_sha256(k, k0, strlen(k0), date8, strlen(date8));
  OPENSSL_cleanse(k0, strlen(k0));
  free(k0);
  if (rc == 0)
    rc = sign__hmac_sha256(k, k, sizeof k, region, strlen(region));
  if (rc == 0)
    rc = sign__hmac_sha256(k, k, sizeof k, service, strlen(service));
  if (rc == 0)
    rc = sign__hmac_sha256(out, k, sizeof k, "aws4_request", 12);
  OPENSSL_cleanse(k, sizeof k);
  return rc;
}

/* ===================== endpoint ===================== */

typedef struct sign__s3_target {
  char scheme[8];  /* "https" or "http" */
  char host[300];  /* Host header value: [bucket.]host[:port] */
  int path_style;
} sign__s3_target;

/* Region names are lower-case letters, digits and '-'. */
static int sign__region_ok(const char *r) {
  if (!r || !*r || strlen(r) > 64)
    return 0;
  for (const char *p = r; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
      return 0;
  return 1;
}

/* Bucket names usable as a DNS label in a TLS host: lower case, digits, '-', no dots. */
static int sign__bucket_dns_ok(const char *b) {
  size_t n = strlen(b);
  if (n < 3 || n > 63 || b[0] == '-' || b[n - 1] == '-')
    return 0;
  for (const char *p = b; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
      return 0;
  return 1;
}

/* Any bucket name we accept at all: no '/', no control characters, no '?', '#'. */
static int sign__bucket_ok(const char *b) {
  if (!b || !*b || strlen(b) > 255)
    return 0;
  for (const unsigned char *p = (const unsigned char *)b; *p; p++)
    if (*p <= 0x20 || *p >= 0x7f || *p == '/' || *p == '?' || *p == '#' || *p == '%')
      return 0;
  return 1;
}

/* Splits "scheme://host[:port][/]" into scheme and host; drops a default port. */
static int sign__parse_endpoint(sign__s3_target *t, const char *ep) {
  const char *rest;
  if (strncmp(ep, "https://", 8) == 0) {
    strcpy(t->scheme, "https");
    rest = ep + 8;
  } else if (strncmp(ep, "http://", 7) == 0) {
    strcpy(t->scheme, "http");
    rest = ep + 7;
  } else {
    return dd_err_set(DD_EINVAL, "S3 endpoint '%s' must start with https:// or http://", ep);
  }
  size_t n = strcspn(rest, "/");
  if (rest[n] == '/' && rest[n + 1] != '\0')
    return dd_err_set(DD_EINVAL, "S3 endpoint '%s' must not have a path", ep);
  if (n == 0 || n >= 200)
    return dd_err_set(DD_EINVAL, "S3 endpoint '%s' has no usable host", ep);
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)rest[i];
    if (c <= 0x20 || c >= 0x7f || c == '@' || c == '?' || c == '#')
      return dd_err_set(DD_EINVAL, "S3 endpoint '%s' has a bad host", ep);
  }
  memcpy(t->host, rest, n);
  t->host[n] = '\0';
  const char *dflt = strcmp(t->scheme, "https") == 0 ? ":443" : ":80";
  size_t dl = strlen(dflt);
  if (n > dl && strcmp(t->host + n - dl, dflt) == 0)
    t->host[n - dl] = '\0';
  return 0;
}

static int sign__s3_target_make(sign__s3_target *t, const char *region, const char *bucket,
                                const sign_s3_opts *opts) {
  int rc;
  memset(t, 0, sizeof *t);
  if (opts && opts->endpoint) {
    if ((rc = sign__parse_endpoint(t, opts->endpoint)) < 0)
      return rc;
  } else {
    strcpy(t->scheme, "https");
    snprintf(t->host, sizeof t->host, "s3.%s.amazonaws.com%s", region,
             strncmp(region, "cn-", 3) == 0 ? ".cn" : "");
  }
  sign_s3_style style = opts ? opts->style : SIGN_S3_STYLE_AUTO;
  if (style == SIGN_S3_STYLE_AUTO)
    style = (opts && opts->endpoint) || !sign__bucket_dns_ok(bucket) ? SIGN_S3_STYLE_PATH
                                                                      : SIGN_S3_STYLE_VIRTUAL;
  if (style == SIGN_S3_STYLE_VIRTUAL && !sign__bucket_dns_ok(bucket))
    return dd_err_set(DD_EINVAL, "bucket '%s' cannot be used in a virtual-hosted URL", bucket);
  t->path_style = style == SIGN_S3_STYLE_PATH;
  if (!t->path_style) {
    char h[sizeof t->host];
    if (snprintf(h, sizeof h, "%s.%s", bucket, t->host) >= (int)sizeof h)
      return dd_err_set(DD_EINVAL, "S3 host name too long");
    strcpy(t->host, h);
  }
  return 0;
}

/* ===================== presign ===================== */

static int sign__s3_check(const sign_aws_creds *c, const char *region, const char *bucket,
                          const char *key, int expires_s) {
  if (!c || !c->access_key_id || !*c->access_key_id || !c->secret_access_key ||
      !*c->secret_access_key)
    return dd_err_set(DD_EINVAL, "AWS credential needs an access key id and a secret");
  if (!sign__region_ok(region))
    return dd_err_set(DD_EINVAL, "bad AWS region '%s'", region ? region : "");
  if (!sign__bucket_ok(bucket))
    return dd_err_set(DD_EINVAL, "bad S3 bucket name '%s'", bucket ? bucket : "");
  if (!key || !*key)
    return dd_err_set(DD_EINVAL, "empty S3 object key");
  if (expires_s < 1 || expires_s > SIGN__S3_MAX_EXPIRES)
    return dd_err_set(DD_EINVAL, "S3 presign expiry %d is outside 1..%d seconds", expires_s,
                      SIGN__S3_MAX_EXPIRES);
  return 0;
}

/* The sorted X-Amz-* query (without the signature). */
static void sign__s3_query(sign__buf *q, const sign_aws_creds *c, const char *scope,
                           const char *amz_date, int expires_s) {
  sign__buf_puts(q, "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=");
  sign__buf_pct(q, c->access_key_id, 0);
  sign__buf_puts(q, "%2F");
  sign__buf_pct(q, scope, 0);
  sign__buf_printf(q, "&X-Amz-Date=%s&X-Amz-Expires=%d", amz_date, expires_s);
  if (c->session_token && *c->session_token) {
    sign__buf_puts(q, "&X-Amz-Security-Token=");
    sign__buf_pct(q, c->session_token, 0);
  }
  sign__buf_puts(q, "&X-Amz-SignedHeaders=host");
}

int sign__s3_presign_steps(char **out_url, char **out_canonical, char **out_string_to_sign,
                           const sign_aws_creds *c, const char *region, const char *bucket,
                           const char *key, int64_t now_epoch_s, int expires_s,
                           const sign_s3_opts *opts) {
  sign__s3_target t;
  sign__buf uri = SIGN__BUF_INIT, q = SIGN__BUF_INIT, cr = SIGN__BUF_INIT, sts = SIGN__BUF_INIT,
            url = SIGN__BUF_INIT;
  char amz_date[20], date8[12], scope[128], hash_hex[2 * SIGN__SHA256_LEN + 1];
  char sig_hex[2 * SIGN__SHA256_LEN + 1];
  uint8_t hash[SIGN__SHA256_LEN], skey[SIGN__SHA256_LEN], sig[SIGN__SHA256_LEN];
  *out_url = NULL;
  if (out_canonical)
    *out_canonical = NULL;
  if (out_string_to_sign)
    *out_string_to_sign = NULL;
  int rc = sign__s3_check(c, region, bucket, key, expires_s);
  if (rc == 0)
    rc = sign__s3_target_make(&t, region, bucket, opts);
  if (rc == 0)
    rc = sign__utc_format(amz_date, sizeof amz_date, now_epoch_s, "%Y%m%dT%H%M%SZ");
  if (rc < 0)
    return rc;
  memcpy(date8, amz_date, 8);
  date8[8] = '\0';
  snprintf(scope, sizeof scope, "%s/%s/s3/aws4_request", date8, region);

  sign__buf_puts(&uri, "/");
  if (t.path_style) {
    sign__buf_pct(&uri, bucket, 0);
    sign__buf_puts(&uri, "/");
  }
  sign__buf_pct(&uri, key, 1);
  sign__s3_query(&q, c, scope, amz_date, expires_s);
  if (uri.failed || q.failed) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }

  sign__buf_printf(&cr, "GET\n%s\n%s\nhost:%s\n\nhost\nUNSIGNED-PAYLOAD", uri.p, q.p, t.host);
  if (cr.failed || (rc = sign__sha256(hash, cr.p, cr.len)) < 0) {
    rc = rc < 0 ? rc : dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  sign__hex(hash_hex, hash, sizeof hash);
  sign__buf_printf(&sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", amz_date, scope, hash_hex);
  if (sts.failed) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  rc = sign__aws_signing_key(skey, c->secret_access_key, date8, region, "s3");
  if (rc == 0)
    rc = sign__hmac_sha256(sig, skey, sizeof skey, sts.p, sts.len);
  if (rc < 0)
    goto cleanup;
  sign__hex(sig_hex, sig, sizeof sig);
  sign__buf_printf(&url, "%s://%s%s?%s&X-Amz-Signature=%s", t.scheme, t.host, uri.p, q.p,
                   sig_hex);
  rc = sign__buf_finish(&url, out_url);
  if (rc == 0 && out_canonical)
    rc = sign__buf_finish(&cr, out_canonical);
  if (rc == 0 && out_string_to_sign)
    rc = sign__buf_finish(&sts, out_string_to_sign);
cleanup:
  OPENSSL_cleanse(skey, sizeof skey);
  sign__buf_free(&uri);
  sign__buf_free(&q);
  sign__buf_free(&cr);
  sign__buf_free(&sts);
  sign__buf_free(&url);
  if (rc < 0) {
    free(*out_url);
    *out_url = NULL;
    if (out_canonical) {
      free(*out_canonical);
      *out_canonical = NULL;
    }
  }
  return rc;
}

int sign_s3_presign(char **out, const sign_aws_creds *c, const char *region,
                    const char *bucket, const char *key, int64_t now_epoch_s, int expires_s,
                    const sign_s3_opts *opts) {
  return sign__s3_presign_steps(out, NULL, NULL, c, region, bucket, key, now_epoch_s,
                                expires_s, opts);
}
