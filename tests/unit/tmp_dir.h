/* tmp_dir.h: a test group's scratch directory, made by setup under /tmp from a prefix and
 * removed with everything in it by teardown (cmocka group fixtures). Header-only. */
#ifndef DD_TESTS_UNIT_TMP_DIR_H
#define DD_TESTS_UNIT_TMP_DIR_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dir (at least 64 bytes) becomes /tmp/<prefix>XXXXXX made unique; 0 or -1. */
static inline int tu_tmp_dir_make(char *dir, const char *prefix) {
  snprintf(dir, 64, "/tmp/%sXXXXXX", prefix);
  return mkdtemp(dir) ? 0 : -1;
}

static inline int tu_tmp_dir_remove(const char *dir) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  return system(cmd) == 0 ? 0 : -1;
}

#endif
