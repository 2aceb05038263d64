/* os_gcs_down.c: downscoped GCS access tokens (os_remote.h), the temporary credentials of a
 * table in Cloud Storage: the service account's own token (the JWT exchange of
 * os_gcs_auth.c) exchanged at Google's Security Token Service (RFC 8693 token exchange) for a
 * token limited by a Credential Access Boundary to the objects under the table's prefix:
 *   availableResource      //storage.googleapis.com/projects/_/buckets/<bucket>
 *   availablePermissions   inRole:roles/storage.objectViewer (objectAdmin when writing)
 *   availabilityCondition  resource.name.startsWith('projects/_/buckets/<b>/objects/<p>/')
 *                          || api.getAttribute('storage.googleapis.com/objectListPrefix',
 *                                              '').startsWith('<p>/')
 * The downscoped token expires with the token it came from. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <curl/curl.h>
#include <jansson.h>
#include <openssl/crypto.h>

#include "common/err.h"
#include "store/objstore/os_gcs.h"
#include "store/objstore/os_http.h"
#include "store/objstore/os_remote.h"

#define GCS_STS "https://sts.googleapis.com/v1/token"

/* The access boundary as the token exchange's options (JSON text in *out). */
static int down_options(char **out, const char *bucket, const char *prefix, bool write) {
  *out = NULL;
  if (strchr(bucket, '\'') || strchr(prefix, '\'') || strchr(prefix, '\\'))
    return dd_err_set(DD_EINVAL, "the table's location cannot be written in an access boundary");
  const char *sep = *prefix ? "/" : "";
  char res[512], expr[2048];
  if ((size_t)snprintf(res, sizeof res, "//storage.googleapis.com/projects/_/buckets/%s", bucket) >= sizeof res ||
      (size_t)snprintf(expr, sizeof expr,
                       "resource.name.startsWith('projects/_/buckets/%s/objects/%s%s') || "
                       "api.getAttribute('storage.googleapis.com/objectListPrefix', '')"
                       ".startsWith('%s%s')", bucket, prefix, sep, prefix, sep) >= sizeof expr)
    return dd_err_set(DD_EINVAL, "the table's location is too long for an access boundary");
  json_t *o = json_pack("{s:{s:[{s:[s], s:s, s:{s:s, s:s}}]}}", "accessBoundary",
                        "accessBoundaryRules", "availablePermissions",
                        write ? "inRole:roles/storage.objectAdmin" : "inRole:roles/storage.objectViewer",
                        "availableResource", res, "availabilityCondition", "title",
                        "deltad table prefix", "expression", expr);
  *out = o ? json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER) : NULL;
  json_decref(o);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

int os_gcs_downscoped_token(char **out_token, int64_t *out_exp, const sign_cred *c,
                            const char *sts_url, const char *bucket, const char *prefix,
                            bool write) {
  *out_token = NULL;
  if (!c || c->kind != SIGN_CRED_GCP_SA || !c->gcp_key_json)
    return dd_err_set(DD_EINVAL, "a downscoped GCS token needs a service account's key");
  os__gcs_key k;
  char *src = NULL, *opts = NULL, *body = NULL, *e_src = NULL, *e_opts = NULL;
  int64_t now = (int64_t)time(NULL), src_exp = 0;
  int rc = os__http_init();
  if (!rc) rc = os__gcs_key_parse(&k, c->gcp_key_json);
  if (!rc) rc = down_options(&opts, bucket, prefix, write);
  if (!rc) rc = os__gcs_fetch_token(&k, now, &src, &src_exp);
  if (!rc && (!(e_src = curl_easy_escape(NULL, src, 0)) || !(e_opts = curl_easy_escape(NULL, opts, 0)) ||
              asprintf(&body, "grant_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Agrant-type%%3Atoken-exchange"
                       "&subject_token_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Atoken-type%%3Aaccess_token"
                       "&requested_token_type=urn%%3Aietf%%3Aparams%%3Aoauth%%3Atoken-type%%3Aaccess_token"
                       "&subject_token=%s&options=%s", e_src, e_opts) < 0))
    body = NULL, rc = dd_err_set(DD_ENOMEM, "out of memory");
  const char *url = sts_url && *sts_url ? sts_url : GCS_STS;
  char what[600];
  snprintf(what, sizeof what, "GCP token downscoping at %s for %s", url, k.client_email ? k.client_email : "?");
  int64_t exp = 0;
  if (!rc) rc = os__oauth_token(url, body, what, now, out_token, &exp);
  if (!rc) *out_exp = exp < src_exp ? exp : src_exp; /* no longer than its source */
  if (src) OPENSSL_cleanse(src, strlen(src));
  if (e_src) OPENSSL_cleanse(e_src, strlen(e_src));
  if (body) OPENSSL_cleanse(body, strlen(body));
  free(src), curl_free(e_src), curl_free(e_opts), free(opts), free(body);
  os__gcs_key_free(&k);
  return rc;
}
