/* test_flat.c: the column-at-a-time checkpoint reader (dl_checkpoint_flat.c) against the
 * row reader it replaces (DD_CHECKPOINT_ROWS=1 forces the latter). Every fixture table
 * with a Parquet checkpoint (Spark, Databricks, delta-rs writers) and a checkpoint written
 * here with deletion vectors, tags, null partition values, escaped paths and tombstones
 * must give the same snapshot, field by field, both ways; the written one is also checked
 * against the values that went in, and one of two row groups (their bytes are given back
 * as they are applied). And the file set's bulk indexing (used for checkpoints)
 * must leave the same set as upserting the same actions one by one, also for keys repeated
 * across row groups (filled on different threads); the snapshot's bytes per file are
 * bounded (48-byte entries, 4-byte index slots). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/err.h"
#include "store/delta/dl.h"
#include "store/delta/dl_internal.h"

#define FX DD_FIXTURES

/* ---------- a snapshot as sorted text lines ---------- */

typedef struct lines {
  char **v;
  size_t n, cap; /* grown by doubling: a realloc a line was quadratic under ASan */
} lines;

static void put_kv(dd_buf *b, const char *packed) {
  const char *cur = packed, *k, *v;
  while (packed && dl_kv_next(&cur, &k, &v)) dd_buf_printf(b, "%s=%s;", k, v ? v : "<null>");
}

static void push_line(lines *l, char *s) {
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 64;
    l->v = realloc(l->v, l->cap * sizeof *l->v);
    assert_non_null(l->v);
  }
  l->v[l->n++] = s;
}

static int line_cb(void *ctx, const dl_file *f) {
  lines *l = ctx;
  dd_buf b = {0};
  dd_buf_printf(&b, "%s|%s|%lld|%lld|%lld|%d|%s|", f->path, f->raw_path, (long long)f->size,
                (long long)f->modification_time, (long long)f->deletion_timestamp,
                f->data_change, f->stats ? f->stats : "<none>");
  put_kv(&b, f->partition_values);
  dd_buf_puts(&b, "|");
  if (f->tags) put_kv(&b, f->tags);
  else dd_buf_puts(&b, "<none>");
  if (f->dv)
    dd_buf_printf(&b, "|dv %c %s %lld %d %lld %lld", f->dv->storage_type, f->dv->path_or_inline,
                  (long long)f->dv->offset, f->dv->size_in_bytes, (long long)f->dv->cardinality,
                  (long long)f->dv->max_row_index);
  dd_buf_printf(&b, "|rows %lld %lld", (long long)f->base_row_id, (long long)f->default_row_commit_version);
  push_line(l, b.p);
  return 0;
}

static int cmp_line(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void lines_free(lines *l) {
  for (size_t i = 0; i < l->n; i++) free(l->v[i]);
  free(l->v);
  memset(l, 0, sizeof *l);
}

/* Opens the latest snapshot of table with the flat reader or the row reader and describes
 * it; returns the open's code (the error message is kept in *err). */
static int describe(const char *table, bool rows, lines *out, char *err, size_t errcap) {
  if (rows) setenv("DD_CHECKPOINT_ROWS", "1", 1);
  else unsetenv("DD_CHECKPOINT_ROWS");
  memset(out, 0, sizeof *out);
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  int rc = dl_table_open(&t, table);
  if (!rc) rc = dl_snapshot_open(&s, t, NULL);
  snprintf(err, errcap, "%s", rc ? dd_err_msg() : "");
  if (!rc) {
    assert_int_equal(dl_snapshot_files(s, line_cb, out), 0);
    lines tomb = {0};
    assert_int_equal(dl_snapshot_tombstones(s, line_cb, &tomb), 0);
    for (size_t i = 0; i < tomb.n; i++) {
      char *x = NULL;
      assert_true(asprintf(&x, "tombstone %s", tomb.v[i]) > 0);
      line_cb(out, &(dl_file){.path = x, .raw_path = "", .partition_values = ""});
      free(x);
    }
    lines_free(&tomb);
    dd_buf b = {0};
    const dl_protocol *p = dl_snapshot_protocol(s);
    const dl_metadata *m = dl_snapshot_metadata(s);
    dd_buf_printf(&b, "~snapshot v%lld cp%lld files %zu bytes %lld proto %d/%d md %s txns %zu "
                  "domains %zu", (long long)dl_snapshot_version(s),
                  (long long)dl_snapshot_checkpoint_version(s), dl_snapshot_num_files(s),
                  (long long)dl_snapshot_size_bytes(s), p->min_reader_version,
                  p->min_writer_version, m->id ? m->id : "", dl_snapshot_num_app_txns(s),
                  dl_snapshot_num_domains(s));
    push_line(out, b.p);
    qsort(out->v, out->n, sizeof *out->v, cmp_line);
  }
  dl_snapshot_free(s);
  dl_table_free(t);
  unsetenv("DD_CHECKPOINT_ROWS");
  return rc;
}

/* Both readers give the same answer for table; returns its number of lines. */
static size_t same_both_ways(const char *table) {
  lines a, b;
  char ea[1024], eb[1024];
  int ra = describe(table, false, &a, ea, sizeof ea);
  int rb = describe(table, true, &b, eb, sizeof eb);
  if (ra != rb || strcmp(ea, eb)) print_message("%s: flat %d '%s', rows %d '%s'\n", table, ra, ea, rb, eb);
  assert_int_equal(ra, rb);
  assert_string_equal(ea, eb);
  if (a.n != b.n) print_message("%s: %zu lines flat, %zu rows\n", table, a.n, b.n);
  assert_int_equal(a.n, b.n);
  for (size_t i = 0; i < a.n; i++) assert_string_equal(a.v[i], b.v[i]);
  size_t n = a.n;
  lines_free(&a);
  lines_free(&b);
  return n;
}

/* ---------- fixtures ---------- */

static bool has_parquet_checkpoint(const char *table) {
  char log[1024];
  snprintf(log, sizeof log, "%s/_delta_log", table);
  DIR *d = opendir(log);
  bool yes = false;
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (strstr(e->d_name, ".checkpoint.") && n > 8 && !strcmp(e->d_name + n - 8, ".parquet"))
      yes = true;
    if (!strcmp(e->d_name, "_sidecars")) yes = true;
  }
  if (d) closedir(d);
  return yes;
}

static size_t each_table(const char *root, const char *suffix, size_t *lines_seen) {
  DIR *d = opendir(root);
  size_t tables = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    char table[1024];
    snprintf(table, sizeof table, "%s/%s%s", root, e->d_name, suffix);
    if (!has_parquet_checkpoint(table)) continue;
    *lines_seen += same_both_ways(table);
    tables++;
  }
  if (d) closedir(d);
  return tables;
}

static void test_fixture_checkpoints(void **state) {
  (void)state;
  size_t seen = 0, tables = each_table(FX "/delta-rs-data", "", &seen);
  tables += each_table(FX "/dat/reader_tests/generated", "/delta", &seen);
  tables += each_table(FX "/delta-rs-data-err-logs", "", &seen);
  print_message("%zu tables with Parquet checkpoints, %zu lines compared\n", tables, seen);
  assert_true(tables >= 8);
  assert_true(seen >= 100);
}

/* ---------- a checkpoint written here ---------- */

static const char *SCHEMA =
    "{\"type\":\"struct\",\"fields\":[{\"name\":\"id\",\"type\":\"long\",\"nullable\":true,"
    "\"metadata\":{}},{\"name\":\"p\",\"type\":\"string\",\"nullable\":true,\"metadata\":{}}]}";

static void commit_files(dl_table *t, int from, int to, bool remove_first) {
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  dl_txn *x = NULL;
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  dl_dv dv = {.storage_type = 'i', .path_or_inline = "wi5b=000010000siXQKl0rr91000f55c8Xg0@@D72lkbi5=-{L",
              .offset = -1, .size_in_bytes = 40, .cardinality = 6, .max_row_index = -1};
  for (int i = from; i < to; i++) {
    char path[128], pv[64], tags[64];
    if (i % 7 == 3) snprintf(path, sizeof path, "p=x y/f %d.parquet", i);
    else snprintf(path, sizeof path, "p=v%d/f-%d.parquet", i % 5, i);
    int n = i % 4 == 1 ? snprintf(pv, sizeof pv, "p%c\xff", 0) : snprintf(pv, sizeof pv, "p%cv%d", 0, i % 5);
    pv[n + 1] = 0;
    pv[n + 2] = 0;
    n = snprintf(tags, sizeof tags, "k%c%d", 0, i);
    tags[n + 1] = 0;
    tags[n + 2] = 0;
    dl_file f = {.path = path, .size = 1000 + i, .modification_time = 1700000000000 + i,
                 .data_change = i % 2, .stats = i % 3 ? "{\"numRecords\":10}" : NULL,
                 .partition_values = pv, .tags = i % 6 == 0 ? tags : NULL, .deletion_timestamp = -1,
                 .base_row_id = i % 4 ? -1 : i * 10, .default_row_commit_version = i % 4 ? -1 : 7,
                 .dv = i % 5 == 2 ? &dv : NULL};
    assert_int_equal(dl_txn_add_file(x, &f), 0);
  }
  if (remove_first) {
    dl_file r = {.path = "p=v1/f-1.parquet", .size = 1001, .deletion_timestamp = 1700000009999,
                 .data_change = true, .partition_values = "", .base_row_id = -1,
                 .default_row_commit_version = -1};
    assert_int_equal(dl_txn_remove_file(x, &r), 0);
  }
  assert_int_equal(dl_txn_set_app_txn(x, "app-1", from), 0);
  assert_int_equal(dl_txn_commit(x, NULL, NULL), 0);
  dl_txn_free(x);
  dl_snapshot_free(s);
}

static int find_cb(void *ctx, const dl_file *f) {
  dl_file *want = ctx;
  if (strcmp(f->path, want->path)) return 0;
  *want = *f;
  return 1;
}

/* A table in dir: create, 300 + 10 adds (one remove), checkpoint at 2, 2 more adds. */
static dl_table *make_table(char *dir) {
  assert_non_null(mkdtemp(dir));
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, dir), 0);
  dl_txn *x = NULL;
  assert_int_equal(dl_txn_begin(&x, t, NULL), 0);
  const char *feat[] = {"deletionVectors"};
  dl_protocol p = {3, 7, 1, 1, feat, feat};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  const char *pcs[] = {"p"};
  dl_metadata_spec md = {.schema_string = SCHEMA, .num_partition_columns = 1,
                         .partition_columns = pcs, .created_time = -1};
  assert_int_equal(dl_txn_set_metadata(x, &md), 0);
  assert_int_equal(dl_txn_set_domain(x, "dom", "{\"a\":1}", false), 0);
  assert_int_equal(dl_txn_commit(x, NULL, NULL), 0);
  dl_txn_free(x);
  commit_files(t, 0, 300, false);
  commit_files(t, 300, 310, true);
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_checkpoint_write(t, s), 0);
  dl_snapshot_free(s);
  s = NULL;
  commit_files(t, 310, 312, false);
  return t;
}

static void rm_rf(const char *dir) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

static void test_written_checkpoint(void **state) {
  (void)state;
  char dir[] = "/tmp/dl_flat_XXXXXX";
  dl_table *t = make_table(dir);
  dl_snapshot *s = NULL;
  /* 312 adds, one of them removed by the commit checkpointed */
  assert_true(same_both_ways(dir) >= 312);
  /* the flat reader's answer is the one that went in */
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_snapshot_checkpoint_version(s), 2);
  assert_int_equal(dl_snapshot_num_files(s), 311);
  dl_file f = {.path = "p=v2/f-7.parquet"};
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_int_equal(f.size, 1007);
  assert_int_equal(f.modification_time, 1700000000007);
  assert_true(f.data_change);
  assert_string_equal(f.stats, "{\"numRecords\":10}");
  assert_non_null(f.dv);
  assert_int_equal(f.dv->storage_type, 'i');
  assert_int_equal(f.dv->offset, -1);
  assert_int_equal(f.dv->cardinality, 6);
  const char *v = NULL;
  assert_int_equal(dl_kv_get(f.partition_values, "p", &v), 1);
  assert_string_equal(v, "v2");
  assert_int_equal(f.base_row_id, -1);
  f = (dl_file){.path = "p=v3/f-8.parquet"}; /* row tracking's ids */
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_int_equal(f.base_row_id, 80);
  assert_int_equal(f.default_row_commit_version, 7);
  f = (dl_file){.path = "p=v4/f-9.parquet"}; /* null partition value, no stats */
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_null(f.stats);
  assert_null(f.dv);
  v = "x";
  assert_int_equal(dl_kv_get(f.partition_values, "p", &v), 1);
  assert_null(v);
  f = (dl_file){.path = "p=v2/f-12.parquet"}; /* tags */
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_non_null(f.tags);
  assert_int_equal(dl_kv_get(f.tags, "k", &v), 1);
  assert_string_equal(v, "12");
  f = (dl_file){.path = "p=x y/f 3.parquet"}; /* escaped in the log */
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_non_null(strchr(f.raw_path, '%'));
  dl_app_txn at;
  assert_int_equal(dl_snapshot_find_app_txn(s, "app-1", &at), 1);
  assert_int_equal(at.version, 310);
  assert_int_equal(dl_snapshot_num_domains(s), 1);
  dl_snapshot_free(s);
  dl_table_free(t);
  rm_rf(dir);
}

/* A new table in dir (mkdtemp) with protocol 1/2 and SCHEMA, partitioned by p or not. */
static dl_table *empty_table(char *dir, bool partitioned) {
  assert_non_null(mkdtemp(dir));
  dl_table *t = NULL;
  assert_int_equal(dl_table_open(&t, dir), 0);
  dl_txn *x = NULL;
  assert_int_equal(dl_txn_begin(&x, t, NULL), 0);
  dl_protocol p = {1, 2, 0, 0, NULL, NULL};
  assert_int_equal(dl_txn_set_protocol(x, &p), 0);
  const char *pcs[] = {"p"};
  dl_metadata_spec md = {.schema_string = SCHEMA, .num_partition_columns = partitioned,
                         .partition_columns = partitioned ? pcs : NULL, .created_time = -1};
  assert_int_equal(dl_txn_set_metadata(x, &md), 0);
  assert_int_equal(dl_txn_commit(x, NULL, NULL), 0);
  dl_txn_free(x);
  return t;
}

/* A checkpoint of several row groups (the writer cuts one at 131,072 rows): the flat
 * reader gives each row group's bytes back once applied (MADV_DONTNEED), so whatever kept
 * pointing into them would read zeros; both readers must still agree, and on the values. */
static void test_many_row_groups(void **state) {
  (void)state;
  char dir[] = "/tmp/dl_flat_rg_XXXXXX";
  dl_table *t = empty_table(dir, true);
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  const size_t n = 140000;
  for (size_t i = 0; i < n; i++) {
    char path[64], stats[64], pv[16];
    snprintf(path, sizeof path, "p=v%zu/part-%07zu.parquet", i % 7, i);
    snprintf(stats, sizeof stats, "{\"numRecords\":%zu}", i);
    int k = snprintf(pv, sizeof pv, "p%cv%zu", 0, i % 7);
    pv[k + 1] = pv[k + 2] = 0;
    dl_file f = {.path = path, .size = (int64_t)i + 1, .modification_time = (int64_t)i,
                 .data_change = i % 2, .stats = stats, .partition_values = pv,
                 .deletion_timestamp = -1, .base_row_id = -1, .default_row_commit_version = -1};
    assert_int_equal(dl__fileset_apply(s->base, DL__E_ADD, &f, NULL), 0);
  }
  dl__snapshot_finish(s);
  assert_int_equal(dl_checkpoint_write(t, s), 0);
  dl_snapshot_free(s);
  assert_int_equal(same_both_ways(dir), n + 1);
  s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_snapshot_num_files(s), n);
  dl_file f = {.path = "p=v5/part-0139998.parquet"}; /* in the last row group */
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_int_equal(f.size, 139999);
  assert_string_equal(f.stats, "{\"numRecords\":139998}");
  f = (dl_file){.path = "p=v1/part-0000001.parquet"}; /* in the first, given back */
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_int_equal(f.size, 2);
  assert_true(f.data_change);
  assert_string_equal(f.stats, "{\"numRecords\":1}");
  const char *v = NULL;
  assert_int_equal(dl_kv_get(f.partition_values, "p", &v), 1);
  assert_string_equal(v, "v1");
  /* what the snapshot holds: 48-byte entries (and the commits' room), 4-byte index
   * slots at a load factor of 0.27-0.7, the strings as they are */
  size_t strings = 0;
  for (size_t i = 0; i < n; i++) {
    char path[64], stats[64];
    strings += (size_t)snprintf(path, sizeof path, "p=v%zu/part-%07zu.parquet", i % 7, i) + 1;
    strings += (size_t)snprintf(stats, sizeof stats, "{\"numRecords\":%zu}", i) + 1;
  }
  size_t mem = dl_snapshot_memory(s);
  print_message("snapshot of %zu files: %zu bytes (%.1f a file, %.1f of them strings)\n", n, mem,
                (double)mem / (double)n, (double)strings / (double)n);
  assert_true(mem <= strings + n * (48 + 1 + 15) + ((size_t)1 << 20));
  dl_snapshot_free(s);
  dl_table_free(t);
  rm_rf(dir);
}

/* A checkpoint whose second row group repeats keys of the first (re-added with another
 * size, removed): the row groups are filled on different threads and indexed in file
 * order, so the later action must win exactly as the row reader applies them one by one. */
static void test_repeats_across_row_groups(void **state) {
  (void)state;
  char dir[] = "/tmp/dl_flat_rep_XXXXXX";
  dl_table *t = empty_table(dir, false);
  dl_snapshot *s = NULL;
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  /* appended unindexed, repeats and all: the checkpoint is written from these entries */
  dl__fileset_bulk_begin(s->base);
  const size_t n = 140000, rep = 1000;
  for (size_t i = 0; i < n + 2 * rep; i++) {
    size_t k = i < n ? i : i - n; /* the repeats: keys 0..1999, from the first row group */
    char path[64];
    snprintf(path, sizeof path, "f-%07zu.parquet", k);
    bool removed = i >= n + rep;
    dl_file f = {.path = path, .size = i < n ? (int64_t)k : (int64_t)(k + 1000000),
                 .modification_time = (int64_t)i, .deletion_timestamp = removed ? dl__now_ms() : -1,
                 .stats = removed ? NULL : "{}", .partition_values = ""};
    assert_int_equal(dl__fileset_apply(s->base, removed ? DL__E_REMOVE : DL__E_ADD, &f, NULL), 0);
  }
  assert_int_equal(dl_checkpoint_write(t, s), 0);
  dl_snapshot_free(s);
  s = NULL;
  assert_int_equal(same_both_ways(dir), n + 1);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  assert_int_equal(dl_snapshot_num_files(s), n - rep);
  dl_file f = {.path = "f-0000005.parquet"}; /* re-added: the later size */
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_int_equal(f.size, 1000005);
  f = (dl_file){.path = "f-0001500.parquet"}; /* removed */
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 0);
  assert_int_equal(dl_snapshot_tombstones(s, find_cb, &f), 1);
  f = (dl_file){.path = "f-0002500.parquet"};
  assert_int_equal(dl_snapshot_files(s, find_cb, &f), 1);
  assert_int_equal(f.size, 2500);
  dl_snapshot_free(s);
  dl_table_free(t);
  rm_rf(dir);
}

/* Damaged checkpoints: bytes of the column chunks overwritten at 400 places. Neither
 * reader may crash or read out of bounds (ASan), and when both accept a damaged file
 * they must give the same snapshot (the flat reader skips columns the row reader reads,
 * so one may refuse a file the other accepts). */
static void test_damaged_checkpoints(void **state) {
  (void)state;
  char dir[] = "/tmp/dl_flat_XXXXXX";
  dl_table *t = make_table(dir);
  dl_table_free(t);
  char ck[256];
  for (int v = 0; v <= 2; v++) { /* no commits to fall back to: the checkpoint must serve */
    snprintf(ck, sizeof ck, "%s/_delta_log/%020d.json", dir, v);
    assert_int_equal(unlink(ck), 0);
  }
  snprintf(ck, sizeof ck, "%s/_delta_log/00000000000000000002.checkpoint.parquet", dir);
  FILE *fp = fopen(ck, "rb");
  assert_non_null(fp);
  static uint8_t orig[1 << 20];
  size_t len = fread(orig, 1, sizeof orig, fp);
  fclose(fp);
  assert_true(len > 1000 && len < sizeof orig);
  uint32_t footer = (uint32_t)orig[len - 8] | (uint32_t)orig[len - 7] << 8 |
                    (uint32_t)orig[len - 6] << 16 | (uint32_t)orig[len - 5] << 24;
  size_t data_end = len - 8 - footer; /* column chunks are [4, data_end) */
  unsigned seed = 7, same = 0, refused = 0;
  for (int m = 0; m < 400; m++) {
    static uint8_t buf[1 << 20];
    memcpy(buf, orig, len);
    seed = seed * 1103515245u + 12345u;
    size_t at = 4 + (seed >> 4) % (data_end - 4);
    buf[at] ^= (uint8_t)(1 + (seed >> 20) % 255);
    if (m % 3 == 0 && at + 1 < data_end) buf[at + 1] = (uint8_t)(seed >> 9);
    fp = fopen(ck, "wb");
    assert_non_null(fp);
    assert_int_equal(fwrite(buf, 1, len, fp), len);
    fclose(fp);
    lines a, b;
    char ea[1024], eb[1024];
    int ra = describe(dir, false, &a, ea, sizeof ea);
    int rb = describe(dir, true, &b, eb, sizeof eb);
    if (!ra && !rb) {
      assert_int_equal(a.n, b.n);
      for (size_t i = 0; i < a.n; i++) assert_string_equal(a.v[i], b.v[i]);
      same++;
    } else {
      refused++;
    }
    lines_free(&a);
    lines_free(&b);
  }
  print_message("damaged checkpoints: %u read alike by both, %u refused by one or both\n", same, refused);
  assert_true(same > 0 && refused > 0);
  rm_rf(dir);
}

/* ---------- bulk indexing equals one-by-one upserts ---------- */

static void apply_seq(dl__fileset *fs, unsigned seed, int n, bool bulk_after) {
  dl_dv dvs[2] = {{.storage_type = 'i', .path_or_inline = "abc", .offset = -1, .size_in_bytes = 4,
                   .cardinality = 1, .max_row_index = -1},
                  {.storage_type = 'u', .path_or_inline = "ab^-aqEH.-t@S}K{vb[*k^", .offset = 7,
                   .size_in_bytes = 9, .cardinality = 2, .max_row_index = -1}};
  for (int i = 0; i < n; i++) {
    if (bulk_after && i == n / 5) dl__fileset_bulk_begin(fs);
    seed = seed * 1103515245u + 12345u;
    unsigned r = seed >> 8;
    char path[64], pv[32];
    snprintf(path, sizeof path, r % 9 == 0 ? "d=%u/f%%20%u" : "d=%u/f %u", r % 3, (r >> 4) % 700);
    int k = snprintf(pv, sizeof pv, "d%c%u", 0, r % 3);
    pv[k + 1] = 0;
    pv[k + 2] = 0;
    dl_dv dv = dvs[(r >> 12) & 1];
    dv.cardinality = (int64_t)(r % 17); /* a non-key field: refreshed by a repeat */
    dl_file f = {.path = path, .size = (int64_t)(r % 1000), .modification_time = i,
                 .deletion_timestamp = i, .data_change = r & 1, .partition_values = pv,
                 .stats = r % 5 ? "{}" : NULL};
    int kind = (r >> 14) % 3 ? DL__E_ADD : DL__E_REMOVE;
    const dl_dv *d = (r >> 13) % 4 == 0 ? &dv : NULL;
    if (i % 2) { /* sized, as the Parquet reader hands them: not NUL-terminated */
      char raw[80];
      size_t pl = strlen(path), sl = f.stats ? strlen(f.stats) : 0;
      memcpy(raw, path, pl);
      memcpy(raw + pl, f.stats ? f.stats : "", sl);
      memcpy(raw + pl + sl, "XYZ", 4);
      f.path = raw;
      f.stats = f.stats ? raw + pl : NULL;
      uint64_t ph = i % 4 == 1 && !strchr(path, '%') ? dl__hash(path, pl, 0) : 0;
      assert_int_equal(dl__fileset_apply_sized(fs, kind, &f, d, pl, sl, ph), 0);
    } else {
      assert_int_equal(dl__fileset_apply(fs, kind, &f, d), 0);
    }
  }
  assert_int_equal(dl__fileset_bulk_end(fs), 0);
}

static void test_bulk_equals_apply(void **state) {
  (void)state;
  for (unsigned seed = 1; seed <= 3; seed++) {
    dl__fileset *a = NULL, *b = NULL;
    assert_int_equal(dl__fileset_new(&a), 0);
    assert_int_equal(dl__fileset_new(&b), 0);
    apply_seq(a, seed, 6000, false);
    apply_seq(b, seed, 6000, true);
    assert_true(a->n > 500);
    assert_int_equal(a->n, b->n);
    assert_int_equal(a->n_add, b->n_add);
    assert_int_equal(a->n_remove, b->n_remove);
    assert_int_equal(a->add_bytes, b->add_bytes);
    for (size_t i = 0; i < a->n; i++) {
      const dl__entry *x = &a->ents[i], *y = &b->ents[i];
      assert_string_equal(x->path, y->path);
      assert_int_equal(x->kind, y->kind);
      assert_int_equal(x->size, y->size);
      assert_int_equal(x->time, y->time);
      assert_int_equal(x->flags, y->flags);
      assert_int_equal(!x->stats, !y->stats);
      if (x->stats) assert_string_equal(x->stats, y->stats);
      assert_null(strchr(x->path, 'X'));
      assert_int_equal(!dl__entry_dv(x), !dl__entry_dv(y));
      if (dl__entry_dv(x)) assert_int_equal(dl__entry_dv(x)->cardinality, dl__entry_dv(y)->cardinality);
      assert_memory_equal(dl__entry_pv(x), dl__entry_pv(y), dl__kv_size(dl__entry_pv(x)));
      assert_ptr_equal(dl__fileset_find(b, x), y); /* the index finds every entry */
    }
    dl__fileset_unref(a);
    dl__fileset_unref(b);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fixture_checkpoints),
      cmocka_unit_test(test_written_checkpoint),
      cmocka_unit_test(test_bulk_equals_apply),
      cmocka_unit_test(test_many_row_groups),
      cmocka_unit_test(test_repeats_across_row_groups),
      cmocka_unit_test(test_damaged_checkpoints),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
