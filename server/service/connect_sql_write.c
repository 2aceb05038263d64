/* connect_sql_write.c: the SQL statements that write rows (connect_write.h):
 *   INSERT INTO|OVERWRITE [TABLE] table [(col, ...)] VALUES (expr, ...) [, (...)] | SELECT ...
 *   CREATE [OR REPLACE] TABLE [IF NOT EXISTS] table USING DELTA [PARTITIONED BY (...)]
 *     [LOCATION '...'] [TBLPROPERTIES (...)] [COMMENT '...'] AS SELECT ...
 * INSERT needs an existing table ([TABLE_OR_VIEW_NOT_FOUND]); its values go by position
 * (or through the column list) and are cast to the columns' types (ANSI: an overflow is an
 * error). A VALUES row is evaluated with each value cast to its column's type. CTAS creates
 * the table at its LOCATION or at the path its name gives (delta.`/path`). Both answer an
 * empty result, as Delta on Spark. */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/connect_sql_int.h"
#include "server/service/connect_write.h"
#include "store/scan/scn.h"

#define MAX_INSERT_COLUMNS 4096
#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

static int empty_result(qry_op **out, int rc) {
  dop_result *res = rc ? NULL : calloc(1, sizeof *res);
  if (!rc && !res) rc = OOM();
  return connect_sql__result(out, res, rc);
}

/* (col, ...) after the table name: *cols malloc'ed names. */
static int column_list(connect_sql_cur *c, char ***cols, size_t *n) {
  *cols = NULL, *n = 0;
  if (!connect_sql__punct(c, '(')) return 0;
  char **v = calloc(MAX_INSERT_COLUMNS, sizeof *v);
  if (!v) return OOM();
  int rc = 0;
  do {
    if (*n == MAX_INSERT_COLUMNS) rc = dd_err_set(DD_EINVAL, "INSERT: at most %d columns", MAX_INSERT_COLUMNS);
    else rc = connect_sql__ident(c, &v[(*n)++]);
  } while (!rc && connect_sql__punct(c, ','));
  if (!rc && !connect_sql__punct(c, ')')) rc = connect_sql__syntax(c);
  *cols = v;
  return rc;
}

static void names_free(char **v, size_t n) {
  for (size_t i = 0; v && i < n; i++) free(v[i]);
  free(v);
}

/* One VALUES row into b: each value cast to its column's type and evaluated over one. */
static int values_row(connect_sql_cur *c, arw_batch *b, const arw_schema *s, const arw_batch *one) {
  size_t n = arw_schema_ncolumns(s), k = 0;
  if (!connect_sql__punct(c, '(')) return connect_sql__syntax(c);
  int rc = 0;
  do {
    ex_node *e = NULL, *bound = NULL;
    if ((rc = connect_sql__expr(c, &e, false))) break;
    if (k >= n) {
      ex_free(e);
      rc = dd_err_set(DD_EINVAL, "[INSERT_COLUMN_ARITY_MISMATCH.TOO_MANY_DATA_COLUMNS] Cannot write to the table, "
                      "the reason is too many data columns: the table has %zu columns. SQLSTATE: 21S01", n);
      break;
    }
    int id = arw_schema_column(s, k++);
    ex_type to = ex_type_of_arrow(s, id);
    if (to.id < EX_T_STRUCT) rc = ex_new_cast(&e, e, to);
    if (!rc) rc = ex_bind(&bound, e, arw_batch_schema(one), NULL);
    if (!rc) rc = ex_eval(bound, one, b, id);
    ex_free(e);
    ex_free(bound);
  } while (!rc && connect_sql__punct(c, ','));
  if (!rc && !connect_sql__punct(c, ')')) rc = connect_sql__syntax(c);
  if (!rc && k < n)
    rc = dd_err_set(DD_EINVAL, "[INSERT_COLUMN_ARITY_MISMATCH.NOT_ENOUGH_DATA_COLUMNS] Cannot write to the table, "
                    "the reason is not enough data columns: the table has %zu columns, the data %zu. SQLSTATE: 21S01",
                    n, k);
  return rc;
}

/* VALUES (...), (...) as a local relation of the target columns' types. */
static int values(qry_op **out, connect_sql_cur *c, const dl_snapshot *snap, char **cols, size_t ncols) {
  arw_schema *s = NULL, *os = NULL;
  arw_batch *b = NULL, *one = NULL;
  int id;
  int rc = arw_schema_new(&s);
  if (!rc) rc = scn_arrow_schema(s, dl_schema_root(dl_snapshot_schema(snap)), (const char *const *)cols, ncols);
  if (!rc) rc = arw_schema_new(&os);
  if (!rc) rc = arw_schema_add(os, ARW_ROOT, "_", ARW_INT32, false, &id);
  if (!rc) rc = arw_batch_new(&one, os);
  if (!rc) rc = arw_append_i32(one, id, 0);
  if (!rc) rc = arw_batch_new(&b, s);
  do {
    if (!rc) rc = values_row(c, b, s, one);
  } while (!rc && connect_sql__punct(c, ','));
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  arw_batch_free(one);
  arw_schema_free(os);
  if (rc) {
    arw_batch_free(b);
    arw_schema_free(s);
    return rc;
  }
  return qry_local(out, s, &b, 1);
}

/* The source after the target: VALUES ... or a SELECT (to the end). */
static int source(qry_op **out, connect_sql_cur *c, const dl_snapshot *snap, char **cols, size_t ncols,
                  bool *by_name, const connect_exec_opts *o) {
  connect_sql__ws(c);
  if (connect_sql__kw(c, "VALUES")) {
    *by_name = true; /* the local relation carries the target columns' names */
    return values(out, c, snap, cols, ncols);
  }
  *by_name = false;
  if (!connect_sql_is_query(c->s + c->pos)) return connect_sql__syntax(c);
  return connect_sql_query(out, c->s + c->pos, o, 1);
}

int connect_sql__insert(qry_op **out, connect_sql_cur *c, const connect_exec_opts *o) {
  dml_write_opts wo = DML_WRITE_OPTS_INIT;
  if (connect_sql__kw(c, "OVERWRITE")) wo.mode = DML_WRITE_OVERWRITE;
  else if (!connect_sql__kw(c, "INTO")) return connect_sql__syntax(c);
  connect_sql__kw(c, "TABLE");
  char *loc = NULL, **cols = NULL;
  size_t ncols = 0;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  qry_op *src = NULL;
  size_t at = c->pos;
  int rc = connect_sql__table_loc(c, &loc, o);
  if (!rc && (dl_table_open(&t, loc) || dl_snapshot_open(&s, t, NULL))) {
    connect_sql_cur n = {c->s, at, c->len};
    char *name = NULL;
    connect_sql__table_name(&n, &name);
    rc = dd_err_set(DD_ENOTFOUND, "[TABLE_OR_VIEW_NOT_FOUND] The table or view %s cannot be found. SQLSTATE: 42P01",
                    name ? name : loc);
    free(name);
  }
  if (!rc) rc = column_list(c, &cols, &ncols);
  if (!rc) rc = source(&src, c, s, cols, ncols, &wo.by_name, o);
  if (!rc && !wo.by_name) {
    wo.columns = (const char *const *)cols;
    wo.num_columns = ncols;
  }
  dml_write_result res;
  if (!rc) rc = connect_write_run(&res, loc, src, &wo);
  qry_free(src);
  dl_snapshot_free(s);
  dl_table_free(t);
  names_free(cols, ncols);
  free(loc);
  return empty_result(out, rc);
}

int connect_sql__ctas(qry_op **out, connect_sql_cur *c, const Delta__Connect__CreateDeltaTable *m,
                      const connect_exec_opts *o) {
  dml_write_opts wo = DML_WRITE_OPTS_INIT;
  wo.ctas = true;
  wo.by_name = true;
  switch (m->mode) {
    case DELTA__CONNECT__CREATE_DELTA_TABLE__MODE__MODE_CREATE_OR_REPLACE: wo.replace = true; break;
    case DELTA__CONNECT__CREATE_DELTA_TABLE__MODE__MODE_CREATE_IF_NOT_EXISTS: wo.mode = DML_WRITE_IGNORE; break;
    default: wo.mode = DML_WRITE_ERROR; break;
  }
  wo.has_partition_by = true;
  wo.partition_by = (const char *const *)m->partitioning_columns;
  wo.num_partition_by = m->n_partitioning_columns;
  wo.description = m->_comment_case ? m->comment : NULL;
  char *loc = NULL, *conf = NULL;
  const char **k = calloc(m->n_properties + 1, sizeof *k), **v = calloc(m->n_properties + 1, sizeof *v);
  qry_op *src = NULL;
  int rc = k && v ? 0 : OOM();
  for (size_t i = 0; !rc && i < m->n_properties; i++) k[i] = m->properties[i]->key, v[i] = m->properties[i]->value;
  if (!rc && m->n_properties) rc = dl_kv_pack(&conf, k, v, m->n_properties);
  wo.configuration = conf;
  if (!rc) rc = connect_exec_name_location(&loc, m->_location_case ? m->location : m->table_name, o);
  connect_sql__ws(c);
  if (!rc && !connect_sql_is_query(c->s + c->pos)) rc = connect_sql__syntax(c);
  if (!rc) rc = connect_sql_query(&src, c->s + c->pos, o, 1);
  dml_write_result res;
  if (!rc) rc = connect_write_run(&res, loc, src, &wo);
  if (rc == DD_EEXISTS)
    rc = dd_err_set(DD_EEXISTS, "[TABLE_OR_VIEW_ALREADY_EXISTS] Cannot create table or view %s because it already "
                    "exists. SQLSTATE: 42P07", m->table_name);
  qry_free(src);
  free(k), free(v), free(conf), free(loc);
  return empty_result(out, rc);
}
