/* test_credential.c: deltad.credentials.v1.CredentialService handlers through the method
 * table: credentials (secrets never answered, kept for internal use), storage locations,
 * and a credential in use that cannot be deleted. */
#include "svc_test_util.h"

#include "deltad/credentials/v1/credentials.pb-c.h"

typedef Deltad__Credentials__V1__Credential Credential;
typedef Deltad__Credentials__V1__StorageLocation StorageLocation;

static int create_sas(st_env *e, const char *name, Credential **out) {
  Deltad__Credentials__V1__CreateCredentialRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AzureCredential az = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__INIT;
  Deltad__Credentials__V1__AzureSasCredential sas =
      DELTAD__CREDENTIALS__V1__AZURE_SAS_CREDENTIAL__INIT;
  sas.account_name = "store1";
  sas.sas_token = "sv=2024&sig=TOPSECRET";
  az.credential_case = DELTAD__CREDENTIALS__V1__AZURE_CREDENTIAL__CREDENTIAL_SAS;
  az.sas = &sas;
  req.name = (char *)name;
  req.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AZURE;
  req.azure = &az;
  return st_call(e, CREDSVC "CreateCredential", &req, out);
}

static int create_location(st_env *e, const char *name, const char *url, const char *cred,
                           StorageLocation **out) {
  Deltad__Credentials__V1__CreateStorageLocationRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__INIT;
  req.name = (char *)name;
  req.url = (char *)url;
  req.credential = (char *)cred;
  return st_call(e, CREDSVC "CreateStorageLocation", &req, out);
}

static void test_credentials(void **state) {
  st_env *e = *state;
  Credential *c = NULL, *g = NULL, *full = NULL;
  assert_int_equal(create_sas(e, "lake", &c), 0);
  assert_string_equal(c->azure->sas->account_name, "store1");
  assert_string_equal(c->azure->sas->sas_token, "");
  assert_string_equal(c->created_by, "admin");
  assert_int_equal(create_sas(e, "LAKE", NULL), DD_EEXISTS);

  Deltad__Credentials__V1__GetCredentialRequest get =
      DELTAD__CREDENTIALS__V1__GET_CREDENTIAL_REQUEST__INIT;
  get.name = "Lake";
  assert_int_equal(st_call(e, CREDSVC "GetCredential", &get, &g), 0);
  assert_string_equal(g->id, c->id);
  assert_string_equal(g->azure->sas->sas_token, "");
  ST_FREE(g);
  get.name = "nope";
  assert_int_equal(st_call(e, CREDSVC "GetCredential", &get, NULL), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "credential 'nope' not found");

  Deltad__Credentials__V1__ListCredentialsRequest lr =
      DELTAD__CREDENTIALS__V1__LIST_CREDENTIALS_REQUEST__INIT;
  Deltad__Credentials__V1__ListCredentialsResponse *l = NULL;
  assert_int_equal(st_call(e, CREDSVC "ListCredentials", &lr, &l), 0);
  assert_int_equal(l->n_credentials, 1);
  assert_string_equal(l->credentials[0]->azure->sas->sas_token, "");
  ST_FREE(l);

  /* the secret is still there for internal use */
  assert_int_equal(cat_credential_get_secret(dd_app_store(e->app), &full, "lake"), 0);
  assert_string_equal(full->azure->sas->sas_token, "sv=2024&sig=TOPSECRET");
  ST_FREE(full);

  Deltad__Credentials__V1__CreateCredentialRequest bad =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  bad.name = "x";
  assert_int_equal(st_call(e, CREDSVC "CreateCredential", &bad, NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "credential: one of azure, aws or gcp is required");
  ST_FREE(c);
}

static void test_locations(void **state) {
  st_env *e = *state;
  StorageLocation *l = NULL;
  assert_int_equal(create_sas(e, "lake", NULL), 0);
  assert_int_equal(create_location(e, "raw", "abfss://c@store1.dfs.core.windows.net/raw", "LAKE", &l), 0);
  assert_int_equal(l->type, DELTAD__CREDENTIALS__V1__STORAGE_TYPE__AZURE);
  assert_string_equal(l->credential, "lake");
  ST_FREE(l);
  assert_int_equal(create_location(e, "local", "file:///srv/data", "", NULL), 0);
  assert_int_equal(create_location(e, "s3", "s3://bucket", "", NULL), DD_EINVAL);
  assert_int_equal(create_location(e, "s3", "s3://bucket", "missing", NULL), DD_ENOTFOUND);

  Deltad__Credentials__V1__GetStorageLocationRequest get =
      DELTAD__CREDENTIALS__V1__GET_STORAGE_LOCATION_REQUEST__INIT;
  get.name = "RAW";
  assert_int_equal(st_call(e, CREDSVC "GetStorageLocation", &get, &l), 0);
  assert_string_equal(l->name, "raw");
  ST_FREE(l);

  Deltad__Credentials__V1__ListStorageLocationsRequest lr =
      DELTAD__CREDENTIALS__V1__LIST_STORAGE_LOCATIONS_REQUEST__INIT;
  Deltad__Credentials__V1__ListStorageLocationsResponse *ls = NULL;
  assert_int_equal(st_call(e, CREDSVC "ListStorageLocations", &lr, &ls), 0);
  assert_int_equal(ls->n_storage_locations, 2);
  assert_string_equal(ls->storage_locations[0]->name, "local");
  assert_string_equal(ls->storage_locations[1]->name, "raw");
  ST_FREE(ls);

  Deltad__Credentials__V1__DeleteCredentialRequest dc =
      DELTAD__CREDENTIALS__V1__DELETE_CREDENTIAL_REQUEST__INIT;
  dc.name = "lake";
  assert_int_equal(st_call(e, CREDSVC "DeleteCredential", &dc, NULL), DD_EPRECOND);
  assert_string_equal(dd_err_msg(), "credential 'lake' is used by storage location 'raw'");
  Deltad__Credentials__V1__DeleteStorageLocationRequest dl =
      DELTAD__CREDENTIALS__V1__DELETE_STORAGE_LOCATION_REQUEST__INIT;
  dl.name = "raw";
  assert_int_equal(st_call(e, CREDSVC "DeleteStorageLocation", &dl, NULL), 0);
  assert_int_equal(st_call(e, CREDSVC "DeleteStorageLocation", &dl, NULL), DD_ENOTFOUND);
  assert_int_equal(st_call(e, CREDSVC "DeleteCredential", &dc, NULL), 0);
  assert_int_equal(st_call(e, CREDSVC "DeleteCredential", &dc, NULL), DD_ENOTFOUND);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_credentials, st_setup, st_teardown),
      cmocka_unit_test_setup_teardown(test_locations, st_setup, st_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
