/* new_table.h: the first commit of a test table (protocol 1/2, metadata with the given
 * schema string, unpartitioned; or with partition columns and properties) on a table
 * opened on an empty directory, and the commit of a data writer's files. Header-only. */
#ifndef DD_TESTS_UNIT_NEW_TABLE_H
#define DD_TESTS_UNIT_NEW_TABLE_H

#include "store/delta/dl.h"
#include "store/dwrite/dw.h"

/* The same with partition columns pcols[0..npart) and packed table properties conf (may
 * be NULL), at writer version 3 when there are properties (CHECK constraints need it). */
static inline int tu_new_table_with(dl_table *t, const char *schema_string, const char *const *pcols,
                                    size_t npart, const char *conf) {
  dl_txn *x = NULL;
  int rc = dl_txn_begin(&x, t, NULL);
  dl_protocol p = {1, conf ? 3 : 2, 0, 0, NULL, NULL};
  dl_metadata_spec md = {NULL, NULL, NULL, schema_string, npart, pcols, conf, -1};
  if (!rc) rc = dl_txn_set_protocol(x, &p);
  if (!rc) rc = dl_txn_set_metadata(x, &md);
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.operation = "CREATE TABLE";
  int64_t v;
  if (!rc) rc = dl_txn_commit(x, &co, &v);
  dl_txn_free(x);
  return rc;
}

static inline int tu_new_table(dl_table *t, const char *schema_string) {
  return tu_new_table_with(t, schema_string, NULL, 0, NULL);
}

/* Commits every file of finished writer w as a WRITE on snapshot s of t. */
static inline int tu_commit_writer(dl_table *t, dl_snapshot *s, dw_writer *w) {
  dl_txn *x = NULL;
  int rc = dl_txn_begin(&x, t, s);
  for (size_t i = 0; !rc && i < dw_num_files(w); i++) rc = dl_txn_add_file(x, dw_file(w, i));
  dl_commit_opts co = DL_COMMIT_OPTS_INIT;
  co.operation = "WRITE";
  int64_t v;
  if (!rc) rc = dl_txn_commit(x, &co, &v);
  dl_txn_free(x);
  return rc;
}

#endif
