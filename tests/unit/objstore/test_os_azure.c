/* test_os_azure.c: the Azure Blob backend of os_store (store/objstore/os_azure.c) against
 * Azurite, Microsoft's emulator, which checks SAS signatures. Not a ctest case of its own:
 * tests/integration/test_sharing_azure.py starts Azurite, creates the container and runs
 * this program with DD_AZURE_ENDPOINT (blob base URL, "http://127.0.0.1:<port>/
 * devstoreaccount1"), DD_AZURE_CONTAINER and DD_AZURE_SAS (a container SAS made by the
 * Azure SDK); DD_AZURE_MANY ("<prefix>:<count>") names one-byte blobs <prefix>/00000.bin...
 * uploaded by the SDK, more than one List Blobs page. Without them the tests are skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"
#include "store/objstore/os_remote.h"

#define ACCOUNT "devstoreaccount1"
#define KEY "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="

static const char *env(const char *name) {
  const char *v = getenv(name);
  return v && *v ? v : NULL;
}

static sign_cred key_cred(void) {
  sign_cred c = {0};
  c.kind = SIGN_CRED_AZURE_KEY;
  c.azure_account = ACCOUNT;
  c.azure_key_b64 = KEY;
  c.azure_endpoint = env("DD_AZURE_ENDPOINT");
  return c;
}

static os_store *open_at(const char *scheme_fmt, const char *prefix, const sign_cred *c) {
  char url[512];
  snprintf(url, sizeof url, scheme_fmt, env("DD_AZURE_CONTAINER"), prefix);
  os_store *st = NULL;
  int rc = os_open_url(&st, url, c);
  if (rc) fail_msg("os_open_url(%s): %s", url, dd_err_msg());
  return st;
}

static void need_azurite(void) {
  if (!env("DD_AZURE_ENDPOINT") || !env("DD_AZURE_CONTAINER")) skip();
}

/* Every write and read of os.h on one store; prefix keeps runs apart. */
static void exercise(os_store *st) {
  static const char body[] = "{\"commitInfo\":{}}\n";
  uint8_t *data = NULL;
  size_t len = 0;
  assert_int_equal(os_mkdirs(st, "_delta_log"), 0);
  assert_int_equal(os_put(st, "_delta_log/a.txt", "hello azure", 11), 0);
  assert_int_equal(os_put(st, "_delta_log/a.txt", "hello, azure!", 13), 0); /* replace */
  assert_int_equal(os_put_if_absent(st, "_delta_log/00000.json", body, strlen(body)), 0);
  assert_int_equal(os_put_if_absent(st, "_delta_log/00000.json", "other", 5), DD_EEXISTS);
  assert_int_equal(os_put(st, "_delta_log/sub/x.bin", "", 0), 0);
  assert_int_equal(os_put(st, "part 1=é/p.parquet", "PAR1", 4), 0);

  assert_int_equal(os_read_all(st, "_delta_log/00000.json", &data, &len), 0);
  assert_int_equal(len, strlen(body)); /* the second put_if_absent changed nothing */
  assert_memory_equal(data, body, len);
  free(data);
  assert_int_equal(os_read_all(st, "_delta_log/a.txt", &data, &len), 0);
  assert_int_equal(len, 13);
  assert_memory_equal(data, "hello, azure!", 13);
  free(data);
  assert_int_equal(os_read_all(st, "part 1=é/p.parquet", &data, &len), 0);
  assert_int_equal(len, 4);
  free(data);
  assert_int_equal(os_read_all(st, "_delta_log/nope.json", &data, &len), DD_ENOTFOUND);

  uint8_t buf[8];
  assert_int_equal(os_read_range(st, "_delta_log/a.txt", 7, 5, buf), 0);
  assert_memory_equal(buf, "azure", 5);
  assert_int_equal(os_read_range(st, "_delta_log/a.txt", 10, 8, buf), DD_ECORRUPT);
  assert_int_equal(os_read_range(st, "_delta_log/a.txt", 100, 2, buf), DD_ECORRUPT);
  assert_int_equal(os_read_range(st, "_delta_log/nope", 0, 2, buf), DD_ENOTFOUND);

  os_stat s;
  int64_t now_ms = (int64_t)time(NULL) * 1000;
  assert_int_equal(os_stat_path(st, "_delta_log/a.txt", &s), 0);
  assert_false(s.is_dir);
  assert_int_equal(s.size, 13);
  assert_true(s.mtime_ms > now_ms - 600000 && s.mtime_ms < now_ms + 600000);
  assert_int_equal(os_stat_path(st, "_delta_log", &s), 0);
  assert_true(s.is_dir);
  assert_int_equal(os_stat_path(st, "", &s), 0);
  assert_true(s.is_dir);
  assert_int_equal(os_stat_path(st, "_delta_lo", &s), DD_ENOTFOUND);

  os_list l;
  assert_int_equal(os_list_dir(st, "_delta_log", &l), 0);
  assert_int_equal(l.count, 3);
  assert_string_equal(l.entries[0].name, "00000.json");
  assert_int_equal(l.entries[0].size, (int64_t)strlen(body));
  assert_true(l.entries[0].mtime_ms > now_ms - 600000);
  assert_false(l.entries[0].is_dir);
  assert_string_equal(l.entries[1].name, "a.txt");
  assert_int_equal(l.entries[1].size, 13);
  assert_string_equal(l.entries[2].name, "sub");
  assert_true(l.entries[2].is_dir);
  os_list_free(&l);
  assert_int_equal(os_list_dir(st, "", &l), 0);
  assert_int_equal(l.count, 2);
  assert_string_equal(l.entries[0].name, "_delta_log");
  assert_string_equal(l.entries[1].name, "part 1=é");
  os_list_free(&l);
  assert_int_equal(os_list_dir(st, "nothing", &l), DD_ENOTFOUND);

  /* a body big enough for curl's "Expect: 100-continue" (headers of two responses) */
  size_t big = 3u << 20;
  uint8_t *blob = malloc(big);
  assert_non_null(blob);
  for (size_t i = 0; i < big; i++) blob[i] = (uint8_t)(i * 7 + (i >> 12));
  assert_int_equal(os_put_if_absent(st, "big.bin", blob, big), 0);
  assert_int_equal(os_stat_path(st, "big.bin", &s), 0);
  assert_int_equal(s.size, (int64_t)big);
  assert_true(s.mtime_ms > now_ms - 600000);
  assert_int_equal(os_read_range(st, "big.bin", big - 1000, 8, buf), 0);
  assert_memory_equal(buf, blob + big - 1000, 8);
  assert_int_equal(os_read_all(st, "big.bin", &data, &len), 0);
  assert_int_equal(len, big);
  assert_memory_equal(data, blob, big);
  free(data);
  free(blob);
  assert_int_equal(os_delete(st, "big.bin"), 0);

  assert_int_equal(os_rmdir(st, "_delta_log/sub"), DD_EPRECOND);
  assert_int_equal(os_delete(st, "_delta_log/sub/x.bin"), 0);
  assert_int_equal(os_delete(st, "_delta_log/sub/x.bin"), DD_ENOTFOUND);
  assert_int_equal(os_rmdir(st, "_delta_log/sub"), 0);
  assert_int_equal(os_stat_path(st, "_delta_log/sub", &s), DD_ENOTFOUND);
  for (const char *const *p = (const char *const[]){"_delta_log/a.txt", "_delta_log/00000.json",
                                                    "part 1=é/p.parquet", NULL};
       *p; p++)
    assert_int_equal(os_delete(st, *p), 0);
  assert_int_equal(os_list_dir(st, "", &l), DD_ENOTFOUND);
  assert_int_equal(os_rmdir(st, "_delta_log"), 0);
}

static void test_account_key(void **state) {
  (void)state;
  need_azurite();
  sign_cred c = key_cred();
  os_store *st = open_at("abfss://%s@" ACCOUNT ".dfs.core.windows.net/%s", "key/t1", &c);
  exercise(st);
  os_store_free(st);
}

static void test_sas_token(void **state) {
  (void)state;
  need_azurite();
  if (!env("DD_AZURE_SAS")) skip();
  sign_cred c = {0};
  c.kind = SIGN_CRED_AZURE_SAS;
  c.azure_account = ACCOUNT;
  c.azure_sas = env("DD_AZURE_SAS");
  c.azure_endpoint = env("DD_AZURE_ENDPOINT");
  os_store *st = open_at("az://%s/%s", "sas/t1", &c); /* account from the credential */
  exercise(st);
  os_store_free(st);
}

/* Absolute paths in the same container are read; others are refused. */
static void test_absolute_paths(void **state) {
  (void)state;
  need_azurite();
  sign_cred c = key_cred();
  os_store *st = open_at("wasbs://%s@" ACCOUNT ".blob.core.windows.net/%s", "abs/t", &c);
  assert_int_equal(os_put(st, "f.bin", "xyz", 3), 0);
  char url[512];
  snprintf(url, sizeof url, "abfss://%s@" ACCOUNT ".dfs.core.windows.net/abs/t/f.bin",
           env("DD_AZURE_CONTAINER"));
  uint8_t *data = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(st, url, &data, &len), 0);
  assert_int_equal(len, 3);
  free(data);
  assert_int_equal(os_read_all(st, "abfss://other@" ACCOUNT ".dfs.core.windows.net/abs/t/f.bin",
                               &data, &len),
                   DD_EPERM);
  assert_int_equal(os_read_all(st, "s3://b/abs/t/f.bin", &data, &len), DD_EPERM);
  assert_int_equal(os_delete(st, "f.bin"), 0);
  os_store_free(st);
}

/* Azurite checks signatures: a wrong key or an altered token reads nothing. */
static void test_refused_credentials(void **state) {
  (void)state;
  need_azurite();
  sign_cred c = key_cred();
  c.azure_key_b64 = "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=="; /* 64 zero bytes */
  os_store *st = open_at("az://%s/%s", "key/t2", &c);
  uint8_t *data = NULL;
  size_t len = 0;
  assert_int_equal(os_put(st, "x", "1", 1), DD_EPERM);
  assert_non_null(strstr(dd_err_msg(), "403"));
  os_list l;
  assert_int_equal(os_list_dir(st, "", &l), DD_EPERM);
  os_store_free(st);
  if (env("DD_AZURE_SAS")) {
    char forged[2048];
    snprintf(forged, sizeof forged, "%s", env("DD_AZURE_SAS"));
    char *sig = strstr(forged, "sig=");
    assert_non_null(sig);
    sig[4] = sig[4] == 'A' ? 'B' : 'A'; /* one character of the signature */
    sign_cred s = {0};
    s.kind = SIGN_CRED_AZURE_SAS;
    s.azure_sas = forged;
    s.azure_account = ACCOUNT;
    s.azure_endpoint = env("DD_AZURE_ENDPOINT");
    st = open_at("az://%s/%s", "sas/t2", &s);
    assert_int_equal(os_read_all(st, "_delta_log/x.json", &data, &len), DD_EPERM);
    os_store_free(st);
  }
}

/* A listing longer than a page (5000 on Azure and Azurite) follows NextMarker. */
static void test_list_pages(void **state) {
  (void)state;
  need_azurite();
  const char *many = env("DD_AZURE_MANY");
  if (!many) skip();
  char prefix[64];
  int count = 0;
  assert_int_equal(sscanf(many, "%63[^:]:%d", prefix, &count), 2);
  sign_cred c = key_cred();
  os_store *st = open_at("abfss://%s@" ACCOUNT ".dfs.core.windows.net/%s", "", &c);
  os_list l;
  assert_int_equal(os_list_dir(st, prefix, &l), 0);
  assert_int_equal(l.count, count);
  for (int i = 0; i < count; i++) {
    char want[32];
    snprintf(want, sizeof want, "%05d.bin", i);
    assert_string_equal(l.entries[i].name, want);
    assert_int_equal(l.entries[i].size, 1);
  }
  os_list_free(&l);
  os_store_free(st);
}

static void test_open_rejects(void **state) {
  (void)state;
  os_store *st = NULL;
  sign_cred c = key_cred();
  c.azure_account = "someoneelse";
  assert_int_equal(os_open_url(&st, "abfss://lake1@" ACCOUNT ".dfs.core.windows.net/t", &c),
                   DD_EINVAL);
  c.azure_account = NULL;
  assert_int_equal(os_open_url(&st, "az://lake1/t", &c), DD_EINVAL); /* no account anywhere */
  c = key_cred();
  c.azure_key_b64 = "not base64!";
  assert_int_equal(os_open_url(&st, "az://lake1/t", &c), DD_EINVAL);
  c = key_cred();
  c.kind = SIGN_CRED_AZURE_CLIENT; /* a service principal needs its tenant and client ... */
  assert_int_equal(os_open_url(&st, "az://lake1/t", &c), DD_EINVAL);
  c.azure_tenant = "t1";
  c.azure_client_id = "c1"; /* ... and a client secret (certificates are not supported) */
  assert_int_equal(os_open_url(&st, "az://lake1/t", &c), DD_EUNSUPPORTED);
  c.azure_client_secret = "s";
  c.azure_tenant = "t1/../x";
  assert_int_equal(os_open_url(&st, "az://lake1/t", &c), DD_EINVAL);
  c = key_cred();
  c.kind = SIGN_CRED_AWS;
  assert_int_equal(os_open_url(&st, "az://lake1/t", &c), DD_EINVAL);
  assert_int_equal(os_open_url(&st, "az://lake1/t", NULL), DD_EINVAL);
  c = key_cred();
  c.kind = SIGN_CRED_AZURE_SAS;
  assert_int_equal(os_open_url(&st, "az://lake1/t", &c), DD_EINVAL); /* no token */
  c.azure_sas = "sv=1 x";
  assert_int_equal(os_open_url(&st, "az://lake1/t", &c), DD_EINVAL);
  assert_int_equal(os_open_url(&st, "az://Bad_Container/t", &c), DD_EINVAL);
  assert_null(st);
  c = key_cred();
  c.azure_endpoint = NULL;
  assert_int_equal(os_open_url(&st, "az://lake1/t/", &c), 0);
  assert_string_equal(os_store_location(st), "az://lake1/t");
  os_store_free(st);
  assert_int_equal(os_open_url(&st, "abfss://lake1@" ACCOUNT ".dfs.core.windows.net", &c), 0);
  assert_string_equal(os_store_location(st), "abfss://lake1@" ACCOUNT ".dfs.core.windows.net");
  os_store_free(st);
}

/* The Blob Batch body and the reading of its answer (no server needed). */
static void test_batch(void **state) {
  (void)state;
  char *body = NULL;
  size_t len = 0;
  const char *const urls[] = {"http://127.0.0.1:1/devstoreaccount1/lake/t/a.parquet?sv=1&sig=x",
                              "https://acct.blob.core.windows.net/lake/t/b%20c.parquet"};
  assert_int_equal(os__azure_batch_body(&body, &len, "batch_1", urls, 2, "Authorization: Bearer T"), 0);
  assert_non_null(strstr(body, "--batch_1\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
                               "Content-ID: 0\r\n\r\nDELETE /devstoreaccount1/lake/t/a.parquet?sv=1&sig=x HTTP/1.1\r\n"
                               "Authorization: Bearer T\r\n"));
  assert_non_null(strstr(body, "Content-ID: 1\r\n\r\nDELETE /lake/t/b%20c.parquet HTTP/1.1\r\n"));
  assert_int_equal(strcmp(body + len - strlen("--batch_1--\r\n"), "--batch_1--\r\n"), 0);
  free(body);
  long st[3];
  char err[128];
  const char *ok = "--br\r\nContent-Type: application/http\r\nContent-ID: 1\r\n\r\nHTTP/1.1 404 Not Found\r\n"
                   "x-ms-error-code: BlobNotFound\r\n\r\n--br\r\nContent-Type: application/http\r\nContent-ID: 0\r\n"
                   "\r\nHTTP/1.1 202 Accepted\r\nx-ms-delete-type-permanent: true\r\n\r\n--br--\r\n";
  assert_int_equal(os__azure_batch_parse(ok, "br", 2, st, err, sizeof err), 0);
  assert_int_equal(st[0], 202);
  assert_int_equal(st[1], 404);
  assert_string_equal(err, "");
  const char *denied = "--br\r\nContent-ID: 0\r\n\r\nHTTP/1.1 202 Accepted\r\n\r\n--br\r\nContent-ID: 1\r\n\r\n"
                       "HTTP/1.1 403 Forbidden\r\nx-ms-error-code: AuthorizationFailure\r\n\r\n--br--";
  assert_int_equal(os__azure_batch_parse(denied, "br", 2, st, err, sizeof err), 0);
  assert_int_equal(st[1], 403);
  assert_string_equal(err, "HTTP 403 AuthorizationFailure");
  /* the batch refused as a whole: one answer without a Content-ID */
  const char *refused = "--br\r\nContent-Type: application/http\r\n\r\nHTTP/1.1 400 Bad Request\r\n"
                        "x-ms-error-code: InvalidInput\r\n\r\n--br--\r\n";
  assert_int_equal(os__azure_batch_parse(refused, "br", 3, st, err, sizeof err), DD_EIO);
  assert_non_null(strstr(dd_err_msg(), "0 of 3 answers, first error HTTP 400 InvalidInput"));
  assert_int_equal(os__azure_batch_parse("", "br", 1, st, err, sizeof err), DD_EIO);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_batch),
      cmocka_unit_test(test_open_rejects),      cmocka_unit_test(test_account_key),
      cmocka_unit_test(test_sas_token),         cmocka_unit_test(test_absolute_paths),
      cmocka_unit_test(test_refused_credentials), cmocka_unit_test(test_list_pages),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
