/* connect_optimize.c: see connect_optimize.h. Several partition filters are joined with
 * AND into one predicate, as Delta's optimize().where() chain does. The SQL statement
 * `OPTIMIZE table [FULL] [WHERE predicate] [ZORDER BY (c1, c2)]` arrives through
 * connect_sql_optimize_hook (connect_sql.c parses the statement up to the table), which this
 * file sets when it is linked in (a constructor: connect_exec.c always links it). */
#include "server/service/connect_optimize.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "server/service/connect_sql.h"
#include "store/expr/ex.h"
#include "store/optimize/opt.h"
#include "store/optimize/opt_filter.h"

#define MAX_ZORDER 64

static const char *path_conf(const Delta__Connect__DeltaTable *t, const char *key) {
  if (!t || t->access_type_case != DELTA__CONNECT__DELTA_TABLE__ACCESS_TYPE_PATH || !t->path) return NULL;
  for (size_t i = 0; i < t->path->n_hadoop_conf; i++)
    if (!strcmp(t->path->hadoop_conf[i]->key, key)) return t->path->hadoop_conf[i]->value;
  return NULL;
}

/* OPTIMIZE of the table at loc: where (NULL: all partitions), Z-order columns, target,
 * FULL. On a clustered table any predicate is refused before it is parsed, as Delta. */
static int run(dop_result **out, const char *loc, const char *where, const char *const *z,
               size_t nz, int64_t target, bool full) {
  opt_opts oo = OPT_OPTS_INIT;
  oo.target_size = target;
  oo.full = full;
  oo.zorder_by = z;
  oo.num_zorder = nz;
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  opt_filter *f = NULL;
  opt_result res;
  int rc = dl_table_open(&t, loc);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  if (!rc) rc = opt_check_where(s, where);
  if (!rc && where) rc = opt_filter_new(&f, s, where);
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
  return rc;
}

int connect_optimize(dop_result **out, const char *loc, const Delta__Connect__OptimizeTable *o) {
  *out = NULL;
  int64_t target = 0;
  const char *ts = path_conf(o->table, OPT_TARGET_SIZE_CONF), *full = path_conf(o->table, OPT_FULL_CONF);
  if (ts) {
    char *end;
    long long n = strtoll(ts, &end, 10);
    if (*end || n <= 0) return dd_err_set(DD_EINVAL, "%s '%s' is not a size in bytes", OPT_TARGET_SIZE_CONF, ts);
    target = n;
  }
  dd_buf where = {0};
  for (size_t i = 0; i < o->n_partition_filters; i++) {
    if (i) dd_buf_puts(&where, " AND ");
    dd_buf_printf(&where, o->n_partition_filters > 1 ? "(%s)" : "%s", o->partition_filters[i]);
  }
  int rc = where.oom ? dd_err_set(DD_ENOMEM, "out of memory")
                     : run(out, loc, where.p, (const char *const *)o->zorder_columns,
                           o->n_zorder_columns, target, full && !strcasecmp(full, "true"));
  dd_buf_free(&where);
  return rc;
}

/* ---- the SQL statement's tail ----------------------------------------------------------- */

static const char *skip_ws(const char *p) {
  while (isspace((unsigned char)*p)) p++;
  return p;
}

static bool keyword(const char **p, const char *kw) {
  size_t n = strlen(kw);
  if (strncasecmp(*p, kw, n) || isalnum((unsigned char)(*p)[n]) || (*p)[n] == '_') return false;
  *p = skip_ws(*p + n);
  return true;
}

/* One column name, plain or `quoted` (`` inside is a backquote), copied into *out. */
static int column(const char **p, char **out) {
  dd_buf b = {0};
  const char *q = *p;
  if (*q == '`') {
    for (q++; *q && !(q[0] == '`' && q[1] != '`'); q++) {
      if (*q == '`') q++;
      dd_buf_putc(&b, *q);
    }
    if (*q != '`') {
      dd_buf_free(&b);
      return dd_err_set(DD_EINVAL, "OPTIMIZE: ZORDER BY: an unclosed backquote");
    }
    q++;
  } else {
    while (isalnum((unsigned char)*q) || *q == '_') dd_buf_putc(&b, *q++);
  }
  if (!b.p || b.oom) {
    dd_buf_free(&b);
    return dd_err_set(DD_EINVAL, "OPTIMIZE: ZORDER BY needs column names, at '%.20s'", *p);
  }
  *out = b.p;
  *p = skip_ws(q);
  return 0;
}

static int sql_optimize(dop_result **out, const char *loc, const char *rest,
                        const connect_exec_opts *opts) {
  (void)opts;
  *out = NULL;
  const char *p = skip_ws(rest);
  char *where = NULL, *z[MAX_ZORDER];
  size_t nz = 0;
  int rc = 0;
  bool full = keyword(&p, "FULL");
  if (keyword(&p, "WHERE")) {
    ex_parse_opts po = EX_PARSE_OPTS_INIT;
    po.allow_alias = false;
    ex_node *e = NULL;
    size_t used = 0;
    rc = ex_parse_prefix(&e, p, strlen(p), &used, &po);
    ex_free(e);
    if (!rc && !(where = strndup(p, used))) rc = dd_err_set(DD_ENOMEM, "out of memory");
    for (size_t n = where ? strlen(where) : 0; n && isspace((unsigned char)where[n - 1]); n--)
      where[n - 1] = '\0';
    p = skip_ws(p + used);
  }
  if (!rc && keyword(&p, "ZORDER")) {
    if (!keyword(&p, "BY")) rc = dd_err_set(DD_EINVAL, "OPTIMIZE: ZORDER needs BY");
    bool paren = !rc && *p == '(';
    if (paren) p = skip_ws(p + 1);
    while (!rc) {
      if (nz == MAX_ZORDER) rc = dd_err_set(DD_EINVAL, "OPTIMIZE: at most %d ZORDER BY columns", MAX_ZORDER);
      if (!rc) rc = column(&p, &z[nz]);
      if (!rc) nz++;
      if (rc || *p != ',') break;
      p = skip_ws(p + 1);
    }
    if (!rc && paren && *p++ != ')') rc = dd_err_set(DD_EINVAL, "OPTIMIZE: ZORDER BY (...) needs its ')'");
    if (!rc) p = skip_ws(p);
  }
  if (!rc && *p == ';') p = skip_ws(p + 1);
  if (!rc && *p) rc = dd_err_set(DD_EINVAL, "OPTIMIZE: unexpected text at '%.40s'", p);
  if (!rc) rc = run(out, loc, where, (const char *const *)z, nz, 0, full);
  for (size_t i = 0; i < nz; i++) free(z[i]);
  free(where);
  return rc;
}

__attribute__((constructor)) static void register_sql_optimize(void) {
  connect_sql_optimize_hook = sql_optimize;
}
