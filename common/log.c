/* log.c: the stderr logger (text or JSON lines) and request ids (see log.h). */
#include "common/log.h"

#include <errno.h>
#include <math.h>
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
#define LOG__SPARE_MAX (4u << 20)  /* a flushed buffer up to this size is kept for reuse */
static pthread_mutex_t log__mu = PTHREAD_MUTEX_INITIALIZER, log__wmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t log__cv = PTHREAD_COND_INITIALIZER;
static dd_buf log__q;          /* guarded by log__mu */
static uint64_t log__dropped;  /* guarded by log__mu */
static atomic_int log__async;

static bool log__enqueue(const char *line, size_t len, dd_log_level level) {
  if (!atomic_load_explicit(&log__async, memory_order_acquire)) return false;
  pthread_mutex_lock(&log__mu);
  if (log__q.len + len > LOG__MAX_BYTES) log__dropped++;
  else dd_buf_put(&log__q, line, len);
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

/* The queue's second buffer (guarded by log__wmu): flushing swaps it in, emptied but with
 * its capacity kept, so the callers' appends seldom grow the queue (a realloc, and a copy
 * of it, while they hold log__mu). */
static dd_buf log__spare;

void dd_log_flush(void) {
  pthread_mutex_lock(&log__wmu);
  pthread_mutex_lock(&log__mu);
  dd_buf q = log__q;
  uint64_t dropped = log__dropped;
  log__q = log__spare;
  log__dropped = 0;
  pthread_mutex_unlock(&log__mu);
  if (q.len) log__write_all(q.p, q.len);
  if (dropped) {
    char msg[96];
    int n = snprintf(msg, sizeof msg, "deltad: %llu log lines dropped (the log was not drained)\n",
                     (unsigned long long)dropped);
    log__write_all(msg, (size_t)n);
  }
  if (q.cap > LOG__SPARE_MAX) dd_buf_free(&q); /* a burst's buffer is not kept */
  q.len = 0;
  q.oom = false;
  log__spare = q;
  pthread_mutex_unlock(&log__wmu);
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

/* ---- formatting ----
 * A request line is built in a buffer on the caller's stack (heap only past 1 KiB), from
 * spans copied whole and numbers converted by hand: no printf and no allocation on the
 * common path, since every call writes one. */

typedef struct log__line {
  char *p;
  size_t len, cap;
  bool heap, oom;
  char mem[1024];
} log__line;

static void log__line_init(log__line *l) {
  l->p = l->mem;
  l->len = 0;
  l->cap = sizeof l->mem;
  l->heap = l->oom = false;
}

/* Room for n more bytes past the stack buffer: the slow path of log__room. */
__attribute__((noinline)) static bool log__grow(log__line *l, size_t n) {
  if (l->oom) return false;
  size_t cap = l->cap * 2;
  while (cap < l->len + n) cap *= 2;
  char *p = l->heap ? realloc(l->p, cap) : malloc(cap);
  if (!p) {
    l->oom = true;
    return false;
  }
  if (!l->heap) memcpy(p, l->mem, l->len);
  l->p = p;
  l->cap = cap;
  l->heap = true;
  return true;
}

static inline bool log__room(log__line *l, size_t n) {
  return l->len + n <= l->cap || log__grow(l, n);
}

static inline void log__put(log__line *l, const char *s, size_t n) {
  if (!log__room(l, n)) return;
  memcpy(l->p + l->len, s, n);
  l->len += n;
}

static inline void log__puts(log__line *l, const char *s) { log__put(l, s, strlen(s)); }

static inline void log__putc(log__line *l, char c) {
  if (!log__room(l, 1)) return;
  l->p[l->len++] = c;
}

/* Decimal digits of v (with a '-' when negative). */
static void log__int(log__line *l, int64_t v) {
  char d[24];
  size_t i = sizeof d;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    d[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) d[--i] = '-';
  log__put(l, d + i, sizeof d - i);
}

/* v with three decimals, as "%.3f" writes it (by hand for the magnitudes a duration has). */
static void log__num(log__line *l, double v) {
  if (!(v > -1e15 && v < 1e15)) { /* NaN, infinities, huge: printf's own way */
    char d[64];
    int n = snprintf(d, sizeof d, "%.3f", v);
    if (n > 0) log__put(l, d, (size_t)n < sizeof d ? (size_t)n : sizeof d - 1);
    return;
  }
  bool neg = signbit(v); /* printf writes "-0.000" for small negatives and -0 too */
  double a = neg ? -v : v;
  uint64_t milli = (uint64_t)(a * 1000.0 + 0.5);
  if (neg) log__putc(l, '-');
  log__int(l, (int64_t)(milli / 1000));
  char frac[4] = {'.', (char)('0' + milli / 100 % 10), (char)('0' + milli / 10 % 10),
                  (char)('0' + milli % 10)};
  log__put(l, frac, 4);
}

/* The UTC time with milliseconds. The date and time of day are formatted once per second
 * and thread (a request line per call must stay cheap). */
static void log__when(log__line *l) {
  static _Thread_local time_t last = -1;
  static _Thread_local char day[32];
  static _Thread_local size_t day_len;
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  if (ts.tv_sec != last) {
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    day_len = strftime(day, sizeof day, "%Y-%m-%dT%H:%M:%S", &tm);
    last = ts.tv_sec;
  }
  log__put(l, day, day_len);
  int ms = (int)(ts.tv_nsec / 1000000L) % 1000;
  char t[5] = {'.', (char)('0' + ms / 100), (char)('0' + ms / 10 % 10), (char)('0' + ms % 10), 'Z'};
  log__put(l, t, 5);
}

/* A JSON string: quotes, backslash and control characters escaped; runs of other bytes
 * copied whole. */
static void log__json_str(log__line *l, const char *s) {
  static const char hex[] = "0123456789abcdef";
  log__putc(l, '"');
  const unsigned char *p = (const unsigned char *)s, *run = p;
  for (;; p++) {
    unsigned char c = *p;
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    log__put(l, (const char *)run, (size_t)(p - run));
    if (!c) break;
    if (c == '"' || c == '\\') {
      char e[2] = {'\\', (char)c};
      log__put(l, e, 2);
    } else {
      char e[6] = {'\\', 'u', '0', '0', hex[c >> 4], hex[c & 15]};
      log__put(l, e, 6);
    }
    run = p + 1;
  }
  log__putc(l, '"');
}

/* A text value bare when it has no byte that would make the line ambiguous (space, quote,
 * '=', a control character), else quoted and escaped as a JSON string. */
static void log__text_value(log__line *l, const char *s) {
  const unsigned char *p = (const unsigned char *)s;
  while (*p > 0x20 && *p != '"' && *p != '=') p++;
  if (*s && !*p) {
    log__put(l, s, (size_t)(p - (const unsigned char *)s));
    return;
  }
  log__json_str(l, s);
}

static void log__field(log__line *l, bool json, const dd_log_field *f) {
  if (json) {
    log__putc(l, ',');
    log__json_str(l, f->key);
    log__putc(l, ':');
  } else {
    log__putc(l, ' ');
    log__puts(l, f->key);
    log__putc(l, '=');
  }
  if (f->str) json ? log__json_str(l, f->str) : log__text_value(l, f->str);
  else if (f->is_num) log__num(l, f->num);
  else log__int(l, f->i);
}

static void log__write(dd_log_level level, const char *msg, const dd_log_field *fields, size_t n) {
  if ((unsigned)level > DD_LOG_ERROR) level = DD_LOG_ERROR;
  bool json = atomic_load_explicit(&log__format, memory_order_relaxed) == DD_LOG_JSON;
  log__line l;
  log__line_init(&l);
  if (json) {
    log__puts(&l, "{\"ts\":\"");
    log__when(&l);
    log__puts(&l, "\",\"level\":\"");
    log__puts(&l, log__lower[level]);
    log__puts(&l, "\",\"msg\":");
    log__json_str(&l, msg);
  } else {
    log__when(&l);
    log__puts(&l, " deltad ");
    log__puts(&l, log__upper[level]);
    log__putc(&l, ' ');
    log__puts(&l, msg);
  }
  for (size_t i = 0; i < n; i++) log__field(&l, json, &fields[i]);
  log__puts(&l, json ? "}\n" : "\n");
  if (!l.oom) {
    if (!json) /* one line, whatever the message held (JSON strings escape line breaks) */
      for (int k = 0; k < 2; k++)
        for (char *q = l.p; (q = memchr(q, "\n\r"[k], l.len - 1 - (size_t)(q - l.p))) != NULL;) *q = ' ';
    if (!log__enqueue(l.p, l.len, level)) {
      /* one write under the stream lock: whole lines, never interleaved */
      flockfile(stderr);
      fwrite(l.p, 1, l.len, stderr);
      fflush(stderr);
      funlockfile(stderr);
    }
  }
  if (l.heap) free(l.p);
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
  static const char hex[] = "0123456789abcdef";
  uint64_t v = (uint64_t)e << 32 | (n & 0xffffffffu);
  for (int i = DD_REQUEST_ID_LEN - 1; i >= 0; i--, v >>= 4) out[i] = hex[v & 15];
  out[DD_REQUEST_ID_LEN] = '\0';
}
