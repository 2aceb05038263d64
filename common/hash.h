/* hash.h: a 64-bit mixer for hash tables (header-only): every input bit reaches every output
 * bit (the xor-shift-multiply finaliser of MurmurHash3), so the low bits of the result can
 * index a power-of-two table even when the input's low bits are all alike. */
#ifndef DD_COMMON_HASH_H
#define DD_COMMON_HASH_H

#include <stdint.h>

static inline uint64_t dd_mix64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  return x ^ (x >> 33);
}

#endif
