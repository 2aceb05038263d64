/* test_server.c: the REST listener end to end over real loopback sockets: a test method
 * table (echo handlers, a failing one, a streaming one, a slow one, a public one), a fake
 * auth function and a native handler, talked to by a small HTTP/1.1 client written here
 * (keep-alive, chunked replies). Checks statuses, JSON bodies, transcoding, auth, errors
 * (handler not called), NDJSON, the native hook, concurrency and graceful stop. */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/err.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "deltad/system/v1/system.pb-c.h"
#include "server/http/http_server.h"
#include "server/http/pbjson.h"

/* ---- the test service ---------------------------------------------------------------- */

static int calls_create; /* CreateCatalog handler calls */
static pthread_mutex_t calls_mu = PTHREAD_MUTEX_INITIALIZER;

/* Returns a deep copy of req (input and output types are the same in this table). */
static int h_echo(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)call;
  size_t n = protobuf_c_message_get_packed_size(req);
  uint8_t *buf = malloc(n ? n : 1);
  protobuf_c_message_pack(req, buf);
  *out = protobuf_c_message_unpack(req->descriptor, NULL, n, buf);
  free(buf);
  return *out ? 0 : dd_err_set(DD_EINTERNAL, "unpack failed");
}

static int h_create(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  pthread_mutex_lock(&calls_mu);
  calls_create++;
  pthread_mutex_unlock(&calls_mu);
  return h_echo(call, req, out);
}

static int h_notfound(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)call;
  (void)out;
  const Deltad__Catalog__V1__DeleteCatalogRequest *d = (const void *)req;
  return dd_err_set(DD_ENOTFOUND, "catalog \"%s\" not found", d->name);
}

static int stream_cancelled;     /* an "infinite" stream saw DD_ECANCELLED */
static int latch_open; /* the "latch" stream waits for the client to see line 1 (atomic) */

static int send_schema(dd_call *call, int i) {
  Deltad__Catalog__V1__SchemaInfo si = DELTAD__CATALOG__V1__SCHEMA_INFO__INIT;
  char name[32];
  snprintf(name, sizeof name, "s%d", i);
  si.name = name;
  si.create_at = i;
  return call->send(call, &si.base);
}

/* page_token "infinite": sends until cancelled; "latch": sends s0, waits (at most 3 s)
 * for the client to have read it, then sends s1. */
static int h_stream_special(dd_call *call, const char *mode) {
  if (strcmp(mode, "infinite") == 0) {
    for (int i = 0;; i++) {
      int rc = send_schema(call, i);
      if (rc != 0) {
        __atomic_store_n(&stream_cancelled, rc == DD_ECANCELLED ? 1 : -1, __ATOMIC_SEQ_CST);
        return rc;
      }
      if (i % 100 == 0) usleep(1000);
    }
  }
  if (strcmp(mode, "gap") == 0) { /* quiet for longer than the idle timeout of 1 s */
    int rc = send_schema(call, 0);
    usleep(2200 * 1000);
    return rc != 0 ? rc : send_schema(call, 1);
  }
  int rc = send_schema(call, 0);
  int open = 0;
  for (int i = 0; rc == 0 && i < 300 && !(open = __atomic_load_n(&latch_open, __ATOMIC_SEQ_CST)); i++)
    usleep(10 * 1000);
  return rc != 0 ? rc : open ? send_schema(call, 1) : dd_err_set(DD_EINTERNAL, "latch timeout");
}

/* Streams max_results SchemaInfo messages named s0, s1, ...; page_token "fail" makes it
 * fail after sending them. */
static int h_stream(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)out;
  const Deltad__Catalog__V1__ListSchemasRequest *l = (const void *)req;
  if (strcmp(l->page_token, "infinite") == 0 || strcmp(l->page_token, "latch") == 0 ||
      strcmp(l->page_token, "gap") == 0)
    return h_stream_special(call, l->page_token);
  for (int i = 0; i < l->max_results; i++) {
    Deltad__Catalog__V1__SchemaInfo si = DELTAD__CATALOG__V1__SCHEMA_INFO__INIT;
    char name[32];
    snprintf(name, sizeof name, "s%d", i);
    si.name = name;
    si.create_at = i;
    int rc = call->send(call, &si.base);
    if (rc != 0) return rc;
  }
  if (strcmp(l->page_token, "fail") == 0) return dd_err_set(DD_EIO, "disk on fire");
  return 0;
}

static int slow_started; /* atomic: h_slow is running */

static int h_slow(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  __atomic_store_n(&slow_started, 1, __ATOMIC_SEQ_CST);
  const Deltad__Catalog__V1__GetSchemaRequest *g = (const void *)req;
  usleep(strcmp(g->full_name, "long") == 0 ? 2200 * 1000 : 400 * 1000);
  return h_echo(call, req, out);
}

/* GetServerInfo: principal name and the x-test header (in version). */
static int h_info(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)req;
  Deltad__System__V1__GetServerInfoResponse *r = malloc(sizeof *r);
  deltad__system__v1__get_server_info_response__init(r);
  const char *h = call->header(call, "x-test");
  r->version = strdup(h ? h : "none");
  r->principal = strdup(call->principal->name);
  *out = &r->base;
  return 0;
}

#define CAT(m) "/deltad.catalog.v1.CatalogService/" m
static const dd_method test_methods[] = {
    {CAT("GetCatalog"), &deltad__catalog__v1__get_catalog_request__descriptor,
     &deltad__catalog__v1__get_catalog_request__descriptor, h_echo, 0},
    {CAT("ListCatalogs"), &deltad__catalog__v1__list_catalogs_request__descriptor,
     &deltad__catalog__v1__list_catalogs_request__descriptor, h_echo, 0},
    {CAT("UpdateCatalog"), &deltad__catalog__v1__update_catalog_request__descriptor,
     &deltad__catalog__v1__update_catalog_request__descriptor, h_echo, 0},
    {CAT("CreateCatalog"), &deltad__catalog__v1__create_catalog_request__descriptor,
     &deltad__catalog__v1__create_catalog_request__descriptor, h_create, 0},
    {CAT("DeleteCatalog"), &deltad__catalog__v1__delete_catalog_request__descriptor,
     &deltad__catalog__v1__delete_catalog_request__descriptor, h_notfound, 0},
    {CAT("ListSchemas"), &deltad__catalog__v1__list_schemas_request__descriptor,
     &deltad__catalog__v1__schema_info__descriptor, h_stream, DD_METHOD_STREAMING},
    {CAT("GetSchema"), &deltad__catalog__v1__get_schema_request__descriptor,
     &deltad__catalog__v1__get_schema_request__descriptor, h_slow, 0},
    {"/deltad.system.v1.SystemService/Ping", &deltad__system__v1__ping_request__descriptor,
     &deltad__system__v1__ping_request__descriptor, h_echo, DD_METHOD_PUBLIC},
    {"/deltad.system.v1.SystemService/GetServerInfo",
     &deltad__system__v1__get_server_info_request__descriptor,
     &deltad__system__v1__get_server_info_response__descriptor, h_info, 0},
};

static int fake_auth(void *app, const char *token, size_t len, dd_principal *out) {
  assert_ptr_equal(app, (void *)0x5eed);
  if (len != 4 || memcmp(token, "good", 4) != 0) return DD_EUNAUTH;
  out->kind = DD_PRINCIPAL_ADMIN;
  strcpy(out->name, "alice");
  return 0;
}

/* Native: echoes what it saw as text; /native/stream streams three chunks; /native/fail
 * returns an error. */
static ssize_t native_chunks(void *cls, uint64_t pos, char *buf, size_t max) {
  int *n = cls;
  (void)pos;
  if (*n == 3 || *n == 103) return DD_HTTP_STREAM_END;
  if (*n == 101) usleep(2200 * 1000); /* /native/slowstream: quiet past the idle timeout */
  int w = snprintf(buf, max, "{\"chunk\":%d}\n", (*n)++);
  return w;
}

static int native_fn(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  assert_ptr_equal(ctx, (void *)0xabc);
  const char *path = dd_http_req_path(req);
  if (strcmp(path, "fail") == 0) return dd_err_set(DD_EPERM, "no sharing for you");
  if (strcmp(path, "slow") == 0) usleep(2200 * 1000); /* past the idle timeout of 1 s */
  if (strcmp(path, "stream") == 0 || strcmp(path, "slowstream") == 0) {
    int *n = calloc(1, sizeof *n);
    if (n && path[0] == 's' && path[1] == 'l') *n = 100;
    dd_http_reply_header(rep, "Content-Type", "application/x-ndjson");
    return dd_http_reply_stream(rep, native_chunks, n, free);
  }
  size_t blen;
  dd_http_req_body(req, &blen);
  const char *q = dd_http_req_query(req, "q"), *h = dd_http_req_header(req, "X-H");
  dd_principal who;
  int authed = dd_http_req_auth(req, &who) == 0;
  char text[512];
  int n = snprintf(text, sizeof text, "%s %s q=%s h=%s body=%zu auth=%d", dd_http_req_method(req),
                   path, q ? q : "-", h ? h : "-", blen, authed);
  dd_http_reply_status(rep, 202);
  dd_http_reply_header(rep, "Content-Type", "text/plain");
  dd_http_reply_header(rep, "X-Native", "1");
  return dd_http_reply_body(rep, text, (size_t)n);
}

/* ---- a small HTTP/1.1 client --------------------------------------------------------- */

typedef struct resp {
  int status;
  char headers[2048];
  char *body;
  size_t len, cap;
} resp;

static int port;

static int conn_open(void) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/* Reads until the buffer holds `need` bytes past off; returns 0 or -1 on EOF. */
typedef struct rbuf {
  char data[1 << 16];
  size_t len, off;
} rbuf;

static int fill(int fd, rbuf *b, size_t need) {
  while (b->len - b->off < need) {
    if (b->off > 0) {
      memmove(b->data, b->data + b->off, b->len - b->off);
      b->len -= b->off;
      b->off = 0;
    }
    if (b->len == sizeof b->data) return -1;
    ssize_t n = read(fd, b->data + b->len, sizeof b->data - b->len);
    if (n <= 0) return -1;
    b->len += (size_t)n;
  }
  return 0;
}

static int read_line(int fd, rbuf *b, char *line, size_t cap) {
  for (;;) {
    char *nl = memchr(b->data + b->off, '\n', b->len - b->off);
    if (nl) {
      size_t n = (size_t)(nl - (b->data + b->off));
      if (n >= cap) return -1;
      memcpy(line, b->data + b->off, n);
      line[n] = '\0';
      if (n > 0 && line[n - 1] == '\r') line[n - 1] = '\0';
      b->off += n + 1;
      return 0;
    }
    if (fill(fd, b, b->len - b->off + 1) != 0) return -1;
  }
}

static void body_take(int fd, rbuf *b, resp *r, size_t n) {
  if (fill(fd, b, n) != 0) fail_msg("short body");
  if (r->len + n + 1 > r->cap) {
    while (r->len + n + 1 > r->cap) r->cap = r->cap ? r->cap * 2 : 4096;
    r->body = realloc(r->body, r->cap);
  }
  memcpy(r->body + r->len, b->data + b->off, n);
  r->len += n;
  r->body[r->len] = '\0';
  b->off += n;
}

static int read_resp(int fd, rbuf *b, resp *r) {
  char line[4096];
  memset(r, 0, sizeof *r);
  if (read_line(fd, b, line, sizeof line) != 0) return -1;
  if (sscanf(line, "HTTP/1.%*d %d", &r->status) != 1) return -1;
  long clen = -1;
  int chunked = 0;
  while (read_line(fd, b, line, sizeof line) == 0 && line[0]) {
    size_t have = strlen(r->headers), n = strlen(line);
    if (have + n + 2 <= sizeof r->headers) {
      memcpy(r->headers + have, line, n);
      memcpy(r->headers + have + n, "\n", 2);
    }
    if (strncasecmp(line, "Content-Length:", 15) == 0) clen = atol(line + 15);
    if (strncasecmp(line, "Transfer-Encoding: chunked", 26) == 0) chunked = 1;
  }
  r->body = calloc(1, 1);
  r->cap = 1;
  if (chunked) {
    for (;;) {
      if (read_line(fd, b, line, sizeof line) != 0) return -1;
      size_t n = strtoul(line, NULL, 16);
      if (n == 0) break;
      body_take(fd, b, r, n);
      read_line(fd, b, line, sizeof line);
    }
    read_line(fd, b, line, sizeof line);
  } else if (clen > 0) {
    body_take(fd, b, r, (size_t)clen);
  }
  return 0;
}

static void send_req(int fd, const char *method, const char *path, const char *headers,
                     const char *body) {
  char req[8192];
  size_t blen = body ? strlen(body) : 0;
  int n = snprintf(req, sizeof req, "%s %s HTTP/1.1\r\nHost: t\r\n%s%s", method, path,
                   headers ? headers : "", body ? "" : "\r\n");
  if (body) n += snprintf(req + n, sizeof req - (size_t)n, "Content-Length: %zu\r\n\r\n", blen);
  assert_int_equal(write(fd, req, (size_t)n), n);
  if (blen) assert_int_equal(write(fd, body, blen), (ssize_t)blen);
}

/* One request on a new connection. */
static resp http(const char *method, const char *path, const char *headers, const char *body) {
  int fd = conn_open();
  assert_true(fd >= 0);
  send_req(fd, method, path, headers, body);
  static __thread rbuf b;
  b.len = b.off = 0;
  resp r;
  if (read_resp(fd, &b, &r) != 0) fail_msg("no response to %s %s", method, path);
  close(fd);
  return r;
}

#define AUTH "Authorization: Bearer good\r\n"

static void *close_later(void *arg) {
  usleep(300 * 1000);
  close((int)(intptr_t)arg);
  return NULL;
}

static void expect(resp r, int status, const char *json_body) {
  if (r.status != status) fail_msg("status %d, want %d; body %s", r.status, status, r.body);
  if (json_body) {
    json_t *got = json_loads(r.body, 0, NULL), *want = json_loads(json_body, 0, NULL);
    assert_non_null(want);
    if (!got || !json_equal(got, want)) fail_msg("body %s, want %s", r.body, json_body);
    json_decref(got);
    json_decref(want);
  }
  free(r.body);
}

/* ---- fixture ------------------------------------------------------------------------- */

/* The registry of test_methods (app 0x5eed, fake_auth), built once for the process. */
static const dd_call_registry *test_registry(void) {
  static dd_call_registry *reg;
  if (!reg)
    assert_int_equal(dd_call_registry_new(&reg, test_methods, sizeof test_methods / sizeof test_methods[0],
                                          (void *)0x5eed, fake_auth), 0);
  return reg;
}

static dd_http_server *start_server_idle(int threads, int idle_timeout_s) {
  dd_http_opts o = DD_HTTP_OPTS_INIT;
  o.listen = "127.0.0.1:0";
  o.threads = threads;
  o.idle_timeout_s = idle_timeout_s;
  o.max_body_bytes = 4096;
  dd_http_server *s;
  assert_int_equal(dd_http_server_new(&s, &o, test_registry()), 0);
  assert_int_equal(dd_http_add_native(s, "/native/", native_fn, (void *)0xabc), 0);
  assert_int_equal(dd_http_server_start(s), 0);
  assert_int_equal(dd_http_add_native(s, "/late/", native_fn, NULL), DD_EINVAL);
  port = dd_http_server_port(s);
  assert_true(port > 0);
  return s;
}

static dd_http_server *start_server(int threads) { return start_server_idle(threads, DD_HTTP_IDLE_TIMEOUT_S); }

static int setup_tpc_idle(void **state) {
  *state = start_server_idle(0, 1);
  return 0;
}
static int setup_pool_idle(void **state) {
  *state = start_server_idle(2, 1);
  return 0;
}
static int setup_tpc(void **state) {
  *state = start_server(0);
  return 0;
}
static int setup_pool1(void **state) {
  *state = start_server(1);
  return 0;
}

static int setup_pool(void **state) {
  *state = start_server(2);
  return 0;
}
static int teardown(void **state) {
  dd_http_server_free(*state);
  return 0;
}

/* ---- tests --------------------------------------------------------------------------- */

static void test_transcoding(void **state) {
  (void)state;
  expect(http("GET", "/api/v1/catalogs/foo", AUTH, NULL), 200, "{\"name\":\"foo\"}");
  expect(http("GET", "/api/v1/catalogs/a%2Fb%20c", AUTH, NULL), 200, "{\"name\":\"a/b c\"}");
  expect(http("GET", "/api/v1/catalogs?maxResults=5&pageToken=x%2By+z", AUTH, NULL), 200,
         "{\"maxResults\":5,\"pageToken\":\"x+y z\"}");
  expect(http("GET", "/api/v1/catalogs?max_results=7", AUTH, NULL), 200, "{\"maxResults\":7}");
  expect(http("PATCH", "/api/v1/catalogs/foo", AUTH,
              "{\"comment\":\"\",\"properties\":{\"a\":\"b\"}}"),
         200, "{\"name\":\"foo\",\"comment\":\"\",\"properties\":{\"a\":\"b\"}}");
  expect(http("PATCH", "/api/v1/catalogs/foo", AUTH, "{\"name\":\"foo\",\"newName\":\"x\"}"), 200,
         "{\"name\":\"foo\",\"newName\":\"x\"}");
  expect(http("PATCH", "/api/v1/catalogs/foo", AUTH, "{\"name\":\"bar\"}"), 400,
         "{\"code\":3,\"message\":\"path has name \\\"foo\\\" but the body has \\\"bar\\\"\",\"details\":[]}");
  expect(http("PATCH", "/api/v1/catalogs/foo", AUTH, ""), 200, "{\"name\":\"foo\"}");
  resp r = http("GET", "/api/v1/catalogs/foo", AUTH, NULL);
  assert_non_null(strstr(r.headers, "Content-Type: application/json"));
  free(r.body);
  /* HEAD: GET's status and headers, no body */
  int fd = conn_open();
  send_req(fd, "HEAD", "/api/v1/catalogs/foo", AUTH, NULL);
  char buf[2048];
  size_t got = 0;
  buf[0] = '\0';
  while (got < sizeof buf - 1 && !strstr(buf, "\r\n\r\n")) {
    ssize_t n = read(fd, buf + got, sizeof buf - 1 - got);
    if (n <= 0) break;
    got += (size_t)n;
    buf[got] = '\0';
  }
  usleep(50 * 1000); /* a body, if one were sent, would have arrived by now */
  ssize_t extra = recv(fd, buf + got, sizeof buf - 1 - got, MSG_DONTWAIT);
  if (extra > 0) buf[got + (size_t)extra] = '\0';
  assert_non_null(strstr(buf, "HTTP/1.1 200"));
  assert_non_null(strstr(buf, "Content-Length: 14\r\n"));
  assert_null(strstr(buf, "{\"name\""));
  close(fd);
}

static void test_query_errors(void **state) {
  (void)state;
  resp r = http("GET", "/api/v1/catalogs?bogus=1", AUTH, NULL);
  assert_int_equal(r.status, 400);
  assert_non_null(strstr(r.body, "query parameter \\\"bogus\\\": unknown field"));
  free(r.body);
  expect(http("GET", "/api/v1/catalogs?maxResults=abc", AUTH, NULL), 400, NULL);
  expect(http("GET", "/api/v1/catalogs?maxResults=%zz", AUTH, NULL), 400, NULL);
}

static void test_auth(void **state) {
  (void)state;
  resp r = http("GET", "/api/v1/catalogs/foo", NULL, NULL);
  assert_int_equal(r.status, 401);
  assert_non_null(strstr(r.body, "\"code\":16"));
  free(r.body);
  expect(http("GET", "/api/v1/catalogs/foo", "Authorization: Bearer bad\r\n", NULL), 401, NULL);
  expect(http("GET", "/api/v1/catalogs/foo", "Authorization: Basic Z29vZA==\r\n", NULL), 401, NULL);
  expect(http("GET", "/api/v1/catalogs/foo", "x-api-key: good\r\n", NULL), 200, "{\"name\":\"foo\"}");
  expect(http("GET", "/api/v1/catalogs/foo", "authorization: bearer good\r\n", NULL), 200, NULL);
  expect(http("GET", "/api/v1/system/ping", NULL, NULL), 200, "{}");
  expect(http("GET", "/api/v1/system/info", AUTH "X-Test: hello\r\n", NULL), 200,
         "{\"version\":\"hello\",\"principal\":\"alice\"}");
  calls_create = 0;
  expect(http("POST", "/api/v1/catalogs", "Authorization: Bearer nope\r\n", "{\"name\":\"x\"}"), 401, NULL);
  assert_int_equal(calls_create, 0);
}

static void test_bad_requests(void **state) {
  (void)state;
  calls_create = 0;
  resp r = http("POST", "/api/v1/catalogs", AUTH, "{\"name\": ");
  assert_int_equal(r.status, 400);
  assert_non_null(strstr(r.body, "invalid JSON: "));
  assert_non_null(strstr(r.body, "line 1, column"));
  free(r.body);
  expect(http("POST", "/api/v1/catalogs", AUTH, "{\"name\":\"a\",\"bogus\":1}"), 400,
         "{\"code\":3,\"message\":\"unknown field \\\"bogus\\\" in deltad.catalog.v1.CreateCatalogRequest\","
         "\"details\":[]}");
  expect(http("POST", "/api/v1/catalogs", AUTH, "{\"properties\":{\"owner\":1}}"), 400,
         "{\"code\":3,\"message\":\"properties.owner: expected string\",\"details\":[]}");
  expect(http("POST", "/api/v1/catalogs", AUTH, "[1]"), 400, NULL);
  expect(http("POST", "/api/v1/catalogs", AUTH, "{\"name\":\"a\",\"name\":\"b\"}"), 400, NULL);
  assert_int_equal(calls_create, 0);
  expect(http("POST", "/api/v1/catalogs", AUTH, "{\"name\":\"a\",\"comment\":\"c\"}"), 200,
         "{\"name\":\"a\",\"comment\":\"c\"}");
  assert_int_equal(calls_create, 1);
}

static void test_status_codes(void **state) {
  (void)state;
  expect(http("DELETE", "/api/v1/catalogs/x", AUTH, NULL), 404,
         "{\"code\":5,\"message\":\"catalog \\\"x\\\" not found\",\"details\":[]}");
  expect(http("GET", "/api/v1/nope", AUTH, NULL), 404, NULL);
  expect(http("GET", "/elsewhere", AUTH, NULL), 404, NULL);
  expect(http("GET", "/api/v1", AUTH, NULL), 404, NULL);
  expect(http("GET", "/api/v1/credentials", AUTH, NULL), 404, NULL); /* not in the table */
  resp r = http("PUT", "/api/v1/catalogs/foo", AUTH, "{}");
  assert_int_equal(r.status, 405);
  assert_non_null(strstr(r.body, "\"code\":12"));
  assert_non_null(strstr(r.headers, "Allow: GET, PATCH, DELETE"));
  free(r.body);
  /* 413: declared too large, and streamed (chunked) too large */
  char big[5000];
  memset(big, ' ', sizeof big - 1);
  big[sizeof big - 1] = '\0';
  big[0] = '{';
  big[sizeof big - 2] = '}';
  calls_create = 0;
  expect(http("POST", "/api/v1/catalogs", AUTH, big), 413, NULL);
  int fd = conn_open();
  char req[6000];
  int n = snprintf(req, sizeof req, "POST /api/v1/catalogs HTTP/1.1\r\nHost: t\r\n" AUTH
                   "Transfer-Encoding: chunked\r\n\r\n%x\r\n%s\r\n0\r\n\r\n", (unsigned)strlen(big), big);
  assert_int_equal(write(fd, req, (size_t)n), n);
  rbuf b = {.len = 0};
  assert_int_equal(read_resp(fd, &b, &r), 0);
  assert_int_equal(r.status, 413);
  free(r.body);
  close(fd);
  assert_int_equal(calls_create, 0);
}

static void test_streaming(void **state) {
  (void)state;
  resp r = http("GET", "/api/v1/schemas?maxResults=3", AUTH, NULL);
  assert_int_equal(r.status, 200);
  assert_non_null(strstr(r.headers, "application/x-ndjson"));
  assert_string_equal(r.body, "{\"name\":\"s0\"}\n{\"name\":\"s1\",\"createAt\":\"1\"}\n"
                              "{\"name\":\"s2\",\"createAt\":\"2\"}\n");
  free(r.body);
  r = http("GET", "/api/v1/schemas?maxResults=1&pageToken=fail", AUTH, NULL);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.body, "{\"name\":\"s0\"}\n{\"error\":{\"code\":14,\"message\":\"disk on fire\",\"details\":[]}}\n");
  free(r.body);
  expect(http("GET", "/api/v1/schemas?pageToken=fail", AUTH, NULL), 503, NULL);
  r = http("GET", "/api/v1/schemas", AUTH, NULL);
  assert_int_equal(r.status, 200);
  assert_int_equal(r.len, 0);
  free(r.body);
}

/* A stream bigger than the server's high-water mark arrives whole and in order. */
static void test_stream_large(void **state) {
  (void)state;
  resp r = http("GET", "/api/v1/schemas?maxResults=40000", AUTH, NULL);
  assert_int_equal(r.status, 200);
  assert_true(r.len > (1u << 20));
  size_t lines = 0;
  for (char *p = r.body; (p = strchr(p, '\n')) != NULL; p++) lines++;
  assert_int_equal(lines, 40000);
  assert_non_null(strstr(r.body, "{\"name\":\"s39999\",\"createAt\":\"39999\"}\n"));
  free(r.body);
}

/* Opens a stream, reads raw bytes until `until` shows up, returns the socket. */
static int stream_until(const char *path, const char *until) {
  int fd = conn_open();
  send_req(fd, "GET", path, AUTH, NULL);
  char buf[65536];
  size_t len = 0;
  while (len < sizeof buf - 1) {
    ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
    if (n <= 0) break;
    len += (size_t)n;
    buf[len] = '\0';
    if (strstr(buf, until)) return fd;
  }
  close(fd);
  fail_msg("stream %s never showed %s", path, until);
  return -1;
}

/* Lines reach the client while the handler is still running (nothing is buffered whole):
 * the handler waits for the client to have read line 1 before sending line 2. */
static void test_stream_not_buffered(void **state) {
  (void)state;
  __atomic_store_n(&latch_open, 0, __ATOMIC_SEQ_CST);
  int fd = stream_until("/api/v1/schemas?pageToken=latch", "{\"name\":\"s0\"}\n");
  __atomic_store_n(&latch_open, 1, __ATOMIC_SEQ_CST);
  char buf[4096] = "";
  size_t len = 0;
  /* up to the end of line 2 (MHD may send a chunk in two writes) */
  while (len < sizeof buf - 1 && !strstr(buf, "\"createAt\":\"1\"}")) {
    ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
    if (n <= 0) break;
    len += (size_t)n;
    buf[len] = '\0';
  }
  assert_non_null(strstr(buf, "{\"name\":\"s1\",\"createAt\":\"1\"}"));
  close(fd);
}

static void wait_cancelled(void) {
  for (int i = 0; i < 500 && __atomic_load_n(&stream_cancelled, __ATOMIC_SEQ_CST) == 0; i++)
    usleep(10 * 1000);
  assert_int_equal(__atomic_load_n(&stream_cancelled, __ATOMIC_SEQ_CST), 1);
}

/* A client that goes away cancels the handler (its send returns DD_ECANCELLED). */
static void test_stream_client_gone(void **state) {
  (void)state;
  stream_cancelled = 0;
  int fd = stream_until("/api/v1/schemas?pageToken=infinite", "\"s3\"");
  close(fd);
  wait_cancelled();
  expect(http("GET", "/api/v1/catalogs/after", AUTH, NULL), 200, "{\"name\":\"after\"}");
}

/* stop() with an endless stream running: cancels it and returns. */
static void test_stream_stop(void **state) {
  stream_cancelled = 0;
  int fd = stream_until("/api/v1/schemas?pageToken=infinite", "\"s3\"");
  dd_http_server *s = *state;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  /* in_flight never drains for an endless stream: stop waits its bound, so shorten it by
   * letting the client vanish half-way */
  pthread_t closer;
  pthread_create(&closer, NULL, close_later, (void *)(intptr_t)fd);
  dd_http_server_stop(s);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  pthread_join(closer, NULL);
  wait_cancelled();
  assert_true(t1.tv_sec - t0.tv_sec < 10);
}

static void test_native(void **state) {
  (void)state;
  resp r = http("POST", "/native/shares/a%20b?q=x+y%21&z=1", "X-H: hv\r\n" AUTH, "12345");
  assert_int_equal(r.status, 202);
  assert_string_equal(r.body, "POST shares/a%20b q=x y! h=hv body=5 auth=1");
  assert_non_null(strstr(r.headers, "Content-Type: text/plain"));
  assert_non_null(strstr(r.headers, "X-Native: 1"));
  free(r.body);
  r = http("GET", "/native/x", NULL, NULL);
  assert_string_equal(r.body, "GET x q=- h=- body=0 auth=0");
  free(r.body);
  r = http("GET", "/native/stream", NULL, NULL);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.body, "{\"chunk\":0}\n{\"chunk\":1}\n{\"chunk\":2}\n");
  free(r.body);
  expect(http("GET", "/native/fail", NULL, NULL), 403,
         "{\"code\":7,\"message\":\"no sharing for you\",\"details\":[]}");
  expect(http("GET", "/nativeX", NULL, NULL), 404, NULL);
}

static void test_keep_alive(void **state) {
  (void)state;
  int fd = conn_open();
  rbuf *b = calloc(1, sizeof *b);
  for (int i = 0; i < 5; i++) {
    char path[64];
    snprintf(path, sizeof path, "/api/v1/catalogs/c%d", i);
    send_req(fd, "GET", path, AUTH, NULL);
    resp r;
    assert_int_equal(read_resp(fd, b, &r), 0);
    assert_int_equal(r.status, 200);
    char want[64];
    snprintf(want, sizeof want, "{\"name\":\"c%d\"}", i);
    assert_string_equal(r.body, want);
    free(r.body);
  }
  /* errors keep the connection too */
  send_req(fd, "GET", "/api/v1/nope", AUTH, NULL);
  resp r;
  assert_int_equal(read_resp(fd, b, &r), 0);
  assert_int_equal(r.status, 404);
  free(r.body);
  send_req(fd, "POST", "/api/v1/catalogs", AUTH, "{\"name\":\"k\"}");
  assert_int_equal(read_resp(fd, b, &r), 0);
  assert_int_equal(r.status, 200);
  free(r.body);
  free(b);
  close(fd);
}

static void *client_thread(void *arg) {
  int id = (int)(intptr_t)arg, ok = 0;
  int fd = conn_open();
  rbuf *b = calloc(1, sizeof *b);
  for (int i = 0; i < 25; i++) {
    char path[64], want[64];
    snprintf(path, sizeof path, "/api/v1/catalogs/t%d-%d", id, i);
    snprintf(want, sizeof want, "{\"name\":\"t%d-%d\"}", id, i);
    send_req(fd, "GET", path, AUTH, NULL);
    resp r;
    if (read_resp(fd, b, &r) == 0 && r.status == 200 && strcmp(r.body, want) == 0) ok++;
    free(r.body);
  }
  free(b);
  close(fd);
  return (void *)(intptr_t)ok;
}

static void test_concurrent(void **state) {
  (void)state;
  pthread_t t[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, client_thread, (void *)(intptr_t)i);
  for (int i = 0; i < 8; i++) {
    void *ok;
    pthread_join(t[i], &ok);
    assert_int_equal((int)(intptr_t)ok, 25);
  }
}

static void *slow_client(void *arg) {
  (void)arg;
  resp *r = malloc(sizeof *r);
  *r = http("GET", "/api/v1/schemas/slow.one", AUTH, NULL);
  return r;
}

/* How long n quick requests take, one after the other (ms). */
static double quick_requests_ms(int n) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int i = 0; i < n; i++) expect(http("GET", "/api/v1/catalogs/quick", AUTH, NULL), 200, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
}

/* Slow handlers on every pool thread hold up no other request. */
static void test_slow_handler_isolation(void **state) {
  (void)state;
  pthread_t t[4];
  __atomic_store_n(&slow_started, 0, __ATOMIC_SEQ_CST);
  for (int i = 0; i < 4; i++) pthread_create(&t[i], NULL, slow_client, NULL);
  for (int i = 0; i < 500 && !__atomic_load_n(&slow_started, __ATOMIC_SEQ_CST); i++) usleep(10 * 1000);
  usleep(50 * 1000);
  double ms = quick_requests_ms(4);
  if (ms > 250) fail_msg("fast requests took %.0f ms behind slow handlers", ms);
  for (int i = 0; i < 4; i++) {
    void *rv;
    pthread_join(t[i], &rv);
    resp *r = rv;
    assert_int_equal(r->status, 200);
    free(r->body);
    free(r);
  }
}

/* A grpc-timeout header is the call's deadline: past it the call ends 504 with code 4
 * (DEADLINE_EXCEEDED) before the handler ran (1n), while a unary handler ran (100 ms
 * against a 400 ms handler), and as the last line of a stream still being produced;
 * a malformed value is 400. */
static void test_deadline(void **state) {
  (void)state;
  resp r = http("GET", "/api/v1/catalogs/x", AUTH "grpc-timeout: 1n\r\n", NULL);
  assert_int_equal(r.status, 504);
  assert_non_null(strstr(r.body, "\"code\":4"));
  free(r.body);
  r = http("GET", "/api/v1/schemas/slow", AUTH "grpc-timeout: 100m\r\n", NULL);
  assert_int_equal(r.status, 504);
  assert_non_null(strstr(r.body, "\"code\":4"));
  free(r.body);
  stream_cancelled = 0;
  r = http("GET", "/api/v1/schemas?pageToken=infinite", AUTH "grpc-timeout: 300m\r\n", NULL);
  assert_int_equal(r.status, 200);
  const char *last = r.len > 1 ? r.body + r.len - 2 : r.body;
  while (last > r.body && last[-1] != '\n') last--;
  if (!strstr(last, "{\"error\":{\"code\":4,")) fail_msg("last line %s", last);
  free(r.body);
  wait_cancelled(); /* the handler's send said DD_ECANCELLED at the deadline */
  expect(http("GET", "/api/v1/catalogs/x", AUTH "grpc-timeout: 10x\r\n", NULL), 400, NULL);
  expect(http("GET", "/api/v1/catalogs/x", AUTH "grpc-timeout: 5S\r\n", NULL), 200, "{\"name\":\"x\"}");
}

/* With one epoll thread, streams that do not move (a client that does not read an
 * endless stream, so its producer waits at the queue's high-water mark; a producer that
 * waits for the latch) hold no thread: other requests are answered at once. */
static void test_streams_hold_no_thread(void **state) {
  (void)state;
  stream_cancelled = 0;
  __atomic_store_n(&latch_open, 0, __ATOMIC_SEQ_CST);
  int slow = conn_open(), waiting = conn_open();
  assert_true(slow >= 0 && waiting >= 0);
  send_req(slow, "GET", "/api/v1/schemas?pageToken=infinite", AUTH, NULL);
  send_req(waiting, "GET", "/api/v1/schemas?pageToken=latch", AUTH, NULL);
  usleep(300 * 1000); /* the endless stream fills the socket and the queue */
  double ms = quick_requests_ms(8);
  if (ms > 500) fail_msg("8 requests took %.0f ms beside two idle streams", ms);
  __atomic_store_n(&latch_open, 1, __ATOMIC_SEQ_CST);
  close(slow);
  close(waiting);
  wait_cancelled();
}

/* stop() waits for the in-flight slow request, then refuses connections. */
static void test_graceful_stop(void **state) {
  dd_http_server *s = *state;
  pthread_t t;
  __atomic_store_n(&slow_started, 0, __ATOMIC_SEQ_CST);
  pthread_create(&t, NULL, slow_client, NULL);
  for (int i = 0; i < 500 && !__atomic_load_n(&slow_started, __ATOMIC_SEQ_CST); i++) usleep(10 * 1000);
  dd_http_server_stop(s);
  void *rv;
  pthread_join(t, &rv);
  resp *r = rv;
  assert_int_equal(r->status, 200);
  assert_string_equal(r->body, "{\"fullName\":\"slow.one\"}");
  free(r->body);
  free(r);
  assert_int_equal(conn_open(), -1);
  dd_http_server_stop(s); /* twice is fine */
}

/* drain() while a slow request runs: it finishes (200); the request pipelined behind it
 * is answered 503 with Connection: close and not run; then the connection is closed and
 * no new one is accepted. */
static void test_drain_pipelined(void **state) {
  dd_http_server *s = *state;
  __atomic_store_n(&slow_started, 0, __ATOMIC_SEQ_CST);
  int fd = conn_open();
  assert_true(fd >= 0);
  const char *two = "GET /api/v1/schemas/slow.one HTTP/1.1\r\nHost: t\r\n" AUTH "\r\n"
                    "DELETE /api/v1/catalogs/x HTTP/1.1\r\nHost: t\r\n" AUTH "\r\n";
  assert_int_equal(write(fd, two, strlen(two)), (ssize_t)strlen(two));
  for (int i = 0; i < 500 && !__atomic_load_n(&slow_started, __ATOMIC_SEQ_CST); i++) usleep(10 * 1000);
  dd_http_server_drain(s);
  rbuf b = {0};
  resp r;
  assert_int_equal(read_resp(fd, &b, &r), 0);
  assert_int_equal(r.status, 200);
  free(r.body);
  assert_int_equal(read_resp(fd, &b, &r), 0);
  assert_int_equal(r.status, 503); /* not 404: the handler never ran */
  assert_non_null(strstr(r.headers, "Connection: close"));
  free(r.body);
  char c;
  assert_int_equal(read(fd, &c, 1), 0);
  close(fd);
  assert_int_equal(conn_open(), -1);
}

/* With an idle timeout of 1 s, replies whose handler or producer is quiet for 2.2 s still
 * arrive whole (the client is waiting, not idle); a silent client is closed. */
static void test_slow_reply_not_idle(void **state) {
  (void)state;
  resp r = http("GET", "/api/v1/schemas?pageToken=gap", AUTH, NULL);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.body, "{\"name\":\"s0\"}\n{\"name\":\"s1\",\"createAt\":\"1\"}\n");
  free(r.body);
  expect(http("GET", "/api/v1/schemas/long", AUTH, NULL), 200, "{\"fullName\":\"long\"}");
  r = http("GET", "/native/slow", NULL, NULL);
  assert_int_equal(r.status, 202);
  free(r.body);
  r = http("GET", "/native/slowstream", NULL, NULL);
  assert_int_equal(r.status, 200);
  assert_string_equal(r.body, "{\"chunk\":100}\n{\"chunk\":101}\n{\"chunk\":102}\n");
  free(r.body);
  /* a client reading a large stream slowly, through a small window, makes progress */
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  int small = 8192;
  setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
  struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
  send_req(fd, "GET", "/api/v1/schemas?maxResults=20000", AUTH "Connection: close\r\n", NULL);
  char buf[4096];
  size_t total = 0;
  ssize_t n;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  while ((n = read(fd, buf, sizeof buf)) > 0) {
    total += (size_t)n;
    usleep(15 * 1000);
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  close(fd);
  if (t1.tv_sec - t0.tv_sec < 2) fail_msg("the slow read took under 2 s; it proves nothing");
  assert_true(total > 20000u * 30u); /* every line arrived (each is over 30 bytes) */
  fd = conn_open();
  assert_true(fd >= 0);
  struct timeval tv = {.tv_sec = 5};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  char c;
  assert_int_equal(read(fd, &c, 1), 0); /* closed by the server, not by the 5 s timeout */
  close(fd);
}

/* bind() makes the port known before anything is served (deltad sets its public URL in
 * between): a request sent then waits in the backlog and is answered once started. */
static void test_bind_before_start(void **state) {
  (void)state;
  dd_http_opts o = DD_HTTP_OPTS_INIT;
  o.listen = "127.0.0.1:0";
  dd_http_server *s;
  assert_int_equal(dd_http_server_new(&s, &o, test_registry()), 0);
  assert_int_equal(dd_http_server_port(s), -1);
  assert_int_equal(dd_http_server_bind(s), 0);
  port = dd_http_server_port(s);
  assert_true(port > 0);
  assert_int_equal(dd_http_server_bind(s), 0); /* once */
  int fd = conn_open();
  assert_true(fd >= 0);
  send_req(fd, "GET", "/api/v1/catalogs/early", AUTH, NULL);
  assert_int_equal(dd_http_server_start(s), 0);
  assert_int_equal(dd_http_server_port(s), port);
  static rbuf b; /* 64 KiB: not on the stack */
  b.len = b.off = 0;
  resp r;
  assert_int_equal(read_resp(fd, &b, &r), 0);
  close(fd);
  expect(r, 200, "{\"name\":\"early\"}");
  dd_http_server_free(s);
  /* bound but never started: free closes the socket */
  assert_int_equal(dd_http_server_new(&s, &o, test_registry()), 0);
  assert_int_equal(dd_http_server_bind(s), 0);
  dd_http_server_free(s);
}

static void test_bad_listen(void **state) {
  (void)state;
  dd_http_opts o = DD_HTTP_OPTS_INIT;
  dd_http_server *s;
  o.listen = "nonsense";
  assert_int_equal(dd_http_server_new(&s, &o, test_registry()), 0);
  assert_int_equal(dd_http_server_start(s), DD_EINVAL);
  dd_http_server_free(s);
  o.listen = "127.0.0.1:0";
  dd_http_server *a, *b2;
  assert_int_equal(dd_http_server_new(&a, &o, test_registry()), 0);
  assert_int_equal(dd_http_server_start(a), 0);
  char addr[64];
  snprintf(addr, sizeof addr, "127.0.0.1:%d", dd_http_server_port(a));
  o.listen = addr;
  assert_int_equal(dd_http_server_new(&b2, &o, test_registry()), 0);
  assert_int_equal(dd_http_server_start(b2), DD_EIO);
  dd_http_server_free(b2);
  dd_http_server_free(a);
  dd_http_server_free(NULL);
}

#define BOTH(t) cmocka_unit_test_setup_teardown(t, setup_tpc, teardown), \
                cmocka_unit_test_setup_teardown(t, setup_pool, teardown)

int main(void) {
  const struct CMUnitTest tests[] = {
      BOTH(test_transcoding), BOTH(test_query_errors), BOTH(test_auth),
      BOTH(test_bad_requests), BOTH(test_status_codes), BOTH(test_streaming),
      BOTH(test_stream_large), BOTH(test_stream_not_buffered), BOTH(test_stream_client_gone),
      BOTH(test_stream_stop), BOTH(test_native), BOTH(test_keep_alive), BOTH(test_concurrent),
      BOTH(test_slow_handler_isolation), BOTH(test_graceful_stop), BOTH(test_drain_pipelined),
      BOTH(test_deadline),
      cmocka_unit_test_setup_teardown(test_streams_hold_no_thread, setup_tpc, teardown),
      cmocka_unit_test_setup_teardown(test_streams_hold_no_thread, setup_pool1, teardown),
      cmocka_unit_test(test_bind_before_start),
      cmocka_unit_test(test_bad_listen),
      cmocka_unit_test_setup_teardown(test_slow_reply_not_idle, setup_tpc_idle, teardown),
      cmocka_unit_test_setup_teardown(test_slow_reply_not_idle, setup_pool_idle, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
