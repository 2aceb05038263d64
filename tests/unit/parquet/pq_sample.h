/* pq_sample.h: a sample schema and deterministic rows exercising the writer (nested
 * structs, lists, maps, nulls, empty collections, every scalar kind); used by pq_tool
 * write-sample (the hyparquet cross-check) and the round-trip unit tests. */
#ifndef DD_TESTS_UNIT_PARQUET_PQ_SAMPLE_H
#define DD_TESTS_UNIT_PARQUET_PQ_SAMPLE_H

#include "store/parquet/pq.h"

/* Storage for one sample row; the row points into it. */
typedef struct pq_sample_row {
  pq_value v[128];
  size_t nv;
  char text[1024];
  size_t ntext;
  pq_value row;
} pq_sample_row;

const pq_wfield *pq_sample_schema(void);
/* Builds row i into s; returns &s->row. */
const pq_value *pq_sample_make(pq_sample_row *s, long i);
/* Structural equality (is_string ignored). */
bool pq_value_equal(const pq_value *a, const pq_value *b);
int pq_sample_write(const char *path, long rows, int codec, bool dictionary);

#endif
