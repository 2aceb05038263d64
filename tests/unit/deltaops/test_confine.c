/* test_confine.c: maintenance on tables whose directory or log is hostile. Vacuum never
 * follows or deletes a symlink (to a directory or a file) and removes stale log temp
 * files; clone, restore and generate refuse log paths that escape the table (relative
 * "..", encoded, absolute, other schemes, backslashes, empty segments) unless the caller
 * allowed the root, and write nothing then; a deep clone onto a full disk (a 2 MiB tmpfs)
 * says "No space left on device" and leaves nothing behind; a VACUUM END that races a
 * metadata change still commits. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/err.h"
#include "dop_test_util.h"
#include "store/delta/dl.h"
#include "store/deltaops/dop.h"

static bool lexists(const char *dir, const char *rel) {
  char p[4096];
  struct stat sb;
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  return lstat(p, &sb) == 0;
}

static void link_at(const char *target, const char *dir, const char *rel) {
  char p[4096];
  snprintf(p, sizeof p, "%s/%s", dir, rel);
  assert_int_equal(symlink(target, p), 0);
}

/* Appends a commit (the given action lines) to the table at d; returns its version. */
static int64_t append_commit(const char *d, const char *lines) {
  int64_t v = tu_latest_version(d) + 1;
  char p[4096];
  snprintf(p, sizeof p, "%s/_delta_log/%020lld.json", d, (long long)v);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fprintf(f, "{\"commitInfo\":{\"timestamp\":%lld,\"operation\":\"WRITE\"}}\n%s", (long long)time(NULL) * 1000, lines);
  fclose(f);
  return v;
}

static int64_t append_add(const char *d, const char *json_path, long long size) {
  char line[4096];
  snprintf(line, sizeof line, "{\"add\":{\"path\":\"%s\",\"partitionValues\":{},\"size\":%lld,"
           "\"modificationTime\":1,\"dataChange\":true}}\n", json_path, size);
  return append_commit(d, line);
}

/* ---- vacuum ---- */

static void test_vacuum_symlinks(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table"), *out = tu_tmpdir();
  tu_write(out, "victim.parquet", 10);
  tu_write(out, "sub/victim2.parquet", 10);
  tu_write(d, "sub/orphan.parquet", 10);
  link_at(out, d, "p=1");                       /* a directory symlink out of the table */
  link_at(out, d, "sub/deeper");                /* one level down */
  char f[4096];
  snprintf(f, sizeof f, "%s/victim.parquet", out);
  link_at(f, d, "link.parquet");                /* a file symlink */
  tu_age(out, 30);
  tu_age(d, 30);
  /* A stale commit temp file of a killed writer, and a fresh one. */
  tu_write(d, "_delta_log/.00000000000000000009.json.4242.1.tmp", 3);
  tu_write(d, "_delta_log/.00000000000000000010.json.4242.2.tmp", 3);
  snprintf(f, sizeof f, "touch -m -d '2 hours ago' '%s/_delta_log/.00000000000000000009.json.4242.1.tmp'", d);
  assert_int_equal(system(f), 0);

  dop_result *r = NULL;
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  o.dry_run = true;
  assert_int_equal(dop_vacuum(&r, d, &o, NULL), 0);
  bool orphan = false;
  for (size_t i = 0; i < r->nrows; i++) {
    const char *p = dop_result_cell(r, i, 0)->str;
    assert_null(strstr(p, "victim"));
    assert_null(strstr(p, "link.parquet"));
    orphan |= strstr(p, "sub/orphan.parquet") != NULL;
  }
  assert_true(orphan);
  dop_result_free(r);

  o.dry_run = false;
  assert_int_equal(dop_vacuum(&r, d, &o, NULL), 0);
  dop_result_free(r);
  assert_true(tu_exists(out, "victim.parquet"));
  assert_true(tu_exists(out, "sub/victim2.parquet"));
  assert_true(lexists(d, "p=1"));
  assert_true(lexists(d, "sub/deeper"));
  assert_true(lexists(d, "link.parquet"));
  assert_false(lexists(d, "sub/orphan.parquet"));
  assert_false(lexists(d, "_delta_log/.00000000000000000009.json.4242.1.tmp"));
  assert_true(lexists(d, "_delta_log/.00000000000000000010.json.4242.2.tmp"));
  tu_rmrf(d);
  tu_rmrf(out);
  free(d);
  free(out);
}

/* deltad's own temp files left in data directories by a killed clone or write go once
 * older than the retention; other hidden files and fresh temp files stay. */
static void test_vacuum_stale_own_temps(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  tu_write(d, ".part-0.parquet.4242.7.copy.tmp", 10);
  tu_write(d, "sub/.part-1.parquet.4242.8.tmp", 10);
  tu_write(d, ".part-0.parquet.crc", 10);      /* a writer's checksum file: hidden */
  tu_write(d, ".notours.4242.tmp", 10);        /* one number only: not our pattern */
  tu_write(d, "..4242.9.tmp", 10);             /* no name: not our pattern */
  tu_age(d, 30);
  tu_write(d, ".part-2.parquet.4242.10.copy.tmp", 10); /* a clone still copying */
  dop_result *r = NULL;
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  assert_int_equal(dop_vacuum(&r, d, &o, NULL), 0);
  dop_result_free(r);
  assert_false(lexists(d, ".part-0.parquet.4242.7.copy.tmp"));
  assert_false(lexists(d, "sub/.part-1.parquet.4242.8.tmp"));
  assert_true(lexists(d, ".part-0.parquet.crc"));
  assert_true(lexists(d, ".notours.4242.tmp"));
  assert_true(lexists(d, "..4242.9.tmp"));
  assert_true(lexists(d, ".part-2.parquet.4242.10.copy.tmp"));
  tu_rmrf(d);
  free(d);
}

/* Retentions beyond int64 milliseconds keep everything; out-of-range intervals are
 * refused; neither overflows. */
static void test_vacuum_retention_edges(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table");
  tu_write(d, "orphan.parquet", 10);
  tu_age(d, 30);
  dop_result *r = NULL;
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  o.dry_run = true;
  o.has_retention = true;
  o.retention_hours = 1e300;
  uint64_t n = 1;
  assert_int_equal(dop_vacuum(&r, d, &o, &n), 0);
  assert_int_equal(n, 0);
  dop_result_free(r);
  o.now_ms = INT64_MIN + 1; /* a clock at the edge: nothing is old */
  o.retention_hours = 1e6;
  assert_int_equal(dop_vacuum(&r, d, &o, &n), 0);
  assert_int_equal(n, 0);
  dop_result_free(r);
  int64_t ms = 0;
  assert_int_equal(dop_parse_interval_ms("interval 1e300 days", &ms), DD_EINVAL);
  assert_int_equal(dop_parse_interval_ms("interval -1 days", &ms), DD_EINVAL);
  assert_int_equal(dop_parse_interval_ms("interval 7 days", &ms), 0);
  assert_int_equal(ms, 7 * 86400000LL);
  tu_rmrf(d);
  free(d);
}

/* ---- hostile log paths ---- */

static const char *const BAD_PATHS[] = {
    "../ESC.parquet", "%2E%2E/ESC.parquet", "sub/../../ESC.parquet", "/etc/hostname",
    "file:///etc/hostname", "file:/etc/hostname", "..\\\\ESC.parquet", "a//b.parquet",
    "./x.parquet", "s3://bucket/x.parquet", "file://host/etc/hostname", "%2Fetc%2Fhostname",
};

static void test_clone_hostile_paths(void **st) {
  (void)st;
  char *base = tu_tmpdir(), src[4096], cmd[8192];
  snprintf(src, sizeof src, "%s/src", base);
  for (size_t i = 0; i < sizeof BAD_PATHS / sizeof BAD_PATHS[0]; i++) {
    char *fx = tu_copy_fixture("simple_table");
    snprintf(cmd, sizeof cmd, "rm -rf '%s' && mv '%s' '%s' && mkdir -p '%s/out'", src, fx, src, base);
    assert_int_equal(system(cmd), 0);
    free(fx);
    tu_write(base, "ESC.parquet", 10);      /* src/../ESC.parquet exists */
    tu_write(src, "a/b.parquet", 10);
    tu_write(src, "x.parquet", 10);
    append_add(src, BAD_PATHS[i], 10);
    for (int deep = 0; deep < 2; deep++) {
      char target[4096];
      snprintf(target, sizeof target, "%s/out/t%d", base, deep);
      dop_result *r = NULL;
      dop_clone_opts o = DOP_CLONE_OPTS_INIT;
      o.target = target;
      o.shallow = !deep;
      int rc = dop_clone(&r, src, &o);
      if (rc != DD_EPERM) fprintf(stderr, "path %s deep %d: rc %d %s\n", BAD_PATHS[i], deep, rc, dd_err_msg());
      assert_int_equal(rc, DD_EPERM);
      assert_null(r);
      assert_false(lexists(target, ""));     /* nothing written, not even the directory */
      assert_false(lexists(base, "out/ESC.parquet"));
      assert_false(lexists(base, "out/hostname"));
    }
  }
  tu_rmrf(base);
  free(base);
}

/* Absolute paths: under the source itself always; elsewhere only under an allowed root. */
static void test_clone_allowed_roots(void **st) {
  (void)st;
  char *src = tu_copy_fixture("simple_table"), *other = tu_tmpdir(), *base = tu_tmpdir();
  char p[4096], target[4096];
  tu_write(other, "lake/f.parquet", 10);
  tu_write(src, "own.parquet", 10);
  snprintf(p, sizeof p, "file://%s/own.parquet", src);
  append_add(src, p, 10);
  snprintf(p, sizeof p, "file://%s/lake/f.parquet", other);
  append_add(src, p, 10);
  dop_result *r = NULL;
  dop_clone_opts o = DOP_CLONE_OPTS_INIT;
  snprintf(target, sizeof target, "%s/t", base);
  o.target = target;
  o.shallow = false;
  assert_int_equal(dop_clone(&r, src, &o), DD_EPERM);
  assert_non_null(strstr(dd_err_msg(), "lake/f.parquet"));
  assert_false(lexists(target, ""));
  /* A root that is only a string prefix does not match; the whole segment does. */
  char root[4096], prefix[4096];
  snprintf(prefix, sizeof prefix, "%s/la", other);
  snprintf(root, sizeof root, "file://%s/lake/", other);
  const char *roots1[] = {prefix};
  dop_roots ro = {1, roots1, NULL, NULL};
  o.allowed_roots = &ro;
  assert_int_equal(dop_clone(&r, src, &o), DD_EPERM);
  const char *roots2[] = {prefix, root};
  ro = (dop_roots){2, roots2, NULL, NULL};
  assert_int_equal(dop_clone(&r, src, &o), 0);
  dop_result_free(r);
  assert_true(tu_exists(target, "own.parquet"));
  assert_true(tu_exists(target, "f.parquet"));
  /* A root with ".." matches nothing. */
  snprintf(root, sizeof root, "%s/lake/../lake", other);
  const char *roots3[] = {root};
  ro = (dop_roots){1, roots3, NULL, NULL};
  snprintf(target, sizeof target, "%s/t2", base);
  o.shallow = true;
  assert_int_equal(dop_clone(&r, src, &o), DD_EPERM);
  tu_rmrf(src);
  tu_rmrf(other);
  tu_rmrf(base);
  free(src);
  free(other);
  free(base);
}

/* Restore and generate of a shallow clone (absolute paths into its source) need the
 * source among the roots; two files meeting at one deep-clone name are refused. */
static void test_roots_restore_generate(void **st) {
  (void)st;
  char *src = tu_copy_fixture("simple_table"), *base = tu_tmpdir(), c[4096], p[8192];
  snprintf(c, sizeof c, "%s/c", base);
  dop_result *r = NULL;
  dop_clone_opts o = DOP_CLONE_OPTS_INIT;
  o.target = c;
  assert_int_equal(dop_clone(&r, src, &o), 0);
  dop_result_free(r);
  const char *urls[] = {src};
  dop_roots ro = {1, urls, NULL, NULL};
  assert_int_equal(dop_generate(&r, c, "symlink_format_manifest"), DD_EPERM);
  assert_false(lexists(c, "_symlink_format_manifest"));
  assert_int_equal(dop_generate_in(&r, c, "symlink_format_manifest", &ro), 0);
  dop_result_free(r);
  assert_true(lexists(c, "_symlink_format_manifest/manifest"));
  snprintf(p, sizeof p, "%s/dup", base);
  tu_write(p, "1-table.parquet", 10);
  tu_write(p, "sub/1-table.parquet", 10);
  char line[16384];
  const char *fmt = "{\"%s\":{\"path\":\"file://%s/1-table.parquet\",\"partitionValues\":{},\"size\":1,"
                    "\"modificationTime\":1,\"deletionTimestamp\":1,\"dataChange\":true}}\n"
                    "{\"%s\":{\"path\":\"file://%s/sub/1-table.parquet\",\"partitionValues\":{},\"size\":1,"
                    "\"modificationTime\":1,\"deletionTimestamp\":1,\"dataChange\":true}}\n";
  snprintf(line, sizeof line, fmt, "add", p, "add", p);
  int64_t v = append_commit(c, line);
  snprintf(line, sizeof line, fmt, "remove", p, "remove", p);
  append_commit(c, line);
  /* Back to version v: its two new files are absolute paths into dup. */
  const char *urls1[] = {p};
  dop_roots rp = {1, urls1, NULL, NULL};
  assert_int_equal(dop_restore(&r, c, v, NULL), DD_EPERM);
  assert_int_equal(tu_latest_version(c), v + 1);
  assert_int_equal(dop_restore_in(&r, c, v, NULL, &ro), DD_EPERM); /* src is not dup */
  assert_int_equal(dop_restore_in(&r, c, v, NULL, &rp), 0);
  dop_result_free(r);
  assert_int_equal(tu_latest_version(c), v + 2);
  /* Deep clone of version v: both files would land at 1-table.parquet. */
  const char *urls2[] = {src, p};
  dop_roots ro2 = {2, urls2, NULL, NULL};
  char d2[4096];
  snprintf(d2, sizeof d2, "%s/deep", base);
  o.target = d2;
  o.shallow = false;
  o.version = v;
  o.allowed_roots = &ro2;
  assert_int_equal(dop_clone(&r, c, &o), DD_EINVAL);
  assert_false(lexists(d2, ""));
  tu_rmrf(src);
  tu_rmrf(base);
  free(src);
  free(base);
}

/* A deep clone target with a symlinked directory inside: never written through. */
static void test_clone_target_symlink(void **st) {
  (void)st;
  char *src = tu_copy_fixture("delta-0.8.0-partitioned"), *base = tu_tmpdir(), *out = tu_tmpdir();
  char target[4096];
  snprintf(target, sizeof target, "%s/t", base);
  assert_int_equal(mkdir(target, 0777), 0);
  link_at(out, target, "year=2020");
  dop_result *r = NULL;
  dop_clone_opts o = DOP_CLONE_OPTS_INIT;
  o.target = target;
  o.shallow = false;
  int rc = dop_clone(&r, src, &o);
  assert_int_not_equal(rc, 0);
  assert_int_equal(tu_count(out, ".parquet"), 0);
  assert_true(lexists(target, "year=2020"));
  assert_false(lexists(target, "_delta_log"));
  tu_rmrf(src);
  tu_rmrf(base);
  tu_rmrf(out);
  free(src);
  free(base);
  free(out);
}

static void test_restore_generate_hostile(void **st) {
  (void)st;
  char *base = tu_tmpdir(), *fx = tu_copy_fixture("simple_table"), d[4096], cmd[8192];
  snprintf(d, sizeof d, "%s/t", base);
  snprintf(cmd, sizeof cmd, "mv '%s' '%s'", fx, d);
  assert_int_equal(system(cmd), 0);
  free(fx);
  tu_write(base, "ESC.parquet", 10);
  int64_t v = append_add(d, "../ESC.parquet", 10);
  dop_result *r = NULL;
  assert_int_equal(dop_generate(&r, d, "symlink_format_manifest"), DD_EPERM);
  assert_non_null(strstr(dd_err_msg(), "../ESC.parquet"));
  assert_false(lexists(d, "_symlink_format_manifest"));
  append_commit(d, "{\"remove\":{\"path\":\"../ESC.parquet\",\"deletionTimestamp\":1,\"dataChange\":true}}\n");
  assert_int_equal(dop_restore(&r, d, v, NULL), DD_EPERM);
  assert_int_equal(tu_latest_version(d), v + 1);
  tu_rmrf(base);
  free(base);
}

/* CONVERT neither follows nor adds a symlink. */
static void test_convert_symlink(void **st) {
  (void)st;
  char *src = tu_copy_fixture("simple_table"), *base = tu_tmpdir(), cmd[8192], id[4200];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/pq' '%s/out' && f=$(ls '%s'/*.parquet | head -1) && "
           "cp \"$f\" '%s/pq/a.parquet' && cp \"$f\" '%s/out/b.parquet'", base, base, src, base, base);
  assert_int_equal(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "%s/out/b.parquet", base);
  snprintf(id, sizeof id, "%s/pq", base);
  link_at(cmd, id, "b.parquet");
  snprintf(id, sizeof id, "parquet.`%s/pq`", base);
  dop_result *r = NULL;
  assert_int_equal(dop_convert(&r, id, NULL, NULL, NULL), DD_EPERM);
  assert_null(r);
  assert_false(lexists(base, "pq/_delta_log/00000000000000000000.json"));
  tu_rmrf(src);
  tu_rmrf(base);
  free(src);
  free(base);
}

/* ---- a full disk ---- */

static void test_clone_enospc(void **st) {
  (void)st;
  char *src = tu_copy_fixture("simple_table"), *base = tu_tmpdir(), mnt[4096], target[4096];
  snprintf(mnt, sizeof mnt, "%s/full", base);
  assert_int_equal(mkdir(mnt, 0777), 0);
  if (mount("tmpfs", mnt, "tmpfs", 0, "size=2m") != 0) {
    print_message("skipped: cannot mount a tmpfs (%s)\n", strerror(errno));
    tu_rmrf(src);
    tu_rmrf(base);
    free(src);
    free(base);
    skip();
  }
  tu_write(src, "big.bin", 3 << 20);
  append_add(src, "big.bin", 3 << 20);
  /* Results are gathered first and checked after the tmpfs is unmounted. */
  dop_result *r = NULL;
  dop_clone_opts o = DOP_CLONE_OPTS_INIT;
  o.shallow = false;
  int rcs[2];
  bool nospace[2], left[2], empty[2];
  for (int pre = 0; pre < 2; pre++) {
    snprintf(target, sizeof target, "%s/t%d", mnt, pre);
    if (pre) mkdir(target, 0777);
    o.target = target;
    rcs[pre] = dop_clone(&r, src, &o);
    dop_result_free(r);
    print_message("clone on a full disk: %s\n", dd_err_msg());
    nospace[pre] = strstr(dd_err_msg(), "No space left on device") != NULL;
    left[pre] = lexists(target, "");
    char cmd[8192];
    snprintf(cmd, sizeof cmd, "test -z \"$(ls -A '%s' 2>/dev/null)\"", target);
    empty[pre] = system(cmd) == 0;
  }
  int um = umount(mnt);
  for (int pre = 0; pre < 2; pre++) {
    assert_int_equal(rcs[pre], DD_ENOMEM); /* RESOURCE_EXHAUSTED */
    assert_true(nospace[pre]);
    assert_int_equal(left[pre], pre);      /* created by the call: removed */
    assert_true(empty[pre]);
  }
  assert_int_equal(um, 0);
  tu_rmrf(src);
  tu_rmrf(base);
  free(src);
  free(base);
}

/* ---- VACUUM END after a concurrent metadata change ---- */

typedef struct racer { const char *d; int calls, fired; } racer;

static void set_property(const char *d) {
  dl_table *t = NULL;
  dl_snapshot *s = NULL;
  dl_txn *x = NULL;
  assert_int_equal(dl_table_open(&t, d), 0);
  assert_int_equal(dl_snapshot_open(&s, t, NULL), 0);
  const dl_metadata *m = dl_snapshot_metadata(s);
  const char *k[] = {"confine.test"}, *v[] = {"1"};
  char *cfg = NULL;
  assert_int_equal(dl_kv_pack(&cfg, k, v, 1), 0);
  dl_metadata_spec md = {m->id, m->name, m->description, m->schema_string, m->num_partition_columns,
                         m->partition_columns, cfg, m->created_time};
  assert_int_equal(dl_txn_begin(&x, t, s), 0);
  assert_int_equal(dl_txn_set_metadata(x, &md), 0);
  dl_commit_opts o = DL_COMMIT_OPTS_INIT;
  o.operation = "SET TBLPROPERTIES";
  assert_int_equal(dl_txn_commit(x, &o, NULL), 0);
  free(cfg);
  dl_txn_free(x);
  dl_snapshot_free(s);
  dl_table_free(t);
}

static void race_cb(void *ctx, const char *phase, uint64_t done, uint64_t total) {
  (void)done, (void)total;
  racer *rc = ctx;
  /* The second "committing" is VACUUM END's, after it read its snapshot. */
  if (!strcmp(phase, "committing") && ++rc->calls == 2) rc->fired++, set_property(rc->d);
}

static void test_vacuum_end_after_metadata_change(void **st) {
  (void)st;
  char *d = tu_copy_fixture("simple_table"), p[4096];
  snprintf(p, sizeof p, "%s/orphans", d);
  assert_int_equal(mkdir(p, 0777), 0);
  for (int i = 0; i < 10; i++) {
    snprintf(p, sizeof p, "%s/orphans/o%d.parquet", d, i);
    FILE *f = fopen(p, "w");
    assert_non_null(f);
    fclose(f);
  }
  tu_age(d, 30);
  int64_t v0 = tu_latest_version(d);
  racer rc = {d, 0, 0};
  dop_vacuum_opts o = DOP_VACUUM_OPTS_INIT;
  o.progress = race_cb;
  o.progress_ctx = &rc;
  dop_result *r = NULL;
  uint64_t n = 0;
  int ret = dop_vacuum(&r, d, &o, &n);
  if (ret) fprintf(stderr, "vacuum: %s\n", dd_err_msg());
  assert_int_equal(ret, 0);
  dop_result_free(r);
  assert_int_equal(rc.fired, 1);
  assert_int_equal(rc.calls, 3); /* START, END lost the race, END again */
  assert_true(n >= 10);
  assert_int_equal(tu_latest_version(d), v0 + 3); /* START, the property, END */
  json_t *ci = tu_commit_info(d, v0 + 1);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "VACUUM START");
  json_decref(ci);
  ci = tu_commit_info(d, v0 + 3);
  assert_string_equal(json_string_value(json_object_get(ci, "operation")), "VACUUM END");
  assert_string_equal(json_string_value(json_object_get(json_object_get(ci, "operationParameters"), "status")), "COMPLETED");
  json_decref(ci);
  tu_rmrf(d);
  free(d);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_vacuum_symlinks),
      cmocka_unit_test(test_vacuum_retention_edges),
      cmocka_unit_test(test_vacuum_stale_own_temps),
      cmocka_unit_test(test_clone_hostile_paths),
      cmocka_unit_test(test_clone_allowed_roots),
      cmocka_unit_test(test_clone_target_symlink),
      cmocka_unit_test(test_roots_restore_generate),
      cmocka_unit_test(test_restore_generate_hostile),
      cmocka_unit_test(test_convert_symlink),
      cmocka_unit_test(test_clone_enospc),
      cmocka_unit_test(test_vacuum_end_after_metadata_change),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
