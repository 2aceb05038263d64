/* new_table.h: the first commit of a test table (protocol 1/2, metadata with the given
 * schema string, unpartitioned) on a table opened on an empty directory. Header-only. */
#ifndef DD_TESTS_UNIT_NEW_TABLE_H
#define DD_TESTS_UNIT_NEW_TABLE_H

#include "store/delta/dl.h"

static inline int tu_new_table(dl_table *t, const char *schema_string) {
  dl_txn *x = NULL;
  int rc = dl_txn_begin(&x, t, NULL);
  dl_protocol p = {1, 2, 0, 0, NULL, NULL};
  dl_metadata_spec md = {NULL, NULL, NULL, schema_string, 0, NULL, NULL, -1};
  if (!rc) rc = dl_txn_set_protocol(x, &p);
  if (!rc) rc = dl_txn_set_metadata(x, &md);
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.operation = "CREATE TABLE";
  int64_t v;
  if (!rc) rc = dl_txn_commit(x, &co, &v);
  dl_txn_free(x);
  return rc;
}

#endif
