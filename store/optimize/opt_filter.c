/* opt_filter.c: see opt_filter.h. Until store/expr's partition predicate is merged, every
 * predicate is refused (DD_EUNSUPPORTED) rather than guessed at. */
#include "store/optimize/opt_filter.h"

#include "common/err.h"

struct opt_filter { const char *sql; };

int opt_filter_new(opt_filter **out, const dl_snapshot *s, const char *sql) {
  (void)s;
  *out = NULL;
  return dd_err_set(DD_EUNSUPPORTED, "OPTIMIZE WHERE '%s': partition predicates need the "
                    "expression engine, which this build does not have yet", sql);
}

bool opt_filter_keep(void *filter, const dl_file *f) {
  (void)filter;
  (void)f;
  return true;
}

const char *opt_filter_sql(const opt_filter *f) { return f ? f->sql : NULL; }

void opt_filter_free(opt_filter *f) { (void)f; }
