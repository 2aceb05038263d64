/* test_crash.c: crash safety of the store (LMDB, or PostgreSQL under DD_TEST_CATALOG). A forked child writes and is killed
 * (SIGKILL) before or between commits; the parent reopens the store and must see exactly
 * the last committed state, with every index entry resolving to its record. */
#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include "cat_test_util.h"
#include "store/catalog/cat_internal.h"

static size_t db_entries(cat_store *s, int db) { return ct_db_entries(s, db); }

/* Child: opens the store, creates a few catalogs through the API, then starts one big
 * transaction of raw puts into both catalog sub-databases and kills itself mid-way. */
static void child_uncommitted(const char *dir) {
  cat_store *s = NULL;
  if (ct_open(&s, dir)) _exit(2);
  if (ct_catalog_rc(s, "late") != 0) _exit(3);
  cat_txn *txn = NULL;
  if (cat__txn_begin(s, &txn, true)) _exit(4);
  char key[64], val[64];
  for (int i = 0; i < 20000; i++) {
    snprintf(key, sizeof key, "ghost%05d", i);
    snprintf(val, sizeof val, "%036d", i);
    if (cat__kv_put(txn, CAT__DB_CATALOG_NAMES, key, strlen(key), val, 36, false)) _exit(5);
    if (cat__kv_put(txn, CAT__DB_CATALOGS, val, 36, key, strlen(key), false)) _exit(6);
  }
  kill(getpid(), SIGKILL);
  _exit(7);
}

static void test_kill_before_commit(void **state) {
  ct_env *e = *state;
  for (int i = 0; i < 10; i++) {
    char name[16];
    snprintf(name, sizeof name, "keep%d", i);
    assert_int_equal(ct_catalog_rc(e->s, name), 0);
  }
  cat_store_close(e->s);
  e->s = NULL;
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) child_uncommitted(e->dir);
  int status = 0;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFSIGNALED(status));
  assert_int_equal(WTERMSIG(status), SIGKILL);
  ct_reopen(e);
  char buf[1024];
  ct_list_all(e->s, 4, buf, sizeof buf);
  assert_string_equal(buf, "keep0,keep1,keep2,keep3,keep4,keep5,keep6,keep7,keep8,keep9,late,");
  assert_int_equal(db_entries(e->s, CAT__DB_CATALOG_NAMES), 11);
  assert_int_equal(db_entries(e->s, CAT__DB_CATALOGS), 11);
  assert_int_equal(ct_catalog_rc(e->s, "after"), 0); /* the writer lock was recovered */
}

/* Child: creates n00000, n00001, ... (each its own commit) until killed, writing one
 * byte to fd after each commit so the parent knows how far it got. */
static void child_committing(const char *dir, int fd) {
  cat_store *s = NULL;
  if (ct_open(&s, dir)) _exit(2);
  for (int i = 0;; i++) {
    char name[16];
    snprintf(name, sizeof name, "n%05d", i);
    if (ct_schema_rc(s, "c", name) != 0) _exit(3);
    if (write(fd, "+", 1) != 1) _exit(4);
  }
}

static void test_kill_between_commits(void **state) {
  ct_env *e = *state;
  CT_FREE(ct_catalog(e->s, "c"));
  cat_store_close(e->s);
  e->s = NULL;
  for (int round = 0; round < 3; round++) {
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
      close(fds[0]);
      child_committing(e->dir, fds[1]);
    }
    close(fds[1]);
    char b;
    int committed = 0;
    while (committed < 3 + 7 * round && read(fds[0], &b, 1) == 1) committed++;
    struct timespec ts = {0, 3000000L * round}; /* land at a varying point of a commit */
    nanosleep(&ts, NULL);
    kill(pid, SIGKILL);
    close(fds[0]);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFSIGNALED(status));
    ct_reopen(e);
    /* the schemas are a gap-free prefix of the sequence and every index entry resolves */
    Deltad__Catalog__V1__ListSchemasRequest req = DELTAD__CATALOG__V1__LIST_SCHEMAS_REQUEST__INIT;
    char token[256] = "";
    int n = 0;
    req.catalog_name = "c";
    req.max_results = 1000;
    do {
      Deltad__Catalog__V1__ListSchemasResponse *r = NULL;
      req.page_token = token;
      assert_int_equal(cat_schema_list(e->s, &r, &req), 0);
      for (size_t i = 0; i < r->n_schemas; i++) {
        char want[16];
        snprintf(want, sizeof want, "n%05d", n++);
        assert_string_equal(r->schemas[i]->name, want);
      }
      snprintf(token, sizeof token, "%s", r->next_page_token);
      CT_FREE(r);
    } while (token[0]);
    assert_true(n >= committed); /* everything reported committed is there */
    assert_int_equal(db_entries(e->s, CAT__DB_SCHEMA_NAMES), (size_t)n);
    assert_int_equal(db_entries(e->s, CAT__DB_SCHEMAS), (size_t)n);
    /* start the next round where this one stopped: remove them all, in one transaction */
    assert_int_equal(cat_catalog_delete(e->s, "c", 1), 0);
    CT_FREE(ct_catalog(e->s, "c"));
    cat_store_close(e->s);
    e->s = NULL;
  }
  ct_reopen(e);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_kill_before_commit, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_kill_between_commits, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
