/* sign_s3.c: AWS Signature Version 4 presigned URLs for S3 and S3-compatible stores
 * (query-string authentication, UNSIGNED-PAYLOAD, signed header "host"): GET URLs for
 * Delta Sharing recipients, and any method with extra query parameters for deltad's own
 * S3 client (store/objstore/os_s3.c). The steps and their formats are listed in
 * sign_int.h. */
#include "store/sign/sign_int.h"

#include <openssl/crypto.h>
#include <stdio.h>
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

/* Splits "scheme://host[:port][/]" into scheme and host; drops a default port. Messages
 * never repeat the endpoint: a mistyped one may carry user information (a password). */
static int sign__parse_endpoint(sign__s3_target *t, const char *ep) {
  const char *rest;
  if (strncmp(ep, "https://", 8) == 0) {
    strcpy(t->scheme, "https");
    rest = ep + 8;
  } else if (strncmp(ep, "http://", 7) == 0) {
    strcpy(t->scheme, "http");
    rest = ep + 7;
  } else {
    return dd_err_set(DD_EINVAL, "S3 endpoint must start with https:// or http://");
  }
  size_t n = strcspn(rest, "/");
  if (memchr(rest, '@', n))
    return dd_err_set(DD_EINVAL, "S3 endpoint must not have user information ('@')");
  if (rest[n] == '/' && rest[n + 1] != '\0')
    return dd_err_set(DD_EINVAL, "S3 endpoint must not have a path");
  if (n == 0 || n >= 200)
    return dd_err_set(DD_EINVAL, "S3 endpoint has no usable host");
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)rest[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '-' || c == ':' || c == '[' || c == ']'))
      return dd_err_set(DD_EINVAL, "S3 endpoint has a bad host (letters, digits, '.', '-', "
                        "':' and [IPv6] only)");
  }
  /* Host names are case-insensitive; lower case them as AWS's signer (botocore) does, so
   * the Host header curl sends and the one signed are the same text on every store. */
  for (size_t i = 0; i < n; i++)
    t->host[i] = (rest[i] >= 'A' && rest[i] <= 'Z') ? (char)(rest[i] - 'A' + 'a') : rest[i];
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
                          const char *key, int key_optional, int expires_s) {
  if (!c || !c->access_key_id || !*c->access_key_id || !c->secret_access_key ||
      !*c->secret_access_key)
    return dd_err_set(DD_EINVAL, "AWS credential needs an access key id and a secret");
  if (!sign__region_ok(region))
    return dd_err_set(DD_EINVAL, "bad AWS region '%s'", region ? region : "");
  if (!sign__bucket_ok(bucket))
    return dd_err_set(DD_EINVAL, "bad S3 bucket name '%s'", bucket ? bucket : "");
  if (!key || (!*key && !key_optional))
    return dd_err_set(DD_EINVAL, "empty S3 object key");
  if (expires_s < 1 || expires_s > SIGN__S3_MAX_EXPIRES)
    return dd_err_set(DD_EINVAL, "S3 presign expiry %d is outside 1..%d seconds", expires_s,
                      SIGN__S3_MAX_EXPIRES);
  return 0;
}

/* Extra parameters must have names starting with a lower-case letter (then letters of
 * either case, digits and '-': "list-type", "partNumber", "uploadId") and come sorted by
 * byte order: they then sort after every X-Amz-* name (a digit, '-' or a capital first
 * would sort before 'X'), so appending them keeps the canonical query in order. */
static int sign__s3_params_ok(const sign_s3_param *ps, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!ps[i].name || !*ps[i].name || !ps[i].value)
      return dd_err_set(DD_EINVAL, "S3 query parameter %zu has no name or value", i);
    if (ps[i].name[0] < 'a' || ps[i].name[0] > 'z')
      return dd_err_set(DD_EINVAL, "S3 query parameter name '%s' must start with a letter",
                        ps[i].name);
    for (const char *p = ps[i].name; *p; p++)
      if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || *p == '-' ||
            (*p >= '0' && *p <= '9')))
        return dd_err_set(DD_EINVAL, "S3 query parameter name '%s' has a character other "
                          "than letters, digits and '-'", ps[i].name);
    if (i > 0 && strcmp(ps[i - 1].name, ps[i].name) >= 0)
      return dd_err_set(DD_EINVAL, "S3 query parameters are not sorted ('%s', '%s')",
                        ps[i - 1].name, ps[i].name);
  }
  return 0;
}

/* The sorted query (without the signature): X-Amz-* then the extra parameters. */
static void sign__s3_query(sign__buf *q, const sign_aws_creds *c, const char *scope,
                           const char *amz_date, int expires_s, const sign_s3_param *ps,
                           size_t nps) {
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
  for (size_t i = 0; i < nps; i++) {
    sign__buf_puts(q, "&");
    sign__buf_puts(q, ps[i].name);
    sign__buf_puts(q, "=");
    sign__buf_pct(q, ps[i].value, 0);
  }
}

/* One presign in the making: where it goes and the strings built before signing. */
typedef struct sign__s3_req {
  const char *method;
  sign__s3_target t;
  char amz_date[20], date8[12], scope[128];
  sign__buf uri, query;
} sign__s3_req;

static void sign__s3_req_free(sign__s3_req *r) {
  sign__buf_free(&r->uri);
  sign__buf_free(&r->query);
}

/* Checks the inputs and builds the target, dates, scope, canonical URI and query. */
static int sign__s3_prepare(sign__s3_req *r, const sign_s3_request *q, const sign_aws_creds *c,
                            const char *region, const char *bucket, const char *key,
                            int64_t now_epoch_s, int expires_s, const sign_s3_opts *opts) {
  if (opts && opts->version != SIGN_S3_OPTS_VERSION)
    return dd_err_set(DD_EINVAL, "sign_s3_opts version %u is not %d", opts->version,
                      SIGN_S3_OPTS_VERSION);
  r->method = q ? q->method : "GET";
  if (strcmp(r->method, "GET") && strcmp(r->method, "HEAD") && strcmp(r->method, "PUT") && strcmp(r->method, "POST") &&
      strcmp(r->method, "DELETE"))
    return dd_err_set(DD_EINVAL, "S3 method '%s' is not GET, HEAD, PUT, POST or DELETE", r->method);
  int rc = sign__s3_check(c, region, bucket, key, q != NULL, expires_s);
  if (rc == 0 && q)
    rc = sign__s3_params_ok(q->params, q->nparams);
  if (rc == 0)
    rc = sign__s3_target_make(&r->t, region, bucket, opts);
  if (rc == 0)
    rc = sign__utc_format(r->amz_date, sizeof r->amz_date, now_epoch_s, "%Y%m%dT%H%M%SZ");
  if (rc < 0)
    return rc;
  memcpy(r->date8, r->amz_date, 8);
  r->date8[8] = '\0';
  snprintf(r->scope, sizeof r->scope, "%s/%s/s3/aws4_request", r->date8, region);
  /* Path style: /bucket/key, and /bucket (no trailing '/') for a bucket request, the form
   * AWS's SDKs send and sign; virtual-hosted: /key, and / for the bucket. */
  sign__buf_puts(&r->uri, "/");
  if (r->t.path_style) {
    sign__buf_pct(&r->uri, bucket, 0);
    if (*key)
      sign__buf_puts(&r->uri, "/");
  }
  sign__buf_pct(&r->uri, key, 1);
  sign__s3_query(&r->query, c, r->scope, r->amz_date, expires_s, q ? q->params : NULL,
                 q ? q->nparams : 0);
  if (r->uri.failed || r->query.failed)
    return dd_err_set(DD_ENOMEM, "out of memory");
  return 0;
}

/* Canonical request and string to sign of a prepared request. */
static int sign__s3_strings(sign__buf *cr, sign__buf *sts, const sign__s3_req *r) {
  uint8_t hash[SIGN__SHA256_LEN];
  char hash_hex[2 * SIGN__SHA256_LEN + 1];
  sign__buf_printf(cr, "%s\n%s\n%s\nhost:%s\n\nhost\nUNSIGNED-PAYLOAD", r->method, r->uri.p,
                   r->query.p, r->t.host);
  if (cr->failed)
    return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = sign__sha256(hash, cr->p, cr->len);
  if (rc < 0)
    return rc;
  sign__hex(hash_hex, hash, sizeof hash);
  sign__buf_printf(sts, "AWS4-HMAC-SHA256\n%s\n%s\n%s", r->amz_date, r->scope, hash_hex);
  return sts->failed ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}

/* hex(HMAC(SigningKey, sts)). */
static int sign__s3_signature(char out[2 * SIGN__SHA256_LEN + 1], const sign__s3_req *r,
                              const char *secret, const char *region, const sign__buf *sts) {
  uint8_t skey[SIGN__SHA256_LEN], sig[SIGN__SHA256_LEN];
  int rc = sign__aws_signing_key(skey, secret, r->date8, region, "s3");
  if (rc == 0)
    rc = sign__hmac_sha256(sig, skey, sizeof skey, sts->p, sts->len);
  OPENSSL_cleanse(skey, sizeof skey);
  if (rc == 0)
    sign__hex(out, sig, sizeof sig);
  return rc;
}

int sign__s3_presign_steps(char **out_url, char **out_canonical, char **out_string_to_sign,
                           const sign_s3_request *q, const sign_aws_creds *c,
                           const char *region, const char *bucket, const char *key,
                           int64_t now_epoch_s, int expires_s, const sign_s3_opts *opts) {
  sign__s3_req r = {0};
  sign__buf cr = SIGN__BUF_INIT, sts = SIGN__BUF_INIT, url = SIGN__BUF_INIT;
  char sig_hex[2 * SIGN__SHA256_LEN + 1];
  char *u = NULL, *can = NULL, *str = NULL;
  int rc = sign__s3_prepare(&r, q, c, region, bucket, key, now_epoch_s, expires_s, opts);
  if (rc == 0)
    rc = sign__s3_strings(&cr, &sts, &r);
  if (rc == 0)
    rc = sign__s3_signature(sig_hex, &r, c->secret_access_key, region, &sts);
  if (rc < 0)
    goto cleanup;
  sign__buf_printf(&url, "%s://%s%s?%s&X-Amz-Signature=%s", r.t.scheme, r.t.host, r.uri.p,
                   r.query.p, sig_hex);
  rc = sign__buf_finish(&url, &u);
  if (rc == 0)
    rc = sign__buf_finish(&cr, &can);
  if (rc == 0)
    rc = sign__buf_finish(&sts, &str);
cleanup:
  sign__s3_req_free(&r);
  sign__buf_free(&cr);
  sign__buf_free(&sts);
  sign__buf_free(&url);
  if (rc < 0) {
    free(u);
    free(can);
    free(str);
    u = can = str = NULL;
  }
  *out_url = u;
  if (out_canonical)
    *out_canonical = can;
  else
    free(can);
  if (out_string_to_sign)
    *out_string_to_sign = str;
  else
    free(str);
  return rc;
}

int sign_s3_presign(char **out, const sign_aws_creds *c, const char *region,
                    const char *bucket, const char *key, int64_t now_epoch_s, int expires_s,
                    const sign_s3_opts *opts) {
  return sign__s3_presign_steps(out, NULL, NULL, NULL, c, region, bucket, key, now_epoch_s,
                                expires_s, opts);
}

int sign_s3_presign_req(char **out, const sign_s3_request *q, const sign_aws_creds *c,
                        const char *region, const char *bucket, const char *key,
                        int64_t now_epoch_s, int expires_s, const sign_s3_opts *opts) {
  if (!q || !q->method)
    return dd_err_set(DD_EINVAL, "no S3 request method");
  return sign__s3_presign_steps(out, NULL, NULL, q, c, region, bucket, key, now_epoch_s,
                                expires_s, opts);
}
