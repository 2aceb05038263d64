/* log.c: the one-line stderr logger and request ids (see log.h). */
#include "common/log.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static const char *const dd_log__names[] = {"INFO", "WARN", "ERROR"};

void dd_log(dd_log_level level, const char *fmt, ...) {
  char msg[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  for (char *p = msg; *p; p++)
    if (*p == '\n' || *p == '\r') *p = ' ';
  struct timespec ts;
  struct tm tm;
  clock_gettime(CLOCK_REALTIME, &ts);
  gmtime_r(&ts.tv_sec, &tm);
  char when[32];
  strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
  if ((unsigned)level > DD_LOG_ERROR) level = DD_LOG_ERROR;
  /* one fprintf under the stream lock: whole lines, never interleaved */
  flockfile(stderr);
  fprintf(stderr, "%s.%03ldZ deltad %s %s\n", when, ts.tv_nsec / 1000000L,
          dd_log__names[level], msg);
  fflush(stderr);
  funlockfile(stderr);
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
