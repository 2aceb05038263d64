/* pq_arena.c: a chunked bump allocator (footer models, assembled rows) and a growable
 * byte buffer (writer output, encoders). */
#include "store/parquet/pq_internal.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void pq__hugepage_hint(void *p, size_t n) {
#ifdef MADV_HUGEPAGE
  const uintptr_t huge = (uintptr_t)2 << 20;
  if (!p || n < 2 * huge) return;
  uintptr_t s = ((uintptr_t)p + huge - 1) & ~(huge - 1);
  uintptr_t e = ((uintptr_t)p + n) & ~(huge - 1);
  if (e > s) (void)madvise((void *)s, e - s, MADV_HUGEPAGE);
#else
  (void)p;
  (void)n;
#endif
}

struct pq__ablock {
  pq__ablock *next;
  size_t cap, used;
  _Alignas(16) uint8_t data[];
};

#define PQ__ABLOCK_MIN (64u * 1024u)

static pq__ablock *ablock_new(size_t need, size_t min) {
  if (min < PQ__ABLOCK_MIN) min = PQ__ABLOCK_MIN;
  size_t cap = need > min ? need : min;
  pq__ablock *b = malloc(sizeof *b + cap);
  if (!b) return NULL;
  pq__hugepage_hint(b, sizeof *b + cap);
  b->next = NULL;
  b->cap = cap;
  b->used = 0;
  return b;
}

void *pq__arena_alloc(pq__arena *a, size_t n) {
  if (n > SIZE_MAX - 32) return NULL;
  size_t need = (n + 15) & ~(size_t)15;
  if (need == 0) need = 16;
  pq__ablock *b = a->head;
  for (pq__ablock *s = b ? b->next : NULL; b && b->cap - b->used < need && s; s = s->next)
    if (s->cap - s->used >= need) b = s;
  if (!b || b->cap - b->used < need) {
    pq__ablock *nb = ablock_new(need, a->min_block);
    if (!nb) return NULL;
    nb->next = b;
    a->head = nb;
    b = nb;
  }
  void *p = b->data + b->used;
  b->used += need;
  a->used += need;
  return p;
}

void *pq__arena_dup(pq__arena *a, const void *p, size_t n) {
  void *d = pq__arena_alloc(a, n);
  if (d && n) memcpy(d, p, n);
  return d;
}

char *pq__arena_strndup(pq__arena *a, const uint8_t *p, size_t n) {
  char *d = pq__arena_alloc(a, n + 1);
  if (!d) return NULL;
  if (n) memcpy(d, p, n);
  d[n] = '\0';
  return d;
}

void pq__arena_reset(pq__arena *a) {
  pq__ablock *b = a->head;
  if (!b) return;
  pq__ablock *keep = b;
  b = b->next;
  while (b) {
    pq__ablock *n = b->next;
    free(b);
    b = n;
  }
  keep->next = NULL;
  keep->used = 0;
  a->head = keep;
  a->used = 0;
}

void pq__arena_rewind(pq__arena *a) {
  for (pq__ablock *b = a->head; b; b = b->next) b->used = 0;
  a->used = 0;
}

void pq__arena_free(pq__arena *a) {
  pq__ablock *b = a->head;
  while (b) {
    pq__ablock *n = b->next;
    free(b);
    b = n;
  }
  a->head = NULL;
  a->used = 0;
}

/* ---- growable buffer ------------------------------------------------------------------ */

int pq__buf_reserve(pq__buf *b, size_t extra) {
  if (b->cap - b->len >= extra) return 0;
  if (extra > SIZE_MAX / 2 - b->len) return dd_err_set(DD_ENOMEM, "parquet: buffer too large");
  size_t cap = b->cap ? b->cap : 256;
  while (cap - b->len < extra) cap *= 2;
  uint8_t *d = realloc(b->data, cap);
  if (!d) return dd_err_set(DD_ENOMEM, "parquet: out of memory (%zu bytes)", cap);
  b->data = d;
  b->cap = cap;
  pq__hugepage_hint(d, cap);
  return 0;
}

int pq__buf_put(pq__buf *b, const void *p, size_t n) {
  int rc = pq__buf_reserve(b, n);
  if (rc) return rc;
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
  return 0;
}

int pq__buf_byte(pq__buf *b, uint8_t v) { return pq__buf_put(b, &v, 1); }

int pq__buf_uleb(pq__buf *b, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    tmp[n++] = c | (v ? 0x80 : 0);
  } while (v);
  return pq__buf_put(b, tmp, n);
}

int pq__buf_le32(pq__buf *b, uint32_t v) {
  uint8_t t[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  return pq__buf_put(b, t, 4);
}

void pq__buf_free(pq__buf *b) {
  free(b->data);
  b->data = NULL;
  b->len = b->cap = 0;
}
