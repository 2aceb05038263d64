/* test_sharing_view.c: what a recipient's request costs the catalog store. Each sharing
 * handler reads the catalog through one read view, so a whole request (grant check, the
 * share, the grant generation, the table's location, confinement and, for object storage,
 * the covering location and its credential) begins exactly one LMDB read transaction,
 * counted by cat_store_stats_get. Real handlers through the method table on a real app. */
#include <sys/stat.h>
#include <time.h>

#include "server/service/sharing_files.h"
#include "store/sign/sign.h"
#include "svc_test_util.h"

#define SHRSVC "/deltad.sharing.v1.DeltaSharingService/"

typedef struct sv_env {
  st_env *e;
  char lake[256];      /* a directory outside the data directory, holding Delta tables */
  dd_principal rcpt;   /* the recipient "acme", granted share "s1" */
} sv_env;

static void sv_write(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) fail_msg("open %s", path);
  fputs(text, f);
  fclose(f);
}

/* A one-commit Delta table (protocol + metaData, no files) at dir. */
static void sv_delta_table(const char *dir) {
  char p[512];
  snprintf(p, sizeof p, "%s/_delta_log", dir);
  if (mkdir(dir, 0700) || mkdir(p, 0700)) fail_msg("mkdir %s", p);
  snprintf(p, sizeof p, "%s/_delta_log/00000000000000000000.json", dir);
  sv_write(p, "{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}\n"
              "{\"metaData\":{\"id\":\"7d2c6f0e-0000-4000-8000-000000000001\",\"format\":"
              "{\"provider\":\"parquet\",\"options\":{}},\"schemaString\":\"{\\\"type\\\":"
              "\\\"struct\\\",\\\"fields\\\":[{\\\"name\\\":\\\"a\\\",\\\"type\\\":\\\"long\\\","
              "\\\"nullable\\\":true,\\\"metadata\\\":{}}]}\",\"partitionColumns\":[],"
              "\"configuration\":{},\"createdTime\":1}}\n");
}

static void sv_location(cat_store *s, const char *name, const char *url, const char *cred,
                        const char *endpoint) {
  Deltad__Credentials__V1__CreateStorageLocationRequest rq =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__INIT;
  Deltad__Credentials__V1__CreateStorageLocationRequest__PropertiesEntry ep =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__PROPERTIES_ENTRY__INIT;
  Deltad__Credentials__V1__CreateStorageLocationRequest__PropertiesEntry *props[] = {&ep};
  rq.name = (char *)name;
  rq.url = (char *)url;
  if (cred) rq.credential = (char *)cred;
  if (endpoint) {
    ep.key = "endpoint";
    ep.value = (char *)endpoint;
    rq.n_properties = 1;
    rq.properties = props;
  }
  cat_location *loc = NULL;
  if (cat_location_create(s, &loc, "admin", &rq)) fail_msg("location %s: %s", name, dd_err_msg());
  ST_FREE(loc);
}

static void sv_table(cat_store *s, const char *name, const char *location, const char *path,
                     const char *url) {
  Deltad__Sharing__V1__AddTableRequest rq = DELTAD__SHARING__V1__ADD_TABLE_REQUEST__INIT;
  rq.share = "s1";
  rq.schema = "sc";
  rq.name = (char *)name;
  if (location) rq.location = (char *)location, rq.path = (char *)path;
  if (url) rq.url = (char *)url;
  cat_shared_table *t = NULL;
  if (cat_share_table_add(s, &t, "admin", &rq)) fail_msg("table %s: %s", name, dd_err_msg());
  ST_FREE(t);
}

static void sv_share(cat_store *s, const char *name) {
  Deltad__Sharing__V1__CreateShareRequest rq = DELTAD__SHARING__V1__CREATE_SHARE_REQUEST__INIT;
  cat_share *sh = NULL;
  rq.name = (char *)name;
  if (cat_share_create(s, &sh, "admin", &rq)) fail_msg("share %s: %s", name, dd_err_msg());
  ST_FREE(sh);
  if (cat_grant_add(s, name, "acme")) fail_msg("grant %s: %s", name, dd_err_msg());
}

/* Share s1 (schema sc) granted to recipient acme, with a local table by location (t_loc),
 * a local table by URL (t_url) and a table in S3 by URL (t_s3: its endpoint refuses
 * connections, so reading its log fails after the catalog lookups). */
static int sv_setup(void **state) {
  sv_env *v = calloc(1, sizeof *v);
  void *inner = NULL;
  if (st_setup(&inner)) return -1;
  v->e = inner;
  st_mkdtemp(v->lake, sizeof v->lake);
  cat_store *s = dd_app_store(v->e->app);
  char p[512], url[600];
  snprintf(p, sizeof p, "%s/t", v->lake);
  sv_delta_table(p);
  snprintf(p, sizeof p, "%s/u", v->lake);
  sv_delta_table(p);
  snprintf(url, sizeof url, "file://%s", v->lake);
  sv_location(s, "lake", url, NULL, NULL);
  Deltad__Credentials__V1__CreateCredentialRequest cr =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AwsAccessKeyCredential aws =
      DELTAD__CREDENTIALS__V1__AWS_ACCESS_KEY_CREDENTIAL__INIT;
  aws.access_key_id = "AKIDEXAMPLE";
  aws.secret_access_key = "secret";
  cr.name = "aws1";
  cr.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AWS;
  cr.aws = &aws;
  cat_credential *c = NULL;
  if (cat_credential_create(s, &c, "admin", &cr)) fail_msg("credential: %s", dd_err_msg());
  ST_FREE(c);
  sv_location(s, "bucket", "s3://bucket", "aws1", "http://127.0.0.1:9");
  sv_location(s, "bucket_tables", "s3://bucket/tables", "aws1", "http://127.0.0.1:9");
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  cat_token_hash(hash, "acme-token", 10);
  cat_recipient *r = NULL;
  if (cat_recipient_create(s, &r, "admin", "acme", "", hash, 0)) fail_msg("%s", dd_err_msg());
  v->rcpt.kind = DD_PRINCIPAL_RECIPIENT;
  snprintf(v->rcpt.name, sizeof v->rcpt.name, "acme");
  snprintf(v->rcpt.id, sizeof v->rcpt.id, "%s", r->id);
  ST_FREE(r);
  sv_share(s, "s1");
  sv_share(s, "s2");
  sv_share(s, "s3");
  Deltad__Sharing__V1__CreateSharingSchemaRequest sr =
      DELTAD__SHARING__V1__CREATE_SHARING_SCHEMA_REQUEST__INIT;
  sr.share = "s1";
  sr.name = "sc";
  cat_share_schema *sc = NULL;
  if (cat_share_schema_create(s, &sc, "admin", &sr)) fail_msg("schema: %s", dd_err_msg());
  ST_FREE(sc);
  sv_table(s, "t_loc", "lake", "t", NULL);
  snprintf(url, sizeof url, "file://%s/u", v->lake);
  sv_table(s, "t_url", NULL, NULL, url);
  sv_table(s, "t_s3", NULL, NULL, "s3://bucket/tables/t");
  *state = v;
  return 0;
}

static int sv_teardown(void **state) {
  sv_env *v = *state;
  void *inner = v->e;
  st_rmrf(v->lake);
  free(v);
  return st_teardown(&inner);
}

static uint64_t sv_reads(sv_env *v) {
  return cat_store_stats_get(dd_app_store(v->e->app)).read_txns;
}

/* Read transactions one GetTableVersion of table costs; *rc gets the handler's result. */
static uint64_t sv_version_cost(sv_env *v, const char *table, int *rc) {
  Deltad__Sharing__V1__GetTableVersionRequest rq =
      DELTAD__SHARING__V1__GET_TABLE_VERSION_REQUEST__INIT;
  rq.share = "s1";
  rq.schema = "sc";
  rq.table = (char *)table;
  uint64_t before = sv_reads(v);
  *rc = st_call_as(v->e, &v->rcpt, SHRSVC "GetTableVersion", &rq, NULL);
  return sv_reads(v) - before;
}

static void test_local_table_one_view(void **state) {
  sv_env *v = *state;
  int rc;
  /* grant, share, generation, location, confinement: one view */
  assert_int_equal(sv_version_cost(v, "t_loc", &rc), 1);
  assert_int_equal(rc, 0);
  assert_int_equal(sv_version_cost(v, "t_url", &rc), 1);
  assert_int_equal(rc, 0);
}

static void test_s3_table_one_view(void **state) {
  sv_env *v = *state;
  int rc;
  /* ... plus the covering location and its credential; the log read then fails (the
   * endpoint refuses), which is not the catalog's business */
  assert_int_equal(sv_version_cost(v, "t_s3", &rc), 1);
  assert_int_not_equal(rc, 0);
}

static void test_missing_table_one_view(void **state) {
  sv_env *v = *state;
  int rc;
  assert_int_equal(sv_version_cost(v, "nope", &rc), 1);
  assert_int_equal(rc, DD_ENOTFOUND);
}

static void test_list_calls_one_view(void **state) {
  sv_env *v = *state;
  Deltad__Sharing__V1__ListSharesRequest ls = DELTAD__SHARING__V1__LIST_SHARES_REQUEST__INIT;
  Deltad__Sharing__V1__ListSharesResponse *shares = NULL;
  uint64_t before = sv_reads(v);
  assert_int_equal(st_call_as(v->e, &v->rcpt, SHRSVC "ListShares", &ls, &shares), 0);
  assert_int_equal(sv_reads(v) - before, 1); /* the walk and every share in it */
  assert_int_equal(shares->n_items, 3);
  ST_FREE(shares);
  Deltad__Sharing__V1__ListAllTablesRequest la =
      DELTAD__SHARING__V1__LIST_ALL_TABLES_REQUEST__INIT;
  Deltad__Sharing__V1__ListTablesResponse *tables = NULL;
  la.share = "s1";
  before = sv_reads(v);
  assert_int_equal(st_call_as(v->e, &v->rcpt, SHRSVC "ListAllTables", &la, &tables), 0);
  assert_int_equal(sv_reads(v) - before, 1);
  assert_int_equal(tables->n_items, 3);
  ST_FREE(tables);
}

/* Serving a signed file URL: grant generation, the table, its location and confinement. */
static void test_signed_file_one_view(void **state) {
  sv_env *v = *state;
  cat_store *s = dd_app_store(v->e->app);
  cat_share *sh = NULL;
  char gen[40], tid[200], *url = NULL;
  assert_int_equal(cat_share_get(s, &sh, "s1"), 0);
  assert_int_equal(cat_grant_generation(s, sh->id, v->rcpt.id, gen), 0);
  snprintf(tid, sizeof tid, "%s.%s.%s.%s", sh->id, sh->schemas[0]->tables[0]->id, v->rcpt.id,
           gen);
  assert_string_equal(sh->schemas[0]->tables[0]->name, "t_loc");
  ST_FREE(sh);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int64_t now_ms = (int64_t)ts.tv_sec * 1000;
  assert_int_equal(sign_local_url(&url, dd_app_url_key(v->e->app), "http://h", tid,
                                  "_delta_log/00000000000000000000.json", now_ms + 60000),
                   0);
  char *path = strstr(url, "/files/") + 7, *q = strchr(path, '?');
  *q = '\0';
  char *expires = q + strlen("?expires="), *amp = strchr(expires, '&');
  *amp = '\0';
  char *sig = amp + strlen("&sig=");
  int fd = -1;
  uint64_t before = sv_reads(v);
  assert_int_equal(dd_sharing_open_file(v->e->app, path, expires, sig, now_ms, &fd), 0);
  assert_int_equal(sv_reads(v) - before, 1);
  assert_true(fd >= 0);
  close(fd);
  free(url);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_local_table_one_view, sv_setup, sv_teardown),
      cmocka_unit_test_setup_teardown(test_s3_table_one_view, sv_setup, sv_teardown),
      cmocka_unit_test_setup_teardown(test_missing_table_one_view, sv_setup, sv_teardown),
      cmocka_unit_test_setup_teardown(test_list_calls_one_view, sv_setup, sv_teardown),
      cmocka_unit_test_setup_teardown(test_signed_file_one_view, sv_setup, sv_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
