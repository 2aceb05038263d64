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

/* Whether the 8 bytes of w hold a byte below 0x20, a '"' or a '\\': the classic zero-byte
 * test (x - 0x01..) & ~x & 0x80.. on w (against 0x20..), on w xor '"' and on w xor '\\'.
 * A test may fire above a byte it truly found (the borrow runs on) but never on a word
 * with no such byte, which is all this answers. */
static inline bool needs_escape8(uint64_t w) {
  const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
  uint64_t q = w ^ (ones * '"'), b = w ^ (ones * '\\');
  return ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((b - ones) & ~b)) & high) != 0;
}

/* Per byte: 0 plain, 1 a backslash before it ('"', '\\'), 2 a control character. */
static const unsigned char esc_class[256] = {
    2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2,
    ['"'] = 1, ['\\'] = 1,
};

/* The escape of control character c at o; returns the bytes written. */
static size_t put_control(char *o, unsigned char c) {
  static const char hex[] = "0123456789abcdef";
  const char *short_form = c == '\n' ? "n" : c == '\r' ? "r" : c == '\t' ? "t" : c == '\b' ? "b" : c == '\f' ? "f" : NULL;
  o[0] = '\\';
  if (short_form) {
    o[1] = *short_form;
    return 2;
  }
  memcpy(o + 1, "u00", 3);
  o[4] = hex[c >> 4];
  o[5] = hex[c & 15];
  return 6;
}

/* One byte of a word that needs escapes, without a branch on '"' or '\\' (stats JSON has
 * one every few bytes): the backslash is written always and kept only when the class says
 * so; a control character (rare) takes the branch. */
static inline char *put_escaped(char *o, unsigned char c) {
  unsigned k = esc_class[c];
  if (__builtin_expect(k == 2, 0)) return o + put_control(o, c);
  o[0] = '\\';
  o[k] = (char)c;
  return o + 1 + k;
}

/* The JSON string of s[0..n) (buf.h): room for the worst case (6 bytes a byte, "\u00xx")
 * is made once; then 8 bytes at a time, a word with nothing to escape (paths) is copied
 * whole and one with something (stats, JSON in JSON) byte by byte. */
void dd_buf_put_jstr(dd_buf *b, const char *s, size_t n) {
  if (n > (SIZE_MAX - 2) / 6) b->oom = true;
  if (!dd_buf_reserve(b, 6 * n + 2)) return;
  char *o = b->p + b->len;
  *o++ = '"';
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, s + i, 8);
    if (!needs_escape8(w)) {
      memcpy(o, &w, 8);
      o += 8;
      continue;
    }
    for (int j = 0; j < 8; j++) o = put_escaped(o, (unsigned char)s[i + (size_t)j]);
  }
  for (; i < n; i++) o = put_escaped(o, (unsigned char)s[i]);
  *o++ = '"';
  b->len = (size_t)(o - b->p);
  b->p[b->len] = '\0';
}
