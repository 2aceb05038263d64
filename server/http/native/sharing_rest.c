/* sharing_rest.c: the Delta Sharing REST protocol, native (sharing_rest.h). It turns a
 * request into the request message of a DeltaSharingService / ExtensionService method,
 * calls the same handler gRPC calls, and writes what PROTOCOL.md says byte for byte:
 * one-line JSON lists with items/nextPageToken, NDJSON (protocol line first) with
 * Delta-Table-Version and delta-sharing-capabilities headers, and errors as
 * {"errorCode","message"} with the reference server's codes and statuses. */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "deltad/sharing/v1/sharing.pb-c.h"
#include "server/call/call_route.h"
#include "server/http/native/files_rest.h"
#include "server/http/native/native_int.h"
#include "server/http/native/sharing_stream.h"
#include "server/http/native/sharing_rest.h"
#include "server/http/pbjson.h"
#include "server/call/req_guard.h"
#include "server/service/sharing_files.h"

#define SR_JSON "application/json; charset=utf-8"
#define SR_NDJSON "application/x-ndjson; charset=utf-8"
#define SR_SEGS DD_HTTP__SR_SEGS

typedef struct sr_ctx {
  dd_app *app;
} sr_ctx;

/* ---- replies ------------------------------------------------------------------------ */

static int sr_error(dd_http_reply *rep, const char *method, int rc, const char *msg) {
  int status = 500;
  const char *code = dd_sharing_error_code(rc, &status);
  dd_http_reply_status(rep, status);
  if (strcmp(method, "HEAD") == 0) return 0;
  /* msg is fit to show: the handlers leave a recipient only a generic message with a
   * request id for the server's own failures (svc_recipient_error) */
  json_t *j = json_pack("{s:s,s:s}", "errorCode", code, "message", msg);
  if (!j) /* the message echoes request bytes that are not UTF-8 */
    j = json_pack("{s:s,s:s}", "errorCode", code, "message", "the request names an invalid object");
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  dd_http_reply_header(rep, "Content-Type", SR_JSON);
  if (s) dd_http_reply_body(rep, s, strlen(s));
  free(s);
  return 0;
}

static int sr_json(dd_http_reply *rep, json_t *j) {
  char *s = j ? json_dumps(j, JSON_COMPACT) : NULL;
  json_decref(j);
  if (!s) return dd_err_set(DD_ENOMEM, "out of memory");
  dd_http_reply_header(rep, "Content-Type", SR_JSON);
  int rc = dd_http_reply_body(rep, s, strlen(s));
  free(s);
  return rc;
}

/* ---- calling a handler -------------------------------------------------------------- */

typedef struct sr_call {
  dd_call call;
  const dd_http_request *req;
} sr_call;

static const char *sr_header(dd_call *call, const char *name) {
  return dd_http_req_header(((sr_call *)call->transport)->req, name);
}

/* Unary handlers never send; the NDJSON ones run in sharing_stream.c with their own send. */
static int sr_send(dd_call *call, const ProtobufCMessage *msg) {
  (void)call;
  (void)msg;
  return dd_err_set(DD_EINTERNAL, "send() called by a unary handler");
}

static const dd_method *sr_method(const char *path) {
  size_t n = 0;
  const dd_method *m = dd_app_methods(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(m[i].path, path) == 0) return &m[i];
  return NULL;
}

/* Runs the handler named path; *out is its reply (unary). */
static int sr_invoke(sr_call *c, const char *path, const ProtobufCMessage *in,
                     ProtobufCMessage **out) {
  const dd_method *m = sr_method(path);
  *out = NULL;
  if (!m) return dd_err_set(DD_EINTERNAL, "method %s not served", path);
  dd_err_clear();
  int rc = dd_method_authorize(m, c->call.principal);
  return rc ? rc : m->fn(&c->call, in, out);
}

/* ---- request parsing ----------------------------------------------------------------- */

/* Strict decimal; DD_EINVAL with the reference server's message, naming the parameter. */
static int sr_int(const char *name, const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = s && *s ? strtoll(s, &end, 10) : 0;
  if (!s || !*s || *end || errno || v < lo || v > hi)
    return dd_err_set(DD_EINVAL, "%s: expected a number but the string didn't have the "
                      "appropriate format", name);
  *out = v;
  return 0;
}

/* maxResults / pageToken into a list request (fields named max_results, page_token). */
int dd_http__sr_max_results(const char *s, int32_t *max) {
  int64_t v = 0;
  int rc = sr_int("maxResults", s, INT64_MIN, INT64_MAX, &v);
  if (rc) return rc;
  /* out of int32: clamped, so the service's range check names the accepted values */
  *max = (int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
  return 0;
}

static int sr_page_params(const dd_http_request *req, int *has, int32_t *max, char **token) {
  const char *m = dd_http_req_query(req, "maxResults"), *t = dd_http_req_query(req, "pageToken");
  *has = m != NULL;
  if (m) {
    int rc = dd_http__sr_max_results(m, max);
    if (rc) return rc;
  }
  *token = (char *)(t ? t : "");
  return 0;
}

/* ---- the protocol's list replies ----------------------------------------------------- */

static json_t *sr_items_json(json_t *items, const char *next) {
  json_t *j = json_object();
  json_object_set_new(j, "items", items);
  if (next && *next) json_object_set_new(j, "nextPageToken", json_string(next));
  return j;
}

static json_t *sr_share_json(const Deltad__Sharing__V1__Share *s) {
  return json_pack("{s:s,s:s}", "name", s->name, "id", s->id);
}

static json_t *sr_tables_json(const Deltad__Sharing__V1__ListTablesResponse *r) {
  json_t *a = json_array();
  for (size_t i = 0; i < r->n_items; i++) {
    const Deltad__Sharing__V1__Table *t = r->items[i];
    json_array_append_new(a, json_pack("{s:s,s:s,s:s,s:s,s:s}", "name", t->name, "schema",
                                       t->schema, "share", t->share, "shareId", t->share_id,
                                       "id", t->id));
  }
  return sr_items_json(a, r->next_page_token);
}

static json_t *sr_list_json(const char *kind, const ProtobufCMessage *out) {
  if (strcmp(kind, "shares") == 0) {
    const Deltad__Sharing__V1__ListSharesResponse *r = (const void *)out;
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_items; i++) json_array_append_new(a, sr_share_json(r->items[i]));
    return sr_items_json(a, r->next_page_token);
  }
  if (strcmp(kind, "schemas") == 0) {
    const Deltad__Sharing__V1__ListSchemasResponse *r = (const void *)out;
    json_t *a = json_array();
    for (size_t i = 0; i < r->n_items; i++)
      json_array_append_new(a, json_pack("{s:s,s:s}", "name", r->items[i]->name, "share",
                                         r->items[i]->share));
    return sr_items_json(a, r->next_page_token);
  }
  if (strcmp(kind, "share") == 0) {
    const Deltad__Sharing__V1__GetShareResponse *r = (const void *)out;
    return json_pack("{s:o}", "share", sr_share_json(r->share));
  }
  return sr_tables_json((const void *)out);
}

/* ---- routes --------------------------------------------------------------------------- */

#define SR_SVC "/deltad.sharing.v1.DeltaSharingService/"
#define SR_EXT "/deltad.sharing.v1.DeltaSharingExtensionService/"

typedef dd_http__sr_route sr_route; /* native_int.h */

static int sr_unary_list(sr_call *c, dd_http_reply *rep, const char *method,
                         ProtobufCMessage *in, const char *kind) {
  ProtobufCMessage *out = NULL;
  int rc = sr_invoke(c, method, in, &out);
  if (!rc) rc = sr_json(rep, sr_list_json(kind, out));
  if (out) protobuf_c_message_free_unpacked(out, NULL);
  return rc;
}

static int sr_list(sr_call *c, dd_http_reply *rep, const sr_route *r) {
  int has = 0, rc;
  int32_t max = 0;
  char *tok;
  if ((rc = sr_page_params(c->req, &has, &max, &tok))) return rc;
  if (r->n == 0) {
    Deltad__Sharing__V1__ListSharesRequest q = DELTAD__SHARING__V1__LIST_SHARES_REQUEST__INIT;
    q._max_results_case = has ? DELTAD__SHARING__V1__LIST_SHARES_REQUEST___MAX_RESULTS_MAX_RESULTS : 0;
    q.max_results = max;
    q.page_token = tok;
    return sr_unary_list(c, rep, SR_SVC "ListShares", &q.base, "shares");
  }
  if (r->n == 2 && strcmp(r->seg[1], "schemas") == 0) {
    Deltad__Sharing__V1__ListSchemasRequest q = DELTAD__SHARING__V1__LIST_SCHEMAS_REQUEST__INIT;
    q.share = (char *)r->seg[0];
    q._max_results_case = has ? DELTAD__SHARING__V1__LIST_SCHEMAS_REQUEST___MAX_RESULTS_MAX_RESULTS : 0;
    q.max_results = max;
    q.page_token = tok;
    return sr_unary_list(c, rep, SR_SVC "ListSchemas", &q.base, "schemas");
  }
  if (r->n == 2) {
    Deltad__Sharing__V1__ListAllTablesRequest q = DELTAD__SHARING__V1__LIST_ALL_TABLES_REQUEST__INIT;
    q.share = (char *)r->seg[0];
    q._max_results_case = has ? DELTAD__SHARING__V1__LIST_ALL_TABLES_REQUEST___MAX_RESULTS_MAX_RESULTS : 0;
    q.max_results = max;
    q.page_token = tok;
    return sr_unary_list(c, rep, SR_SVC "ListAllTables", &q.base, "tables");
  }
  Deltad__Sharing__V1__ListTablesRequest q = DELTAD__SHARING__V1__LIST_TABLES_REQUEST__INIT;
  q.share = (char *)r->seg[0];
  q.schema = (char *)r->seg[2];
  q._max_results_case = has ? DELTAD__SHARING__V1__LIST_TABLES_REQUEST___MAX_RESULTS_MAX_RESULTS : 0;
  q.max_results = max;
  q.page_token = tok;
  return sr_unary_list(c, rep, SR_SVC "ListTables", &q.base, "tables");
}

static int sr_get_share(sr_call *c, dd_http_reply *rep, const sr_route *r) {
  Deltad__Sharing__V1__GetShareRequest q = DELTAD__SHARING__V1__GET_SHARE_REQUEST__INIT;
  q.share = (char *)r->seg[0];
  return sr_unary_list(c, rep, SR_SVC "GetShare", &q.base, "share");
}

static int sr_version(sr_call *c, dd_http_reply *rep, const sr_route *r) {
  Deltad__Sharing__V1__GetTableVersionRequest q = DELTAD__SHARING__V1__GET_TABLE_VERSION_REQUEST__INIT;
  ProtobufCMessage *out = NULL;
  const char *ts = dd_http_req_query(c->req, "startingTimestamp");
  q.share = (char *)r->seg[0];
  q.schema = (char *)r->seg[2];
  q.table = (char *)r->seg[4];
  q.starting_timestamp = (char *)(ts ? ts : "");
  int rc = sr_invoke(c, SR_SVC "GetTableVersion", &q.base, &out);
  if (rc) return rc;
  char v[32];
  snprintf(v, sizeof v, "%lld",
           (long long)((Deltad__Sharing__V1__GetTableVersionResponse *)out)->version);
  protobuf_c_message_free_unpacked(out, NULL);
  return dd_http_reply_header(rep, "Delta-Table-Version", v);
}

/* Runs the NDJSON handler at path (metadata, query, changes) on its own thread and
 * streams its lines (sharing_stream.h); errors before the first line are returned as
 * usual, the headers come from the first line. */
static int sr_ndjson(sr_call *c, dd_http_reply *rep, const char *path,
                     const ProtobufCMessage *in) {
  const dd_method *m = sr_method(path);
  if (!m) return dd_err_set(DD_EINTERNAL, "method %s not served", path);
  srs_stream *s = NULL;
  int64_t version = 0;
  char caps[128], v[32];
  int lines = 0;
  int rc = dd_method_authorize(m, c->call.principal);
  if (rc) return rc;
  rc = srs_start(&s, m, in, c->call.principal, c->call.app,
                     sr_header(&c->call, "delta-sharing-capabilities"));
  if (!rc) rc = srs_wait_first(s, &version, caps, sizeof caps, &lines);
  if (rc) {
    srs_release(s);
    return rc;
  }
  snprintf(v, sizeof v, "%lld", (long long)version);
  dd_http_reply_header(rep, "Content-Type", SR_NDJSON);
  if (lines) {
    dd_http_reply_header(rep, "Delta-Table-Version", v);
    dd_http_reply_header(rep, "delta-sharing-capabilities", caps);
  }
  return dd_http_reply_stream(rep, srs_read, s, srs_release);
}

static int sr_metadata(sr_call *c, dd_http_reply *rep, const sr_route *r) {
  Deltad__Sharing__V1__GetTableMetadataRequest q = DELTAD__SHARING__V1__GET_TABLE_METADATA_REQUEST__INIT;
  q.share = (char *)r->seg[0];
  q.schema = (char *)r->seg[2];
  q.table = (char *)r->seg[4];
  return sr_ndjson(c, rep, SR_SVC "GetTableMetadata", &q.base);
}

/* The body decoded once into the request (sharing_query.c); the handler checks the rest. */
static int sr_query(sr_call *c, dd_http_reply *rep, const sr_route *r) {
  Deltad__Sharing__V1__QueryTableRequest *m = NULL;
  size_t len = 0;
  const uint8_t *body = dd_http_req_body(c->req, &len);
  int rc = rg_json_check((const char *)body, len); /* before jansson allocates */
  if (!rc) rc = dd_native__query_decode(&m, (const char *)body, len);
  if (rc) return rc;
  m->share = (char *)r->seg[0]; /* borrowed until the request is freed below */
  m->schema = (char *)r->seg[2];
  m->table = (char *)r->seg[4];
  rc = sr_ndjson(c, rep, SR_SVC "QueryTable", &m->base);
  m->share = m->schema = m->table = (char *)protobuf_c_empty_string;
  protobuf_c_message_free_unpacked(&m->base, NULL);
  return rc;
}

static int sr_bool(const char *s, protobuf_c_boolean *out) {
  if (!s) return 0;
  if (strcasecmp(s, "true") == 0) *out = 1;
  else if (strcasecmp(s, "false") == 0) *out = 0;
  else return dd_err_set(DD_EINVAL, "expected true or false, got '%s'", s);
  return 0;
}

static int sr_changes(sr_call *c, dd_http_reply *rep, const sr_route *r) {
  Deltad__Sharing__V1__GetTableChangesRequest q = DELTAD__SHARING__V1__GET_TABLE_CHANGES_REQUEST__INIT;
  const dd_http_request *h = c->req;
  const char *sv = dd_http_req_query(h, "startingVersion"), *ev = dd_http_req_query(h, "endingVersion");
  const char *st = dd_http_req_query(h, "startingTimestamp"), *et = dd_http_req_query(h, "endingTimestamp");
  const char *mf = dd_http_req_query(h, "maxFiles"), *pt = dd_http_req_query(h, "pageToken");
  int64_t v = 0;
  int rc = 0;
  q.share = (char *)r->seg[0];
  q.schema = (char *)r->seg[2];
  q.table = (char *)r->seg[4];
  if (sv && !(rc = sr_int("startingVersion", sv, 0, INT64_MAX, &v))) {
    q._starting_version_case = DELTAD__SHARING__V1__GET_TABLE_CHANGES_REQUEST___STARTING_VERSION_STARTING_VERSION;
    q.starting_version = v;
  }
  if (!rc && ev && !(rc = sr_int("endingVersion", ev, 0, INT64_MAX, &v))) {
    q._ending_version_case = DELTAD__SHARING__V1__GET_TABLE_CHANGES_REQUEST___ENDING_VERSION_ENDING_VERSION;
    q.ending_version = v;
  }
  if (!rc && mf && !(rc = sr_int("maxFiles", mf, 0, INT64_MAX, &v))) {
    q._max_files_case = DELTAD__SHARING__V1__GET_TABLE_CHANGES_REQUEST___MAX_FILES_MAX_FILES;
    q.max_files = v;
  }
  if (!rc) rc = sr_bool(dd_http_req_query(h, "includeHistoricalMetadata"),
                        &q.include_historical_metadata);
  if (rc) return rc;
  q.starting_timestamp = (char *)(st ? st : "");
  q.ending_timestamp = (char *)(et ? et : "");
  q.page_token = (char *)(pt ? pt : "");
  return sr_ndjson(c, rep, SR_SVC "GetTableChanges", &q.base);
}

/* ---- admin routes (ExtensionService) ---------------------------------------------------- */

/* Parses the JSON body (empty: {}) into desc after setting path fields. */
static int sr_admin_msg(sr_call *c, const ProtobufCMessageDescriptor *desc, const char *const *kv,
                        ProtobufCMessage **out) {
  size_t len = 0;
  const uint8_t *body = dd_http_req_body(c->req, &len);
  json_error_t jerr;
  int rc = rg_json_check((const char *)body, len); /* before jansson allocates */
  if (rc) return rc;
  json_t *j = len ? json_loadb((const char *)body, len, 0, &jerr) : json_object();
  if (!j) return dd_err_set(DD_EINVAL, "invalid JSON body: %s", jerr.text);
  if (!json_is_object(j)) {
    json_decref(j);
    return dd_err_set(DD_EINVAL, "the body must be a JSON object");
  }
  for (; kv && kv[0]; kv += 2) json_object_set_new(j, kv[0], json_string(kv[1]));
  rc = pbjson_to_msg(out, desc, j);
  json_decref(j);
  return rc;
}

static int sr_admin(sr_call *c, dd_http_reply *rep, const char *method,
                    const ProtobufCMessageDescriptor *desc, const char *const *kv) {
  ProtobufCMessage *in = NULL, *out = NULL;
  const dd_method *m = sr_method(method);
  int rc = m ? dd_method_authorize(m, c->call.principal) /* before the body is parsed */
             : dd_err_set(DD_EINTERNAL, "method %s not served", method);
  if (!rc) rc = sr_admin_msg(c, desc, kv, &in);
  const char *force = dd_http_req_query(c->req, "force");
  if (!rc && force && strcasecmp(force, "true") == 0) rc = pbjson_set_path_field(in, "force", "true");
  if (!rc) rc = sr_invoke(c, method, in, &out);
  if (!rc) rc = sr_json(rep, pbjson_from_msg(out));
  if (in) protobuf_c_message_free_unpacked(in, NULL);
  if (out) protobuf_c_message_free_unpacked(out, NULL);
  return rc;
}

#define SR_D(x) (&deltad__sharing__v1__##x##__descriptor)

static int sr_route_admin(sr_call *c, dd_http_reply *rep, const char *m, const sr_route *r) {
  const char *const *s = r->seg;
  if (r->n == 0 && !strcmp(m, "POST"))
    return sr_admin(c, rep, SR_EXT "CreateShare", SR_D(create_share_request), NULL);
  if (r->n == 1 && !strcmp(m, "DELETE"))
    return sr_admin(c, rep, SR_EXT "DeleteShare", SR_D(delete_share_request),
                    (const char *[]){"name", s[0], NULL});
  if (r->n == 1 && !strcmp(m, "PATCH"))
    return sr_admin(c, rep, SR_EXT "UpdateShare", SR_D(update_share_request),
                    (const char *[]){"name", s[0], NULL});
  if (r->n == 2 && !strcmp(s[1], "schemas") && !strcmp(m, "POST"))
    return sr_admin(c, rep, SR_EXT "CreateSharingSchema", SR_D(create_sharing_schema_request),
                    (const char *[]){"share", s[0], NULL});
  if (r->n == 3 && !strcmp(s[1], "schemas") && !strcmp(m, "DELETE"))
    return sr_admin(c, rep, SR_EXT "DeleteSharingSchema", SR_D(delete_sharing_schema_request),
                    (const char *[]){"share", s[0], "name", s[2], NULL});
  if (r->n == 4 && !strcmp(m, "POST"))
    return sr_admin(c, rep, SR_EXT "AddTable", SR_D(add_table_request),
                    (const char *[]){"share", s[0], "schema", s[2], NULL});
  if (r->n == 5 && !strcmp(m, "PATCH"))
    return sr_admin(c, rep, SR_EXT "UpdateTable", SR_D(update_table_request),
                    (const char *[]){"share", s[0], "schema", s[2], "name", s[4], NULL});
  if (r->n == 5 && !strcmp(m, "DELETE"))
    return sr_admin(c, rep, SR_EXT "RemoveTable", SR_D(remove_table_request),
                    (const char *[]){"share", s[0], "schema", s[2], "name", s[4], NULL});
  return 1; /* not an admin route */
}

/* Shapes: [] | [s] | [s,schemas] | [s,all-tables] | [s,schemas,c] | [s,schemas,c,tables]
 * | [s,schemas,c,tables,t] | [s,schemas,c,tables,t,op]. */
static int sr_shape_ok(const sr_route *r) {
  if (r->n >= 2 && strcmp(r->seg[1], "schemas") != 0 && !(r->n == 2 && !strcmp(r->seg[1], "all-tables")))
    return 0;
  if (r->n >= 4 && strcmp(r->seg[3], "tables") != 0) return 0;
  return r->n <= 6;
}

static int sr_dispatch(sr_call *c, dd_http_reply *rep, const char *m, const sr_route *r) {
  int get = !strcmp(m, "GET"), head = !strcmp(m, "HEAD");
  if (!sr_shape_ok(r)) return dd_err_set(DD_ENOTFOUND, "no such resource");
  if (get && (r->n == 0 || r->n == 2 || r->n == 4)) return sr_list(c, rep, r);
  if (get && r->n == 1) return sr_get_share(c, rep, r);
  if (head && r->n == 5) return sr_version(c, rep, r);
  if (r->n == 6) {
    const char *op = r->seg[5];
    if ((get || head) && !strcmp(op, "version")) return sr_version(c, rep, r);
    if (get && !strcmp(op, "metadata")) return sr_metadata(c, rep, r);
    if (!strcmp(m, "POST") && !strcmp(op, "query")) return sr_query(c, rep, r);
    if (get && !strcmp(op, "changes")) return sr_changes(c, rep, r);
    return dd_err_set(DD_ENOTFOUND, "no such resource");
  }
  int rc = sr_route_admin(c, rep, m, r);
  if (rc == 1) return dd_err_set(DD_ENOTFOUND, "no such resource");
  return rc;
}

/* See native_int.h. */
int dd_http__sr_split(char *buf, sr_route *r) {
  r->n = 0;
  if (!*buf) return 0;
  if (*buf != '/') return dd_err_set(DD_ENOTFOUND, "no such resource");
  char *p = buf + 1;
  if (!*p) return 0; /* "/shares/" */
  while (p) {
    char *slash = strchr(p, '/');
    if (slash) *slash = '\0';
    if (r->n == SR_SEGS || !*p) return dd_err_set(DD_ENOTFOUND, "no such resource");
    if (dd_call_pct_decode(p, 0) != 0)
      return dd_err_set(DD_EINVAL, "path: a malformed percent-escape or an encoded NUL (%%00)");
    r->seg[r->n++] = p;
    p = slash ? slash + 1 : NULL;
  }
  return 0;
}

static int sr_serve(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  sr_ctx *x = ctx;
  const char *m = dd_http_req_method(req);
  dd_principal who;
  sr_call c = {.req = req};
  sr_route r;
  char path[4096];
  int arc = dd_http_req_auth(req, &who);
  if (arc == DD_ENOMEM) return sr_error(rep, m, arc, dd_err_msg()); /* admission (req_guard.h) */
  if (arc) return sr_error(rep, m, DD_EUNAUTH, "The bearer token is missing or incorrect.");
  c.call.principal = &who;
  c.call.app = x->app;
  c.call.send = sr_send;
  c.call.header = sr_header;
  c.call.transport = &c;
  int rc = snprintf(path, sizeof path, "%s", dd_http_req_path(req)) >= (int)sizeof path
               ? dd_err_set(DD_ENOTFOUND, "no such resource")
               : dd_http__sr_split(path, &r);
  if (!rc) rc = sr_dispatch(&c, rep, m, &r);
  if (rc) {
    /* reply headers set before the failure are dropped by starting a fresh error reply */
    sr_error(rep, m, rc, dd_err_msg());
  }
  return 0;
}

int dd_sharing_rest_register(dd_http_server *srv, dd_app *app, const char *base_path) {
  static sr_ctx ctx; /* one app per process (the server singleton) */
  char prefix[512];
  ctx.app = app;
  if ((size_t)snprintf(prefix, sizeof prefix, "%s/shares", base_path ? base_path : "") >=
      sizeof prefix)
    return dd_err_set(DD_EINVAL, "base path too long");
  int rc = dd_http_add_native(srv, prefix, sr_serve, &ctx);
  if (!rc) rc = dd_files_rest_register(srv, app, base_path);
  return rc;
}
