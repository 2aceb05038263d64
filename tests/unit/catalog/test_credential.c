/* test_credential.c: credentials and storage locations in the LMDB store: secrets are
 * blanked in every answer, absent from the data file, and decryptable only through the
 * internal API with the right key; credentials in use cannot go; secret.key permissions. */
#include <fcntl.h>
#include <sys/stat.h>

#include "cat_test_util.h"

#define AWS_SECRET "wJalrXUtnFEMI-K7MDENG-bPxRfiCYEXAMPLEKEY"
#define AWS_SESSION "FQoGZXIvYXdzEXAMPLE-SESSION-TOKEN-93f1"
#define AZ_KEY "azure-account-key-0b6c1d8e-SECRET"

/* ---- helpers ------------------------------------------------------------------------------ */

static int make_aws(cat_store *s, const char *name, cat_credential **out) {
  Deltad__Credentials__V1__CreateCredentialRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AwsAccessKeyCredential aws =
      DELTAD__CREDENTIALS__V1__AWS_ACCESS_KEY_CREDENTIAL__INIT;
  aws.access_key_id = "AKIAVISIBLEKEYID0001";
  aws.secret_access_key = AWS_SECRET;
  aws.session_token = AWS_SESSION;
  aws.region = "eu-west-1";
  req.name = (char *)name;
  req.comment = "test";
  req.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AWS;
  req.aws = &aws;
  cat_credential *c = NULL;
  int rc = cat_credential_create(s, &c, "admin", &req);
  if (out) *out = c;
  else if (c) CT_FREE(c);
  return rc;
}

static int make_azure_key(cat_store *s, const char *name) {
  Deltad__Credentials__V1__CreateCredentialRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AzureCredential az = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__INIT;
  Deltad__Credentials__V1__AzureKeyCredential key =
      DELTAD__CREDENTIALS__V1__AZURE_KEY_CREDENTIAL__INIT;
  key.account_name = "acct";
  key.account_key = AZ_KEY;
  az.credential_case = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_ACCOUNT_KEY;
  az.account_key = &key;
  req.name = (char *)name;
  req.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AZURE;
  req.azure = &az;
  cat_credential *c = NULL;
  int rc = cat_credential_create(s, &c, "admin", &req);
  if (c) CT_FREE(c);
  return rc;
}

#define GCP_KEY_JSON "{\"type\":\"service_account\",\"client_email\":\"sa@p.iam.gserviceaccount.com\"," \
                     "\"private_key\":\"-----BEGIN PRIVATE KEY-----\\nGCP-SECRET-7d1f\\n\"}"

/* A gcp credential: a service account's JSON key (key_json given) or an HMAC key. */
static int make_gcp(cat_store *s, const char *name, const char *key_json, const char *hmac_secret) {
  Deltad__Credentials__V1__CreateCredentialRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__GcpCredential g = DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__INIT;
  Deltad__Credentials__V1__GcpServiceAccountKey sa = DELTAD__CREDENTIALS__V1__GCP_SERVICE_ACCOUNT_KEY__INIT;
  Deltad__Credentials__V1__GcsHmacKey hm = DELTAD__CREDENTIALS__V1__GCS_HMAC_KEY__INIT;
  if (key_json) {
    sa.key_json = (char *)key_json;
    g.credential_case = DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_SERVICE_ACCOUNT;
    g.service_account = &sa;
  } else {
    hm.access_id = "GOOG1VISIBLE";
    hm.secret = (char *)hmac_secret;
    g.credential_case = DELTAD__CREDENTIALS__V1__GCP_CREDENTIAL__CREDENTIAL_HMAC;
    g.hmac = &hm;
  }
  req.name = (char *)name;
  req.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_GCP;
  req.gcp = &g;
  cat_credential *c = NULL;
  int rc = cat_credential_create(s, &c, "admin", &req);
  if (c) CT_FREE(c);
  return rc;
}

static int make_location(cat_store *s, const char *name, const char *url,
                         Deltad__Credentials__V1__StorageType type, const char *cred,
                         cat_location **out) {
  Deltad__Credentials__V1__CreateStorageLocationRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__INIT;
  req.name = (char *)name;
  req.url = (char *)url;
  req.type = type;
  req.credential = (char *)(cred ? cred : "");
  cat_location *l = NULL;
  int rc = cat_location_create(s, &l, "admin", &req);
  if (out) *out = l;
  else if (l) CT_FREE(l);
  return rc;
}

/* 1 when needle occurs in the file at dir/rel. */
static int disk_file_contains(const char *dir, const char *rel, const char *needle) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n);
  assert_int_equal(fread(buf, 1, (size_t)n, f), (size_t)n);
  fclose(f);
  int hit = memmem(buf, (size_t)n, needle, strlen(needle)) != NULL;
  free(buf);
  return hit;
}

/* Whether the stored bytes hold needle: the LMDB file itself, or on PostgreSQL every value
 * of every sub-database (what the database keeps). */
static int file_contains(const char *dir, const char *rel, const char *needle) {
  const char *url = getenv("DD_TEST_CATALOG");
  if (!url || !*url) return disk_file_contains(dir, rel, needle);
  cat_store *s = NULL;
  assert_int_equal(ct_open(&s, dir), 0);
  int hit = 0;
  for (int db = 0; db < CAT__DB_COUNT && !hit; db++) {
    cat_txn *txn = NULL;
    cat__cur *cur = NULL;
    cat__bytes k, v;
    assert_int_equal(cat__txn_begin(s, &txn, false), 0);
    assert_int_equal(cat__cur_open(txn, db, &cur), 0);
    for (int rc = cat__cur_seek(cur, "", 0, &k, &v); rc == 0 && !hit; rc = cat__cur_next(cur, &k, &v))
      hit = memmem(v.p, v.n, needle, strlen(needle)) != NULL;
    cat__cur_close(cur);
    cat__txn_abort(txn);
  }
  cat_store_close(s);
  return hit;
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_secrets_blanked_and_encrypted(void **state) {
  ct_env *e = *state;
  cat_credential *c = NULL, *g = NULL, *full = NULL;
  assert_int_equal(make_aws(e->s, "AwsProd", &c), 0);
  assert_string_equal(c->aws->access_key_id, "AKIAVISIBLEKEYID0001");
  assert_string_equal(c->aws->secret_access_key, "");
  assert_string_equal(c->aws->session_token, "");
  assert_string_equal(c->aws->region, "eu-west-1");
  assert_int_equal(make_azure_key(e->s, "az"), 0);
  assert_int_equal(cat_credential_get(e->s, &g, "awsprod"), 0);
  assert_string_equal(g->id, c->id);
  assert_string_equal(g->aws->secret_access_key, "");
  assert_string_equal(g->aws->session_token, "");
  CT_FREE(g);
  assert_int_equal(cat_credential_get(e->s, &g, "AZ"), 0);
  assert_string_equal(g->azure->account_key->account_name, "acct");
  assert_string_equal(g->azure->account_key->account_key, "");
  CT_FREE(g);
  Deltad__Credentials__V1__ListCredentialsRequest lr =
      DELTAD__CREDENTIALS__V1__LIST_CREDENTIALS_REQUEST__INIT;
  Deltad__Credentials__V1__ListCredentialsResponse *l = NULL;
  assert_int_equal(cat_credential_list(e->s, &l, &lr), 0);
  assert_int_equal(l->n_credentials, 2);
  assert_string_equal(l->credentials[0]->name, "AwsProd");
  assert_string_equal(l->credentials[0]->aws->secret_access_key, "");
  assert_string_equal(l->credentials[1]->azure->account_key->account_key, "");
  CT_FREE(l);

  ct_reopen(e); /* everything synced to data.mdb */
  assert_true(file_contains(e->dir, "catalog.mdb/data.mdb", "AKIAVISIBLEKEYID0001"));
  assert_false(file_contains(e->dir, "catalog.mdb/data.mdb", AWS_SECRET));
  assert_false(file_contains(e->dir, "catalog.mdb/data.mdb", AWS_SESSION));
  assert_false(file_contains(e->dir, "catalog.mdb/data.mdb", AZ_KEY));

  assert_int_equal(cat_credential_get_secret(e->s, &full, "AWSPROD"), 0);
  assert_string_equal(full->id, c->id);
  assert_string_equal(full->aws->secret_access_key, AWS_SECRET);
  assert_string_equal(full->aws->session_token, AWS_SESSION);
  CT_FREE(full);
  assert_int_equal(cat_credential_get_secret(e->s, &full, "az"), 0);
  assert_string_equal(full->azure->account_key->account_key, AZ_KEY);
  CT_FREE(full);
  assert_int_equal(cat_credential_get_secret(e->s, &full, "none"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "credential 'none' not found");
  CT_FREE(c);
}

/* gcp credentials: the whole key and the HMAC secret are sealed, blanked in answers and
 * opened by the internal API; a key without client_email or private_key is refused; GCS
 * locations need a gcp credential. */
static void test_gcp_credentials(void **state) {
  ct_env *e = *state;
  cat_credential *g = NULL;
  assert_int_equal(make_gcp(e->s, "gsa", GCP_KEY_JSON, NULL), 0);
  assert_int_equal(make_gcp(e->s, "ghmac", NULL, "HMAC-SECRET-55aa"), 0);
  assert_int_equal(make_gcp(e->s, "bad", "{\"type\":\"service_account\"}", NULL), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "client_email"));
  assert_int_equal(make_gcp(e->s, "bad", NULL, ""), DD_EINVAL);
  assert_int_equal(cat_credential_get(e->s, &g, "gsa"), 0);
  assert_string_equal(g->gcp->service_account->key_json, "");
  CT_FREE(g);
  assert_int_equal(cat_credential_get(e->s, &g, "ghmac"), 0);
  assert_string_equal(g->gcp->hmac->access_id, "GOOG1VISIBLE");
  assert_string_equal(g->gcp->hmac->secret, "");
  CT_FREE(g);
  ct_reopen(e);
  assert_false(file_contains(e->dir, "catalog.mdb/data.mdb", "GCP-SECRET-7d1f"));
  assert_false(file_contains(e->dir, "catalog.mdb/data.mdb", "HMAC-SECRET-55aa"));
  assert_int_equal(cat_credential_get_secret(e->s, &g, "gsa"), 0);
  assert_string_equal(g->gcp->service_account->key_json, GCP_KEY_JSON);
  CT_FREE(g);
  cat_location *loc = NULL;
  assert_int_equal(make_location(e->s, "g", "gs://lake/t", DELTAD__CREDENTIALS__V1__STORAGE_TYPE__GCS,
                                 "gsa", &loc), 0);
  CT_FREE(loc);
  assert_int_equal(make_aws(e->s, "aws", NULL), 0);
  assert_int_equal(make_location(e->s, "g2", "gs://lake/u", DELTAD__CREDENTIALS__V1__STORAGE_TYPE__GCS,
                                 "aws", &loc), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "not a gcp credential"));
}

static void test_wrong_key_does_not_decrypt(void **state) {
  ct_env *e = *state;
  cat_credential *full = NULL;
  char path[512];
  unsigned char other[32];
  assert_int_equal(make_aws(e->s, "c", NULL), 0);
  cat_store_close(e->s);
  e->s = NULL;
  snprintf(path, sizeof path, "%s/secret.key", e->dir);
  for (int i = 0; i < 32; i++) other[i] = (unsigned char)(i * 7 + 1);
  int fd = open(path, O_WRONLY | O_TRUNC);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, other, 32), 32);
  close(fd);
  ct_reopen(e);
  assert_int_equal(cat_credential_get_secret(e->s, &full, "c"), DD_ECORRUPT);
  assert_null(full);
}

static void test_validation(void **state) {
  ct_env *e = *state;
  Deltad__Credentials__V1__CreateCredentialRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AwsAccessKeyCredential aws =
      DELTAD__CREDENTIALS__V1__AWS_ACCESS_KEY_CREDENTIAL__INIT;
  Deltad__Credentials__V1__AzureCredential az = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__INIT;
  cat_credential *c = NULL;
  req.name = "x";
  assert_int_equal(cat_credential_create(e->s, &c, "admin", &req), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "credential: one of azure, aws or gcp is required");
  req.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AWS;
  req.aws = &aws;
  aws.access_key_id = "AK";
  assert_int_equal(cat_credential_create(e->s, &c, "admin", &req), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "aws.secret_access_key: must not be empty");
  req.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AZURE;
  req.azure = &az;
  assert_int_equal(cat_credential_create(e->s, &c, "admin", &req), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "azure: one of account_key, sas or client is required");
  assert_null(c);
  assert_int_equal(make_aws(e->s, "dotted.name-ok", NULL), 0);
  assert_int_equal(make_aws(e->s, "DOTTED.NAME-OK", NULL), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "credential 'DOTTED.NAME-OK' already exists");
  assert_int_equal(make_aws(e->s, "a/b", NULL), DD_EINVAL);
}

static void test_locations_and_in_use(void **state) {
  ct_env *e = *state;
  cat_location *l = NULL;
  assert_int_equal(make_aws(e->s, "MyCred", NULL), 0);
  assert_int_equal(make_azure_key(e->s, "azc"), 0);
  /* non-local locations need an existing credential of the right kind */
  assert_int_equal(make_location(e->s, "l", "s3://b/p", DELTAD__CREDENTIALS__V1__STORAGE_TYPE__S3,
                                 NULL, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "credential: required for a non-local storage location");
  assert_int_equal(make_location(e->s, "l", "s3://b/p", 0, "ghost", NULL), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "credential 'ghost' not found");
  assert_int_equal(make_location(e->s, "l", "s3://b/p", 0, "azc", NULL), DD_EINVAL);
  assert_int_equal(make_location(e->s, "l", "ftp://b/p", 0, "mycred", NULL), DD_EINVAL);
  assert_int_equal(make_location(e->s, "l", "", 0, "mycred", NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "url: must not be empty");
  /* the type is inferred from the url; the credential is matched case-insensitively */
  assert_int_equal(make_location(e->s, "Bucket", "s3://b/p", 0, "MYCRED", &l), 0);
  assert_int_equal(l->type, DELTAD__CREDENTIALS__V1__STORAGE_TYPE__S3);
  assert_string_equal(l->credential, "MyCred");
  assert_string_equal(l->created_by, "admin");
  CT_FREE(l);
  assert_int_equal(make_location(e->s, "bucket", "s3://b/q", 0, "mycred", NULL), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "storage location 'bucket' already exists");
  /* local: no credential needed */
  assert_int_equal(make_location(e->s, "tmp", "file:///tmp/x", 0, NULL, &l), 0);
  assert_int_equal(l->type, DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL);
  assert_string_equal(l->credential, "");
  CT_FREE(l);
  assert_int_equal(make_location(e->s, "tmp2", "/data/x", 0, NULL, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "url: '/data/x' has no scheme");
  assert_int_equal(make_location(e->s, "tmp2", "/data/x", DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL,
                                 NULL, NULL), 0);
  /* in use: the credential stays */
  assert_int_equal(cat_credential_delete(e->s, "mycred"), DD_EPRECOND);
  assert_string_equal(dd_err_msg(), "credential 'MyCred' is used by storage location 'Bucket'");
  cat_credential *c = NULL;
  assert_int_equal(cat_credential_get(e->s, &c, "MyCred"), 0);
  CT_FREE(c);
  assert_int_equal(cat_location_get(e->s, &l, "BUCKET"), 0);
  assert_string_equal(l->url, "s3://b/p");
  CT_FREE(l);
  Deltad__Credentials__V1__ListStorageLocationsRequest lr =
      DELTAD__CREDENTIALS__V1__LIST_STORAGE_LOCATIONS_REQUEST__INIT;
  Deltad__Credentials__V1__ListStorageLocationsResponse *r = NULL;
  lr.max_results = 2;
  assert_int_equal(cat_location_list(e->s, &r, &lr), 0);
  assert_int_equal(r->n_storage_locations, 2);
  assert_string_equal(r->storage_locations[0]->name, "Bucket");
  assert_string_not_equal(r->next_page_token, "");
  CT_FREE(r);
  assert_int_equal(cat_location_delete(e->s, "bucket"), 0);
  assert_int_equal(cat_location_get(e->s, &l, "bucket"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "storage location 'bucket' not found");
  assert_int_equal(cat_credential_delete(e->s, "mycred"), 0);
  assert_int_equal(cat_credential_get(e->s, &c, "MyCred"), DD_ENOTFOUND);
  assert_int_equal(cat_credential_delete(e->s, "mycred"), DD_ENOTFOUND);
}

static void test_secret_key_file(void **state) {
  ct_env *e = *state;
  char path[512];
  struct stat st;
  snprintf(path, sizeof path, "%s/secret.key", e->dir);
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(st.st_size, 32);
  cat_store_close(e->s);
  e->s = NULL;
  assert_int_equal(chmod(path, 0644), 0);
  assert_int_equal(ct_open(&e->s, e->dir), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "secret.key is accessible by group or others"));
  assert_null(e->s);
  assert_int_equal(chmod(path, 0600), 0);
  assert_int_equal(truncate(path, 16), 0);
  assert_int_equal(ct_open(&e->s, e->dir), DD_ECORRUPT);
  assert_null(e->s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_secrets_blanked_and_encrypted, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_gcp_credentials, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_wrong_key_does_not_decrypt, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_validation, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_locations_and_in_use, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_secret_key_file, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
