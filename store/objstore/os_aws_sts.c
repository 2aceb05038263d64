/* os_aws_sts.c: temporary AWS credentials from STS AssumeRole (os_remote.h), for clients
 * that read a table in S3 directly (TablesService GenerateTemporaryTableCredential). The
 * request is a form POST to the STS endpoint, signed with the credential's long-term keys
 * in the Authorization header (sign_aws_v4_signed, service "sts"); the answer is the
 * AssumeRoleResponse XML. Nothing is cached: each call asks STS for a new session. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <openssl/crypto.h>

#include "common/err.h"
#include "store/objstore/os_http.h"
#include "store/objstore/os_remote.h"

#define STS_VERSION "2011-06-15"
#define STS_FIELD_MAX 8192 /* session tokens run to about 1-2 KiB */

void os_aws_session_free(os_aws_session *s) {
  if (!s) return;
  if (s->secret_access_key) OPENSSL_cleanse(s->secret_access_key, strlen(s->secret_access_key));
  if (s->session_token) OPENSSL_cleanse(s->session_token, strlen(s->session_token));
  free(s->access_key_id), free(s->secret_access_key), free(s->session_token);
  memset(s, 0, sizeof *s);
}

/* "scheme://host[:port]" (a trailing '/' allowed) into the URL to POST to and its host. */
static int sts_endpoint(const char *ep, char *url, size_t url_cap, char *host, size_t host_cap) {
  const char *h = !strncmp(ep, "https://", 8) ? ep + 8 : !strncmp(ep, "http://", 7) ? ep + 7 : NULL;
  if (!h || !*h) return dd_err_set(DD_EINVAL, "the STS endpoint is not an http(s) URL");
  size_t n = strcspn(h, "/?#@");
  if (n == 0 || n >= host_cap || (h[n] && strcmp(h + n, "/")))
    return dd_err_set(DD_EINVAL, "the STS endpoint must be scheme://host[:port]");
  memcpy(host, h, n);
  host[n] = 0;
  if ((size_t)snprintf(url, url_cap, "%.*s/", (int)(h - ep + n), ep) >= url_cap)
    return dd_err_set(DD_EINVAL, "the STS endpoint is too long");
  return 0;
}

/* The form body, its parameters in name order. */
static int sts_form(char **out, const os_aws_assume *in) {
  *out = NULL;
  char *arn = curl_easy_escape(NULL, in->role_arn, 0);
  char *name = curl_easy_escape(NULL, in->session_name, 0);
  char *ext = in->external_id && *in->external_id ? curl_easy_escape(NULL, in->external_id, 0) : NULL;
  char *pol = in->policy_json && *in->policy_json ? curl_easy_escape(NULL, in->policy_json, 0) : NULL;
  int rc = 0;
  if (!arn || !name || (in->external_id && *in->external_id && !ext) ||
      (in->policy_json && *in->policy_json && !pol) ||
      asprintf(out, "Action=AssumeRole&DurationSeconds=%d%s%s%s%s&RoleArn=%s&RoleSessionName=%s"
               "&Version=" STS_VERSION, in->duration_s, ext ? "&ExternalId=" : "", ext ? ext : "",
               pol ? "&Policy=" : "", pol ? pol : "", arn, name) < 0)
    *out = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  curl_free(arn), curl_free(name), curl_free(ext), curl_free(pol);
  return rc;
}

static int sts_url(void *ctx, char **out) {
  *out = strdup(ctx);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

static int sts_take(char **out, const char *xml, const char *tag) {
  char *v = malloc(STS_FIELD_MAX);
  if (!v) return dd_err_set(DD_ENOMEM, "out of memory");
  if (!os__xml_text(xml, tag, v, STS_FIELD_MAX) || !*v) {
    free(v);
    return dd_err_set(DD_EIO, "STS answered without %s", tag);
  }
  *out = v;
  return 0;
}

/* The answer: credentials on 200, else the error's code and message. */
static int sts_answer(os_aws_session *out, const os__http_resp *r, const os_aws_assume *in) {
  const char *xml = r->body ? (const char *)r->body : "";
  if (r->status != 200) {
    char code[128] = "", msg[512] = "";
    os__xml_text(xml, "Code", code, sizeof code);
    os__xml_text(xml, "Message", msg, sizeof msg);
    int e = r->status == 400 || r->status == 403 ? DD_EPERM : DD_EIO;
    return dd_err_set(e, "STS AssumeRole of %s: HTTP %ld%s%s%s%s", in->role_arn, r->status,
                      *code ? ": " : "", code, *msg ? ": " : "", msg);
  }
  char exp[64] = "";
  int rc = sts_take(&out->access_key_id, xml, "AccessKeyId");
  if (!rc) rc = sts_take(&out->secret_access_key, xml, "SecretAccessKey");
  if (!rc) rc = sts_take(&out->session_token, xml, "SessionToken");
  if (!rc && (!os__xml_text(xml, "Expiration", exp, sizeof exp) ||
              (out->expiration_ms = os__iso8601_ms(exp)) < 0))
    rc = dd_err_set(DD_EIO, "STS answered without a valid Expiration");
  return rc;
}

int os_aws_assume_role(os_aws_session *out, const os_aws_assume *in) {
  memset(out, 0, sizeof *out);
  const sign_cred *c = in->cred;
  if (!c || c->kind != SIGN_CRED_AWS)
    return dd_err_set(DD_EINVAL, "STS AssumeRole needs an AWS access key credential");
  if (!in->role_arn || strncmp(in->role_arn, "arn:", 4) || !in->session_name || !*in->session_name)
    return dd_err_set(DD_EINVAL, "STS AssumeRole needs a role ARN and a session name");
  if (in->duration_s < 900 || in->duration_s > 43200)
    return dd_err_set(DD_EINVAL, "STS session duration %d s is outside 900..43200", in->duration_s);
  const char *region = c->aws_region && *c->aws_region ? c->aws_region : "us-east-1";
  char dflt[128], url[512], host[300];
  snprintf(dflt, sizeof dflt, "https://sts.%s.amazonaws.com", region);
  int rc = os__http_init();
  if (!rc) rc = sts_endpoint(in->endpoint && *in->endpoint ? in->endpoint : dflt, url, sizeof url,
                             host, sizeof host);
  char *body = NULL;
  if (!rc) rc = sts_form(&body, in);
  static const char ct[] = "application/x-www-form-urlencoded; charset=utf-8";
  sign_aws_v4_request q = {"POST", host, "/", "", ct, body, body ? strlen(body) : 0};
  sign_aws_v4_signed_out sig;
  memset(&sig, 0, sizeof sig);
  if (!rc) rc = sign_aws_v4_signed(&sig, &q, &c->aws, region, "sts", (int64_t)time(NULL));
  char h_date[64], *h_auth = NULL, *h_tok = NULL;
  const char *hl[5] = {"Content-Type: application/x-www-form-urlencoded; charset=utf-8", h_date};
  snprintf(h_date, sizeof h_date, "X-Amz-Date: %s", sig.amz_date);
  if (!rc && asprintf(&h_auth, "Authorization: %s", sig.authorization) < 0)
    h_auth = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc && c->aws.session_token && *c->aws.session_token &&
      asprintf(&h_tok, "X-Amz-Security-Token: %s", c->aws.session_token) < 0)
    h_tok = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  hl[2] = h_auth;
  hl[3] = h_tok;
  os__http_resp r = {0};
  if (!rc) {
    os__http_req rq = {0};
    rq.method = "POST";
    rq.headers = hl;
    rq.body = body;
    rq.body_len = strlen(body);
    rc = os__http_do(&rq, sts_url, url, &r);
  }
  if (!rc) rc = sts_answer(out, &r, in);
  if (rc) os_aws_session_free(out);
  os__http_resp_free(&r);
  if (h_auth) OPENSSL_cleanse(h_auth, strlen(h_auth));
  free(h_auth), free(h_tok), free(body);
  sign_aws_v4_signed_free(&sig);
  return rc;
}
