/* hash.h: a 64-bit mixer for hash tables (header-only): every input bit reaches every output
 * bit (the xor-shift-multiply finaliser of MurmurHash3), so the low bits of the result can
 * index a power-of-two table even when the input's low bits are all alike. */
#ifndef DD_COMMON_HASH_H
#define DD_COMMON_HASH_H

#include <stddef.h>
#include <stdint.h>

static inline uint64_t dd_mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

/* FNV-1a over n bytes, finished with dd_mix64 (a table index from any of its bits). */
static inline uint64_t dd_hash_bytes(const void *p, size_t n) {
  const unsigned char *b = p;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return dd_mix64(h);
}

#endif
