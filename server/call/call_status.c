/* call_status.c: the one status table: a DD_E* code as a gRPC status code, as the HTTP
 * status of the generated REST routes, as a Delta Sharing errorCode and status, and as a
 * Lance Namespace error code and status (which also depends on the call's detail). */
#include "common/err.h"
#include "server/call/call.h"

/* Lance Namespace error codes (the numeric "code" of its error body). */
enum {
  CALL__LANCE_UNSUPPORTED = 0,
  CALL__LANCE_NAMESPACE_NOT_FOUND = 1,
  CALL__LANCE_NAMESPACE_ALREADY_EXISTS = 2,
  CALL__LANCE_NAMESPACE_NOT_EMPTY = 3,
  CALL__LANCE_TABLE_NOT_FOUND = 4,
  CALL__LANCE_TABLE_ALREADY_EXISTS = 5,
  CALL__LANCE_INVALID_INPUT = 13,
  CALL__LANCE_CONCURRENT_MODIFICATION = 14,
  CALL__LANCE_PERMISSION_DENIED = 15,
  CALL__LANCE_UNAUTHENTICATED = 16,
  CALL__LANCE_SERVICE_UNAVAILABLE = 17,
  CALL__LANCE_INTERNAL = 18,
  CALL__LANCE_INVALID_TABLE_STATE = 19,
};

/* One row per code; the Lance code of NOTFOUND, EEXISTS and EPRECOND depends on the
 * detail and is chosen in dd_call_status_lance. */
typedef struct call__status {
  int code;
  int grpc, http;
  const char *sharing;
  int sharing_http;
  int lance;
} call__status;

static const call__status call__table[] = {
    {DD_OK, 0, 200, "", 200, 0},
    {DD_EINVAL, 3, 400, "INVALID_PARAMETER_VALUE", 400, CALL__LANCE_INVALID_INPUT},
    {DD_ENOTFOUND, 5, 404, "RESOURCE_DOES_NOT_EXIST", 404, CALL__LANCE_NAMESPACE_NOT_FOUND},
    {DD_EEXISTS, 6, 409, "RESOURCE_ALREADY_EXISTS", 409, CALL__LANCE_NAMESPACE_ALREADY_EXISTS},
    {DD_ECONFLICT, 10, 409, "ABORTED", 409, CALL__LANCE_CONCURRENT_MODIFICATION},
    {DD_EPRECOND, 9, 400, "UNSUPPORTED_OPERATION", 400, CALL__LANCE_INVALID_TABLE_STATE},
    {DD_EUNAUTH, 16, 401, "UNAUTHENTICATED", 401, CALL__LANCE_UNAUTHENTICATED},
    {DD_EPERM, 7, 403, "PERMISSION_DENIED", 403, CALL__LANCE_PERMISSION_DENIED},
    {DD_EUNSUPPORTED, 12, 501, "UNSUPPORTED_OPERATION", 400, CALL__LANCE_UNSUPPORTED},
    {DD_EIO, 14, 503, "TEMPORARILY_UNAVAILABLE", 503, CALL__LANCE_SERVICE_UNAVAILABLE},
    {DD_ENOMEM, 8, 429, "RESOURCE_EXHAUSTED", 429, CALL__LANCE_SERVICE_UNAVAILABLE},
    {DD_ECORRUPT, 15, 500, "MALFORMED_REQUEST", 400, CALL__LANCE_INTERNAL},
    {DD_ERANGE, 11, 400, "INVALID_PARAMETER_VALUE", 400, CALL__LANCE_INVALID_INPUT},
    {DD_ECANCELLED, 1, 499, "INTERNAL_ERROR", 500, CALL__LANCE_SERVICE_UNAVAILABLE},
    /* Databricks' REST error code for a request that ran out of time (HTTP 504) */
    {DD_EDEADLINE, 4, 504, "DEADLINE_EXCEEDED", 504, CALL__LANCE_SERVICE_UNAVAILABLE},
};
/* Any other code (DD_EINTERNAL, ...). */
static const call__status call__other = {DD_EINTERNAL, 13, 500, "INTERNAL_ERROR", 500,
                                         CALL__LANCE_INTERNAL};

static const call__status *call__row(int code) {
  for (size_t i = 0; i < sizeof call__table / sizeof call__table[0]; i++)
    if (call__table[i].code == code) return &call__table[i];
  return &call__other;
}

int dd_call_status_grpc(int code) { return call__row(code)->grpc; }

int dd_call_status_http(int code) { return call__row(code)->http; }

const char *dd_call_status_sharing(int code, int *http_status) {
  const call__status *r = call__row(code);
  *http_status = r->sharing_http;
  return r->sharing;
}

/* The HTTP status of a Lance error code (the protocol ties one to each code). */
static int call__lance_http(int lance) {
  switch (lance) {
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

int dd_call_status_lance(int code, int detail, int *http_status) {
  int table = detail == DD_CALL_DETAIL_TABLE;
  int lance = call__row(code)->lance;
  if (code == DD_ENOTFOUND) lance = table ? CALL__LANCE_TABLE_NOT_FOUND : CALL__LANCE_NAMESPACE_NOT_FOUND;
  if (code == DD_EEXISTS)
    lance = table ? CALL__LANCE_TABLE_ALREADY_EXISTS : CALL__LANCE_NAMESPACE_ALREADY_EXISTS;
  if (code == DD_EPRECOND)
    lance = detail == DD_CALL_DETAIL_NAMESPACE ? CALL__LANCE_NAMESPACE_NOT_EMPTY : CALL__LANCE_INVALID_TABLE_STATE;
  /* a deadline is the one failure whose status is not the code's own */
  *http_status = code == DD_EDEADLINE ? 504 : call__lance_http(lance);
  return lance;
}
