/* opt_filter.c: see opt_filter.h. The predicate is parsed and bound by store/expr against
 * a schema of the partition columns alone (so naming any other column fails to bind and is
 * reported as Delta reports it); each file's partition values become a one-row batch of
 * those columns, typed by the table schema, and the predicate's mask decides (NULL keeps
 * nothing, as a WHERE does). The predicate's text for the commit is the caller's, in
 * parentheses, as Spark's Expression.sql prints a comparison ("(p = 'a')"). */
#include "store/optimize/opt_filter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "store/expr/ex.h"

struct opt_filter {
  const dl_snapshot *snap;
  arw_schema *schema;
  arw_batch *row;
  ex_node *bound;
  char *sql;
  const dl_field **cols; /* partition columns, in schema order of the batch */
  size_t ncols;
  bool constant; /* ncols == 0: the predicate's value for every file, found once */
};

static int oom(void) { return dd_err_set(DD_ENOMEM, "optimize: out of memory"); }

static int kind_of(const dl_type *t, arw_kind *k) {
  switch (t->kind) {
    case DL_TYPE_STRING: *k = ARW_UTF8; return 0;
    case DL_TYPE_BINARY: *k = ARW_BINARY; return 0;
    case DL_TYPE_LONG: *k = ARW_INT64; return 0;
    case DL_TYPE_INTEGER: *k = ARW_INT32; return 0;
    case DL_TYPE_SHORT: *k = ARW_INT16; return 0;
    case DL_TYPE_BYTE: *k = ARW_INT8; return 0;
    case DL_TYPE_FLOAT: *k = ARW_FLOAT32; return 0;
    case DL_TYPE_DOUBLE: *k = ARW_FLOAT64; return 0;
    case DL_TYPE_BOOLEAN: *k = ARW_BOOL; return 0;
    case DL_TYPE_DATE: *k = ARW_DATE32; return 0;
    case DL_TYPE_TIMESTAMP: *k = ARW_TIMESTAMP_UTC; return 0;
    case DL_TYPE_TIMESTAMP_NTZ: *k = ARW_TIMESTAMP; return 0;
    case DL_TYPE_DECIMAL: *k = ARW_DECIMAL128; return 0;
    default: return dd_err_set(DD_EUNSUPPORTED, "optimize: a partition column of this type");
  }
}

static int build_schema(opt_filter *f) {
  const dl_metadata *md = dl_snapshot_metadata(f->snap);
  const dl_schema *sc = dl_snapshot_schema(f->snap);
  f->cols = calloc(md->num_partition_columns + 1, sizeof *f->cols);
  int rc = f->cols ? arw_schema_new(&f->schema) : oom();
  for (size_t i = 0; i < md->num_partition_columns && !rc; i++) {
    const dl_field *c = dl_schema_field(sc, md->partition_columns[i]);
    arw_kind k;
    if (!c) return dd_err_set(DD_ECORRUPT, "partition column '%s' is not in the schema",
                              md->partition_columns[i]);
    if ((rc = kind_of(c->type, &k))) return rc;
    rc = k == ARW_DECIMAL128
             ? arw_schema_add_decimal(f->schema, ARW_ROOT, c->name, c->type->precision,
                                      c->type->scale, true, NULL)
             : arw_schema_add(f->schema, ARW_ROOT, c->name, k, true, NULL);
    f->cols[f->ncols++] = c;
  }
  return rc ? rc : arw_batch_new(&f->row, f->schema);
}

/* "Predicate references non-partition column 'x'" when binding failed on a column. */
static int bind(opt_filter *f, const ex_node *e) {
  int rc = ex_bind(&f->bound, e, f->schema, NULL);
  if (rc && strstr(dd_err_msg(), "UNRESOLVED_COLUMN")) {
    dd_buf cols = {0};
    for (size_t i = 0; i < f->ncols; i++) {
      if (i) dd_buf_puts(&cols, ", ");
      dd_buf_puts(&cols, f->cols[i]->name);
    }
    rc = dd_err_set(DD_EINVAL, "OPTIMIZE WHERE '%s': %s. Only the partition columns may be "
                    "referenced: [%s]", f->sql, dd_err_msg(), cols.p ? cols.p : "");
    dd_buf_free(&cols);
  }
  if (!rc && ex_result_type(f->bound).id != EX_T_BOOLEAN)
    rc = dd_err_set(DD_EINVAL, "OPTIMIZE WHERE '%s' is not a boolean predicate", f->sql);
  if (!rc && f->ncols == 0) { /* a row of no columns has no rows: evaluate the constant */
    ex_value v;
    char *st = NULL;
    rc = ex_eval_const(&v, &st, f->bound);
    f->constant = !rc && !v.is_null && v.b;
    free(st);
  }
  return rc;
}

int opt_filter_new(opt_filter **out, const dl_snapshot *s, const char *sql) {
  *out = NULL;
  opt_filter *f = calloc(1, sizeof *f);
  if (!f) return oom();
  f->snap = s;
  ex_node *e = NULL;
  int rc = (f->sql = strdup(sql)) ? build_schema(f) : oom();
  if (!rc) rc = ex_parse(&e, sql, strlen(sql), NULL);
  if (!rc) rc = bind(f, e);
  if (!rc) { /* as Delta records it: the predicate's SQL in parentheses */
    char *text = NULL;
    if (asprintf(&text, "(%s)", sql) < 0) {
      rc = oom();
    } else {
      free(f->sql);
      f->sql = text;
    }
  }
  ex_free(e);
  if (rc) {
    opt_filter_free(f);
    return rc;
  }
  *out = f;
  return 0;
}

static int put_value(opt_filter *f, int id, const dl_field *c, const char *text) {
  arw_batch *b = f->row;
  dl_value v;
  int rc = dl_partition_value_parse(&v, c->type, text);
  if (rc) return rc;
  if (v.is_null) return arw_append_null(b, id);
  switch (c->type->kind) {
    case DL_TYPE_STRING: case DL_TYPE_BINARY: return arw_append_str(b, id, v.str, v.len);
    case DL_TYPE_LONG: case DL_TYPE_TIMESTAMP: case DL_TYPE_TIMESTAMP_NTZ:
      return arw_append_i64(b, id, v.i64);
    case DL_TYPE_INTEGER: case DL_TYPE_DATE: return arw_append_i32(b, id, (int32_t)v.i64);
    case DL_TYPE_SHORT: { int16_t x = (int16_t)v.i64; return arw_append_fixed(b, id, &x, 1, NULL); }
    case DL_TYPE_BYTE: { int8_t x = (int8_t)v.i64; return arw_append_fixed(b, id, &x, 1, NULL); }
    case DL_TYPE_FLOAT: return arw_append_f32(b, id, (float)v.f64);
    case DL_TYPE_DOUBLE: return arw_append_f64(b, id, v.f64);
    case DL_TYPE_BOOLEAN: return arw_append_bool(b, id, v.b);
    default: { /* decimal text -> unscaled at the column's scale */
      ex_type to = {EX_T_DECIMAL, c->type->precision, c->type->scale};
      ex_node *lit = NULL, *cast = NULL, *bound = NULL;
      ex_value sv = {.type = {EX_T_STRING, 0, 0}, .str = v.str, .len = v.len};
      ex_value out;
      char *st = NULL;
      rc = ex_new_literal(&lit, &sv);
      if (!rc) rc = ex_new_cast(&cast, lit, to);
      if (!rc) rc = ex_bind(&bound, cast, f->schema, NULL);
      if (!rc) rc = ex_eval_const(&out, &st, bound);
      uint8_t le[16];
      if (!rc) memcpy(le, &out.dec, 16);
      if (!rc) rc = out.is_null ? arw_append_null(b, id) : arw_append_dec128(b, id, le);
      free(st);
      ex_free(bound);
      ex_free(cast);
      return rc;
    }
  }
}

bool opt_filter_keep(void *filter, const dl_file *file) {
  bool match = false;
  return opt_filter_match(filter, file, &match) ? true : match; /* an error keeps the file */
}

int opt_filter_match(opt_filter *f, const dl_file *file, bool *match) {
  *match = false;
  if (f->ncols == 0) {
    *match = f->constant;
    return 0;
  }
  arw_batch_clear(f->row);
  int rc = 0;
  for (size_t i = 0; i < f->ncols && !rc; i++) {
    const char *v = NULL;
    const dl_field *c = f->cols[i]; /* keyed by physical name under column mapping */
    if (!dl_kv_get(file->partition_values, c->name, &v) &&
        !(c->physical_name && dl_kv_get(file->partition_values, c->physical_name, &v)))
      v = NULL;
    rc = put_value(f, arw_schema_column(f->schema, i), c, v);
  }
  uint8_t mask = 0;
  if (!rc) rc = ex_eval_mask(f->bound, f->row, &mask, NULL);
  if (!rc) *match = mask != 0;
  return rc;
}

const char *opt_filter_sql(const opt_filter *f) { return f ? f->sql : NULL; }

void opt_filter_free(opt_filter *f) {
  if (!f) return;
  ex_free(f->bound);
  arw_batch_free(f->row);
  arw_schema_free(f->schema);
  free(f->cols);
  free(f->sql);
  free(f);
}
