/* connect_sql_having.h: SQL HAVING over an aggregate (connect_sql.c). The predicate is
 * rewritten to read the aggregate's output columns: a GROUP BY expression becomes its key
 * column, an aggregate call the column of the same aggregate in the SELECT list (or of a
 * hidden one appended for it), a SELECT alias the column it names. */
#ifndef DD_SERVER_SERVICE_CONNECT_SQL_HAVING_H
#define DD_SERVER_SERVICE_CONNECT_SQL_HAVING_H

#include "store/query/qry.h"

typedef struct connect_having {
  ex_node *const *groups;       /* GROUP BY expressions; key i is the column key_cols[i] */
  const char *const *key_cols;
  size_t ngroups;
  const char *const *aliases;   /* SELECT aliases, each naming the column alias_cols[i] */
  const char *const *alias_cols;
  size_t naliases;
  /* The aggregates (aggs[i] computes column agg_cols[i]); hidden ones are appended (the
   * arrays grow with realloc; agg_cols[i] malloc'ed, *naggs counts). */
  qry_agg **aggs;
  char ***agg_cols;
  size_t *naggs;
} connect_having;

/* *out: pred over the aggregate's output (unbound). pred stays the caller's and must live
 * as long as the appended aggregates (their args point into it). */
int connect_sql_having(ex_node **out, const ex_node *pred, connect_having *h);

#endif
