/* mk_checkpoint.c: test helper. Creates a partitioned table in DIR with 12 one-file commits
 * (one of them with a path needing URL encoding, one with a deletion vector, one removed),
 * so a checkpoint is written at version 10; prints the add paths the checkpoint must hold,
 * one per line, as written in the log. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "store/delta/dl.h"

static const char *SCHEMA =
    "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,"
    "\"metadata\":{}},{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}";

static int fail(const char *what) {
  fprintf(stderr, "%s: %s\n", what, dd_err_msg());
  return 1;
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  dl_table *t = NULL;
  if (dl_table_open(&t, argv[1])) return fail("open");
  dl_txn *x = NULL;
  dl_txn_begin(&x, t, NULL);
  const char *feat[] = {"deletionVectors"};
  dl_protocol p = {3, 7, 1, 1, feat, feat};
  dl_txn_set_protocol(x, &p);
  const char *pcs[] = {"p"};
  dl_metadata_spec md = {.schema_string = SCHEMA, .num_partition_columns = 1,
                         .partition_columns = pcs, .created_time = -1};
  dl_txn_set_metadata(x, &md);
  if (dl_txn_commit(x, NULL, NULL)) return fail("create");
  dl_txn_free(x);
  dl_dv dv = {.storage_type = 'i', .path_or_inline = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
              .offset = -1, .size_in_bytes = 40, .cardinality = 6, .max_row_index = -1};
  for (int i = 1; i <= 12; i++) {
    dl_snapshot *s = NULL;
    if (dl_snapshot_open(&s, t, NULL)) return fail("snapshot");
    dl_txn_begin(&x, t, s);
    char path[128], pv[64];
    snprintf(path, sizeof path, i == 3 ? "p=x y/file %d.parquet" : "p=v%d/file-%d.parquet", i, i);
    int n = snprintf(pv, sizeof pv, "p%c%s", 0, i == 3 ? "x y" : "v");
    pv[n + 1] = 0;
    pv[n + 2] = 0;
    dl_file f = {.path = path, .size = 1000 + i, .modification_time = 1, .data_change = true,
                 .stats = "{\"numRecords\":10}", .partition_values = pv, .deletion_timestamp = -1,
                 .base_row_id = -1, .default_row_commit_version = -1, .dv = i == 5 ? &dv : NULL};
    dl_txn_add_file(x, &f);
    if (i == 7) {
      dl_file r = {.path = "p=v2/file-2.parquet", .size = 1002, .data_change = true,
                   .partition_values = pv, .deletion_timestamp = -1, .base_row_id = -1,
                   .default_row_commit_version = -1};
      dl_txn_remove_file(x, &r);
    }
    if (dl_txn_commit(x, NULL, NULL)) return fail("commit");
    dl_txn_free(x);
    dl_snapshot_free(s);
  }
  for (int i = 1; i <= 10; i++) {
    if (i == 2) continue;
    if (i == 3) printf("p=x%%20y/file%%203.parquet\n");
    else printf("p=v%d/file-%d.parquet\n", i, i);
  }
  dl_table_free(t);
  return 0;
}
