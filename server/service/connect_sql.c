/* connect_sql.c: the SQL statements of connect_sql.h. A small cursor over the text reads
 * keywords, identifiers, names and literals; expressions are handed to store/expr's
 * prefix parser. SELECT becomes store/query operators (scan with the WHERE for data
 * skipping, aggregate, project, sort, distinct, offset, limit); the maintenance statements
 * call store/deltaops as the Delta Connect relations do. No recursion beyond the
 * expression parser's own bound. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/connect_arrow.h"
#include "server/service/connect_plan.h"
#include "server/service/connect_sql.h"
#include "server/service/connect_sql_dml.h"
#include "server/service/connect_sql_having.h"
#include "server/service/connect_sql_int.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

connect_sql_optimize_fn connect_sql_optimize_hook;

/* the cursor (connect_sql_cur.c) */
typedef connect_sql_cur cur;

/* ======================= results of commands ======================= */

int connect_sql__result(qry_op **out, dop_result *res, int rc) {
  arw_schema *s = NULL;
  arw_batch *b = NULL;
  if (!rc) rc = connect_result_batch(&s, &b, res);
  dop_result_free(res);
  if (rc) return rc;
  return qry_local(out, s, &b, 1);
}

/* ======================= SELECT ======================= */

typedef struct item {
  ex_node *e;       /* a plain item (may be an alias), or an aggregate's argument */
  bool is_agg, star;
  qry_agg agg;
  char *alias;      /* aggregate items: [AS] name */
} item;

typedef struct select {
  item *items;
  size_t nitems;
  bool distinct;
  ex_node *where;
  ex_node **groups;
  size_t ngroups;
  ex_node *having;
  ex_node **order;
  size_t norder;
  int64_t limit, offset;
  char *loc;
  int64_t version;
  char *ts;
} select_q;

static void select_free(select_q *q) {
  for (size_t i = 0; i < q->nitems; i++) ex_free(q->items[i].e), free(q->items[i].alias);
  free(q->items);
  ex_free(q->where);
  for (size_t i = 0; i < q->ngroups; i++) ex_free(q->groups[i]);
  free(q->groups);
  ex_free(q->having);
  for (size_t i = 0; i < q->norder; i++) ex_free(q->order[i]);
  free(q->order);
  free(q->loc);
  free(q->ts);
}

static int push(void **arr, size_t *n, size_t size) {
  void *p = realloc(*arr, (*n + 1) * size);
  if (!p) return OOM();
  memset((char *)p + *n * size, 0, size);
  *arr = p;
  (*n)++;
  return 0;
}

/* [[AS] name] after an aggregate call. */
static int opt_alias(cur *c, char **out) {
  *out = NULL;
  bool as = connect_sql__kw(c, "AS");
  connect_sql__ws(c);
  static const char *const stop[] = {"FROM", "WHERE", "GROUP", "HAVING", "ORDER", "LIMIT", "OFFSET", NULL};
  for (size_t i = 0; !as && stop[i]; i++)
    if (connect_sql__peek_kw(c, stop[i])) return 0;
  if (!as && (c->pos >= c->len || !(connect_sql__ident_char(c->s[c->pos]) || c->s[c->pos] == '`'))) return 0;
  return connect_sql__ident(c, out);
}

/* count(*) | count([DISTINCT] e) | sum|min|max|avg|mean(e), when next; *matched says so. */
static int agg_call(cur *c, item *it, bool *matched) {
  size_t st = c->pos;
  *matched = false;
  char *fn = NULL;
  connect_sql__ws(c);
  if (c->pos >= c->len || !isalpha((unsigned char)c->s[c->pos]) || connect_sql__ident(c, &fn))
    return dd_err_clear(), c->pos = st, 0;
  qry_agg_fn f;
  bool is_agg = !qry_agg_lookup(&f, fn) && connect_sql__punct(c, '(');
  free(fn);
  if (!is_agg) return c->pos = st, 0;
  it->is_agg = true, it->agg.fn = f;
  int rc = 0;
  if (connect_sql__punct(c, '*')) it->star = true;
  else {
    it->agg.distinct = connect_sql__kw(c, "DISTINCT");
    rc = connect_sql__expr(c, &it->e, false);
  }
  if (!rc && !connect_sql__punct(c, ')')) rc = connect_sql__syntax(c);
  /* an aggregate inside a larger expression (sum(x) + 1) is not this grammar */
  connect_sql__ws(c);
  if (!rc && c->pos < c->len && strchr("+-*/%<>=!|&", c->s[c->pos]))
    rc = dd_err_set(DD_EUNSUPPORTED, "an aggregate inside an expression is not supported (select it alone)");
  if (!rc) rc = opt_alias(c, &it->alias);
  it->agg.arg = it->e;
  it->agg.name = it->alias;
  *matched = true;
  return rc;
}

static int select_items(cur *c, select_q *q) {
  int rc = 0;
  do {
    if ((rc = push((void **)&q->items, &q->nitems, sizeof *q->items))) return rc;
    item *it = &q->items[q->nitems - 1];
    connect_sql__ws(c);
    if (connect_sql__punct(c, '*')) {
      it->star = true;
      continue;
    }
    bool m;
    if ((rc = agg_call(c, it, &m))) return rc;
    if (!m) rc = connect_sql__expr(c, &it->e, true);
  } while (!rc && connect_sql__punct(c, ','));
  return rc;
}

static int expr_list(cur *c, ex_node ***out, size_t *n, bool sort) {
  int rc = 0;
  do {
    ex_node *e = NULL;
    if ((rc = connect_sql__expr(c, &e, false))) return rc;
    if (sort) {
      bool asc = !connect_sql__kw(c, "DESC");
      if (asc) connect_sql__kw(c, "ASC");
      int nf = -1;
      if (connect_sql__kw(c, "NULLS")) {
        if (connect_sql__kw(c, "FIRST")) nf = 1;
        else if (connect_sql__kw(c, "LAST")) nf = 0;
        else return ex_free(e), connect_sql__syntax(c);
      }
      ex_node *s = NULL;
      if ((rc = ex_new_sort(&s, e, asc, nf))) return rc;
      e = s;
    }
    if ((rc = push((void **)out, n, sizeof **out))) return ex_free(e), rc;
    (*out)[*n - 1] = e;
  } while (connect_sql__punct(c, ','));
  return 0;
}

static int parse_select(cur *c, select_q *q, const connect_exec_opts *o) {
  q->limit = -1, q->version = -1;
  q->distinct = connect_sql__kw(c, "DISTINCT");
  if (!q->distinct) connect_sql__kw(c, "ALL");
  int rc = select_items(c, q);
  if (!rc && !connect_sql__kw(c, "FROM")) /* SELECT 1: one row, no table */
    return connect_sql__at_end(c) ? 0 : connect_sql__syntax(c);
  if (!rc) rc = connect_sql__table_loc(c, &q->loc, o);
  if (!rc && connect_sql__kw(c, "VERSION")) {
    if (!connect_sql__kw(c, "AS") || !connect_sql__kw(c, "OF")) return connect_sql__syntax(c);
    rc = connect_sql__integer(c, &q->version);
  } else if (!rc && connect_sql__kw(c, "TIMESTAMP")) {
    if (!connect_sql__kw(c, "AS") || !connect_sql__kw(c, "OF")) return connect_sql__syntax(c);
    rc = connect_sql__string_lit(c, &q->ts);
  }
  if (!rc && connect_sql__kw(c, "AS")) { /* a table alias: accepted, columns are not qualified by it */
    char *a = NULL;
    rc = connect_sql__ident(c, &a);
    free(a);
  }
  if (!rc && connect_sql__kw(c, "WHERE")) rc = connect_sql__expr(c, &q->where, false);
  if (!rc && connect_sql__kw(c, "GROUP"))
    rc = connect_sql__kw(c, "BY") ? expr_list(c, &q->groups, &q->ngroups, false) : connect_sql__syntax(c);
  if (!rc && connect_sql__kw(c, "HAVING")) rc = connect_sql__expr(c, &q->having, false);
  if (!rc && connect_sql__kw(c, "ORDER"))
    rc = connect_sql__kw(c, "BY") ? expr_list(c, &q->order, &q->norder, true) : connect_sql__syntax(c);
  if (!rc && connect_sql__kw(c, "LIMIT")) rc = connect_sql__integer(c, &q->limit);
  if (!rc && connect_sql__kw(c, "OFFSET")) rc = connect_sql__integer(c, &q->offset);
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  return rc;
}

static bool has_agg(const select_q *q) {
  for (size_t i = 0; i < q->nitems; i++)
    if (q->items[i].is_agg) return true;
  return q->ngroups > 0 || q->having;
}

static int col_ref(ex_node **out, const char *name, const char *alias) {
  ex_node *c = NULL;
  int rc = ex_new_column(&c, &name, 1);
  if (!rc && alias) rc = ex_new_alias(out, c, alias);
  else if (!rc) *out = c;
  return rc;
}

/* GROUP BY / aggregates: aggregate (keys as __g<i>, aggregates as __a<i>), then the items
 * in order, each a reference to its key or aggregate under its own name. */
static int plan_aggregate(qry_op **op, select_q *q) {
  size_t na = 0;
  ex_node **keys = calloc(q->ngroups + 1, sizeof *keys), **proj = calloc(q->nitems + 1, sizeof *proj);
  qry_agg *aggs = calloc(q->nitems + 1, sizeof *aggs);
  char **anames = calloc(q->nitems + 1, sizeof *anames);
  /* what HAVING may name: each item's output name and the column it reads */
  const char **shown_names = calloc(q->nitems + 1, sizeof *shown_names);
  char **shown_cols = calloc(q->nitems + 1, sizeof *shown_cols), **gcols = calloc(q->ngroups + 1, sizeof *gcols);
  ex_node *having = NULL;
  int rc = keys && proj && aggs && anames && shown_names && shown_cols && gcols ? 0 : OOM();
  for (size_t i = 0; !rc && i < q->ngroups; i++) {
    char n[32];
    ex_node *k = NULL;
    snprintf(n, sizeof n, "__g%zu", i);
    if (!(gcols[i] = strdup(n))) rc = OOM();
    if (!rc && !(rc = ex_clone(&k, q->groups[i]))) rc = ex_new_alias(&keys[i], k, n);
  }
  for (size_t i = 0; !rc && i < q->nitems; i++) {
    item *it = &q->items[i];
    char n[32], *shown = NULL;
    if (it->star && !it->is_agg) {
      rc = dd_err_set(DD_EINVAL, "[MISSING_AGGREGATION] SELECT * with GROUP BY or an aggregate");
      break;
    }
    if (it->is_agg) {
      aggs[na] = it->agg;
      aggs[na].arg = it->star ? NULL : it->e;
      snprintf(n, sizeof n, "__a%zu", na);
      anames[na] = strdup(n);
      if (!anames[na]) { rc = OOM(); break; }
      qry_agg shown_spec = aggs[na];
      aggs[na].name = anames[na];
      /* the name the user sees: the alias, else Spark's (count(1), sum(x), ...) */
      if (it->alias) shown = strdup(it->alias);
      else {
        char *arg = NULL;
        if (shown_spec.arg && (rc = ex_name(&arg, shown_spec.arg))) break;
        static const char *const fns[] = {"count", "sum", "min", "max", "avg"};
        if (asprintf(&shown, "%s(%s%s)", fns[shown_spec.fn], shown_spec.distinct ? "DISTINCT " : "",
                     arg ? arg : "1") < 0) shown = NULL;
        free(arg);
      }
      rc = shown ? col_ref(&proj[i], n, shown) : OOM();
      if (!rc) rc = (shown_cols[i] = strdup(n)) ? 0 : OOM();
      if (!rc) shown_names[i] = ex_alias_name(proj[i]);
      free(shown);
      na++;
      continue;
    }
    /* a plain item must be one of the GROUP BY expressions */
    const ex_node *e = ex_node_kind(it->e) == EX_ALIAS ? ex_arg(it->e, 0) : it->e;
    char *want = NULL, *name = NULL;
    size_t g = q->ngroups;
    if ((rc = ex_name(&want, e))) break;
    for (size_t k = 0; k < q->ngroups && g == q->ngroups; k++) {
      char *have = NULL;
      if (!ex_name(&have, q->groups[k]) && !strcasecmp(have, want)) g = k;
      free(have);
    }
    if (g == q->ngroups)
      rc = dd_err_set(DD_EINVAL, "[MISSING_AGGREGATION] The non-aggregating expression \"%s\" is based on columns "
                      "which are not participating in the GROUP BY clause", want);
    snprintf(n, sizeof n, "__g%zu", g);
    if (!rc) rc = ex_name(&name, it->e);
    if (!rc) rc = col_ref(&proj[i], n, name);
    if (!rc) rc = (shown_cols[i] = strdup(n)) ? 0 : OOM();
    if (!rc) shown_names[i] = ex_alias_name(proj[i]);
    free(want), free(name);
  }
  if (!rc && q->having) {
    connect_having h = {q->groups, (const char *const *)gcols, q->ngroups, shown_names,
                        (const char *const *)shown_cols, q->nitems, &aggs, &anames, &na};
    rc = connect_sql_having(&having, q->having, &h);
  }
  if (!rc) rc = qry_aggregate(op, *op, keys, q->ngroups, aggs, na), *op = rc ? NULL : *op;
  if (!rc && having) rc = qry_filter(op, *op, having), *op = rc ? NULL : *op;
  if (!rc) rc = qry_project(op, *op, proj, q->nitems, false), *op = rc ? NULL : *op;
  for (size_t i = 0; keys && i < q->ngroups; i++) ex_free(keys[i]);
  for (size_t i = 0; proj && i < q->nitems; i++) ex_free(proj[i]);
  for (size_t i = 0; anames && i < na; i++) free(anames[i]);
  for (size_t i = 0; shown_cols && i < q->nitems; i++) free(shown_cols[i]);
  for (size_t i = 0; gcols && i < q->ngroups; i++) free(gcols[i]);
  free(keys), free(proj), free(aggs), free(anames), free(shown_names), free(shown_cols), free(gcols);
  ex_free(having);
  return rc;
}

static int plan_source(qry_op **op, select_q *q, const connect_exec_opts *o) {
  return q->loc ? connect_plan_scan(op, q->loc, q->version, q->ts, q->where, o) : qry_range(op, 0, 1, 1, 0);
}

static int plan_project(qry_op **op, select_q *q) {
  ex_node **items = calloc(q->nitems + 1, sizeof *items);
  int rc = items ? 0 : OOM();
  for (size_t i = 0; !rc && i < q->nitems; i++)
    rc = q->items[i].star ? ex_new_star(&items[i], NULL) : ex_clone(&items[i], q->items[i].e);
  if (!rc) rc = qry_project(op, *op, items, q->nitems, false);
  else qry_free(*op), *op = NULL;
  for (size_t i = 0; items && i < q->nitems; i++) ex_free(items[i]);
  free(items);
  return rc;
}

/* Do the ORDER BY keys all resolve against s (the output's names and aliases)? */
static bool order_binds(const select_q *q, const arw_schema *s) {
  for (size_t i = 0; i < q->norder; i++) {
    const ex_node *k = ex_node_kind(q->order[i]) == EX_SORT ? ex_arg(q->order[i], 0) : q->order[i];
    ex_node *b = NULL;
    ex_bind_opts bo = EX_BIND_OPTS_INIT;
    int rc = ex_bind(&b, k, s, &bo);
    ex_free(b);
    if (rc) return dd_err_clear(), false;
  }
  return true;
}

static int plan_select(qry_op **out, select_q *q, const connect_exec_opts *o) {
  qry_op *op = NULL;
  int rc = plan_source(&op, q, o);
  bool agg = !rc && has_agg(q);
  if (!rc && agg) rc = plan_aggregate(&op, q);
  else if (!rc) rc = plan_project(&op, q);
  /* ORDER BY names the output (an alias, a selected column); else, with no aggregate, the
   * table's columns: then the sort goes below the projection */
  if (!rc && q->norder && !agg && !order_binds(q, qry_schema(op))) {
    qry_free(op), op = NULL;
    rc = plan_source(&op, q, o);
    if (!rc) rc = qry_sort(&op, op, q->order, q->norder);
    if (!rc) rc = plan_project(&op, q);
  } else if (!rc && q->norder) {
    rc = qry_sort(&op, op, q->order, q->norder);
  }
  if (!rc && q->distinct) rc = qry_dedup(&op, op, NULL, 0);
  if (!rc && q->offset) rc = qry_offset(&op, op, q->offset);
  if (!rc && q->limit >= 0) rc = qry_limit(&op, op, q->limit);
  if (rc) return qry_free(op), rc;
  *out = op;
  return 0;
}

/* ======================= maintenance ======================= */

static int sql_vacuum(qry_op **out, cur *c, const connect_exec_opts *o) {
  char *loc = NULL;
  dop_vacuum_opts vo = DOP_VACUUM_OPTS_INIT;
  vo.retention_check = o ? o->retention_check : true;
  int rc = connect_sql__table_loc(c, &loc, o);
  if (!rc && connect_sql__kw(c, "RETAIN")) {
    double h;
    if (!(rc = connect_sql__number(c, &h)) && !connect_sql__kw(c, "HOURS")) rc = connect_sql__syntax(c);
    if (!rc && !(h >= 0 && h <= CONNECT_MAX_RETENTION_HOURS))
      rc = dd_err_set(DD_EINVAL, "RETAIN: hours must be between 0 and %d", CONNECT_MAX_RETENTION_HOURS);
    vo.has_retention = true, vo.retention_hours = h;
  }
  if (!rc && connect_sql__kw(c, "DRY"))
    vo.dry_run = connect_sql__kw(c, "RUN") ? true : (rc = connect_sql__syntax(c), false);
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  dop_result *res = NULL;
  if (!rc) rc = dop_vacuum(&res, loc, &vo, NULL);
  free(loc);
  return connect_sql__result(out, res, rc);
}

/* A Delta Connect table named as SQL wrote it (connect_exec resolves and confines it). */
static Delta__Connect__DeltaTable named_table(char *name) {
  Delta__Connect__DeltaTable t = DELTA__CONNECT__DELTA_TABLE__INIT;
  t.access_type_case = DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_TABLE_OR_VIEW_NAME;
  t.table_or_view_name = name;
  return t;
}

/* Runs a Delta Connect relation built here (restore, history, detail, convert) through
 * connect_exec, which confines the table and checks the arguments. */
static int run_relation(qry_op **out, Delta__Connect__DeltaRelation *rel, const connect_exec_opts *o) {
  dop_result *res = NULL;
  int rc = connect_exec_relation(&res, rel, o);
  return connect_sql__result(out, res, rc);
}

static int sql_restore(qry_op **out, cur *c, const connect_exec_opts *o) {
  connect_sql__kw(c, "TABLE");
  char *name = NULL, *ts = NULL;
  int64_t v = -1;
  int rc = connect_sql__table_name(c, &name);
  if (!rc && !connect_sql__kw(c, "TO")) rc = connect_sql__syntax(c);
  bool by_version = !rc && connect_sql__kw(c, "VERSION");
  if (!rc && !by_version && !connect_sql__kw(c, "TIMESTAMP")) rc = connect_sql__syntax(c);
  if (!rc && (!connect_sql__kw(c, "AS") || !connect_sql__kw(c, "OF"))) rc = connect_sql__syntax(c);
  if (!rc) rc = by_version ? connect_sql__integer(c, &v) : connect_sql__string_lit(c, &ts);
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  Delta__Connect__DeltaTable t = named_table(name);
  Delta__Connect__RestoreTable r = DELTA__CONNECT__RESTORE_TABLE__INIT;
  r.table = &t;
  if (by_version) r.version_or_timestamp_case = DELTA__CONNECT__RESTORE_TABLE__VERSION_OR_TIMESTAMP_VERSION, r.version = v;
  else r.version_or_timestamp_case = DELTA__CONNECT__RESTORE_TABLE__VERSION_OR_TIMESTAMP_TIMESTAMP, r.timestamp = ts;
  Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
  rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_RESTORE_TABLE;
  rel.restore_table = &r;
  if (!rc) rc = run_relation(out, &rel, o);
  free(name), free(ts);
  return rc;
}

static int sql_describe(qry_op **out, cur *c, const connect_exec_opts *o) {
  bool history = connect_sql__kw(c, "HISTORY");
  char *loc = NULL;
  if (!history && !connect_sql__kw(c, "DETAIL")) { /* DESCRIBE [TABLE] t: its columns */
    connect_sql__kw(c, "TABLE");
    if (connect_sql__peek_kw(c, "EXTENDED") || connect_sql__peek_kw(c, "FORMATTED"))
      return dd_err_set(DD_EUNSUPPORTED, "DESCRIBE TABLE EXTENDED|FORMATTED is not supported by deltad");
    int rc = connect_sql__table_loc(c, &loc, o);
    if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
    if (!rc) rc = connect_sql_columns(out, loc, true);
    free(loc);
    return rc;
  }
  int64_t limit = 0;
  int rc = connect_sql__table_loc(c, &loc, o);
  if (!rc && history && connect_sql__kw(c, "LIMIT")) rc = connect_sql__integer(c, &limit);
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  dop_result *res = NULL;
  if (!rc) rc = history ? dop_history(&res, loc, (size_t)limit) : dop_detail(&res, loc);
  free(loc);
  return connect_sql__result(out, res, rc);
}

static int sql_convert(qry_op **out, cur *c, const connect_exec_opts *o) {
  if (!connect_sql__kw(c, "TO") || !connect_sql__kw(c, "DELTA")) return connect_sql__syntax(c);
  char *name = NULL, *parts = NULL;
  int rc = connect_sql__table_name(c, &name);
  if (!rc && connect_sql__kw(c, "PARTITIONED")) {
    if (!connect_sql__kw(c, "BY") || !connect_sql__punct(c, '(')) rc = connect_sql__syntax(c);
    connect_sql__ws(c);
    size_t st = c->pos, depth = 1;
    while (!rc && c->pos < c->len && depth) depth += c->s[c->pos] == '(' ? 1 : c->s[c->pos] == ')' ? -1 : 0, c->pos++;
    if (!rc && depth) rc = connect_sql__syntax(c);
    if (!rc && !(parts = strndup(c->s + st, c->pos - st - 1))) rc = OOM();
  }
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  Delta__Connect__ConvertToDelta cv = DELTA__CONNECT__CONVERT_TO_DELTA__INIT;
  cv.identifier = name;
  if (parts) cv.partition_schema_case = DELTA__CONNECT__CONVERT_TO_DELTA__PARTITION_SCHEMA_PARTITION_SCHEMA_STRING,
             cv.partition_schema_string = parts;
  Delta__Connect__DeltaRelation rel = DELTA__CONNECT__DELTA_RELATION__INIT;
  rel.relation_type_case = DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_CONVERT_TO_DELTA;
  rel.convert_to_delta = &cv;
  if (!rc) rc = run_relation(out, &rel, o);
  free(name), free(parts);
  return rc;
}

static int sql_alter(qry_op **out, cur *c, const connect_exec_opts *o) {
  if (!connect_sql__kw(c, "TABLE")) return connect_sql__syntax(c);
  char *loc = NULL, *feature = NULL;
  int rc = connect_sql__table_loc(c, &loc, o);
  if (!rc && connect_sql__kw(c, "CLUSTER")) {
    rc = connect_sql__alter_cluster(out, c, loc);
    free(loc);
    return rc;
  }
  bool add = !rc && connect_sql__kw(c, "ADD");
  bool drop = !rc && !add && connect_sql__kw(c, "DROP");
  if (!rc && !add && !drop) {
    bool set = connect_sql__kw(c, "SET");
    if (set || connect_sql__kw(c, "UNSET")) rc = connect_sql__alter_props(out, c, loc, set);
    else rc = connect_sql__syntax(c);
    free(loc);
    return rc;
  }
  if (!rc && !connect_sql__kw(c, "FEATURE")) rc = connect_sql__syntax(c);
  if (!rc) rc = connect_sql__ident(c, &feature);
  bool truncate = !rc && drop && connect_sql__kw(c, "TRUNCATE") &&
                  (connect_sql__kw(c, "HISTORY") || (rc = connect_sql__syntax(c), false));
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  dop_result *res = NULL;
  if (!rc) rc = add ? dop_add_feature(&res, loc, feature) : dop_drop_feature(&res, loc, feature, truncate);
  free(loc), free(feature);
  return connect_sql__result(out, res, rc);
}

static int sql_generate(qry_op **out, cur *c, const connect_exec_opts *o) {
  char *mode = NULL, *name = NULL;
  int rc = connect_sql__ident(c, &mode);
  if (!rc && (!connect_sql__kw(c, "FOR") || !connect_sql__kw(c, "TABLE"))) rc = connect_sql__syntax(c);
  if (!rc) rc = connect_sql__table_name(c, &name);
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  Delta__Connect__DeltaTable t = named_table(name);
  Delta__Connect__Generate g = DELTA__CONNECT__GENERATE__INIT;
  g.table = &t, g.mode = mode;
  Delta__Connect__DeltaCommand cmd = DELTA__CONNECT__DELTA_COMMAND__INIT;
  cmd.command_type_case = DELTA__CONNECT__DELTA_COMMAND__COMMAND_TYPE_GENERATE;
  cmd.generate = &g;
  dop_result *res = NULL;
  if (!rc) rc = connect_exec_command(&res, &cmd, o);
  free(mode), free(name);
  return connect_sql__result(out, res, rc);
}

/* SHOW TBLPROPERTIES: rows (key, value) of the table's configuration, as Spark's. */
static int sql_show_props(qry_op **out, cur *c, const connect_exec_opts *o) {
  char *loc = NULL, *key = NULL;
  if (connect_sql__kw(c, "COLUMNS")) { /* SHOW COLUMNS IN|FROM t */
    int rc = connect_sql__kw(c, "IN") || connect_sql__kw(c, "FROM") ? connect_sql__table_loc(c, &loc, o)
                                                                      : connect_sql__syntax(c);
    if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
    if (!rc) rc = connect_sql_columns(out, loc, false);
    free(loc);
    return rc;
  }
  if (!connect_sql__kw(c, "TBLPROPERTIES"))
    return dd_err_set(DD_EUNSUPPORTED, "SHOW: only SHOW TBLPROPERTIES and SHOW COLUMNS are supported");
  int rc = connect_sql__table_loc(c, &loc, o);
  if (!rc && connect_sql__punct(c, '(')) {
    if (!(rc = connect_sql__string_lit(c, &key)) && !connect_sql__punct(c, ')')) rc = connect_sql__syntax(c);
  }
  if (!rc && !connect_sql__at_end(c)) rc = connect_sql__syntax(c);
  dl_table *t = NULL;
  dl_snapshot *snap = NULL;
  arw_schema *s = NULL;
  arw_batch *b = NULL;
  int kid = 0, vid = 0;
  if (!rc && !(rc = dl_table_open(&t, loc))) rc = dl_snapshot_open(&snap, t, NULL);
  if (!rc) rc = arw_schema_new(&s);
  if (!rc) rc = arw_schema_add(s, ARW_ROOT, "key", ARW_UTF8, false, &kid);
  if (!rc) rc = arw_schema_add(s, ARW_ROOT, "value", ARW_UTF8, false, &vid);
  if (!rc) rc = arw_batch_new(&b, s);
  const char *cursor = rc ? NULL : dl_snapshot_metadata(snap)->configuration, *k, *v;
  bool found = false;
  while (!rc && cursor && dl_kv_next(&cursor, &k, &v)) {
    if (key && strcmp(key, k)) continue;
    found = true;
    if (!(rc = arw_append_str(b, kid, k, strlen(k)))) rc = arw_append_str(b, vid, v ? v : "", v ? strlen(v) : 0);
  }
  /* Delta adds the protocol: its versions and each table feature as supported */
  const dl_protocol *pr = rc ? NULL : dl_snapshot_protocol(snap);
  size_t nf = pr ? pr->num_reader_features + pr->num_writer_features : 0;
  for (size_t i = 0; !rc && pr && i < 2 + nf; i++) {
    char name[256], val[32] = "supported";
    if (i < 2) {
      snprintf(name, sizeof name, "delta.min%sVersion", i ? "Writer" : "Reader");
      snprintf(val, sizeof val, "%d", i ? pr->min_writer_version : pr->min_reader_version);
    } else {
      size_t j = i - 2;
      const char *f = j < pr->num_reader_features ? pr->reader_features[j] : pr->writer_features[j - pr->num_reader_features];
      bool dup = false; /* a reader-writer feature is in both lists */
      for (size_t r = 0; j >= pr->num_reader_features && r < pr->num_reader_features; r++) dup |= !strcmp(pr->reader_features[r], f);
      if (dup) continue;
      snprintf(name, sizeof name, "delta.feature.%s", f);
    }
    if (key && strcmp(key, name)) continue;
    found = true;
    if (!(rc = arw_append_str(b, kid, name, strlen(name)))) rc = arw_append_str(b, vid, val, strlen(val));
  }
  if (!rc && key && !found) { /* Spark answers the key with a note */
    char msg[512];
    snprintf(msg, sizeof msg, "Table %s does not have property: %s", loc, key);
    if (!(rc = arw_append_str(b, kid, key, strlen(key)))) rc = arw_append_str(b, vid, msg, strlen(msg));
  }
  dl_snapshot_free(snap);
  dl_table_free(t);
  free(loc), free(key);
  if (rc) return arw_batch_free(b), arw_schema_free(s), rc;
  return qry_local(out, s, &b, 1);
}

static int sql_optimize(qry_op **out, cur *c, const connect_exec_opts *o) {
  char *loc = NULL;
  int rc = connect_sql__table_loc(c, &loc, o);
  dop_result *res = NULL;
  connect_sql__ws(c);
  if (!rc && !connect_sql_optimize_hook) rc = dd_err_set(DD_EUNSUPPORTED, "OPTIMIZE is not available in this build of deltad");
  if (!rc) rc = connect_sql_optimize_hook(&res, loc, c->s + c->pos, o);
  free(loc);
  return connect_sql__result(out, res, rc);
}

/* DELETE FROM table ... / UPDATE table ...: the tails are connect_sql_dml.c's. */
static int sql_delete(qry_op **out, cur *c, const connect_exec_opts *o) {
  char *loc = NULL;
  int rc = connect_sql__kw(c, "FROM") ? connect_sql__table_loc(c, &loc, o) : connect_sql__syntax(c);
  dop_result *res = NULL;
  connect_sql__ws(c);
  if (!rc) rc = connect_sql_delete(&res, loc, c->s + c->pos, o);
  free(loc);
  return connect_sql__result(out, res, rc);
}

static int sql_update(qry_op **out, cur *c, const connect_exec_opts *o) {
  char *loc = NULL;
  int rc = connect_sql__table_loc(c, &loc, o);
  dop_result *res = NULL;
  connect_sql__ws(c);
  if (!rc) rc = connect_sql_update(&res, loc, c->s + c->pos, o);
  free(loc);
  return connect_sql__result(out, res, rc);
}

/* ======================= dispatch ======================= */

typedef int (*stmt_fn)(qry_op **out, cur *c, const connect_exec_opts *o);

static const struct {
  const char *kw;
  stmt_fn fn;
} STATEMENTS[] = {
    {"VACUUM", sql_vacuum},     {"RESTORE", sql_restore},   {"DESCRIBE", sql_describe},
    {"DESC", sql_describe},     {"CONVERT", sql_convert},   {"ALTER", sql_alter},
    {"GENERATE", sql_generate}, {"SHOW", sql_show_props},   {"OPTIMIZE", sql_optimize},
    {"DELETE", sql_delete},     {"UPDATE", sql_update},     {"CREATE", connect_sql__create},
    {"MERGE", connect_sql__merge},    {"INSERT", connect_sql__insert},
};

bool connect_sql_is_query(const char *sql) {
  cur c = {sql, 0, sql ? strlen(sql) : 0};
  return connect_sql__kw(&c, "SELECT");
}

int connect_sql_query(qry_op **out, const char *sql, const connect_exec_opts *opts, int depth) {
  *out = NULL;
  (void)depth;
  size_t len = sql ? strlen(sql) : 0;
  if (len > CONNECT_SQL_MAX_LEN) return dd_err_set(DD_EINVAL, "SQL statement longer than %d bytes", CONNECT_SQL_MAX_LEN);
  cur c = {sql ? sql : "", 0, len};
  if (connect_sql__kw(&c, "SELECT")) {
    select_q q = {0};
    int rc = parse_select(&c, &q, opts);
    if (!rc) rc = plan_select(out, &q, opts);
    select_free(&q);
    return rc;
  }
  for (size_t i = 0; i < sizeof STATEMENTS / sizeof STATEMENTS[0]; i++)
    if (connect_sql__kw(&c, STATEMENTS[i].kw)) return STATEMENTS[i].fn(out, &c, opts);
  connect_sql__ws(&c);
  static const char *const known[] = {"MERGE", "DROP", "WITH", "USE", "SET", NULL};
  for (size_t i = 0; known[i]; i++)
    if (connect_sql__peek_kw(&c, known[i]))
      return dd_err_set(DD_EUNSUPPORTED, "SQL statement %s is not supported by deltad", known[i]);
  return connect_sql__syntax(&c);
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
const char *connect_sql_command_text(const Spark__Connect__SqlCommand *c) {
  if (c->input && c->input->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_SQL) return c->input->sql->query;
  return c->sql && *c->sql ? c->sql : NULL;
}
#pragma GCC diagnostic pop
