/* connect_sql_having.c: HAVING's predicate rewritten over an aggregate's output
 * (connect_sql_having.h). Matching is by Spark's name of an expression (ex_name), which is
 * how Spark itself says a HAVING expression is "the same" as a GROUP BY one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/service/connect_sql_having.h"

#define OOM() dd_err_set(DD_ENOMEM, "out of memory")

static int column(ex_node **out, const char *name) { return ex_new_column(out, &name, 1); }

static bool same_name(const ex_node *a, const ex_node *b) {
  char *x = NULL, *y = NULL;
  bool eq = !ex_name(&x, a) && !ex_name(&y, b) && !strcasecmp(x, y);
  free(x), free(y);
  dd_err_clear();
  return eq;
}

/* An aggregate call: the column of an equal aggregate, else of a new hidden one. */
static int aggregate(ex_node **out, const ex_node *e, qry_agg_fn fn, connect_having *h) {
  if (ex_nargs(e) > 1) return dd_err_set(DD_EUNSUPPORTED, "%s with %zu arguments is not supported", ex_fn_name(e), ex_nargs(e));
  const ex_node *arg = ex_nargs(e) ? ex_arg(e, 0) : NULL;
  if (arg && ex_node_kind(arg) == EX_STAR) arg = NULL;
  bool distinct = ex_call_distinct(e);
  for (size_t i = 0; i < *h->naggs; i++) {
    const qry_agg *a = &(*h->aggs)[i];
    if (a->fn == fn && a->distinct == distinct && (!a->arg) == (!arg) && (!arg || same_name(a->arg, arg)))
      return column(out, (*h->agg_cols)[i]);
  }
  qry_agg *na = realloc(*h->aggs, (*h->naggs + 1) * sizeof *na);
  if (!na) return OOM();
  *h->aggs = na;
  char **nc = realloc(*h->agg_cols, (*h->naggs + 1) * sizeof *nc);
  if (!nc) return OOM();
  *h->agg_cols = nc;
  char name[32];
  snprintf(name, sizeof name, "__h%zu", *h->naggs);
  if (!(nc[*h->naggs] = strdup(name))) return OOM();
  na[*h->naggs] = (qry_agg){.fn = fn, .arg = arg, .distinct = distinct, .name = nc[*h->naggs]};
  (*h->naggs)++;
  return column(out, name);
}

static int rewrite(ex_node **out, const ex_node *e, connect_having *h, int depth) {
  *out = NULL;
  if (depth > EX_MAX_DEPTH) return dd_err_set(DD_EINVAL, "HAVING: the expression nests too deep");
  for (size_t i = 0; i < h->ngroups; i++)
    if (same_name(e, h->groups[i])) return column(out, h->key_cols[i]);
  ex_kind k = ex_node_kind(e);
  qry_agg_fn fn;
  if (k == EX_CALL && !qry_agg_lookup(&fn, ex_fn_name(e))) return aggregate(out, e, fn, h);
  if (k == EX_COLUMN) {
    size_t np = 0;
    const char *const *parts = ex_column_parts(e, &np);
    for (size_t i = 0; np == 1 && i < h->naliases; i++)
      if (!strcasecmp(parts[0], h->aliases[i])) return column(out, h->alias_cols[i]);
    return ex_clone(out, e); /* not grouped: binding it fails, naming it */
  }
  if (k == EX_ALIAS) return rewrite(out, ex_arg(e, 0), h, depth + 1);
  if (k != EX_CALL && k != EX_CAST) return ex_clone(out, e);
  size_t n = ex_nargs(e);
  ex_node **args = calloc(n + 1, sizeof *args);
  int rc = args ? 0 : OOM();
  for (size_t i = 0; !rc && i < n; i++) rc = rewrite(&args[i], ex_arg(e, i), h, depth + 1);
  if (!rc && k == EX_CAST) rc = ex_new_cast(out, args[0], ex_cast_type(e)), args[0] = NULL;
  else if (!rc) {
    rc = ex_new_call(out, ex_fn_name(e), args, n); /* takes the args, also when it fails */
    memset(args, 0, n * sizeof *args);
  }
  for (size_t i = 0; i < n; i++) ex_free(args[i]);
  free(args);
  return rc;
}

int connect_sql_having(ex_node **out, const ex_node *pred, connect_having *h) {
  return rewrite(out, pred, h, 0);
}
