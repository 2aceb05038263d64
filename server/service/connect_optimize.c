/* connect_optimize.c: see connect_optimize.h. Several partition filters are joined with
 * AND into one predicate, as Delta's optimize().where() chain does. */
#include "server/service/connect_optimize.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/err.h"
#include "store/optimize/opt.h"
#include "store/optimize/opt_filter.h"

static const char *target_conf(const Delta__Connect__DeltaTable *t) {
  if (!t || t->access_type_case != DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH || !t->path) return NULL;
  for (size_t i = 0; i < t->path->n_hadoop_conf; i++)
    if (!strcmp(t->path->hadoop_conf[i]->key, OPT_TARGET_SIZE_CONF)) return t->path->hadoop_conf[i]->value;
  return NULL;
}

int connect_optimize(dop_result **out, const char *loc, const Delta__Connect__OptimizeTable *o) {
  *out = NULL;
  opt_opts oo = OPT_OPTS_INIT;
  const char *ts = target_conf(o->table);
  if (ts) {
    char *end;
    long long n = strtoll(ts, &end, 10);
    if (*end || n <= 0) return dd_err_set(DD_EINVAL, "%s '%s' is not a size in bytes", OPT_TARGET_SIZE_CONF, ts);
    oo.target_size = n;
  }
  oo.zorder_by = (const char *const *)o->zorder_columns;
  oo.num_zorder = o->n_zorder_columns;
  dd_buf where = {0};
  for (size_t i = 0; i < o->n_partition_filters; i++) {
    if (i) dd_buf_puts(&where, " AND ");
    dd_buf_printf(&where, o->n_partition_filters > 1 ? "(%s)" : "%s", o->partition_filters[i]);
  }
  if (where.oom) return dd_err_set(DD_ENOMEM, "out of memory");
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  opt_filter *f = NULL;
  opt_result res;
  int rc = dl_table_open(&t, loc);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  if (!rc && where.p) rc = opt_filter_new(&f, s, where.p);
  if (!rc && f) {
    oo.keep_file = opt_filter_keep;
    oo.keep_ctx = f;
    oo.predicate = opt_filter_sql(f);
  }
  if (!rc) rc = opt_run(&res, t, s, &oo);
  if (!rc) rc = opt_result_dop(out, &res, dl_table_location(t));
  opt_filter_free(f);
  dl_snapshot_free(s);
  dl_table_free(t);
  dd_buf_free(&where);
  return rc;
}
