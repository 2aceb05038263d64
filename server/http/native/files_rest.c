/* files_rest.c: the file server behind local signed URLs (files_rest.h), a codec of
 * DeltaSharingFileService/OpenFile: the handler checks the signature, the expiry and the
 * table and answers with the open file (the call's file reply); this file does HTTP:
 * methods, Range, status, headers, and the protocol's error bodies. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"
#include "server/http/native/files_rest.h"
#include "server/http/native/native_int.h"

#define FILES_OPEN "/deltad.sharing.v1.DeltaSharingFileService/OpenFile"

static int files_error(dd_http_reply *rep, int status, const char *code, const char *msg) {
  char body[512];
  int n = snprintf(body, sizeof body, "{\"errorCode\":\"%s\",\"message\":\"%s\"}", code, msg);
  dd_http_reply_status(rep, status);
  dd_http_reply_header(rep, "Content-Type", "application/json; charset=utf-8");
  return dd_http_reply_body(rep, body, (size_t)n);
}

/* A failed OpenFile. The expected failures get the sharing status table's code with a
 * fixed message (nothing about the table or the path leaks); anything else is a 500
 * whose detail goes to the log under a request id, the body carrying only the id. */
static int files_failed(dd_http_reply *rep, int rc, const char *detail) {
  static const struct {
    int rc;
    const char *msg;
  } known[] = {{DD_EPERM, "forbidden"}, {DD_ENOTFOUND, "not found"}, {DD_ECORRUPT, "malformed file URL"}};
  for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
    if (known[i].rc != rc) continue;
    int status = 500;
    const char *code = dd_call_status_sharing(rc, &status);
    return files_error(rep, status, code, known[i].msg);
  }
  char id[DD_REQUEST_ID_LEN + 1], msg[96];
  dd_request_id(id);
  dd_log(DD_LOG_ERROR, "request %s: file URL: %s: %s", id, dd_err_name(rc), detail);
  snprintf(msg, sizeof msg, "the server could not read the file (request id %s)", id);
  return files_error(rep, 500, "INTERNAL_ERROR", msg);
}

/* See native_int.h. */
int dd_native__files_range(const char *h, int64_t size, int64_t *lo, int64_t *hi) {
  if (!h || strncmp(h, "bytes=", 6) != 0 || strchr(h, ',')) return 0;
  const char *p = h + 6;
  char *end;
  if (*p == '-') {
    long long n = strtoll(p + 1, &end, 10);
    if (end == p + 1 || *end || n <= 0) return n == 0 && end != p + 1 && !*end ? -1 : 0;
    if (size == 0) return -1;
    *lo = n >= size ? 0 : size - n;
    *hi = size - 1;
    return 1;
  }
  long long a = strtoll(p, &end, 10);
  if (end == p || *end != '-' || a < 0) return 0;
  p = end + 1;
  long long b = size - 1;
  if (*p) {
    b = strtoll(p, &end, 10);
    if (end == p || *end || b < a) return 0;
  }
  if (a >= size) return -1;
  *lo = a;
  *hi = b >= size ? size - 1 : b;
  return 1;
}

/* The codec's state: the Range header, copied (the head hook runs after the request view
 * is gone). */
typedef struct files_op {
  char *range;
} files_op;

static void files_op_free(void *cls) {
  files_op *op = cls;
  if (!op) return;
  free(op->range);
  free(op);
}

static int files_encode(void *cls, const ProtobufCMessage *msg, size_t index, dd_call_buf *out) {
  (void)cls, (void)msg, (void)index, (void)out;
  return 0; /* the reply is the file */
}

/* The file is in the reply already (native_int.h): the Range header picks what of it goes. */
static int files_head(void *cls, int rc, const char *msg, const dd_call_result *res,
                      dd_http_reply *rep) {
  files_op *op = cls;
  if (rc) return files_failed(rep, rc, msg);
  int64_t size = (int64_t)res->file_len, lo = 0, hi = size - 1;
  char cr[96];
  int r = dd_native__files_range(op->range, size, &lo, &hi);
  dd_http_reply_header(rep, "Accept-Ranges", "bytes");
  if (r < 0) {
    dd_native__reply_drop_file(rep);
    snprintf(cr, sizeof cr, "bytes */%" PRId64, size);
    dd_http_reply_header(rep, "Content-Range", cr);
    return files_error(rep, 416, "INVALID_PARAMETER_VALUE", "range not satisfiable");
  }
  dd_http_reply_header(rep, "Content-Type", "application/octet-stream");
  if (r > 0) {
    dd_http_reply_status(rep, 206);
    snprintf(cr, sizeof cr, "bytes %" PRId64 "-%" PRId64 "/%" PRId64, lo, hi, size);
    dd_http_reply_header(rep, "Content-Range", cr);
  }
  if (size == 0) {
    dd_native__reply_drop_file(rep);
    return 0;
  }
  return dd_native__reply_file_range(rep, res->file_off + (uint64_t)lo, (uint64_t)(hi - lo + 1));
}

static int files_serve(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  (void)ctx;
  const char *m = dd_http_req_method(req), *range = dd_http_req_header(req, "Range");
  if (strcmp(m, "HEAD") != 0 && strcmp(m, "GET") != 0)
    return files_error(rep, 405, "UNSUPPORTED_OPERATION", "method not allowed");
  const dd_method *open = dd_native__method(req, FILES_OPEN);
  Deltad__Sharing__V1__OpenFileRequest *in = malloc(sizeof *in);
  files_op *op = calloc(1, sizeof *op);
  const char *kv[] = {dd_http_req_path(req), dd_http_req_query(req, "expires"),
                      dd_http_req_query(req, "sig")};
  char *s[3] = {NULL, NULL, NULL};
  int ok = open && in && op && (!range || (op->range = strdup(range)));
  for (int i = 0; ok && i < 3; i++) ok = (s[i] = strdup(kv[i] ? kv[i] : "")) != NULL;
  if (!ok) {
    for (int i = 0; i < 3; i++) free(s[i]);
    free(in);
    files_op_free(op);
    return files_failed(rep, open ? DD_ENOMEM : DD_EINTERNAL, "cannot start the call");
  }
  deltad__sharing__v1__open_file_request__init(in);
  in->path = s[0];
  in->expires = s[1];
  in->sig = s[2];
  /* no token: the handler checks the URL's signature, which is the authorization */
  dd_principal nobody = {.kind = DD_PRINCIPAL_NONE};
  dd_http__codec c = {.cls = op, .encode = files_encode, .head = files_head,
                      .free_cls = files_op_free};
  return dd_native__run(req, open, &in->base, &nobody, &c);
}

int dd_native_files_register(dd_http_server *srv, const char *base_path) {
  char prefix[512];
  if ((size_t)snprintf(prefix, sizeof prefix, "%s/files/", base_path ? base_path : "") >=
      sizeof prefix)
    return dd_err_set(DD_EINVAL, "base path too long");
  return dd_http_add_native(srv, prefix, files_serve, NULL);
}
