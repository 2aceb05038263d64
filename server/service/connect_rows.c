/* connect_rows.c: query rows as DeltaConnectService ExecuteResult messages (connect_rows.h).
 * Each row's cells point into the current batch (numbers, binary) or into one text buffer
 * per row (strings need a NUL, decimals and nested values are rendered by store/query's
 * qry_text), so a row costs no allocation beyond that buffer's growth. The call's deadline is
 * checked before every batch of every operator (qry_set_check), so a filter that keeps no
 * row still stops in time; a client that went away stops the next send. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "deltad/connect/v1/connect.pb-c.h"
#include "server/call/call.h"
#include "server/service/connect_rows.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

typedef Deltad__Connect__V1__Value pb_value;

/* The schema message: names and nullability borrowed from s, types in types[] (owned). */
static int send_schema(dd_call *call, const arw_schema *s, char **types) {
  size_t n = arw_schema_ncolumns(s);
  Deltad__Connect__V1__ResultSchema__Column *cols = calloc(n + 1, sizeof *cols);
  Deltad__Connect__V1__ResultSchema__Column **colp = calloc(n + 1, sizeof *colp);
  int rc = cols && colp ? 0 : OOM();
  for (size_t i = 0; !rc && i < n; i++) {
    int id = arw_schema_column(s, i);
    deltad__connect__v1__result_schema__column__init(&cols[i]);
    cols[i].name = (char *)arw_field_name(s, id);
    rc = qry_type_string(&types[i], s, id);
    cols[i].type = types[i];
    cols[i].nullable = arw_field_nullable(s, id);
    colp[i] = &cols[i];
  }
  if (!rc) {
    Deltad__Connect__V1__ResultSchema schema = DELTAD__CONNECT__V1__RESULT_SCHEMA__INIT;
    schema.n_columns = n;
    schema.columns = colp;
    Deltad__Connect__V1__ExecuteResult msg = DELTAD__CONNECT__V1__EXECUTE_RESULT__INIT;
    msg.result_case = DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_SCHEMA;
    msg.schema = &schema;
    rc = call->send(call, &msg.base);
  }
  free(cols);
  free(colp);
  return rc;
}

#define KIND(k) DELTAD__CONNECT__V1__VALUE__KIND_##k

/* Cell i of column id into v. Text cells go to buf; off[c] records where (the pointer is set
 * once the row is complete, as buf may move while it grows). */
static int cell(pb_value *v, size_t *off, qry_text *buf, const arw_batch *b, int id, size_t i) {
  arw_view w;
  int rc = arw_batch_view(b, id, &w);
  if (rc) return rc;
  *off = SIZE_MAX;
  if (!arw_view_valid(&w, i)) {
    v->kind_case = KIND(NULL_VALUE), v->null_value = true;
    return 0;
  }
  const uint8_t *p = w.values;
  switch (w.kind) {
    case ARW_BOOL: v->kind_case = KIND(BOOL_VALUE), v->bool_value = arw_view_bool(&w, i); return 0;
    case ARW_INT8: v->kind_case = KIND(INT64_VALUE), v->int64_value = (int8_t)p[i]; return 0;
    case ARW_INT16: { int16_t x; memcpy(&x, p + 2 * i, 2); v->kind_case = KIND(INT64_VALUE), v->int64_value = x; return 0; }
    case ARW_INT32:
    case ARW_DATE32: { int32_t x; memcpy(&x, p + 4 * i, 4); v->kind_case = KIND(INT64_VALUE), v->int64_value = x; return 0; }
    case ARW_INT64: memcpy(&v->int64_value, p + 8 * i, 8), v->kind_case = KIND(INT64_VALUE); return 0;
    case ARW_FLOAT32: { float x; memcpy(&x, p + 4 * i, 4); v->kind_case = KIND(DOUBLE_VALUE), v->double_value = x; return 0; }
    case ARW_FLOAT64: memcpy(&v->double_value, p + 8 * i, 8), v->kind_case = KIND(DOUBLE_VALUE); return 0;
    case ARW_TIMESTAMP:
    case ARW_TIMESTAMP_UTC: memcpy(&v->timestamp_us, p + 8 * i, 8), v->kind_case = KIND(TIMESTAMP_US); return 0;
    case ARW_BINARY:
      v->kind_case = KIND(BYTES_VALUE);
      v->bytes_value.data = (uint8_t *)p + w.offsets[i];
      v->bytes_value.len = (size_t)(w.offsets[i + 1] - w.offsets[i]);
      return 0;
    case ARW_UTF8:
    case ARW_DECIMAL128:
      v->kind_case = KIND(STRING_VALUE);
      break;
    default: v->kind_case = KIND(JSON); break; /* struct, list, map */
  }
  *off = buf->len;
  rc = qry_text_value(buf, b, id, i, false);
  qry_text_put(buf, "", 1); /* the cell's NUL: the next cell starts after it */
  return rc ? rc : buf->oom ? OOM() : 0;
}

static int send_batch(dd_call *call, const arw_batch *b, pb_value *vals, pb_value **valp, size_t *off,
                      qry_text *buf) {
  const arw_schema *s = arw_batch_schema(b);
  size_t ncols = arw_schema_ncolumns(s), rows = arw_batch_rows(b);
  Deltad__Connect__V1__ResultRow row = DELTAD__CONNECT__V1__RESULT_ROW__INIT;
  row.n_values = ncols;
  row.values = valp;
  Deltad__Connect__V1__ExecuteResult msg = DELTAD__CONNECT__V1__EXECUTE_RESULT__INIT;
  msg.result_case = DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_ROW;
  msg.row = &row;
  int rc = 0;
  for (size_t r = 0; r < rows && !rc; r++) {
    qry_text_clear(buf);
    for (size_t c = 0; c < ncols && !rc; c++) {
      deltad__connect__v1__value__init(&vals[c]);
      valp[c] = &vals[c];
      rc = cell(&vals[c], &off[c], buf, b, arw_schema_column(s, c), r);
    }
    for (size_t c = 0; c < ncols && !rc; c++) {
      if (off[c] == SIZE_MAX) continue;
      if (vals[c].kind_case == KIND(JSON)) vals[c].json = buf->p + off[c];
      else vals[c].string_value = buf->p + off[c];
    }
    if (!rc) rc = call->send(call, &msg.base);
  }
  return rc;
}

int connect_rows_deadline_check(void *ctx) {
  const dd_call *call = ctx;
  return dd_call_deadline_passed(call->deadline_ms)
             ? dd_err_set(DD_EDEADLINE, "the call's deadline passed while the query ran")
             : 0;
}

int connect_rows_send(dd_call *call, qry_op *op) {
  const arw_schema *s = qry_schema(op);
  size_t n = arw_schema_ncolumns(s);
  char **types = calloc(n + 1, sizeof *types);
  pb_value *vals = calloc(n + 1, sizeof *vals);
  pb_value **valp = calloc(n + 1, sizeof *valp);
  size_t *off = calloc(n + 1, sizeof *off);
  qry_text buf = QRY_TEXT_INIT;
  int rc = types && vals && valp && off ? 0 : OOM();
  if (!rc) rc = send_schema(call, s, types);
  qry_set_check(op, connect_rows_deadline_check, call);
  const arw_batch *b;
  while (!rc && !(rc = qry_next(op, &b)) && b) rc = send_batch(call, b, vals, valp, off, &buf);
  qry_set_check(op, NULL, NULL);
  for (size_t i = 0; types && i < n; i++) free(types[i]);
  free(types);
  free(vals);
  free(valp);
  free(off);
  qry_text_free(&buf);
  return rc;
}
