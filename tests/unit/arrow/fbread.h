/* fbread.h: a tiny FlatBuffers reader for the dd_arrow tests: follows offsets the way a
 * reader does (root uoffset, table soffset to vtable, vtable slots, strings, vectors),
 * so the tests check encodings by reading them rather than by comparing to dd_arrow's own
 * idea of the layout. Positions are byte offsets into buf. Test-only. */
#ifndef DD_TESTS_ARROW_FBREAD_H
#define DD_TESTS_ARROW_FBREAD_H

#include <stdint.h>
#include <string.h>

static inline uint64_t rd_le(const uint8_t *buf, size_t pos, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | buf[pos + (size_t)i];
  return v;
}
static inline uint32_t rd_u32(const uint8_t *b, size_t p) { return (uint32_t)rd_le(b, p, 4); }
static inline uint16_t rd_u16(const uint8_t *b, size_t p) { return (uint16_t)rd_le(b, p, 2); }
static inline int64_t rd_i64(const uint8_t *b, size_t p) { return (int64_t)rd_le(b, p, 8); }

/* Where the uoffset stored at pos points. */
static inline size_t fb_deref(const uint8_t *b, size_t pos) { return pos + rd_u32(b, pos); }
static inline size_t fb_root(const uint8_t *b) { return fb_deref(b, 0); }

/* Position of a table's vtable. */
static inline size_t fb_vtable(const uint8_t *b, size_t table) {
  return (size_t)((int64_t)table - (int32_t)rd_u32(b, table));
}

/* Position of field `slot` of the table at `table`, or 0 when absent. */
static inline size_t fb_field(const uint8_t *b, size_t table, int slot) {
  size_t vt = fb_vtable(b, table);
  uint16_t vt_len = rd_u16(b, vt);
  if (4 + 2 * (size_t)slot >= vt_len) return 0;
  uint16_t off = rd_u16(b, vt + 4 + 2 * (size_t)slot);
  return off ? table + off : 0;
}

/* The table or string/vector a reference field points to (0 when absent). */
static inline size_t fb_ref(const uint8_t *b, size_t table, int slot) {
  size_t f = fb_field(b, table, slot);
  return f ? fb_deref(b, f) : 0;
}

/* Vector helpers: count, and position of element i (inline structs of size elem). */
static inline uint32_t fb_vec_len(const uint8_t *b, size_t vec) { return rd_u32(b, vec); }
static inline size_t fb_vec_elem(size_t vec, size_t i, size_t elem) { return vec + 4 + i * elem; }
/* Element i of a vector of references. */
static inline size_t fb_vec_ref(const uint8_t *b, size_t vec, size_t i) {
  return fb_deref(b, fb_vec_elem(vec, i, 4));
}

/* Does the string at pos equal s (length, bytes and trailing NUL)? */
static inline int fb_str_eq(const uint8_t *b, size_t pos, const char *s) {
  size_t n = strlen(s);
  return rd_u32(b, pos) == n && memcmp(b + pos + 4, s, n) == 0 && b[pos + 4 + n] == 0;
}

#endif
