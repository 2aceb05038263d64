/* test_os_gcs.c: the GCS backend's streamed puts (os_put_stream: resumable uploads, see
 * os_gcs.c) against fake-gcs-server. Run by tests/integration/test_objstore_gcs.py, which
 * starts the emulator and its token endpoint and passes $DD_GCS_ENDPOINT and
 * $DD_GCS_KEY_FILE (a service account's JSON key); skips every case when run alone.
 *
 * fake-gcs-server ignores ifGenerationMatch=0, so deltad's probe refuses conditional puts
 * there; this test records the probe's answer as "honoured" for its endpoint and bucket
 * first (os__cond_put_check with a probe that says so), to reach the upload code. With
 * 256 KiB parts ($DD_OBJSTORE_PART_BYTES): an object of several parts and an odd tail reads
 * back byte for byte; an object of exactly two parts too; one below a part is one media
 * upload; an aborted stream (after two parts) leaves no object. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/objstore/os_http.h"
#include "store/objstore/os_remote.h"

#define PART (256u << 10)

static os_store *g_st;

static int honoured(void *ctx) {
  (void)ctx;
  return 1;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  static char buf[16384];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  return buf;
}

static int setup(void **state) {
  (void)state;
  const char *ep = getenv("DD_GCS_ENDPOINT"), *kf = getenv("DD_GCS_KEY_FILE");
  if (!ep || !kf) return 0;
  setenv("DD_OBJSTORE_PART_BYTES", "262144", 1);
  sign_location loc;
  assert_int_equal(sign_parse_location(&loc, "gs://lake/streams"), 0);
  sign_cred c = {0};
  c.kind = SIGN_CRED_GCP_SA;
  c.gcp_key_json = slurp(kf);
  c.gcs_endpoint = ep;
  assert_non_null(c.gcp_key_json);
  assert_int_equal(os_gcs_open(&g_st, &loc, &c), 0);
  sign_location_free(&loc);
  char where[600];
  snprintf(where, sizeof where, "gcs|%s|%s", ep, "lake");
  assert_int_equal(os__cond_put_check(where, honoured, NULL, "GCS", ep, "lake", "ifGenerationMatch=0"), 0);
  assert_int_equal(os__part_bytes(), PART);
  os_stat sb; /* the access token, fetched now: the counts below are the puts' own */
  assert_int_equal(os_stat_path(g_st, "absent", &sb), DD_ENOTFOUND);
  return 0;
}

static int teardown(void **state) {
  (void)state;
  os_store_free(g_st);
  return 0;
}

#define NEED_STORE() \
  do { \
    if (!g_st) skip(); \
  } while (0)

static uint64_t requests(void) {
  os_http_stats st;
  os_http_stats_get(&st);
  return st.requests;
}

/* Streams n bytes of a pattern to path in pieces of 100,000 bytes, then reads them back;
 * returns the requests the put made (open to commit). */
static uint64_t stream_and_check(const char *path, size_t n) {
  uint8_t *data = malloc(n ? n : 1);
  for (size_t i = 0; i < n; i++) data[i] = (uint8_t)(i * 2654435761u >> 13);
  os_put_stream *ps = NULL;
  uint64_t r0 = requests();
  assert_int_equal(os_put_stream_open(g_st, path, 0, &ps), 0);
  for (size_t off = 0; off < n; off += 100000)
    assert_int_equal(os_put_stream_write(ps, data + off, n - off < 100000 ? n - off : 100000), 0);
  assert_int_equal(os_put_stream_commit(ps), 0);
  uint64_t made = requests() - r0;
  uint8_t *got = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(g_st, path, &got, &len), 0);
  assert_int_equal(len, n);
  assert_memory_equal(got, data, n);
  free(got);
  free(data);
  return made;
}

static void test_parts_and_tail(void **state) {
  (void)state;
  NEED_STORE();
  /* the session, then five full chunks and the last (its own size, the total) */
  assert_int_equal(stream_and_check("a/five-parts-and-a-bit.bin", 5 * PART + 12345), 1 + 6);
  assert_int_equal(stream_and_check("a/two-parts.bin", 2 * PART), 1 + 2);
}

static void test_small_is_one_upload(void **state) {
  (void)state;
  NEED_STORE();
  assert_int_equal(stream_and_check("a/small.bin", 1000), 1); /* one media upload */
}

static void test_abort_leaves_nothing(void **state) {
  (void)state;
  NEED_STORE();
  size_t n = 2 * PART + 1;
  uint8_t *data = calloc(1, n);
  os_put_stream *ps = NULL;
  assert_int_equal(os_put_stream_open(g_st, "a/aborted.bin", 0, &ps), 0);
  uint64_t r0 = requests();
  assert_int_equal(os_put_stream_write(ps, data, n), 0); /* two parts sent, the rest held */
  assert_int_equal(requests() - r0, 1 + 2);
  os_put_stream_abort(ps);
  assert_int_equal(requests() - r0, 1 + 2 + 1); /* the session's DELETE */
  os_stat sb;
  assert_int_equal(os_stat_path(g_st, "a/aborted.bin", &sb), DD_ENOTFOUND);
  free(data);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_parts_and_tail),
      cmocka_unit_test(test_small_is_one_upload),
      cmocka_unit_test(test_abort_leaves_nothing),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
