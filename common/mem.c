/* mem.c: process-wide allocator settings (mem.h). */
#include "common/mem.h"

#include <malloc.h>

void dd_mem_tune(void) {
#ifdef M_MMAP_THRESHOLD
  (void)mallopt(M_MMAP_THRESHOLD, 64 << 20);
  (void)mallopt(M_TRIM_THRESHOLD, 256 << 20);
#endif
}
