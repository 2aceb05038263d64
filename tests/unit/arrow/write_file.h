/* write_file.h: the stream writers' (arw_tool.c, arw_kinds.c) last step: an IPC stream
 * buffer to a file. */
#ifndef DD_TESTS_ARROW_WRITE_FILE_H
#define DD_TESTS_ARROW_WRITE_FILE_H

#include <stdio.h>

#include "common/err.h"
#include "store/arrow/buf.h"

static inline int arw_test_write_file(const char *path, const arw_buf *out) {
  FILE *fp = fopen(path, "wb");
  int rc = 0;
  if (!fp || fwrite(out->data, 1, out->len, fp) != out->len)
    rc = dd_err_set(DD_EIO, "cannot write %s", path);
  if (fp && fclose(fp) != 0 && !rc) rc = dd_err_set(DD_EIO, "cannot close %s", path);
  return rc;
}

#endif
