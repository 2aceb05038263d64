/* test_view.c: read views of the catalog store (cat_view_*): the lookups a recipient's
 * query on an S3 table makes cost one read transaction (cat_store_stats_get), results
 * outlive the view, a view sees one committed state, the covering location is the longest
 * prefix at a '/' boundary, walks over many locations are one transaction, and a view bound
 * to the thread (cat_view_bind) is shared by every read there until a write unbinds it, and
 * a view's generation names its state (cat_view_generation), and a view whose read
 * transaction an earlier view ended sees the commits made since. */
#include <pthread.h>

#include "cat_test_util.h"

static uint64_t reads(cat_store *s) { return cat_store_stats_get(s).read_txns; }

static void add_aws(cat_store *s, const char *name, const char *secret) {
  Deltad__Credentials__V1__CreateCredentialRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__INIT;
  Deltad__Credentials__V1__AwsAccessKeyCredential aws =
      DELTAD__CREDENTIALS__V1__AWS_ACCESS_KEY_CREDENTIAL__INIT;
  aws.access_key_id = "AKIAVIEWTEST";
  aws.secret_access_key = (char *)secret;
  req.name = (char *)name;
  req.credential_case = DELTAD__CREDENTIALS__V1__CREATE_CREDENTIAL_REQUEST__CREDENTIAL_AWS;
  req.aws = &aws;
  cat_credential *c = NULL;
  if (cat_credential_create(s, &c, "admin", &req)) fail_msg("credential: %s", dd_err_msg());
  CT_FREE(c);
}

/* A storage location; cred NULL makes a LOCAL one. */
static void add_loc(cat_store *s, const char *name, const char *url, const char *cred) {
  Deltad__Credentials__V1__CreateStorageLocationRequest req =
      DELTAD__CREDENTIALS__V1__CREATE_STORAGE_LOCATION_REQUEST__INIT;
  req.name = (char *)name;
  req.url = (char *)url;
  if (cred) req.credential = (char *)cred;
  else req.type = DELTAD__CREDENTIALS__V1__STORAGE_TYPE__LOCAL;
  cat_location *l = NULL;
  if (cat_location_create(s, &l, "admin", &req)) fail_msg("location %s: %s", name, dd_err_msg());
  CT_FREE(l);
}

static void new_share(cat_store *s, const char *name) {
  Deltad__Sharing__V1__CreateShareRequest sr = DELTAD__SHARING__V1__CREATE_SHARE_REQUEST__INIT;
  cat_share *sh = NULL;
  sr.name = (char *)name;
  assert_int_equal(cat_share_create(s, &sh, "admin", &sr), 0);
  CT_FREE(sh);
}

/* Share "sales" granted to recipient "acme" (whose id goes to rid). */
static void add_granted_share(cat_store *s, char rid[40]) {
  new_share(s, "sales");
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  assert_int_equal(cat_token_hash(hash, "tok", 3), 0);
  cat_recipient *r = NULL;
  assert_int_equal(cat_recipient_create(s, &r, "admin", "acme", "", hash, 0), 0);
  snprintf(rid, 40, "%s", r->id);
  CT_FREE(r);
  assert_int_equal(cat_grant_add(s, "sales", "acme"), 0);
}

/* The S3 lookup sequence of a recipient's query, all through one view: one transaction. */
static void test_s3_query_lookups_one_txn(void **state) {
  ct_env *e = *state;
  char rid[40], sid[40], gen[40], *covering = NULL;
  add_aws(e->s, "aws_lake", "s3cr3t-lake");
  add_aws(e->s, "aws_bucket", "s3cr3t-bucket");
  add_loc(e->s, "bucket", "s3://lake", "aws_bucket");
  add_loc(e->s, "tables", "s3://lake/tables/", "aws_lake");
  add_granted_share(e->s, rid);
  const char *url = "s3://lake/tables/orders";
  uint64_t before = reads(e->s);
  cat_view *v = NULL;
  cat_share *sh = NULL;
  cat_location *cov = NULL, *loc = NULL;
  cat_credential *cred = NULL;
  assert_int_equal(cat_view_open(e->s, &v), 0);
  assert_int_equal(cat_view_grant_check(v, rid, "SALES", sid), 0);
  assert_int_equal(cat_view_share_by_id(v, &sh, sid), 0);
  assert_int_equal(cat_view_grant_generation(v, sid, rid, gen), 0);
  assert_int_equal(cat_view_location_confine(v, &covering, "table", url), 0);
  assert_int_equal(cat_view_location_covering(v, &cov, url), 0);
  assert_int_equal(cat_view_location_get(v, &loc, cov->name), 0);
  assert_int_equal(cat_view_credential_secret(v, &cred, loc->credential), 0);
  cat_view_close(v);
  assert_int_equal(reads(e->s) - before, 1);
  /* the results are the caller's and outlive the view */
  assert_string_equal(sh->name, "sales");
  assert_string_equal(covering, "bucket"); /* confinement takes any covering location */
  assert_string_equal(cov->name, "tables"); /* the covering location is the longest */
  assert_string_equal(loc->credential, "aws_lake");
  assert_string_equal(cred->aws->secret_access_key, "s3cr3t-lake");
  free(covering);
  CT_FREE(sh);
  CT_FREE(cov);
  CT_FREE(loc);
  CT_FREE(cred);
  /* the same lookups, one call each, cost one transaction each */
  before = reads(e->s);
  assert_int_equal(cat_grant_check(e->s, rid, "sales", sid), 0);
  assert_int_equal(cat_share_get_by_id(e->s, &sh, sid), 0);
  assert_int_equal(cat_location_get(e->s, &loc, "tables"), 0);
  assert_int_equal(cat_credential_get_secret(e->s, &cred, loc->credential), 0);
  assert_int_equal(reads(e->s) - before, 4);
  CT_FREE(sh);
  CT_FREE(loc);
  CT_FREE(cred);
}

/* Errors through a view are the per-call functions' errors, and the view stays usable. */
static void test_view_errors(void **state) {
  ct_env *e = *state;
  char rid[40], sid[40];
  add_granted_share(e->s, rid);
  cat_view *v = NULL;
  cat_share *sh = NULL;
  cat_location *loc = NULL;
  cat_credential *cred = NULL;
  assert_int_equal(cat_view_open(e->s, &v), 0);
  assert_int_equal(cat_view_grant_check(v, rid, "other", sid), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "share 'other' not found");
  assert_int_equal(cat_view_share_by_id(v, &sh, "nope"), DD_ENOTFOUND);
  assert_null(sh);
  assert_int_equal(cat_view_location_get(v, &loc, "nope"), DD_ENOTFOUND);
  assert_null(loc);
  assert_int_equal(cat_view_location_get(v, &loc, "a/b"), DD_EINVAL);
  assert_int_equal(cat_view_credential_secret(v, &cred, "nope"), DD_ENOTFOUND);
  assert_null(cred);
  assert_int_equal(cat_view_location_covering(v, &loc, "s3://nowhere/x"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "no storage location covers 's3://nowhere/x'");
  assert_int_equal(cat_view_location_confine(v, NULL, "table", "s3://nowhere/x"), DD_EPERM);
  assert_int_equal(cat_view_grant_check(v, rid, "sales", sid), 0);
  assert_int_equal(cat_view_share_by_id(v, &sh, sid), 0);
  cat_view_close(v);
  CT_FREE(sh);
  cat_view_close(NULL);
}

/* A view reads one committed state: LMDB's when it was opened, PostgreSQL's no older than
 * its open and fixed by its first read (cat_store.h); a later view sees later writes. */
static void test_view_is_one_state(void **state) {
  ct_env *e = *state;
  cat_view *old = NULL, *now = NULL, *unread = NULL;
  cat_location *loc = NULL;
  bool pg = strcmp(cat_store_backend(e->s), "postgresql") == 0;
  add_loc(e->s, "first", "file:///srv/first", NULL);
  assert_int_equal(cat_view_open(e->s, &old), 0);
  assert_int_equal(cat_view_open(e->s, &unread), 0);
  assert_int_equal(cat_view_location_get(old, &loc, "first"), 0); /* its state is fixed now */
  CT_FREE(loc);
  add_loc(e->s, "second", "file:///srv/second", NULL);
  /* not read before the commit: LMDB still the open's state, PostgreSQL the first read's */
  int rc = cat_view_location_get(unread, &loc, "second");
  assert_int_equal(rc, pg ? 0 : DD_ENOTFOUND);
  if (!rc) CT_FREE(loc);
  cat_view_close(unread);
  assert_int_equal(cat_location_delete(e->s, "first"), 0);
  assert_int_equal(cat_view_location_get(old, &loc, "second"), DD_ENOTFOUND);
  assert_int_equal(cat_view_location_get(old, &loc, "first"), 0);
  CT_FREE(loc);
  assert_int_equal(cat_view_open(e->s, &now), 0);
  assert_int_equal(cat_view_location_get(now, &loc, "first"), DD_ENOTFOUND);
  assert_int_equal(cat_view_location_get(now, &loc, "second"), 0);
  CT_FREE(loc);
  cat_view_close(old);
  cat_view_close(now);
}

/* Longest prefix at a '/' boundary; a trailing '/' on a location is ignored; equally long
 * ones are decided by name order. */
static void test_covering_longest_prefix(void **state) {
  ct_env *e = *state;
  add_aws(e->s, "aws", "x");
  add_loc(e->s, "root", "s3://b", "aws");
  add_loc(e->s, "t", "s3://b/t/", "aws");
  add_loc(e->s, "tx", "s3://b/tx", "aws");
  add_loc(e->s, "deep", "s3://b/t/deep", "aws");
  add_loc(e->s, "dup_b", "s3://c/d", "aws");
  add_loc(e->s, "dup_a", "s3://c/d/", "aws");
  static const char *const cases[][2] = {
      {"s3://b/t/x", "t"},       {"s3://b/tx/x", "tx"},     {"s3://b/txy/x", "root"},
      {"s3://b/t/deep", "deep"}, {"s3://b/t/deeper", "t"},  {"s3://b", "root"},
      {"s3://c/d/e", "dup_a"},
  };
  cat_view *v = NULL;
  assert_int_equal(cat_view_open(e->s, &v), 0);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    cat_location *loc = NULL;
    assert_int_equal(cat_view_location_covering(v, &loc, cases[i][0]), 0);
    assert_string_equal(loc->name, cases[i][1]);
    CT_FREE(loc);
  }
  cat_location *loc = NULL;
  assert_int_equal(cat_view_location_covering(v, &loc, "s3://bb/t"), DD_ENOTFOUND);
  assert_null(loc);
  cat_view_close(v);
}

typedef struct {
  int n;
  char last[64];
  int sorted;
} walk_seen;

static int walk_fn(void *arg, const cat_location *loc) {
  walk_seen *w = arg;
  if (strcmp(loc->name, w->last) <= 0) w->sorted = 0;
  snprintf(w->last, sizeof w->last, "%s", loc->name);
  w->n++;
  return 0;
}

/* More locations than a list page (100): a walk, a confinement and a covering search are
 * one transaction each, not one per page. */
static void test_walks_one_txn(void **state) {
  ct_env *e = *state;
  char name[32], url[64];
  add_aws(e->s, "aws", "x");
  for (int i = 0; i < 250; i++) {
    snprintf(name, sizeof name, "loc%03d", i);
    snprintf(url, sizeof url, "s3://bucket%03d", i);
    add_loc(e->s, name, url, "aws");
  }
  walk_seen w = {.sorted = 1};
  uint64_t before = reads(e->s);
  assert_int_equal(cat_location_walk(e->s, walk_fn, &w), 0);
  assert_int_equal(reads(e->s) - before, 1);
  assert_int_equal(w.n, 250);
  assert_true(w.sorted);
  char *found = NULL;
  before = reads(e->s);
  assert_int_equal(cat_location_confine(e->s, &found, "table", "s3://bucket249/t"), 0);
  assert_int_equal(reads(e->s) - before, 1);
  assert_string_equal(found, "loc249");
  free(found);
  cat_view *v = NULL;
  cat_location *loc = NULL;
  before = reads(e->s);
  assert_int_equal(cat_view_open(e->s, &v), 0);
  assert_int_equal(cat_view_location_covering(v, &loc, "s3://bucket249/t"), 0);
  assert_int_equal(cat_view_location_confine(v, NULL, "table", "s3://bucket249/t"), 0);
  cat_view_close(v);
  assert_int_equal(reads(e->s) - before, 1);
  assert_string_equal(loc->name, "loc249");
  CT_FREE(loc);
}


static void *create_other(void *arg) {
  Deltad__Catalog__V1__CreateCatalogRequest cr = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cat_catalog *c = NULL;
  cr.name = "other";
  int rc = cat_catalog_create(arg, &c, "admin", &cr);
  if (c) CT_FREE(c);
  return rc ? (void *)1 : NULL;
}

/* A bound call view: per-call reads and cat_view_open share its one transaction (and its
 * state), values of nested gets stay valid, a write on the thread unbinds it so later reads
 * see the write, and an ended view can still be closed. */
static void test_bound_view_shared(void **state) {
  ct_env *e = *state;
  cat_store *s = e->s;
  Deltad__Catalog__V1__CreateCatalogRequest cr = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cat_catalog *c = NULL;
  cr.name = "before";
  assert_int_equal(cat_catalog_create(s, &c, "admin", &cr), 0);
  CT_FREE(c);
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  assert_int_equal(cat_token_hash(hash, "bound", 5), 0);
  cat_token_rec tr = {.kind = CAT_TOKEN_ADMIN, .name = "admin", .id = "", .expiry_ms = 0};
  assert_int_equal(cat_token_put(s, hash, &tr), 0);

  cat_view *call = NULL;
  assert_int_equal(cat_view_open(s, &call), 0);
  uint64_t r0 = reads(s);
  assert_null(cat_view_bind(call));
  cat_token_rec got;
  assert_int_equal(cat_token_lookup(s, &got, hash), 0);
  assert_int_equal(cat_catalog_get(s, &c, "before"), 0);
  CT_FREE(c);
  cat_view *inner = NULL;
  assert_int_equal(cat_view_open(s, &inner), 0);
  cat_share *sh = NULL;
  assert_int_equal(cat_view_share_get(inner, &sh, "nope"), DD_ENOTFOUND);
  cat_view_close(inner);
  assert_int_equal(reads(s), r0); /* all of it in the call view's transaction */

  /* another thread's write is not seen through the bound view (one state) */
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, create_other, s), 0);
  void *trc = NULL;
  pthread_join(th, &trc);
  assert_null(trc);
  assert_int_equal(cat_catalog_get(s, &c, "other"), DD_ENOTFOUND);
  assert_int_equal(reads(s), r0);

  /* a write on this thread unbinds: the next read is a transaction of its own and sees it */
  cr.name = "after";
  assert_int_equal(cat_catalog_create(s, &c, "admin", &cr), 0);
  CT_FREE(c);
  assert_int_equal(cat_catalog_get(s, &c, "after"), 0);
  CT_FREE(c);
  assert_int_equal(reads(s), r0 + 1);
  assert_null(cat_view_bind(NULL)); /* the write unbound it already */
  cat_view_end(call);
  cat_view_end(call); /* ended twice: nothing */
  cat_view_close(call);

  /* bound again, unbound, ended and closed: no transaction left behind */
  assert_int_equal(cat_view_open(s, &call), 0);
  cat_view_bind(call);
  assert_int_equal(cat_catalog_get(s, &c, "after"), 0);
  CT_FREE(c);
  assert_ptr_equal(cat_view_bind(NULL), call);
  cat_view_end(call);
  cat_view_close(call);
}


static void *create_share_c(void *arg) {
  new_share(arg, "c");
  return NULL;
}

static void *delete_share_a(void *arg) { return cat_share_delete(arg, "a", 0) ? (void *)1 : NULL; }

static void on_thread(void *(*fn)(void *), void *arg) {
  pthread_t th;
  void *rc = NULL;
  assert_int_equal(pthread_create(&th, NULL, fn, arg), 0);
  pthread_join(th, &rc);
  assert_null(rc);
}

/* A commit lands while a view is open, between a read and the view's next one. LMDB: the
 * view is its begin's snapshot. PostgreSQL: a view answered from the read cache takes its
 * snapshot at its first miss; when the rows it already read are unchanged there it goes on
 * in that (later, still consistent) state, and when they changed the read fails with
 * DD_ECONFLICT rather than mix two states. */
static void test_view_commit_between_reads(void **state) {
  ct_env *e = *state;
  cat_store *s = e->s;
  bool pg = strcmp(cat_store_backend(s), "postgresql") == 0;
  cat_share *sh = NULL;
  new_share(s, "a");
  assert_int_equal(cat_share_get(s, &sh, "a"), 0); /* the cache has "a" now */
  CT_FREE(sh);
  cat_view *v = NULL;
  assert_int_equal(cat_view_open(s, &v), 0);
  assert_int_equal(cat_view_share_get(v, &sh, "a"), 0);
  CT_FREE(sh);
  on_thread(create_share_c, s); /* a commit that leaves "a" alone */
  int rc = cat_view_share_get(v, &sh, "c");
  assert_int_equal(rc, pg ? 0 : DD_ENOTFOUND);
  if (!rc) CT_FREE(sh);
  assert_int_equal(cat_view_share_get(v, &sh, "a"), 0);
  CT_FREE(sh);
  cat_view_close(v);

  assert_int_equal(cat_share_get(s, &sh, "a"), 0);
  CT_FREE(sh);
  assert_int_equal(cat_view_open(s, &v), 0);
  assert_int_equal(cat_view_share_get(v, &sh, "a"), 0);
  CT_FREE(sh);
  on_thread(delete_share_a, s); /* a commit that changes what the view read */
  assert_int_equal(cat_view_share_get(v, &sh, "zzz"), pg ? DD_ECONFLICT : DD_ENOTFOUND);
  cat_view_close(v);
}

/* cat_view_generation: views of one state share a generation; a commit (here a grant and
 * a revoke) gives later views a new one, while a view opened before keeps its own. On
 * PostgreSQL there is none (DD_EUNSUPPORTED): callers cache nothing there. */
static void test_view_generation(void **state) {
  ct_env *e = *state;
  cat_store *s = e->s;
  char rid[40];
  add_granted_share(s, rid);
  cat_view *a = NULL, *b = NULL, *c = NULL;
  uint64_t ga = 0, gb = 0, gc = 0, gd = 0;
  assert_int_equal(cat_view_open(s, &a), 0);
  if (strcmp(cat_store_backend(s), "postgresql") == 0) {
    assert_int_equal(cat_view_generation(a, &ga), DD_EUNSUPPORTED);
    cat_view_close(a);
    return;
  }
  assert_int_equal(cat_view_open(s, &b), 0);
  assert_int_equal(cat_view_generation(a, &ga), 0);
  assert_int_equal(cat_view_generation(b, &gb), 0);
  assert_true(ga == gb);
  cat_view_close(b);
  new_share(s, "more");
  assert_int_equal(cat_grant_add(s, "more", "acme"), 0);
  assert_int_equal(cat_view_open(s, &c), 0);
  assert_int_equal(cat_view_generation(c, &gc), 0);
  assert_true(gc != ga);
  assert_int_equal(cat_view_generation(a, &gb), 0);
  assert_true(gb == ga); /* the older view still reads the older state */
  cat_view_close(c);
  assert_int_equal(cat_grant_remove(s, "more", "acme"), 0);
  assert_int_equal(cat_view_open(s, &c), 0);
  assert_int_equal(cat_view_generation(c, &gd), 0);
  assert_true(gd != gc && gd != ga);
  cat_view_end(c);
  assert_int_equal(cat_view_generation(c, &gd), DD_EINTERNAL); /* ended: no state */
  cat_view_close(c);
  cat_view_close(a);
}

/* Ended read transactions are kept and renewed by later readers (LMDB: mdb_txn_reset /
 * mdb_txn_renew): a view opened after a commit sees it, with a new generation, even when
 * its transaction is one an earlier view ended; more views open at once than are kept
 * all work, and closing the store frees the kept ones (ASan's leak check). */
static void test_view_reuse(void **state) {
  ct_env *e = *state;
  cat_store *s = e->s;
  bool pg = strcmp(cat_store_backend(s), "postgresql") == 0;
  enum { MANY = 80 };
  cat_view *vs[MANY];
  cat_share *sh = NULL;
  uint64_t g0 = 0, g1 = 0;
  new_share(s, "first");
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < MANY; i++) {
      assert_int_equal(cat_view_open(s, &vs[i]), 0);
      assert_int_equal(cat_view_share_get(vs[i], &sh, "first"), 0);
      CT_FREE(sh);
    }
    for (int i = 0; i < MANY; i++) cat_view_close(vs[i]);
  }
  assert_int_equal(cat_view_open(s, &vs[0]), 0);
  assert_int_equal(cat_view_share_get(vs[0], &sh, "later"), DD_ENOTFOUND);
  if (!pg) assert_int_equal(cat_view_generation(vs[0], &g0), 0);
  cat_view_close(vs[0]);
  new_share(s, "later");
  assert_int_equal(cat_view_open(s, &vs[0]), 0);
  assert_int_equal(cat_view_share_get(vs[0], &sh, "later"), 0);
  CT_FREE(sh);
  if (!pg) {
    assert_int_equal(cat_view_generation(vs[0], &g1), 0);
    assert_true(g1 != g0);
  }
  cat_view_close(vs[0]);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_s3_query_lookups_one_txn, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_view_errors, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_view_is_one_state, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_covering_longest_prefix, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_walks_one_txn, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_bound_view_shared, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_view_commit_between_reads, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_view_generation, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_view_reuse, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
