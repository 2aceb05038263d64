/* opt_filter.h: OPTIMIZE's partition filter: a SQL predicate on partition columns (the
 * text of `OPTIMIZE ... WHERE` / DeltaTable.optimize().where(...)) bound to a snapshot's
 * schema and evaluated on each file's partition values, as opt_opts.keep_file. The
 * expressions themselves are store/expr's. A predicate naming a column that is not a
 * partition column is refused (DD_EINVAL), as Delta refuses it. */
#ifndef DD_STORE_OPTIMIZE_OPT_FILTER_H
#define DD_STORE_OPTIMIZE_OPT_FILTER_H

#include <stdbool.h>

#include "store/delta/dl.h"

typedef struct opt_filter opt_filter;

/* Parses and binds sql against snapshot s (borrowed: it outlives the filter). */
int opt_filter_new(opt_filter **out, const dl_snapshot *s, const char *sql);
/* opt_opts.keep_file: false only when file f's partition cannot match. */
bool opt_filter_keep(void *filter, const dl_file *f);
/* Evaluates the predicate on file f's partition values: *match true when it holds (null is
 * false). An evaluation error (a value the predicate cannot read, an ANSI error) is returned,
 * not taken as a match: a caller that removes matched files must not remove on an error. */
int opt_filter_match(opt_filter *filter, const dl_file *f, bool *match);
/* The predicate's text as Delta records it in operationParameters.predicate. */
const char *opt_filter_sql(const opt_filter *f);
void opt_filter_free(opt_filter *f);

#endif
