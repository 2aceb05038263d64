/* log.h: the process's logger: one line per call on stderr, in one of two formats:
 *   text: "2026-12-01T16:20:00.123Z deltad ERROR message key=value ..."
 *   json: {"ts":"2026-12-01T16:20:00.123Z","level":"error","msg":"message","key":value,...}
 * Lines from different threads never interleave (dd_log_start_async: written by a thread
 * of their own, in order). The level and format are process-wide
 * (atomics: set at start and on SIGHUP while other threads log). Lines below the level are
 * dropped before they are formatted. Never log secrets (tokens, keys, credentials, signed
 * URLs). */
#ifndef DD_COMMON_LOG_H
#define DD_COMMON_LOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum { DD_LOG_DEBUG, DD_LOG_INFO, DD_LOG_WARN, DD_LOG_ERROR } dd_log_level;
typedef enum { DD_LOG_TEXT, DD_LOG_JSON } dd_log_format;

void dd_log_set_level(dd_log_level level);
void dd_log_set_format(dd_log_format format);
dd_log_level dd_log_get_level(void);
bool dd_log_enabled(dd_log_level level);
/* "debug", "info", "warn" or "error" -> *out; -1 for another word. */
int dd_log_level_parse(const char *word, dd_log_level *out);
const char *dd_log_level_name(dd_log_level level); /* lower case */

/* From here on lines are queued and written to fd 2 by a thread of the logger's own (every
 * 20 ms, at once for a warning or an error), so a request line costs a copy, not a system
 * call under a lock. dd_log_flush writes what is queued (also run at exit). 0, or -1 when
 * the thread cannot start (lines stay synchronous). Before it, and in programs that never
 * call it, every line is written by the caller. */
int dd_log_start_async(void);
void dd_log_flush(void);

/* Writes one line (newlines inside become spaces). */
void dd_log(dd_log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* One structured field: a string (str not NULL) or an integer, or a number (is_num). */
typedef struct dd_log_field {
  const char *key;
  const char *str;
  int64_t i;
  double num;
  bool is_num;
} dd_log_field;
#define DD_LOG_STR(k, v) ((dd_log_field){.key = (k), .str = (v) ? (v) : ""})
#define DD_LOG_INT(k, v) ((dd_log_field){.key = (k), .i = (int64_t)(v)})
#define DD_LOG_NUM(k, v) ((dd_log_field){.key = (k), .num = (v), .is_num = true})
/* A message with fields: JSON members, or key=value pairs (strings quoted when they hold a
 * space or a quote) after the message in text. */
void dd_log_fields(dd_log_level level, const char *msg, const dd_log_field *fields, size_t n);

enum { DD_REQUEST_ID_LEN = 16 };
/* A fresh request id: 16 lower-case hex digits, unique within the process (start time and
 * a counter), for tying an answer to its log line. Not a secret. */
void dd_request_id(char out[DD_REQUEST_ID_LEN + 1]);

#endif
