/* opt_int.h: internals of OPTIMIZE, shared by opt_run.c (file selection, bins, the
 * rewrite and the commit), opt_zorder.c (Z-order keys and the row order) and
 * opt_result.c (metrics as JSON and as Delta's result row). */
#ifndef DD_STORE_OPTIMIZE_OPT_INT_H
#define DD_STORE_OPTIMIZE_OPT_INT_H

#include "store/optimize/opt.h"

#include "common/err.h"

/* Row order of batch b (n rows) by the Z-order of columns names[0..k): *out_idx malloc'ed
 * (n entries). DD_EINVAL for a column that is missing or nested. */
int opt__zorder_order(size_t **out_idx, const arw_batch *b, const char *const *names,
                      size_t k);

/* Fills a file-size summary from n sizes (sorted ascending in place). */
void opt__file_stats(opt_file_stats *out, int64_t *sizes, size_t n);

#endif
