/* test_call.c: unit tests of the call core (server/call/call.h) with real handlers and
 * real threads, no transport: the status table over every code and detail, the registry,
 * authentication and admission, dd_call_run's checks and slots, grpc-timeout, and the
 * stream runner (order, high water, failures before and after bytes, suspend/resume,
 * cancellation, the unary worker pool). */
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/err.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "server/call/call.h"

/* ---- handlers: GetCatalog-shaped requests, the name says what to do ---- */

typedef Deltad__Catalog__V1__GetCatalogRequest req_t;

static req_t *make_req(const char *name) {
  req_t *r = malloc(sizeof *r);
  deltad__catalog__v1__get_catalog_request__init(r);
  r->name = strdup(name);
  return r;
}

static ProtobufCMessage *reply(const char *name) { return &make_req(name)->base; }

static int h_unary(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  const char *n = ((const req_t *)req)->name;
  if (strcmp(n, "send") == 0) return call->send(call, req);
  if (strcmp(n, "wrongtype") == 0) {
    Deltad__Catalog__V1__ListCatalogsRequest *l = malloc(sizeof *l);
    deltad__catalog__v1__list_catalogs_request__init(l);
    *out = &l->base;
    return 0;
  }
  if (strcmp(n, "nothing") == 0) return 0;
  if (strcmp(n, "detail") == 0) {
    dd_call_set_detail(call, DD_CALL_DETAIL_TABLE);
    return dd_err_set(DD_ENOTFOUND, "no table");
  }
  if (strcmp(n, "file") == 0 || strcmp(n, "filefail") == 0) {
    int fd = open("/dev/null", O_RDONLY);
    dd_call_reply_file(call, fd, 3, 7);
    return n[4] ? dd_err_set(DD_EIO, "after the file") : 0;
  }
  if (strcmp(n, "sleep") == 0) {
    usleep(150 * 1000);
    return dd_err_set(DD_ECANCELLED, "gave up");
  }
  if (strcmp(n, "header") == 0) {
    const char *v = call->header(call, "x-h");
    *out = reply(v ? v : "(none)");
    return 0;
  }
  *out = reply(n);
  return 0;
}

static int g_cancelled; /* a streaming handler saw DD_ECANCELLED (atomic) */

/* Streams "<count>" messages named m0, m1, ...; "fail<count>" fails after them; "latch"
 * waits for g_latch before its one message. */
static int g_latch;
static int h_stream(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)out;
  const char *n = ((const req_t *)req)->name;
  int fail = strncmp(n, "fail", 4) == 0;
  if (strcmp(n, "latch") == 0) {
    while (!__atomic_load_n(&g_latch, __ATOMIC_SEQ_CST)) usleep(1000);
    n = "1";
  }
  long count = strtol(n + (fail ? 4 : 0), NULL, 10);
  for (long i = 0; i < count; i++) {
    char name[64];
    snprintf(name, sizeof name, "m%ld", i);
    req_t m = DELTAD__CATALOG__V1__GET_CATALOG_REQUEST__INIT;
    m.name = name;
    int rc = call->send(call, &m.base);
    if (rc == DD_ECANCELLED) __atomic_store_n(&g_cancelled, 1, __ATOMIC_SEQ_CST);
    if (rc) return rc;
  }
  return fail ? dd_err_set(DD_EIO, "disk on fire") : 0;
}

#define D &deltad__catalog__v1__get_catalog_request__descriptor
static const dd_method methods[] = {
    {"/t.T/Unary", D, D, h_unary, 0},
    {"/t.T/Stream", D, D, h_stream, DD_METHOD_STREAMING},
    {"/t.T/Public", D, D, h_unary, DD_METHOD_PUBLIC},
    {"/t.T/Shared", D, D, h_unary, DD_METHOD_RECIPIENT},
};

static int auth(void *app, const char *tok, size_t len, dd_principal *out) {
  assert_ptr_equal(app, (void *)0x5eed);
  if (len == 5 && memcmp(tok, "admin", 5) == 0) {
    out->kind = DD_PRINCIPAL_ADMIN;
    strcpy(out->name, "admin");
    return 0;
  }
  if (len == 3 && memcmp(tok, "rcp", 3) == 0) {
    out->kind = DD_PRINCIPAL_RECIPIENT;
    strcpy(out->name, "rcp");
    return 0;
  }
  return DD_EUNAUTH;
}

static dd_call_registry *reg;

static int setup(void **state) {
  (void)state;
  return dd_call_registry_new(&reg, methods, sizeof methods / sizeof methods[0], (void *)0x5eed, auth);
}

static int teardown(void **state) {
  (void)state;
  dd_call_registry_free(reg);
  return 0;
}

static const dd_method *M(const char *path) { return dd_call_find(reg, path, strlen(path)); }

/* ---- the status table ---- */

static void test_status_table(void **state) {
  (void)state;
  /* code, gRPC, HTTP, sharing errorCode and status, Lance code for detail none /
   * namespace / table and its status: the answers of the four tables the core replaced */
  static const struct {
    int code, grpc, http;
    const char *sharing;
    int sharing_http, lance[3], lance_http[3];
  } want[] = {
      {DD_EINVAL, 3, 400, "INVALID_PARAMETER_VALUE", 400, {13, 13, 13}, {400, 400, 400}},
      {DD_ENOTFOUND, 5, 404, "RESOURCE_DOES_NOT_EXIST", 404, {1, 1, 4}, {404, 404, 404}},
      {DD_EEXISTS, 6, 409, "RESOURCE_ALREADY_EXISTS", 409, {2, 2, 5}, {409, 409, 409}},
      {DD_ECONFLICT, 10, 409, "ABORTED", 409, {14, 14, 14}, {409, 409, 409}},
      {DD_EPRECOND, 9, 400, "UNSUPPORTED_OPERATION", 400, {19, 3, 19}, {409, 409, 409}},
      {DD_EUNAUTH, 16, 401, "UNAUTHENTICATED", 401, {16, 16, 16}, {401, 401, 401}},
      {DD_EPERM, 7, 403, "PERMISSION_DENIED", 403, {15, 15, 15}, {403, 403, 403}},
      {DD_EUNSUPPORTED, 12, 501, "UNSUPPORTED_OPERATION", 400, {0, 0, 0}, {406, 406, 406}},
      {DD_EIO, 14, 503, "TEMPORARILY_UNAVAILABLE", 503, {17, 17, 17}, {503, 503, 503}},
      {DD_ENOMEM, 8, 429, "RESOURCE_EXHAUSTED", 429, {17, 17, 17}, {503, 503, 503}},
      {DD_ECORRUPT, 15, 500, "MALFORMED_REQUEST", 400, {18, 18, 18}, {500, 500, 500}},
      {DD_ERANGE, 11, 400, "INVALID_PARAMETER_VALUE", 400, {13, 13, 13}, {400, 400, 400}},
      {DD_ECANCELLED, 1, 499, "INTERNAL_ERROR", 500, {17, 17, 17}, {503, 503, 503}},
      {DD_EDEADLINE, 4, 504, "DEADLINE_EXCEEDED", 504, {17, 17, 17}, {504, 504, 504}},
      {DD_EINTERNAL, 13, 500, "INTERNAL_ERROR", 500, {18, 18, 18}, {500, 500, 500}},
      {-42, 13, 500, "INTERNAL_ERROR", 500, {18, 18, 18}, {500, 500, 500}},
  };
  assert_int_equal(dd_call_status_grpc(0), 0);
  assert_int_equal(dd_call_status_http(0), 200);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    int st = 0;
    assert_int_equal(dd_call_status_grpc(want[i].code), want[i].grpc);
    assert_int_equal(dd_call_status_http(want[i].code), want[i].http);
    assert_string_equal(dd_call_status_sharing(want[i].code, &st), want[i].sharing);
    assert_int_equal(st, want[i].sharing_http);
    for (int d = 0; d < 3; d++) {
      assert_int_equal(dd_call_status_lance(want[i].code, d, &st), want[i].lance[d]);
      assert_int_equal(st, want[i].lance_http[d]);
    }
  }
}

/* ---- registry and authentication ---- */

static void test_registry(void **state) {
  (void)state;
  assert_int_equal(dd_call_registry_count(reg), 4);
  assert_ptr_equal(dd_call_registry_method(reg, 1), &methods[1]);
  assert_null(dd_call_registry_method(reg, 4));
  assert_ptr_equal(dd_call_registry_app(reg), (void *)0x5eed);
  assert_ptr_equal(M("/t.T/Stream"), &methods[1]);
  assert_ptr_equal(dd_call_find(reg, "/t.T/Unaryxyz", 10), &methods[0]); /* by length */
  assert_null(M("/t.T/Nope"));
  assert_null(M("/t.T/Unar"));
  dd_method twice[2] = {methods[0], methods[0]};
  dd_call_registry *r2 = (dd_call_registry *)1;
  assert_int_equal(dd_call_registry_new(&r2, twice, 2, NULL, NULL), DD_EINVAL);
  assert_null(r2);
  dd_call_route rt;
  assert_int_equal(dd_call_route_match(reg, "GET", "/catalogs/x", &rt), DD_ENOTFOUND); /* not in the table */
  dd_call_route_clear(&rt);
}

static void test_authenticate(void **state) {
  (void)state;
  dd_principal who;
  rg_ticket t = {0};
  unsigned base = rg_in_flight();
  assert_int_equal(dd_call_authenticate(reg, M("/t.T/Public"), DD_CALL_AUTH_GRPC, NULL, NULL, &who, &t, NULL), 0);
  assert_int_equal(who.kind, DD_PRINCIPAL_NONE);
  assert_int_equal(rg_in_flight(), base); /* public calls are not admitted */
  const dd_method *u = M("/t.T/Unary");
  assert_int_equal(dd_call_authenticate(reg, u, DD_CALL_AUTH_GRPC, NULL, NULL, &who, &t, NULL), DD_EUNAUTH);
  assert_non_null(strstr(dd_err_msg(), "missing 'authorization'"));
  assert_int_equal(dd_call_authenticate(reg, u, DD_CALL_AUTH_GRPC, "Basic admin", NULL, &who, &t, NULL), DD_EUNAUTH);
  assert_int_equal(dd_call_authenticate(reg, u, DD_CALL_AUTH_GRPC, NULL, "admin", &who, &t, NULL), DD_EUNAUTH);
  assert_int_equal(dd_call_authenticate(reg, u, DD_CALL_AUTH_GRPC, "Bearer nope", NULL, &who, &t, NULL), DD_EUNAUTH);
  assert_int_equal(dd_call_authenticate(reg, u, DD_CALL_AUTH_REST, "Bearer nope", NULL, &who, &t, NULL), DD_EUNAUTH);
  assert_string_equal(dd_err_msg(), "invalid token");
  assert_int_equal(rg_in_flight(), base);
  assert_int_equal(dd_call_authenticate(reg, u, DD_CALL_AUTH_REST, NULL, " admin ", &who, &t, NULL), 0);
  assert_int_equal(who.kind, DD_PRINCIPAL_ADMIN);
  assert_int_equal(rg_in_flight(), base + 1);
  rg_release(&t);
  assert_int_equal(dd_call_authenticate(reg, u, DD_CALL_AUTH_GRPC, "bearer  admin  ", NULL, &who, &t, NULL), 0);
  rg_release(&t);
  assert_int_equal(dd_call_authenticate(reg, u, DD_CALL_AUTH_GRPC, "Bearer rcp", NULL, &who, &t, NULL), DD_EPERM);
  assert_int_equal(dd_call_authenticate(reg, M("/t.T/Shared"), DD_CALL_AUTH_GRPC, "Bearer rcp", NULL, &who, &t, NULL), 0);
  assert_int_equal(who.kind, DD_PRINCIPAL_RECIPIENT);
  rg_release(&t);
  assert_int_equal(rg_in_flight(), base);
  size_t len = 0;
  assert_null(dd_call_bearer("Bearer    ", &len));
  const char *b = dd_call_bearer("Bearer abc ", &len);
  assert_int_equal(len, 3);
  assert_memory_equal(b, "abc", 3);
}

/* ---- dd_call_run ---- */

typedef struct sink_state {
  int sends;
  char last[64];
  int fail_send;
} sink_state;

static const char *sink_header(void *cls, const char *name) {
  (void)cls;
  return strcmp(name, "x-h") == 0 ? "hv" : NULL;
}

static int sink_send(void *cls, const ProtobufCMessage *msg) {
  sink_state *s = cls;
  s->sends++;
  snprintf(s->last, sizeof s->last, "%s", ((const req_t *)msg)->name);
  return s->fail_send ? dd_err_set(DD_ECANCELLED, "client gone") : 0;
}

static int run(const char *path, const char *name, int64_t deadline, sink_state *ss, dd_call_result *res) {
  static const dd_principal admin = {.kind = DD_PRINCIPAL_ADMIN, .name = "admin"};
  req_t *r = make_req(name);
  dd_call_sink sink = {.cls = ss, .header = sink_header, .send = sink_send};
  memset(ss, 0, sizeof *ss);
  dd_err_clear();
  int rc = dd_call_run(reg, M(path), &r->base, &admin, deadline, &sink, res);
  protobuf_c_message_free_unpacked(&r->base, NULL);
  return rc;
}

static void test_run(void **state) {
  (void)state;
  sink_state ss;
  dd_call_result res;
  assert_int_equal(run("/t.T/Unary", "hello", 0, &ss, &res), 0);
  assert_int_equal(ss.sends, 1); /* the unary reply goes through send, once */
  assert_string_equal(ss.last, "hello");
  assert_int_equal(res.sent, 1);
  assert_int_equal(res.file_fd, -1);
  assert_int_equal(run("/t.T/Unary", "header", 0, &ss, &res), 0);
  assert_string_equal(ss.last, "hv");
  assert_int_equal(run("/t.T/Unary", "send", 0, &ss, &res), DD_EINTERNAL); /* send from unary */
  assert_non_null(strstr(dd_err_msg(), "unary handler"));
  assert_int_equal(ss.sends, 0);
  assert_int_equal(run("/t.T/Unary", "wrongtype", 0, &ss, &res), DD_EINTERNAL);
  assert_non_null(strstr(dd_err_msg(), "ListCatalogsRequest"));
  assert_int_equal(run("/t.T/Unary", "nothing", 0, &ss, &res), DD_EINTERNAL);
  assert_int_equal(run("/t.T/Unary", "detail", 0, &ss, &res), DD_ENOTFOUND);
  assert_int_equal(res.detail, DD_CALL_DETAIL_TABLE);
  assert_int_equal(run("/t.T/Unary", "file", 0, &ss, &res), 0);
  assert_true(res.file_fd >= 0);
  assert_int_equal(res.file_off, 3);
  assert_int_equal(res.file_len, 7);
  assert_int_equal(ss.sends, 0);
  close(res.file_fd);
  assert_int_equal(run("/t.T/Unary", "filefail", 0, &ss, &res), DD_EIO);
  assert_int_equal(res.file_fd, -1); /* closed by the core */
  assert_int_equal(run("/t.T/Stream", "3", 0, &ss, &res), 0);
  assert_int_equal(ss.sends, 3);
  assert_string_equal(ss.last, "m2");
  assert_int_equal(res.sent, 3);
}

static void test_deadlines(void **state) {
  (void)state;
  sink_state ss;
  dd_call_result res;
  /* Deadlines run on CLOCK_MONOTONIC: a step of the wall clock (NTP on a fresh machine) once
   * failed a CreateCatalog that had taken milliseconds with DEADLINE_EXCEEDED. */
  struct timespec mono;
  clock_gettime(CLOCK_MONOTONIC, &mono);
  int64_t now = dd_call_now_ms();
  assert_true(now - ((int64_t)mono.tv_sec * 1000 + mono.tv_nsec / 1000000) < 1000);
  assert_true(now - ((int64_t)mono.tv_sec * 1000 + mono.tv_nsec / 1000000) >= 0);
  assert_int_equal(run("/t.T/Unary", "hello", now - 1, &ss, &res), DD_EDEADLINE);
  assert_int_equal(ss.sends, 0);
  assert_non_null(strstr(dd_err_msg(), "before the call ran"));
  /* the handler gives up with DD_ECANCELLED after the deadline passed: DD_EDEADLINE */
  assert_int_equal(run("/t.T/Unary", "sleep", dd_call_now_ms() + 50, &ss, &res), DD_EDEADLINE);
  assert_int_equal(run("/t.T/Unary", "sleep", 0, &ss, &res), DD_ECANCELLED);
  assert_int_equal(run("/t.T/Unary", "hello", dd_call_now_ms() + 60000, &ss, &res), 0);
  int64_t d;
  assert_int_equal(dd_call_parse_timeout(NULL, &d), 0);
  assert_int_equal(d, 0);
  now = dd_call_now_ms();
  assert_int_equal(dd_call_parse_timeout("250m", &d), 0);
  assert_true(d >= now + 250 && d <= now + 1250);
  assert_int_equal(dd_call_parse_timeout("2S", &d), 0);
  assert_true(d >= now + 2000 && d <= now + 3000);
  assert_int_equal(dd_call_parse_timeout("1H", &d), 0);
  assert_true(d >= now + 3600000);
  assert_int_equal(dd_call_parse_timeout("1n", &d), 0);
  assert_true(dd_call_deadline_passed(d));
  assert_int_equal(dd_call_parse_timeout("5000u", &d), 0);
  assert_true(d >= now + 5);
  assert_int_equal(dd_call_parse_timeout("123456789S", &d), DD_EINVAL); /* 9 digits */
  assert_int_equal(dd_call_parse_timeout("10", &d), DD_EINVAL);
  assert_int_equal(dd_call_parse_timeout("m", &d), DD_EINVAL);
  assert_int_equal(dd_call_parse_timeout("-1S", &d), DD_EINVAL);
  assert_int_equal(dd_call_parse_timeout("1s", &d), DD_EINVAL);
  assert_false(dd_call_deadline_passed(0));
}

/* ---- the stream runner ---- */

typedef struct hooks_state {
  int suspends, resumes, released, encoded;
} hooks_state;

static const char *g_enc_fail; /* a message name whose encoding fails half-way */

static int enc(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out) {
  hooks_state *h = cls;
  __atomic_add_fetch(&h->encoded, 1, __ATOMIC_SEQ_CST);
  if (g_enc_fail && !strcmp(((const req_t *)msg)->name, g_enc_fail)) {
    dd_call_buf_append(out, "PARTIAL", 7);
    return dd_err_set(DD_EIO, "encode broke");
  }
  char line[128];
  int n = snprintf(line, sizeof line, "%zu:%s\n", index, ((const req_t *)msg)->name);
  return dd_call_buf_append(out, line, (size_t)n);
}

static int enc_err(void *cls, int code, const char *msg, dd_call_buf *out) {
  (void)cls;
  char line[256];
  int n = snprintf(line, sizeof line, "error %d %s\n", code, msg);
  return dd_call_buf_append(out, line, (size_t)n);
}

static void on_suspend(void *cls) { __atomic_add_fetch(&((hooks_state *)cls)->suspends, 1, __ATOMIC_SEQ_CST); }
static void on_resume(void *cls) { __atomic_add_fetch(&((hooks_state *)cls)->resumes, 1, __ATOMIC_SEQ_CST); }
static void on_release(void *cls) { __atomic_add_fetch(&((hooks_state *)cls)->released, 1, __ATOMIC_SEQ_CST); }

static dd_call_stream *start(dd_call_runner *rn, const char *path, const char *name, hooks_state *h,
                             bool blocking) {
  static const dd_principal admin = {.kind = DD_PRINCIPAL_ADMIN, .name = "admin"};
  memset(h, 0, sizeof *h);
  dd_call_stream_hooks hooks = {.cls = h, .encode = enc, .encode_error = enc_err,
                                .suspend = blocking ? NULL : on_suspend,
                                .resume = blocking ? NULL : on_resume, .release_cls = on_release};
  const char *hdr[] = {"x-h", "hv"};
  dd_call_stream *s = NULL;
  assert_int_equal(dd_call_stream_start(&s, rn, reg, M(path), &make_req(name)->base, &admin, hdr, 1, 0, &hooks), 0);
  return s;
}

/* Everything the stream will give, reading in blocking mode. */
static char *read_all(dd_call_stream *s, ssize_t *end) {
  dd_call_buf b = {0};
  char chunk[7]; /* small reads: lines cross chunk boundaries */
  ssize_t n;
  while ((n = dd_call_stream_read(s, chunk, sizeof chunk)) > 0) dd_call_buf_append(&b, chunk, (size_t)n);
  *end = n;
  dd_call_buf_append(&b, "", 1);
  return b.data;
}

static void wait_released(hooks_state *h) {
  for (int i = 0; i < 500 && !__atomic_load_n(&h->released, __ATOMIC_SEQ_CST); i++) usleep(2000);
  assert_int_equal(__atomic_load_n(&h->released, __ATOMIC_SEQ_CST), 1);
}

static void test_stream_blocking(void **state) {
  (void)state;
  dd_call_runner *rn;
  assert_int_equal(dd_call_runner_new(&rn, 0), 0);
  hooks_state h;
  char msg[256];
  bool queued;
  dd_call_result res;
  ssize_t end;
  /* three lines, then the end */
  dd_call_stream *s = start(rn, "/t.T/Stream", "3", &h, true);
  assert_int_equal(dd_call_stream_wait(s), DD_CALL_STREAM_READY);
  assert_int_equal(dd_call_stream_status(s, msg, sizeof msg, &queued, &res), 0);
  assert_true(queued);
  char *all = read_all(s, &end);
  assert_string_equal(all, "0:m0\n1:m1\n2:m2\n");
  assert_int_equal(end, DD_CALL_STREAM_EOF);
  free(all);
  dd_call_stream_release(s);
  wait_released(&h);
  /* a failure after lines: the codec's error line, then the end */
  s = start(rn, "/t.T/Stream", "fail2", &h, true);
  all = read_all(s, &end);
  assert_string_equal(all, "0:m0\n1:m1\nerror -9 disk on fire\n");
  assert_int_equal(end, DD_CALL_STREAM_EOF);
  free(all);
  dd_call_stream_release(s);
  /* a failure before any line: an ordinary error for the transport to answer */
  s = start(rn, "/t.T/Stream", "fail0", &h, true);
  assert_int_equal(dd_call_stream_wait(s), DD_CALL_STREAM_READY);
  assert_int_equal(dd_call_stream_status(s, msg, sizeof msg, &queued, &res), DD_EIO);
  assert_false(queued);
  assert_string_equal(msg, "disk on fire");
  assert_int_equal(dd_call_stream_read(s, msg, sizeof msg), DD_CALL_STREAM_CUT);
  dd_call_stream_release(s);
  /* a unary call is ready only at its end, with its one reply and the header it saw */
  s = start(rn, "/t.T/Unary", "header", &h, true);
  assert_int_equal(dd_call_stream_wait(s), DD_CALL_STREAM_READY);
  assert_int_equal(dd_call_stream_status(s, msg, sizeof msg, &queued, &res), 0);
  all = read_all(s, &end);
  assert_string_equal(all, "0:hv\n");
  free(all);
  dd_call_stream_release(s);
  /* a file reply moves to the transport */
  s = start(rn, "/t.T/Unary", "file", &h, true);
  assert_int_equal(dd_call_stream_wait(s), DD_CALL_STREAM_READY);
  assert_int_equal(dd_call_stream_status(s, msg, sizeof msg, &queued, &res), 0);
  assert_true(res.file_fd >= 0);
  close(res.file_fd);
  dd_call_stream_release(s);
  dd_call_runner_free(rn);
}

/* The producer stops at the high-water mark while nobody reads, and a release cancels
 * its next send. */
static void test_stream_high_water_and_cancel(void **state) {
  (void)state;
  dd_call_runner *rn;
  assert_int_equal(dd_call_runner_new(&rn, 0), 0);
  hooks_state h;
  g_cancelled = 0;
  dd_call_stream *s = start(rn, "/t.T/Stream", "100000000", &h, true);
  int a = -1, b = 0;
  for (int i = 0; i < 100 && a != b; i++) { /* until the producer stops (10 s at most) */
    a = b;
    usleep(100 * 1000);
    b = __atomic_load_n(&h.encoded, __ATOMIC_SEQ_CST);
  }
  assert_int_equal(a, b);
  /* "N:mN\n" is ~12-15 bytes: about 1 MiB / 13 lines queued, plus the one waiting */
  if (b < 50000 || b > 120000) fail_msg("%d messages queued", b);
  char buf[4096];
  assert_true(dd_call_stream_read(s, buf, sizeof buf) > 0);
  dd_call_stream_release(s);
  for (int i = 0; i < 500 && !__atomic_load_n(&g_cancelled, __ATOMIC_SEQ_CST); i++) usleep(2000);
  assert_int_equal(g_cancelled, 1);
  wait_released(&h);
  dd_call_runner_free(rn);
}

/* A message whose encoding fails half-way leaves nothing of itself in the stream: the
 * lines before it, then the codec's error line. */
static void test_stream_encode_failure(void **state) {
  (void)state;
  dd_call_runner *rn;
  assert_int_equal(dd_call_runner_new(&rn, 0), 0);
  hooks_state h;
  ssize_t end;
  g_enc_fail = "m1";
  dd_call_stream *s = start(rn, "/t.T/Stream", "3", &h, true);
  char *all = read_all(s, &end);
  g_enc_fail = NULL;
  assert_string_equal(all, "0:m0\nerror -9 encode broke\n");
  assert_int_equal(end, DD_CALL_STREAM_EOF);
  free(all);
  dd_call_stream_release(s);
  wait_released(&h);
  dd_call_runner_free(rn);
}

static int settled_count(hooks_state *h) { /* encoded, once it stopped moving */
  int a = -1, b = __atomic_load_n(&h->encoded, __ATOMIC_SEQ_CST);
  for (int i = 0; i < 100 && a != b; i++) {
    a = b;
    usleep(50 * 1000);
    b = __atomic_load_n(&h->encoded, __ATOMIC_SEQ_CST);
  }
  return b;
}

/* A producer stopped at the high water sleeps until half of it was read, not at each
 * read of the transport. */
static void test_stream_low_water(void **state) {
  (void)state;
  dd_call_runner *rn;
  assert_int_equal(dd_call_runner_new(&rn, 0), 0);
  hooks_state h;
  dd_call_stream *s = start(rn, "/t.T/Stream", "100000000", &h, true);
  int full = settled_count(&h);
  char buf[16384];
  size_t got = 0;
  while (got < DD_CALL_STREAM_HIGH_WATER / 4) {
    ssize_t n = dd_call_stream_read(s, buf, sizeof buf);
    assert_true(n > 0);
    got += (size_t)n;
  }
  assert_int_equal(settled_count(&h), full); /* a quarter read: still asleep */
  while (got < DD_CALL_STREAM_HIGH_WATER * 3 / 4) {
    ssize_t n = dd_call_stream_read(s, buf, sizeof buf);
    assert_true(n > 0);
    got += (size_t)n;
  }
  assert_true(settled_count(&h) > full); /* below half: it refilled */
  dd_call_stream_release(s);
  wait_released(&h);
  dd_call_runner_free(rn);
}

/* Non-blocking: nothing ready suspends the transport; the producer resumes it once. */
static void test_stream_suspend_resume(void **state) {
  (void)state;
  dd_call_runner *rn;
  assert_int_equal(dd_call_runner_new(&rn, 2), 0);
  hooks_state h;
  g_latch = 0;
  dd_call_stream *s = start(rn, "/t.T/Stream", "latch", &h, false);
  assert_int_equal(dd_call_stream_wait(s), DD_CALL_STREAM_SUSPENDED);
  assert_int_equal(h.suspends, 1);
  assert_int_equal(h.resumes, 0);
  __atomic_store_n(&g_latch, 1, __ATOMIC_SEQ_CST);
  for (int i = 0; i < 500 && !__atomic_load_n(&h.resumes, __ATOMIC_SEQ_CST); i++) usleep(2000);
  assert_int_equal(__atomic_load_n(&h.resumes, __ATOMIC_SEQ_CST), 1);
  assert_int_equal(dd_call_stream_wait(s), DD_CALL_STREAM_READY);
  char buf[64];
  ssize_t n;
  dd_call_buf all = {0};
  for (int i = 0; i < 1000; i++) {
    n = dd_call_stream_read(s, buf, sizeof buf);
    if (n > 0) dd_call_buf_append(&all, buf, (size_t)n);
    if (n < 0) break;
    if (n == 0) usleep(1000); /* suspended: the producer resumes us */
  }
  assert_int_equal(n, DD_CALL_STREAM_EOF);
  assert_int_equal(h.suspends, h.resumes); /* every suspend had its resume */
  dd_call_buf_append(&all, "", 1);
  assert_string_equal(all.data, "0:m0\n");
  free(all.data);
  dd_call_stream_release(s);
  /* unary calls on the worker pool */
  s = start(rn, "/t.T/Unary", "pooled", &h, false);
  int w;
  for (int i = 0; i < 500 && (w = dd_call_stream_wait(s)) == DD_CALL_STREAM_SUSPENDED; i++) usleep(2000);
  assert_int_equal(w, DD_CALL_STREAM_READY);
  n = dd_call_stream_read(s, buf, sizeof buf);
  assert_int_equal(n, 9);
  assert_memory_equal(buf, "0:pooled\n", 9);
  dd_call_stream_release(s);
  /* cancel_all resumes a suspended transport and ends its stream */
  g_latch = 0;
  s = start(rn, "/t.T/Stream", "latch", &h, false);
  assert_int_equal(dd_call_stream_wait(s), DD_CALL_STREAM_SUSPENDED);
  dd_call_runner_cancel_all(rn);
  assert_int_equal(h.resumes, 1);
  assert_int_equal(dd_call_stream_read(s, buf, sizeof buf), DD_CALL_STREAM_CUT);
  __atomic_store_n(&g_latch, 1, __ATOMIC_SEQ_CST);
  dd_call_stream_release(s);
  assert_int_equal(dd_call_runner_wait_idle(rn, dd_call_now_ms() + 5000), 0);
  dd_call_runner_free(rn);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_status_table),        cmocka_unit_test(test_registry),
      cmocka_unit_test(test_authenticate),        cmocka_unit_test(test_run),
      cmocka_unit_test(test_deadlines),           cmocka_unit_test(test_stream_blocking),
      cmocka_unit_test(test_stream_high_water_and_cancel),
      cmocka_unit_test(test_stream_encode_failure),
      cmocka_unit_test(test_stream_low_water),
      cmocka_unit_test(test_stream_suspend_resume),
  };
  return cmocka_run_group_tests(tests, setup, teardown);
}
