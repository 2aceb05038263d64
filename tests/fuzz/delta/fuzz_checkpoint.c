/* fuzz_checkpoint.c: a table's log end to end, as dl_snapshot_open reads it: a Parquet
 * checkpoint at version 1 and a JSON commit at version 2 are written to a scratch table
 * (input: a 4-byte little-endian length, that many bytes of checkpoint, then the commit),
 * then the snapshot is opened and everything a reader asks of it is walked (files, their
 * stats and partition values, tombstones, app transactions, domains, properties). A table's
 * contents are untrusted, so any input must give a snapshot or an error, nothing else. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "store/delta/dl.h"

static char dir[64], log_dir[96], cp_path[160], commit_path[160];

/* The scratch table is made for each input and removed after it (libFuzzer may end the
 * process without running atexit handlers); a crash leaves it in /tmp for a look. */
static void make_table(void) {
  strcpy(dir, "/tmp/dd-fuzz-cp-XXXXXX");
  if (!mkdtemp(dir)) abort();
  snprintf(log_dir, sizeof log_dir, "%s/_delta_log", dir);
  snprintf(cp_path, sizeof cp_path, "%s/00000000000000000001.checkpoint.parquet", log_dir);
  snprintf(commit_path, sizeof commit_path, "%s/00000000000000000002.json", log_dir);
  if (mkdir(log_dir, 0700) != 0) abort();
}

static void remove_table(void) {
  unlink(cp_path);
  unlink(commit_path);
  rmdir(log_dir);
  rmdir(dir);
}

static int write_file(const char *path, const uint8_t *d, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!f) return -1;
  size_t w = fwrite(d, 1, n, f);
  return fclose(f) == 0 && w == n ? 0 : -1;
}

static int on_file(void *ctx, const dl_file *f) {
  const dl_snapshot *s = ctx;
  if (!f->path || !f->partition_values) abort();
  if (f->stats) {
    dl_stats *st = NULL;
    if (dl_stats_parse(&st, f->stats) == 0) {
      char *out = NULL;
      dl_stats_num_records(st);
      if (dl_stats_get(&out, st, DL_STATS_MAX, "a") == 0) free(out);
      dl_stats_free(st);
    }
  }
  const char *k, *v, *cur = f->partition_values;
  while (dl_kv_next(&cur, &k, &v)) {
    const dl_field *fl = dl_snapshot_schema(s) ? dl_schema_field(dl_snapshot_schema(s), k) : NULL;
    dl_value val;
    if (fl) dl_partition_value_parse(&val, fl->type, v);
  }
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 4 || size > 1 << 20) return 0;
  make_table();
  uint32_t n = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
  if (n > size - 4) n = (uint32_t)(size - 4);
  if (write_file(cp_path, data + 4, n) != 0 || write_file(commit_path, data + 4 + n, size - 4 - n) != 0) abort();
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  if (dl_table_open(&t, dir) == 0 && dl_snapshot_open(&s, t, NULL) == 0) {
    dl_snapshot_version(s);
    dl_snapshot_num_files(s);
    dl_snapshot_size_bytes(s);
    dl_snapshot_property(s, "delta.appendOnly");
    dl_snapshot_files(s, on_file, s);
    dl_snapshot_tombstones(s, on_file, s);
    for (size_t i = 0; i < dl_snapshot_num_app_txns(s); i++)
      if (!dl_snapshot_app_txn(s, i)->app_id) abort();
    for (size_t i = 0; i < dl_snapshot_num_domains(s); i++) dl_snapshot_domain(s, i);
    dl_snapshot_free(s);
  }
  dl_table_free(t);
  remove_table();
  dd_err_clear();
  return 0;
}
