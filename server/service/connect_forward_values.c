/* connect_forward_values.c: a merge source of local rows (spark.createDataFrame(...): a
 * LocalRelation carrying an Arrow IPC stream) as the Spark SQL relation Spark can MERGE
 * from: (SELECT CAST(c0 AS T0) AS `name0`, ... FROM VALUES (...), ... AS v(c0, ...)).
 * Atomic columns only (strings, integers, floats, booleans, dates, UTC timestamps); at most
 * FWD_VALUES_MAX_ROWS rows. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "server/service/connect_forward.h"
#include "store/arrow/arrow.h"
#include "store/arrow/arrow_read.h"

#define FWD_VALUES_MAX_ROWS 100000

/* The SQL type of an Arrow kind, NULL for one written no other way here. */
static const char *sql_type(arw_kind k) {
  switch (k) {
    case ARW_UTF8: return "STRING";
    case ARW_INT8: return "TINYINT";
    case ARW_INT16: return "SMALLINT";
    case ARW_INT32: return "INT";
    case ARW_INT64: return "BIGINT";
    case ARW_FLOAT32: return "FLOAT";
    case ARW_FLOAT64: return "DOUBLE";
    case ARW_BOOL: return "BOOLEAN";
    case ARW_DATE32: return "DATE";
    case ARW_TIMESTAMP_UTC: return "TIMESTAMP";
    default: return NULL;
  }
}

static void value(dd_buf *b, const arw_view *v, size_t i) {
  if (!arw_view_valid(v, i)) {
    dd_buf_puts(b, "NULL");
    return;
  }
  const uint8_t *p = v->values + i * arw_kind_width(v->kind);
  int8_t i8;
  int16_t i16;
  int32_t i32;
  int64_t i64;
  float f32;
  double f64;
  switch (v->kind) {
    case ARW_UTF8:
      connect_fwd_sql_string(b, (const char *)v->values + v->offsets[i], (size_t)(v->offsets[i + 1] - v->offsets[i]));
      return;
    case ARW_INT8: memcpy(&i8, p, 1), dd_buf_printf(b, "%d", i8); return;
    case ARW_INT16: memcpy(&i16, p, 2), dd_buf_printf(b, "%d", i16); return;
    case ARW_INT32: memcpy(&i32, p, 4), dd_buf_printf(b, "%d", i32); return;
    case ARW_INT64: memcpy(&i64, p, 8), dd_buf_printf(b, "%lldL", (long long)i64); return;
    case ARW_FLOAT32: memcpy(&f32, p, 4), connect_fwd_sql_double(b, f32, true); return;
    case ARW_FLOAT64: memcpy(&f64, p, 8), connect_fwd_sql_double(b, f64, false); return;
    case ARW_BOOL: dd_buf_puts(b, arw_view_bool(v, i) ? "TRUE" : "FALSE"); return;
    case ARW_DATE32: memcpy(&i32, p, 4), dd_buf_printf(b, "date_from_unix_date(%d)", i32); return;
    default: memcpy(&i64, p, 8), dd_buf_printf(b, "timestamp_micros(%lldL)", (long long)i64); return;
  }
}

static int rows(dd_buf *b, const arw_batch *bt, size_t *nrows) {
  const arw_schema *s = arw_batch_schema(bt);
  size_t ncols = arw_schema_ncolumns(s), n = arw_batch_rows(bt);
  arw_view *views = calloc(ncols ? ncols : 1, sizeof *views);
  int rc = views ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t c = 0; c < ncols && !rc; c++) rc = arw_batch_view(bt, arw_schema_column(s, c), &views[c]);
  if (!rc && *nrows + n > FWD_VALUES_MAX_ROWS)
    rc = dd_err_set(DD_EUNSUPPORTED, "this merge cannot be forwarded to Spark: its local source has more than %d rows "
                    "(write it to a Delta table and merge from that)", FWD_VALUES_MAX_ROWS);
  for (size_t r = 0; r < n && !rc; r++, (*nrows)++) {
    dd_buf_puts(b, *nrows ? ", (" : "(");
    for (size_t c = 0; c < ncols; c++) {
      if (c) dd_buf_puts(b, ", ");
      value(b, &views[c], r);
    }
    dd_buf_putc(b, ')');
  }
  free(views);
  return rc;
}

/* SELECT CAST(cI AS T) AS `name`, ... : the typed, named columns over the VALUES. */
static int columns(dd_buf *b, const arw_schema *s, bool of_values) {
  for (size_t c = 0; c < arw_schema_ncolumns(s); c++) {
    int id = arw_schema_column(s, c);
    const char *t = sql_type(arw_field_kind(s, id));
    if (!t)
      return dd_err_set(DD_EUNSUPPORTED, "this merge cannot be forwarded to Spark: local source column '%s' is of a "
                        "type deltad does not write as SQL (strings, numbers, booleans, dates and timestamps are)",
                        arw_field_name(s, id));
    dd_buf_puts(b, c ? ", " : "SELECT ");
    if (of_values) dd_buf_printf(b, "CAST(c%zu AS %s) AS ", c, t);
    else dd_buf_printf(b, "CAST(NULL AS %s) AS ", t);
    connect_fwd_sql_ident(b, arw_field_name(s, id));
  }
  return arw_schema_ncolumns(s) ? 0 : dd_err_set(DD_EINVAL, "merge source: no columns");
}

int connect_fwd_sql_values(dd_buf *b, const Spark__Connect__LocalRelation *l) {
  arw_reader *r = NULL;
  arw_batch *bt = NULL;
  dd_buf vals = {0};
  size_t n = 0;
  if (!l->data.len) return dd_err_set(DD_EUNSUPPORTED, "this merge cannot be forwarded to Spark: its local source has no data");
  int rc = arw_reader_open(&r, l->data.data, l->data.len);
  while (!rc && !(rc = arw_reader_next(r, &bt)) && bt) {
    rc = rows(&vals, bt, &n);
    arw_batch_free(bt), bt = NULL;
  }
  const arw_schema *s = rc ? NULL : arw_reader_schema(r);
  dd_buf_putc(b, '(');
  if (!rc) rc = columns(b, s, n > 0);
  if (!rc && n) {
    dd_buf_printf(b, " FROM VALUES %s AS v(", vals.p);
    for (size_t c = 0; c < arw_schema_ncolumns(s); c++) dd_buf_printf(b, "%sc%zu", c ? ", " : "", c);
    dd_buf_putc(b, ')');
  } else if (!rc) {
    dd_buf_puts(b, " WHERE FALSE");
  }
  dd_buf_putc(b, ')');
  bool oom = vals.oom;
  dd_buf_free(&vals);
  arw_reader_free(r);
  return rc ? dd_err_wrap(rc, "merge source") : oom ? dd_err_set(DD_ENOMEM, "out of memory") : 0;
}
