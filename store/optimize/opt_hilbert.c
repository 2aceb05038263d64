/* opt_hilbert.c: the Hilbert curve that liquid clustering orders rows by (Delta clusters by
 * a Hilbert curve over its clustering columns, where Z-order interleaves plain bits).
 *
 * Each row's k column ranks (32 bits each, as opt_zorder.c makes them) are turned into
 * the "transposed" form of their Hilbert index with J. Skilling's method ("Programming
 * the Hilbert curve", AIP Conf. Proc. 707, 2004): walking the bits from the most
 * significant down, the lower bits of every coordinate are inverted or exchanged with the
 * first coordinate's so that each sub-cube is entered in the curve's orientation; then
 * the coordinates are Gray-decoded. Interleaving the transposed words from the top bit
 * down, coordinate 0 first (opt_zorder_interleave) gives the index itself, so the Hilbert
 * key is compared exactly as a Z-key is. Consecutive keys are neighbouring cells, which
 * keeps a file's ranges of every clustering column narrow. */
#include "store/optimize/opt_int.h"

void opt_hilbert_transpose(uint32_t *x, size_t k) {
  if (k < 2) return; /* one column: the index is the rank */
  for (uint32_t q = 1u << 31; q > 1; q >>= 1) {
    uint32_t low = q - 1;
    for (size_t i = 0; i < k; i++) {
      if (x[i] & q) {
        x[0] ^= low; /* invert the low bits */
      } else {       /* exchange the low bits of x[0] and x[i] */
        uint32_t t = (x[0] ^ x[i]) & low;
        x[0] ^= t;
        x[i] ^= t;
      }
    }
  }
  for (size_t i = 1; i < k; i++) x[i] ^= x[i - 1];
  uint32_t t = 0;
  for (uint32_t q = 1u << 31; q > 1; q >>= 1)
    if (x[k - 1] & q) t ^= q - 1;
  for (size_t i = 0; i < k; i++) x[i] ^= t;
}

void opt__curve_keys(uint64_t *keys, uint32_t *const *ranks, size_t k, size_t n, bool hilbert) {
  if (hilbert && k >= 2 && k <= OPT_MAX_CURVE_COLUMNS) {
    uint32_t x[OPT_MAX_CURVE_COLUMNS];
    for (size_t i = 0; i < n; i++) {
      for (size_t c = 0; c < k; c++) x[c] = ranks[c][i];
      opt_hilbert_transpose(x, k);
      for (size_t c = 0; c < k; c++) ranks[c][i] = x[c];
    }
  }
  opt_zorder_interleave(keys, (const uint32_t *const *)ranks, k, n);
}
