/* files_rest.c: the file server behind local signed URLs (files_rest.h). The service
 * (dd_sharing_open_file) checks the signature, the expiry and the table, and opens the
 * file beneath the table root; this file does HTTP: methods, Range, status, headers. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "common/log.h"
#include "server/http/native/files_rest.h"
#include "server/http/native/native_int.h"
#include "server/service/sharing_files.h"

static int64_t files_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int files_error(dd_http_reply *rep, int status, const char *code, const char *msg) {
  char body[512];
  int n = snprintf(body, sizeof body, "{\"errorCode\":\"%s\",\"message\":\"%s\"}", code, msg);
  dd_http_reply_status(rep, status);
  dd_http_reply_header(rep, "Content-Type", "application/json; charset=utf-8");
  return dd_http_reply_body(rep, body, (size_t)n);
}

/* A 500 whose detail goes to the log under a request id; the body carries only the id. */
static int files_internal(dd_http_reply *rep, int rc, const char *detail) {
  char id[DD_REQUEST_ID_LEN + 1], msg[96];
  dd_request_id(id);
  dd_log(DD_LOG_ERROR, "request %s: file URL: %s: %s", id, dd_err_name(rc), detail);
  snprintf(msg, sizeof msg, "the server could not read the file (request id %s)", id);
  return files_error(rep, 500, "INTERNAL_ERROR", msg);
}

/* See native_int.h. */
int dd_http__files_range(const char *h, int64_t size, int64_t *lo, int64_t *hi) {
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

static int files_serve(void *ctx, const dd_http_request *req, dd_http_reply *rep) {
  dd_app *app = ctx;
  const char *m = dd_http_req_method(req);
  int head = strcmp(m, "HEAD") == 0;
  if (!head && strcmp(m, "GET") != 0)
    return files_error(rep, 405, "UNSUPPORTED_OPERATION", "method not allowed");
  int fd = -1;
  int rc = dd_sharing_open_file(app, dd_http_req_path(req), dd_http_req_query(req, "expires"),
                                dd_http_req_query(req, "sig"), files_now_ms(), &fd);
  if (rc == DD_EPERM) return files_error(rep, 403, "PERMISSION_DENIED", "forbidden");
  if (rc == DD_ENOTFOUND) return files_error(rep, 404, "RESOURCE_DOES_NOT_EXIST", "not found");
  if (rc == DD_EINVAL) return files_error(rep, 400, "MALFORMED_REQUEST", "malformed file URL");
  if (rc) return files_internal(rep, rc, dd_err_msg());
  struct stat st;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return files_internal(rep, DD_EIO, "fstat failed");
  }
  int64_t size = st.st_size, lo = 0, hi = size - 1;
  char cr[96];
  int r = dd_http__files_range(dd_http_req_header(req, "Range"), size, &lo, &hi);
  dd_http_reply_header(rep, "Accept-Ranges", "bytes");
  if (r < 0) {
    close(fd);
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
    close(fd);
    return 0;
  }
  return dd_http_reply_file(rep, fd, (uint64_t)lo, (uint64_t)(hi - lo + 1));
}

int dd_files_rest_register(dd_http_server *srv, dd_app *app, const char *base_path) {
  char prefix[512];
  if ((size_t)snprintf(prefix, sizeof prefix, "%s/files/", base_path ? base_path : "") >=
      sizeof prefix)
    return dd_err_set(DD_EINVAL, "base path too long");
  return dd_http_add_native(srv, prefix, files_serve, app);
}
