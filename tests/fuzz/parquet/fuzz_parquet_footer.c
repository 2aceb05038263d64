/* fuzz_parquet_footer.c: libFuzzer target for the Thrift compact footer decoder and the
 * schema builder. The input is a raw FileMetaData; it is framed as a Parquet file
 * ("PAR1" + input + length + "PAR1") and opened, then every accessor is exercised. The
 * first bytes are also parsed as a page header. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/parquet/pq_internal.h"

static void touch(const pq_field *f, int depth) {
  volatile int sink = f->max_def + f->max_rep + (int)f->shape + (int)strlen(f->name);
  (void)sink;
  for (uint32_t i = 0; i < f->num_children && depth < 200; i++) touch(&f->children[i], depth + 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pq__pagehdr h;
  size_t hl;
  (void)pq__pagehdr_parse(&h, data, size, &hl);
  if (size > (1u << 24)) return 0;
  uint8_t *buf = malloc(size + 12);
  if (!buf) return 0;
  memcpy(buf, "PAR1", 4);
  if (size) memcpy(buf + 4, data, size);
  uint32_t n = (uint32_t)size;
  uint8_t len[4] = {(uint8_t)n, (uint8_t)(n >> 8), (uint8_t)(n >> 16), (uint8_t)(n >> 24)};
  memcpy(buf + 4 + size, len, 4);
  memcpy(buf + 8 + size, "PAR1", 4);
  pq_file *f = NULL;
  if (pq_file_open_mem(&f, buf, size + 12) == 0) {
    touch(pq_file_schema(f), 0);
    for (size_t g = 0; g < pq_file_num_row_groups(f); g++)
      for (size_t c = 0; c < pq_file_num_columns(f); c++) {
        pq_chunk_info ci;
        (void)pq_chunk_get(&ci, f, g, c);
      }
    for (size_t i = 0; i < pq_file_kv_count(f); i++) {
      const char *k, *v;
      pq_file_kv(f, i, &k, &v);
    }
  }
  pq_file_free(f);
  free(buf);
  return 0;
}
