/* buf.h: arw_buf, the growable byte buffer the Arrow writer appends IPC bytes to (and
 * that column builders keep their value, offset and bitmap bytes in). Transparent on
 * purpose: callers read data/len directly. */
#ifndef DD_ARROW_BUF_H
#define DD_ARROW_BUF_H

#include <stddef.h>
#include <stdint.h>

typedef struct arw_buf {
  uint8_t *data; /* NULL until the first append */
  size_t len;
  size_t cap;
} arw_buf;

#define ARW_BUF_INIT {NULL, 0, 0}

/* Appends n bytes (0 or DD_ENOMEM). */
int arw_buf_put(arw_buf *b, const void *p, size_t n);
/* Appends n zero bytes. */
int arw_buf_zeros(arw_buf *b, size_t n);
/* Adds n bytes the caller then writes (uninitialized) at *at (0 or DD_ENOMEM). */
int arw_buf_extend(arw_buf *b, size_t n, uint8_t **at);
/* Appends zero bytes until len is a multiple of align (a power of two). */
int arw_buf_pad(arw_buf *b, size_t align);
/* Appends a little-endian integer of 4 or 8 bytes. */
int arw_buf_put_u32(arw_buf *b, uint32_t v);
int arw_buf_put_u64(arw_buf *b, uint64_t v);
/* Releases the memory; b is ARW_BUF_INIT afterwards. Accepts NULL. */
void arw_buf_free(arw_buf *b);

#endif
