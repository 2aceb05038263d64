/* err.c: per-thread error messages for the DD_E* error model (see err.h). */
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define DD_ERR_MSG_MAX 1024

static _Thread_local char dd_err__msg[DD_ERR_MSG_MAX];

int dd_err_set(int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(dd_err__msg, sizeof dd_err__msg, fmt, ap);
  va_end(ap);
  return code;
}

int dd_err_wrap(int code, const char *fmt, ...) {
  char prefix[DD_ERR_MSG_MAX];
  char old[DD_ERR_MSG_MAX];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(old, dd_err__msg, sizeof old);
  size_t n = strnlen(prefix, sizeof prefix - 3);
  memcpy(dd_err__msg, prefix, n);
  memcpy(dd_err__msg + n, ": ", 2);
  size_t rest = sizeof dd_err__msg - n - 3;
  size_t m = strnlen(old, rest);
  memcpy(dd_err__msg + n + 2, old, m);
  dd_err__msg[n + 2 + m] = '\0';
  return code;
}

const char *dd_err_msg(void) { return dd_err__msg; }

void dd_err_clear(void) { dd_err__msg[0] = '\0'; }

const char *dd_err_name(int code) {
  switch (code) {
  case DD_OK: return "OK";
  case DD_EINVAL: return "INVALID_ARGUMENT";
  case DD_ENOTFOUND: return "NOT_FOUND";
  case DD_EEXISTS: return "ALREADY_EXISTS";
  case DD_ECONFLICT: return "ABORTED";
  case DD_EPRECOND: return "FAILED_PRECONDITION";
  case DD_EUNAUTH: return "UNAUTHENTICATED";
  case DD_EPERM: return "PERMISSION_DENIED";
  case DD_EUNSUPPORTED: return "UNIMPLEMENTED";
  case DD_EIO: return "UNAVAILABLE";
  case DD_ENOMEM: return "RESOURCE_EXHAUSTED";
  case DD_ECORRUPT: return "DATA_LOSS";
  case DD_ERANGE: return "OUT_OF_RANGE";
  case DD_ECANCELLED: return "CANCELLED";
  case DD_EDEADLINE: return "DEADLINE_EXCEEDED";
  default: return "INTERNAL";
  }
}
