/* opt_result.c: OPTIMIZE's metrics as Delta's OptimizeMetrics: one walk over the fields
 * (names and order as Delta's case class) drives two emitters, a JSON object and the
 * Arrow result row (path, metrics struct). autoCompactParallelismStats is left out (this
 * engine does no auto compaction). */
#include "store/optimize/opt_int.h"

#include "common/buf.h"

#include <jansson.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static int cmp_i64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return (x > y) - (x < y);
}

void opt__file_stats(opt_file_stats *out, int64_t *sizes, size_t n) {
  memset(out, 0, sizeof *out);
  if (!n) return;
  qsort(sizes, n, sizeof *sizes, cmp_i64);
  out->min = sizes[0];
  out->max = sizes[n - 1];
  for (size_t i = 0; i < n; i++) out->total_size += sizes[i];
  out->total_files = (int64_t)n;
  out->avg = (double)out->total_size / (double)n;
}

/* ---- the walk -------------------------------------------------------------------------- */

typedef struct emit emit;
struct emit {
  int (*i64)(emit *e, const char *name, int64_t v);
  int (*f64)(emit *e, const char *name, double v);
  int (*boolean)(emit *e, const char *name, bool v);
  int (*str)(emit *e, const char *name, const char *v);
  int (*open)(emit *e, const char *name, bool null); /* a struct; null: its value is null */
  int (*close)(emit *e);
};

static int file_stats(emit *e, const char *name, const opt_file_stats *s) {
  int rc = e->open(e, name, false);
  if (!rc) rc = e->i64(e, "min", s->min);
  if (!rc) rc = e->i64(e, "max", s->max);
  if (!rc) rc = e->f64(e, "avg", s->avg);
  if (!rc) rc = e->i64(e, "totalFiles", s->total_files);
  if (!rc) rc = e->i64(e, "totalSize", s->total_size);
  return rc ? rc : e->close(e);
}

/* {num, size} (Z-order's names) or {numFiles, size} (clustering's). */
static int count_size(emit *e, const char *name, const char *count, int64_t num, int64_t size) {
  int rc = e->open(e, name, false);
  if (!rc) rc = e->i64(e, count, num);
  if (!rc) rc = e->i64(e, "size", size);
  return rc ? rc : e->close(e);
}
#define num_size(e, name, num, size) count_size(e, name, "num", num, size)
#define files_size(e, name, num, size) count_size(e, name, "numFiles", num, size)

static int zorder_stats(emit *e, const opt_result *r) {
  int rc = e->open(e, "zOrderStats", !r->zorder);
  if (!rc) rc = e->str(e, "strategyName", "all");
  if (!rc) rc = num_size(e, "inputCubeFiles", 0, 0);
  if (!rc) rc = num_size(e, "inputOtherFiles", r->files_removed.total_files,
                         r->files_removed.total_size);
  if (!rc) rc = e->i64(e, "inputNumCubes", 0);
  if (!rc) rc = num_size(e, "mergedFiles", r->files_removed.total_files,
                         r->files_removed.total_size);
  if (!rc) rc = e->i64(e, "numOutputCubes", r->partitions_optimized);
  if (!rc) rc = e->i64(e, "mergedNumCubes", 0);
  return rc ? rc : e->close(e);
}

static int clustering_stats(emit *e, const opt_result *r) {
  int rc = e->open(e, "clusteringStats", !r->clustering);
  if (!rc) rc = files_size(e, "inputZCubeFiles", r->cluster.in_cube_files, r->cluster.in_cube_size);
  if (!rc) rc = files_size(e, "inputOtherFiles", r->cluster.in_other_files, r->cluster.in_other_size);
  if (!rc) rc = e->i64(e, "inputNumZCubes", r->cluster.in_cubes);
  if (!rc) rc = files_size(e, "mergedFiles", r->cluster.merged_files, r->cluster.merged_size);
  if (!rc) rc = e->i64(e, "numOutputZCubes", r->cluster.out_cubes);
  return rc ? rc : e->close(e);
}

static int walk(emit *e, const opt_result *r) {
  int rc = e->i64(e, "numFilesAdded", r->num_files_added);
  if (!rc) rc = e->i64(e, "numFilesRemoved", r->num_files_removed);
  if (!rc) rc = file_stats(e, "filesAdded", &r->files_added);
  if (!rc) rc = file_stats(e, "filesRemoved", &r->files_removed);
  if (!rc) rc = e->i64(e, "partitionsOptimized", r->partitions_optimized);
  if (!rc) rc = zorder_stats(e, r);
  if (!rc) rc = clustering_stats(e, r);
  if (!rc) rc = e->i64(e, "numBatches", r->num_batches);
  if (!rc) rc = e->i64(e, "totalConsideredFiles", r->total_considered_files);
  if (!rc) rc = e->i64(e, "totalFilesSkipped", r->total_files_skipped);
  if (!rc) rc = e->boolean(e, "preserveInsertionOrder", false);
  if (!rc) rc = e->i64(e, "numFilesSkippedToReduceWriteAmplification", 0);
  if (!rc) rc = e->i64(e, "numBytesSkippedToReduceWriteAmplification", 0);
  if (!rc) rc = e->i64(e, "startTimeMs", r->start_ms);
  if (!rc) rc = e->i64(e, "endTimeMs", r->end_ms);
  if (!rc) rc = e->i64(e, "totalClusterParallelism", 1);
  if (!rc) rc = e->i64(e, "totalScheduledTasks", r->num_batches);
  if (!rc) rc = e->open(e, "deletionVectorStats", false);
  if (!rc) rc = e->i64(e, "numDeletionVectorsRemoved", r->num_dvs_removed);
  if (!rc) rc = e->i64(e, "numDeletionVectorRowsRemoved", r->num_dv_rows_removed);
  if (!rc) rc = e->close(e);
  if (!rc) rc = e->i64(e, "numTableColumns", r->num_table_columns);
  if (!rc) rc = e->i64(e, "numTableColumnsWithStats", r->num_table_columns_with_stats);
  return rc;
}

/* ---- JSON ------------------------------------------------------------------------------ */

typedef struct jemit {
  emit e;
  json_t *stack[8];
  bool null[8];
  int depth;
} jemit;

static int jset(jemit *j, const char *name, json_t *v) {
  if (!v || json_object_set_new(j->stack[j->depth], name, v))
    return dd_err_set(DD_ENOMEM, "optimize: out of memory");
  return 0;
}
static int j_i64(emit *e, const char *n, int64_t v) { return jset((jemit *)e, n, json_integer(v)); }
static int j_f64(emit *e, const char *n, double v) { return jset((jemit *)e, n, json_real(v)); }
static int j_bool(emit *e, const char *n, bool v) { return jset((jemit *)e, n, json_boolean(v)); }
static int j_str(emit *e, const char *n, const char *v) { return jset((jemit *)e, n, json_string(v)); }
static int j_open(emit *e, const char *n, bool null) {
  jemit *j = (jemit *)e;
  json_t *o = json_object();
  int rc = jset(j, n, null ? json_null() : o);
  if (rc || j->depth + 1 >= 8) {
    json_decref(o);
    return rc ? rc : dd_err_set(DD_EINTERNAL, "optimize: metrics nested too deeply");
  }
  j->stack[++j->depth] = o; /* a null struct's fields go to an object nobody sees */
  j->null[j->depth] = null;
  return 0;
}
static int j_close(emit *e) {
  jemit *j = (jemit *)e;
  if (j->null[j->depth]) json_decref(j->stack[j->depth]);
  j->depth--;
  return 0;
}

int opt_result_json(char **out, const opt_result *r) {
  *out = NULL;
  jemit j = {{j_i64, j_f64, j_bool, j_str, j_open, j_close}, {json_object()}, {false}, 0};
  int rc = j.stack[0] ? walk(&j.e, r) : dd_err_set(DD_ENOMEM, "optimize: out of memory");
  if (!rc && !(*out = json_dumps(j.stack[0], JSON_COMPACT)))
    rc = dd_err_set(DD_ENOMEM, "optimize: out of memory");
  while (j.depth > 0) j_close(&j.e);
  json_decref(j.stack[0]);
  return rc;
}

/* ---- Arrow ----------------------------------------------------------------------------- */

/* Two passes over the walk: the schema (fields under the open struct), then one row. */
typedef struct aemit {
  emit e;
  arw_schema *s;
  arw_batch *b;
  int stack[8];
  bool null[8];
  int depth;
} aemit;

static int a_field(aemit *a, const char *name, arw_kind k, int *id) {
  int parent = a->stack[a->depth];
  if (!a->b) return arw_schema_add(a->s, parent, name, k, true, id);
  *id = arw_schema_find(a->s, parent, name);
  return *id < 0 ? dd_err_set(DD_EINTERNAL, "optimize: metrics field '%s' lost", name) : 0;
}
static bool a_skip(const aemit *a) {
  for (int d = 1; d <= a->depth; d++)
    if (a->null[d]) return true;
  return false;
}
static int a_i64(emit *e, const char *n, int64_t v) {
  aemit *a = (aemit *)e;
  int id, rc = a_field(a, n, ARW_INT64, &id);
  return rc || !a->b || a_skip(a) ? rc : arw_append_i64(a->b, id, v);
}
static int a_f64(emit *e, const char *n, double v) {
  aemit *a = (aemit *)e;
  int id, rc = a_field(a, n, ARW_FLOAT64, &id);
  return rc || !a->b || a_skip(a) ? rc : arw_append_f64(a->b, id, v);
}
static int a_bool(emit *e, const char *n, bool v) {
  aemit *a = (aemit *)e;
  int id, rc = a_field(a, n, ARW_BOOL, &id);
  return rc || !a->b || a_skip(a) ? rc : arw_append_bool(a->b, id, v);
}
static int a_str(emit *e, const char *n, const char *v) {
  aemit *a = (aemit *)e;
  int id, rc = a_field(a, n, ARW_UTF8, &id);
  return rc || !a->b || a_skip(a) ? rc : arw_append_str(a->b, id, v, strlen(v));
}
static int a_open(emit *e, const char *n, bool null) {
  aemit *a = (aemit *)e;
  int id, rc = a_field(a, n, ARW_STRUCT, &id);
  if (rc) return rc;
  if (a->b && !a_skip(a)) rc = null ? arw_append_null(a->b, id) : arw_append_done(a->b, id);
  a->stack[++a->depth] = id;
  a->null[a->depth] = null;
  return rc;
}
static int a_close(emit *e) {
  ((aemit *)e)->depth--;
  return 0;
}

int opt_result_batch(arw_schema **out_schema, arw_batch **out_batch, const opt_result *r,
                     const char *path) {
  *out_schema = NULL;
  *out_batch = NULL;
  aemit a = {{a_i64, a_f64, a_bool, a_str, a_open, a_close}, NULL, NULL, {ARW_ROOT}, {false}, 0};
  int pid, mid;
  int rc = arw_schema_new(&a.s);
  if (!rc) rc = arw_schema_add(a.s, ARW_ROOT, "path", ARW_UTF8, true, &pid);
  if (!rc) rc = arw_schema_add(a.s, ARW_ROOT, "metrics", ARW_STRUCT, true, &mid);
  a.stack[0] = mid;
  if (!rc) rc = walk(&a.e, r);
  if (!rc) rc = arw_batch_new(&a.b, a.s);
  if (!rc) rc = arw_append_str(a.b, pid, path, strlen(path));
  if (!rc) rc = arw_append_done(a.b, mid);
  a.depth = 0;
  if (!rc) rc = walk(&a.e, r);
  if (rc) {
    arw_batch_free(a.b);
    arw_schema_free(a.s);
    return rc;
  }
  *out_schema = a.s;
  *out_batch = a.b;
  return 0;
}

/* ---- Spark SQL type text and the dop_result row ---------------------------------------- */

typedef struct temit {
  emit e;
  dd_buf b;
  bool first[8];
  int depth;
} temit;

static void t_name(temit *t, const char *n) {
  if (!t->first[t->depth]) dd_buf_putc(&t->b, ',');
  t->first[t->depth] = false;
  dd_buf_printf(&t->b, "%s:", n);
}
static int t_i64(emit *e, const char *n, int64_t v) {
  (void)v;
  t_name((temit *)e, n);
  dd_buf_puts(&((temit *)e)->b, "bigint");
  return 0;
}
static int t_f64(emit *e, const char *n, double v) {
  (void)v;
  t_name((temit *)e, n);
  dd_buf_puts(&((temit *)e)->b, "double");
  return 0;
}
static int t_bool(emit *e, const char *n, bool v) {
  (void)v;
  t_name((temit *)e, n);
  dd_buf_puts(&((temit *)e)->b, "boolean");
  return 0;
}
static int t_str(emit *e, const char *n, const char *v) {
  (void)v;
  t_name((temit *)e, n);
  dd_buf_puts(&((temit *)e)->b, "string");
  return 0;
}
static int t_open(emit *e, const char *n, bool null) {
  (void)null;
  temit *t = (temit *)e;
  t_name(t, n);
  dd_buf_puts(&t->b, "struct<");
  t->first[++t->depth] = true;
  return 0;
}
static int t_close(emit *e) {
  temit *t = (temit *)e;
  dd_buf_putc(&t->b, '>');
  t->depth--;
  return 0;
}

static pthread_once_t type_once = PTHREAD_ONCE_INIT;
static char *metrics_type; /* written once, read-only after */

static void make_type(void) {
  temit t = {{t_i64, t_f64, t_bool, t_str, t_open, t_close}, {0}, {true}, 0};
  opt_result r;
  memset(&r, 0, sizeof r);
  dd_buf_puts(&t.b, "struct<");
  walk(&t.e, &r);
  dd_buf_putc(&t.b, '>');
  if (t.b.oom) dd_buf_free(&t.b);
  metrics_type = t.b.p;
}

int opt_result_dop(dop_result **out, const opt_result *r, const char *path) {
  *out = NULL;
  pthread_once(&type_once, make_type);
  if (!metrics_type) return dd_err_set(DD_ENOMEM, "optimize: out of memory");
  static dop_col cols[2] = {{"path", "string", true}, {"metrics", NULL, true}};
  cols[1].type = metrics_type; /* the same text every time */
  dop_result *d = calloc(1, sizeof *d);
  dop_cell *c = d ? calloc(2, sizeof *c) : NULL;
  char *json = NULL;
  int rc = c ? opt_result_json(&json, r) : dd_err_set(DD_ENOMEM, "optimize: out of memory");
  if (!rc && !(c[0].str = strdup(path))) rc = dd_err_set(DD_ENOMEM, "optimize: out of memory");
  if (rc) {
    free(json);
    if (c) free(c[0].str);
    free(c);
    free(d);
    return rc;
  }
  c[0].kind = DOP_STR;
  c[1].kind = DOP_JSON;
  c[1].str = json;
  d->ncols = 2;
  d->cols = cols;
  d->nrows = 1;
  d->cells = c;
  d->cap = 2;
  *out = d;
  return 0;
}
