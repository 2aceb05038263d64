/* buf.c: the growable text buffer of buf.h. */
#include "common/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool dd_buf_reserve(dd_buf *b, size_t n) {
  if (b->oom) return false;
  if (b->len + n + 1 <= b->cap) return true;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + n + 1) cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->oom = true;
    return false;
  }
  b->p = p;
  b->cap = cap;
  return true;
}

void dd_buf_put(dd_buf *b, const void *p, size_t n) {
  if (!dd_buf_reserve(b, n)) return;
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void dd_buf_puts(dd_buf *b, const char *s) { dd_buf_put(b, s, strlen(s)); }

void dd_buf_putc(dd_buf *b, char c) { dd_buf_put(b, &c, 1); }

void dd_buf_printf(dd_buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char tmp[256];
  int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof tmp) {
    dd_buf_put(b, tmp, (size_t)n);
    return;
  }
  if (!dd_buf_reserve(b, (size_t)n)) return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void dd_buf_free(dd_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}
