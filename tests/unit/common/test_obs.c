/* test_obs.c: common/metrics.h (histograms, the text exposition format, label escaping,
 * the bounded name table under threads) and common/log.h (levels, the JSON line format). */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/log.h"
#include "common/metrics.h"

static void test_histogram_text(void **state) {
  (void)state;
  dd_hist h = {0};
  dd_hist_observe(&h, 300);      /* 0.3 ms: first bucket */
  dd_hist_observe(&h, 20000);    /* 20 ms */
  dd_hist_observe(&h, 60000000); /* 60 s: only +Inf */
  dd_buf b = {0};
  dd_metrics_head(&b, "deltad_x_seconds", "histogram", "Test.");
  dd_metrics_hist(&b, "deltad_x_seconds", "method=\"M\"", &h);
  assert_false(b.oom);
  assert_non_null(strstr(b.p, "# TYPE deltad_x_seconds histogram\n"));
  assert_non_null(strstr(b.p, "deltad_x_seconds_bucket{method=\"M\",le=\"0.0005\"} 1\n"));
  assert_non_null(strstr(b.p, "deltad_x_seconds_bucket{method=\"M\",le=\"0.025\"} 2\n"));
  assert_non_null(strstr(b.p, "deltad_x_seconds_bucket{method=\"M\",le=\"10\"} 2\n"));
  assert_non_null(strstr(b.p, "deltad_x_seconds_bucket{method=\"M\",le=\"+Inf\"} 3\n"));
  assert_non_null(strstr(b.p, "deltad_x_seconds_sum{method=\"M\"} 60.020299999999999\n"));
  assert_non_null(strstr(b.p, "deltad_x_seconds_count{method=\"M\"} 3\n"));
  dd_buf_free(&b);
}

static void test_label_escaping(void **state) {
  (void)state;
  dd_buf l = {0};
  dd_metrics_label(&l, "recipient", "a\"b\\c\nd");
  dd_metrics_label(&l, "code", "OK");
  assert_string_equal(l.p, "recipient=\"a\\\"b\\\\c\\nd\",code=\"OK\"");
  dd_buf_free(&l);
}

static dd_metrics_names names;

static void *add_many(void *arg) {
  char n[32];
  for (int i = 0; i < 200; i++) {
    snprintf(n, sizeof n, "r%d", (i + (int)(intptr_t)arg) % 100);
    dd_metrics_names_add(&names, n);
  }
  return NULL;
}

static void test_names_bounded(void **state) {
  (void)state;
  pthread_t t[4];
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, add_many, (void *)(intptr_t)(i * 7));
  for (int i = 0; i < 4; i++) pthread_join(t[i], NULL);
  dd_buf b = {0};
  dd_metrics_names_write(&b, "deltad_r_total", "recipient", &names);
  int lines = 0;
  uint64_t sum = 0;
  for (char *p = b.p; p && (p = strchr(p, '\n')); p++) lines++;
  for (char *p = b.p; p && *p; p = strchr(p, '\n') + 1) {
    char *sp = strchr(p, ' '); /* "name{labels} value": labels hold no space here */
    sum += strtoull(sp + 1, NULL, 10);
  }
  assert_int_equal(lines, DD_METRICS_NAMES_MAX + 1); /* 64 names and _other */
  assert_int_equal(sum, 800);                        /* nothing lost */
  assert_non_null(strstr(b.p, "recipient=\"_other\""));
  /* each name at most once */
  for (int i = 0; i < 100; i++) {
    char want[48];
    snprintf(want, sizeof want, "recipient=\"r%d\"}", i);
    char *first = strstr(b.p, want);
    assert_true(!first || !strstr(first + 1, want));
  }
  dd_buf_free(&b);
}

/* Sends fd 2 to a temporary file until log_capture_end, which reads it into buf. */
typedef struct log_capture {
  char path[32];
  int fd, saved;
} log_capture;

static void log_capture_begin(log_capture *c) {
  snprintf(c->path, sizeof c->path, "/tmp/ddlog.XXXXXX");
  c->fd = mkstemp(c->path);
  assert_true(c->fd >= 0);
  fflush(stderr);
  c->saved = dup(2);
  dup2(c->fd, 2);
  dd_log_set_format(DD_LOG_JSON);
  dd_log_set_level(DD_LOG_INFO);
}

static void log_capture_end(log_capture *c, char *buf, size_t cap) {
  fflush(stderr);
  dup2(c->saved, 2);
  close(c->saved);
  memset(buf, 0, cap);
  assert_true(pread(c->fd, buf, cap - 1, 0) > 0);
  close(c->fd);
  unlink(c->path);
}

static void test_log_json_and_levels(void **state) {
  (void)state;
  log_capture cap;
  log_capture_begin(&cap);
  dd_log(DD_LOG_DEBUG, "hidden");
  dd_log_field f[] = {DD_LOG_STR("who", "a \"quoted\"\nname"), DD_LOG_INT("bytes", 42), DD_LOG_NUM("ms", 1.5)};
  dd_log_fields(DD_LOG_INFO, "request", f, 3);
  dd_log_set_level(DD_LOG_WARN);
  dd_log_fields(DD_LOG_INFO, "dropped", f, 3);
  dd_log_set_format(DD_LOG_TEXT);
  dd_log(DD_LOG_ERROR, "plain %d", 7);
  dd_log_set_level(DD_LOG_INFO);
  char buf[2048];
  log_capture_end(&cap, buf, sizeof buf);
  assert_null(strstr(buf, "hidden"));
  assert_null(strstr(buf, "dropped"));
  assert_non_null(strstr(buf, "\"level\":\"info\",\"msg\":\"request\",\"who\":\"a \\\"quoted\\\"\\u000aname\",\"bytes\":42,\"ms\":1.500}\n"));
  assert_non_null(strstr(buf, "Z deltad ERROR plain 7\n"));
  int lines = 0;
  for (char *p = buf; (p = strchr(p, '\n')); p++) lines++;
  assert_int_equal(lines, 2);
  dd_log_level l;
  assert_int_equal(dd_log_level_parse("warn", &l), 0);
  assert_int_equal(l, DD_LOG_WARN);
  assert_int_equal(dd_log_level_parse("loud", &l), -1);
}

/* The hand-written number and string formatting gives what printf would, also for a line
 * longer than the logger's stack buffer, and a text line stays one line. */
static void test_log_formatting(void **state) {
  (void)state;
  log_capture cap;
  log_capture_begin(&cap);
  static char big[3000];
  memset(big, 'x', sizeof big - 1);
  big[1500] = '\t';
  const double nums[] = {0.0, 0.0004, 0.0005, 1.9996, -2.25, 123456.789, -0.0001, 1e20};
  dd_log_field f[] = {DD_LOG_INT("neg", INT64_MIN), DD_LOG_INT("max", INT64_MAX), DD_LOG_NUM("a", nums[0]),
                      DD_LOG_NUM("b", nums[1]), DD_LOG_NUM("c", nums[2]), DD_LOG_NUM("d", nums[3]),
                      DD_LOG_NUM("e", nums[4]), DD_LOG_NUM("f", nums[5]), DD_LOG_NUM("g", nums[6]),
                      DD_LOG_NUM("h", nums[7]), {.key = "big", .str = big}};
  dd_log_fields(DD_LOG_INFO, "nums", f, sizeof f / sizeof f[0]);
  dd_log_set_format(DD_LOG_TEXT);
  dd_log_field t[] = {DD_LOG_STR("k", "two\nlines"), DD_LOG_STR("plain", "v")};
  dd_log_fields(DD_LOG_INFO, "multi\nline\rand\n\rmore", t, 2);
  static char buf[8192];
  log_capture_end(&cap, buf, sizeof buf);
  char want[512];
  snprintf(want, sizeof want,
           "\"neg\":-9223372036854775808,\"max\":9223372036854775807,\"a\":%.3f,\"b\":%.3f,\"c\":%.3f,"
           "\"d\":%.3f,\"e\":%.3f,\"f\":%.3f,\"g\":%.3f,\"h\":%.3f,\"big\":\"",
           nums[0], nums[1], nums[2], nums[3], nums[4], nums[5], nums[6], nums[7]);
  /* printf rounds 0.0005 to even ("0.000" or "0.001" by its binary value); the logger rounds
   * half up; both are the same duration to a reader, so compare the others exactly. */
  char *c = strstr(want, "\"c\":");
  assert_non_null(c);
  char *got = strstr(buf, "\"neg\":");
  assert_non_null(got);
  size_t head = (size_t)(c - want);
  assert_memory_equal(got, want, head);
  char *gd = strstr(got, "\"d\":"), *wd = strstr(want, "\"d\":");
  assert_non_null(gd);
  assert_memory_equal(gd, wd, strlen(wd));
  char *gb = gd + strlen(wd);
  assert_memory_equal(gb, big, 1500);
  assert_memory_equal(gb + 1500, "\\u0009", 6);
  assert_memory_equal(gb + 1506, big + 1501, sizeof big - 1502);
  assert_memory_equal(gb + 1506 + sizeof big - 1502, "\"}\n", 3);
  assert_non_null(strstr(buf, "Z deltad INFO multi line and  more k=\"two\\u000alines\" plain=v\n"));
  int lines = 0;
  for (char *p = buf; (p = strchr(p, '\n')); p++) lines++;
  assert_int_equal(lines, 2);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_histogram_text),
      cmocka_unit_test(test_label_escaping),
      cmocka_unit_test(test_names_bounded),
      cmocka_unit_test(test_log_json_and_levels),
      cmocka_unit_test(test_log_formatting),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
