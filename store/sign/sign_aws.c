/* sign_aws.c: AWS Signature Version 4 in the Authorization header, for requests to AWS
 * services other than S3 object reads (STS AssumeRole, store/objstore/os_aws_sts.c). The
 * steps, after the AWS SigV4 documentation:
 *   CanonicalRequest = method "\n" path "\n" query "\n"
 *                      ("content-type:" ct "\n")? "host:" host "\n" "x-amz-date:" date "\n"
 *                      ("x-amz-security-token:" token "\n")? "\n"
 *                      signed-header names joined by ";" "\n" hex(SHA256(body))
 *   StringToSign     = "AWS4-HMAC-SHA256\n" date "\n" scope "\n" hex(SHA256(CR))
 *   scope            = yyyymmdd "/" region "/" service "/aws4_request"
 * The caller sends the headers named in sign_aws_v4_signed exactly as given here. */
#include "store/sign/sign_int.h"

#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

/* Header values must not break the canonical form: no control characters. */
static int sig4__value_ok(const char *v) {
  for (const unsigned char *p = (const unsigned char *)v; *p; p++)
    if (*p < 0x20 || *p == 0x7f) return 0;
  return 1;
}

static int sig4__check(const sign_aws_v4_request *q, const sign_aws_creds *c, const char *region,
                       const char *service) {
  if (!q || !q->method || !q->host || !*q->host || !q->path || q->path[0] != '/')
    return dd_err_set(DD_EINVAL, "SigV4: method, host and an absolute path are required");
  if (!c || !c->access_key_id || !*c->access_key_id || !c->secret_access_key ||
      !*c->secret_access_key)
    return dd_err_set(DD_EINVAL, "SigV4: an access key id and secret are required");
  if (!region || !*region || !service || !*service || strchr(region, '/') || strchr(service, '/'))
    return dd_err_set(DD_EINVAL, "SigV4: bad region or service");
  if (!sig4__value_ok(q->host) || (q->content_type && !sig4__value_ok(q->content_type)) ||
      (c->session_token && !sig4__value_ok(c->session_token)) || strchr(c->access_key_id, '/'))
    return dd_err_set(DD_EINVAL, "SigV4: a header value holds a control character");
  return 0;
}

int sign_aws_v4_signed(sign_aws_v4_signed_out *out, const sign_aws_v4_request *q,
                       const sign_aws_creds *c, const char *region, const char *service,
                       int64_t now_s) {
  memset(out, 0, sizeof *out);
  int rc = sig4__check(q, c, region, service);
  if (!rc) rc = sign__utc_format(out->amz_date, sizeof out->amz_date, now_s, "%Y%m%dT%H%M%SZ");
  if (rc) return rc;
  char date8[9];
  memcpy(date8, out->amz_date, 8);
  date8[8] = 0;
  int token = c->session_token && *c->session_token;
  uint8_t h[SIGN__SHA256_LEN];
  char body_hex[2 * SIGN__SHA256_LEN + 1], cr_hex[2 * SIGN__SHA256_LEN + 1];
  rc = sign__sha256(h, q->body ? q->body : "", q->body ? q->body_len : 0);
  if (rc) return rc;
  sign__hex(body_hex, h, sizeof h);

  const char *names = q->content_type ? (token ? "content-type;host;x-amz-date;x-amz-security-token"
                                               : "content-type;host;x-amz-date")
                                      : (token ? "host;x-amz-date;x-amz-security-token"
                                               : "host;x-amz-date");
  sign__buf cr = {0};
  sign__buf_printf(&cr, "%s\n%s\n%s\n", q->method, q->path, q->query ? q->query : "");
  if (q->content_type) sign__buf_printf(&cr, "content-type:%s\n", q->content_type);
  sign__buf_printf(&cr, "host:%s\nx-amz-date:%s\n", q->host, out->amz_date);
  if (token) sign__buf_printf(&cr, "x-amz-security-token:%s\n", c->session_token);
  sign__buf_printf(&cr, "\n%s\n%s", names, body_hex);
  char *canonical = NULL;
  rc = sign__buf_finish(&cr, &canonical);
  if (!rc) rc = sign__sha256(h, canonical, strlen(canonical));
  free(canonical);
  if (rc) return rc;
  sign__hex(cr_hex, h, sizeof h);

  char *sts = NULL;
  if (asprintf(&sts, "AWS4-HMAC-SHA256\n%s\n%s/%s/%s/aws4_request\n%s", out->amz_date, date8,
               region, service, cr_hex) < 0)
    return dd_err_set(DD_ENOMEM, "out of memory");
  uint8_t key[SIGN__SHA256_LEN], sig[SIGN__SHA256_LEN];
  char sig_hex[2 * SIGN__SHA256_LEN + 1];
  rc = sign__aws_signing_key(key, c->secret_access_key, date8, region, service);
  if (!rc) rc = sign__hmac_sha256(sig, key, sizeof key, sts, strlen(sts));
  OPENSSL_cleanse(key, sizeof key);
  free(sts);
  if (rc) return rc;
  sign__hex(sig_hex, sig, sizeof sig);
  if (asprintf(&out->authorization,
               "AWS4-HMAC-SHA256 Credential=%s/%s/%s/%s/aws4_request, SignedHeaders=%s, "
               "Signature=%s", c->access_key_id, date8, region, service, names, sig_hex) < 0) {
    out->authorization = NULL;
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  return 0;
}

void sign_aws_v4_signed_free(sign_aws_v4_signed_out *s) {
  if (!s) return;
  free(s->authorization);
  memset(s, 0, sizeof *s);
}
