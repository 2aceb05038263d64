/* test_audit.c: the catalog store's audit log (cat_audit.c: append, filters, paging,
 * retention) and online backup (cat_backup.c): a backup taken while a writer thread
 * commits opens as a store of its own, holds a prefix of the writer's catalogs, and its
 * credentials decrypt with the copied key. */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/stat.h>

#include "tests/unit/catalog/cat_test_util.h"

typedef Deltad__Admin__V1__AuditEvent ev_t;
typedef Deltad__Admin__V1__ListAuditEventsRequest lreq_t;
typedef Deltad__Admin__V1__ListAuditEventsResponse lresp_t;

static void append(cat_store *s, const char *kind, const char *who, const char *table, int64_t keep) {
  ev_t e = DELTAD__ADMIN__V1__AUDIT_EVENT__INIT;
  e.kind = (char *)kind;
  e.principal = (char *)who;
  e.table = (char *)table;
  e.action = "QueryTable";
  assert_int_equal(cat_audit_append(s, &e, keep), 0);
}

static lresp_t *list(cat_store *s, const char *recipient, int max, const char *token) {
  lreq_t q = DELTAD__ADMIN__V1__LIST_AUDIT_EVENTS_REQUEST__INIT;
  lresp_t *r = NULL;
  q.recipient = (char *)(recipient ? recipient : "");
  q.max_results = max;
  q.page_token = (char *)(token ? token : "");
  assert_int_equal(cat_audit_list(s, &q, &r), 0);
  return r;
}

static void test_append_list_page(void **state) {
  ct_env *e = *state;
  append(e->s, "data_access", "alice", "t1", 0);
  append(e->s, "admin_change", "admin", "", 0);
  append(e->s, "data_access", "bob", "t2", 0);
  append(e->s, "data_access", "alice", "t3", 0);
  lresp_t *r = list(e->s, NULL, 0, NULL);
  assert_int_equal(r->n_events, 4);
  assert_string_equal(r->next_page_token, "");
  assert_string_equal(r->events[0]->table, "t1");
  assert_true(r->events[0]->time_ms > 0);
  CT_FREE(r);
  r = list(e->s, "alice", 0, NULL);
  assert_int_equal(r->n_events, 2);
  assert_string_equal(r->events[1]->table, "t3");
  CT_FREE(r);
  /* pages of one walk the same events in order */
  char token[64] = "";
  const char *want[] = {"t1", "", "t2", "t3"};
  for (int i = 0; i < 4; i++) {
    r = list(e->s, NULL, 1, token);
    assert_int_equal(r->n_events, 1);
    assert_string_equal(r->events[0]->table, want[i]);
    snprintf(token, sizeof token, "%s", r->next_page_token);
    CT_FREE(r);
  }
  assert_string_equal(token, "");
  lreq_t q = DELTAD__ADMIN__V1__LIST_AUDIT_EVENTS_REQUEST__INIT;
  q.page_token = "not-a-token";
  assert_int_equal(cat_audit_list(e->s, &q, &r), DD_EINVAL);
  q.page_token = "";
  q.since_ms = INT64_MAX / 2;
  assert_int_equal(cat_audit_list(e->s, &q, &r), 0);
  assert_int_equal(r->n_events, 0);
  CT_FREE(r);
}

static void test_retention(void **state) {
  ct_env *e = *state;
  append(e->s, "data_access", "alice", "old", 0);
  usleep(20000);
  append(e->s, "data_access", "alice", "new", 10); /* keeps 10 ms: purges "old" */
  lresp_t *r = list(e->s, NULL, 0, NULL);
  assert_int_equal(r->n_events, 1);
  assert_string_equal(r->events[0]->table, "new");
  CT_FREE(r);
}

typedef struct writer {
  cat_store *s;
  atomic_int stop, made;
} writer;

static void *write_loop(void *arg) {
  writer *w = arg;
  char name[32];
  while (!atomic_load(&w->stop) && atomic_load(&w->made) < 5000) {
    snprintf(name, sizeof name, "w%05d", atomic_load(&w->made));
    if (ct_catalog_rc(w->s, name) != 0) break;
    atomic_fetch_add(&w->made, 1);
  }
  return NULL;
}

static void test_backup_while_writing(void **state) {
  ct_env *e = *state;
  const char *pg = getenv("DD_TEST_CATALOG");
  if (pg && *pg) { /* PostgreSQL: refused, pointing at pg_dump, nothing written */
    char dir[300], **files = NULL;
    size_t n = 0;
    uint64_t bytes = 0;
    struct stat st;
    snprintf(dir, sizeof dir, "%s/backup", e->dir);
    assert_int_equal(cat_store_backup(e->s, dir, &files, &n, &bytes), DD_EUNSUPPORTED);
    assert_non_null(strstr(dd_err_msg(), "pg_dump"));
    assert_int_equal(n, 0);
    assert_int_not_equal(stat(dir, &st), 0);
    return;
  }
  Deltad__Credentials__V1__CreateCredentialRequest req = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AwsAccessKeyCredential aws = DELTAD__CREDENTIALS__V1__AWS_ACCESS_KEY_CREDENTIAL__INIT;
  aws.access_key_id = "AKIABACKUP";
  aws.secret_access_key = "backup-secret-value";
  req.name = "bk";
  req.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AWS;
  req.aws = &aws;
  cat_credential *c = NULL;
  assert_int_equal(cat_credential_create(e->s, &c, "admin", &req), 0);
  CT_FREE(c);
  writer w = {.s = e->s};
  pthread_t t;
  assert_int_equal(pthread_create(&t, NULL, write_loop, &w), 0);
  while (atomic_load(&w.made) < 20) usleep(1000);
  char dir[300];
  snprintf(dir, sizeof dir, "%s/backup", e->dir);
  char **files = NULL;
  size_t n = 0;
  uint64_t bytes = 0;
  assert_int_equal(cat_store_backup(e->s, dir, &files, &n, &bytes), 0);
  int during = atomic_load(&w.made);
  atomic_store(&w.stop, 1);
  pthread_join(t, NULL);
  assert_int_equal(n, 2);
  assert_string_equal(files[0], "catalog.mdb/data.mdb");
  assert_true(bytes > 0);
  for (size_t i = 0; i < n; i++) free(files[i]);
  free(files);
  struct stat st;
  snprintf(dir, sizeof dir, "%s/backup/catalog.mdb/data.mdb", e->dir);
  assert_int_equal(stat(dir, &st), 0);
  assert_int_equal(st.st_mode & 0777, 0600);
  /* a second backup into the same directory is refused */
  snprintf(dir, sizeof dir, "%s/backup", e->dir);
  assert_int_equal(cat_store_backup(e->s, dir, &files, &n, &bytes), DD_EEXISTS);
  for (size_t i = 0; i < n; i++) free(files[i]);
  free(files);
  /* the copy opens; its catalogs are a prefix of the writer's; the secret decrypts */
  cat_store *b = NULL;
  assert_int_equal(ct_open(&b, dir), 0);
  int have = 0;
  char name[32];
  for (int i = 0; i < atomic_load(&w.made); i++) {
    cat_catalog *got = NULL;
    snprintf(name, sizeof name, "w%05d", i);
    int rc = cat_catalog_get(b, &got, name);
    if (got) CT_FREE(got);
    if (rc == 0) {
      assert_int_equal(have, i); /* no gap: one consistent moment */
      have++;
    }
  }
  assert_true(have >= 20 && have <= during + 1);
  cat_credential *full = NULL;
  assert_int_equal(cat_credential_get_secret(b, &full, "bk"), 0);
  assert_string_equal(full->aws->secret_access_key, "backup-secret-value");
  CT_FREE(full);
  cat_store_close(b);
}

/* An armed event is written by the change's own write transaction (one transaction, not
 * two), names the record it wrote or deleted, and is not written when the change fails. */
static void test_armed_event_joins_change(void **state) {
  ct_env *e = *state;
  ev_t ev = DELTAD__ADMIN__V1__AUDIT_EVENT__INIT;
  ev.kind = "admin_change";
  ev.principal = "admin";
  ev.action = "CreateCatalog";
  assert_int_equal(cat_audit_arm(e->s, &ev, 0), 0);
  uint64_t w0 = cat_store_stats_get(e->s).write_txns;
  cat_catalog *c = ct_catalog(e->s, "sales");
  assert_int_equal(cat_store_stats_get(e->s).write_txns, w0 + 1);
  assert_int_equal(cat_audit_disarm(), 1);
  lresp_t *r = list(e->s, NULL, 0, NULL);
  assert_int_equal(r->n_events, 1);
  assert_string_equal(r->events[0]->action, "CreateCatalog");
  assert_string_equal(r->events[0]->id_after, c->id);
  CT_FREE(r);
  /* a failing change (the name is taken) writes no event */
  ev.action = "CreateCatalog";
  assert_int_equal(cat_audit_arm(e->s, &ev, 0), 0);
  Deltad__Catalog__V1__CreateCatalogRequest cr = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cr.name = "SALES";
  cat_catalog *dup = NULL;
  assert_int_equal(cat_catalog_create(e->s, &dup, "admin", &cr), DD_EEXISTS);
  assert_int_equal(cat_audit_disarm(), 0);
  r = list(e->s, NULL, 0, NULL);
  assert_int_equal(r->n_events, 1);
  CT_FREE(r);
  /* a delete names the record it deleted */
  ev.action = "DeleteCatalog";
  assert_int_equal(cat_audit_arm(e->s, &ev, 0), 0);
  assert_int_equal(cat_catalog_delete(e->s, "sales", 0), 0);
  assert_int_equal(cat_audit_disarm(), 1);
  r = list(e->s, NULL, 0, NULL);
  assert_int_equal(r->n_events, 2);
  assert_string_equal(r->events[1]->action, "DeleteCatalog");
  assert_string_equal(r->events[1]->id_before, c->id);
  CT_FREE(r);
  /* only once: a second change after the event was written writes no second copy, and an
   * event appended on its own is not joined by an armed one */
  assert_int_equal(cat_audit_arm(e->s, &ev, 0), 0);
  append(e->s, "data_access", "bob", "t", 0);
  cat_catalog *c2 = ct_catalog(e->s, "c2");
  cat_catalog *c3 = ct_catalog(e->s, "c3");
  assert_int_equal(cat_audit_disarm(), 1);
  r = list(e->s, NULL, 0, NULL);
  assert_int_equal(r->n_events, 4);
  assert_string_equal(r->events[2]->kind, "data_access");
  assert_string_equal(r->events[3]->id_after, c2->id);
  CT_FREE(r);
  CT_FREE(c);
  CT_FREE(c2);
  CT_FREE(c3);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_append_list_page, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_retention, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_armed_event_joins_change, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_backup_while_writing, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
