/* buf.h: a growable, always NUL-terminated byte buffer for building text (JSON lines,
 * commit files, messages). Appends never fail loudly: on allocation failure the buffer
 * sets `oom` and ignores further appends, so a builder checks once at the end. The
 * caller owns `p` (free with dd_buf_free, or take it and reset the struct). */
#ifndef DD_COMMON_BUF_H
#define DD_COMMON_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

typedef struct dd_buf {
  char *p;    /* NULL until the first append; then NUL-terminated at p[len] */
  size_t len, cap;
  bool oom;   /* an allocation failed; contents are incomplete */
} dd_buf;

/* Makes room for n more bytes (plus the NUL); false (and oom) when it cannot. */
bool dd_buf_reserve(dd_buf *b, size_t n);
/* The appends are inline: a line of JSON is dozens of them, and a literal's strlen folds
 * away at the call. */
static inline void dd_buf_put(dd_buf *b, const void *p, size_t n) {
  if ((b->oom || b->len + n + 1 > b->cap) && !dd_buf_reserve(b, n)) return;
  if (n) memcpy(b->p + b->len, p, n);
  b->len += n;
  b->p[b->len] = '\0';
}
static inline void dd_buf_puts(dd_buf *b, const char *s) { dd_buf_put(b, s, strlen(s)); }
static inline void dd_buf_putc(dd_buf *b, char c) { dd_buf_put(b, &c, 1); }
void dd_buf_printf(dd_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s[0..n) as a JSON string: quoted, with '"', '\\' and the control characters
 * escaped ("\n", "\u0001"), every other byte as it is (the caller passes valid UTF-8). */
void dd_buf_put_jstr(dd_buf *b, const char *s, size_t n);
/* Frees the contents and resets the buffer to empty. */
void dd_buf_free(dd_buf *b);

#endif
