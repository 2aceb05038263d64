/* test_os_s3.c: the S3 backend of os_store (store/objstore/os_s3.c, os_http.c) against a
 * real S3-compatible server, s3rver (tests/js/s3/s3server.mjs; it checks access key ids but
 * not V4 signatures, which test_s3_sigv4_botocore.py compares with AWS's signer).
 *
 * The server: $DD_S3_ENDPOINT ("http://127.0.0.1:PORT") when set, else this program starts
 * s3rver itself with node on a free loopback port and a scratch directory, and stops it at
 * the end. Exits 77 (ctest: skipped) when neither is possible (s3rver not installed).
 *
 * Covered: whole and ranged reads (past the end: DD_ECORRUPT), stat of objects and of
 * "directories", sorted listings with files and subdirectories, a listing longer than one
 * page (s3rver pages at 1000 keys, so the continuation-token path runs), put, put_if_absent
 * (refused: s3rver ignores If-None-Match, which the probe finds), batch deletes, delete (DD_ENOTFOUND when absent), rmdir (DD_EPRECOND when
 * not empty), keys with special characters, and errors: unknown access key (DD_EPERM with
 * the store's message), absent bucket, server down (DD_EIO, quickly); one store used from
 * several threads at once. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <arpa/inet.h>
#include <curl/curl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "store/objstore/os_remote.h"

#define SKIP_EXIT 77
#define BIG_FILES 1003 /* more than one 1000-key page */

static char g_endpoint[128];
static pid_t g_server = -1;
static char g_dir[64];
static os_store *g_st; /* s3://lake/root */

/* ---- the server ----------------------------------------------------------------------- */

static int rm_cb(const char *p, const struct stat *sb, int flag, struct FTW *ftw) {
  (void)sb;
  (void)flag;
  (void)ftw;
  return remove(p);
}

/* Starts s3rver; returns 0, or -1 when it cannot run here. */
static int server_start(void) {
  char script[512];
  snprintf(script, sizeof script, "%s/node_modules/s3rver", DD_S3JS_DIR);
  if (access(script, R_OK) != 0) return -1;
  snprintf(script, sizeof script, "%s/s3server.mjs", DD_S3JS_DIR);
  strcpy(g_dir, "/tmp/dd_s3_test_XXXXXX");
  if (!mkdtemp(g_dir)) return -1;
  int fds[2];
  if (pipe(fds) != 0) return -1;
  g_server = fork();
  if (g_server < 0) return -1;
  if (g_server == 0) { /* the child: s3rver, stopped with us even if we crash */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    dup2(fds[1], 1);
    close(fds[0]);
    close(fds[1]);
    /* s3rver's continuation tokens use DES, which Node 17+ has only in OpenSSL's legacy
     * provider: without it every listing longer than a page fails with HTTP 500. */
    execlp("node", "node", "--openssl-legacy-provider", script, g_dir, (char *)NULL);
    _exit(127);
  }
  close(fds[1]);
  FILE *f = fdopen(fds[0], "r");
  char line[64] = "";
  int port = 0;
  if (f && fgets(line, sizeof line, f)) sscanf(line, "PORT %d", &port);
  if (f) fclose(f);
  else close(fds[0]);
  if (port <= 0) return -1;
  snprintf(g_endpoint, sizeof g_endpoint, "http://127.0.0.1:%d", port);
  return 0;
}

static void server_stop(void) {
  if (g_server > 0) {
    kill(g_server, SIGTERM);
    waitpid(g_server, NULL, 0);
    g_server = -1;
  }
  if (g_dir[0]) nftw(g_dir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

/* A plain (unsigned) request straight to the server, for set-up: creating the bucket. */
static long raw_request(const char *method, const char *path) {
  char url[512];
  snprintf(url, sizeof url, "%s%s", g_endpoint, path);
  CURL *c = curl_easy_init();
  long status = 0;
  if (!c) return 0;
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (curl_easy_perform(c) == CURLE_OK) curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
  curl_easy_cleanup(c);
  return status;
}

static int open_store(os_store **out, const char *url, const char *akid, const char *endpoint) {
  sign_cred cred = {0};
  cred.kind = SIGN_CRED_AWS;
  cred.aws.access_key_id = akid;
  cred.aws.secret_access_key = "S3RVER"; /* s3rver does not check V4 signatures */
  cred.aws_region = "us-east-1";
  cred.aws_endpoint = endpoint;
  return os_open_url(out, url, &cred);
}

static int group_setup(void **state) {
  (void)state;
  const char *ep = getenv("DD_S3_ENDPOINT");
  if (ep && *ep) snprintf(g_endpoint, sizeof g_endpoint, "%s", ep);
  else if (server_start() != 0) return -1;
  curl_global_init(CURL_GLOBAL_DEFAULT);
  long st = raw_request("PUT", "/lake");
  if (st != 200 && st != 409) return -1;
  return open_store(&g_st, "s3://lake/root", "S3RVER", g_endpoint);
}

static int group_teardown(void **state) {
  (void)state;
  os_store_free(g_st);
  g_st = NULL;
  server_stop();
  curl_global_cleanup();
  return 0;
}

/* ---- helpers -------------------------------------------------------------------------- */

static void put_str(const char *path, const char *s) {
  assert_int_equal(os_put(g_st, path, s, strlen(s)), 0);
}

static void assert_content(const os_store *st, const char *path, const char *want) {
  uint8_t *buf = NULL;
  size_t len = 0;
  int rc = os_read_all(st, path, &buf, &len);
  if (rc) fail_msg("read_all %s: %d %s", path, rc, dd_err_msg());
  assert_int_equal(len, strlen(want));
  assert_memory_equal(buf, want, len);
  assert_int_equal(buf[len], 0);
  free(buf);
}

/* ---- tests ---------------------------------------------------------------------------- */

static void test_read_all_and_range(void **state) {
  (void)state;
  put_str("r/hello.txt", "hello, object world");
  assert_content(g_st, "r/hello.txt", "hello, object world");
  uint8_t part[8];
  assert_int_equal(os_read_range(g_st, "r/hello.txt", 7, 6, part), 0);
  assert_memory_equal(part, "object", 6);
  assert_int_equal(os_read_range(g_st, "r/hello.txt", 0, 1, part), 0);
  assert_int_equal(part[0], 'h');
  assert_int_equal(os_read_range(g_st, "r/hello.txt", 18, 1, part), 0);
  assert_int_equal(part[0], 'd');
  /* partly past the end, wholly past the end, and at the end */
  assert_int_equal(os_read_range(g_st, "r/hello.txt", 15, 8, part), DD_ECORRUPT);
  assert_int_equal(os_read_range(g_st, "r/hello.txt", 100, 4, part), DD_ECORRUPT);
  assert_int_equal(os_read_range(g_st, "r/hello.txt", 19, 1, part), DD_ECORRUPT);
  assert_int_equal(os_read_range(g_st, "r/missing", 0, 1, part), DD_ENOTFOUND);
  uint8_t *buf = NULL;
  size_t len = 1;
  assert_int_equal(os_read_all(g_st, "r/missing", &buf, &len), DD_ENOTFOUND);
  assert_null(buf);
  assert_int_equal(len, 0);
  /* an absolute URL in the same bucket, and one in another bucket */
  assert_content(g_st, "s3://lake/root/r/hello.txt", "hello, object world");
  assert_int_equal(os_read_all(g_st, "s3://other/root/r/hello.txt", &buf, &len), DD_EPERM);
}

static void test_empty_and_large_objects(void **state) {
  (void)state;
  assert_int_equal(os_put(g_st, "r/empty", NULL, 0), 0);
  assert_content(g_st, "r/empty", "");
  os_stat s;
  assert_int_equal(os_stat_path(g_st, "r/empty", &s), 0);
  assert_int_equal(s.size, 0);
  /* (A range of an empty object is not tested: s3rver answers 206 with Content-Length 1
   * and no body, where AWS answers 416.) */
  size_t n = 3 * 1024 * 1024 + 17; /* large enough for curl's Expect: 100-continue */
  uint8_t *big = malloc(n);
  assert_non_null(big);
  for (size_t i = 0; i < n; i++) big[i] = (uint8_t)(i * 7 + i / 251);
  assert_int_equal(os_put(g_st, "r/big.bin", big, n), 0);
  uint8_t *got = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(g_st, "r/big.bin", &got, &len), 0);
  assert_int_equal(len, n);
  assert_memory_equal(got, big, n);
  uint8_t mid[1000];
  assert_int_equal(os_read_range(g_st, "r/big.bin", 2000000, sizeof mid, mid), 0);
  assert_memory_equal(mid, big + 2000000, sizeof mid);
  free(got);
  free(big);
}

static void test_stat(void **state) {
  (void)state;
  time_t before = time(NULL);
  put_str("s/dir/sub/f.json", "{\"a\":1}");
  os_stat s;
  assert_int_equal(os_stat_path(g_st, "s/dir/sub/f.json", &s), 0);
  assert_false(s.is_dir);
  assert_int_equal(s.size, 7);
  /* Last-Modified has whole seconds */
  assert_true(s.mtime_ms >= ((int64_t)before - 2) * 1000);
  assert_true(s.mtime_ms <= ((int64_t)time(NULL) + 2) * 1000);
  assert_int_equal(os_stat_path(g_st, "s/dir", &s), 0);
  assert_true(s.is_dir);
  assert_int_equal(os_stat_path(g_st, "s/dir/sub", &s), 0);
  assert_true(s.is_dir);
  assert_int_equal(os_stat_path(g_st, "s/di", &s), DD_ENOTFOUND);
  assert_int_equal(os_stat_path(g_st, "s/nothing", &s), DD_ENOTFOUND);
  /* the root of the store is a directory, also when the store is the whole bucket (where
   * a HEAD of key "" would ask about the bucket: path-style HEAD /lake answers 200) */
  assert_int_equal(os_stat_path(g_st, "", &s), 0);
  assert_true(s.is_dir);
  put_str("top.txt", "t"); /* (s3rver lists root/ only with an object directly in it) */
  os_store *whole = NULL;
  assert_int_equal(open_store(&whole, "s3://lake", "S3RVER", g_endpoint), 0);
  assert_int_equal(os_stat_path(whole, "", &s), 0);
  assert_true(s.is_dir);
  assert_int_equal(os_stat_path(whole, "root/s/dir/", &s), 0);
  assert_true(s.is_dir);
  assert_int_equal(os_stat_path(whole, "root/s/dir/sub/f.json", &s), 0);
  assert_false(s.is_dir);
  assert_int_equal(s.size, 7);
  os_store_free(whole);
}

static void test_list_sorted(void **state) {
  (void)state;
  /* (s3rver omits a common prefix that holds only deeper prefixes, e.g. l/zz/ for just
   * l/zz/deep/x, where AWS lists it; so l/zz/ also gets a direct object.) */
  const char *files[] = {"l/b.txt", "l/a.txt", "l/B", "l/zz/deep/x", "l/zz/y", "l/c/1", "l/c/2",
                         "l/a.txt.bak", "l/-dash", "l/ab/q"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) put_str(files[i], files[i]);
  put_str("l.sibling", "not inside l/");
  os_list l;
  assert_int_equal(os_list_dir(g_st, "l", &l), 0);
  const char *want[] = {"-dash", "B", "a.txt", "a.txt.bak", "ab", "b.txt", "c", "zz"};
  const bool dir[] = {false, false, false, false, true, false, true, true};
  assert_int_equal(l.count, 8);
  for (size_t i = 0; i < l.count; i++) {
    assert_string_equal(l.entries[i].name, want[i]);
    assert_int_equal(l.entries[i].is_dir, dir[i]);
    if (!dir[i]) {
      assert_int_equal(l.entries[i].size, (int64_t)strlen(want[i]) + 2); /* "l/" + name */
      assert_true(l.entries[i].mtime_ms > (int64_t)1700000000 * 1000);
    }
  }
  os_list_free(&l);
  /* a trailing '/' names the same directory */
  assert_int_equal(os_list_dir(g_st, "l/c/", &l), 0);
  assert_int_equal(l.count, 2);
  assert_string_equal(l.entries[0].name, "1");
  assert_string_equal(l.entries[1].name, "2");
  os_list_free(&l);
  assert_int_equal(os_list_dir(g_st, "l/none", &l), DD_ENOTFOUND);
  assert_int_equal(l.count, 0);
  /* the root lists l, l.sibling and the other tests' directories */
  assert_int_equal(os_list_dir(g_st, "", &l), 0);
  bool seen_l = false, seen_sib = false;
  for (size_t i = 0; i < l.count; i++) {
    if (i > 0) assert_true(strcmp(l.entries[i - 1].name, l.entries[i].name) < 0);
    if (strcmp(l.entries[i].name, "l") == 0) seen_l = l.entries[i].is_dir;
    if (strcmp(l.entries[i].name, "l.sibling") == 0) seen_sib = !l.entries[i].is_dir;
  }
  assert_true(seen_l && seen_sib);
  os_list_free(&l);
}

static void test_list_many_pages(void **state) {
  (void)state;
  char path[64], body[16];
  for (int i = 0; i < BIG_FILES; i++) {
    snprintf(path, sizeof path, "big/f%05d", (i * 389) % BIG_FILES); /* out of order */
    snprintf(body, sizeof body, "%d", (i * 389) % BIG_FILES);
    put_str(path, body);
  }
  put_str("big/a-sub/x", "x");
  put_str("big/zz-sub/y", "y");
  os_list l;
  assert_int_equal(os_list_dir(g_st, "big", &l), 0);
  assert_int_equal(l.count, BIG_FILES + 2);
  assert_string_equal(l.entries[0].name, "a-sub");
  assert_true(l.entries[0].is_dir);
  for (int i = 0; i < BIG_FILES; i++) {
    snprintf(path, sizeof path, "f%05d", i);
    assert_string_equal(l.entries[i + 1].name, path);
    assert_false(l.entries[i + 1].is_dir);
    snprintf(body, sizeof body, "%d", i);
    assert_int_equal(l.entries[i + 1].size, (int64_t)strlen(body));
  }
  assert_string_equal(l.entries[BIG_FILES + 1].name, "zz-sub");
  assert_true(l.entries[BIG_FILES + 1].is_dir);
  os_list_free(&l);
}

/* s3rver ignores If-None-Match: * (a second conditional PUT of one key succeeds), so the
 * probe finds it unsafe and every conditional put is refused, saying why, with nothing
 * written; the probe object is gone; os_put still works. */
static void test_put_if_absent(void **state) {
  (void)state;
  os_stat sb;
  for (int i = 0; i < 2; i++) { /* the second answer comes from the kept probe result */
    assert_int_equal(os_put_if_absent(g_st, "p/_delta_log/00000000000000000000.json", "v0", 2),
                     DD_EPRECOND);
    assert_non_null(strstr(dd_err_msg(), "ignores If-None-Match"));
    assert_int_equal(os_stat_path(g_st, "p/_delta_log/00000000000000000000.json", &sb),
                     DD_ENOTFOUND);
  }
  os_list l;
  assert_int_equal(os_list_dir(g_st, "_delta_log", &l), DD_ENOTFOUND);
  put_str("p/_delta_log/00000000000000000000.json", "v0");
  assert_content(g_st, "p/_delta_log/00000000000000000000.json", "v0");
  /* os_put replaces */
  put_str("p/_delta_log/00000000000000000000.json", "replaced");
  assert_content(g_st, "p/_delta_log/00000000000000000000.json", "replaced");
  assert_int_equal(os_mkdirs(g_st, "p/new/dir"), 0);
}

/* DeleteObjects: keys (special characters included) go in one request; an absent key
 * counts as deleted. */
static void test_delete_many(void **state) {
  (void)state;
  const char *paths[] = {"dm/a", "dm/b&c<d>", "dm/sub/e f", "dm/absent"};
  for (int i = 0; i < 3; i++) put_str(paths[i], "x");
  size_t done = 0;
  assert_int_equal(os_delete_many(g_st, paths, 4, &done, NULL, NULL), 0);
  assert_int_equal(done, 4);
  os_list l;
  assert_int_equal(os_list_dir(g_st, "dm", &l), DD_ENOTFOUND);
}

static void test_delete_and_rmdir(void **state) {
  (void)state;
  put_str("d/one", "1");
  put_str("d/sub/two", "2");
  assert_int_equal(os_rmdir(g_st, "d"), DD_EPRECOND);
  assert_int_equal(os_delete(g_st, "d/one"), 0);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(g_st, "d/one", &buf, &len), DD_ENOTFOUND);
  assert_int_equal(os_delete(g_st, "d/one"), DD_ENOTFOUND);
  assert_int_equal(os_rmdir(g_st, "d"), DD_EPRECOND); /* d/sub/ remains */
  assert_int_equal(os_delete(g_st, "d/sub/two"), 0);
  assert_int_equal(os_rmdir(g_st, "d"), 0);
  assert_int_equal(os_rmdir(g_st, "never/there"), 0);
  os_list l;
  assert_int_equal(os_list_dir(g_st, "d", &l), DD_ENOTFOUND);
}

static void test_special_keys(void **state) {
  (void)state;
  /* the last name is a Hive partition directory, the others are objects */
  const char *names[] = {"a b.txt", "100%.txt", "x+y=z.parquet", "\xc3\xbc\xc3\xa9\xe6\x97\xa5.json",
                         "~tilde~", "amp&lt;<>'\".txt", "q?#;:@!$,()*[].bin",
                         "date=2021-01-01 00%3A00%3A00"};
  const size_t n = sizeof names / sizeof names[0], nfiles = n - 1;
  char path[256];
  for (size_t i = 0; i < nfiles; i++) {
    snprintf(path, sizeof path, "k/%s", names[i]);
    put_str(path, names[i]);
    assert_content(g_st, path, names[i]);
    os_stat s;
    assert_int_equal(os_stat_path(g_st, path, &s), 0);
    assert_int_equal(s.size, (int64_t)strlen(names[i]));
  }
  snprintf(path, sizeof path, "k/%s/part-0.parquet", names[7]); /* a Hive partition dir */
  put_str(path, "p");
  os_list l;
  assert_int_equal(os_list_dir(g_st, "k", &l), 0);
  assert_int_equal(l.count, n);
  for (size_t i = 0; i < n; i++) {
    bool found = false;
    for (size_t j = 0; j < l.count; j++)
      if (strcmp(l.entries[j].name, names[i]) == 0) found = true;
    if (!found) fail_msg("'%s' is not listed", names[i]);
    assert_int_equal(l.entries[i].is_dir, strcmp(l.entries[i].name, names[7]) == 0);
  }
  for (size_t j = 1; j < l.count; j++)
    assert_true(strcmp(l.entries[j - 1].name, l.entries[j].name) < 0);
  os_list_free(&l);
  snprintf(path, sizeof path, "k/%s", names[7]);
  assert_int_equal(os_list_dir(g_st, path, &l), 0);
  assert_int_equal(l.count, 1);
  assert_string_equal(l.entries[0].name, "part-0.parquet");
  os_list_free(&l);
  for (size_t i = 0; i < nfiles; i++) {
    snprintf(path, sizeof path, "k/%s", names[i]);
    assert_int_equal(os_delete(g_st, path), 0);
    assert_int_equal(os_delete(g_st, path), DD_ENOTFOUND);
  }
}

static void test_unknown_access_key(void **state) {
  (void)state;
  os_store *st = NULL;
  put_str("e/x", "x");
  assert_int_equal(open_store(&st, "s3://lake/root", "AKIANOTKNOWN", g_endpoint), 0);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(st, "e/x", &buf, &len), DD_EPERM);
  assert_non_null(strstr(dd_err_msg(), "InvalidAccessKeyId"));
  assert_non_null(strstr(dd_err_msg(), "does not exist in our records"));
  os_list l;
  assert_int_equal(os_list_dir(st, "e", &l), DD_EPERM);
  assert_non_null(strstr(dd_err_msg(), "InvalidAccessKeyId"));
  assert_int_equal(os_put(st, "e/y", "y", 1), DD_EPERM);
  assert_int_equal(os_delete(st, "e/x"), DD_EPERM);
  assert_int_equal(os_rmdir(st, "e"), DD_EPERM);
  os_stat s;
  assert_int_equal(os_stat_path(st, "e/x", &s), DD_EPERM);
  os_store_free(st);
  assert_content(g_st, "e/x", "x"); /* nothing was deleted */
}

static void test_absent_bucket(void **state) {
  (void)state;
  os_store *st = NULL;
  assert_int_equal(open_store(&st, "s3://no-such-bucket/t", "S3RVER", g_endpoint), 0);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(st, "x", &buf, &len), DD_ENOTFOUND);
  assert_non_null(strstr(dd_err_msg(), "bucket 'no-such-bucket' does not exist"));
  os_list l;
  assert_int_equal(os_list_dir(st, "", &l), DD_ENOTFOUND);
  assert_non_null(strstr(dd_err_msg(), "bucket 'no-such-bucket' does not exist"));
  /* rmdir must not report success on a bucket that is not there */
  assert_int_equal(os_rmdir(st, "x"), DD_ENOTFOUND);
  assert_non_null(strstr(dd_err_msg(), "NoSuchBucket"));
  assert_int_equal(os_put(st, "x", "x", 1), DD_ENOTFOUND);
  assert_non_null(strstr(dd_err_msg(), "bucket 'no-such-bucket' does not exist"));
  assert_int_equal(os_put_if_absent(st, "x", "x", 1), DD_ENOTFOUND);
  assert_non_null(strstr(dd_err_msg(), "bucket 'no-such-bucket' does not exist"));
  os_store_free(st);
}

/* One store used from several threads at once (os.h: an os_store holds no mutable state;
 * os_http keeps a locked pool of connections): every read must see its own object. */
#define CONC_THREADS 6
#define CONC_ROUNDS 25

static void *conc_worker(void *arg) {
  intptr_t t = (intptr_t)arg;
  char path[64], want[64];
  for (int i = 0; i < CONC_ROUNDS; i++) {
    int k = (int)((t * 7 + i) % 10);
    snprintf(path, sizeof path, "conc/o%d", k);
    snprintf(want, sizeof want, "object %d", k);
    uint8_t *buf = NULL;
    size_t len = 0;
    if (os_read_all(g_st, path, &buf, &len) != 0 || len != strlen(want) ||
        memcmp(buf, want, len) != 0) {
      free(buf);
      return (void *)1;
    }
    free(buf);
    os_list l;
    if (i % 5 == 0 && (os_list_dir(g_st, "conc", &l) != 0 || l.count != 10)) {
      os_list_free(&l);
      return (void *)1;
    }
    if (i % 5 == 0) os_list_free(&l);
  }
  return NULL;
}

static void test_concurrent_use(void **state) {
  (void)state;
  char path[64], body[64];
  for (int k = 0; k < 10; k++) {
    snprintf(path, sizeof path, "conc/o%d", k);
    snprintf(body, sizeof body, "object %d", k);
    put_str(path, body);
  }
  pthread_t th[CONC_THREADS];
  for (intptr_t t = 0; t < CONC_THREADS; t++)
    assert_int_equal(pthread_create(&th[t], NULL, conc_worker, (void *)t), 0);
  int bad = 0;
  for (int t = 0; t < CONC_THREADS; t++) {
    void *r = NULL;
    pthread_join(th[t], &r);
    bad += r != NULL;
  }
  assert_int_equal(bad, 0);
}

/* A loopback port nobody listens on: bound, then closed. */
static int dead_port(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t al = sizeof a;
  assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
  assert_int_equal(getsockname(fd, (struct sockaddr *)&a, &al), 0);
  close(fd);
  return ntohs(a.sin_port);
}

static void test_server_down(void **state) {
  (void)state;
  char ep[64];
  snprintf(ep, sizeof ep, "http://127.0.0.1:%d", dead_port());
  os_store *st = NULL;
  assert_int_equal(open_store(&st, "s3://lake/root", "S3RVER", ep), 0);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(st, "x", &buf, &len), DD_EIO);
  /* the message names the URL without its query (never the signature) */
  assert_non_null(strstr(dd_err_msg(), "/lake/root/x"));
  assert_null(strstr(dd_err_msg(), "X-Amz-Signature"));
  os_list l;
  assert_int_equal(os_list_dir(st, "", &l), DD_EIO);
  assert_int_equal(os_put_if_absent(st, "y", "y", 1), DD_EIO);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
  assert_true(secs < 10.0); /* three calls, each retried with a short backoff */
  os_store_free(st);
}

int main(void) {
  const char *ep = getenv("DD_S3_ENDPOINT");
  char probe[512];
  snprintf(probe, sizeof probe, "%s/node_modules/s3rver", DD_S3JS_DIR);
  if (!(ep && *ep) && access(probe, R_OK) != 0) {
    fprintf(stderr, "s3rver is not installed (run scripts/setup.sh); skipping\n");
    return SKIP_EXIT;
  }
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_read_all_and_range),
      cmocka_unit_test(test_empty_and_large_objects),
      cmocka_unit_test(test_stat),
      cmocka_unit_test(test_list_sorted),
      cmocka_unit_test(test_list_many_pages),
      cmocka_unit_test(test_put_if_absent),
      cmocka_unit_test(test_delete_many),
      cmocka_unit_test(test_delete_and_rmdir),
      cmocka_unit_test(test_special_keys),
      cmocka_unit_test(test_unknown_access_key),
      cmocka_unit_test(test_absent_bucket),
      cmocka_unit_test(test_concurrent_use),
      cmocka_unit_test(test_server_down),
  };
  return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
