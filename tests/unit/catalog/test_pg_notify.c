/* test_pg_notify.c: pushed invalidation on PostgreSQL (cat_store_opts.pg_push,
 * cat_kv_pg_notify.c). Two stores on one database, as two replicas: a commit made through
 * one is seen by the other's reads once its notification arrived (the delay is measured
 * and bounded here), a revoked token stops being found the same way, a replica sees its
 * own commits at once, and a cached read needs no round trip (it borrows no connection, where
 * a replica that checks the generation borrows one per read), and a data access's audit
 * event changes no generation. Runs only as unit.catalog.pg_notify.pg:
 * without DD_TEST_CATALOG it fails. */
#include <time.h>

#include "cat_test_util.h"
#include "store/catalog/cat_internal.h"
#include "store/catalog/cat_kv_pg.h"

static int64_t now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

typedef struct pn_env {
  ct_env *e;
  cat_store *push; /* the second replica, trusting LISTEN/NOTIFY */
} pn_env;

static int pn_setup(void **state) {
  const char *url = getenv("DD_TEST_CATALOG");
  if (!url || !*url) {
    fprintf(stderr, "test_pg_notify needs DD_TEST_CATALOG=postgresql://...\n");
    return -1;
  }
  void *inner = NULL;
  if (ct_setup(&inner)) return -1;
  pn_env *p = calloc(1, sizeof *p);
  p->e = inner;
  cat_store_opts o = CAT_STORE_OPTS_INIT;
  const char *base = strrchr(p->e->dir, '/');
  o.catalog_url = url;
  o.pg_schema = base + 1;
  o.pool_size = 2;
  o.pg_push = 1;
  if (cat_store_open(&p->push, p->e->dir, &o)) {
    fprintf(stderr, "open the second store: %s\n", dd_err_msg());
    return -1;
  }
  *state = p;
  return 0;
}

static int pn_teardown(void **state) {
  pn_env *p = *state;
  cat_store_close(p->push);
  void *inner = p->e;
  free(p);
  return ct_teardown(&inner);
}

static void mk_catalog(cat_store *s, const char *name) {
  Deltad__Catalog__V1__CreateCatalogRequest cr = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cat_catalog *c = NULL;
  cr.name = (char *)name;
  assert_int_equal(cat_catalog_create(s, &c, "admin", &cr), 0);
  CT_FREE(c);
}

/* Microseconds until s finds catalog name (polling), at most 2 s. */
static int64_t until_found(cat_store *s, const char *name, int64_t t0) {
  cat_catalog *c = NULL;
  for (;;) {
    int rc = cat_catalog_get(s, &c, name);
    if (rc == 0) {
      CT_FREE(c);
      return now_us() - t0;
    }
    assert_int_equal(rc, DD_ENOTFOUND);
    if (now_us() - t0 > 2000000) fail_msg("%s not seen after 2 s", name);
  }
}

static int cmp64(const void *a, const void *b) {
  int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
  return x < y ? -1 : x > y;
}

/* Waits (at most 20 s: a loaded machine) until s's listener is connected and answering. */
static void until_live(cat_store *s) {
  pg__state *st = s->be_state;
  int64_t t0 = now_us();
  while (!atomic_load(&st->live)) {
    if (now_us() - t0 > 20000000) fail_msg("the listener is not live after 20 s");
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
}

/* The catalog's generation as the database has it now (a connection of the test's own). */
static uint64_t db_gen(pn_env *p) {
  PGconn *c = PQconnectdb(getenv("DD_TEST_CATALOG"));
  assert_int_equal(PQstatus(c), CONNECTION_OK);
  char sql[512];
  snprintf(sql, sizeof sql, "SELECT gen FROM \"%s\".deltad_lock WHERE id = 1",
           strrchr(p->e->dir, '/') + 1);
  PGresult *r = PQexec(c, sql);
  assert_int_equal(PQresultStatus(r), PGRES_TUPLES_OK);
  assert_int_equal(PQntuples(r), 1);
  uint64_t g = strtoull(PQgetvalue(r, 0, 0), NULL, 10);
  PQclear(r);
  PQfinish(c);
  return g;
}

/* The other replica's commit: seen once notified (median and worst of 30 printed). */
static void test_commit_seen_by_other_replica(void **state) {
  pn_env *p = *state;
  cat_catalog *c = NULL;
  int64_t d[30];
  for (int i = 0; i < 30; i++) {
    char name[32];
    snprintf(name, sizeof name, "c%02d", i);
    assert_int_equal(cat_catalog_get(p->push, &c, name), DD_ENOTFOUND); /* cached as absent */
    int64_t t0 = now_us();
    mk_catalog(p->e->s, name);
    d[i] = until_found(p->push, name, t0);
  }
  qsort(d, 30, sizeof d[0], cmp64);
  printf("notify delay (commit returned -> seen on the other replica): median %lld us, max %lld us\n",
         (long long)d[15], (long long)d[29]);
  assert_true(d[29] < 1000000);
}

/* A token deleted through one replica stops on the other once notified. */
static void test_revoked_token_stops(void **state) {
  pn_env *p = *state;
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  assert_int_equal(cat_token_hash(hash, "rev", 3), 0);
  cat_token_rec tr = {.kind = CAT_TOKEN_ADMIN, .name = "admin", .id = "", .expiry_ms = 0}, got;
  assert_int_equal(cat_token_put(p->e->s, hash, &tr), 0);
  int64_t t0 = now_us();
  while (cat_token_lookup(p->push, &got, hash) != 0)
    if (now_us() - t0 > 2000000) fail_msg("token not seen after 2 s");
  assert_int_equal(cat_token_lookup(p->push, &got, hash), 0); /* cached now */
  t0 = now_us();
  assert_int_equal(cat_token_delete(p->e->s, hash), 0);
  int rc;
  while ((rc = cat_token_lookup(p->push, &got, hash)) == 0)
    if (now_us() - t0 > 2000000) fail_msg("revoked token still found after 2 s");
  assert_int_equal(rc, DD_ENOTFOUND);
  printf("revocation seen on the other replica after %lld us\n", (long long)(now_us() - t0));
}

/* A replica's own commit is seen by its next read at once. */
static void test_own_commit_at_once(void **state) {
  pn_env *p = *state;
  cat_catalog *c = NULL;
  assert_int_equal(cat_catalog_get(p->push, &c, "mine"), DD_ENOTFOUND);
  mk_catalog(p->push, "mine");
  assert_int_equal(cat_catalog_get(p->push, &c, "mine"), 0);
  CT_FREE(c);
}

/* A cached read on the pushing replica asks the database nothing (it borrows no
 * connection); the checking one makes one round trip per read. Counted, not timed. */
static void test_cached_read_no_round_trip(void **state) {
  pn_env *p = *state;
  mk_catalog(p->e->s, "hot");
  until_found(p->push, "hot", now_us());
  cat_catalog *c = NULL;
  uint64_t n[2];
  cat_store *s[2] = {p->push, p->e->s};
  /* the pushing replica borrows nothing while its listener stays live; a late ping on a
   * loaded machine turns it off for a while (then it checks, as it should): measure again */
  for (int attempt = 0;; attempt++) {
    until_live(p->push);
    for (int k = 0; k < 2; k++) {
      assert_int_equal(cat_catalog_get(s[k], &c, "hot"), 0); /* warm */
      CT_FREE(c);
      pg__state *st = s[k]->be_state;
      uint64_t b0 = atomic_load(&st->borrows);
      for (int i = 0; i < 500; i++) {
        assert_int_equal(cat_catalog_get(s[k], &c, "hot"), 0);
        CT_FREE(c);
      }
      n[k] = atomic_load(&st->borrows) - b0;
    }
    if (n[0] == 0 || attempt == 4) break;
    printf("the listener was not live throughout (%llu borrowed): again\n",
           (unsigned long long)n[0]);
  }
  printf("500 cached GetCatalog reads: %llu connections borrowed pushed (notify), %llu checked\n",
         (unsigned long long)n[0], (unsigned long long)n[1]);
  assert_int_equal(n[0], 0);
  assert_true(n[1] >= 500);
}

/* A data access's audit event is appended outside the writers: the generation stays, so
 * no replica's read cache is dropped per query, and every replica lists the event at once
 * (the audit log is never cached). Retention purges the older events in the same step. */
static void test_audit_append_keeps_generation(void **state) {
  pn_env *p = *state;
  mk_catalog(p->e->s, "base");
  uint64_t g0 = db_gen(p);
  Deltad__Admin__V1__AuditEvent ev = DELTAD__ADMIN__V1__AUDIT_EVENT__INIT;
  ev.kind = "data_access";
  ev.principal = "r1";
  ev.table = "old";
  assert_int_equal(cat_audit_append(p->e->s, &ev, 0), 0);
  struct timespec pause = {0, 20 * 1000000};
  nanosleep(&pause, NULL);
  ev.table = "new";
  assert_int_equal(cat_audit_append(p->e->s, &ev, 10), 0); /* keeps the last 10 ms */
  assert_int_equal(db_gen(p), g0); /* no writer lock taken, no generation */
  Deltad__Admin__V1__ListAuditEventsRequest q = DELTAD__ADMIN__V1__LIST_AUDIT_EVENTS_REQUEST__INIT;
  Deltad__Admin__V1__ListAuditEventsResponse *r = NULL;
  assert_int_equal(cat_audit_list(p->push, &q, &r), 0); /* the other replica, at once */
  assert_int_equal(r->n_events, 1);
  assert_string_equal(r->events[0]->table, "new");
  deltad__admin__v1__list_audit_events_response__free_unpacked(r, NULL);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_commit_seen_by_other_replica, pn_setup, pn_teardown),
      cmocka_unit_test_setup_teardown(test_revoked_token_stops, pn_setup, pn_teardown),
      cmocka_unit_test_setup_teardown(test_own_commit_at_once, pn_setup, pn_teardown),
      cmocka_unit_test_setup_teardown(test_cached_read_no_round_trip, pn_setup, pn_teardown),
      cmocka_unit_test_setup_teardown(test_audit_append_keeps_generation, pn_setup, pn_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
