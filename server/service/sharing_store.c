/* sharing_store.c: where a shared table in object storage is read from and how its files
 * are signed. The table's storage location (named by the shared table, or for a table
 * added by URL the location whose URL is the longest prefix of it) gives the credential;
 * the location's properties `endpoint` (an S3-compatible store such as MinIO) and
 * `path_style` ("true") say how to reach it. Secrets are loaded decrypted for the
 * duration of one call and never leave this file except inside signed URLs. The same
 * lookup opens every table the engines reach by URL (shr_store_opener, os_open's opener). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>
#include <openssl/crypto.h>

#include "common/err.h"
#include "server/service/sharing_int.h"

static const char *shr_prop(const cat_location *loc, const char *name) {
  for (size_t i = 0; loc && i < loc->n_properties; i++)
    if (strcasecmp(loc->properties[i]->key, name) == 0) return loc->properties[i]->value;
  return NULL;
}

/* The location of a table added by URL: the one whose URL is the longest prefix of it. */
static int shr_location_for_url(cat_view *v, const char *url, cat_location **out) {
  int rc = cat_view_location_covering(v, out, url);
  if (rc == DD_ENOTFOUND)
    rc = dd_err_set(DD_EPRECOND, "no storage location covers %s: create one with its credential",
                    url);
  return rc;
}

/* Fills r->sc from the decrypted credential (strings borrowed from r->cred). */
static int shr_fill_cred(shr_remote *r, const char *table_url) {
  const cat_credential *c = r->cred;
  sign_cred *sc = &r->sc;
  memset(sc, 0, sizeof *sc);
  if (c->credential_case == DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AWS) {
    sc->kind = SIGN_CRED_AWS;
    sc->aws.access_key_id = c->aws->access_key_id;
    sc->aws.secret_access_key = c->aws->secret_access_key;
    sc->aws.session_token = c->aws->session_token;
    sc->aws_region = *c->aws->region ? c->aws->region : "us-east-1";
    sc->aws_endpoint = shr_prop(r->loc, "endpoint");
    const char *ps = shr_prop(r->loc, "path_style");
    sc->aws_style = ps && strcasecmp(ps, "true") == 0 ? SIGN_S3_STYLE_PATH : SIGN_S3_STYLE_AUTO;
    return 0;
  }
  if (c->credential_case == DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_GCP && c->gcp) {
    const Deltad__Credentials__V1__GcpCredential *g = c->gcp;
    if (g->credential_case == DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_SERVICE_ACCOUNT) {
      sc->kind = SIGN_CRED_GCP_SA;
      sc->gcp_key_json = g->service_account->key_json;
      sc->gcs_endpoint = shr_prop(r->loc, "endpoint");
      json_t *k = json_loads(sc->gcp_key_json, 0, NULL); /* the parts URLs are signed with */
      const char *email = json_string_value(json_object_get(k, "client_email"));
      const char *pem = json_string_value(json_object_get(k, "private_key"));
      r->gcp_email = email ? strdup(email) : NULL;
      r->gcp_pem = pem ? strdup(pem) : NULL;
      json_decref(k);
      sc->gcp_client_email = r->gcp_email;
      sc->gcp_private_key = r->gcp_pem;
      return 0;
    }
    if (g->credential_case == DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_HMAC) {
      sc->kind = SIGN_CRED_AWS; /* the XML API takes HMAC keys as AWS SigV4 does */
      sc->aws.access_key_id = g->hmac->access_id;
      sc->aws.secret_access_key = g->hmac->secret;
      sc->aws_region = "auto";
      sc->aws_endpoint = shr_prop(r->loc, "endpoint");
      return 0;
    }
  }
  if (c->credential_case == DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AZURE && c->azure) {
    const Deltad__Credentials__V1__AzureCredential *a = c->azure;
    sc->azure_endpoint = shr_prop(r->loc, "endpoint");
    if (a->credential_case == DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_ACCOUNT_KEY) {
      sc->kind = SIGN_CRED_AZURE_KEY;
      sc->azure_account = a->account_key->account_name;
      sc->azure_key_b64 = a->account_key->account_key;
      return 0;
    }
    if (a->credential_case == DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_CLIENT && a->client) {
      sc->kind = SIGN_CRED_AZURE_CLIENT;
      sc->azure_tenant = a->client->tenant_id;
      sc->azure_client_id = a->client->client_id;
      sc->azure_client_secret = a->client->client_secret;
      sc->azure_authority = shr_prop(r->loc, "authority_host");
      return 0;
    }
    if (a->credential_case == DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_SAS) {
      sc->kind = SIGN_CRED_AZURE_SAS;
      sc->azure_account = a->sas->account_name;
      sc->azure_sas = a->sas->sas_token;
      return 0;
    }
  }
  return dd_err_set(DD_EUNSUPPORTED, "credential '%s' cannot read %s", c->name, table_url);
}

int shr_remote_resolve(cat_view *v, const cat_shared_table *t, const char *url, shr_remote *r) {
  memset(r, 0, sizeof *r);
  int rc = t && t->location && *t->location ? cat_view_location_get(v, &r->loc, t->location)
                                            : shr_location_for_url(v, url, &r->loc);
  if (!rc && !*r->loc->credential)
    rc = dd_err_set(DD_EPRECOND, "storage location '%s' has no credential to read %s",
                    r->loc->name, url);
  if (!rc) rc = cat_view_credential_secret(v, &r->cred, r->loc->credential);
  if (!rc) rc = shr_fill_cred(r, url);
  if (!rc) rc = sign_parse_location(&r->where, url);
  return rc;
}

const char *shr_remote_prop(const shr_remote *r, const char *name) { return shr_prop(r->loc, name); }

int shr_remote_open(cat_view *v, const cat_shared_table *t, const char *url, shr_remote *r,
                    os_store **out_store) {
  *out_store = NULL;
  int rc = shr_remote_resolve(v, t, url, r);
  if (!rc) rc = os_open_url(out_store, url, &r->sc);
  /* A malformed endpoint, bucket or credential is the server's configuration, not the
   * caller's parameter: an internal error, not 400 INVALID_PARAMETER_VALUE. */
  if (rc == DD_EINVAL)
    rc = dd_err_wrap(DD_EINTERNAL, "storage location '%s' cannot be used",
                     r->loc ? r->loc->name : "?");
  if (rc) shr_remote_free(r);
  return rc;
}

int shr_remote_can_sign(shr_remote *r, int ttl_s) {
  if (r->sc.kind == SIGN_CRED_AZURE_CLIENT) { /* URLs are signed with a user delegation key */
    const char *acct = r->where.account ? r->where.account : r->sc.azure_account;
    int rc = os_azure_udk_get(&r->udk, &r->sc, acct, r->where.endpoint_suffix,
                              (int64_t)time(NULL) + ttl_s + 60);
    if (!rc) r->sc.azure_udk = &r->udk.key;
    return rc;
  }
  if (r->sc.kind != SIGN_CRED_AZURE_SAS) return 0;
  const char *ok = shr_prop(r->loc, "sas_to_recipients");
  if (ok && strcasecmp(ok, "true") == 0) return 0;
  return dd_err_set(DD_EPRECOND,
                    "storage location '%s' reads with a SAS token, and file URLs made with it "
                    "would hand recipients the token itself (whatever it grants, beyond this "
                    "table); use an account-key credential, or set the location property "
                    "sas_to_recipients=true to accept that", r->loc->name);
}

void shr_remote_free(shr_remote *r) {
  if (!r) return;
  if (r->gcp_pem) OPENSSL_cleanse(r->gcp_pem, strlen(r->gcp_pem));
  free(r->gcp_pem);
  free(r->gcp_email);
  os_azure_udk_free(&r->udk);
  sign_location_free(&r->where);
  if (r->cred) protobuf_c_message_free_unpacked(&r->cred->base, NULL);
  if (r->loc) protobuf_c_message_free_unpacked(&r->loc->base, NULL);
  memset(r, 0, sizeof *r);
}

int shr_store_opener(void *ctx, const char *url, os_store **out) {
  *out = NULL;
  cat_view *v = NULL;
  shr_remote r;
  int rc = cat_view_open(ctx, &v);
  if (rc) return rc;
  rc = shr_remote_open(v, NULL, url, &r, out);
  if (!rc) shr_remote_free(&r);
  cat_view_close(v);
  return rc;
}
