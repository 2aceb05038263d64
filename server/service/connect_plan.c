/* connect_plan.c: spark.connect relations -> store/query operators (connect_plan.h).
 * Each relation builds its input first (bounded depth), then wraps it; a Filter directly
 * over a Delta read hands its predicate to the scan, whose data skipping then decides
 * which files are read. Expressions come through connect_expr.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/call/req_guard.h"
#include "server/service/connect_arrow.h"
#include "server/service/connect_expr.h"
#include "server/service/connect_plan.h"
#include "server/service/connect_sql.h"
#include "store/arrow/arrow_read.h"
#include "store/catalog/cat_store.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")
#define DELTA_RELATION_URL "delta.connect.DeltaRelation"

static int build(qry_op **out, const Spark__Connect__Relation *rel, const connect_exec_opts *o, int depth,
                 const ex_node *filter);

/* ======================= names and errors ======================= */

static int unsupported_rel(const Spark__Connect__Relation *rel) {
  const ProtobufCFieldDescriptor *f =
      rel->rel_type_case ? protobuf_c_message_descriptor_get_field(&spark__connect__relation__descriptor,
                                                                   (unsigned)rel->rel_type_case)
                         : NULL;
  if (f) return dd_err_set(DD_EUNSUPPORTED, "Spark relation '%s' is not supported by deltad", f->name);
  return dd_err_set(DD_EUNSUPPORTED, "Spark relation of a kind this server does not know (field %u) is not "
                    "supported by deltad", (unsigned)rel->rel_type_case);
}

static int need_input(const Spark__Connect__Relation *in, const char *what) {
  return in ? 0 : dd_err_set(DD_EINVAL, "%s: an input relation is required", what);
}

/* ======================= Delta sources ======================= */

/* What a relation over a Delta source hands down to its scan: a predicate (it filters the
 * rows and skips files), or the top-level columns a projection of plain columns reads (so
 * only their column chunks are read: in object storage, by range). Never both. */
typedef struct plan_push {
  const ex_node *filter;
  const char *const *cols;
  size_t ncols;
} plan_push;

/* Whether the names of p->cols are distinct top-level fields of snap, spelt as the schema
 * has them (anything else is left to the projection above, which reads every column). */
static bool push_cols_exact(const plan_push *p, const dl_snapshot *snap) {
  const dl_schema *sc = dl_snapshot_schema(snap);
  for (size_t i = 0; i < p->ncols; i++) {
    const dl_field *f = dl_schema_field(sc, p->cols[i]);
    if (!f || strcmp(f->name, p->cols[i])) return false;
    for (size_t j = 0; j < i; j++)
      if (!strcmp(p->cols[j], p->cols[i])) return false; /* (the scan reads each once) */
  }
  return p->ncols > 0;
}

static int scan_at(qry_op **out, const char *location, int64_t version, const char *timestamp,
                   const plan_push *push, const connect_exec_opts *opts) {
  const ex_node *filter = push->filter;
  *out = NULL;
  dl_table *t = NULL;
  dl_snapshot *snap = NULL;
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  char **roots = NULL;
  size_t nroots = 0;
  int rc = 0;
  so.version = version;
  if (version < 0 && timestamp) {
    /* Spark writes "2024-01-02 03:04:05": the ISO 8601 parser wants the 'T' */
    char iso[64];
    snprintf(iso, sizeof iso, "%s", timestamp);
    char *sp = strlen(timestamp) < sizeof iso ? strchr(iso, ' ') : NULL;
    if (sp && sp - iso == 10) *sp = 'T';
    if ((rc = dl_parse_timestamp(strlen(timestamp) < sizeof iso ? iso : timestamp, &so.timestamp_ms)))
      return dd_err_wrap(rc, "timestampAsOf '%s'", timestamp);
  }
  if (!(rc = dl_table_open(&t, location))) rc = dl_snapshot_open(&snap, t, &so);
  if (!rc) rc = connect_exec_local_roots(&roots, &nroots, opts);
  if (rc) {
    dl_snapshot_free(snap);
    dl_table_free(t);
    return rc;
  }
  qry_scan_opts qo = QRY_SCAN_OPTS_INIT;
  qo.filter = filter;
  qo.roots = (const char *const *)roots;
  qo.num_roots = nroots;
  if (!filter && push_cols_exact(push, snap)) {
    qo.columns = push->cols;
    qo.num_columns = push->ncols;
  }
  rc = qry_scan(out, t, snap, &qo);
  cat_roots_free(roots, nroots);
  return rc;
}

int connect_plan_scan(qry_op **out, const char *location, int64_t version, const char *timestamp,
                      const ex_node *filter, const connect_exec_opts *opts) {
  plan_push p = {filter, NULL, 0};
  return scan_at(out, location, version, timestamp, &p, opts);
}

/* Options are case-insensitive, as Spark's. */
static const char *read_option(const Spark__Connect__Read__DataSource *ds, const char *key) {
  for (size_t i = 0; i < ds->n_options; i++)
    if (!strcasecmp(ds->options[i]->key, key)) return ds->options[i]->value;
  return NULL;
}

static int time_travel(int64_t *version, const char **ts, const char *v, const char *t) {
  *version = -1, *ts = NULL;
  if (v && t) return dd_err_set(DD_EINVAL, "[DELTA_MULTIPLE_TIME_TRAVEL_SYNTAX] versionAsOf and timestampAsOf "
                                "cannot both be given");
  if (v) {
    char *end = NULL;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || n < 0) return dd_err_set(DD_EINVAL, "versionAsOf '%s' is not a version number", v);
    *version = n;
  }
  *ts = t;
  return 0;
}

static int build_read(qry_op **out, const Spark__Connect__Read *r, const connect_exec_opts *o, const plan_push *push) {
  char *loc = NULL;
  int64_t version = -1;
  const char *ts = NULL;
  int rc = 0;
  if (r->is_streaming) return dd_err_set(DD_EUNSUPPORTED, "streaming reads are not supported by deltad");
  if (r->read_type_case == SPARK__CONNECT__READ__READ_TYPE_NAMED_TABLE) {
    const Spark__Connect__Read__NamedTable *nt = r->named_table;
    const char *v = NULL, *t = NULL;
    for (size_t i = 0; i < nt->n_options; i++) {
      if (!strcasecmp(nt->options[i]->key, "versionAsOf")) v = nt->options[i]->value;
      if (!strcasecmp(nt->options[i]->key, "timestampAsOf")) t = nt->options[i]->value;
    }
    if (!(rc = time_travel(&version, &ts, v, t))) rc = connect_exec_name_location(&loc, nt->unparsed_identifier, o);
  } else if (r->read_type_case == SPARK__CONNECT__READ__READ_TYPE_DATA_SOURCE) {
    const Spark__Connect__Read__DataSource *ds = r->data_source;
    const char *fmt = ds->_format_case ? ds->format : "parquet";
    if (strcasecmp(fmt, "delta"))
      return dd_err_set(DD_EUNSUPPORTED, "data source format '%s' is not supported by deltad (it reads 'delta')", fmt);
    if (ds->n_paths > 1) return dd_err_set(DD_EUNSUPPORTED, "reading several Delta paths at once is not supported");
    const char *path = ds->n_paths ? ds->paths[0] : read_option(ds, "path");
    if (!path || !*path) return dd_err_set(DD_EINVAL, "read: a path is required ('load(path)')");
    rc = time_travel(&version, &ts, read_option(ds, "versionAsOf"), read_option(ds, "timestampAsOf"));
    if (!rc) rc = connect_exec_name_location(&loc, path, o);
  } else {
    return dd_err_set(DD_EINVAL, "read: a named table or a data source is required");
  }
  if (!rc) rc = scan_at(out, loc, version, ts, push, o);
  free(loc);
  return rc;
}

/* A Delta Connect relation: Scan is a source; the others run now (store/deltaops) and
 * become one local batch. */
static int build_delta(qry_op **out, const Google__Protobuf__Any *a, const connect_exec_opts *o, const plan_push *push) {
  const char *slash = a && a->type_url ? strrchr(a->type_url, '/') : NULL;
  if (!slash || strcmp(slash + 1, DELTA_RELATION_URL))
    return dd_err_set(DD_EUNSUPPORTED, "extension '%s' is not type.googleapis.com/%s",
                      a && a->type_url ? a->type_url : "", DELTA_RELATION_URL);
  ProtobufCMessage *m = NULL;
  int rc = rg_pb_unpack(&m, &delta__connect__delta_relation__descriptor, a->value.data, a->value.len);
  if (rc) return dd_err_wrap(rc, "the plan's extension (Any %s)", DELTA_RELATION_URL);
  Delta__Connect__DeltaRelation *rel = (Delta__Connect__DeltaRelation *)m;
  char *loc = NULL;
  dop_result *res = NULL;
  arw_schema *s = NULL;
  arw_batch *b = NULL;
  if (rel->relation_type_case == DELTA__CONNECT__DELTA_RELATION__RELATION_TYPE_SCAN) {
    if (!(rc = connect_exec_table_location(&loc, rel->scan->table, o)))
      rc = scan_at(out, loc, -1, NULL, push, o);
  } else {
    rc = connect_exec_relation(&res, rel, o);
    if (!rc) rc = connect_result_batch(&s, &b, res);
    if (!rc) rc = qry_local(out, s, &b, 1), s = NULL, b = NULL;
    if (!rc && push->filter) rc = qry_filter(out, *out, push->filter);
  }
  arw_batch_free(b);
  arw_schema_free(s);
  dop_result_free(res);
  free(loc);
  protobuf_c_message_free_unpacked(m, NULL);
  return rc;
}

/* ======================= local sources ======================= */

static int build_local(qry_op **out, const Spark__Connect__LocalRelation *l) {
  if (!l->data.len) return dd_err_set(DD_EUNSUPPORTED, "LocalRelation without Arrow data (a schema alone) is not supported");
  arw_reader *r = NULL;
  arw_batch **bs = NULL, *b = NULL;
  size_t n = 0, cap = 0;
  arw_schema *copy = NULL;
  int rc = arw_reader_open(&r, l->data.data, l->data.len);
  /* the batches borrow the reader's schema: copy it for the operator, which outlives r */
  if (!rc) rc = arw_schema_new(&copy);
  const arw_schema *rs = rc ? NULL : arw_reader_schema(r);
  for (size_t c = 0; !rc && c < arw_schema_ncolumns(rs); c++)
    rc = arw_schema_copy_field(copy, ARW_ROOT, rs, arw_schema_column(rs, c), NULL, NULL);
  while (!rc && !(rc = arw_reader_next(r, &b)) && b) {
    size_t rows = arw_batch_rows(b);
    arw_batch *c = NULL;
    size_t *idx = malloc((rows ? rows : 1) * sizeof *idx);
    if (!idx) rc = OOM();
    for (size_t i = 0; !rc && i < rows; i++) idx[i] = i;
    if (!rc) rc = arw_batch_new(&c, copy);
    if (!rc) rc = arw_batch_append_rows(c, b, idx, rows);
    free(idx);
    arw_batch_free(b), b = NULL;
    if (!rc && n == cap) {
      arw_batch **nb = realloc(bs, (cap = cap ? 2 * cap : 4) * sizeof *nb);
      if (!nb) rc = OOM();
      else bs = nb;
    }
    if (!rc) bs[n++] = c;
    else arw_batch_free(c);
  }
  arw_reader_free(r);
  if (rc) {
    for (size_t i = 0; i < n; i++) arw_batch_free(bs[i]);
    free(bs);
    arw_schema_free(copy);
    return rc;
  }
  rc = qry_local(out, copy, bs, n);
  free(bs);
  return rc;
}

static int build_range(qry_op **out, const Spark__Connect__Range *r) {
  return qry_range(out, r->_start_case ? r->start : 0, r->end, r->step, 0);
}

/* ShowString: runs the input now into one row of one string column, "show_string". */
static int build_show(qry_op **out, const Spark__Connect__ShowString *s, const connect_exec_opts *o, int depth) {
  qry_op *in = NULL;
  char *text = NULL;
  arw_schema *sch = NULL;
  arw_batch *b = NULL;
  int id = 0;
  int rc = need_input(s->input, "show_string");
  if (!rc) rc = build(&in, s->input, o, depth + 1, NULL);
  if (!rc) rc = qry_show_string(&text, in, s->num_rows, s->truncate, s->vertical);
  qry_free(in);
  if (!rc) rc = arw_schema_new(&sch);
  if (!rc) rc = arw_schema_add(sch, ARW_ROOT, "show_string", ARW_UTF8, false, &id);
  if (!rc) rc = arw_batch_new(&b, sch);
  if (!rc) rc = arw_append_str(b, id, text, strlen(text));
  free(text);
  if (rc) {
    arw_batch_free(b);
    arw_schema_free(sch);
    return rc;
  }
  return qry_local(out, sch, &b, 1);
}

/* ======================= expressions ======================= */

static void free_exprs(ex_node **e, size_t n) {
  for (size_t i = 0; e && i < n; i++) ex_free(e[i]);
  free(e);
}

static int convert_all(ex_node ***out, Spark__Connect__Expression *const *in, size_t n) {
  *out = calloc(n + 1, sizeof **out);
  if (!*out) return OOM();
  for (size_t i = 0; i < n; i++) {
    int rc = connect_expr_from_proto(&(*out)[i], in[i]);
    if (rc) return free_exprs(*out, n), *out = NULL, rc;
  }
  return 0;
}

static int sort_key(ex_node **out, const Spark__Connect__Expression__SortOrder *so) {
  Spark__Connect__Expression e = SPARK__CONNECT__EXPRESSION__INIT;
  e.expr_type_case = SPARK__CONNECT__EXPRESSION__EXPR_TYPE_SORT_ORDER;
  e.sort_order = (Spark__Connect__Expression__SortOrder *)so;
  return connect_expr_from_proto(out, &e);
}

static int build_sort(qry_op **out, qry_op *in, const Spark__Connect__Sort *s) {
  ex_node **keys = calloc(s->n_order + 1, sizeof *keys);
  int rc = keys ? 0 : OOM();
  for (size_t i = 0; !rc && i < s->n_order; i++) rc = sort_key(&keys[i], s->order[i]);
  if (!rc) rc = qry_sort(out, in, keys, s->n_order);
  else qry_free(in);
  free_exprs(keys, s->n_order);
  return rc;
}

/* One aggregate expression: [alias(] fn(args) [)], fn one of qry_agg_lookup's. */
static int agg_item(qry_agg *a, ex_node **arg, char **name, const Spark__Connect__Expression *e) {
  *arg = NULL, *name = NULL;
  memset(a, 0, sizeof *a);
  if (e && e->expr_type_case == SPARK__CONNECT__EXPRESSION__EXPR_TYPE_ALIAS && e->alias->n_name == 1) {
    if (!(*name = strdup(e->alias->name[0]))) return OOM();
    e = e->alias->expr;
  }
  if (!e || e->expr_type_case != SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_FUNCTION)
    return dd_err_set(DD_EUNSUPPORTED, "aggregate: only count, sum, min, max and avg of expressions are supported");
  const Spark__Connect__Expression__UnresolvedFunction *f = e->unresolved_function;
  if (qry_agg_lookup(&a->fn, f->function_name))
    return dd_err_set(DD_EUNSUPPORTED, "aggregate function '%s' is not supported by deltad (count, sum, min, max, "
                      "avg are)", f->function_name);
  if (f->n_arguments > 1) return dd_err_set(DD_EUNSUPPORTED, "%s with %zu arguments is not supported", f->function_name, f->n_arguments);
  a->distinct = f->is_distinct;
  int rc = f->n_arguments ? connect_expr_from_proto(arg, f->arguments[0]) : 0;
  a->arg = *arg;
  a->name = *name;
  return rc;
}

static int build_aggregate(qry_op **out, qry_op *in, const Spark__Connect__Aggregate *g) {
  if (g->group_type != SPARK__CONNECT__AGGREGATE__GROUP_TYPE__GROUP_TYPE_GROUPBY &&
      g->group_type != SPARK__CONNECT__AGGREGATE__GROUP_TYPE__GROUP_TYPE_UNSPECIFIED) {
    qry_free(in);
    return dd_err_set(DD_EUNSUPPORTED, "aggregate: rollup, cube, pivot and grouping sets are not supported");
  }
  ex_node **groups = NULL, **args = calloc(g->n_aggregate_expressions + 1, sizeof *args);
  char **names = calloc(g->n_aggregate_expressions + 1, sizeof *names);
  qry_agg *aggs = calloc(g->n_aggregate_expressions + 1, sizeof *aggs);
  int rc = args && names && aggs ? convert_all(&groups, g->grouping_expressions, g->n_grouping_expressions) : OOM();
  for (size_t i = 0; !rc && i < g->n_aggregate_expressions; i++)
    rc = agg_item(&aggs[i], &args[i], &names[i], g->aggregate_expressions[i]);
  if (!rc) rc = qry_aggregate(out, in, groups, g->n_grouping_expressions, aggs, g->n_aggregate_expressions);
  else qry_free(in);
  free_exprs(groups, g->n_grouping_expressions);
  free_exprs(args, g->n_aggregate_expressions);
  for (size_t i = 0; names && i < g->n_aggregate_expressions; i++) free(names[i]);
  free(names);
  free(aggs);
  return rc;
}

static int build_with_columns(qry_op **out, qry_op *in, const Spark__Connect__WithColumns *w) {
  ex_node **e = calloc(w->n_aliases + 1, sizeof *e);
  int rc = e ? 0 : OOM();
  for (size_t i = 0; !rc && i < w->n_aliases; i++) {
    const Spark__Connect__Expression__Alias *a = w->aliases[i];
    ex_node *v = NULL;
    if (a->n_name != 1) rc = dd_err_set(DD_EINVAL, "withColumns: each alias needs exactly one name");
    if (!rc) rc = connect_expr_from_proto(&v, a->expr);
    if (!rc) rc = ex_new_alias(&e[i], v, a->name[0]);
  }
  if (!rc) rc = qry_project(out, in, e, w->n_aliases, true);
  else qry_free(in);
  free_exprs(e, w->n_aliases);
  return rc;
}

/* Older clients send the deprecated map instead of `renames`. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static int build_renamed(qry_op **out, qry_op *in, const Spark__Connect__WithColumnsRenamed *w) {
  size_t n = w->n_renames ? w->n_renames : w->n_rename_columns_map;
  const char **from = calloc(n + 1, sizeof *from), **to = calloc(n + 1, sizeof *to);
  int rc = from && to ? 0 : OOM();
  for (size_t i = 0; !rc && i < n; i++) {
    from[i] = w->n_renames ? w->renames[i]->col_name : w->rename_columns_map[i]->key;
    to[i] = w->n_renames ? w->renames[i]->new_col_name : w->rename_columns_map[i]->value;
  }
  if (!rc) rc = qry_rename(out, in, from, to, n);
  else qry_free(in);
  free(from), free(to);
  return rc;
}
#pragma GCC diagnostic pop

/* Drop: the input's columns except the named ones (names or plain column expressions). */
static int build_drop(qry_op **out, qry_op *in, const Spark__Connect__Drop *d) {
  const arw_schema *s = qry_schema(in);
  size_t nc = arw_schema_ncolumns(s), k = 0;
  ex_node **keep = calloc(nc + 1, sizeof *keep);
  int rc = keep ? 0 : OOM();
  for (size_t c = 0; !rc && c < nc; c++) {
    const char *name = arw_field_name(s, arw_schema_column(s, c));
    bool drop = false;
    for (size_t i = 0; i < d->n_column_names; i++) drop |= !strcasecmp(d->column_names[i], name);
    for (size_t i = 0; i < d->n_columns; i++) {
      const Spark__Connect__Expression *e = d->columns[i];
      if (e->expr_type_case == SPARK__CONNECT__EXPRESSION__EXPR_TYPE_UNRESOLVED_ATTRIBUTE)
        drop |= !strcasecmp(e->unresolved_attribute->unparsed_identifier, name);
    }
    if (!drop) rc = ex_new_column(&keep[k++], &name, 1);
  }
  if (!rc) rc = qry_project(out, in, keep, k, false);
  else qry_free(in);
  free_exprs(keep, k);
  return rc;
}

static int build_dedup(qry_op **out, qry_op *in, const Spark__Connect__Deduplicate *d) {
  if (d->_within_watermark_case && d->within_watermark) {
    qry_free(in);
    return dd_err_set(DD_EUNSUPPORTED, "dropDuplicatesWithinWatermark is not supported (no streaming)");
  }
  bool all = (d->_all_columns_as_keys_case && d->all_columns_as_keys) || !d->n_column_names;
  return qry_dedup(out, in, all ? NULL : (const char *const *)d->column_names, all ? 0 : d->n_column_names);
}

/* ======================= the dispatch ======================= */

/* The input relation of a relation that has one (NULL otherwise). */
static const Spark__Connect__Relation *input_of(const Spark__Connect__Relation *r) {
  switch (r->rel_type_case) {
    case SPARK__CONNECT__RELATION__REL_TYPE_PROJECT: return r->project->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_FILTER: return r->filter->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_SORT: return r->sort->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_LIMIT: return r->limit->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_OFFSET: return r->offset->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_AGGREGATE: return r->aggregate->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_DEDUPLICATE: return r->deduplicate->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_SUBQUERY_ALIAS: return r->subquery_alias->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_TO_DF: return r->to_df->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_WITH_COLUMNS_RENAMED: return r->with_columns_renamed->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_WITH_COLUMNS: return r->with_columns->input;
    case SPARK__CONNECT__RELATION__REL_TYPE_DROP: return r->drop->input;
    default: return NULL;
  }
}

/* A relation kind with an input (which may be missing in a bad plan). */
static bool is_wrapper(const Spark__Connect__Relation *r) {
  switch (r->rel_type_case) {
    case SPARK__CONNECT__RELATION__REL_TYPE_PROJECT: case SPARK__CONNECT__RELATION__REL_TYPE_SORT:
    case SPARK__CONNECT__RELATION__REL_TYPE_LIMIT: case SPARK__CONNECT__RELATION__REL_TYPE_OFFSET:
    case SPARK__CONNECT__RELATION__REL_TYPE_AGGREGATE: case SPARK__CONNECT__RELATION__REL_TYPE_DEDUPLICATE:
    case SPARK__CONNECT__RELATION__REL_TYPE_SUBQUERY_ALIAS: case SPARK__CONNECT__RELATION__REL_TYPE_TO_DF:
    case SPARK__CONNECT__RELATION__REL_TYPE_WITH_COLUMNS_RENAMED: case SPARK__CONNECT__RELATION__REL_TYPE_WITH_COLUMNS:
    case SPARK__CONNECT__RELATION__REL_TYPE_DROP: return true;
    default: return false;
  }
}

static int wrap(qry_op **out, qry_op *in, const Spark__Connect__Relation *r) {
  int rc = 0;
  ex_node *e = NULL, **es = NULL;
  switch (r->rel_type_case) {
    case SPARK__CONNECT__RELATION__REL_TYPE_FILTER:
      if (!(rc = connect_expr_from_proto(&e, r->filter->condition))) return rc = qry_filter(out, in, e), ex_free(e), rc;
      break;
    case SPARK__CONNECT__RELATION__REL_TYPE_PROJECT:
      if (!(rc = convert_all(&es, r->project->expressions, r->project->n_expressions))) {
        rc = qry_project(out, in, es, r->project->n_expressions, false);
        free_exprs(es, r->project->n_expressions);
        return rc;
      }
      break;
    case SPARK__CONNECT__RELATION__REL_TYPE_SORT: return build_sort(out, in, r->sort);
    case SPARK__CONNECT__RELATION__REL_TYPE_LIMIT: return qry_limit(out, in, r->limit->limit);
    case SPARK__CONNECT__RELATION__REL_TYPE_OFFSET: return qry_offset(out, in, r->offset->offset);
    case SPARK__CONNECT__RELATION__REL_TYPE_AGGREGATE: return build_aggregate(out, in, r->aggregate);
    case SPARK__CONNECT__RELATION__REL_TYPE_DEDUPLICATE: return build_dedup(out, in, r->deduplicate);
    case SPARK__CONNECT__RELATION__REL_TYPE_SUBQUERY_ALIAS: *out = in; return 0;
    case SPARK__CONNECT__RELATION__REL_TYPE_TO_DF:
      return qry_rename(out, in, NULL, (const char *const *)r->to_df->column_names, r->to_df->n_column_names);
    case SPARK__CONNECT__RELATION__REL_TYPE_WITH_COLUMNS_RENAMED: return build_renamed(out, in, r->with_columns_renamed);
    case SPARK__CONNECT__RELATION__REL_TYPE_WITH_COLUMNS: return build_with_columns(out, in, r->with_columns);
    case SPARK__CONNECT__RELATION__REL_TYPE_DROP: return build_drop(out, in, r->drop);
    default: rc = unsupported_rel(r);
  }
  qry_free(in);
  return rc;
}

#define PLAN_PUSH_MAX_COLS 256

/* A projection of plain top-level columns straight over a Delta source: the scan reads
 * just those columns (*done), the projection above names them. Anything else (an
 * expression, a nested or qualified name, a filter between) is left to build (!*done). */
static int build_project_pushed(qry_op **out, const Spark__Connect__Relation *rel,
                                const connect_exec_opts *o, bool *done) {
  *done = false;
  if (rel->rel_type_case != SPARK__CONNECT__RELATION__REL_TYPE_PROJECT) return 0;
  const Spark__Connect__Relation *in = rel->project->input;
  size_t n = rel->project->n_expressions;
  if (!in || !n || n > PLAN_PUSH_MAX_COLS || (in->rel_type_case != SPARK__CONNECT__RELATION__REL_TYPE_READ &&
                                              in->rel_type_case != SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION))
    return 0;
  ex_node **es = NULL;
  const char *names[PLAN_PUSH_MAX_COLS];
  if (convert_all(&es, rel->project->expressions, n)) { /* build reports it */
    dd_err_clear();
    return 0;
  }
  bool plain = true;
  for (size_t i = 0; plain && i < n; i++) {
    size_t np = 0;
    const char *const *parts = ex_node_kind(es[i]) == EX_COLUMN ? ex_column_parts(es[i], &np) : NULL;
    plain = parts && np == 1;
    if (plain) names[i] = parts[0];
  }
  qry_op *child = NULL;
  plan_push push = {NULL, names, n};
  int rc = 0;
  if (plain) {
    *done = true;
    rc = in->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_READ ? build_read(&child, in->read, o, &push)
                                                                       : build_delta(&child, in->extension, o, &push);
    if (!rc) rc = qry_project(out, child, es, n, false);
  }
  free_exprs(es, n);
  return rc;
}

static int build(qry_op **out, const Spark__Connect__Relation *rel, const connect_exec_opts *o, int depth,
                 const ex_node *filter) {
  *out = NULL;
  if (!rel) return dd_err_set(DD_EINVAL, "relation: required");
  if (depth > CONNECT_PLAN_MAX_DEPTH)
    return dd_err_set(DD_EINVAL, "the plan nests relations deeper than %d levels", CONNECT_PLAN_MAX_DEPTH);
  int rc = 0;
  plan_push push = {filter, NULL, 0};
  bool done = false;
  if (!filter && (rc = build_project_pushed(out, rel, o, &done))) return rc;
  if (done) return 0;
  switch (rel->rel_type_case) {
    case SPARK__CONNECT__RELATION__REL_TYPE_READ: return build_read(out, rel->read, o, &push);
    case SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION: return build_delta(out, rel->extension, o, &push);
    case SPARK__CONNECT__RELATION__REL_TYPE_LOCAL_RELATION: rc = build_local(out, rel->local_relation); break;
    case SPARK__CONNECT__RELATION__REL_TYPE_RANGE: rc = build_range(out, rel->range); break;
    case SPARK__CONNECT__RELATION__REL_TYPE_SHOW_STRING: rc = build_show(out, rel->show_string, o, depth); break;
    case SPARK__CONNECT__RELATION__REL_TYPE_SQL: rc = connect_sql_query(out, rel->sql->query, o, depth); break;
    case SPARK__CONNECT__RELATION__REL_TYPE_FILTER: {
      /* over a Delta read the predicate also skips files; over anything else it filters */
      ex_node *pred = NULL;
      const Spark__Connect__Relation *in = rel->filter->input;
      if ((rc = need_input(in, "filter")) || (rc = connect_expr_from_proto(&pred, rel->filter->condition))) return rc;
      if (!filter && (in->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_READ ||
                      in->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_EXTENSION))
        rc = build(out, in, o, depth + 1, pred);
      else if (!(rc = build(out, in, o, depth + 1, NULL)))
        rc = qry_filter(out, *out, pred);
      ex_free(pred);
      break;
    }
    default: {
      const Spark__Connect__Relation *in = input_of(rel);
      if (!in) return is_wrapper(rel) ? need_input(NULL, "relation") : unsupported_rel(rel);
      qry_op *child = NULL;
      if (!(rc = build(&child, in, o, depth + 1, NULL))) rc = wrap(out, child, rel);
    }
  }
  if (!rc && filter) rc = qry_filter(out, *out, filter);
  return rc;
}

int connect_plan_build_at(qry_op **out, const Spark__Connect__Relation *rel, const connect_exec_opts *opts, int depth) {
  return build(out, rel, opts, depth, NULL);
}

int connect_plan_build(qry_op **out, const Spark__Connect__Relation *rel, const connect_exec_opts *opts) {
  return build(out, rel, opts, 0, NULL);
}

bool connect_plan_is_local(const Spark__Connect__Relation *rel) {
  for (int d = 0; rel && d <= CONNECT_PLAN_MAX_DEPTH; d++) {
    if (rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_LOCAL_RELATION ||
        rel->rel_type_case == SPARK__CONNECT__RELATION__REL_TYPE_RANGE)
      return true;
    rel = input_of(rel);
  }
  return false;
}

/* ======================= AnalyzePlan ======================= */

static void *new_msg(const ProtobufCMessageDescriptor *d) {
  void *m = calloc(1, d->sizeof_message);
  if (m) protobuf_c_message_init(d, m);
  return m;
}

#define LEAF(field, kind, desc) \
  d->kind_case = SPARK__CONNECT__DATA_TYPE__KIND_##kind, ok = (d->field = new_msg(&desc)) != NULL

static Spark__Connect__DataType *field_type(const arw_schema *s, int id) {
  Spark__Connect__DataType *d = new_msg(&spark__connect__data_type__descriptor);
  if (!d) return NULL;
  bool ok = false;
  switch (arw_field_kind(s, id)) {
    case ARW_UTF8: LEAF(string, STRING, spark__connect__data_type__string__descriptor); break;
    case ARW_BINARY: LEAF(binary, BINARY, spark__connect__data_type__binary__descriptor); break;
    case ARW_BOOL: LEAF(boolean, BOOLEAN, spark__connect__data_type__boolean__descriptor); break;
    case ARW_INT8: LEAF(byte, BYTE, spark__connect__data_type__byte__descriptor); break;
    case ARW_INT16: LEAF(short_, SHORT, spark__connect__data_type__short__descriptor); break;
    case ARW_INT32: LEAF(integer, INTEGER, spark__connect__data_type__integer__descriptor); break;
    case ARW_INT64: LEAF(long_, LONG, spark__connect__data_type__long__descriptor); break;
    case ARW_FLOAT32: LEAF(float_, FLOAT, spark__connect__data_type__float__descriptor); break;
    case ARW_FLOAT64: LEAF(double_, DOUBLE, spark__connect__data_type__double__descriptor); break;
    case ARW_DATE32: LEAF(date, DATE, spark__connect__data_type__date__descriptor); break;
    case ARW_TIMESTAMP: LEAF(timestamp_ntz, TIMESTAMP_NTZ, spark__connect__data_type__timestamp_ntz__descriptor); break;
    case ARW_TIMESTAMP_UTC: LEAF(timestamp, TIMESTAMP, spark__connect__data_type__timestamp__descriptor); break;
    case ARW_NULL: LEAF(null, NULL, spark__connect__data_type__null__descriptor); break;
    case ARW_DECIMAL128:
      LEAF(decimal, DECIMAL, spark__connect__data_type__decimal__descriptor);
      if (ok) {
        d->decimal->_precision_case = SPARK__CONNECT__DATA_TYPE__DECIMAL___PRECISION_PRECISION;
        d->decimal->precision = arw_field_precision(s, id);
        d->decimal->_scale_case = SPARK__CONNECT__DATA_TYPE__DECIMAL___SCALE_SCALE;
        d->decimal->scale = arw_field_scale(s, id);
      }
      break;
    case ARW_LIST:
      LEAF(array, ARRAY, spark__connect__data_type__array__descriptor);
      if (ok) {
        int e = arw_field_child(s, id, 0);
        d->array->contains_null = arw_field_nullable(s, e);
        ok = (d->array->element_type = field_type(s, e)) != NULL;
      }
      break;
    case ARW_MAP:
      LEAF(map, MAP, spark__connect__data_type__map__descriptor);
      if (ok) {
        int k = arw_field_child(s, id, 0), v = arw_field_child(s, id, 1);
        d->map->value_contains_null = arw_field_nullable(s, v);
        d->map->key_type = field_type(s, k);
        d->map->value_type = field_type(s, v);
        ok = d->map->key_type && d->map->value_type;
      }
      break;
    case ARW_STRUCT: {
      LEAF(struct_, STRUCT, spark__connect__data_type__struct__descriptor);
      int n = arw_field_nchildren(s, id);
      if (ok) ok = (d->struct_->fields = calloc((size_t)n + 1, sizeof *d->struct_->fields)) != NULL;
      for (int c = 0; ok && c < n; c++) {
        int ch = arw_field_child(s, id, c);
        Spark__Connect__DataType__StructField *f = new_msg(&spark__connect__data_type__struct_field__descriptor);
        if (!f) { ok = false; break; }
        d->struct_->fields[d->struct_->n_fields++] = f;
        f->nullable = arw_field_nullable(s, ch);
        ok = (f->name = strdup(arw_field_name(s, ch))) && (f->data_type = field_type(s, ch));
      }
      break;
    }
    default: break;
  }
  if (!ok) {
    protobuf_c_message_free_unpacked(&d->base, NULL);
    return NULL;
  }
  return d;
}

int connect_plan_datatype(Spark__Connect__DataType **out, const arw_schema *s) {
  /* the row type: a struct of the top-level columns (built as a struct field tree) */
  Spark__Connect__DataType *d = new_msg(&spark__connect__data_type__descriptor);
  size_t n = arw_schema_ncolumns(s);
  bool ok = d != NULL;
  if (ok) LEAF(struct_, STRUCT, spark__connect__data_type__struct__descriptor);
  if (ok) ok = (d->struct_->fields = calloc(n + 1, sizeof *d->struct_->fields)) != NULL;
  for (size_t c = 0; ok && c < n; c++) {
    int id = arw_schema_column(s, c);
    Spark__Connect__DataType__StructField *f = new_msg(&spark__connect__data_type__struct_field__descriptor);
    if (!f) { ok = false; break; }
    d->struct_->fields[d->struct_->n_fields++] = f;
    f->nullable = arw_field_nullable(s, id);
    ok = (f->name = strdup(arw_field_name(s, id))) && (f->data_type = field_type(s, id));
  }
  if (!ok) {
    if (d) protobuf_c_message_free_unpacked(&d->base, NULL);
    return OOM();
  }
  *out = d;
  return 0;
}

int connect_plan_explain(char **out, const qry_op *op) {
  size_t len = 0;
  FILE *f = open_memstream(out, &len);
  if (!f) return OOM();
  fputs("== Physical Plan ==\n", f);
  for (int d = 0; op; d++, op = qry_input(op)) {
    for (int i = 1; i < d; i++) fputs("   ", f);
    fprintf(f, "%s%s\n", d ? "+- " : "", qry_label(op));
  }
  fputc('\n', f);
  return fclose(f) ? OOM() : 0;
}
