/* buf.c: the growable text buffer of buf.h. */
#include "common/buf.h"

#include <stdarg.h>
#include <stdint.h>
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

/* Length of the prefix of s[0..n) that JSON needs no escape for, 8 bytes at a time: a
 * word holds a byte below 0x20, a '"' or a '\\' when one of the classic zero-byte tests
 * (x - 0x01..) & ~x & 0x80.. fires on it, on it xor '"' or on it xor '\\'. A test may
 * also fire above a byte it truly found (the borrow runs on), never below one, so the
 * lowest bit that fires (on a little-endian load, the first byte in memory) is the first
 * byte that needs an escape. */
static size_t plain_run(const char *s, size_t n) {
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
    uint64_t hit = (((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    if (hit) return i + (size_t)(__builtin_ctzll(hit) >> 3);
#else
    if (hit) break;
#endif
  }
  for (; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c < 0x20 || c == '"' || c == '\\') break;
  }
  return i;
}

/* The JSON string of s[0..n) (buf.h): room for the worst case (6 bytes a byte, "\u00xx")
 * is made once, then plain runs are copied whole and escapes written in place. */
void dd_buf_put_jstr(dd_buf *b, const char *s, size_t n) {
  static const char hex[] = "0123456789abcdef";
  if (n > (SIZE_MAX - 2) / 6) b->oom = true;
  if (!dd_buf_reserve(b, 6 * n + 2)) return;
  char *o = b->p + b->len;
  *o++ = '"';
  size_t run = 0; /* s[run..i) is plain and not yet copied */
  for (size_t i = plain_run(s, n); i < n; i += plain_run(s + i, n - i)) {
    unsigned char c = (unsigned char)s[i];
    memcpy(o, s + run, i - run);
    o += i - run;
    run = ++i;
    *o++ = '\\';
    switch (c) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '\n': *o++ = 'n'; break;
    case '\r': *o++ = 'r'; break;
    case '\t': *o++ = 't'; break;
    case '\b': *o++ = 'b'; break;
    case '\f': *o++ = 'f'; break;
    default:
      memcpy(o, "u00", 3);
      o[3] = hex[c >> 4];
      o[4] = hex[c & 15];
      o += 5;
    }
  }
  if (n > run) memcpy(o, s + run, n - run);
  o += n - run;
  *o++ = '"';
  b->len = (size_t)(o - b->p);
  b->p[b->len] = '\0';
}
