/* deltactl_scan_remote.c: the server path of `deltactl table scan` (deltactl_scan.h). The
 * options become a query the server runs, DeltaConnectService.ExecuteQuery:
 *
 *   Limit(N) over Project(--columns) over Filter(--where) over the table
 *
 * where the table is a delta.connect Scan (an extension relation), or a Read of format
 * "delta" with versionAsOf when --version is given (Scan has no version). The rows are
 * printed as they stream, with the same rendering as --local: the server sends each cell
 * typed (connect.proto says how) and the column types say how to print it. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_scan.h"
#include "cmd/deltactl_tablecall.h"
#include "cmd/deltactl_tableops.h"
#include "common/err.h"
#include "delta/connect/relations.pb-c.h"
#include "deltad/connect/v1/connect.pb-c.h"
#include "spark/connect/relations.pb-c.h"

#define QUERY_METHOD "/deltad.connect.v1.DeltaConnectService/ExecuteQuery"
#define DELTA_RELATION_TYPE "type.googleapis.com/delta.connect.DeltaRelation"

typedef Deltad__Connect__V1__Value pb_value;
#define KIND(k) DELTAD__CONNECT__V1__VALUE__KIND_##k

/* ---- printing the stream ------------------------------------------------------------------ */

typedef struct remote_out {
  dctl_scan_fmt fmt;
  size_t ncols;
  char **names, **types;
  qry_text line, cell;
} remote_out;

static bool is_nested(const char *type) {
  return !strncmp(type, "struct<", 7) || !strncmp(type, "array<", 6) || !strncmp(type, "map<", 4) ||
         !strcmp(type, "variant");
}

/* One cell as --local prints it: json, or bare text (strings unquoted, null ""). */
static void put_cell(qry_text *t, const pb_value *v, const char *type, bool json) {
  const char *q = json ? "\"" : "";
  char num[32];
  switch (v->kind_case) {
    case KIND(BOOL_VALUE): qry_text_put(t, v->bool_value ? "true" : "false", v->bool_value ? 4 : 5); return;
    case KIND(INT64_VALUE):
      if (!strcmp(type, "date")) {
        qry_text_put(t, q, strlen(q));
        qry_text_date(t, v->int64_value);
        qry_text_put(t, q, strlen(q));
      } else {
        snprintf(num, sizeof num, "%" PRId64, v->int64_value);
        qry_text_put(t, num, strlen(num));
      }
      return;
    case KIND(DOUBLE_VALUE): qry_text_float(t, v->double_value, !strcmp(type, "float"), json); return;
    case KIND(STRING_VALUE):
      if (json && strncmp(type, "decimal", 7)) qry_text_json_str(t, v->string_value, strlen(v->string_value));
      else {
        qry_text_put(t, q, strlen(q));
        qry_text_put(t, v->string_value, strlen(v->string_value));
        qry_text_put(t, q, strlen(q));
      }
      return;
    case KIND(BYTES_VALUE):
      qry_text_put(t, q, strlen(q));
      qry_text_hex(t, v->bytes_value.data, v->bytes_value.len);
      qry_text_put(t, q, strlen(q));
      return;
    case KIND(TIMESTAMP_US):
    case KIND(TIMESTAMP_MS):
      qry_text_put(t, q, strlen(q));
      qry_text_timestamp(t, v->kind_case == KIND(TIMESTAMP_US) ? v->timestamp_us : v->timestamp_ms * 1000);
      qry_text_put(t, q, strlen(q));
      return;
    case KIND(JSON): qry_text_put(t, v->json, strlen(v->json)); return;
    default: qry_text_put(t, json ? "null" : "", json ? 4 : 0); return;
  }
}

static int on_schema(remote_out *o, const Deltad__Connect__V1__ResultSchema *s) {
  o->names = calloc(s->n_columns + 1, sizeof *o->names);
  o->types = calloc(s->n_columns + 1, sizeof *o->types);
  if (!o->names || !o->types) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t c = 0; c < s->n_columns; c++, o->ncols++)
    if (!(o->names[c] = strdup(s->columns[c]->name)) || !(o->types[c] = strdup(s->columns[c]->type)))
      return dd_err_set(DD_ENOMEM, "out of memory");
  dctl_scan_header((const char *const *)o->names, o->ncols, o->fmt);
  return 0;
}

static int on_row(remote_out *o, const Deltad__Connect__V1__ResultRow *row) {
  if (!o->types || row->n_values != o->ncols)
    return dd_err_set(DD_EINTERNAL, "the server sent a row of %zu values for %zu columns", row->n_values, o->ncols);
  qry_text_clear(&o->line);
  if (o->fmt == DCTL_SCAN_JSON) qry_text_put(&o->line, "{", 1);
  for (size_t c = 0; c < o->ncols; c++) {
    dctl_scan_sep(&o->line, o->fmt, c, o->names[c]);
    if (o->fmt == DCTL_SCAN_JSON) {
      put_cell(&o->line, row->values[c], o->types[c], true);
      continue;
    }
    qry_text_clear(&o->cell);
    put_cell(&o->cell, row->values[c], o->types[c], is_nested(o->types[c]));
    if (o->cell.oom) return dd_err_set(DD_ENOMEM, "out of memory printing a row");
    if (o->fmt == DCTL_SCAN_CSV) dctl_scan_csv_cell(&o->line, o->cell.p, o->cell.len);
    else qry_text_put(&o->line, o->cell.p, o->cell.len);
  }
  return dctl_scan_end_row(&o->line, o->fmt);
}

static int on_msg(void *ud, const ProtobufCMessage *msg) {
  const Deltad__Connect__V1__ExecuteResult *m = (const Deltad__Connect__V1__ExecuteResult *)msg;
  int rc = m->result_case == DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_SCHEMA ? on_schema(ud, m->schema)
           : m->result_case == DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_ROW  ? on_row(ud, m->row)
                                                                                : 0;
  return rc ? DCTL_EXIT_LOCAL : 0;
}

static void out_free(remote_out *o) {
  for (size_t c = 0; c < o->ncols; c++) free(o->names[c]), free(o->types[c]);
  free(o->names);
  free(o->types);
  qry_text_free(&o->line);
  qry_text_free(&o->cell);
}

/* ---- the query ------------------------------------------------------------------------------ */

/* The relations of one request, on the stack of dctl_scan_remote; strings borrowed or in
 * owned[]. */
typedef struct scan_plan {
  Spark__Connect__Relation leaf, filter_rel, project_rel, limit_rel;
  Google__Protobuf__Any any;
  Spark__Connect__Read read;
  Spark__Connect__Read__DataSource ds;
  Spark__Connect__Read__DataSource__OptionsEntry opt, *optp;
  Spark__Connect__Filter filter;
  Spark__Connect__Expression cond;
  Spark__Connect__Expression__ExpressionString cond_text;
  Spark__Connect__Project project;
  Spark__Connect__Expression *cols, **colp;
  Spark__Connect__Expression__UnresolvedAttribute *attrs;
  Spark__Connect__Limit limit;
  char version[24], *path, **names;
  size_t ncols;
  uint8_t *scan_bytes;
} scan_plan;

static void plan_free(scan_plan *p) {
  for (size_t i = 0; p->names && i < p->ncols; i++) free(p->names[i]);
  free(p->names);
  free(p->cols);
  free(p->colp);
  free(p->attrs);
  free(p->scan_bytes);
  free(p->path);
}

/* The table: a Scan (extension), or a Delta Read at a version. */
static int plan_leaf(scan_plan *p, const dctl_scan_request *q) {
  spark__connect__relation__init(&p->leaf);
  if (q->version >= 0) {
    spark__connect__read__init(&p->read);
    spark__connect__read__data_source__init(&p->ds);
    spark__connect__read__data_source__options_entry__init(&p->opt);
    snprintf(p->version, sizeof p->version, "%" PRId64, q->version);
    p->opt.key = "versionAsOf", p->opt.value = p->version, p->optp = &p->opt;
    p->ds._format_case = SPARK__CONNECT__READ__DATA_SOURCE___FORMAT_FORMAT, p->ds.format = "delta";
    p->ds.n_paths = 1, p->ds.paths = &p->path;
    p->ds.n_options = 1, p->ds.options = &p->optp;
    p->read.read_type_case = SPARK__CONNECT__READ__READ_TYPE_DATA_SOURCE, p->read.data_source = &p->ds;
    p->leaf.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_READ, p->leaf.read = &p->read;
    return 0;
  }
  Delta__Connect__DeltaTable t = DELTA__CONNECT__DELTA_TABLE__INIT;
  Delta__Connect__DeltaTable__Path tp = DELTA__CONNECT__DELTA_TABLE__PATH__INIT;
  Delta__Connect__Scan scan = DELTA__CONNECT__SCAN__INIT;
  Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
  tp.path = p->path;
  t.access_type_case = DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH, t.path = &tp;
  scan.table = &t;
  rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN, rel.scan = &scan;
  size_t n = delta__connect__delta_relation__get_packed_size(&rel);
  if (!(p->scan_bytes = malloc(n ? n : 1))) return dd_err_set(DD_ENOMEM, "out of memory");
  delta__connect__delta_relation__pack(&rel, p->scan_bytes);
  google__protobuf__any__init(&p->any);
  p->any.type_url = DELTA_RELATION_TYPE;
  p->any.value.data = p->scan_bytes, p->any.value.len = n;
  p->leaf.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION, p->leaf.extension = &p->any;
  return 0;
}

/* A top-level column name as one quoted identifier part (`a.b` is the column "a.b"). */
static char *quoted(const char *name) {
  size_t n = strlen(name), k = 0;
  char *q = malloc(2 * n + 3);
  if (!q) return NULL;
  q[k++] = '`';
  for (const char *c = name; *c; c++) {
    if (*c == '`') q[k++] = '`';
    q[k++] = *c;
  }
  q[k++] = '`';
  q[k] = 0;
  return q;
}

static int plan_project(scan_plan *p, const char *columns, Spark__Connect__Relation *in) {
  size_t n = 1;
  for (const char *c = columns; *c; c++) n += *c == ',';
  p->names = calloc(n, sizeof *p->names);
  p->cols = calloc(n, sizeof *p->cols);
  p->colp = calloc(n, sizeof *p->colp);
  p->attrs = calloc(n, sizeof *p->attrs);
  if (!p->names || !p->cols || !p->colp || !p->attrs) return dd_err_set(DD_ENOMEM, "out of memory");
  for (const char *c = columns; *c;) {
    size_t len = strcspn(c, ",");
    char *one = len ? strndup(c, len) : NULL;
    if (len && (!one || !(p->names[p->ncols] = quoted(one)))) {
      free(one);
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
    free(one);
    if (len) {
      size_t i = p->ncols++;
      spark__connect__expression__init(&p->cols[i]);
      spark__connect__expression__unresolved_attribute__init(&p->attrs[i]);
      p->attrs[i].unparsed_identifier = p->names[i];
      p->cols[i].expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE;
      p->cols[i].unresolved_attribute = &p->attrs[i];
      p->colp[i] = &p->cols[i];
    }
    c += len + (c[len] == ',');
  }
  spark__connect__project__init(&p->project);
  p->project.input = in;
  p->project.n_expressions = p->ncols;
  p->project.expressions = p->colp;
  spark__connect__relation__init(&p->project_rel);
  p->project_rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_PROJECT;
  p->project_rel.project = &p->project;
  return 0;
}

static int plan_build(scan_plan *p, const dctl_scan_request *q, Spark__Connect__Relation **root) {
  int rc = plan_leaf(p, q);
  Spark__Connect__Relation *top = &p->leaf;
  if (!rc && q->where) {
    spark__connect__expression__expression_string__init(&p->cond_text);
    p->cond_text.expression = (char *)q->where;
    spark__connect__expression__init(&p->cond);
    p->cond.expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_EXPRESSION_STRING;
    p->cond.expression_string = &p->cond_text;
    spark__connect__filter__init(&p->filter);
    p->filter.input = top, p->filter.condition = &p->cond;
    spark__connect__relation__init(&p->filter_rel);
    p->filter_rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_FILTER, p->filter_rel.filter = &p->filter;
    top = &p->filter_rel;
  }
  if (!rc && q->columns && *q->columns && !(rc = plan_project(p, q->columns, top))) top = &p->project_rel;
  if (!rc && q->limit >= 0) {
    spark__connect__limit__init(&p->limit);
    p->limit.input = top, p->limit.limit = (int32_t)q->limit;
    spark__connect__relation__init(&p->limit_rel);
    p->limit_rel.rel_type_case = SPARK__CONNECT__RELATION__REL_TYPE_LIMIT, p->limit_rel.limit = &p->limit;
    top = &p->limit_rel;
  }
  *root = top;
  return rc;
}

int dctl_scan_remote(const dctl_scan_request *q) {
  if (q->limit > INT32_MAX)
    return dctl_fail(DCTL_EXIT_USAGE, "table scan: --limit above %d needs --local (a query's limit is 32-bit)",
                     INT32_MAX);
  scan_plan p;
  memset(&p, 0, sizeof p);
  remote_out o = {.fmt = q->fmt, .line = QRY_TEXT_INIT, .cell = QRY_TEXT_INIT};
  Spark__Connect__Relation *root = NULL;
  dd_client *c = NULL;
  int code = dctl_tbl_data_path(q->path, &p.path), rc = 0;
  if (!code) rc = plan_build(&p, q, &root);
  if (code) {
  } else if (rc) {
    code = dctl_fail(DCTL_EXIT_LOCAL, "%s", dd_err_msg());
  } else if (!(code = dctl_client_get(&c))) {
    rc = dd_client_stream(c, QUERY_METHOD, &root->base, &deltad__connect__v1__execute_result__descriptor, on_msg, &o);
    if (rc == DCTL_EXIT_LOCAL) code = dctl_fail(DCTL_EXIT_LOCAL, "table scan: %s", dd_err_msg());
    else if (rc) code = dctl_report_call_error(c, rc);
  }
  fflush(stdout);
  out_free(&o);
  plan_free(&p);
  return code;
}
