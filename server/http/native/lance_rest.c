/* lance_rest.c: the Lance Namespace REST codec (lance_rest.h): routing, authentication,
 * the request message decoded from the path id, the query string and the JSON body
 * (lance_rest_json.h, lance_rest_id.h), the call through the call core, and Lance JSON out;
 * errors carry the Lance code the call core's status table gives the failure and the
 * handler's detail (a namespace or a table, dd_call_set_detail). */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/native/lance_rest.h"
#include "server/http/native/lance_rest_id.h"
#include "server/http/native/lance_rest_json.h"
#include "server/http/native/native_int.h"
#include "server/call/req_guard.h"

/* ---- errors ----------------------------------------------------------------------------- */

static int lr_json_reply(dd_http_reply *rep, int status, json_t *body) {
  char *s = body ? json_dumps(body, JSON_COMPACT) : NULL;
  json_decref(body);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = dd_http_reply_status(rep, status);
  if (!rc) rc = dd_http_reply_header(rep, "Content-Type", "application/json");
  if (!rc) rc = dd_http_reply_body(rep, s, strlen(s));
  free(s);
  return rc;
}

/* One request being served: the view, the reply, and the prefix it came under. */
typedef struct lr_req {
  const dd_http_request *req;
  dd_http_reply *rep;
  const char *prefix;
} lr_req;

/* {"error", "code", "instance"} with the code's status; instance is the request path. */
static int lr_error_body(dd_http_reply *rep, int dd_code, int detail, const char *msg,
                         const char *instance) {
  int status = 500;
  int code = dd_call_status_lance(dd_code, detail, &status);
  json_t *b = json_pack("{s:s, s:i, s:s}", "error", msg, "code", code, "instance", instance);
  return lr_json_reply(rep, status, b);
}

static void lr_instance(const lr_req *q, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s", q->prefix, dd_http_req_path(q->req));
}

/* A failure before the call: about the request itself. */
static int lr_error(const lr_req *q, int dd_code) {
  char instance[512];
  lr_instance(q, instance, sizeof instance);
  return lr_error_body(q->rep, dd_code, DD_CALL_DETAIL_NONE, dd_err_msg(), instance);
}

/* ---- routes ------------------------------------------------------------------------------ */

typedef struct lr_route {
  const char *action; /* after "{id}/" */
  const char *verb;
  const char *method; /* NamespaceService's method */
  int exists;         /* the status is the answer: no body */
} lr_route;

#define LR_SVC "/deltad.lance.v1.NamespaceService/"
static const lr_route lr_namespace_routes[] = {
    {"create", "POST", LR_SVC "CreateNamespace", 0},     {"list", "GET", LR_SVC "ListNamespaces", 0},
    {"describe", "POST", LR_SVC "DescribeNamespace", 0}, {"drop", "POST", LR_SVC "DropNamespace", 0},
    {"exists", "POST", LR_SVC "NamespaceExists", 1},     {"table/list", "GET", LR_SVC "ListTables", 0},
    {NULL, NULL, NULL, 0}};

static const lr_route lr_table_routes[] = {
    {"register", "POST", LR_SVC "RegisterTable", 0}, {"describe", "POST", LR_SVC "DescribeTable", 0},
    {"exists", "POST", LR_SVC "TableExists", 1},     {"drop", "POST", LR_SVC "DropTable", 0},
    {"deregister", "POST", LR_SVC "DeregisterTable", 0}, {NULL, NULL, NULL, 0}};

/* Splits "{id}/{action}[/]" and finds the route. */
static int lr_route_find(const lr_route *routes, const char *path, const lr_route **out,
                         size_t *id_len) {
  const char *slash = strchr(path, '/');
  if (!slash) return dd_err_set(DD_EUNSUPPORTED, "unsupported Lance operation '%.200s'", path);
  size_t alen = strlen(slash + 1);
  if (alen && slash[alen] == '/') alen--; /* a trailing slash */
  for (const lr_route *r = routes; r->action; r++) {
    if (strlen(r->action) == alen && strncmp(slash + 1, r->action, alen) == 0) {
      *out = r;
      *id_len = (size_t)(slash - path);
      return 0;
    }
  }
  return dd_err_set(DD_EUNSUPPORTED, "unsupported Lance operation '%.200s'", slash + 1);
}

int dd_native__lance_route(int table, const char *path, const char **action, size_t *id_len) {
  const lr_route *r = NULL;
  int rc = lr_route_find(table ? lr_table_routes : lr_namespace_routes, path, &r, id_len);
  if (!rc) *action = r->action;
  return rc;
}

/* ---- requests ---------------------------------------------------------------------------- */

static ProtobufCMessage *lr_msg_new(const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = malloc(d->sizeof_message);
  if (m) d->message_init(m);
  return m;
}

/* Fills the request message from the JSON body (POST); *had_id tells whether the body
 * named an id (to be checked against the path's). */
static int lr_fill_body(ProtobufCMessage *m, const dd_http_request *req, int *had_id) {
  size_t len;
  const uint8_t *body = dd_http_req_body(req, &len);
  json_error_t jerr;
  *had_id = 0;
  if (len == 0) return 0;
  int rc = rg_json_check((const char *)body, len); /* before jansson allocates */
  if (rc) return rc;
  json_t *j = json_loadb((const char *)body, len, JSON_REJECT_DUPLICATES, &jerr);
  if (!j) return dd_err_set(DD_EINVAL, "request body: malformed JSON: %s", jerr.text);
  rc = dd_native__lance_json_to_msg(m, j);
  const json_t *id = json_is_object(j) ? json_object_get(j, "id") : NULL;
  *had_id = id && !json_is_null(id);
  json_decref(j);
  return rc;
}

/* Fills the fields the operation takes from the query string. */
static int lr_fill_query(ProtobufCMessage *m, const dd_http_request *req) {
  static const char *const names[] = {"page_token", "limit", "include_declared", "with_table_uri",
                                      "load_detailed_metadata", "check_declared"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (!protobuf_c_message_descriptor_get_field_by_name(m->descriptor, names[i])) continue;
    const char *v = dd_http_req_query(req, names[i]);
    int rc = v ? dd_native__lance_query_to_field(m, names[i], v) : 0;
    if (rc) return rc;
  }
  return 0;
}

/* Every request message starts with `repeated string id = 1`: the body's id must agree
 * with the path's, then the path's is used. */
typedef struct lr_ided {
  ProtobufCMessage base;
  size_t n_id;
  char **id;
} lr_ided;

static int lr_set_id(ProtobufCMessage *m, dd_native__lance_id *id, int body_had_id) {
  lr_ided *r = (lr_ided *)m;
  if (body_had_id && !dd_native__lance_id_equal(id, r->id, r->n_id))
    return dd_err_set(DD_EINVAL, "id: the request body's id differs from the path's");
  for (size_t i = 0; i < r->n_id; i++) free(r->id[i]);
  free(r->id);
  r->id = id->parts;
  r->n_id = id->n;
  *id = (dd_native__lance_id)DD_NATIVE__LANCE_ID_INIT; /* moved into the message */
  return 0;
}

/* Builds the request message of route r. */
static int lr_build(ProtobufCMessage **out, const dd_method *m, const lr_route *r,
                    const dd_http_request *req, const char *raw_id, size_t id_len) {
  dd_native__lance_id id = DD_NATIVE__LANCE_ID_INIT;
  int had_id = 0;
  ProtobufCMessage *msg = lr_msg_new(m->input);
  int rc = msg ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = dd_native__lance_id_parse(&id, raw_id, id_len, dd_http_req_query(req, "delimiter"));
  if (!rc && strcmp(r->verb, "POST") == 0) rc = lr_fill_body(msg, req, &had_id);
  if (!rc) rc = lr_fill_query(msg, req);
  if (!rc) rc = lr_set_id(msg, &id, had_id);
  dd_native__lance_id_free(&id);
  if (rc && msg) protobuf_c_message_free_unpacked(msg, NULL);
  *out = rc ? NULL : msg;
  return rc;
}

/* ---- the call ----------------------------------------------------------------------------- */

/* The codec's state: what the reply is and the instance its errors name. */
typedef struct lr_op {
  int exists;
  char instance[512];
} lr_op;

static int lr_encode(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out) {
  lr_op *op = cls;
  (void)index;
  if (op->exists) return 0; /* the status is the answer; no body */
  return dd_native__append_json(out, dd_native__lance_msg_to_json(msg));
}

static int lr_head(void *cls, int rc, const char *msg, const dd_call_result *res,
                   dd_http_reply *rep) {
  lr_op *op = cls;
  if (rc) return lr_error_body(rep, rc, res->detail, msg, op->instance);
  rc = dd_http_reply_status(rep, 200);
  if (!rc && !op->exists) rc = dd_http_reply_header(rep, "Content-Type", "application/json");
  return rc;
}

/* Runs route r for an authenticated principal. */
static int lr_run(const lr_req *q, const lr_route *r, const dd_principal *who, const char *raw_id,
                  size_t id_len) {
  const dd_method *m = dd_native__method(q->req, r->method);
  ProtobufCMessage *msg = NULL;
  int rc = m ? dd_method_authorize(m, who) /* before the body is parsed */
             : dd_err_set(DD_EINTERNAL, "method %s not served", r->method);
  if (!rc) rc = lr_build(&msg, m, r, q->req, raw_id, id_len);
  lr_op *op = rc ? NULL : calloc(1, sizeof *op);
  if (!rc && !op) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (rc) {
    if (msg) protobuf_c_message_free_unpacked(msg, NULL);
    return lr_error(q, rc);
  }
  op->exists = r->exists;
  lr_instance(q, op->instance, sizeof op->instance);
  dd_http__codec c = {.cls = op, .encode = lr_encode, .head = lr_head, .free_cls = free};
  return dd_native__run(q->req, m, msg, who, &c);
}

/* Serves path ("{id}/{action}") against routes. Authentication comes first. */
static int lr_serve(const lr_req *q, const lr_route *routes, const char *path) {
  dd_principal who;
  const lr_route *r = NULL;
  size_t id_len = 0;
  int rc = dd_http_req_auth(q->req, &who);
  if (rc) return lr_error(q, rc == DD_ENOMEM ? rc : DD_EUNAUTH);
  if ((rc = lr_route_find(routes, path, &r, &id_len))) return lr_error(q, rc);
  if (strcmp(dd_http_req_method(q->req), r->verb) != 0) {
    rc = dd_err_set(DD_EINVAL, "%s takes %s, not %s", r->action, r->verb, dd_http_req_method(q->req));
    return lr_error(q, rc);
  }
  return lr_run(q, r, &who, path, id_len);
}

static int lr_namespace(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  lr_req q = {req, rep, "/v1/namespace/"};
  (void)ctx;
  return lr_serve(&q, lr_namespace_routes, dd_http_req_path(req));
}

/* Registered on "/v1/table" so that ListAllTables ("/v1/table") is answered too (as
 * unsupported). */
static int lr_table(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  lr_req q = {req, rep, "/v1/table"};
  const char *path = dd_http_req_path(req);
  (void)ctx;
  if (*path == '/') return lr_serve(&q, lr_table_routes, path + 1);
  dd_principal who;
  int rc = dd_http_req_auth(req, &who);
  if (!rc) rc = dd_err_set(DD_EUNSUPPORTED, "unsupported Lance operation '/v1/table%.200s'", path);
  return lr_error(&q, rc);
}

int dd_native_lance_register(dd_http_server *s) {
  int rc = dd_http_add_native(s, "/v1/namespace/", lr_namespace, NULL);
  if (!rc) rc = dd_http_add_native(s, "/v1/table", lr_table, NULL);
  return rc;
}
