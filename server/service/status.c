/* status.c: maps the DD_E* error codes to gRPC status codes and HTTP statuses, in one
 * place so both transports answer the same failure the same way. */
#include "common/err.h"
#include "server/call/call.h"

int dd_call_status_grpc(int code) {
  switch (code) {
  case DD_OK: return 0;            /* OK */
  case DD_ECANCELLED: return 1;    /* CANCELLED */
  case DD_EDEADLINE: return 4;     /* DEADLINE_EXCEEDED */
  case DD_EINVAL: return 3;        /* INVALID_ARGUMENT */
  case DD_ENOTFOUND: return 5;     /* NOT_FOUND */
  case DD_EEXISTS: return 6;       /* ALREADY_EXISTS */
  case DD_EPERM: return 7;         /* PERMISSION_DENIED */
  case DD_ENOMEM: return 8;        /* RESOURCE_EXHAUSTED */
  case DD_EPRECOND: return 9;      /* FAILED_PRECONDITION */
  case DD_ECONFLICT: return 10;    /* ABORTED */
  case DD_ERANGE: return 11;       /* OUT_OF_RANGE */
  case DD_EUNSUPPORTED: return 12; /* UNIMPLEMENTED */
  case DD_EIO: return 14;          /* UNAVAILABLE */
  case DD_ECORRUPT: return 15;     /* DATA_LOSS */
  case DD_EUNAUTH: return 16;      /* UNAUTHENTICATED */
  default: return 13;              /* INTERNAL */
  }
}

int dd_call_status_http(int code) {
  switch (code) {
  case DD_OK: return 200;
  case DD_EINVAL:
  case DD_EPRECOND:
  case DD_ERANGE: return 400;
  case DD_EUNAUTH: return 401;
  case DD_EPERM: return 403;
  case DD_ENOTFOUND: return 404;
  case DD_EEXISTS:
  case DD_ECONFLICT: return 409;
  case DD_ENOMEM: return 429;
  case DD_ECANCELLED: return 499;
  case DD_EDEADLINE: return 504;
  case DD_EUNSUPPORTED: return 501;
  case DD_EIO: return 503;
  default: return 500;
  }
}
