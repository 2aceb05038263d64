/* test_req_guard.c: the request guard (server/call/req_guard.h) on hand-built wire
 * bytes: depth at and past the bound, element and memory bounds, UTF-8 and NUL in
 * strings, malformed wire data, the JSON scan, and the admission counts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "common/err.h"
#include "delta/connect/relations.pb-c.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "server/call/req_guard.h"

#define REL (&delta__connect__delta_relation__descriptor)
#define CREATE (&deltad__catalog__v1__create_catalog_request__descriptor)

typedef struct buf {
  uint8_t *p;
  size_t n;
} buf;

static void put_varint(buf *b, uint64_t v) {
  do {
    b->p[b->n++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    v >>= 7;
  } while (v);
}

/* b becomes field f (length-delimited) holding b's bytes. */
static void wrap(buf *b, unsigned f) {
  uint8_t hdr[16];
  buf h = {hdr, 0};
  put_varint(&h, (uint64_t)f << 3 | 2);
  put_varint(&h, b->n);
  memmove(b->p + h.n, b->p, b->n);
  memcpy(b->p, hdr, h.n);
  b->n += h.n;
}

/* DeltaRelation{delete_from_table{condition: alias.expr x levels}}: 2 + 2*levels + 1 deep. */
static buf deep_alias(unsigned levels) {
  buf b = {calloc(1, 16 * (levels + 4)), 0};
  for (unsigned i = 0; i < levels; i++) {
    wrap(&b, 1); /* Alias.expr */
    wrap(&b, 6); /* Expression.alias */
  }
  wrap(&b, 2); /* DeleteFromTable.condition */
  wrap(&b, 7); /* DeltaRelation.delete_from_table */
  return b;
}

static void set_limits(unsigned depth, size_t elements, size_t memory) {
  rg_limits l = RG_LIMITS_INIT;
  l.max_depth = depth, l.max_elements = elements, l.max_memory = memory;
  assert_int_equal(rg_configure(&l), 0);
}

static void test_depth(void **state) {
  (void)state;
  set_limits(RG_DEFAULT_MAX_DEPTH, RG_DEFAULT_MAX_ELEMENTS, RG_DEFAULT_MAX_MEMORY);
  buf ok = deep_alias(62), deep = deep_alias(63), huge = deep_alias(6400); /* 127, 129, 10x */
  ProtobufCMessage *m = NULL;
  assert_int_equal(rg_pb_unpack(&m, REL, ok.p, ok.n), 0);
  assert_non_null(m);
  protobuf_c_message_free_unpacked(m, NULL);
  assert_int_equal(rg_pb_check(REL, deep.p, deep.n), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "nested too deeply"));
  assert_int_equal(rg_pb_unpack(&m, REL, huge.p, huge.n), DD_EINVAL);
  assert_null(m);
  free(ok.p), free(deep.p), free(huge.p);
  rg_limits bad = RG_LIMITS_INIT;
  bad.max_depth = 0;
  assert_int_equal(rg_configure(&bad), DD_EINVAL);
}

static void test_strings(void **state) {
  (void)state;
  set_limits(RG_DEFAULT_MAX_DEPTH, RG_DEFAULT_MAX_ELEMENTS, RG_DEFAULT_MAX_MEMORY);
  static const struct {
    const char *s;
    size_t n;
    int rc;
  } cases[] = {
      {"main", 4, 0},           {"caf\xc3\xa9", 5, 0},      {"\xf0\x9f\x98\x80", 4, 0},
      {"nul\0cat", 7, DD_EINVAL}, {"\xc3\x28", 2, DD_EINVAL}, {"\xc0\xaf", 2, DD_EINVAL}, /* overlong */
      {"\xed\xa0\x80", 3, DD_EINVAL},                         /* surrogate */
      {"\xf4\x90\x80\x80", 4, DD_EINVAL},                     /* past U+10FFFF */
      {"ab\xe2\x82", 4, DD_EINVAL},                           /* cut short */
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t b[32] = {0x0A, (uint8_t)cases[i].n};
    memcpy(b + 2, cases[i].s, cases[i].n);
    assert_int_equal(rg_pb_check(CREATE, b, cases[i].n + 2), cases[i].rc);
  }
}

static void test_elements_memory_and_wire(void **state) {
  (void)state;
  uint8_t b[2000];
  for (size_t i = 0; i < 1000; i++) b[2 * i] = 0x12, b[2 * i + 1] = 0; /* 1000 empty comments */
  set_limits(RG_DEFAULT_MAX_DEPTH, 999, RG_DEFAULT_MAX_MEMORY);
  assert_int_equal(rg_pb_check(CREATE, b, sizeof b), DD_EINVAL);
  assert_non_null(strstr(dd_err_msg(), "more than 999 fields"));
  set_limits(RG_DEFAULT_MAX_DEPTH, 100, RG_DEFAULT_MAX_MEMORY); /* 10x the bound */
  assert_int_equal(rg_pb_check(CREATE, b, sizeof b), DD_EINVAL);
  set_limits(RG_DEFAULT_MAX_DEPTH, 1000, RG_DEFAULT_MAX_MEMORY);
  assert_int_equal(rg_pb_check(CREATE, b, sizeof b), 0);
  set_limits(RG_DEFAULT_MAX_DEPTH, 1000, 3200); /* 10x the bound */
  assert_int_equal(rg_pb_check(CREATE, b, sizeof b), DD_ENOMEM);
  set_limits(RG_DEFAULT_MAX_DEPTH, 1000, 1u << 14); /* 1000 string copies of 32 bytes each */
  assert_int_equal(rg_pb_check(CREATE, b, sizeof b), DD_ENOMEM);
  set_limits(RG_DEFAULT_MAX_DEPTH, RG_DEFAULT_MAX_ELEMENTS, RG_DEFAULT_MAX_MEMORY);
  static const uint8_t truncated[] = {0x0A, 0x05, 'a'}, group[] = {0x0B, 0x0C}, zero[] = {0x02, 0x00},
                       long_varint[] = {0x18, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x01};
  assert_int_equal(rg_pb_check(CREATE, truncated, sizeof truncated), DD_EINVAL);
  assert_int_equal(rg_pb_check(CREATE, group, sizeof group), DD_EINVAL);
  assert_int_equal(rg_pb_check(CREATE, zero, sizeof zero), DD_EINVAL);
  assert_int_equal(rg_pb_check(CREATE, long_varint, sizeof long_varint), DD_EINVAL);
  static const uint8_t unknown[] = {0xF8, 0x07, 0x01, 0xFA, 0x07, 0x01, 'x'}; /* fields 127 */
  assert_int_equal(rg_pb_check(CREATE, unknown, sizeof unknown), 0);
  assert_int_equal(rg_pb_check(CREATE, (const uint8_t *)"", 0), 0);
}

static void test_json(void **state) {
  (void)state;
  set_limits(4, 10, RG_DEFAULT_MAX_MEMORY);
  assert_int_equal(rg_json_check("{\"a\":[[{}]]}", 12), 0);               /* 4 levels */
  assert_int_equal(rg_json_check("{\"a\":[[[{}]]]}", 14), DD_EINVAL);     /* 5 */
  assert_int_equal(rg_json_check("{\"a\":\"[[[[[[\\\"[[[\"}", 19), 0);   /* brackets in a string */
  assert_int_equal(rg_json_check("[1,2,3,4,5,6,7,8]", 17), 0);
  assert_int_equal(rg_json_check("[1,2,3,4,5,6,7,8,9,10]", 22), DD_EINVAL);
  set_limits(RG_DEFAULT_MAX_DEPTH, RG_DEFAULT_MAX_ELEMENTS, 1u << 16);
  char *big = malloc(4002);
  big[0] = '[';
  for (int i = 0; i < 2000; i++) big[1 + 2 * i] = '0', big[2 + 2 * i] = ',';
  big[4000] = '0', big[4001] = ']';
  assert_int_equal(rg_json_check(big, 4002), DD_ENOMEM);
  free(big);
  set_limits(RG_DEFAULT_MAX_DEPTH, RG_DEFAULT_MAX_ELEMENTS, RG_DEFAULT_MAX_MEMORY);
}

static void test_admission(void **state) {
  (void)state;
  rg_limits l = RG_LIMITS_INIT;
  l.max_requests = 3, l.max_requests_per_principal = 2;
  assert_int_equal(rg_configure(&l), 0);
  dd_principal eve = {.kind = DD_PRINCIPAL_RECIPIENT, .name = "eve"};
  dd_principal bob = {.kind = DD_PRINCIPAL_RECIPIENT, .name = "bob"};
  dd_principal admin = {.kind = DD_PRINCIPAL_ADMIN, .name = "admin"};
  rg_ticket t[5];
  memset(t, 0, sizeof t);
  assert_int_equal(rg_admit(&t[0], &eve), 0);
  assert_int_equal(rg_admit(&t[0], &eve), 0); /* held already: counted once */
  assert_int_equal(rg_admit(&t[1], &eve), 0);
  assert_int_equal(rg_admit(&t[2], &eve), DD_ENOMEM); /* eve's cap */
  assert_non_null(strstr(dd_err_msg(), "'eve'"));
  assert_int_equal(rg_admit(&t[2], &bob), 0);
  assert_int_equal(rg_admit(&t[3], &admin), DD_ENOMEM); /* the process cap */
  assert_int_equal(rg_in_flight(), 3);
  rg_release(&t[0]);
  rg_release(&t[0]); /* holds nothing any more */
  assert_int_equal(rg_admit(&t[3], &admin), 0);
  rg_release(&t[1]), rg_release(&t[2]);
  assert_int_equal(rg_admit(&t[0], &admin), 0); /* the admin has no per-principal cap */
  assert_int_equal(rg_admit(&t[1], &admin), 0);
  for (int i = 0; i < 4; i++) rg_release(&t[i]);
  assert_int_equal(rg_in_flight(), 0);
}

/* Slots are reused after many principals came and went: each principal still has one count
 * (its cap holds), and the table never fills up. */
static void test_admission_churn(void **state) {
  (void)state;
  rg_limits l = RG_LIMITS_INIT;
  l.max_requests = 0, l.max_requests_per_principal = 2;
  assert_int_equal(rg_configure(&l), 0);
  dd_principal p = {.kind = DD_PRINCIPAL_RECIPIENT};
  rg_ticket t[3];
  for (int round = 0; round < 5000; round++) {
    snprintf(p.name, sizeof p.name, "r%d", round % 3000);
    memset(t, 0, sizeof t);
    assert_int_equal(rg_admit(&t[0], &p), 0);
    assert_int_equal(rg_admit(&t[1], &p), 0);
    assert_int_equal(rg_admit(&t[2], &p), DD_ENOMEM);
    rg_release(&t[0]);
    assert_int_equal(rg_admit(&t[2], &p), 0);
    assert_int_equal(rg_admit(&t[0], &p), DD_ENOMEM);
    rg_release(&t[1]), rg_release(&t[2]);
  }
  /* many at once: 700 principals hold two requests each, then each is at its cap */
  static rg_ticket held[700][2];
  memset(held, 0, sizeof held);
  for (int i = 0; i < 700; i++) {
    snprintf(p.name, sizeof p.name, "h%d", i);
    assert_int_equal(rg_admit(&held[i][0], &p), 0);
    assert_int_equal(rg_admit(&held[i][1], &p), 0);
  }
  for (int i = 0; i < 700; i++) {
    snprintf(p.name, sizeof p.name, "h%d", i);
    rg_ticket extra = {0};
    assert_int_equal(rg_admit(&extra, &p), DD_ENOMEM);
    rg_release(&held[i][0]), rg_release(&held[i][1]);
  }
  assert_int_equal(rg_in_flight(), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_admission_churn),
      cmocka_unit_test(test_depth),  cmocka_unit_test(test_strings),
      cmocka_unit_test(test_elements_memory_and_wire), cmocka_unit_test(test_json),
      cmocka_unit_test(test_admission),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
