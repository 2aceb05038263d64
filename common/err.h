/* err.h: the one error model of deltad.
 *
 * Every fallible function returns 0 on success or a negative DD_E* code. A few codes name
 * an expected outcome (not found, exists, conflict, ...); DD_EINTERNAL is the catch-all.
 * The human-readable message travels beside the code in a per-thread slot: the function
 * that detects a failure calls dd_err_set() (which returns the code, so `return
 * dd_err_set(...)` reads naturally), callers pass the code up unchanged, and the boundary
 * (gRPC status, HTTP body, CLI stderr) reads dd_err_msg(). Library codes (LMDB, OpenSSL,
 * errno) are translated where they enter. */
#ifndef DD_COMMON_ERR_H
#define DD_COMMON_ERR_H

enum {
  DD_OK = 0,
  DD_EINVAL = -1,       /* bad input from the caller: INVALID_ARGUMENT / 400 */
  DD_ENOTFOUND = -2,    /* NOT_FOUND / 404 */
  DD_EEXISTS = -3,      /* ALREADY_EXISTS / 409 */
  DD_ECONFLICT = -4,    /* lost an optimistic race: ABORTED / 409 */
  DD_EPRECOND = -5,     /* FAILED_PRECONDITION / 400 (state does not allow it) */
  DD_EUNAUTH = -6,      /* UNAUTHENTICATED / 401 */
  DD_EPERM = -7,        /* PERMISSION_DENIED / 403 */
  DD_EUNSUPPORTED = -8, /* UNIMPLEMENTED / 501, or a feature this engine does not support */
  DD_EIO = -9,          /* file system or storage failure: UNAVAILABLE / 503 */
  DD_ENOMEM = -10,      /* RESOURCE_EXHAUSTED */
  DD_ECORRUPT = -11,    /* data on disk is malformed: DATA_LOSS / 500 */
  DD_ERANGE = -12,      /* OUT_OF_RANGE / 400, e.g. a version beyond the latest */
  DD_ECANCELLED = -13,  /* the caller went away (or the server is stopping) */
  DD_EDEADLINE = -14,   /* the call's deadline passed: DEADLINE_EXCEEDED / 504 */
  DD_EINTERNAL = -99,   /* anything else; see the message */
};

/* Sets this thread's message (printf-style) and returns code. */
int dd_err_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Prefixes the current message with "prefix: " and returns code (for adding context). */
int dd_err_wrap(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* This thread's last message; never NULL. Valid until the next dd_err_* call on this thread. */
const char *dd_err_msg(void);
/* Clears the message. */
void dd_err_clear(void);
/* A short name for a code ("NOT_FOUND", ...). */
const char *dd_err_name(int code);

#endif
