/* log.c: the stderr logger (text or JSON lines) and request ids (see log.h). */
#include "common/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"

static const char *const log__upper[] = {"DEBUG", "INFO", "WARN", "ERROR"};
static const char *const log__lower[] = {"debug", "info", "warn", "error"};
static atomic_int log__level = DD_LOG_INFO;
static atomic_int log__format = DD_LOG_TEXT;

void dd_log_set_level(dd_log_level level) { atomic_store(&log__level, (int)level); }
void dd_log_set_format(dd_log_format format) { atomic_store(&log__format, (int)format); }
dd_log_level dd_log_get_level(void) { return (dd_log_level)atomic_load(&log__level); }
bool dd_log_enabled(dd_log_level level) {
  return (int)level >= atomic_load_explicit(&log__level, memory_order_relaxed);
}

int dd_log_level_parse(const char *word, dd_log_level *out) {
  for (int i = 0; i <= DD_LOG_ERROR; i++)
    if (!strcmp(word, log__lower[i])) {
      *out = (dd_log_level)i;
      return 0;
    }
  return -1;
}

const char *dd_log_level_name(dd_log_level level) {
  return (unsigned)level > DD_LOG_ERROR ? "error" : log__lower[level];
}

/* ---- formatting ---- */

static void log__when(char out[40]) {
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  char day[32];
  strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(out, 40, "%s.%03dZ", day, (int)(ts.tv_nsec / 1000000L) % 1000);
}

/* A JSON string: quotes, backslash and control characters escaped. */
static void log__json_str(dd_buf *b, const char *s) {
  dd_buf_putc(b, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      dd_buf_putc(b, '\\');
      dd_buf_putc(b, (char)*p);
    } else if (*p < 0x20) {
      dd_buf_printf(b, "\\u%04x", *p);
    } else {
      dd_buf_putc(b, (char)*p);
    }
  }
  dd_buf_putc(b, '"');
}

static void log__text_value(dd_buf *b, const char *s) {
  if (*s && !strpbrk(s, " \"=")) {
    dd_buf_puts(b, s);
    return;
  }
  log__json_str(b, s);
}

static void log__field(dd_buf *b, bool json, const dd_log_field *f) {
  if (json) {
    dd_buf_putc(b, ',');
    log__json_str(b, f->key);
    dd_buf_putc(b, ':');
  } else {
    dd_buf_printf(b, " %s=", f->key);
  }
  if (f->str) json ? log__json_str(b, f->str) : log__text_value(b, f->str);
  else if (f->is_num) dd_buf_printf(b, "%.3f", f->num);
  else dd_buf_printf(b, "%lld", (long long)f->i);
}

static void log__write(dd_log_level level, const char *msg, const dd_log_field *fields, size_t n) {
  if ((unsigned)level > DD_LOG_ERROR) level = DD_LOG_ERROR;
  char when[40];
  log__when(when);
  bool json = atomic_load_explicit(&log__format, memory_order_relaxed) == DD_LOG_JSON;
  dd_buf b = {0};
  if (json) {
    dd_buf_printf(&b, "{\"ts\":\"%s\",\"level\":\"%s\",\"msg\":", when, log__lower[level]);
    log__json_str(&b, msg);
  } else {
    dd_buf_printf(&b, "%s deltad %s %s", when, log__upper[level], msg);
  }
  for (size_t i = 0; i < n; i++) log__field(&b, json, &fields[i]);
  dd_buf_puts(&b, json ? "}\n" : "\n");
  if (b.oom) {
    dd_buf_free(&b);
    return;
  }
  for (size_t i = 0; i + 1 < b.len; i++) /* one line, whatever the message held */
    if (b.p[i] == '\n' || b.p[i] == '\r') b.p[i] = ' ';
  /* one write under the stream lock: whole lines, never interleaved */
  flockfile(stderr);
  fwrite(b.p, 1, b.len, stderr);
  fflush(stderr);
  funlockfile(stderr);
  dd_buf_free(&b);
}

void dd_log(dd_log_level level, const char *fmt, ...) {
  if (!dd_log_enabled(level)) return;
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  log__write(level, msg, NULL, 0);
}

void dd_log_fields(dd_log_level level, const char *msg, const dd_log_field *fields, size_t n) {
  if (dd_log_enabled(level)) log__write(level, msg, fields, n);
}

void dd_request_id(char out[DD_REQUEST_ID_LEN + 1]) {
  static atomic_uint_fast64_t counter;
  static _Atomic uint32_t epoch;
  uint32_t e = atomic_load(&epoch);
  if (!e) {
    uint32_t now = (uint32_t)time(NULL) | 1u;
    atomic_compare_exchange_strong(&epoch, &e, now);
    e = atomic_load(&epoch);
  }
  uint64_t n = atomic_fetch_add(&counter, 1) + 1;
  snprintf(out, DD_REQUEST_ID_LEN + 1, "%08x%08x", (unsigned)e, (unsigned)(n & 0xffffffffu));
}
