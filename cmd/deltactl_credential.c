/* deltactl_credential.c: `deltactl credential list|create|get|delete`, over the credential
 * methods of deltad.credentials.v1.CredentialService. Secrets go to the server on create
 * and never come back. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_groups.h"
#include "deltad/credentials/v1/credentials.pb-c.h"

#define CRED_SVC "/deltad.credentials.v1.CredentialService/"

/* "azure-account-key", "azure-sas", "azure-client", "aws", "gcp-service-account",
 * "gcs-hmac" or "" for a Credential. */
static const char *cred__kind(const Deltad__Credentials__V1__Credential *c) {
  if (c->credential_case == DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AWS) return "aws";
  if (c->credential_case == DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_GCP && c->gcp)
    return c->gcp->credential_case == DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_HMAC ? "gcs-hmac"
                                                                                             : "gcp-service-account";
  if (c->credential_case != DELTAD__CREDENTIALS__V1__CREDENTIAL__CREDENTIAL_AZURE || !c->azure) return "";
  switch (c->azure->credential_case) {
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_ACCOUNT_KEY: return "azure-account-key";
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_SAS: return "azure-sas";
  case DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_CLIENT: return "azure-client";
  default: return "azure";
  }
}

static char *cred__type_cell(const ProtobufCMessage *item) {
  return strdup(cred__kind((const Deltad__Credentials__V1__Credential *)item));
}

static const dctl_col cred__cols[] = {
    {"NAME", "name", NULL},       {"ID", "id", NULL},
    {"TYPE", NULL, cred__type_cell}, {"COMMENT", "comment", NULL},
    {"CREATED", "create_at", NULL}, {NULL, NULL, NULL},
};

static int cred_list(int argc, char **argv) {
  static const dctl_list_spec spec = {
      "usage: deltactl credential list [--max-results N] [--page-token T] [--all]\n"
      "  Lists storage credentials (without their secrets).\n",
      CRED_SVC "ListCredentials", &deltad__credentials__v1__list_credentials_request__descriptor,
      &deltad__credentials__v1__list_credentials_response__descriptor, NULL, "credentials",
      cred__cols, NULL};
  return dctl_run_list(&spec, argc, argv);
}

/* The parsed secret flags of `credential create`. */
typedef struct cred__flags {
  const char *azure_key[2], *azure_sas[2], *azure_client[3], *aws[2], *gcp_key, *gcs_hmac[2];
  const char *region, *session_token, *role_arn, *external_id, *comment;
  char *gcp_json; /* the key file's contents (owned) */
  int n_kinds;
} cred__flags;

/* Builds the oneof of req from f; everything points into f or the stack objects given. */
static void cred__fill(Deltad__Credentials__V1__CreateCredentialRequest *req, const cred__flags *f,
                       Deltad__Credentials__V1__AzureCredential *az,
                       Deltad__Credentials__V1__AzureKeyCredential *key,
                       Deltad__Credentials__V1__AzureSasCredential *sas,
                       Deltad__Credentials__V1__AzureClientCredential *cli,
                       Deltad__Credentials__V1__AwsAccessKeyCredential *aws) {
  if (f->aws[0]) {
    aws->access_key_id = (char *)f->aws[0];
    aws->secret_access_key = (char *)f->aws[1];
    if (f->region) aws->region = (char *)f->region;
    if (f->session_token) aws->session_token = (char *)f->session_token;
    if (f->role_arn) aws->role_arn = (char *)f->role_arn;
    if (f->external_id) aws->external_id = (char *)f->external_id;
    req->credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AWS;
    req->aws = aws;
    return;
  }
  if (f->azure_key[0]) {
    key->account_name = (char *)f->azure_key[0];
    key->account_key = (char *)f->azure_key[1];
    az->credential_case = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_ACCOUNT_KEY;
    az->account_key = key;
  } else if (f->azure_sas[0]) {
    sas->account_name = (char *)f->azure_sas[0];
    sas->sas_token = (char *)f->azure_sas[1];
    az->credential_case = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_SAS;
    az->sas = sas;
  } else {
    cli->tenant_id = (char *)f->azure_client[0];
    cli->client_id = (char *)f->azure_client[1];
    cli->client_secret = (char *)f->azure_client[2];
    az->credential_case = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_CLIENT;
    az->client = cli;
  }
  req->credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AZURE;
  req->azure = az;
}

/* The gcp oneof of req from f (--gcp-key's file contents or --gcs-hmac). */
static void cred__fill_gcp(Deltad__Credentials__V1__CreateCredentialRequest *req, const cred__flags *f,
                           Deltad__Credentials__V1__GcpCredential *g,
                           Deltad__Credentials__V1__GcpServiceAccountKey *sa,
                           Deltad__Credentials__V1__GcsHmacKey *hmac) {
  if (f->gcp_json) {
    sa->key_json = f->gcp_json;
    g->credential_case = DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_SERVICE_ACCOUNT;
    g->service_account = sa;
  } else {
    hmac->access_id = (char *)f->gcs_hmac[0];
    hmac->secret = (char *)f->gcs_hmac[1];
    g->credential_case = DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_HMAC;
    g->hmac = hmac;
  }
  req->credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_GCP;
  req->gcp = g;
}

/* Reads a service account's JSON key file (at most 64 KiB) into f->gcp_json. */
static int cred__read_key(cred__flags *f) {
  FILE *fp = fopen(f->gcp_key, "rb");
  if (!fp) return dctl_fail(DCTL_EXIT_LOCAL, "cannot read %s: %s", f->gcp_key, strerror(errno));
  char *buf = calloc(1, 65537);
  size_t n = buf ? fread(buf, 1, 65536, fp) : 0;
  bool more = buf && fgetc(fp) != EOF;
  fclose(fp);
  if (!buf || more || !n) {
    free(buf);
    return dctl_fail(DCTL_EXIT_LOCAL, "%s: %s", f->gcp_key, buf ? "not a key file (empty or over 64 KiB)" : "out of memory");
  }
  f->gcp_json = buf;
  return 0;
}

static const char cred__create_usage[] =
    "usage: deltactl credential create NAME\n"
    "         (--azure-account-key ACCOUNT KEY | --azure-sas ACCOUNT TOKEN\n"
    "          | --azure-client TENANT CLIENT SECRET\n"
    "          | --aws ACCESS_KEY_ID SECRET [--region R] [--session-token T]\n"
    "                [--role-arn ARN [--external-id ID]]\n"
    "          | --gcp-key SERVICE_ACCOUNT_KEY.json | --gcs-hmac ACCESS_ID SECRET)\n"
    "         [--comment C]\n"
    "  Creates a storage credential; the server keeps the secret encrypted. With --role-arn\n"
    "  deltad assumes that role (STS) to issue tables' temporary credentials.\n";

static int cred_create(int argc, char **argv) {
  cred__flags f;
  memset(&f, 0, sizeof f);
  int k1 = 0, k2 = 0, k3 = 0, k4 = 0, k5 = 0, k6 = 0, npos;
  const char *pos[1];
  const dctl_opt opts[] = {{"--azure-account-key", 2, f.azure_key, &k1, NULL},
                           {"--azure-sas", 2, f.azure_sas, &k2, NULL},
                           {"--azure-client", 3, f.azure_client, &k3, NULL},
                           {"--aws", 2, f.aws, &k4, NULL},
                           {"--gcp-key", 1, &f.gcp_key, &k5, NULL},
                           {"--gcs-hmac", 2, f.gcs_hmac, &k6, NULL},
                           {"--region", 1, &f.region, NULL, NULL},
                           {"--session-token", 1, &f.session_token, NULL, NULL},
                           {"--role-arn", 1, &f.role_arn, NULL, NULL},
                           {"--external-id", 1, &f.external_id, NULL, NULL},
                           {"--comment", 1, &f.comment, NULL, NULL},
                           {NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {cred__create_usage, opts, 1, 1};
  int rc = dctl_parse(&cmd, argc, argv, pos, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  if (k1 + k2 + k3 + k4 + k5 + k6 != 1)
    return dctl_usage_error(cred__create_usage, "give exactly one of --azure-account-key, --azure-sas, "
                            "--azure-client, --aws, --gcp-key, --gcs-hmac");
  if (!k4 && (f.region || f.session_token || f.role_arn || f.external_id))
    return dctl_usage_error(cred__create_usage, "--region, --session-token, --role-arn and "
                            "--external-id go with --aws");
  Deltad__Credentials__V1__CreateCredentialRequest req = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AzureCredential az = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__INIT;
  Deltad__Credentials__V1__AzureKeyCredential key = DELTAD__CREDENTIALS__V1__AZURE_KEY_CREDENTIAL__INIT;
  Deltad__Credentials__V1__AzureSasCredential sas = DELTAD__CREDENTIALS__V1__AZURE_SAS_CREDENTIAL__INIT;
  Deltad__Credentials__V1__AzureClientCredential cli = DELTAD__CREDENTIALS__V1__AZURE_CLIENT_CREDENTIAL__INIT;
  Deltad__Credentials__V1__AwsAccessKeyCredential aws = DELTAD__CREDENTIALS__V1__AWS_ACCESS_KEY_CREDENTIAL__INIT;
  Deltad__Credentials__V1__GcpCredential g = DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__INIT;
  Deltad__Credentials__V1__GcpServiceAccountKey sa = DELTAD__CREDENTIALS__V1__GCP_SERVICE_ACCOUNT_KEY__INIT;
  Deltad__Credentials__V1__GcsHmacKey hmac = DELTAD__CREDENTIALS__V1__GCS_HMAC_KEY__INIT;
  req.name = (char *)pos[0];
  if (f.comment) req.comment = (char *)f.comment;
  if (k5 && (rc = cred__read_key(&f))) return rc;
  if (k5 || k6) cred__fill_gcp(&req, &f, &g, &sa, &hmac);
  else cred__fill(&req, &f, &az, &key, &sas, &cli, &aws);
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(CRED_SVC "CreateCredential", &req.base, &deltad__credentials__v1__credential__descriptor, &resp);
  if (!rc) rc = dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  if (f.gcp_json) OPENSSL_cleanse(f.gcp_json, strlen(f.gcp_json));
  free(f.gcp_json);
  return rc;
}

static int cred_get(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl credential get NAME\n  Shows a storage credential (without its secret).\n",
      CRED_SVC "GetCredential", &deltad__credentials__v1__get_credential_request__descriptor,
      &deltad__credentials__v1__credential__descriptor, "name", NULL, 0};
  return dctl_run_named(&spec, argc, argv);
}

static int cred_delete(int argc, char **argv) {
  static const dctl_named_spec spec = {
      "usage: deltactl credential delete NAME\n  Deletes a storage credential.\n",
      CRED_SVC "DeleteCredential", &deltad__credentials__v1__delete_credential_request__descriptor,
      &google__protobuf__empty__descriptor, "name", "deleted credential %s", 0};
  return dctl_run_named(&spec, argc, argv);
}

static const dctl_verb cred__verbs[] = {
    {"list", cred_list, "list storage credentials"},
    {"create", cred_create, "create a storage credential (Azure, AWS or GCP)"},
    {"get", cred_get, "show a storage credential"},
    {"delete", cred_delete, "delete a storage credential"},
    {NULL, NULL, NULL},
};

int dctl_credential_main(int argc, char **argv) {
  return dctl_group_run("credential", "Manage credentials for external storage.", cred__verbs, argc, argv);
}
