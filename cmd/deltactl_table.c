/* deltactl_table.c: `deltactl table ...` (placeholder until the Delta engine lands). */
#include "cmd/deltactl_table.h"

#include <stdio.h>

int dctl_table_main(int argc, char **argv) {
  (void)argc;
  (void)argv;
  fprintf(stderr, "deltactl table: not available in this build\n");
  return 2;
}
