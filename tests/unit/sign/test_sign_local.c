/* test_sign_local.c: locally signed file URLs and their key file (store/sign/sign_local.c):
 * a pinned vector of the URL format, round trips through the URL text, every rejection
 * (expired, forged, altered path / expiry / table, wrong key), key file handling, and the
 * batch signer (sign_local_batch.c) making the same URLs, as JSON strings.
 *
 * The pinned vector (key bytes 0..31) was computed independently with /usr/bin/python3
 * hmac/hashlib/base64/urllib.parse from the format written in store/sign/sign_int.h; it
 * is this project's own format, not a published one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

#define TID "8f2b6a0e-1c3d-4e5f-9a7b-0c1d2e3f4a5b"
#define NOW INT64_C(1700000000000)

static sign_local_key fixed_key(void) {
  sign_local_key k;
  for (int i = 0; i < SIGN_LOCAL_KEY_LEN; i++)
    k.k[i] = (uint8_t)i;
  return k;
}

/* The parts of a local URL, percent-decoded as a transport would hand them over. */
typedef struct url_parts {
  char *table_id, *rel_path, *expires, *sig;
} url_parts;

static void url_parts_free(url_parts *p) {
  free(p->table_id);
  free(p->rel_path);
  free(p->expires);
  free(p->sig);
}

static url_parts split_url(const char *url, const char *base) {
  url_parts p = {0};
  size_t bl = strlen(base);
  assert_true(strncmp(url, base, bl) == 0);
  const char *s = url + bl;
  assert_true(strncmp(s, "/files/", 7) == 0);
  s += 7;
  const char *q = strchr(s, '?');
  assert_non_null(q);
  char *raw_path = strndup(s, (size_t)(q - s));
  assert_int_equal(sign_local_split_path(&p.table_id, &p.rel_path, raw_path), 0);
  free(raw_path);
  assert_true(strncmp(q, "?expires=", 9) == 0);
  const char *amp = strstr(q, "&sig=");
  assert_non_null(amp);
  p.expires = strndup(q + 9, (size_t)(amp - q - 9));
  p.sig = strdup(amp + 5);
  return p;
}

static void test_pinned_vector(void **state) {
  (void)state;
  sign_local_key k = fixed_key();
  char *url = NULL;
  assert_int_equal(sign_local_url(&url, &k, "https://h/ds/", TID,
                                  "a=2021-01-01 00%3A00%3A00/part-00000 \xc3\xbc.parquet", NOW),
                   0);
  assert_string_equal(url, "https://h/ds/files/" TID "/a%3D2021-01-01%2000%253A00%253A00/"
                           "part-00000%20%C3%BC.parquet?expires=1700000000000"
                           "&sig=MHrHk0nJVuR9OIUhGTpCUjwM1xXpjutX-M1YfNlCjjw");
  free(url);
}

static void test_round_trip_odd_names(void **state) {
  (void)state;
  sign_local_key k = fixed_key();
  const char *names[] = {
      "part-00000-1b2c.snappy.parquet",
      "a=2021-01-01 00%3A00%3A00/b=x y/part-0.parquet",
      "p=100%/f=a=b&c?d#e+f.parquet",
      "\xe6\x97\xa5\xe6\x9c\xac/\xc3\xa9t\xc3\xa9 \xf0\x9f\x98\x80.parquet",
      "_delta_log/00000000000000000010.checkpoint.parquet",
      "deletion_vector_9f3c.bin",
  };
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char *url = NULL;
    assert_int_equal(sign_local_url(&url, &k, "http://127.0.0.1:8080", TID, names[i], NOW), 0);
    /* Only unreserved characters, '/', '%', and the query separators appear. */
    for (const char *c = url; *c; c++)
      assert_non_null(strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
                             "-._~/%:?&=",
                             *c));
    url_parts p = split_url(url, "http://127.0.0.1:8080");
    assert_string_equal(p.table_id, TID);
    assert_string_equal(p.rel_path, names[i]);
    assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, p.expires, p.sig, NOW - 1), 0);
    url_parts_free(&p);
    free(url);
  }
}

static void test_normalised_path(void **state) {
  (void)state;
  sign_local_key k = fixed_key();
  char *a = NULL, *b = NULL;
  assert_int_equal(sign_local_url(&a, &k, "http://h", TID, "./x//y/./z.parquet", NOW), 0);
  assert_int_equal(sign_local_url(&b, &k, "http://h", TID, "x/y/z.parquet", NOW), 0);
  assert_string_equal(a, b);
  free(a);
  free(b);
}

static void test_rejections(void **state) {
  (void)state;
  sign_local_key k = fixed_key(), other = fixed_key();
  other.k[31] ^= 1;
  char *url = NULL;
  assert_int_equal(sign_local_url(&url, &k, "http://h", TID, "d/f.parquet", NOW), 0);
  url_parts p = split_url(url, "http://h");
  /* Expired: now at or after the expiry. */
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, p.expires, p.sig, NOW), DD_EPERM);
  assert_string_equal(dd_err_msg(), "URL expired");
  /* Altered path, other table, altered expiry, wrong key, forged signature. */
  assert_int_equal(sign_local_verify(&k, p.table_id, "d/g.parquet", p.expires, p.sig, 0), DD_EPERM);
  assert_string_equal(dd_err_msg(), "bad signature");
  assert_int_equal(sign_local_verify(&k, "other-table", p.rel_path, p.expires, p.sig, 0), DD_EPERM);
  assert_string_equal(dd_err_msg(), "bad signature");
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, "1700000000001", p.sig, 0),
                   DD_EPERM);
  assert_string_equal(dd_err_msg(), "bad signature");
  assert_int_equal(sign_local_verify(&other, p.table_id, p.rel_path, p.expires, p.sig, 0), DD_EPERM);
  char forged[64];
  strcpy(forged, p.sig);
  forged[0] = forged[0] == 'A' ? 'B' : 'A';
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, p.expires, forged, 0), DD_EPERM);
  assert_string_equal(dd_err_msg(), "bad signature");
  /* Malformed pieces: non-canonical expiry, truncated or padded sig, traversal. */
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, "01700000000000", p.sig, 0),
                   DD_EPERM);
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, "+1700000000000", p.sig, 0),
                   DD_EPERM);
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, "99999999999999999999", p.sig, 0),
                   DD_EPERM);
  strcpy(forged, p.sig);
  forged[42] = '\0';
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, p.expires, forged, 0), DD_EPERM);
  strcpy(forged, p.sig);
  strcat(forged, "=");
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, p.expires, forged, 0), DD_EPERM);
  assert_int_equal(sign_local_verify(&k, p.table_id, "d/../d/f.parquet", p.expires, p.sig, 0),
                   DD_EPERM);
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, NULL, p.sig, 0), DD_EPERM);
  assert_int_equal(sign_local_verify(&k, p.table_id, p.rel_path, p.expires, NULL, 0), DD_EPERM);
  /* The signature is checked before the expiry: an expired forgery is "bad signature". */
  assert_int_equal(sign_local_verify(&k, p.table_id, "x", p.expires, p.sig, NOW + 1), DD_EPERM);
  assert_string_equal(dd_err_msg(), "bad signature");
  url_parts_free(&p);
  free(url);
}

static void test_sign_refuses_bad_input(void **state) {
  (void)state;
  sign_local_key k = fixed_key();
  char *url = NULL;
  assert_int_equal(sign_local_url(&url, &k, "http://h", TID, "../x", NOW), DD_EPERM);
  assert_int_equal(sign_local_url(&url, &k, "http://h", TID, "a/../../x", NOW), DD_EPERM);
  assert_int_equal(sign_local_url(&url, &k, "http://h", TID, "/etc/passwd", NOW), DD_EPERM);
  assert_int_equal(sign_local_url(&url, &k, "http://h", TID, "", NOW), DD_EPERM);
  assert_int_equal(sign_local_url(&url, &k, "http://h", TID, "./", NOW), DD_EPERM);
  assert_int_equal(sign_local_url(&url, &k, "http://h", "a/b", "x", NOW), DD_EINVAL);
  assert_int_equal(sign_local_url(&url, &k, "http://h", "", "x", NOW), DD_EINVAL);
  assert_int_equal(sign_local_url(&url, &k, "", TID, "x", NOW), DD_EINVAL);
  assert_int_equal(sign_local_url(&url, &k, "http://h", TID, "x", -5), DD_EINVAL);
  assert_null(url);
}

static void test_split_path(void **state) {
  (void)state;
  char *t = NULL, *r = NULL;
  assert_int_equal(sign_local_split_path(&t, &r, "tb%2Dl/a%3Db/c%20d%25"), 0);
  assert_string_equal(t, "tb-l");
  assert_string_equal(r, "a=b/c d%");
  free(t);
  free(r);
  const char *bad[] = {"", "tbl", "tbl/", "/x", "tbl/%zz", "t%00/x", "tbl/a%00"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    assert_int_equal(sign_local_split_path(&t, &r, bad[i]), DD_EINVAL);
    assert_null(t);
    assert_null(r);
  }
  assert_int_equal(sign_local_split_path(&t, &r, NULL), DD_EINVAL);
}

/* ===================== key file ===================== */

static int key_setup(void **state) {
  char *dir = strdup("/tmp/dd_sign_key_XXXXXX");
  assert_non_null(mkdtemp(dir));
  *state = dir;
  return 0;
}

static int key_teardown(void **state) {
  char *dir = *state, cmd[256];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  assert_int_equal(system(cmd), 0);
  free(dir);
  return 0;
}

static void path_in(char *out, size_t cap, void **state, const char *name) {
  snprintf(out, cap, "%s/%s", (char *)*state, name);
}

static void test_key_create_and_reload(void **state) {
  char path[512], path2[512];
  path_in(path, sizeof path, state, "url_signing.key");
  path_in(path2, sizeof path2, state, "other.key");
  sign_local_key a, b, c;
  assert_int_equal(sign_local_key_load_or_create(&a, path), 0);
  struct stat st;
  assert_int_equal(stat(path, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  assert_int_equal(st.st_size, 32);
  assert_int_equal(sign_local_key_load_or_create(&b, path), 0);
  assert_memory_equal(a.k, b.k, 32);
  assert_int_equal(sign_local_key_load_or_create(&c, path2), 0);
  assert_memory_not_equal(a.k, c.k, 32);
  /* No temporary file is left behind. */
  char cmd[600];
  snprintf(cmd, sizeof cmd, "test $(ls -A '%s' | wc -l) -eq 2", (char *)*state);
  assert_int_equal(system(cmd), 0);
}

static void test_key_refuses_open_modes(void **state) {
  char path[512];
  path_in(path, sizeof path, state, "k");
  sign_local_key a;
  assert_int_equal(sign_local_key_load_or_create(&a, path), 0);
  assert_int_equal(chmod(path, 0640), 0);
  assert_int_equal(sign_local_key_load_or_create(&a, path), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "chmod 600"));
  assert_int_equal(chmod(path, 0604), 0);
  assert_int_equal(sign_local_key_load_or_create(&a, path), DD_EPRECOND);
  assert_int_equal(chmod(path, 0620), 0);
  assert_int_equal(sign_local_key_load_or_create(&a, path), DD_EPRECOND);
  assert_int_equal(chmod(path, 0400), 0);
  assert_int_equal(sign_local_key_load_or_create(&a, path), 0);
}

static void test_key_refuses_bad_files(void **state) {
  char path[512], link_path[512], dir_path[512];
  path_in(path, sizeof path, state, "short.key");
  path_in(link_path, sizeof link_path, state, "link.key");
  path_in(dir_path, sizeof dir_path, state, "dir.key");
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "0123456789", 10), 10);
  close(fd);
  sign_local_key a;
  assert_int_equal(sign_local_key_load_or_create(&a, path), DD_ECORRUPT);
  assert_int_equal(symlink(path, link_path), 0);
  assert_int_equal(sign_local_key_load_or_create(&a, link_path), DD_EPRECOND);
  assert_int_equal(mkdir(dir_path, 0700), 0);
  assert_int_equal(sign_local_key_load_or_create(&a, dir_path), DD_EPRECOND);
  assert_int_equal(sign_local_key_load_or_create(&a, "/nonexistent-dir-dd/k"), DD_EIO);
  assert_int_equal(sign_local_key_load_or_create(&a, ""), DD_EINVAL);
}

/* sign_local_key_load (replicas' shared key file): the same checks, and never creates. */
static void test_key_load_never_creates(void **state) {
  char path[512];
  path_in(path, sizeof path, state, "shared.key");
  sign_local_key a, b;
  assert_int_equal(sign_local_key_load(&a, path), DD_EPRECOND);
  assert_non_null(strstr(dd_err_msg(), "does not exist"));
  struct stat st;
  assert_int_not_equal(stat(path, &st), 0);
  assert_int_equal(sign_local_key_load_or_create(&a, path), 0);
  assert_int_equal(sign_local_key_load(&b, path), 0);
  assert_memory_equal(a.k, b.k, 32);
  assert_int_equal(chmod(path, 0640), 0);
  assert_int_equal(sign_local_key_load(&b, path), DD_EPRECOND);
}

/* The batch signer's URLs are sign_local_url's, quoted (and the base escaped) as JSON,
 * for plain, escaped and normalised paths, one batch reused; its refusals are the same. */
static void test_batch_same_urls(void **state) {
  (void)state;
  sign_local_key k = fixed_key();
  const char *bases[] = {"http://127.0.0.1:8080/", "https://h/a\"b"};
  const char *tids[] = {"s.t-1.r", TID "." TID "." TID "." TID}; /* a sharing URL's: 4 ids */
  const char *paths[] = {"part-0.parquet", "p=1/x y/%z.parquet", "./a//b/./c.parquet",
                         "\xc3\xa9t\xc3\xa9/f.parquet", "deletion_vector_1.bin"};
  for (size_t i = 0; i < 2; i++) {
    sign_local_batch *b = NULL;
    assert_int_equal(sign_local_batch_new(&b, &k, bases[i], tids[i], NOW), 0);
    for (size_t j = 0; j < sizeof paths / sizeof *paths; j++) {
      char *url = NULL;
      assert_int_equal(sign_local_url(&url, &k, bases[i], tids[i], paths[j], NOW), 0);
      dd_buf want = {0}, got = {0};
      dd_buf_put_jstr(&want, url, strlen(url));
      dd_buf_puts(&got, "x"); /* appended, not overwritten */
      assert_int_equal(sign_local_batch_put_json(b, &got, paths[j]), 0);
      assert_string_equal(got.p + 1, want.p);
      free(url);
      dd_buf_free(&want);
      dd_buf_free(&got);
    }
    dd_buf out = {0};
    assert_int_equal(sign_local_batch_put_json(b, &out, "../x"), DD_EPERM);
    assert_int_equal(sign_local_batch_put_json(b, &out, "/etc/passwd"), DD_EPERM);
    assert_int_equal(sign_local_batch_put_json(b, &out, "./"), DD_EPERM);
    assert_int_equal(out.len, 0);
    dd_buf_free(&out);
    sign_local_batch_free(b);
  }
  sign_local_batch *b = NULL;
  assert_int_equal(sign_local_batch_new(&b, &k, "http://h", "a/b", NOW), DD_EINVAL);
  assert_int_equal(sign_local_batch_new(&b, &k, "", "t", NOW), DD_EINVAL);
  assert_int_equal(sign_local_batch_new(&b, &k, "http://h", "t", -1), DD_EINVAL);
  assert_null(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_pinned_vector),
      cmocka_unit_test_setup_teardown(test_key_load_never_creates, key_setup, key_teardown),
      cmocka_unit_test(test_round_trip_odd_names),
      cmocka_unit_test(test_normalised_path),
      cmocka_unit_test(test_rejections),
      cmocka_unit_test(test_sign_refuses_bad_input),
      cmocka_unit_test(test_split_path),
      cmocka_unit_test(test_batch_same_urls),
      cmocka_unit_test_setup_teardown(test_key_create_and_reload, key_setup, key_teardown),
      cmocka_unit_test_setup_teardown(test_key_refuses_open_modes, key_setup, key_teardown),
      cmocka_unit_test_setup_teardown(test_key_refuses_bad_files, key_setup, key_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
