/* buf.c: the growable byte buffer (see buf.h). */
#include "store/arrow/buf.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

static int buf_reserve(arw_buf *b, size_t n) {
  if (n <= b->cap - b->len) return 0;
  if (n > SIZE_MAX / 2 - b->len) return dd_err_set(DD_ENOMEM, "arrow buffer too large");
  size_t cap = b->cap ? b->cap : 64;
  while (cap - b->len < n) cap *= 2;
  uint8_t *p = realloc(b->data, cap);
  if (!p) return dd_err_set(DD_ENOMEM, "out of memory growing an arrow buffer");
  b->data = p;
  b->cap = cap;
  return 0;
}

int arw_buf_put(arw_buf *b, const void *p, size_t n) {
  if (n == 0) return 0;
  int rc = buf_reserve(b, n);
  if (rc) return rc;
  memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

int arw_buf_extend(arw_buf *b, size_t n, uint8_t **at) {
  int rc = buf_reserve(b, n ? n : 1);
  if (rc) return rc;
  *at = b->data + b->len;
  b->len += n;
  return 0;
}

int arw_buf_zeros(arw_buf *b, size_t n) {
  if (n == 0) return 0;
  int rc = buf_reserve(b, n);
  if (rc) return rc;
  memset(b->data + b->len, 0, n);
  b->len += n;
  return 0;
}

int arw_buf_pad(arw_buf *b, size_t align) {
  return arw_buf_zeros(b, (align - (b->len & (align - 1))) & (align - 1));
}

int arw_buf_put_u32(arw_buf *b, uint32_t v) {
  uint8_t le[4];
  for (int i = 0; i < 4; i++) le[i] = (uint8_t)(v >> (8 * i));
  return arw_buf_put(b, le, 4);
}

int arw_buf_put_u64(arw_buf *b, uint64_t v) {
  uint8_t le[8];
  for (int i = 0; i < 8; i++) le[i] = (uint8_t)(v >> (8 * i));
  return arw_buf_put(b, le, 8);
}

void arw_buf_free(arw_buf *b) {
  if (!b) return;
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}
