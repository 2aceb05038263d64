/* sharing_rest.c: the Delta Sharing REST protocol as a native codec (sharing_rest.h).
 * decode: a request under <base>/shares becomes the request message of one
 * DeltaSharingService / ExtensionService method, built once from the path segments, the
 * query string and the JSON body; the method runs through the call core
 * (dd_native__run). encode: each reply is written as PROTOCOL.md says, byte for byte:
 * one-line JSON lists with items/nextPageToken, NDJSON (protocol line first) with the
 * Delta-Table-Version and delta-sharing-capabilities headers of the first line, an
 * endStreamAction line for a late failure when the client asked for one (else the reply
 * is cut), and errors as {"errorCode","message"} from the call core's status table. */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "server/call/call_route.h"
#include "server/call/req_guard.h"
#include "server/http/native/files_rest.h"
#include "server/http/native/native_int.h"
#include "server/http/native/sharing_rest.h"
#include "server/http/pbjson.h"

#define SR_JSON "application/json; charset=utf-8"
#define SR_NDJSON "application/x-ndjson; charset=utf-8"
#define SR_SVC "/deltad.sharing.v1.DeltaSharingService/"
#define SR_EXT "/deltad.sharing.v1.DeltaSharingExtensionService/"

typedef dd_native__sr_route sr_route; /* native_int.h */

/* How a reply is encoded. */
typedef enum { SR_SHARES, SR_SCHEMAS, SR_TABLES, SR_SHARE, SR_VERSION, SR_LINES, SR_ADMIN } sr_kind;

/* One request's codec state: the hooks' cls. The producer thread writes lines, version
 * and caps while it encodes; the head hook reads them once the call core says the first
 * bytes or the end are there (the core's lock orders the two). */
typedef struct sr_op {
  sr_kind kind;
  int head;      /* a HEAD request: errors carry no body */
  size_t lines;  /* NDJSON lines encoded */
  int64_t version;
  char caps[128]; /* the capabilities the first line answers with */
} sr_op;

/* ---- encoding errors ------------------------------------------------------------------ */

static int sr_error(dd_http_reply *rep, int head, int rc, const char *msg) {
  int status = 500;
  const char *code = dd_call_status_sharing(rc, &status);
  dd_http_reply_status(rep, status);
  if (head) return 0;
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

/* ---- encoding replies ----------------------------------------------------------------- */

/* The list replies are written directly (no jansson tree): {"items":[...]} and the page
 * token. Their strings are catalog names and ids (valid UTF-8, cat_name_check). */
static void sr_put_pairs(dd_buf *b, const char *const kv[], size_t n) {
  dd_buf_putc(b, '{');
  for (size_t i = 0; i < n; i++) {
    if (i) dd_buf_putc(b, ',');
    dd_buf_put_jstr(b, kv[2 * i], strlen(kv[2 * i]));
    dd_buf_putc(b, ':');
    dd_buf_put_jstr(b, kv[2 * i + 1], strlen(kv[2 * i + 1]));
  }
  dd_buf_putc(b, '}');
}

/* Fills kv with item i's pairs (at most 5) of list reply r; returns how many. */
typedef size_t (*sr_item_fn)(const void *r, size_t i, const char *kv[10]);

static size_t sr_share_kv(const void *r, size_t i, const char *kv[10]) {
  const Deltad__Sharing__V1__Share *s = ((const Deltad__Sharing__V1__ListSharesResponse *)r)->items[i];
  kv[0] = "name", kv[1] = s->name, kv[2] = "id", kv[3] = s->id;
  return 2;
}

static size_t sr_schema_kv(const void *r, size_t i, const char *kv[10]) {
  const Deltad__Sharing__V1__Schema *s = ((const Deltad__Sharing__V1__ListSchemasResponse *)r)->items[i];
  kv[0] = "name", kv[1] = s->name, kv[2] = "share", kv[3] = s->share;
  return 2;
}

static size_t sr_table_kv(const void *r, size_t i, const char *kv[10]) {
  const Deltad__Sharing__V1__Table *t = ((const Deltad__Sharing__V1__ListTablesResponse *)r)->items[i];
  kv[0] = "name", kv[1] = t->name, kv[2] = "schema", kv[3] = t->schema, kv[4] = "share";
  kv[5] = t->share, kv[6] = "shareId", kv[7] = t->share_id, kv[8] = "id", kv[9] = t->id;
  return 5;
}

static int sr_list_out(const void *r, size_t n, const char *next, sr_item_fn item, dd_call_buf *out) {
  dd_buf b = {0};
  dd_buf_puts(&b, "{\"items\":[");
  for (size_t i = 0; i < n; i++) {
    const char *kv[10];
    size_t np = item(r, i, kv);
    if (i) dd_buf_putc(&b, ',');
    sr_put_pairs(&b, kv, np);
  }
  dd_buf_putc(&b, ']');
  if (next && *next) {
    dd_buf_puts(&b, ",\"nextPageToken\":");
    dd_buf_put_jstr(&b, next, strlen(next));
  }
  dd_buf_putc(&b, '}');
  int rc = b.oom ? dd_err_set(DD_ENOMEM, "out of memory") : dd_call_buf_append(out, b.p, b.len);
  dd_buf_free(&b);
  return rc;
}

static json_t *sr_share_json(const Deltad__Sharing__V1__Share *s) {
  return json_pack("{s:s,s:s}", "name", s->name, "id", s->id);
}

/* One NDJSON line; the first tells the version and capabilities of the reply. */
static int sr_encode_line(sr_op *op, const Deltad__Sharing__V1__TableLine *l, dd_call_buf *out) {
  if (op->lines == 0) {
    op->version = l->version;
    snprintf(op->caps, sizeof op->caps, "%s", l->capabilities ? l->capabilities : "");
  }
  int rc = dd_call_buf_append(out, l->line, strlen(l->line));
  if (!rc) rc = dd_call_buf_append(out, "\n", 1);
  if (!rc) op->lines++;
  return rc;
}

static int sr_encode(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out) {
  sr_op *op = cls;
  (void)index;
  switch (op->kind) {
  case SR_SHARES: {
    const Deltad__Sharing__V1__ListSharesResponse *r = (const void *)msg;
    return sr_list_out(r, r->n_items, r->next_page_token, sr_share_kv, out);
  }
  case SR_SCHEMAS: {
    const Deltad__Sharing__V1__ListSchemasResponse *r = (const void *)msg;
    return sr_list_out(r, r->n_items, r->next_page_token, sr_schema_kv, out);
  }
  case SR_TABLES: {
    const Deltad__Sharing__V1__ListTablesResponse *r = (const void *)msg;
    return sr_list_out(r, r->n_items, r->next_page_token, sr_table_kv, out);
  }
  case SR_SHARE: {
    const Deltad__Sharing__V1__GetShareResponse *r = (const void *)msg;
    return dd_native__append_json(out, json_pack("{s:o}", "share", sr_share_json(r->share)));
  }
  case SR_VERSION:
    op->version = ((const Deltad__Sharing__V1__GetTableVersionResponse *)msg)->version;
    return 0; /* the answer is a header */
  case SR_LINES: return sr_encode_line(op, (const void *)msg, out);
  case SR_ADMIN: return dd_native__append_json(out, pbjson_from_msg(msg));
  }
  return dd_err_set(DD_EINTERNAL, "unknown sharing reply");
}

/* A failure after the first line (the 200 is out) reaches a client that asked for an
 * endStreamAction as the protocol says: a last line {"endStreamAction":{"errorMessage":..}},
 * after which the reply ends normally. Other clients see the reply cut (no last chunk). */
static int sr_encode_error(void *cls, int code, const char *msg, dd_call_buf *out) {
  sr_op *op = cls;
  (void)code;
  if (op->kind != SR_LINES || op->lines == 0 || !strstr(op->caps, "includeendstreamaction=true"))
    return -1;
  json_t *j = json_pack("{s:{s:s}}", "endStreamAction", "errorMessage", msg);
  if (!j) j = json_pack("{s:{s:s}}", "endStreamAction", "errorMessage", "the query failed");
  int rc = dd_native__append_json(out, j);
  if (!rc) rc = dd_call_buf_append(out, "\n", 1);
  return rc;
}

static int sr_head(void *cls, int rc, const char *msg, const dd_call_result *res,
                   dd_http_reply *rep) {
  sr_op *op = cls;
  char v[32];
  (void)res;
  if (rc) return sr_error(rep, op->head, rc, msg);
  switch (op->kind) {
  case SR_VERSION:
    snprintf(v, sizeof v, "%lld", (long long)op->version);
    return dd_http_reply_header(rep, "Delta-Table-Version", v);
  case SR_LINES:
    if (!op->lines) return 0; /* an empty reply names no version */
    snprintf(v, sizeof v, "%lld", (long long)op->version);
    rc = dd_http_reply_header(rep, "Delta-Table-Version", v);
    return rc ? rc : dd_http_reply_header(rep, "delta-sharing-capabilities", op->caps);
  default: return dd_http_reply_header(rep, "Content-Type", SR_JSON); /* a one-line JSON body */
  }
}

/* ---- running a method ------------------------------------------------------------------ */

typedef struct sr_req {
  const dd_http_request *req;
  const dd_principal *who;
  int head;
} sr_req;

/* Runs the method at path on msg (taken) and answers with the encoding of kind. */
static int sr_run(const sr_req *q, const char *path, ProtobufCMessage *msg, sr_kind kind) {
  const dd_method *m = dd_native__method(q->req, path);
  int rc = m ? dd_method_authorize(m, q->who)
             : dd_err_set(DD_EINTERNAL, "method %s not served", path);
  sr_op *op = rc ? NULL : calloc(1, sizeof *op);
  if (!rc && !op) rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (rc) {
    protobuf_c_message_free_unpacked(msg, NULL);
    return rc;
  }
  op->kind = kind;
  op->head = q->head;
  dd_http__codec c = {.cls = op, .encode = sr_encode, .encode_error = sr_encode_error,
                      .head = sr_head, .free_cls = free,
                      .content_type = kind == SR_LINES ? SR_NDJSON : NULL,
                      /* the JSON replies' bytes are the message's alone (sr_head) */
                      .memo_tag = kind == SR_SHARES || kind == SR_SCHEMAS || kind == SR_TABLES ||
                                          kind == SR_SHARE || kind == SR_ADMIN ? "sharing-json" : NULL};
  return dd_native__run(q->req, m, msg, q->who, &c);
}

/* ---- decoding ------------------------------------------------------------------------- */

static ProtobufCMessage *sr_new(const ProtobufCMessageDescriptor *d) {
  ProtobufCMessage *m = malloc(d->sizeof_message);
  if (m) d->message_init(m);
  return m;
}

/* Sets the string field name of m to a copy of s (NULL: left as it is, and name need
 * not be a field of m). */
static int sr_set(ProtobufCMessage *m, const char *name, const char *s) {
  if (!s) return 0;
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(m->descriptor, name);
  if (!f || f->type != PROTOBUF_C_TYPE_STRING) return dd_err_set(DD_EINTERNAL, "no field %s", name);
  char *c = strdup(s), **slot = (char **)((char *)m + f->offset);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  if (*slot && *slot != f->default_value && *slot != protobuf_c_empty_string) free(*slot);
  *slot = c;
  return 0;
}

/* A new message of d with the string fields kv[0] = kv[1], ... (NULL-terminated). */
static int sr_msg(ProtobufCMessage **out, const ProtobufCMessageDescriptor *d, const char *const *kv) {
  ProtobufCMessage *m = sr_new(d);
  int rc = m ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  for (; !rc && kv && kv[0]; kv += 2) rc = sr_set(m, kv[0], kv[1]);
  if (rc && m) protobuf_c_message_free_unpacked(m, NULL);
  *out = rc ? NULL : m;
  return rc;
}

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

/* See native_int.h. */
int dd_native__sr_max_results(const char *s, int32_t *max) {
  int64_t v = 0;
  int rc = sr_int("maxResults", s, INT64_MIN, INT64_MAX, &v);
  if (rc) return rc;
  /* out of int32: clamped, so the service's range check names the accepted values */
  *max = (int32_t)(v > INT32_MAX ? INT32_MAX : v < INT32_MIN ? INT32_MIN : v);
  return 0;
}

/* The four list requests share their layout after the path fields: a oneof
 * _max_results and page_token. They are set through the descriptor. */
static int sr_page(ProtobufCMessage *m, const dd_http_request *req) {
  const char *mr = dd_http_req_query(req, "maxResults");
  int rc = sr_set(m, "page_token", dd_http_req_query(req, "pageToken"));
  if (rc || !mr) return rc;
  int32_t max = 0;
  if ((rc = dd_native__sr_max_results(mr, &max))) return rc;
  const ProtobufCFieldDescriptor *f =
      protobuf_c_message_descriptor_get_field_by_name(m->descriptor, "max_results");
  if (!f || !(f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF))
    return dd_err_set(DD_EINTERNAL, "no oneof max_results");
  memcpy((char *)m + f->offset, &max, sizeof max);
  uint32_t id = f->id; /* a oneof's case is the number of its set member */
  memcpy((char *)m + f->quantifier_offset, &id, sizeof id);
  return 0;
}

#define SR_D(x) (&deltad__sharing__v1__##x##__descriptor)

static int sr_list(const sr_req *q, const sr_route *r) {
  static const struct {
    const char *method;
    const ProtobufCMessageDescriptor *d;
    sr_kind kind;
  } lists[] = {{SR_SVC "ListShares", SR_D(list_shares_request), SR_SHARES},
               {SR_SVC "ListSchemas", SR_D(list_schemas_request), SR_SCHEMAS},
               {SR_SVC "ListAllTables", SR_D(list_all_tables_request), SR_TABLES},
               {SR_SVC "ListTables", SR_D(list_tables_request), SR_TABLES}};
  int i = r->n == 0 ? 0 : r->n == 2 && !strcmp(r->seg[1], "schemas") ? 1 : r->n == 2 ? 2 : 3;
  ProtobufCMessage *m = NULL;
  int rc = sr_msg(&m, lists[i].d,
                  (const char *[]){"share", r->n ? r->seg[0] : NULL, "schema",
                                   i == 3 ? r->seg[2] : NULL, NULL});
  if (!rc) rc = sr_page(m, q->req);
  if (rc) {
    if (m) protobuf_c_message_free_unpacked(m, NULL);
    return rc;
  }
  return sr_run(q, lists[i].method, m, lists[i].kind);
}

static int sr_table_msg(ProtobufCMessage **out, const ProtobufCMessageDescriptor *d, const sr_route *r) {
  return sr_msg(out, d, (const char *[]){"share", r->seg[0], "schema", r->seg[2], "table", r->seg[4], NULL});
}

static int sr_get_share(const sr_req *q, const sr_route *r) {
  ProtobufCMessage *m = NULL;
  int rc = sr_msg(&m, SR_D(get_share_request), (const char *[]){"share", r->seg[0], NULL});
  return rc ? rc : sr_run(q, SR_SVC "GetShare", m, SR_SHARE);
}

static int sr_version(const sr_req *q, const sr_route *r) {
  ProtobufCMessage *m = NULL;
  int rc = sr_table_msg(&m, SR_D(get_table_version_request), r);
  if (!rc) rc = sr_set(m, "starting_timestamp", dd_http_req_query(q->req, "startingTimestamp"));
  if (rc) {
    if (m) protobuf_c_message_free_unpacked(m, NULL);
    return rc;
  }
  return sr_run(q, SR_SVC "GetTableVersion", m, SR_VERSION);
}

static int sr_metadata(const sr_req *q, const sr_route *r) {
  ProtobufCMessage *m = NULL;
  int rc = sr_table_msg(&m, SR_D(get_table_metadata_request), r);
  return rc ? rc : sr_run(q, SR_SVC "GetTableMetadata", m, SR_LINES);
}

/* The body decoded once into the request (sharing_query.c); the handler checks the rest. */
static int sr_query(const sr_req *q, const sr_route *r) {
  Deltad__Sharing__V1__QueryTableRequest *m = NULL;
  size_t len = 0;
  const uint8_t *body = dd_http_req_body(q->req, &len);
  int rc = rg_json_check((const char *)body, len); /* before jansson allocates */
  if (!rc) rc = dd_native__query_decode(&m, (const char *)body, len);
  if (rc) return rc;
  const char *kv[] = {"share", r->seg[0], "schema", r->seg[2], "table", r->seg[4], NULL};
  for (size_t i = 0; !rc && kv[i]; i += 2) rc = sr_set(&m->base, kv[i], kv[i + 1]);
  if (rc) {
    protobuf_c_message_free_unpacked(&m->base, NULL);
    return rc;
  }
  return sr_run(q, SR_SVC "QueryTable", &m->base, SR_LINES);
}

static int sr_bool(const char *s, protobuf_c_boolean *out) {
  if (!s) return 0;
  if (strcasecmp(s, "true") == 0) *out = 1;
  else if (strcasecmp(s, "false") == 0) *out = 0;
  else return dd_err_set(DD_EINVAL, "expected true or false, got '%s'", s);
  return 0;
}

static int sr_changes_query(Deltad__Sharing__V1__GetTableChangesRequest *c, const dd_http_request *h) {
  const char *sv = dd_http_req_query(h, "startingVersion"), *ev = dd_http_req_query(h, "endingVersion");
  const char *mf = dd_http_req_query(h, "maxFiles");
  int64_t v = 0;
  int rc = 0;
  if (sv && !(rc = sr_int("startingVersion", sv, 0, INT64_MAX, &v))) {
    c->_starting_version_case = DELTAD__SHARING__V1__GET_TABLE_CHANGES_REQUEST___STARTING_VERSION_STARTING_VERSION;
    c->starting_version = v;
  }
  if (!rc && ev && !(rc = sr_int("endingVersion", ev, 0, INT64_MAX, &v))) {
    c->_ending_version_case = DELTAD__SHARING__V1__GET_TABLE_CHANGES_REQUEST___ENDING_VERSION_ENDING_VERSION;
    c->ending_version = v;
  }
  if (!rc && mf && !(rc = sr_int("maxFiles", mf, 0, INT64_MAX, &v))) {
    c->_max_files_case = DELTAD__SHARING__V1__GET_TABLE_CHANGES_REQUEST___MAX_FILES_MAX_FILES;
    c->max_files = v;
  }
  if (!rc) rc = sr_bool(dd_http_req_query(h, "includeHistoricalMetadata"), &c->include_historical_metadata);
  if (!rc) rc = sr_set(&c->base, "starting_timestamp", dd_http_req_query(h, "startingTimestamp"));
  if (!rc) rc = sr_set(&c->base, "ending_timestamp", dd_http_req_query(h, "endingTimestamp"));
  if (!rc) rc = sr_set(&c->base, "page_token", dd_http_req_query(h, "pageToken"));
  return rc;
}

static int sr_changes(const sr_req *q, const sr_route *r) {
  ProtobufCMessage *m = NULL;
  int rc = sr_table_msg(&m, SR_D(get_table_changes_request), r);
  if (!rc) rc = sr_changes_query((void *)m, q->req);
  if (rc) {
    if (m) protobuf_c_message_free_unpacked(m, NULL);
    return rc;
  }
  return sr_run(q, SR_SVC "GetTableChanges", m, SR_LINES);
}

/* ---- admin routes (ExtensionService) ---------------------------------------------------- */

/* Parses the JSON body (empty: {}) into desc after setting path fields. */
static int sr_admin_msg(const dd_http_request *req, const ProtobufCMessageDescriptor *desc,
                        const char *const *kv, ProtobufCMessage **out) {
  size_t len = 0;
  const uint8_t *body = dd_http_req_body(req, &len);
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

static int sr_admin(const sr_req *q, const char *method, const ProtobufCMessageDescriptor *desc,
                    const char *const *kv) {
  ProtobufCMessage *in = NULL;
  const dd_method *m = dd_native__method(q->req, method);
  int rc = m ? dd_method_authorize(m, q->who) /* before the body is parsed */
             : dd_err_set(DD_EINTERNAL, "method %s not served", method);
  if (!rc) rc = sr_admin_msg(q->req, desc, kv, &in);
  const char *force = dd_http_req_query(q->req, "force");
  if (!rc && force && strcasecmp(force, "true") == 0) rc = pbjson_set_path_field(in, "force", "true");
  if (rc) {
    if (in) protobuf_c_message_free_unpacked(in, NULL);
    return rc;
  }
  return sr_run(q, method, in, SR_ADMIN);
}

static int sr_route_admin(const sr_req *q, const char *m, const sr_route *r) {
  const char *const *s = r->seg;
  if (r->n == 0 && !strcmp(m, "POST"))
    return sr_admin(q, SR_EXT "CreateShare", SR_D(create_share_request), NULL);
  if (r->n == 1 && !strcmp(m, "DELETE"))
    return sr_admin(q, SR_EXT "DeleteShare", SR_D(delete_share_request),
                    (const char *[]){"name", s[0], NULL});
  if (r->n == 1 && !strcmp(m, "PATCH"))
    return sr_admin(q, SR_EXT "UpdateShare", SR_D(update_share_request),
                    (const char *[]){"name", s[0], NULL});
  if (r->n == 2 && !strcmp(s[1], "schemas") && !strcmp(m, "POST"))
    return sr_admin(q, SR_EXT "CreateSharingSchema", SR_D(create_sharing_schema_request),
                    (const char *[]){"share", s[0], NULL});
  if (r->n == 3 && !strcmp(s[1], "schemas") && !strcmp(m, "DELETE"))
    return sr_admin(q, SR_EXT "DeleteSharingSchema", SR_D(delete_sharing_schema_request),
                    (const char *[]){"share", s[0], "name", s[2], NULL});
  if (r->n == 4 && !strcmp(m, "POST"))
    return sr_admin(q, SR_EXT "AddTable", SR_D(add_table_request),
                    (const char *[]){"share", s[0], "schema", s[2], NULL});
  if (r->n == 5 && !strcmp(m, "PATCH"))
    return sr_admin(q, SR_EXT "UpdateTable", SR_D(update_table_request),
                    (const char *[]){"share", s[0], "schema", s[2], "name", s[4], NULL});
  if (r->n == 5 && !strcmp(m, "DELETE"))
    return sr_admin(q, SR_EXT "RemoveTable", SR_D(remove_table_request),
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

static int sr_dispatch(const sr_req *q, const char *m, const sr_route *r) {
  int get = !strcmp(m, "GET");
  if (!sr_shape_ok(r)) return dd_err_set(DD_ENOTFOUND, "no such resource");
  if (get && (r->n == 0 || r->n == 2 || r->n == 4)) return sr_list(q, r);
  if (get && r->n == 1) return sr_get_share(q, r);
  if (q->head && r->n == 5) return sr_version(q, r);
  if (r->n == 6) {
    const char *op = r->seg[5];
    if ((get || q->head) && !strcmp(op, "version")) return sr_version(q, r);
    if (get && !strcmp(op, "metadata")) return sr_metadata(q, r);
    if (!strcmp(m, "POST") && !strcmp(op, "query")) return sr_query(q, r);
    if (get && !strcmp(op, "changes")) return sr_changes(q, r);
    return dd_err_set(DD_ENOTFOUND, "no such resource");
  }
  int rc = sr_route_admin(q, m, r);
  if (rc == 1) return dd_err_set(DD_ENOTFOUND, "no such resource");
  return rc;
}

/* See native_int.h. */
int dd_native__sr_split(char *buf, sr_route *r) {
  r->n = 0;
  if (!*buf) return 0;
  if (*buf != '/') return dd_err_set(DD_ENOTFOUND, "no such resource");
  char *p = buf + 1;
  if (!*p) return 0; /* "/shares/" */
  while (p) {
    char *slash = strchr(p, '/');
    if (slash) *slash = '\0';
    if (r->n == DD_NATIVE__SR_SEGS || !*p) return dd_err_set(DD_ENOTFOUND, "no such resource");
    if (dd_call_pct_decode(p, 0) != 0)
      return dd_err_set(DD_EINVAL, "path: a malformed percent-escape or an encoded NUL (%%00)");
    r->seg[r->n++] = p;
    p = slash ? slash + 1 : NULL;
  }
  return 0;
}

static int sr_serve(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  const char *m = dd_http_req_method(req);
  dd_principal who;
  sr_req q = {.req = req, .who = &who, .head = !strcmp(m, "HEAD")};
  sr_route r;
  char path[4096];
  (void)ctx;
  int arc = dd_http_req_auth(req, &who);
  if (arc == DD_ENOMEM) return sr_error(rep, q.head, arc, dd_err_msg()); /* admission */
  if (arc) return sr_error(rep, q.head, DD_EUNAUTH, "The bearer token is missing or incorrect.");
  int rc = snprintf(path, sizeof path, "%s", dd_http_req_path(req)) >= (int)sizeof path
               ? dd_err_set(DD_ENOTFOUND, "no such resource")
               : dd_native__sr_split(path, &r);
  if (!rc) rc = sr_dispatch(&q, m, &r);
  if (rc) sr_error(rep, q.head, rc, dd_err_msg());
  return 0;
}

int dd_native_sharing_register(dd_http_server *srv, const char *base_path) {
  char prefix[512];
  if ((size_t)snprintf(prefix, sizeof prefix, "%s/shares", base_path ? base_path : "") >=
      sizeof prefix)
    return dd_err_set(DD_EINVAL, "base path too long");
  int rc = dd_http_add_native(srv, prefix, sr_serve, NULL);
  if (!rc) rc = dd_native_files_register(srv, base_path);
  return rc;
}
