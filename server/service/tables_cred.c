/* tables_cred.c: temporary credentials for a catalog table (TablesService
 * GenerateTemporaryTableCredential, as Unity Catalog's temporary-table-credentials), for
 * clients that read or write a table in object storage directly.
 *
 * S3: the storage location's AWS credential names an IAM role (role_arn); deltad assumes
 * it with the credential's keys (STS AssumeRole, store/objstore/os_aws_sts.c) with a session
 * policy that allows only the table's prefix: GetObject (and PutObject/DeleteObject for
 * READ_WRITE) on arn:aws:s3:::<bucket>/<prefix>/ and below, and ListBucket on the bucket for keys
 * under <prefix>/. The session lasts TC_SESSION_S. The STS endpoint is the location's
 * property sts_endpoint, else its endpoint (MinIO and emulators answer STS there), else AWS's
 * regional one.
 *
 * GCS: the location's service-account key gets a token that is downscoped (Google's token
 * exchange with a Credential Access Boundary, os_gcs_down.c) to the objects under the
 * table's prefix, read-only unless asked; the exchange's URL is the location's property
 * sts_endpoint, else Google's. Azure is refused saying why. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <jansson.h>

#include "common/err.h"
#include "server/service/sharing_int.h"
#include "server/service/tables_int.h"

#define TC_SESSION_S 3600

/* The ARN partition of an AWS region. */
static const char *tc_partition(const char *region) {
  if (region && !strncmp(region, "cn-", 3)) return "aws-cn";
  if (region && !strncmp(region, "us-gov-", 7)) return "aws-us-gov";
  return "aws";
}

/* The session policy of the table's prefix (bucket/prefix of loc), JSON text in *out. */
static int tc_policy(char **out, const sign_location *loc, const char *region, bool write) {
  const char *part = tc_partition(region);
  char objs[1200], bucket[600], under[700];
  const char *p = loc->path;
  if (strpbrk(p, "*?$") || strpbrk(loc->bucket, "*?$")) /* IAM wildcards and policy variables */
    return dd_err_set(DD_EPRECOND, "the table's location holds '*', '?' or '$', which a session "
                      "policy would read as a pattern: no temporary credentials for it");
  if ((size_t)snprintf(objs, sizeof objs, "arn:%s:s3:::%s/%s%s*", part, loc->bucket, p, *p ? "/" : "") >= sizeof objs ||
      (size_t)snprintf(bucket, sizeof bucket, "arn:%s:s3:::%s", part, loc->bucket) >= sizeof bucket ||
      (size_t)snprintf(under, sizeof under, "%s%s*", p, *p ? "/" : "") >= sizeof under)
    return dd_err_set(DD_EINVAL, "the table's location is too long for a session policy");
  json_t *read = json_pack("{s:s, s:[s,s], s:s}", "Effect", "Allow", "Action", "s3:GetObject",
                           "s3:GetObjectVersion", "Resource", objs);
  json_t *list = json_pack("{s:s, s:s, s:s, s:{s:{s:[s,s]}}}", "Effect", "Allow", "Action",
                           "s3:ListBucket", "Resource", bucket, "Condition", "StringLike",
                           "s3:prefix", under, *p ? p : under);
  json_t *st = json_array();
  json_array_append_new(st, read);
  json_array_append_new(st, list);
  if (write)
    json_array_append_new(st, json_pack("{s:s, s:[s,s], s:s}", "Effect", "Allow", "Action",
                                        "s3:PutObject", "s3:DeleteObject", "Resource", objs));
  json_t *doc = json_pack("{s:s, s:o}", "Version", "2012-10-17", "Statement", st);
  *out = doc && read && list ? json_dumps(doc, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  json_decref(doc);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* RoleSessionName: [\w+=,.@-]{2,64}; the table id's characters that fit. */
static void tc_session_name(char out[65], const char *table_id) {
  size_t n = (size_t)snprintf(out, 65, "deltad-");
  for (const char *c = table_id; *c && n < 64; c++)
    if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '-')
      out[n++] = *c;
  out[n] = 0;
}

static int tc_s3(Deltad__Tables__V1__TemporaryCredentials *res, shr_remote *r,
                 const cat_dtable *t, bool write) {
  const Deltad__Credentials__V1__AwsAccessKeyCredential *aws = r->cred->aws;
  if (!aws->role_arn || !*aws->role_arn)
    return dd_err_set(DD_EPRECOND, "credential '%s' has no role_arn: temporary credentials for "
                      "%s are an STS session of a role narrowed to the table's prefix (its "
                      "static keys cannot be narrowed); create the credential with a role "
                      "ARN", r->cred->name, t->full_name);
  char *policy = NULL, session[65];
  int rc = tc_policy(&policy, &r->where, r->sc.aws_region, write);
  tc_session_name(session, t->table_id);
  const char *ep = shr_remote_prop(r, "sts_endpoint");
  if (!ep) ep = shr_remote_prop(r, "endpoint");
  os_aws_assume in = {&r->sc, ep, aws->role_arn, aws->external_id, session, policy, TC_SESSION_S};
  os_aws_session s;
  memset(&s, 0, sizeof s);
  if (!rc) rc = os_aws_assume_role(&s, &in);
  free(policy);
  if (rc) return rc;
  Deltad__Tables__V1__AwsTemporaryCredentials *a = malloc(sizeof *a);
  if (!a) {
    os_aws_session_free(&s);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__tables__v1__aws_temporary_credentials__init(a);
  a->access_key_id = s.access_key_id; /* the response owns them from here */
  a->secret_access_key = s.secret_access_key;
  a->session_token = s.session_token;
  res->aws_temp_credentials = a;
  res->expiration_time = s.expiration_ms;
  return 0;
}

/* GCS: the location credential's service-account token, downscoped to the table's prefix. */
static int tc_gcs(Deltad__Tables__V1__TemporaryCredentials *res, shr_remote *r, bool write) {
  if (r->sc.kind != SIGN_CRED_GCP_SA)
    return dd_err_set(DD_EPRECOND, "credential '%s' is an HMAC key: temporary credentials for "
                      "GCS tables are downscoped tokens of a service account's key",
                      r->cred->name);
  char *tok = NULL;
  int64_t exp = 0;
  int rc = os_gcs_downscoped_token(&tok, &exp, &r->sc, shr_remote_prop(r, "sts_endpoint"),
                                   r->where.bucket, r->where.path, write);
  Deltad__Tables__V1__GcpOauthToken *g = rc ? NULL : malloc(sizeof *g);
  if (!rc && !g) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (rc) {
    free(tok);
    return rc;
  }
  deltad__tables__v1__gcp_oauth_token__init(g);
  g->oauth_token = tok;
  res->gcp_oauth_token = g;
  res->expiration_time = exp * 1000;
  return 0;
}

int ts_temporary_credentials(Deltad__Tables__V1__TemporaryCredentials **out, cat_store *store,
                             const cat_dtable *t, bool write) {
  *out = NULL;
  if (!strncmp(t->storage_location, "file://", 7))
    return dd_err_set(DD_EPRECOND, "table '%s' is local: temporary credentials are for tables in "
                      "object storage; read it through deltad", t->full_name);
  cat_view *v = NULL;
  shr_remote r;
  memset(&r, 0, sizeof r);
  int rc = cat_view_open(store, &v);
  if (!rc) rc = shr_remote_resolve(v, NULL, t->storage_location, &r);
  if (v) cat_view_close(v);
  Deltad__Tables__V1__TemporaryCredentials *res = NULL;
  if (!rc && !(res = malloc(sizeof *res))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (res) deltad__tables__v1__temporary_credentials__init(res);
  if (!rc && r.where.kind == SIGN_LOC_S3 &&
      r.cred->credential_case == DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AWS)
    rc = tc_s3(res, &r, t, write);
  else if (!rc && r.where.kind == SIGN_LOC_GCS)
    rc = tc_gcs(res, &r, write);
  else if (!rc)
    rc = dd_err_set(DD_EUNSUPPORTED, "temporary credentials for %s are not issued: S3 and GCS "
                    "tables get them; an Azure SAS scoped to a prefix needs a directory SAS on a "
                    "hierarchical-namespace account", t->storage_location);
  if (!rc && !(res->url = strdup(t->storage_location))) rc = dd_err_set(DD_ENOMEM, "out of memory");
  shr_remote_free(&r);
  if (rc && res) protobuf_c_message_free_unpacked(&res->base, NULL);
  else *out = res;
  return rc;
}
