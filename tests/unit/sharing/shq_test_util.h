/* shq_test_util.h: helpers shared by the sharing engine tests: a line collector, a
 * test-local signer that returns https://signed.example/<path>, fixture paths, a table
 * copy for tests that touch files, and small JSON accessors. */
#ifndef DD_TESTS_SHQ_TEST_UTIL_H
#define DD_TESTS_SHQ_TEST_UTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <jansson.h>

#include "common/err.h"
#include "store/sharing/shq.h"

#define SIGN_EXP 1900000000000LL
#define DAT DD_FIXTURES "/dat/reader_tests/generated/"
#define DRS DD_FIXTURES "/delta-rs-data/"

typedef struct lines {
  json_t *v[4096];
  char *raw[4096];
  size_t n;
} lines;

static inline int collect(void *ctx, const char *json, size_t len) {
  lines *l = ctx;
  assert_true(l->n < 4096);
  assert_null(memchr(json, '\n', len)); /* one line, no newline */
  json_error_t e;
  json_t *j = json_loadb(json, len, JSON_REJECT_DUPLICATES, &e);
  if (!j) fail_msg("line is not JSON: %.*s (%s)", (int)len, json, e.text);
  assert_true(json_is_object(j));
  assert_int_equal(json_object_size(j), 1); /* a wrapper holds exactly one action */
  l->raw[l->n] = strndup(json, len);
  l->v[l->n++] = j;
  return 0;
}

static inline void lines_free(lines *l) {
  for (size_t i = 0; i < l->n; i++) {
    json_decref(l->v[i]);
    free(l->raw[i]);
  }
  l->n = 0;
}

static inline int test_sign(void *ctx, const char *path, int64_t size, char **url, int64_t *exp) {
  (void)size;
  int *count = ctx;
  if (count) (*count)++;
  if (asprintf(url, "https://signed.example/%s", path) < 0) return DD_ENOMEM;
  *exp = SIGN_EXP;
  return 0;
}

static const shq_signer SIGNER = {.sign = test_sign};

/* The action key of line i ("file", "metaData", ...). */
static inline const char *key_of(const lines *l, size_t i) {
  return json_object_iter_key(json_object_iter(l->v[i]));
}
static inline json_t *body_of(const lines *l, size_t i) {
  return json_object_iter_value(json_object_iter(l->v[i]));
}
static inline size_t count_key(const lines *l, const char *key) {
  size_t n = 0;
  for (size_t i = 0; i < l->n; i++) n += !strcmp(key_of(l, i), key);
  return n;
}

static inline dl_table *open_table(const char *path) {
  dl_table *t = NULL;
  int rc = dl_table_open(&t, path);
  if (rc) fail_msg("open %s: %s", path, dd_err_msg());
  return t;
}

static inline shq_table_opts topts(bool history) {
  shq_table_opts o = SHQ_TABLE_OPTS_INIT;
  o.history_shared = history;
  o.table_id = "tbl-1";
  o.table_name = "share.schema.table";
  static const uint8_t key[] = "test-token-key";
  o.token_key = key;
  o.token_key_len = sizeof key - 1;
  return o;
}

static inline shq_caps caps_of(const char *hv) {
  shq_caps c;
  assert_int_equal(shq_caps_parse(&c, hv), 0);
  return c;
}

/* Runs Query Table with a JSON body; returns the engine's code. */
static inline int run_query(lines *out, dl_table *t, const char *body, const char *caps_hdr,
                            const shq_table_opts *o, shq_result *res) {
  shq_query q;
  int rc = shq_query_parse_json(&q, body, strlen(body));
  if (rc) return rc;
  shq_caps c = caps_of(caps_hdr);
  shq_result r;
  rc = shq_query_table(t, &q, &c, o, &SIGNER, 1700000000000LL, res ? res : &r, collect, out);
  shq_query_clear(&q);
  return rc;
}

/* Number of file lines a query returns (asserting success). */
static inline size_t nfiles(dl_table *t, const char *body) {
  lines l = {0};
  shq_table_opts o = topts(true);
  int rc = run_query(&l, t, body, NULL, &o, NULL);
  if (rc) fail_msg("query %s: %s", body, dd_err_msg());
  size_t n = count_key(&l, "file");
  lines_free(&l);
  return n;
}

static inline void copy_tree(const char *from, const char *to) {
  char cmd[1024];
  snprintf(cmd, sizeof cmd, "cp -r '%s' '%s'", from, to);
  assert_int_equal(system(cmd), 0);
}

#endif
