/* deltactl_tablecall.c: what every `deltactl table` verb of deltactl_tableops.c shares:
 * streaming a DeltaConnectService request into a dop_result, printing a result (server's
 * or --local's alike) through dctl_print_result_as, reporting a local failure, and naming
 * tables: paths made absolute, catalog names told apart and looked up on the server. */
#include "cmd/deltactl_tablecall.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd/deltactl_table.h"
#include "cmd/deltactl_tableops.h"
#include "common/err.h"
#include "deltad/connect/v1/connect.pb-c.h"
#include "deltad/lance/v1/lance.pb-c.h"
#include "deltad/tables/v1/tables.pb-c.h"

void dctl_tbl_progress(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)ctx;
  if (total) fprintf(stderr, "\r%s: %llu/%llu ", phase, (unsigned long long)done, (unsigned long long)total);
  else fprintf(stderr, "\r%s: %llu ", phase, (unsigned long long)done);
  fflush(stderr);
}

/* ======================= server results ======================= */

/* Adds one streamed message (the schema, then a row at a time) to the dctl_tbl_stream ud. */
static int on_msg(void *ud, const ProtobufCMessage *msg) {
  dctl_tbl_stream *s = ud;
  const Deltad__Connect__V1__ExecuteResult *m = (const Deltad__Connect__V1__ExecuteResult *)msg;
  if (m->result_case == DELTAD__CONNECT__V1__EXECUTE_RESULT__RESULT_SCHEMA) {
    s->cols = calloc(m->schema->n_columns + 1, sizeof *s->cols);
    if (!s->cols) return DD_ENOMEM;
    for (size_t i = 0; i < m->schema->n_columns; i++) {
      s->cols[i].name = strdup(m->schema->columns[i]->name);
      s->cols[i].type = strdup(m->schema->columns[i]->type);
    }
    s->r.cols = s->cols;
    s->r.ncols = m->schema->n_columns;
    return 0;
  }
  const Deltad__Connect__V1__ResultRow *row = m->row;
  if ((s->r.nrows + 1) * s->r.ncols > s->r.cap) {
    size_t cap = s->r.cap ? s->r.cap * 2 : 64 * (s->r.ncols + 1);
    dop_cell *n = realloc(s->r.cells, cap * sizeof *n);
    if (!n) return DD_ENOMEM;
    s->r.cells = n;
    s->r.cap = cap;
  }
  dop_cell *c = s->r.cells + s->r.nrows * s->r.ncols;
  memset(c, 0, s->r.ncols * sizeof *c);
  s->r.nrows++;
  for (size_t j = 0; j < s->r.ncols && j < row->n_values; j++) {
    const Deltad__Connect__V1__Value *v = row->values[j];
    switch (v->kind_case) {
      case DELTAD__CONNECT__V1__VALUE__KIND_BOOL_VALUE: c[j].kind = DOP_BOOL, c[j].i64 = v->bool_value; break;
      case DELTAD__CONNECT__V1__VALUE__KIND_INT64_VALUE: c[j].kind = DOP_I64, c[j].i64 = v->int64_value; break;
      case DELTAD__CONNECT__V1__VALUE__KIND_DOUBLE_VALUE: c[j].kind = DOP_F64, c[j].f64 = v->double_value; break;
      case DELTAD__CONNECT__V1__VALUE__KIND_TIMESTAMP_MS: c[j].kind = DOP_TS_MS, c[j].i64 = v->timestamp_ms; break;
      case DELTAD__CONNECT__V1__VALUE__KIND_STRING_VALUE: c[j].kind = DOP_STR, c[j].str = strdup(v->string_value); break;
      case DELTAD__CONNECT__V1__VALUE__KIND_JSON: c[j].kind = DOP_JSON, c[j].str = strdup(v->json); break;
      default: c[j].kind = DOP_NULL;
    }
  }
  return 0;
}

void dctl_tbl_stream_free(dctl_tbl_stream *s) {
  for (size_t i = 0; i < s->r.nrows * s->r.ncols; i++) free(s->r.cells[i].str);
  free(s->r.cells);
  for (size_t i = 0; s->cols && i < s->r.ncols; i++) free((char *)s->cols[i].name), free((char *)s->cols[i].type);
  free(s->cols);
}

/* Streams req into s (freed by the caller with dctl_tbl_stream_free). Returns an exit code. */
int dctl_tbl_fetch(const char *method, const ProtobufCMessage *req, dctl_tbl_stream *s) {
  dd_client *c = NULL;
  int code = dctl_client_get(&c);
  if (code) return code;
  int rc = dd_client_stream(c, method, req, &deltad__connect__v1__execute_result__descriptor, on_msg, s);
  return rc ? dctl_report_call_error(c, rc) : 0;
}

/* What a verb whose result has no columns did, in words (set by the verb before it runs). */
static char done_text[1200];

void dctl_tbl_done(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(done_text, sizeof done_text, fmt, ap);
  va_end(ap);
}

/* Prints r: list verbs (history) print a JSON array even for one row; limit > 0 keeps
 * the first limit rows. A result without columns prints done_text in text. */
int dctl_tbl_print(dop_result *r, bool list, size_t limit) {
  if (!r->ncols && done_text[0] && dctl_globals_get()->output == DCTL_OUT_TABLE) {
    puts(done_text);
    return 0;
  }
  if (limit && r->nrows > limit) r->nrows = limit; /* the cells past it are still freed */
  if (dctl_print_result_as(r, false, list)) return dctl_fail(DCTL_EXIT_LOCAL, "%s", dd_err_msg());
  return 0;
}

int dctl_tbl_remote(const char *method, const ProtobufCMessage *req, bool list, size_t limit) {
  dctl_tbl_stream s = {0};
  int code = dctl_tbl_fetch(method, req, &s);
  size_t all = s.r.nrows;
  if (!code) code = dctl_tbl_print(&s.r, list, limit);
  s.r.nrows = all;
  dctl_tbl_stream_free(&s);
  return code;
}

int dctl_tableops_remote(const char *method, const ProtobufCMessage *req) {
  return dctl_tbl_remote(method, req, false, 0);
}

/* Reports a failed local operation (and clears a dctl_tbl_progress line); rc 0 gives 0. */
int dctl_tbl_local_error(int rc) {
  if (isatty(2)) fputs("\r\033[K", stderr);
  if (!rc) return 0;
  char msg[2048];
  dctl_error_text(msg, sizeof msg, dd_err_msg());
  fprintf(stderr, "deltactl: %s: %s\n", dd_err_name(rc), msg);
  return DCTL_EXIT_SERVER;
}

/* rp is read after rc was computed (the callee fills *rp). */
int dctl_tbl_finish_local(int rc, dop_result **rp, bool list, size_t limit) {
  dop_result *r = *rp;
  int code = dctl_tbl_local_error(rc);
  if (!code) {
    size_t all = r->nrows;
    code = dctl_tbl_print(r, list, limit);
    r->nrows = all;
  }
  dop_result_free(r);
  return code;
}

/* ======================= table names ======================= */

/* catalog.schema.table: three non-empty dot-separated parts, no '/', and no such file
 * here (a relative path wins). */
bool dctl_tbl_is_catalog_name(const char *a) {
  struct stat st;
  int dots = 0;
  if (!*a || strchr(a, '/') || strchr(a, ':') || strchr(a, '`') || stat(a, &st) == 0) return false;
  for (const char *c = a; *c; c++)
    if (*c == '.' && (++dots > 2 || c == a || c[1] == '.' || !c[1])) return false;
  return dots == 2;
}

char *dctl_tbl_abs_path(const char *p) {
  if (p[0] == '/' || strchr(p, '`') || !strncmp(p, "file:", 5) || strstr(p, "://")) return strdup(p);
  char cwd[4096];
  if (!getcwd(cwd, sizeof cwd)) return strdup(p);
  char *r = NULL;
  return asprintf(&r, "%s/%s", cwd, p) < 0 ? NULL : r;
}

#define DESCRIBE_TABLE "/deltad.lance.v1.NamespaceService/DescribeTable"
#define GET_TABLE "/deltad.tables.v1.TablesService/GetTable"

/* The location of a Delta table record (TablesService GetTable); DCTL_CONTINUE when the
 * catalog has none by that name (a Lance record may). */
static int catalog_delta_location(const char *name, char **out) {
  Deltad__Tables__V1__GetTableRequest req = DELTAD__TABLES__V1__GET_TABLE_REQUEST__INIT;
  req.full_name = (char *)name;
  ProtobufCMessage *resp = NULL;
  int code = dctl_call_quiet(GET_TABLE, &req.base, &deltad__tables__v1__table_info__descriptor, &resp);
  if (code == DCTL_CONTINUE) return code;
  if (!code) {
    const char *loc = ((Deltad__Tables__V1__TableInfo *)resp)->storage_location;
    if (!strncmp(loc, "file://", 7)) loc += 7;
    if (!(*out = strdup(loc))) code = dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  }
  protobuf_c_message_free_unpacked(resp, NULL);
  return code;
}

/* The location the catalog keeps for catalog.schema.table (a file:// URL becomes its path):
 * a Delta table record, else a Lance one. */
int dctl_tbl_catalog_location(const char *name, char **out) {
  int dc = catalog_delta_location(name, out);
  if (dc != DCTL_CONTINUE) return dc;
  char *copy = strdup(name), *parts[3];
  if (!copy) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  char *save = NULL;
  parts[0] = strtok_r(copy, ".", &save);
  parts[1] = strtok_r(NULL, ".", &save);
  parts[2] = strtok_r(NULL, ".", &save);
  Deltad__Lance__V1__DescribeTableRequest req = DELTAD__LANCE__V1__DESCRIBE_TABLE_REQUEST__INIT;
  req.n_id = 3;
  req.id = parts;
  ProtobufCMessage *resp = NULL;
  int code = dctl_call(DESCRIBE_TABLE, &req.base, &deltad__lance__v1__describe_table_response__descriptor, &resp);
  if (!code) {
    const char *loc = ((Deltad__Lance__V1__DescribeTableResponse *)resp)->location;
    if (!strncmp(loc, "file://", 7)) loc += 7;
    if (!(*out = strdup(loc))) code = dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  }
  protobuf_c_message_free_unpacked(resp, NULL);
  free(copy);
  return code;
}

int dctl_tbl_data_path(const char *arg, char **out) {
  *out = NULL;
  if (dctl_tbl_is_catalog_name(arg)) return dctl_tbl_catalog_location(arg, out);
  *out = arg[0] == '/' || !strncmp(arg, "file:", 5) || strstr(arg, "://") ? strdup(arg) : realpath(arg, NULL);
  return *out ? 0 : dctl_fail(DCTL_EXIT_LOCAL, "no table at '%s'", arg);
}

int dctl_table_location(const char *arg, char **out) {
  *out = NULL;
  if (dctl_tbl_is_catalog_name(arg)) return dctl_tbl_catalog_location(arg, out);
  if (!(*out = dctl_tbl_abs_path(arg))) return dctl_fail(DCTL_EXIT_LOCAL, "out of memory");
  return 0;
}

