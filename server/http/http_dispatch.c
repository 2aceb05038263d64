/* http_dispatch.c: serves the generated routes: finds the route in the call registry,
 * authenticates (dd_call_authenticate), takes the deadline from grpc-timeout, transcodes
 * the HTTP request into the method's request message (google.api.http rules), runs it
 * through the call core and turns its reply or its error into the HTTP response (streams
 * and the epoll pool: http_stream.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/err.h"
#include "server/http/http_int.h"
#include "server/http/pbjson.h"

/* ---- responses ----------------------------------------------------------------------- */

enum MHD_Result dd_http__queue_body(struct MHD_Connection *c, int status, const char *ctype,
                                 char *body, size_t len) {
  struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
  if (!r) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
  if (status == 429) MHD_add_response_header(r, MHD_HTTP_HEADER_RETRY_AFTER, "1");
  enum MHD_Result ok = dd_http__queue(c, (unsigned)status, r);
  MHD_destroy_response(r);
  return ok;
}

char *dd_http__error_json(int code, const char *msg) {
  json_t *j = json_pack("{s:i, s:s, s:[]}", "code", dd_call_status_grpc(code), "message", msg, "details");
  if (!j) j = json_pack("{s:i, s:s, s:[]}", "code", dd_call_status_grpc(code), "message", "(message not UTF-8)", "details");
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  return s;
}

enum MHD_Result dd_http__queue_error(struct MHD_Connection *c, int code, int http_status,
                                  const char *msg) {
  char *body = dd_http__error_json(code, msg);
  if (!body) return MHD_NO;
  return dd_http__queue_body(c, http_status ? http_status : dd_call_status_http(code), "application/json",
                          body, strlen(body));
}

const char *dd_http__rest_msg(const dd_http__req *rq, const char *msg, char *buf, size_t cap) {
  const ProtobufCMessageDescriptor *d = rq->req_desc;
  size_t n = strcspn(msg, ": ");
  if (!d || !msg[n] || n == 0 || n >= 128) return msg;
  char name[128];
  memcpy(name, msg, n);
  name[n] = '\0';
  char json[128];
  if (!protobuf_c_message_descriptor_get_field_by_name(d, name) ||
      !strcmp(pbjson_json_name(name, json, sizeof json), name))
    return msg;
  snprintf(buf, cap, "%s%s", json, msg + n);
  return buf;
}

/* ---- authentication ------------------------------------------------------------------ */

static const char *dd_http__hdr(struct MHD_Connection *c, const char *name) {
  return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

int dd_http__authenticate_admit(dd_http_server *srv, struct MHD_Connection *c, dd_principal *out,
                                rg_ticket *ticket) {
  return dd_call_authenticate_admit(srv->reg, DD_CALL_AUTH_REST, dd_http__hdr(c, MHD_HTTP_HEADER_AUTHORIZATION),
                                    dd_http__hdr(c, "x-api-key"), out, ticket);
}

/* ---- transcoding: HTTP -> request message -------------------------------------------- */

static int parse_body(const dd_http__req *rq, json_t **out) {
  json_error_t e;
  *out = NULL;
  int rc = rg_json_check(rq->body ? rq->body : "", rq->len); /* before jansson allocates */
  if (rc) return rc;
  *out = json_loadb(rq->body ? rq->body : "", rq->len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &e);
  if (!*out)
    return dd_err_set(DD_EINVAL, "invalid JSON: %s (line %d, column %d, position %d)", e.text,
                      e.line, e.column, e.position);
  return 0;
}

/* The body as the request message (body "*"), as one of its fields (body "field"), or
 * an empty message (no body). */
static int message_from_body(const dd_http__req *rq, const dd_api_route *route,
                             const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out) {
  json_t *j = NULL;
  int rc = 0;
  int has_body = route->body[0] != '\0' && rq->len > 0;
  if (has_body && (rc = parse_body(rq, &j)) != 0) return rc;
  if (has_body && strcmp(route->body, "*") != 0) {
    json_t *wrap = json_object();
    if (!wrap || json_object_set_new(wrap, route->body, j) != 0) {
      json_decref(wrap);
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
    j = wrap;
  }
  if (!j) j = json_object();
  rc = j ? pbjson_to_msg(out, desc, j) : dd_err_set(DD_ENOMEM, "out of memory");
  json_decref(j);
  return rc;
}

typedef struct query_ctx {
  ProtobufCMessage *msg;
  int rc;
} query_ctx;

static enum MHD_Result apply_query_param(void *cls, enum MHD_ValueKind kind, const char *key,
                                         const char *value) {
  (void)kind;
  query_ctx *q = cls;
  char *k = strdup(key), *v = strdup(value ? value : "");
  if (!k || !v) q->rc = dd_err_set(DD_ENOMEM, "out of memory");
  else if (dd_call_pct_decode(k, 1) != 0 || dd_call_pct_decode(v, 1) != 0)
    q->rc = dd_err_set(DD_EINVAL, "malformed percent-escape in query parameter");
  else if ((q->rc = pbjson_set_path_field(q->msg, k, v)) != 0)
    dd_err_wrap(q->rc, "query parameter \"%s\"", k);
  free(k);
  free(v);
  return q->rc == 0 ? MHD_YES : MHD_NO;
}

/* Path variables fill their fields; with body "*" a field the body already set must
 * hold the same value. */
static int apply_path_vars(ProtobufCMessage *msg, const dd_call_match *m, int whole_body) {
  for (size_t i = 0; i < m->n_vars; i++) {
    const dd_call_var *v = &m->vars[i];
    if (whole_body) {
      char cur[1024];
      int rc = pbjson_get_path_field(msg, v->field, cur, sizeof cur);
      if (rc == 0 && strcmp(cur, v->value) == 0) continue;
      if (rc == 0)
        return dd_err_set(DD_EINVAL, "path has %s \"%s\" but the body has \"%s\"", v->field,
                          v->value, cur);
      if (rc != DD_ENOTFOUND) return rc;
    }
    int rc = pbjson_set_path_field(msg, v->field, v->value);
    if (rc != 0) return dd_err_wrap(rc, "path variable %s", v->field);
  }
  return 0;
}

static int build_request(dd_http__req *rq, const dd_api_route *route, const dd_method *method,
                         const dd_call_match *m, ProtobufCMessage **out) {
  int rc = message_from_body(rq, route, method->input, out);
  int whole = strcmp(route->body, "*") == 0;
  if (rc == 0 && !whole) {
    query_ctx q = {*out, 0};
    MHD_get_connection_values(rq->conn, MHD_GET_ARGUMENT_KIND, apply_query_param, &q);
    rc = q.rc;
  }
  if (rc == 0) rc = apply_path_vars(*out, m, whole);
  if (rc != 0) {
    protobuf_c_message_free_unpacked(*out, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- calling the handler ------------------------------------------------------------- */

int dd_http__reply_json(const ProtobufCMessage *out, char **body) {
  *body = NULL;
  if (!out) return dd_err_set(DD_EINTERNAL, "handler returned no response");
  json_t *j = pbjson_from_msg(out);
  *body = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  return *body ? 0 : dd_err_set(DD_EINTERNAL, "cannot encode the response: %s", dd_err_msg());
}

/* The sink of a unary call run on the connection's thread: the reply's JSON text. */
typedef struct unary_sink {
  dd_http__req *rq;
  char *body;
} unary_sink;

static const char *unary_header(void *cls, const char *name) {
  return dd_http__hdr(((unary_sink *)cls)->rq->conn, name);
}

static int unary_send(void *cls, const ProtobufCMessage *msg) {
  return dd_http__reply_json(msg, &((unary_sink *)cls)->body);
}

static enum MHD_Result call_unary(dd_http__req *rq, const dd_method *method, const dd_principal *who,
                                  const ProtobufCMessage *req, int64_t deadline_ms) {
  unary_sink us = {.rq = rq};
  dd_call_sink sink = {.cls = &us, .header = unary_header, .send = unary_send, .request_id = rq->request_id};
  dd_call_result res;
  dd_err_clear();
  int rc = dd_call_run(rq->srv->reg, method, req, who, deadline_ms, &sink, &res);
  if (rc) {
    char buf[1200];
    free(us.body);
    return dd_http__queue_error(rq->conn, rc, 0, dd_http__rest_msg(rq, dd_err_msg(), buf, sizeof buf));
  }
  if (res.file_fd >= 0) {
    struct MHD_Response *r = MHD_create_response_from_fd_at_offset64(res.file_len, res.file_fd, res.file_off);
    if (!r) {
      close(res.file_fd);
      return MHD_NO;
    }
    enum MHD_Result ok = dd_http__queue(rq->conn, MHD_HTTP_OK, r);
    MHD_destroy_response(r);
    return ok;
  }
  return dd_http__queue_body(rq->conn, 200, "application/json", us.body, strlen(us.body));
}

/* 405 with the Allow header RFC 9110 asks for. */
static enum MHD_Result queue_not_allowed(struct MHD_Connection *c, const char *allow) {
  char *body = dd_http__error_json(DD_EUNSUPPORTED, dd_err_msg());
  struct MHD_Response *r = body ? MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE) : NULL;
  if (!r) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, allow);
  enum MHD_Result ok = dd_http__queue(c, MHD_HTTP_METHOD_NOT_ALLOWED, r);
  MHD_destroy_response(r);
  return ok;
}

enum MHD_Result dd_http__dispatch_route(dd_http__req *rq, const char *path) {
  dd_http_server *s = rq->srv;
  dd_call_route rt;
  /* HEAD is GET without the body (MHD drops the body of a HEAD reply) */
  const char *verb = strcmp(rq->method, "HEAD") == 0 ? "GET" : rq->method;
  int rc = dd_call_route_match(s->reg, verb, path, &rt);
  if (rc == DD_EUNSUPPORTED) return queue_not_allowed(rq->conn, rt.match.allow);
  if (rc != 0) return dd_http__queue_error(rq->conn, rc, 0, dd_err_msg());
  const dd_method *method = rt.method;
  rq->req_desc = method->input;
  dd_principal who;
  ProtobufCMessage *req = NULL;
  int64_t deadline = 0;
  enum MHD_Result r;
  /* the token, the method's authorization and admission, all before the body is parsed */
  if ((rc = dd_call_authenticate(s->reg, method, DD_CALL_AUTH_REST, dd_http__hdr(rq->conn, MHD_HTTP_HEADER_AUTHORIZATION),
                                 dd_http__hdr(rq->conn, "x-api-key"), &who, &rq->admit, rq->request_id)) != 0 ||
      (rc = dd_call_parse_timeout(dd_http__hdr(rq->conn, "grpc-timeout"), &deadline)) != 0 ||
      (rc = build_request(rq, rt.route, method, &rt.match, &req)) != 0) {
    r = dd_http__queue_error(rq->conn, rc, 0, dd_err_msg());
    goto cleanup;
  }
  if ((method->flags & DD_METHOD_STREAMING) || (s->opts.threads > 0 && !(method->flags & DD_METHOD_QUICK))) {
    r = dd_http__stream_start(rq, method, req, &who, deadline, dd_http__json_codec(method)); /* takes req */
    req = NULL;
  } else {
    r = call_unary(rq, method, &who, req, deadline);
  }
cleanup:
  protobuf_c_message_free_unpacked(req, NULL);
  dd_call_route_clear(&rt);
  return r;
}
