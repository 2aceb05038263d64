/* connect_sql_ddl.c: SQL CREATE TABLE and ALTER TABLE ... SET | UNSET TBLPROPERTIES, as
 * Spark with Delta takes them:
 *
 *   CREATE [OR REPLACE] TABLE [IF NOT EXISTS] name (col type [NOT NULL] [COMMENT 'c'], ...)
 *     USING DELTA [PARTITIONED BY (col, ...) | CLUSTER BY (col, ...)] [LOCATION 'path'] [TBLPROPERTIES (k = v, ...)]
 *     [COMMENT 'text']                       (the clauses after USING in any order)
 *
 *   ALTER TABLE name SET TBLPROPERTIES (k = v, ...) | UNSET TBLPROPERTIES [IF EXISTS] (k, ...)
 *   ALTER TABLE name CLUSTER BY (col, ...) | CLUSTER BY NONE      (dop_cluster_by)
 *
 * CREATE becomes a delta.connect CreateDeltaTable (types as DDL text) and runs on the one
 * create path, connect_exec_command -> dop_create: the same confinement, validation and
 * commit as a Delta Connect client's. The properties go to dop_set_properties /
 * dop_unset_properties (Delta's value rules, the metaData commit). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/connect_sql_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

typedef Delta__Connect__CreateDeltaTable__Column create_col;
typedef Delta__Connect__CreateDeltaTable__PropertiesEntry create_prop;

typedef struct create_q {
  Delta__Connect__CreateDeltaTable m;
  create_col *cols;
  Spark__Connect__DataType *types;
  Spark__Connect__DataType__Unparsed *unparsed;
  create_prop *props;
  size_t ncols, nprops, cap_cols, cap_props;
} create_q;

static void create_free(create_q *q) {
  for (size_t i = 0; i < q->ncols; i++) {
    free(q->cols[i].name);
    free(q->unparsed[i].data_type_string);
    if (q->cols[i]._comment_case) free(q->cols[i].comment);
  }
  for (size_t i = 0; i < q->nprops; i++) free(q->props[i].key), free(q->props[i].value);
  for (size_t i = 0; i < q->m.n_partitioning_columns; i++) free(q->m.partitioning_columns[i]);
  free(q->m.partitioning_columns);
  for (size_t i = 0; i < q->m.n_clustering_columns; i++) free(q->m.clustering_columns[i]);
  free(q->m.clustering_columns);
  free(q->m.columns);
  free(q->m.properties);
  free(q->cols), free(q->types), free(q->unparsed), free(q->props);
  if (q->m._table_name_case) free(q->m.table_name);
  if (q->m._location_case) free(q->m.location);
  if (q->m._comment_case) free(q->m.comment);
}

static int grow(void **p, size_t *cap, size_t n, size_t size) {
  if (n < *cap) return 0;
  size_t nc = *cap ? 2 * *cap : 8;
  void *np = realloc(*p, nc * size);
  if (!np) return OOM();
  *p = np;
  *cap = nc;
  return 0;
}

/* A type as DDL text: a name, then balanced (...) or <...> ("decimal(10,2)",
 * "array<struct<a: int>>"). */
static int type_text(connect_sql_cur *c, char **out) {
  connect_sql__ws(c);
  size_t st = c->pos;
  int depth = 0;
  while (c->pos < c->len) {
    char ch = c->s[c->pos];
    if (ch == '(' || ch == '<') depth++;
    else if ((ch == ')' || ch == '>') && depth) depth--;
    else if (!depth && !connect_sql__ident_char(ch)) break;
    c->pos++;
  }
  if (c->pos == st || depth) return connect_sql__syntax(c);
  return (*out = strndup(c->s + st, c->pos - st)) ? 0 : OOM();
}

static int column(create_q *q, connect_sql_cur *c) {
  int rc = 0;
  if (q->ncols == q->cap_cols) { /* the three arrays grow together */
    size_t cap = q->cap_cols ? 2 * q->cap_cols : 8;
    create_col *nc = realloc(q->cols, cap * sizeof *nc);
    if (nc) q->cols = nc;
    Spark__Connect__DataType *nt = nc ? realloc(q->types, cap * sizeof *nt) : NULL;
    if (nt) q->types = nt;
    Spark__Connect__DataType__Unparsed *nu = nt ? realloc(q->unparsed, cap * sizeof *nu) : NULL;
    if (!nu) return OOM();
    q->unparsed = nu;
    q->cap_cols = cap;
  }
  create_col *col = &q->cols[q->ncols];
  Spark__Connect__DataType *t = &q->types[q->ncols];
  Spark__Connect__DataType__Unparsed *u = &q->unparsed[q->ncols];
  delta__connect__create_delta_table__column__init(col);
  spark__connect__data_type__init(t);
  spark__connect__data_type__unparsed__init(u);
  col->name = u->data_type_string = NULL; /* init points them at a shared "" */
  q->ncols++;
  col->nullable = true;
  t->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_UNPARSED, t->unparsed = u;
  col->data_type = t;
  if ((rc = connect_sql__ident(c, &col->name)) || (rc = type_text(c, &u->data_type_string))) return rc;
  for (;;) {
    if (connect_sql__kw(c, "NOT")) {
      if (!connect_sql__kw(c, "NULL")) return connect_sql__syntax(c);
      col->nullable = false;
    } else if (connect_sql__kw(c, "COMMENT")) {
      if (col->_comment_case) return connect_sql__syntax(c);
      col->_comment_case = DELTA__CONNECT__CREATE_DELTA_TABLE__COLUMN___COMMENT_COMMENT;
      if ((rc = connect_sql__string_lit(c, &col->comment))) return rc;
    } else {
      return 0;
    }
  }
}

/* A property key ('a.b' or a.b) and value ('v', or a bare word or number: true, 10). */
static int word_or_string(connect_sql_cur *c, char **out, bool dots) {
  connect_sql__ws(c);
  if (c->pos < c->len && (c->s[c->pos] == '\'' || c->s[c->pos] == '"')) return connect_sql__string_lit(c, out);
  size_t st = c->pos;
  while (c->pos < c->len && (connect_sql__ident_char(c->s[c->pos]) || (dots && c->s[c->pos] == '.') ||
                             (!dots && strchr("+-.", c->s[c->pos]))))
    c->pos++;
  if (c->pos == st) return connect_sql__syntax(c);
  return (*out = strndup(c->s + st, c->pos - st)) ? 0 : OOM();
}

static int properties(create_q *q, connect_sql_cur *c) {
  if (!connect_sql__punct(c, '(')) return connect_sql__syntax(c);
  int rc = 0;
  do {
    if ((rc = grow((void **)&q->props, &q->cap_props, q->nprops, sizeof *q->props))) return rc;
    create_prop *p = &q->props[q->nprops++];
    delta__connect__create_delta_table__properties_entry__init(p);
    p->key = p->value = NULL; /* init points them at a shared "" */
    if ((rc = word_or_string(c, &p->key, true))) return rc;
    connect_sql__punct(c, '='); /* optional, as in Spark */
    if ((rc = word_or_string(c, &p->value, false))) return rc;
  } while (connect_sql__punct(c, ','));
  return connect_sql__punct(c, ')') ? 0 : connect_sql__syntax(c);
}

/* (col, ...): the names appended to *v (n of them). */
static int column_list(connect_sql_cur *c, char ***v, size_t *n) {
  if (!connect_sql__punct(c, '(')) return connect_sql__syntax(c);
  int rc = 0;
  do {
    char **np = realloc(*v, (*n + 1) * sizeof *np);
    if (!np) return OOM();
    *v = np;
    if ((rc = connect_sql__ident(c, &np[*n]))) return rc;
    (*n)++;
  } while (connect_sql__punct(c, ','));
  return connect_sql__punct(c, ')') ? 0 : connect_sql__syntax(c);
}

/* BY (col, ...) after PARTITIONED or CLUSTER. */
static int by_columns(connect_sql_cur *c, char ***v, size_t *n) {
  return connect_sql__kw(c, "BY") ? column_list(c, v, n) : connect_sql__syntax(c);
}

/* The clauses after the column list, each at most once. */
static int clauses(create_q *q, connect_sql_cur *c) {
  bool using = false, parts = false, props = false, clust = false;
  int rc = 0;
  while (!rc && !connect_sql__at_end(c) && !connect_sql__peek_kw(c, "AS")) {
    if (connect_sql__kw(c, "USING")) {
      char *fmt = NULL;
      if (using) return connect_sql__syntax(c);
      if ((rc = connect_sql__ident(c, &fmt))) return rc;
      bool delta = !strcasecmp(fmt, "delta");
      free(fmt);
      if (!delta) return dd_err_set(DD_EUNSUPPORTED, "CREATE TABLE: deltad creates Delta tables only (USING DELTA)");
      using = true;
    } else if (!parts && connect_sql__kw(c, "PARTITIONED")) {
      rc = by_columns(c, &q->m.partitioning_columns, &q->m.n_partitioning_columns), parts = true;
    } else if (!clust && connect_sql__kw(c, "CLUSTER")) {
      rc = by_columns(c, &q->m.clustering_columns, &q->m.n_clustering_columns), clust = true;
    } else if (!q->m._location_case && connect_sql__kw(c, "LOCATION")) {
      q->m._location_case = DELTA__CONNECT__CREATE_DELTA_TABLE___LOCATION_LOCATION;
      rc = connect_sql__string_lit(c, &q->m.location);
    } else if (!props && connect_sql__kw(c, "TBLPROPERTIES")) {
      rc = properties(q, c), props = true;
    } else if (!q->m._comment_case && connect_sql__kw(c, "COMMENT")) {
      q->m._comment_case = DELTA__CONNECT__CREATE_DELTA_TABLE___COMMENT_COMMENT;
      rc = connect_sql__string_lit(c, &q->m.comment);
    } else {
      return connect_sql__syntax(c);
    }
  }
  if (!rc && !using) rc = dd_err_set(DD_EUNSUPPORTED, "CREATE TABLE: deltad creates Delta tables only (USING DELTA)");
  return rc;
}

int connect_sql__create(qry_op **out, connect_sql_cur *c, const connect_exec_opts *o) {
  create_q q;
  memset(&q, 0, sizeof q);
  delta__connect__create_delta_table__init(&q.m);
  bool replace = false;
  if (connect_sql__kw(c, "OR")) {
    if (!connect_sql__kw(c, "REPLACE")) return connect_sql__syntax(c);
    replace = true;
  }
  if (!connect_sql__kw(c, "TABLE")) {
    static const char *const other[] = {"VIEW", "SCHEMA", "DATABASE", "FUNCTION", "TEMPORARY", NULL};
    for (size_t i = 0; other[i]; i++)
      if (connect_sql__peek_kw(c, other[i]))
        return dd_err_set(DD_EUNSUPPORTED, "SQL statement CREATE %s is not supported by deltad (CREATE TABLE is)",
                          other[i]);
    return connect_sql__syntax(c);
  }
  bool if_not = connect_sql__kw(c, "IF");
  int rc = if_not && !(connect_sql__kw(c, "NOT") && connect_sql__kw(c, "EXISTS")) ? connect_sql__syntax(c) : 0;
  if (!rc && replace && if_not)
    rc = dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] CREATE OR REPLACE TABLE ... IF NOT EXISTS is not allowed");
  q.m.mode = replace  ? DELTA__CONNECT__CREATE_DELTA_TABLE__MODE__MODE_CREATE_OR_REPLACE
             : if_not ? DELTA__CONNECT__CREATE_DELTA_TABLE__MODE__MODE_CREATE_IF_NOT_EXISTS
                      : DELTA__CONNECT__CREATE_DELTA_TABLE__MODE__MODE_CREATE;
  if (!rc && !(rc = connect_sql__table_name(c, &q.m.table_name)))
    q.m._table_name_case = DELTA__CONNECT__CREATE_DELTA_TABLE___TABLE_NAME_TABLE_NAME;
  if (!rc && connect_sql__punct(c, '(')) {
    do rc = column(&q, c);
    while (!rc && connect_sql__punct(c, ','));
    if (!rc && !connect_sql__punct(c, ')')) rc = connect_sql__syntax(c);
  }
  if (!rc) rc = clauses(&q, c);
  if (!rc && q.m._location_case && !strncasecmp(q.m.table_name, "delta.", 6))
    rc = dd_err_set(DD_EINVAL, "[DELTA_CREATE_TABLE_IDENTIFIER_LOCATION_MISMATCH] CREATE TABLE %s names its location "
                    "already; LOCATION '%s' cannot be given too", q.m.table_name, q.m.location);
  if (!rc && connect_sql__kw(c, "AS")) { /* CREATE TABLE ... AS SELECT (connect_sql_write.c) */
    if (q.ncols) rc = dd_err_set(DD_EINVAL, "[PARSE_SYNTAX_ERROR] CREATE TABLE ... AS SELECT takes no column list");
    if (!rc) rc = connect_sql__ctas(out, c, &q.m, o);
    create_free(&q);
    return rc;
  }
  if (!rc && !q.ncols) rc = dd_err_set(DD_EUNSUPPORTED, "CREATE TABLE without columns is not supported by deltad");
  create_col **colp = rc ? NULL : calloc(q.ncols + 1, sizeof *colp);
  create_prop **propp = rc ? NULL : calloc(q.nprops + 1, sizeof *propp);
  if (!rc && (!colp || !propp)) rc = OOM();
  for (size_t i = 0; !rc && i < q.ncols; i++) colp[i] = &q.cols[i];
  for (size_t i = 0; !rc && i < q.nprops; i++) propp[i] = &q.props[i];
  q.m.columns = colp, q.m.n_columns = q.ncols;
  q.m.properties = propp, q.m.n_properties = q.nprops;
  if (rc) free(colp), free(propp), q.m.columns = NULL, q.m.properties = NULL;
  dop_result *res = NULL;
  if (!rc) {
    Delta__Connect__DeltaCommand cmd = DELTA__CONNECT__DELTA_COMMAND__INIT;
    cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_CREATE_DELTA_TABLE;
    cmd.create_delta_table = &q.m;
    rc = connect_exec_command(&res, &cmd, o);
  }
  create_free(&q);
  return connect_sql__result(out, res, rc);
}

/* ---- ALTER TABLE ... SET | UNSET TBLPROPERTIES ---- */

int connect_sql__alter_props(qry_op **out, connect_sql_cur *c, const char *location, bool set) {
  create_q q;
  memset(&q, 0, sizeof q);
  int rc = 0;
  if (!connect_sql__kw(c, "TBLPROPERTIES")) return connect_sql__syntax(c);
  if (set) {
    rc = properties(&q, c);
  } else {
    if (connect_sql__kw(c, "IF") && !connect_sql__kw(c, "EXISTS")) rc = connect_sql__syntax(c);
    if (!rc && !connect_sql__punct(c, '(')) rc = connect_sql__syntax(c);
    do {
      if (!rc) rc = grow((void **)&q.props, &q.cap_props, q.nprops, sizeof *q.props);
      if (rc) break;
      create_prop *p = &q.props[q.nprops++];
      delta__connect__create_delta_table__properties_entry__init(p);
    p->key = p->value = NULL; /* init points them at a shared "" */
      rc = word_or_string(c, &p->key, true);
    } while (!rc && connect_sql__punct(c, ','));
    if (!rc && !connect_sql__punct(c, ')')) rc = connect_sql__syntax(c);
  }
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  const char **keys = calloc(q.nprops + 1, sizeof *keys), **vals = calloc(q.nprops + 1, sizeof *vals);
  if (!rc && (!keys || !vals)) rc = OOM();
  for (size_t i = 0; !rc && i < q.nprops; i++) keys[i] = q.props[i].key, vals[i] = q.props[i].value;
  dop_result *res = NULL;
  if (!rc) rc = set ? dop_set_properties(&res, location, keys, vals, q.nprops)
                    : dop_unset_properties(&res, location, keys, q.nprops);
  free(keys), free(vals);
  create_free(&q);
  return connect_sql__result(out, res, rc);
}

/* ---- ALTER TABLE ... CLUSTER BY (col, ...) | CLUSTER BY NONE ---- */

int connect_sql__alter_cluster(qry_op **out, connect_sql_cur *c, const char *location) {
  char **cols = NULL;
  size_t n = 0;
  int rc = 0;
  if (!connect_sql__kw(c, "BY")) rc = connect_sql__syntax(c);
  else if (!connect_sql__kw(c, "NONE")) rc = column_list(c, &cols, &n);
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  dop_result *res = NULL;
  if (!rc) rc = dop_cluster_by(&res, location, (const char *const *)cols, n);
  for (size_t i = 0; i < n; i++) free(cols[i]);
  free(cols);
  return connect_sql__result(out, res, rc);
}
