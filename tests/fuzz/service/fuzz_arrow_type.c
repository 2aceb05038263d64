/* fuzz_arrow_type.c: the Spark SQL type texts of a Delta Connect result (they come from a
 * table's schema, which is untrusted) and a JSON cell of that type through
 * connect_result_datatype and connect_result_arrow. Input: the type text, then after the
 * first NUL the cell's JSON (none: a null cell). Both must succeed or fail together; an
 * accepted type gives a one-field struct DataType. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/connect_arrow.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 1 << 16) return 0;
  char *text = malloc(size + 2);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = text[size + 1] = '\0';
  const char *cell_json = memchr(text, '\0', size) ? text + strlen(text) + 1 : NULL;
  dop_col col = {"c", text, true};
  dop_cell cell = {.kind = cell_json ? DOP_JSON : DOP_NULL, .str = (char *)cell_json};
  dop_result r = {.ncols = 1, .cols = &col, .nrows = 1, .cells = &cell};
  Spark__Connect__DataType *dt = NULL;
  int rc = connect_result_datatype(&dt, &r);
  if (!rc && (!dt || !dt->struct_ || dt->struct_->n_fields != 1)) abort();
  if (dt) protobuf_c_message_free_unpacked(&dt->base, NULL);
  arw_buf buf = {0};
  int rc2 = connect_result_arrow(&buf, &r);
  arw_buf_free(&buf);
  if ((rc == 0) != (rc2 == 0)) abort();
  dd_err_clear();
  free(text);
  return 0;
}
