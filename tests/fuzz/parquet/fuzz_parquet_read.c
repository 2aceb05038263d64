/* fuzz_parquet_read.c: libFuzzer target for the whole reader: open a file from memory,
 * assemble every row of every column, read one projection, and decode each column
 * chunk through the flat API. Any outcome but a crash or sanitizer report is fine. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/parquet/pq.h"

static void read_rows(const pq_file *f, const pq_read_opts *o) {
  pq_cursor *c = NULL;
  if (pq_cursor_open(&c, f, o) != 0) return;
  const pq_value *row;
  int64_t n = 0;
  while (pq_cursor_next(c, &row) == 0 && row && n++ < 1000000) {
  }
  pq_cursor_free(c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pq_file *f = NULL;
  if (pq_file_open_mem(&f, data, size) != 0) return 0;
  read_rows(f, NULL);
  const pq_field *root = pq_file_schema(f);
  if (root->num_children > 0) {
    const char *cols[] = {root->children[root->num_children - 1].name};
    pq_read_opts o = PQ_READ_OPTS_INIT;
    o.columns = cols;
    o.num_columns = 1;
    read_rows(f, &o);
  }
  for (size_t g = 0; g < pq_file_num_row_groups(f) && g < 64; g++)
    for (size_t i = 0; i < pq_file_num_columns(f) && i < 256; i++) {
      pq_column *col = NULL;
      if (pq_column_read(&col, f, g, i) == 0) pq_column_free(col);
    }
  pq_file_free(f);
  return 0;
}
