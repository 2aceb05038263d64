/* lance_rest.c: the Lance Namespace REST adapter (lance_rest.h): routing, authentication,
 * Lance JSON in and out (lance_rest_json.h), identifiers (lance_rest_id.h), and the mapping
 * from deltad errors to Lance error codes. */
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

/* Lance error codes (lance-namespace docs/src/namespace/operations/errors.md). */
enum {
  LANCE_E_UNSUPPORTED = 0,
  LANCE_E_NAMESPACE_NOT_FOUND = 1,
  LANCE_E_NAMESPACE_ALREADY_EXISTS = 2,
  LANCE_E_NAMESPACE_NOT_EMPTY = 3,
  LANCE_E_TABLE_NOT_FOUND = 4,
  LANCE_E_TABLE_ALREADY_EXISTS = 5,
  LANCE_E_INVALID_INPUT = 13,
  LANCE_E_CONCURRENT_MODIFICATION = 14,
  LANCE_E_PERMISSION_DENIED = 15,
  LANCE_E_UNAUTHENTICATED = 16,
  LANCE_E_SERVICE_UNAVAILABLE = 17,
  LANCE_E_INTERNAL = 18,
  LANCE_E_INVALID_TABLE_STATE = 19,
};

/* ---- errors ----------------------------------------------------------------------------- */

int lance_rest_error_code(int dd_code, lance_subject subject) {
  int table = subject == LANCE_SUBJECT_TABLE;
  switch (dd_code) {
  case DD_EINVAL:
  case DD_ERANGE: return LANCE_E_INVALID_INPUT;
  case DD_ENOTFOUND: return table ? LANCE_E_TABLE_NOT_FOUND : LANCE_E_NAMESPACE_NOT_FOUND;
  case DD_EEXISTS: return table ? LANCE_E_TABLE_ALREADY_EXISTS : LANCE_E_NAMESPACE_ALREADY_EXISTS;
  case DD_EPRECOND:
    return subject == LANCE_SUBJECT_NAMESPACE ? LANCE_E_NAMESPACE_NOT_EMPTY : LANCE_E_INVALID_TABLE_STATE;
  case DD_ECONFLICT: return LANCE_E_CONCURRENT_MODIFICATION;
  case DD_EUNAUTH: return LANCE_E_UNAUTHENTICATED;
  case DD_EPERM: return LANCE_E_PERMISSION_DENIED;
  case DD_EUNSUPPORTED: return LANCE_E_UNSUPPORTED;
  case DD_EIO:
  case DD_ENOMEM:
  case DD_ECANCELLED: return LANCE_E_SERVICE_UNAVAILABLE;
  default: return LANCE_E_INTERNAL;
  }
}

int lance_rest_http_status(int code) {
  switch (code) {
  case 0: return 406;
  case 1: case 4: case 6: case 8: case 10: case 11: case 12: return 404;
  case 2: case 3: case 5: case 7: case 9: case 14: case 19: return 409;
  case 13: case 20: return 400;
  case 15: return 403;
  case 16: return 401;
  case 17: return 503;
  case 21: return 429;
  default: return 500;
  }
}

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
static int lr_error(const lr_req *q, int dd_code, lance_subject subj) {
  int code = lance_rest_error_code(dd_code, subj);
  char instance[512];
  snprintf(instance, sizeof instance, "%s%s", q->prefix, dd_http_req_path(q->req));
  json_t *b = json_pack("{s:s, s:i, s:s}", "error", dd_err_msg(), "code", code, "instance", instance);
  return lr_json_reply(q->rep, lance_rest_http_status(code), b);
}

/* ---- routes ------------------------------------------------------------------------------ */

typedef struct lr_route {
  const char *action; /* after "{id}/" */
  const char *verb;
  lance_method_index method;
} lr_route;

static const lr_route lr_namespace_routes[] = {
    {"create", "POST", LANCE_M_CREATE_NAMESPACE},   {"list", "GET", LANCE_M_LIST_NAMESPACES},
    {"describe", "POST", LANCE_M_DESCRIBE_NAMESPACE}, {"drop", "POST", LANCE_M_DROP_NAMESPACE},
    {"exists", "POST", LANCE_M_NAMESPACE_EXISTS},   {"table/list", "GET", LANCE_M_LIST_TABLES},
    {NULL, NULL, 0}};

static const lr_route lr_table_routes[] = {
    {"register", "POST", LANCE_M_REGISTER_TABLE},   {"describe", "POST", LANCE_M_DESCRIBE_TABLE},
    {"exists", "POST", LANCE_M_TABLE_EXISTS},       {"drop", "POST", LANCE_M_DROP_TABLE},
    {"deregister", "POST", LANCE_M_DEREGISTER_TABLE}, {NULL, NULL, 0}};

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

int dd_http__lance_route(int table, const char *path, const char **action, size_t *id_len) {
  const lr_route *r = NULL;
  int rc = lr_route_find(table ? lr_table_routes : lr_namespace_routes, path, &r, id_len);
  if (!rc) *action = r->action;
  return rc;
}

/* ---- requests ---------------------------------------------------------------------------- */

static const char *lr_header(dd_call *call, const char *name) {
  return dd_http_req_header(call->transport, name);
}

static int lr_no_stream(dd_call *call, const ProtobufCMessage *msg) {
  (void)call;
  (void)msg;
  return dd_err_set(DD_EUNSUPPORTED, "Lance operations do not stream");
}

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
  rc = lance_json_to_msg(m, j);
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
    int rc = v ? lance_query_to_field(m, names[i], v) : 0;
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

static int lr_set_id(ProtobufCMessage *m, lance_id *id, int body_had_id) {
  lr_ided *r = (lr_ided *)m;
  if (body_had_id && !lance_id_equal(id, r->id, r->n_id))
    return dd_err_set(DD_EINVAL, "id: the request body's id differs from the path's");
  for (size_t i = 0; i < r->n_id; i++) free(r->id[i]);
  free(r->id);
  r->id = id->parts;
  r->n_id = id->n;
  *id = (lance_id)LANCE_ID_INIT; /* moved into the message */
  return 0;
}

/* Builds the request message of route r. */
static int lr_build(ProtobufCMessage **out, const dd_method *m, const lr_route *r,
                    const dd_http_request *req, const char *raw_id, size_t id_len) {
  lance_id id = LANCE_ID_INIT;
  int had_id = 0;
  ProtobufCMessage *msg = lr_msg_new(m->input);
  int rc = msg ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc) rc = lance_id_parse(&id, raw_id, id_len, dd_http_req_query(req, "delimiter"));
  if (!rc && strcmp(r->verb, "POST") == 0) rc = lr_fill_body(msg, req, &had_id);
  if (!rc) rc = lr_fill_query(msg, req);
  if (!rc) rc = lr_set_id(msg, &id, had_id);
  lance_id_free(&id);
  if (rc && msg) protobuf_c_message_free_unpacked(msg, NULL);
  *out = rc ? NULL : msg;
  return rc;
}

/* ---- serving ----------------------------------------------------------------------------- */

static int lr_reply_ok(dd_http_reply *rep, const lr_route *r, const ProtobufCMessage *resp) {
  if (r->method == LANCE_M_NAMESPACE_EXISTS || r->method == LANCE_M_TABLE_EXISTS)
    return dd_http_reply_status(rep, 200); /* the status is the answer; no body */
  json_t *j = lance_msg_to_json(resp);
  return j ? lr_json_reply(rep, 200, j) : dd_err_set(DD_ENOMEM, "out of memory");
}

/* Runs route r for an authenticated principal. */
static int lr_run(void *app, const lr_req *q, const lr_route *r, const dd_principal *who,
                  const char *raw_id, size_t id_len) {
  const dd_method *m = &dd_lance_methods[r->method];
  ProtobufCMessage *msg = NULL, *resp = NULL;
  int rc = dd_method_authorize(m, who); /* before the body is parsed */
  if (!rc) rc = lr_build(&msg, m, r, q->req, raw_id, id_len);
  if (rc) return lr_error(q, rc, LANCE_SUBJECT_NONE);
  dd_call call = {.principal = who, .app = app, .send = lr_no_stream, .header = lr_header,
                  .transport = (void *)q->req};
  rc = m->fn(&call, msg, &resp);
  rc = rc ? lr_error(q, rc, lance_svc_subject()) : lr_reply_ok(q->rep, r, resp);
  protobuf_c_message_free_unpacked(msg, NULL);
  if (resp) protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

/* Serves path ("{id}/{action}") against routes. Authentication comes first. */
static int lr_serve(void *app, const lr_req *q, const lr_route *routes, const char *path) {
  dd_principal who;
  const lr_route *r = NULL;
  size_t id_len = 0;
  int rc = dd_http_req_auth(q->req, &who);
  if (rc) return lr_error(q, rc == DD_ENOMEM ? rc : DD_EUNAUTH, LANCE_SUBJECT_NONE);
  if ((rc = lr_route_find(routes, path, &r, &id_len))) return lr_error(q, rc, LANCE_SUBJECT_NONE);
  if (strcmp(dd_http_req_method(q->req), r->verb) != 0) {
    rc = dd_err_set(DD_EINVAL, "%s takes %s, not %s", r->action, r->verb, dd_http_req_method(q->req));
    return lr_error(q, rc, LANCE_SUBJECT_NONE);
  }
  return lr_run(app, q, r, &who, path, id_len);
}

static int lr_namespace(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  lr_req q = {req, rep, "/v1/namespace/"};
  return lr_serve(ctx, &q, lr_namespace_routes, dd_http_req_path(req));
}

/* Registered on "/v1/table" so that ListAllTables ("/v1/table") is answered too (as
 * unsupported). */
static int lr_table(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  lr_req q = {req, rep, "/v1/table"};
  const char *path = dd_http_req_path(req);
  if (*path == '/') return lr_serve(ctx, &q, lr_table_routes, path + 1);
  dd_principal who;
  int rc = dd_http_req_auth(req, &who);
  if (!rc) rc = dd_err_set(DD_EUNSUPPORTED, "unsupported Lance operation '/v1/table%.200s'", path);
  return lr_error(&q, rc, LANCE_SUBJECT_NONE);
}

int lance_rest_register(dd_http_server *s, void *app) {
  int rc = dd_http_add_native(s, "/v1/namespace/", lr_namespace, app);
  if (!rc) rc = dd_http_add_native(s, "/v1/table", lr_table, app);
  return rc;
}
