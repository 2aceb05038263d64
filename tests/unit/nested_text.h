/* nested_text.h: deeply nested test inputs for the depth-bound tests of the recursive
 * parsers (DDL types, predicate hints, result type texts): `open` levels times, then
 * `inner`, then `close` levels times. Header-only; the caller frees the text. */
#ifndef DD_TESTS_UNIT_NESTED_TEXT_H
#define DD_TESTS_UNIT_NESTED_TEXT_H

#include <stdlib.h>
#include <string.h>

static inline char *tu_nested(const char *open, const char *inner, const char *close, size_t levels) {
  size_t lo = strlen(open), li = strlen(inner), lc = strlen(close);
  char *s = malloc(levels * (lo + lc) + li + 1), *p = s;
  if (!s) abort();
  for (size_t i = 0; i < levels; i++) memcpy(p, open, lo), p += lo;
  memcpy(p, inner, li), p += li;
  for (size_t i = 0; i < levels; i++) memcpy(p, close, lc), p += lc;
  *p = '\0';
  return s;
}

#endif
