/* pq_sample.c: the sample file for the cross-check (see pq_sample.h). */
#include "tests/unit/parquet/pq_sample.h"
#include "common/err.h"

int pq_sample_write(const char *path, long rows, int codec, bool dictionary) {
  (void)path; (void)rows; (void)codec; (void)dictionary;
  return dd_err_set(DD_EUNSUPPORTED, "not yet");
}
