/* pq_json.h: prints pq_values as canonical JSON for tests and the cross-check (the
 * same form tests/js/pq_dump.mjs produces from hyparquet). */
#ifndef DD_TESTS_UNIT_PARQUET_PQ_JSON_H
#define DD_TESTS_UNIT_PARQUET_PQ_JSON_H

#include "store/parquet/pq.h"

#include <stdio.h>

void pq_json_print(FILE *out, const pq_pnode *schema, const pq_value *v);
void pq_json_schema(FILE *out, const pq_field *f, int indent);

#endif
