/* cat_credential.c: credentials in the store. The public part (secret fields blanked) is
 * the record every get and list returns; the whole credential is kept beside it sealed with
 * AES-256-GCM (cat_secret.c) and only cat_credential_get_secret opens it. */
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__CRED_DESC (&deltad__credentials__v1__credential__descriptor)

/* ---- validation ------------------------------------------------------------------------------ */

static int cat__need(const char *field, const char *v) {
  return (v && *v) ? 0 : dd_err_set(DD_EINVAL, "%s: must not be empty", field);
}

static int cat__azure_check(const Deltad__Credentials__V1__AzureCredential *az) {
  if (!az || (az->credential_case != 0 && !az->account_key)) /* the union's one pointer */
    return dd_err_set(DD_EINVAL, "azure: one of account_key, sas or client is required");
  switch (az->credential_case) {
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_ACCOUNT_KEY: {
    int rc = cat__need("azure.account_key.account_name", az->account_key->account_name);
    return rc ? rc : cat__need("azure.account_key.account_key", az->account_key->account_key);
  }
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_SAS: {
    int rc = cat__need("azure.sas.account_name", az->sas->account_name);
    return rc ? rc : cat__need("azure.sas.sas_token", az->sas->sas_token);
  }
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_CLIENT: {
    const Deltad__Credentials__V1__AzureClientCredential *c = az->client;
    int rc = cat__need("azure.client.tenant_id", c->tenant_id);
    if (!rc) rc = cat__need("azure.client.client_id", c->client_id);
    if (!rc && !*c->client_secret && !*c->client_certificate && !*c->federated_token_file)
      rc = dd_err_set(DD_EINVAL, "azure.client: one of client_secret, client_certificate or "
                                 "federated_token_file is required");
    return rc;
  }
  default:
    return dd_err_set(DD_EINVAL, "azure: one of account_key, sas or client is required");
  }
}

/* A service-account key must be the JSON object Google issues (client_email, private_key). */
static int cat__gcp_check(const Deltad__Credentials__V1__GcpCredential *g) {
  if (!g || (g->credential_case != 0 && !g->service_account)) /* the union's one pointer */
    return dd_err_set(DD_EINVAL, "gcp: one of service_account or hmac is required");
  switch (g->credential_case) {
  case DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_SERVICE_ACCOUNT: {
    const char *k = g->service_account->key_json;
    int rc = cat__need("gcp.service_account.key_json", k);
    if (!rc && (!strstr(k, "\"client_email\"") || !strstr(k, "\"private_key\"")))
      rc = dd_err_set(DD_EINVAL, "gcp.service_account.key_json: not a service account's JSON "
                                 "key (client_email and private_key are required)");
    return rc;
  }
  case DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_HMAC: {
    int rc = cat__need("gcp.hmac.access_id", g->hmac->access_id);
    return rc ? rc : cat__need("gcp.hmac.secret", g->hmac->secret);
  }
  default: return dd_err_set(DD_EINVAL, "gcp: one of service_account or hmac is required");
  }
}

static int cat__credential_check(const Deltad__Credentials__V1__CreateCredentialRequest *req) {
  int rc = cat_name_check("name", req->name, 1);
  if (rc) return rc;
  switch (req->credential_case) {
  case DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AZURE:
    return cat__azure_check(req->azure);
  case DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AWS:
    if (!req->aws) return dd_err_set(DD_EINVAL, "aws: must be set");
    rc = cat__need("aws.access_key_id", req->aws->access_key_id);
    return rc ? rc : cat__need("aws.secret_access_key", req->aws->secret_access_key);
  case DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_GCP:
    return cat__gcp_check(req->gcp);
  default: return dd_err_set(DD_EINVAL, "credential: one of azure, aws or gcp is required");
  }
}

/* ---- blanking secrets ------------------------------------------------------------------------ */

static void cat__blank(char **slot) {
  if (*slot && *slot != protobuf_c_empty_string) {
    OPENSSL_cleanse(*slot, strlen(*slot));
    free(*slot);
  }
  *slot = (char *)protobuf_c_empty_string;
}

/* Clears every secret field of a heap credential in place. */
static void cat__credential_blank(cat_credential *c) {
  if (c->credential_case == DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AWS) {
    cat__blank(&c->aws->secret_access_key);
    cat__blank(&c->aws->session_token);
    return;
  }
  if (c->credential_case == DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_GCP) {
    if (c->gcp->credential_case == DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_SERVICE_ACCOUNT)
      cat__blank(&c->gcp->service_account->key_json);
    else if (c->gcp->credential_case == DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_HMAC)
      cat__blank(&c->gcp->hmac->secret);
    return;
  }
  if (c->credential_case != DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AZURE) return;
  Deltad__Credentials__V1__AzureCredential *az = c->azure;
  switch (az->credential_case) {
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_ACCOUNT_KEY:
    cat__blank(&az->account_key->account_key);
    break;
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_SAS:
    cat__blank(&az->sas->sas_token);
    break;
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_CLIENT:
    cat__blank(&az->client->client_secret);
    cat__blank(&az->client->client_certificate);
    break;
  default: break;
  }
}

/* ---- create ---------------------------------------------------------------------------------- */

/* Seals the packed full credential under id into credential_secrets. */
static int cat__secret_put(cat_store *s, cat_txn *txn, const char *id, const unsigned char *plain,
                           size_t len) {
  unsigned char *sealed = NULL;
  size_t sealed_len = 0;
  int rc = cat__seal(s, &sealed, &sealed_len, plain, len, id, CAT__ID_LEN);
  if (rc) return rc;
  rc = cat__kv_put(txn, CAT__DB_CREDENTIAL_SECRETS, id, CAT__ID_LEN, sealed, sealed_len, false);
  free(sealed);
  return rc;
}

/* Writes the sealed whole and the blanked public record built from full (a view). */
static int cat__credential_write(cat_store *s, cat_txn *txn, cat_credential **out,
                                 const cat_credential *full) {
  size_t len = protobuf_c_message_get_packed_size(&full->base);
  unsigned char *plain = malloc(len ? len : 1);
  cat_credential *pub = NULL;
  int rc = 0;
  if (!plain) return dd_err_set(DD_ENOMEM, "out of memory");
  protobuf_c_message_pack(&full->base, plain);
  rc = cat__secret_put(s, txn, full->id, plain, len);
  if (!rc) {
    pub = (cat_credential *)protobuf_c_message_unpack(CAT__CRED_DESC, NULL, len, plain);
    if (!pub) rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  if (!rc) {
    cat__credential_blank(pub);
    rc = cat__rec_put(s, txn, CAT__DB_CREDENTIALS, full->id, &pub->base, (ProtobufCMessage **)out);
  }
  if (pub) protobuf_c_message_free_unpacked(&pub->base, NULL);
  OPENSSL_cleanse(plain, len);
  free(plain);
  return rc;
}

static int cat__credential_insert(cat_store *s, cat_txn *txn, cat_credential **out,
                                  const char *actor,
                                  const Deltad__Credentials__V1__CreateCredentialRequest *req) {
  char id[CAT__ID_LEN + 1];
  int rc = cat__uuid(id);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_CREDENTIAL_NAMES, NULL, req->name, id);
  if (rc == DD_EEXISTS) rc = dd_err_set(DD_EEXISTS, "credential '%s' already exists", req->name);
  if (rc) return rc;
  cat_credential full = DELTAD__CREDENTIALS__V1__CREDENTIAL__INIT;
  full.id = id;
  full.name = req->name;
  full.comment = req->comment;
  full.owner = full.created_by = full.updated_by = (char *)actor;
  full.create_at = full.update_at = cat__now_ms();
  if (req->credential_case == DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AZURE) {
    full.credential_case = DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AZURE;
    full.azure = req->azure;
  } else if (req->credential_case == DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_GCP) {
    full.credential_case = DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_GCP;
    full.gcp = req->gcp;
  } else {
    full.credential_case = DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AWS;
    full.aws = req->aws;
  }
  return cat__credential_write(s, txn, out, &full);
}

int cat_credential_create(cat_store *s, cat_credential **out, const char *actor,
                          const Deltad__Credentials__V1__CreateCredentialRequest *req) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = cat__credential_check(req);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__credential_insert(s, txn, out, actor, req);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- get / list ------------------------------------------------------------------------------ */

static int cat__credential_find(cat_store *s, cat_txn *txn, const char *name, cat_credential **out,
                                char id[CAT__ID_LEN + 1]) {
  int rc = cat__get_by_name(s, txn, CAT__DB_CREDENTIAL_NAMES, CAT__DB_CREDENTIALS, NULL, name,
                            CAT__CRED_DESC, (ProtobufCMessage **)out, id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "credential '%s' not found", name);
  return rc;
}

int cat_credential_get(cat_store *s, cat_credential **out, const char *name) {
  cat_txn *txn = NULL;
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = cat_name_check("name", name, 1);
  if (!rc) rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  rc = cat__credential_find(s, txn, name, out, id);
  cat__txn_abort(txn);
  return rc;
}

static int cat__secret_open(cat_store *s, cat_txn *txn, const char *id, cat_credential **out) {
  cat__bytes v;
  unsigned char *plain = NULL;
  size_t len = 0;
  int rc = cat__kv_get(txn, CAT__DB_CREDENTIAL_SECRETS, id, CAT__ID_LEN, &v);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ECORRUPT, "credential %s has no secret", id);
  if (rc) return rc;
  rc = cat__open_sealed(s, &plain, &len, v.p, v.n, id, CAT__ID_LEN);
  if (rc) return rc;
  *out = (cat_credential *)protobuf_c_message_unpack(CAT__CRED_DESC, NULL, len, plain);
  OPENSSL_cleanse(plain, len);
  free(plain);
  return *out ? 0 : dd_err_set(DD_ECORRUPT, "credential %s: secret does not decode", id);
}

int cat_view_credential_secret(cat_view *v, cat_credential **out, const char *name) {
  cat_credential *pub = NULL;
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = cat_name_check("name", name, 1);
  if (!rc) rc = cat__credential_find(v->s, v->txn, name, &pub, id);
  if (!rc) rc = cat__secret_open(v->s, v->txn, id, out);
  if (pub) protobuf_c_message_free_unpacked(&pub->base, NULL);
  return rc;
}

int cat_credential_get_secret(cat_store *s, cat_credential **out, const char *name) {
  cat_view v;
  *out = NULL;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_credential_secret(&v, out, name);
  return cat__view_end(&v, rc);
}

int cat_credential_list(cat_store *s, Deltad__Credentials__V1__ListCredentialsResponse **out,
                        const Deltad__Credentials__V1__ListCredentialsRequest *req) {
  cat__page page;
  *out = NULL;
  int rc = cat__list(s, CAT__DB_CREDENTIAL_NAMES, CAT__DB_CREDENTIALS, NULL, CAT__CRED_DESC,
                     req->max_results, req->page_token, &page);
  if (rc) return rc;
  Deltad__Credentials__V1__ListCredentialsResponse *resp = malloc(sizeof *resp);
  if (!resp) {
    cat__page_free(&page);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__credentials__v1__list_credentials_response__init(resp);
  resp->n_credentials = page.n;
  resp->credentials = (cat_credential **)page.items;
  resp->next_page_token = page.next;
  *out = resp;
  return 0;
}

/* ---- delete ---------------------------------------------------------------------------------- */

/* Walk callback over credential_uses: the first use found stops the delete. */
static int cat__credential_in_use(cat_store *s, cat_txn *txn, const char *lname, const char *id,
                                  void *arg) {
  cat_location *loc = NULL;
  (void)lname;
  int rc = cat__rec_get(s, txn, CAT__DB_LOCATIONS, id,
                        &deltad__credentials__v1__storage_location__descriptor,
                        (ProtobufCMessage **)&loc);
  if (rc == DD_ENOTFOUND) return 0; /* a stale use entry does not block */
  if (rc) return rc;
  rc = dd_err_set(DD_EPRECOND, "credential '%s' is used by storage location '%s'",
                  (const char *)arg, loc->name);
  protobuf_c_message_free_unpacked(&loc->base, NULL);
  return rc;
}

int cat_credential_delete(cat_store *s, const char *name) {
  cat_txn *txn = NULL;
  cat_credential *cur = NULL;
  char id[CAT__ID_LEN + 1];
  int rc = cat_name_check("name", name, 1);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__credential_find(s, txn, name, &cur, id);
  if (!rc) rc = cat__scope_walk(s, txn, CAT__DB_CREDENTIAL_USES, id, cat__credential_in_use,
                                cur->name);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_CREDENTIAL_NAMES, NULL, name);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_CREDENTIALS, id, CAT__ID_LEN);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_CREDENTIAL_SECRETS, id, CAT__ID_LEN);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (cur) protobuf_c_message_free_unpacked(&cur->base, NULL);
  return rc;
}
