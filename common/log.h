/* log.h: a minimal thread-safe logger: one line per call on stderr, prefixed with the UTC
 * time and a level ("2026-12-01T16:20:00.123Z deltad ERROR ..."). Lines from different
 * threads never interleave. Not an observability layer: no levels to configure, no sinks.
 * Never log secrets (tokens, keys, credentials, signed URLs). */
#ifndef DD_COMMON_LOG_H
#define DD_COMMON_LOG_H

#include <stddef.h>

typedef enum { DD_LOG_INFO, DD_LOG_WARN, DD_LOG_ERROR } dd_log_level;

/* Writes one line (a trailing newline is added; newlines inside become spaces). */
void dd_log(dd_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

enum { DD_REQUEST_ID_LEN = 16 };
/* A fresh request id: 16 lower-case hex digits, unique within the process (start time and
 * a counter), for tying an answer to its log line. Not a secret. */
void dd_request_id(char out[DD_REQUEST_ID_LEN + 1]);

#endif
