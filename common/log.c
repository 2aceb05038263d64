/* log.c: the stderr logger (text or JSON lines) and request ids (see log.h). */
#include "common/log.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* ---- the asynchronous writer (dd_log_start_async) ----
 * Lines are appended to one queue under log__mu (a copy, no system call); the writer thread
 * writes the queue to fd 2 every 20 ms, or at once past 64 KiB or for a warning or error.
 * log__wmu orders the writer and dd_log_flush, so lines leave in the order they came. */

#define LOG__WAKE_BYTES (64u << 10)
#define LOG__MAX_BYTES (16u << 20) /* beyond this lines are dropped (and counted) */
static pthread_mutex_t log__mu = PTHREAD_MUTEX_INITIALIZER, log__wmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log__cv = PTHREAD_COND_INITIALIZER;
static dd_buf log__q;          /* guarded by log__mu */
static uint64_t log__dropped;  /* guarded by log__mu */
static atomic_int log__async;

static bool log__enqueue(const dd_buf *line, dd_log_level level) {
  if (!atomic_load_explicit(&log__async, memory_order_acquire)) return false;
  pthread_mutex_lock(&log__mu);
  if (log__q.len + line->len > LOG__MAX_BYTES) log__dropped++;
  else dd_buf_put(&log__q, line->p, line->len);
  bool wake = log__q.len >= LOG__WAKE_BYTES || level >= DD_LOG_WARN;
  if (wake) pthread_cond_signal(&log__cv);
  pthread_mutex_unlock(&log__mu);
  return true;
}

static void log__write_all(const char *p, size_t n) {
  while (n) {
    ssize_t w = write(2, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

void dd_log_flush(void) {
  pthread_mutex_lock(&log__wmu);
  pthread_mutex_lock(&log__mu);
  dd_buf q = log__q;
  uint64_t dropped = log__dropped;
  log__q = (dd_buf){0};
  log__dropped = 0;
  pthread_mutex_unlock(&log__mu);
  if (q.len) log__write_all(q.p, q.len);
  if (dropped) {
    char msg[96];
    int n = snprintf(msg, sizeof msg, "deltad: %llu log lines dropped (the log was not drained)\n",
                     (unsigned long long)dropped);
    log__write_all(msg, (size_t)n);
  }
  pthread_mutex_unlock(&log__wmu);
  dd_buf_free(&q);
}

static void *log__writer(void *arg) {
  (void)arg;
  for (;;) {
    pthread_mutex_lock(&log__mu);
    if (log__q.len < LOG__WAKE_BYTES) {
      struct timespec until;
      clock_gettime(CLOCK_REALTIME, &until);
      until.tv_nsec += 20 * 1000000L;
      if (until.tv_nsec >= 1000000000L) {
        until.tv_sec++;
        until.tv_nsec -= 1000000000L;
      }
      pthread_cond_timedwait(&log__cv, &log__mu, &until);
    }
    pthread_mutex_unlock(&log__mu);
    dd_log_flush();
  }
  return NULL;
}

int dd_log_start_async(void) {
  if (atomic_load(&log__async)) return 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t t;
  int rc = pthread_create(&t, &attr, log__writer, NULL);
  pthread_attr_destroy(&attr);
  if (rc) return -1; /* lines stay synchronous */
  atexit(dd_log_flush);
  atomic_store_explicit(&log__async, 1, memory_order_release);
  return 0;
}

/* ---- formatting ---- */

/* The UTC time with milliseconds. The date and time of day are formatted once per second
 * and thread (a request line per call must stay cheap). */
static void log__when(char out[40]) {
  static _Thread_local time_t last = -1;
  static _Thread_local char day[32];
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (ts.tv_sec != last) {
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    last = ts.tv_sec;
  }
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
  dd_buf_reserve(&b, 512); /* one allocation for a request line */
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
  if (!log__enqueue(&b, level)) {
    /* one write under the stream lock: whole lines, never interleaved */
    flockfile(stderr);
    fwrite(b.p, 1, b.len, stderr);
    fflush(stderr);
    funlockfile(stderr);
  }
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
