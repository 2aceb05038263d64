/* arw_read_tool.c: reads an Arrow IPC stream (file named on the command line) with the
 * dd_arrow reader and writes it back, batch by batch, with the dd_arrow writer to stdout,
 * for read_pyarrow.py to compare with what pyarrow wrote. Exit 1 with the error on stderr
 * when the reader refuses the input. */
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include "store/arrow/arrow_read.h"

static int slurp(const char *path, uint8_t **out, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return -1;
  size_t cap = 1 << 16;
  *out = malloc(cap), *len = 0;
  size_t n;
  while (*out && (n = fread(*out + *len, 1, cap - *len, f)) > 0)
    if ((*len += n) == cap) *out = realloc(*out, cap *= 2);
  fclose(f);
  return *out ? 0 : -1;
}

int main(int argc, char **argv) {
  uint8_t *data = NULL;
  size_t len = 0;
  if (argc != 2 || slurp(argv[1], &data, &len)) return fprintf(stderr, "usage: arw_read_tool FILE\n"), 2;
  arw_reader *r = NULL;
  arw_buf out = ARW_BUF_INIT;
  arw_batch *b = NULL;
  int rc = arw_reader_open(&r, data, len), batches = 0;
  if (!rc) rc = arw_write_schema(&out, arw_reader_schema(r));
  while (!rc && !(rc = arw_reader_next(r, &b)) && b) {
    rc = arw_write_batch(&out, b);
    arw_batch_free(b);
    batches++;
  }
  if (!rc) rc = arw_write_eos(&out);
  if (!rc) fwrite(out.data, 1, out.len, stdout);
  else fprintf(stderr, "%s\n", dd_err_msg());
  arw_buf_free(&out);
  arw_reader_free(r);
  free(data);
  return rc ? 1 : 0;
}
