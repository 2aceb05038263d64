/* deltad_demo_table.c: writes the demo Delta table of `deltad --demo`: lake/trips (beside
 * the data directory), partitioned by city, change data feed on, two commits (a CREATE
 * TABLE AS SELECT-like first write of two files, then an append). Written with this project's own Parquet writer and
 * Delta log engine, so the demo needs nothing from outside the repository. */
#include "cmd/deltad_demo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"
#include "store/delta/dl.h"
#include "store/parquet/pq.h"

#define DEMO_SCHEMA                                                                         \
  "{\"type\":\"struct\",\"fields\":["                                                       \
  "{\"name\":\"trip_id\",\"type\":\"long\",\"nullable\":false,\"metadata\":{}},"           \
  "{\"name\":\"city\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}},"             \
  "{\"name\":\"fare\",\"type\":\"double\",\"nullable\":true,\"metadata\":{}},"             \
  "{\"name\":\"rider\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}"

typedef struct demo_row {
  int64_t id;
  double fare;
  const char *rider;
} demo_row;

static pq_value demo_bytes(const char *s) {
  pq_value v = {.kind = PQ_V_BYTES, .is_string = 1, .len = (uint32_t)strlen(s)};
  v.u.bytes = (const uint8_t *)s;
  return v;
}

/* Writes one data file of a partition (the partition column is not stored in the file). */
static int demo_write_file(const char *path, const demo_row *rows, size_t n) {
  static const pq_wfield cols[] = {
      {.name = "trip_id", .kind = PQ_W_INT64},
      {.name = "fare", .kind = PQ_W_DOUBLE, .nullable = true},
      {.name = "rider", .kind = PQ_W_STRING, .nullable = true},
  };
  const pq_wfield root = {.name = "spark_schema", .kind = PQ_W_STRUCT, .num_children = 3,
                          .children = cols};
  pq_writer *w = NULL;
  int rc = pq_writer_open_path(&w, path, &root, NULL);
  for (size_t i = 0; rc == 0 && i < n; i++) {
    pq_value f[3] = {{.kind = PQ_V_INT64, .u.i64 = rows[i].id},
                     {.kind = PQ_V_DOUBLE, .u.d = rows[i].fare},
                     demo_bytes(rows[i].rider)};
    pq_value row = {.kind = PQ_V_STRUCT, .len = 3, .u.items = f};
    rc = pq_writer_write_row(w, &row);
  }
  if (rc == 0) rc = pq_writer_close(w, NULL, NULL);
  pq_writer_free(w);
  return rc;
}

/* Writes the file of one partition and adds it to txn. */
static int demo_add(dl_txn *txn, const char *root, const char *city, const char *name,
                    const demo_row *rows, size_t n) {
  char dir[4096], path[4200], rel[512], stats[512], *pv = NULL;
  snprintf(dir, sizeof dir, "%s/city=%s", root, city);
  mkdir(dir, 0755);
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(rel, sizeof rel, "city=%s/%s", city, name);
  int rc = demo_write_file(path, rows, n);
  if (rc) return rc;
  int64_t min_id = rows[0].id, max_id = rows[n - 1].id;
  double min_f = rows[0].fare, max_f = rows[0].fare;
  for (size_t i = 1; i < n; i++) {
    if (rows[i].fare < min_f) min_f = rows[i].fare;
    if (rows[i].fare > max_f) max_f = rows[i].fare;
  }
  snprintf(stats, sizeof stats,
           "{\"numRecords\":%zu,\"minValues\":{\"trip_id\":%lld,\"fare\":%.2f},"
           "\"maxValues\":{\"trip_id\":%lld,\"fare\":%.2f},"
           "\"nullCount\":{\"trip_id\":0,\"fare\":0,\"rider\":0}}",
           n, (long long)min_id, min_f, (long long)max_id, max_f);
  const char *k[] = {"city"}, *v[] = {city};
  if ((rc = dl_kv_pack(&pv, k, v, 1))) return rc;
  struct stat st;
  stat(path, &st);
  dl_file add = {.path = rel, .size = st.st_size, .modification_time = (int64_t)st.st_mtime * 1000,
                 .data_change = true, .stats = stats, .partition_values = pv,
                 .base_row_id = -1, .default_row_commit_version = -1}; /* no rowTracking */
  rc = dl_txn_add_file(txn, &add);
  free(pv);
  return rc;
}

static int demo_commit(dl_table *t, dl_snapshot *read, int first) {
  static const demo_row ams[] = {{1, 12.5, "ada"}, {2, 7.0, "bo"}, {3, 31.25, "cy"}};
  static const demo_row lis[] = {{4, 9.75, "di"}, {5, 15.0, "ed"}};
  static const demo_row ams2[] = {{6, 22.0, "fay"}, {7, 5.5, "gus"}};
  dl_txn *txn = NULL;
  int rc = dl_txn_begin(&txn, t, read);
  const char *root = dl_table_location(t);
  if (rc == 0 && first) {
    const char *pcols[] = {"city"};
    char *conf = NULL;
    const char *ck[] = {"delta.enableChangeDataFeed"}, *cv[] = {"true"};
    dl_protocol p = {.min_reader_version = 1, .min_writer_version = 4};
    rc = dl_kv_pack(&conf, ck, cv, 1);
    dl_metadata_spec md = {.name = "trips", .description = "Demo table written by deltad --demo",
                           .schema_string = DEMO_SCHEMA, .num_partition_columns = 1,
                           .partition_columns = pcols, .configuration = conf,
                           .created_time = -1};
    if (rc == 0) rc = dl_txn_set_protocol(txn, &p);
    if (rc == 0) rc = dl_txn_set_metadata(txn, &md);
    free(conf);
    if (rc == 0) rc = demo_add(txn, root, "Amsterdam", "part-00000-demo-a.snappy.parquet", ams, 3);
    if (rc == 0) rc = demo_add(txn, root, "Lisbon", "part-00000-demo-b.snappy.parquet", lis, 2);
  } else if (rc == 0) {
    rc = demo_add(txn, root, "Amsterdam", "part-00001-demo-c.snappy.parquet", ams2, 2);
  }
  dl_commit_opts opts = DL_COMMIT_OPTS_INIT;
  opts.operation = first ? "CREATE TABLE AS SELECT" : "WRITE";
  opts.operation_parameters = first ? "{\"partitionBy\":\"[\\\"city\\\"]\"}" : "{\"mode\":\"Append\"}";
  int64_t version = 0;
  if (rc == 0) rc = dl_txn_commit(txn, &opts, &version);
  dl_txn_free(txn);
  return rc;
}

int dd_demo_table(const char *location) {
  char log[4200];
  snprintf(log, sizeof log, "%s/_delta_log", location);
  struct stat st;
  if (stat(log, &st) == 0) return 0; /* already there */
  if (mkdir(location, 0755) != 0 && stat(location, &st) != 0)
    return dd_err_set(DD_EIO, "demo: cannot create %s", location);
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dl_snapshot_opts so = DL_SNAPSHOT_OPTS_INIT;
  int rc = dl_table_open(&t, location);
  if (rc == 0) rc = demo_commit(t, NULL, 1);
  if (rc == 0) rc = dl_snapshot_open(&s, t, &so);
  if (rc == 0) rc = demo_commit(t, s, 0);
  dl_snapshot_free(s);
  dl_table_free(t);
  return rc ? dd_err_wrap(rc, "demo table %s", location) : 0;
}
