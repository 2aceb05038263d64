/* fuzz_arrow_read.c: libFuzzer target of the Arrow IPC stream reader (arrow_read.h): any
 * bytes are read or refused with a message; every batch read is consistent enough for the
 * writer to encode it (column lengths, offsets) and every column can be viewed. Seeds:
 * pyarrow-written streams of every supported kind and a few refused ones
 * (tests/unit/arrow/read_pyarrow.py writes them). */
#include <stdint.h>
#include <stdlib.h>

#include "common/err.h"
#include "store/arrow/arrow_read.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  arw_reader *r = NULL;
  if (arw_reader_open(&r, data, size)) {
    if (r || !*dd_err_msg()) abort();
    return 0;
  }
  const arw_schema *s = arw_reader_schema(r);
  arw_batch *b = NULL;
  arw_buf out = ARW_BUF_INIT;
  int rc;
  while (!(rc = arw_reader_next(r, &b)) && b) {
    for (int f = 0; f < arw_schema_nfields(s); f++) {
      arw_view v; /* a map's hidden entries id is refused: that is fine */
      if (!arw_batch_view(b, f, &v) && v.length && v.offsets && v.offsets[v.length] < v.offsets[0]) abort();
    }
    if (arw_write_stream(&out, b)) abort(); /* what the reader accepts, the writer encodes */
    out.len = 0;
    arw_batch_free(b);
  }
  if (rc && !*dd_err_msg()) abort();
  arw_buf_free(&out);
  arw_reader_free(r);
  return 0;
}
