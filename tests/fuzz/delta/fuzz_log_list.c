/* fuzz_log_list.c: the names a _delta_log listing holds (one per input line; a store, or
 * whoever can write the table, chooses them) through the classification of commits and
 * classic, multi-part and v2 checkpoints. Checks: commits come out in version order, every
 * checkpoint has its files (one, or `parts` for a multi-part one, each named). A name
 * "_last_checkpoint" makes it read that file from an empty table directory, which fails
 * quietly. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"
#include "store/objstore/os.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static os_store *st;
  if (!st && os_local_open(&st, "/nonexistent-deltad-fuzz-table") != 0) abort();
  if (size > 1 << 16) return 0;
  os_list ls = {0};
  size_t cap = 0;
  const char *p = (const char *)data, *end = p + size;
  while (p < end) {
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
    char *name = strndup(p, n);
    if (!name || os_list_add(&ls, &cap, name, (int64_t)n, 0, false) != 0) {
      free(name);
      break;
    }
    free(name);
    p += n + 1;
  }
  os_list_sort(&ls);
  dl__listing l;
  if (dl__list_entries(&l, &ls, st) == 0) {
    for (size_t i = 1; i < l.n_commits; i++)
      if (l.commits[i].version < l.commits[i - 1].version) abort();
    for (size_t i = 0; i < l.n_cps; i++) {
      const dl__cp *c = &l.cps[i];
      if (c->nfiles != (c->kind == 2 ? (size_t)c->parts : 1)) abort();
      for (size_t j = 0; j < c->nfiles; j++)
        if (!c->files[j]) abort();
      if (i && c->version < l.cps[i - 1].version) abort();
    }
    dl__listing_free(&l);
  }
  os_list_free(&ls);
  dd_err_clear();
  return 0;
}
