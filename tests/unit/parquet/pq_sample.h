/* pq_sample.h: writes a sample file exercising the writer (nested structs, lists, maps,
 * nulls, every scalar kind), used by pq_tool write-sample and the cross-check. */
#ifndef DD_TESTS_UNIT_PARQUET_PQ_SAMPLE_H
#define DD_TESTS_UNIT_PARQUET_PQ_SAMPLE_H

#include "store/parquet/pq.h"

int pq_sample_write(const char *path, long rows, int codec, bool dictionary);

#endif
