/* test_sign_resolve.c: mapping a signed relative path to a real file strictly under the
 * table root (store/sign/sign_resolve.c), against traversal attempts on a real directory
 * tree in a temporary directory: "..", percent-encoded "..", absolute paths, symlinks
 * out of the table (to a file, a directory, a sibling whose name shares the prefix) and
 * symlinks that stay inside; and the same through sign_open_under (openat2). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

typedef struct fixture {
  char dir[64];           /* the temporary directory, realpath'ed */
  char root[PATH_MAX];    /* <dir>/tbl: the table root */
  char via_link[PATH_MAX]; /* <dir>/tbl-link -> tbl */
} fixture;

static void touch(const char *dir, const char *name) {
  char p[PATH_MAX + 256];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, "x", 1), 1);
  close(fd);
}

static void mk(const char *dir, const char *name) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  assert_int_equal(mkdir(p, 0755), 0);
}

static void ln(const char *dir, const char *target, const char *name) {
  char p[PATH_MAX];
  snprintf(p, sizeof p, "%s/%s", dir, name);
  assert_int_equal(symlink(target, p), 0);
}

static int setup(void **state) {
  fixture *f = calloc(1, sizeof *f);
  char tmpl[] = "/tmp/dd_sign_resolve_XXXXXX";
  assert_non_null(mkdtemp(tmpl));
  assert_non_null(realpath(tmpl, f->dir));
  snprintf(f->root, sizeof f->root, "%s/tbl", f->dir);
  snprintf(f->via_link, sizeof f->via_link, "%s/tbl-link", f->dir);
  mk(f->dir, "tbl");
  mk(f->dir, "tbl2");
  touch(f->dir, "outside.txt");
  touch(f->dir, "tbl2/f.parquet");
  mk(f->root, "a=2021-01-01 00%3A00%3A00");
  touch(f->root, "a=2021-01-01 00%3A00%3A00/part-0.parquet");
  touch(f->root, "part-1.parquet");
  mk(f->root, "%2e%2e");
  ln(f->root, "/etc", "etc-link");                        /* absolute, out */
  ln(f->root, "../outside.txt", "escape.parquet");        /* relative, out */
  ln(f->root, "../tbl2/f.parquet", "sibling.parquet");    /* shares the "tbl" prefix */
  ln(f->root, "part-1.parquet", "alias.parquet");         /* stays inside */
  ln(f->root, "a=2021-01-01 00%3A00%3A00", "partlink");   /* directory inside */
  ln(f->root, ".", "self");                               /* the root itself */
  ln(f->dir, "tbl", "tbl-link");
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fixture *f = *state;
  char cmd[PATH_MAX + 16];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", f->dir);
  assert_int_equal(system(cmd), 0);
  free(f);
  return 0;
}

static void expect_ok(const fixture *f, const char *root, const char *rel, const char *want_rel) {
  char *abs = NULL, want[2 * PATH_MAX];
  assert_int_equal(sign_resolve_under(&abs, root, rel), 0);
  snprintf(want, sizeof want, "%s/%s", f->root, want_rel);
  assert_string_equal(abs, want);
  free(abs);
}

static void expect_rc(const char *root, const char *rel, int rc) {
  char *abs = NULL;
  assert_int_equal(sign_resolve_under(&abs, root, rel), rc);
  assert_null(abs);
}

static void test_inside(void **state) {
  fixture *f = *state;
  expect_ok(f, f->root, "part-1.parquet", "part-1.parquet");
  expect_ok(f, f->root, "a=2021-01-01 00%3A00%3A00/part-0.parquet",
            "a=2021-01-01 00%3A00%3A00/part-0.parquet");
  expect_ok(f, f->root, "./a=2021-01-01 00%3A00%3A00//part-0.parquet",
            "a=2021-01-01 00%3A00%3A00/part-0.parquet");
  expect_ok(f, f->root, "alias.parquet", "part-1.parquet");
  expect_ok(f, f->root, "partlink/part-0.parquet", "a=2021-01-01 00%3A00%3A00/part-0.parquet");
  /* A table root reached through a symlink resolves to the real root. */
  expect_ok(f, f->via_link, "part-1.parquet", "part-1.parquet");
}

static void test_dotdot(void **state) {
  fixture *f = *state;
  expect_rc(f->root, "../outside.txt", DD_EPERM);
  expect_rc(f->root, "a=2021-01-01 00%3A00%3A00/../../outside.txt", DD_EPERM);
  expect_rc(f->root, "..", DD_EPERM);
  expect_rc(f->root, "x/..", DD_EPERM);
  expect_rc(f->root, "../tbl/part-1.parquet", DD_EPERM); /* even when it would land inside */
}

static void test_percent_encoded_dotdot(void **state) {
  fixture *f = *state;
  /* Decoded as a transport would, "%2e%2e/" is ".." and refused... */
  char *rel = NULL;
  assert_int_equal(sign_pct_decode(&rel, "%2e%2e/outside.txt"), 0);
  assert_string_equal(rel, "../outside.txt");
  expect_rc(f->root, rel, DD_EPERM);
  free(rel);
  assert_int_equal(sign_pct_decode(&rel, "%2E%2E%2Foutside.txt"), 0);
  expect_rc(f->root, rel, DD_EPERM);
  free(rel);
  /* ...and left encoded it is only a file name: the directory literally called "%2e%2e". */
  expect_rc(f->root, "%2e%2e/outside.txt", DD_ENOTFOUND);
  /* %00 never decodes. */
  assert_int_equal(sign_pct_decode(&rel, "part%00.parquet"), DD_EINVAL);
  assert_null(rel);
  assert_int_equal(sign_pct_decode(&rel, "bad%2"), DD_EINVAL);
  assert_int_equal(sign_pct_decode(&rel, "bad%zz"), DD_EINVAL);
}

static void test_absolute_and_empty(void **state) {
  fixture *f = *state;
  char abs_inside[2 * PATH_MAX];
  snprintf(abs_inside, sizeof abs_inside, "%s/part-1.parquet", f->root);
  expect_rc(f->root, "/etc/passwd", DD_EPERM);
  expect_rc(f->root, abs_inside, DD_EPERM);
  expect_rc(f->root, "", DD_EPERM);
  expect_rc(f->root, ".", DD_EPERM);
  expect_rc(f->root, NULL, DD_EPERM);
  expect_rc("", "part-1.parquet", DD_EINVAL);
}

static void test_symlink_escapes(void **state) {
  fixture *f = *state;
  expect_rc(f->root, "escape.parquet", DD_EPERM);
  expect_rc(f->root, "etc-link/passwd", DD_EPERM);
  expect_rc(f->root, "sibling.parquet", DD_EPERM);
  expect_rc(f->root, "self", DD_EPERM);
}

static void test_missing(void **state) {
  fixture *f = *state;
  expect_rc(f->root, "nope.parquet", DD_ENOTFOUND);
  expect_rc(f->root, "part-1.parquet/x", DD_ENOTFOUND);
  char missing_root[PATH_MAX];
  snprintf(missing_root, sizeof missing_root, "%s/none", f->dir);
  expect_rc(missing_root, "part-1.parquet", DD_ENOTFOUND);
}

static void expect_open(const char *root, const char *rel, int rc) {
  int fd = -2;
  assert_int_equal(sign_open_under(&fd, root, rel), rc);
  if (rc == 0) {
    char c = 0;
    assert_true(fd >= 0);
    assert_int_equal(read(fd, &c, 1), 1);
    assert_int_equal(c, 'x');
    close(fd);
  } else {
    assert_int_equal(fd, -1);
  }
}

static void test_open_under(void **state) {
  fixture *f = *state;
  expect_open(f->root, "part-1.parquet", 0);
  expect_open(f->root, "./a=2021-01-01 00%3A00%3A00//part-0.parquet", 0);
  expect_open(f->root, "alias.parquet", 0);
  expect_open(f->root, "partlink/part-0.parquet", 0);
  expect_open(f->via_link, "part-1.parquet", 0);
  expect_open(f->root, "../outside.txt", DD_EPERM);
  expect_open(f->root, "/etc/passwd", DD_EPERM);
  expect_open(f->root, "escape.parquet", DD_EPERM);
  expect_open(f->root, "etc-link/passwd", DD_EPERM);
  expect_open(f->root, "sibling.parquet", DD_EPERM);
  expect_open(f->root, "nope.parquet", DD_ENOTFOUND);
  expect_open(f->root, "a=2021-01-01 00%3A00%3A00", DD_ENOTFOUND); /* a directory */
  expect_open(f->root, "self", DD_ENOTFOUND);                      /* the root itself */
  expect_open("", "part-1.parquet", DD_EINVAL);
  /* A directory swapped for a symlink out of the table after a check is still refused. */
  char inside[PATH_MAX + 8];
  snprintf(inside, sizeof inside, "%s/swap", f->root);
  assert_int_equal(mkdir(inside, 0755), 0);
  touch(inside, "outside.txt");
  expect_open(f->root, "swap/outside.txt", 0);
  char cmd[3 * PATH_MAX];
  snprintf(cmd, sizeof cmd, "rm -rf '%s' && ln -s .. '%s'", inside, inside);
  assert_int_equal(system(cmd), 0);
  expect_open(f->root, "swap/outside.txt", DD_EPERM);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_inside, setup, teardown),
      cmocka_unit_test_setup_teardown(test_dotdot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_percent_encoded_dotdot, setup, teardown),
      cmocka_unit_test_setup_teardown(test_absolute_and_empty, setup, teardown),
      cmocka_unit_test_setup_teardown(test_symlink_escapes, setup, teardown),
      cmocka_unit_test_setup_teardown(test_missing, setup, teardown),
      cmocka_unit_test_setup_teardown(test_open_under, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
