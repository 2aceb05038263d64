/* test_os_local.c: the local backend of os_store: whole and ranged reads, stat, sorted
 * listing, put-if-absent never overwriting, atomic put, delete, mkdir -p, rmdir, and the
 * streamed put (pieces into a hidden temp file, linked into place at commit). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "store/objstore/os.h"

static char g_dir[256];

static int setup(void **state) {
  (void)state;
  strcpy(g_dir, "/tmp/os_test_XXXXXX");
  return mkdtemp(g_dir) ? 0 : -1;
}

static int teardown(void **state) {
  (void)state;
  char cmd[512];
  snprintf(cmd, sizeof cmd, "rm -rf %s", g_dir);
  return system(cmd) == 0 ? 0 : -1;
}

static void test_put_read_stat(void **state) {
  (void)state;
  os_store *st = NULL;
  assert_int_equal(os_local_open(&st, g_dir), 0);
  assert_int_equal(os_put(st, "a/b/c.txt", "hello world", 11), 0);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(st, "a/b/c.txt", &buf, &len), 0);
  assert_int_equal(len, 11);
  assert_memory_equal(buf, "hello world", 11);
  free(buf);
  uint8_t part[5];
  assert_int_equal(os_read_range(st, "a/b/c.txt", 6, 5, part), 0);
  assert_memory_equal(part, "world", 5);
  assert_int_equal(os_read_range(st, "a/b/c.txt", 8, 5, part), DD_ECORRUPT);
  os_stat s;
  assert_int_equal(os_stat_path(st, "a/b/c.txt", &s), 0);
  assert_int_equal(s.size, 11);
  assert_true(s.mtime_ms > 0);
  assert_int_equal(os_read_all(st, "nope", &buf, &len), DD_ENOTFOUND);
  assert_int_equal(os_put(st, "a/b/c.txt", "bye", 3), 0); /* overwrite */
  assert_int_equal(os_read_all(st, "a/b/c.txt", &buf, &len), 0);
  assert_int_equal(len, 3);
  free(buf);
  os_store_free(st);
}

static void test_put_if_absent(void **state) {
  (void)state;
  os_store *st = NULL;
  assert_int_equal(os_local_open(&st, g_dir), 0);
  assert_int_equal(os_put_if_absent(st, "log/1.json", "one", 3), 0);
  assert_int_equal(os_put_if_absent(st, "log/1.json", "two", 3), DD_EEXISTS);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(st, "log/1.json", &buf, &len), 0);
  assert_memory_equal(buf, "one", 3);
  free(buf);
  os_list l;
  assert_int_equal(os_list_dir(st, "log", &l), 0);
  assert_int_equal(l.count, 1); /* no temp files left behind */
  os_list_free(&l);
  os_store_free(st);
}

static void test_list_sorted_delete_rmdir(void **state) {
  (void)state;
  os_store *st = NULL;
  assert_int_equal(os_local_open(&st, g_dir), 0);
  assert_int_equal(os_mkdirs(st, "d/sub/deeper"), 0);
  assert_int_equal(os_put(st, "d/b", "x", 1), 0);
  assert_int_equal(os_put(st, "d/a", "xy", 2), 0);
  assert_int_equal(os_put(st, "d/c", "", 0), 0);
  os_list l;
  assert_int_equal(os_list_dir(st, "d", &l), 0);
  assert_int_equal(l.count, 4);
  assert_string_equal(l.entries[0].name, "a");
  assert_int_equal(l.entries[0].size, 2);
  assert_string_equal(l.entries[1].name, "b");
  assert_string_equal(l.entries[2].name, "c");
  assert_string_equal(l.entries[3].name, "sub");
  assert_true(l.entries[3].is_dir);
  os_list_free(&l);
  assert_int_equal(os_rmdir(st, "d/sub"), DD_EPRECOND);
  assert_int_equal(os_rmdir(st, "d/sub/deeper"), 0);
  assert_int_equal(os_rmdir(st, "d/sub"), 0);
  assert_int_equal(os_delete(st, "d/a"), 0);
  assert_int_equal(os_delete(st, "d/a"), DD_ENOTFOUND);
  assert_int_equal(os_list_dir(st, "missing", &l), DD_ENOTFOUND);
  os_store_free(st);
}

static void test_absolute_paths(void **state) {
  (void)state;
  os_store *st = NULL;
  assert_int_equal(os_local_open(&st, "/nonexistent-root"), 0);
  char path[512];
  snprintf(path, sizeof path, "file://%s/abs.bin", g_dir);
  /* Writes stay under the root; reads of absolute paths (deletion vectors) work. */
  assert_int_equal(os_put(st, path, "abc", 3), DD_EPERM);
  FILE *f = fopen(path + 7, "w");
  assert_non_null(f);
  fputs("abc", f);
  fclose(f);
  uint8_t *buf = NULL;
  size_t len = 0;
  snprintf(path, sizeof path, "%s/abs.bin", g_dir);
  assert_int_equal(os_delete(st, path), DD_EPERM);
  assert_int_equal(os_read_all(st, path, &buf, &len), 0);
  assert_int_equal(len, 3);
  free(buf);
  assert_string_equal(os_store_location(st), "/nonexistent-root");
  os_store_free(st);
  os_store_free(NULL);
}

/* Writes, deletes, mkdirs and listings never go through a symlink below the root, nor
 * through "..". A symlink entry is listed as a link, not a directory; deleting it removes
 * the link only. An absolute path under the root is fine. */
static void test_confined(void **state) {
  (void)state;
  char root[600], out[600], p[700];
  snprintf(root, sizeof root, "%s/root", g_dir);
  snprintf(out, sizeof out, "%s/out", g_dir);
  assert_int_equal(mkdir(root, 0777), 0);
  assert_int_equal(mkdir(out, 0777), 0);
  snprintf(p, sizeof p, "%s/victim", out);
  FILE *f = fopen(p, "w");
  assert_non_null(f);
  fclose(f);
  snprintf(p, sizeof p, "%s/link", root);
  assert_int_equal(symlink(out, p), 0);
  os_store *st = NULL;
  assert_int_equal(os_local_open(&st, root), 0);
  assert_int_equal(os_put(st, "link/new", "x", 1), DD_EPERM);
  assert_int_equal(os_put_if_absent(st, "link/new", "x", 1), DD_EPERM);
  assert_int_equal(os_delete(st, "link/victim"), DD_EPERM);
  assert_int_equal(os_mkdirs(st, "link/sub"), DD_EPERM);
  assert_int_equal(os_rmdir(st, "link/.."), DD_EPERM);
  os_list l = {0};
  assert_int_equal(os_list_dir(st, "link", &l), DD_EPERM);
  assert_int_equal(os_put(st, "../escaped", "x", 1), DD_EPERM);
  assert_int_equal(os_put(st, "a/../../escaped", "x", 1), DD_EPERM);
  assert_int_equal(os_put(st, "a//b", "x", 1), DD_EPERM);
  snprintf(p, sizeof p, "%s/escaped", g_dir);
  struct stat sb;
  assert_int_not_equal(stat(p, &sb), 0);
  snprintf(p, sizeof p, "%s/out/new", g_dir);
  assert_int_not_equal(stat(p, &sb), 0);
  snprintf(p, sizeof p, "%s/sub/abs", root);
  assert_int_equal(os_put(st, p, "x", 1), 0);
  assert_int_equal(os_list_dir(st, "", &l), 0);
  assert_int_equal(l.count, 2);
  assert_string_equal(l.entries[0].name, "link");
  assert_true(l.entries[0].is_link);
  assert_false(l.entries[0].is_dir);
  assert_true(l.entries[1].is_dir);
  assert_false(l.entries[1].is_link);
  os_list_free(&l);
  assert_int_equal(os_delete(st, "link"), 0); /* the link, not its target */
  snprintf(p, sizeof p, "%s/victim", out);
  assert_int_equal(stat(p, &sb), 0);
  os_store_free(st);
}

/* Names in dir (one level), hidden ones included, as "a,b,": for the temp-file checks. */
static void names(os_store *st, const char *dir, char *out, size_t cap) {
  os_list l = {0};
  out[0] = 0;
  assert_int_equal(os_list_dir(st, dir, &l), 0);
  for (size_t i = 0; i < l.count; i++) {
    strncat(out, l.entries[i].name, cap - strlen(out) - 2);
    strcat(out, ",");
  }
  os_list_free(&l);
}

static void test_put_stream(void **state) {
  (void)state;
  os_store *st = NULL;
  char ls[512];
  assert_int_equal(os_local_open(&st, g_dir), 0);
  os_put_stream *ps = NULL;
  assert_int_equal(os_put_stream_open(st, "p=1/f.bin", 0, &ps), 0);
  assert_int_equal(os_put_stream_write(ps, "hello ", 6), 0);
  assert_int_equal(os_put_stream_write(ps, "world", 5), 0);
  uint8_t *buf = NULL;
  size_t len = 0;
  assert_int_equal(os_read_all(st, "p=1/f.bin", &buf, &len), DD_ENOTFOUND); /* not yet */
  names(st, "p=1", ls, sizeof ls);
  assert_int_equal(ls[0], '.'); /* one hidden temp file, nothing else */
  assert_null(strchr(ls, ',')[1] ? "more" : NULL);
  assert_int_equal(os_put_stream_commit(ps), 0);
  assert_int_equal(os_read_all(st, "p=1/f.bin", &buf, &len), 0);
  assert_int_equal(len, 11);
  assert_memory_equal(buf, "hello world", 11);
  free(buf);
  names(st, "p=1", ls, sizeof ls);
  assert_string_equal(ls, "f.bin,"); /* the temp file is gone */
  /* put-if-absent: a second stream to the same name fails at commit, leaving the first */
  assert_int_equal(os_put_stream_open(st, "p=1/f.bin", 0, &ps), 0);
  assert_int_equal(os_put_stream_write(ps, "other", 5), 0);
  assert_int_equal(os_put_stream_commit(ps), DD_EEXISTS);
  assert_int_equal(os_read_all(st, "p=1/f.bin", &buf, &len), 0);
  assert_memory_equal(buf, "hello world", 11);
  free(buf);
  names(st, "p=1", ls, sizeof ls);
  assert_string_equal(ls, "f.bin,");
  /* abort leaves nothing */
  assert_int_equal(os_put_stream_open(st, "p=1/g.bin", 0, &ps), 0);
  assert_int_equal(os_put_stream_write(ps, "x", 1), 0);
  os_put_stream_abort(ps);
  os_put_stream_abort(NULL);
  names(st, "p=1", ls, sizeof ls);
  assert_string_equal(ls, "f.bin,");
  /* confined like every write */
  assert_int_equal(os_put_stream_open(st, "../escape.bin", 0, &ps), DD_EPERM);
  assert_null(ps);
  os_store_free(st);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_put_read_stat, setup, teardown),
      cmocka_unit_test_setup_teardown(test_put_if_absent, setup, teardown),
      cmocka_unit_test_setup_teardown(test_list_sorted_delete_rmdir, setup, teardown),
      cmocka_unit_test_setup_teardown(test_absolute_paths, setup, teardown),
      cmocka_unit_test_setup_teardown(test_confined, setup, teardown),
      cmocka_unit_test_setup_teardown(test_put_stream, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
