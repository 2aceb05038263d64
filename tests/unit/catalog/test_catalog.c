/* test_catalog.c: catalogs in the LMDB store: name validation, case-insensitive
 * uniqueness, fields, persistence, renames, force delete, pagination (also while another
 * thread inserts). */
#include <pthread.h>
#include <time.h>

#include "cat_test_util.h"
#include "store/catalog/cat_internal.h"

static void test_name_validation(void **state) {
  (void)state;
  char long_name[300];
  memset(long_name, 'a', 256);
  long_name[256] = '\0';
  assert_int_equal(cat_name_check("name", long_name, 0), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: longer than 255 bytes");
  long_name[255] = '\0';
  assert_int_equal(cat_name_check("name", long_name, 0), 0);
  assert_int_equal(cat_name_check("name", "", 0), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: must not be empty");
  assert_int_equal(cat_name_check("name", NULL, 0), DD_EINVAL);
  assert_int_equal(cat_name_check("name", "a/b", 1), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: must not contain '/'");
  assert_int_equal(cat_name_check("name", "a.b", 0), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: must not contain '.'");
  assert_int_equal(cat_name_check("name", "a.b", 1), 0);
  assert_int_equal(cat_name_check("name", "a\tb", 1), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: contains a control character");
  assert_int_equal(cat_name_check("name", "a\x7f", 1), DD_EINVAL);
  assert_int_equal(cat_name_check("name", "a\xc2\x85", 1), DD_EINVAL); /* C1 NEL */
  assert_int_equal(cat_name_check("name", "\xff", 1), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: not valid UTF-8");
  assert_int_equal(cat_name_check("name", "\xc0\xaf", 1), DD_EINVAL);     /* overlong '/' */
  assert_int_equal(cat_name_check("name", "\xed\xa0\x80", 1), DD_EINVAL); /* surrogate */
  assert_int_equal(cat_name_check("name", "\xf4\x90\x80\x80", 1), DD_EINVAL); /* > U+10FFFF */
  assert_int_equal(cat_name_check("name", "\xe6\x97\xa5", 1), 0); /* a CJK letter */
  assert_int_equal(cat_name_check("name", "Stra\xc3\x9f" "e_\xe6\x97\xa5-1 x", 0), 0);
}

static void test_create_rejects_bad_names(void **state) {
  ct_env *e = *state;
  assert_int_equal(ct_catalog_rc(e->s, "a.b"), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "name: must not contain '.'");
  assert_int_equal(ct_catalog_rc(e->s, ""), DD_EINVAL);
  char buf[64];
  ct_list_all(e->s, 10, buf, sizeof buf);
  assert_string_equal(buf, "");
}

static void test_fields_and_case_insensitive(void **state) {
  ct_env *e = *state;
  Deltad__Catalog__V1__CreateCatalogRequest req = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  Deltad__Catalog__V1__CreateCatalogRequest__PropertiesEntry p =
      DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__PROPERTIES_ENTRY__INIT, *pp = &p;
  p.key = "team";
  p.value = "data";
  req.name = "Sales";
  req.comment = "revenue";
  req.n_properties = 1;
  req.properties = &pp;
  cat_catalog *c = NULL, *g = NULL;
  int64_t before = (int64_t)time(NULL) * 1000 - 1000;
  assert_int_equal(cat_catalog_create(e->s, &c, "alice", &req), 0);
  assert_string_equal(c->name, "Sales");
  assert_string_equal(c->comment, "revenue");
  assert_string_equal(c->owner, "alice");
  assert_string_equal(c->created_by, "alice");
  assert_true(c->create_at >= before && c->create_at < before + 60000);
  assert_int_equal(strlen(c->id), 36);
  assert_int_equal(c->id[14], '4'); /* UUID v4 */
  assert_true(strchr("89ab", c->id[19]) != NULL);
  assert_int_equal(c->n_properties, 1);
  assert_string_equal(c->properties[0]->key, "team");
  assert_string_equal(c->properties[0]->value, "data");

  req.name = "SALES";
  assert_int_equal(ct_catalog_rc(e->s, "sAlEs"), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "catalog 'sAlEs' already exists");
  assert_int_equal(cat_catalog_get(e->s, &g, "sales"), 0);
  assert_string_equal(g->name, "Sales");
  assert_string_equal(g->id, c->id);
  CT_FREE(g);
  CT_FREE(c);
  assert_int_equal(ct_catalog_rc(e->s, "Sales2"), 0);
}

static void test_missing(void **state) {
  ct_env *e = *state;
  cat_catalog *c = NULL;
  assert_int_equal(cat_catalog_get(e->s, &c, "x"), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'x' not found");
  assert_null(c);
  assert_int_equal(cat_catalog_delete(e->s, "x", 0), DD_ENOTFOUND);
  assert_string_equal(dd_err_msg(), "catalog 'x' not found");
}

static void test_persists_across_reopen(void **state) {
  ct_env *e = *state;
  cat_catalog *c = ct_catalog(e->s, "durable"), *g = NULL;
  assert_int_equal(ct_schema_rc(e->s, "durable", "s1"), 0);
  ct_reopen(e);
  assert_int_equal(cat_catalog_get(e->s, &g, "DURABLE"), 0);
  assert_string_equal(g->id, c->id);
  assert_int_equal(g->create_at, c->create_at);
  cat_schema *sch = NULL;
  assert_int_equal(cat_schema_get(e->s, &sch, "durable.s1"), 0);
  CT_FREE(sch);
  CT_FREE(g);
  CT_FREE(c);
}

static int update(cat_store *s, cat_catalog **out, const char *name, const char *new_name,
                  const char *comment) {
  Deltad__Catalog__V1__UpdateCatalogRequest req = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST__INIT;
  req.name = (char *)name;
  if (new_name) {
    req._new_name_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___NEW_NAME_NEW_NAME;
    req.new_name = (char *)new_name;
  }
  if (comment) {
    req._comment_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___COMMENT_COMMENT;
    req.comment = (char *)comment;
  }
  return cat_catalog_update(s, out, "bob", &req);
}

static void test_rename_keeps_ids(void **state) {
  ct_env *e = *state;
  cat_catalog *a = ct_catalog(e->s, "a"), *b = NULL, *u = NULL;
  cat_schema *s1 = NULL, *s2 = NULL;
  assert_int_equal(ct_schema_rc(e->s, "a", "s"), 0);
  assert_int_equal(cat_schema_get(e->s, &s1, "a.s"), 0);
  assert_int_equal(ct_catalog_rc(e->s, "taken"), 0);
  assert_int_equal(update(e->s, &u, "a", "TAKEN", NULL), DD_EEXISTS);
  assert_string_equal(dd_err_msg(), "catalog 'TAKEN' already exists");
  assert_null(u);
  assert_int_equal(update(e->s, &u, "a", "b", NULL), 0);
  assert_string_equal(u->id, a->id);
  assert_string_equal(u->name, "b");
  assert_string_equal(u->updated_by, "bob");
  assert_string_equal(u->created_by, "admin");
  assert_int_equal(cat_catalog_get(e->s, &b, "a"), DD_ENOTFOUND);
  assert_int_equal(cat_catalog_get(e->s, &b, "B"), 0);
  assert_string_equal(b->id, a->id);
  assert_int_equal(cat_schema_get(e->s, &s2, "a.s"), DD_ENOTFOUND);
  assert_int_equal(cat_schema_get(e->s, &s2, "b.s"), 0);
  assert_string_equal(s2->schema_id, s1->schema_id);
  assert_string_equal(s2->catalog_name, "b");
  assert_string_equal(s2->full_name, "b.s");
  CT_FREE(u);
  /* a case-only rename changes the display name */
  assert_int_equal(update(e->s, &u, "b", "B", NULL), 0);
  assert_string_equal(u->name, "B");
  assert_string_equal(u->id, a->id);
  CT_FREE(u);
  CT_FREE(a), CT_FREE(b), CT_FREE(s1), CT_FREE(s2);
}

static void test_update_fields(void **state) {
  ct_env *e = *state;
  cat_catalog *u = NULL;
  Deltad__Catalog__V1__UpdateCatalogRequest req = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST__INIT;
  Deltad__Catalog__V1__UpdateCatalogRequest__PropertiesEntry p =
      DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST__PROPERTIES_ENTRY__INIT, *pp = &p;
  CT_FREE(ct_catalog(e->s, "c"));
  assert_int_equal(update(e->s, &u, "c", NULL, "first"), 0);
  assert_string_equal(u->comment, "first");
  CT_FREE(u);
  p.key = "k";
  p.value = "v";
  req.name = "c";
  req.n_properties = 1;
  req.properties = &pp;
  assert_int_equal(cat_catalog_update(e->s, &u, "bob", &req), 0);
  assert_string_equal(u->comment, "first"); /* absent: unchanged */
  assert_int_equal(u->n_properties, 1);
  CT_FREE(u);
  assert_int_equal(update(e->s, &u, "c", NULL, ""), 0); /* present but empty: cleared */
  assert_string_equal(u->comment, "");
  assert_int_equal(u->n_properties, 1); /* empty map: unchanged */
  assert_true(u->update_at >= u->create_at);
  CT_FREE(u);
  assert_int_equal(update(e->s, &u, "c", "bad.name", NULL), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "new_name: must not contain '.'");
  assert_int_equal(update(e->s, &u, "nope", NULL, "x"), DD_ENOTFOUND);
}

static void test_force_delete(void **state) {
  ct_env *e = *state;
  CT_FREE(ct_catalog(e->s, "full"));
  assert_int_equal(ct_schema_rc(e->s, "full", "s1"), 0);
  assert_int_equal(ct_schema_rc(e->s, "full", "s2"), 0);
  assert_int_equal(cat_catalog_delete(e->s, "full", 0), DD_EPRECOND);
  assert_string_equal(dd_err_msg(), "catalog 'full' is not empty; use force");
  cat_schema *sch = NULL;
  assert_int_equal(cat_schema_get(e->s, &sch, "full.s2"), 0);
  CT_FREE(sch);
  assert_int_equal(cat_catalog_delete(e->s, "FULL", 1), 0);
  cat_catalog *c = NULL;
  assert_int_equal(cat_catalog_get(e->s, &c, "full"), DD_ENOTFOUND);
  /* a new catalog of the same name starts empty */
  CT_FREE(ct_catalog(e->s, "full"));
  Deltad__Catalog__V1__ListSchemasRequest lr = DELTAD__CATALOG__V1__LIST_SCHEMAS_REQUEST__INIT;
  Deltad__Catalog__V1__ListSchemasResponse *r = NULL;
  lr.catalog_name = "full";
  assert_int_equal(cat_schema_list(e->s, &r, &lr), 0);
  assert_int_equal(r->n_schemas, 0);
  CT_FREE(r);
  assert_int_equal(cat_catalog_delete(e->s, "full", 0), 0);
}

static void test_pagination(void **state) {
  ct_env *e = *state;
  char name[16], buf[4096], want[4096] = "";
  for (int i = 24; i >= 0; i--) { /* inserted out of order; listed in name order */
    snprintf(name, sizeof name, "c%02d", i);
    assert_int_equal(ct_catalog_rc(e->s, name), 0);
  }
  for (int i = 0; i < 25; i++) {
    snprintf(name, sizeof name, "c%02d,", i);
    strcat(want, name);
  }
  for (int page = 1; page <= 26; page += 6) {
    ct_list_all(e->s, page, buf, sizeof buf);
    assert_string_equal(buf, want);
  }
  ct_list_all(e->s, 0, buf, sizeof buf);
  assert_string_equal(buf, want);
  Deltad__Catalog__V1__ListCatalogsRequest req = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  Deltad__Catalog__V1__ListCatalogsResponse *r = NULL;
  req.max_results = 25; /* exactly everything: no next page */
  assert_int_equal(cat_catalog_list(e->s, &r, &req), 0);
  assert_int_equal(r->n_catalogs, 25);
  assert_string_equal(r->next_page_token, "");
  CT_FREE(r);
  req.max_results = 24;
  assert_int_equal(cat_catalog_list(e->s, &r, &req), 0);
  assert_string_not_equal(r->next_page_token, "");
  CT_FREE(r);
  req.max_results = -1;
  assert_int_equal(cat_catalog_list(e->s, &r, &req), DD_EINVAL);
  assert_string_equal(dd_err_msg(), "max_results: must not be negative (got -1)");
  req.max_results = 5;
  const char *bad[] = {"!!!", "a", "AB", "c2xhc2g%", "AA"}; /* "AA" decodes to a NUL byte */
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    req.page_token = (char *)bad[i];
    assert_int_equal(cat_catalog_list(e->s, &r, &req), DD_EINVAL);
    assert_string_equal(dd_err_msg(), "invalid page token");
  }
  assert_null(r);
}

/* Puts n catalogs n0000.. in one transaction through the store's own record helpers
 * (1000 separate synced commits would make this test slow). */
static void bulk_catalogs(cat_store *s, int n) {
  cat_txn *txn = NULL;
  assert_int_equal(cat__txn_begin(s, &txn, true), 0);
  for (int i = 0; i < n; i++) {
    char name[16], id[CAT__ID_LEN + 1];
    cat_catalog rec = DELTAD__CATALOG__V1__CATALOG_INFO__INIT;
    snprintf(name, sizeof name, "n%04d", i);
    assert_int_equal(cat__uuid(id), 0);
    rec.id = id;
    rec.name = name;
    assert_int_equal(cat__name_put(s, txn, CAT__DB_CATALOG_NAMES, NULL, name, id), 0);
    assert_int_equal(cat__rec_put(s, txn, CAT__DB_CATALOGS, id, &rec.base, NULL), 0);
  }
  assert_int_equal(cat__txn_commit(txn), 0);
}

static void test_page_caps(void **state) {
  ct_env *e = *state;
  bulk_catalogs(e->s, 1005);
  Deltad__Catalog__V1__ListCatalogsRequest req = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  Deltad__Catalog__V1__ListCatalogsResponse *r = NULL;
  assert_int_equal(cat_catalog_list(e->s, &r, &req), 0);
  assert_int_equal(r->n_catalogs, 100);
  CT_FREE(r);
  req.max_results = 5000;
  assert_int_equal(cat_catalog_list(e->s, &r, &req), 0);
  assert_int_equal(r->n_catalogs, 1000);
  assert_string_equal(r->catalogs[999]->name, "n0999");
  CT_FREE(r);
}

/* Pages over c00..c20 (even) while inserting and deleting between pages. */
static void test_pagination_changes_between_pages(void **state) {
  ct_env *e = *state;
  char name[16], seen[64][16];
  int n_seen = 0;
  for (int i = 0; i <= 20; i += 2) {
    snprintf(name, sizeof name, "c%02d", i);
    assert_int_equal(ct_catalog_rc(e->s, name), 0);
  }
  Deltad__Catalog__V1__ListCatalogsRequest req = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  char token[512] = "";
  req.max_results = 3;
  for (int page = 0;; page++) {
    Deltad__Catalog__V1__ListCatalogsResponse *r = NULL;
    req.page_token = token;
    assert_int_equal(cat_catalog_list(e->s, &r, &req), 0);
    for (size_t i = 0; i < r->n_catalogs; i++) snprintf(seen[n_seen++], 16, "%s", r->catalogs[i]->name);
    snprintf(token, sizeof token, "%s", r->next_page_token);
    CT_FREE(r);
    if (!token[0]) break;
    /* between pages: insert before and after the cursor, delete one ahead and the last seen */
    snprintf(name, sizeof name, "c%02d", 2 * page + 1);
    assert_int_equal(ct_catalog_rc(e->s, name), 0);
    snprintf(name, sizeof name, "c%02dx", 6 * page + 7);
    assert_int_equal(ct_catalog_rc(e->s, name), 0);
    if (page == 1) {
      assert_int_equal(cat_catalog_delete(e->s, "c14", 0), 0);
      assert_int_equal(cat_catalog_delete(e->s, seen[n_seen - 1], 0), 0);
    }
  }
  /* every original that stayed appears exactly once; nothing appears twice */
  for (int i = 0; i <= 20; i += 2) {
    snprintf(name, sizeof name, "c%02d", i);
    int count = 0;
    for (int j = 0; j < n_seen; j++) count += strcmp(seen[j], name) == 0;
    if (i == 14) assert_int_equal(count, 0);
    else assert_int_equal(count, 1);
  }
  for (int j = 0; j < n_seen; j++)
    for (int k = j + 1; k < n_seen; k++) assert_string_not_equal(seen[j], seen[k]);
}

typedef struct inserter {
  cat_store *s;
  int n;
} inserter;

static void *insert_thread(void *arg) {
  inserter *in = arg;
  char name[32];
  for (int i = 0; i < in->n; i++) {
    snprintf(name, sizeof name, "%c%03d", "bdfh"[i % 4], i);
    if (ct_catalog_rc(in->s, name) != 0) return (void *)1;
  }
  return NULL;
}

/* A second thread inserts while this one pages: the pre-existing names each appear once. */
static void test_pagination_concurrent_thread(void **state) {
  ct_env *e = *state;
  char name[32];
  for (int i = 0; i < 60; i++) {
    snprintf(name, sizeof name, "%c%03d", "aceg"[i % 4], i);
    assert_int_equal(ct_catalog_rc(e->s, name), 0);
  }
  inserter in = {e->s, 200};
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, insert_thread, &in), 0);
  int missing = 0, repeated = 0, unordered = 0;
  for (int round = 0; round < 5; round++) {
    char buf[16384];
    buf[0] = ',';
    ct_list_all(e->s, 4, buf + 1, sizeof buf - 1);
    for (int i = 0; i < 60; i++) {
      snprintf(name, sizeof name, ",%c%03d,", "aceg"[i % 4], i);
      char *hit = strstr(buf, name);
      missing += hit == NULL;
      repeated += hit && strstr(hit + 1, name) != NULL;
    }
    /* no name twice anywhere: the listing is strictly increasing */
    char *prev = NULL, *save = NULL;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
      unordered += prev && strcmp(prev, tok) >= 0;
      prev = tok;
    }
  }
  void *ret = NULL;
  pthread_join(th, &ret); /* before any assertion, so the thread never outlives the store */
  assert_null(ret);
  assert_int_equal(missing, 0);
  assert_int_equal(repeated, 0);
  assert_int_equal(unordered, 0);
}

/* Random page tokens: each is either accepted (a position to resume from) or refused with
 * DD_EINVAL "invalid page token"; never another code, never a crash. */
static void test_page_token_garbage(void **state) {
  ct_env *e = *state;
  static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_=+/.%";
  char tok[700];
  unsigned seed = 12345;
  for (int i = 0; i < 10; i++) {
    snprintf(tok, sizeof tok, "k%d", i);
    assert_int_equal(ct_catalog_rc(e->s, tok), 0);
  }
  int ok = 0, refused = 0;
  for (int i = 0; i < 3000; i++) {
    size_t n = (size_t)(rand_r(&seed) % 400);
    for (size_t j = 0; j < n; j++) tok[j] = alphabet[rand_r(&seed) % (sizeof alphabet - 1)];
    tok[n] = '\0';
    Deltad__Catalog__V1__ListCatalogsRequest req = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
    Deltad__Catalog__V1__ListCatalogsResponse *r = NULL;
    req.page_token = tok;
    req.max_results = 3;
    int rc = cat_catalog_list(e->s, &r, &req);
    if (rc == 0) {
      ok++;
      CT_FREE(r);
    } else {
      assert_int_equal(rc, DD_EINVAL);
      assert_string_equal(dd_err_msg(), "invalid page token");
      assert_null(r);
      refused++;
    }
  }
  assert_true(ok > 0 && refused > 0);
}

typedef struct racer {
  cat_store *s;
  int created, exists, other;
} racer;

static void *race_thread(void *arg) {
  racer *r = arg;
  char name[16];
  for (int i = 0; i < 40; i++) {
    snprintf(name, sizeof name, "%s%02d", i % 2 ? "R" : "r", i / 2); /* rNN and RNN collide */
    int rc = ct_catalog_rc(r->s, name);
    if (rc == 0) r->created++;
    else if (rc == DD_EEXISTS) r->exists++;
    else r->other++;
  }
  return NULL;
}

/* Four threads create the same names in different cases: each name exists exactly once. */
static void test_concurrent_creates_unique(void **state) {
  ct_env *e = *state;
  racer r[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    r[i] = (racer){e->s, 0, 0, 0};
    assert_int_equal(pthread_create(&th[i], NULL, race_thread, &r[i]), 0);
  }
  int created = 0, exists = 0, other = 0;
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    created += r[i].created, exists += r[i].exists, other += r[i].other;
  }
  assert_int_equal(other, 0);
  assert_int_equal(created, 20);
  assert_int_equal(exists, 4 * 40 - 20);
  Deltad__Catalog__V1__ListCatalogsRequest req = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  Deltad__Catalog__V1__ListCatalogsResponse *l = NULL;
  assert_int_equal(cat_catalog_list(e->s, &l, &req), 0);
  assert_int_equal(l->n_catalogs, 20);
  CT_FREE(l);
}

/* Two stores on one PostgreSQL (two replicas): each write through one is seen by the next
 * read through the other, also after the other cached what it read (the read cache is
 * keyed by the catalog generation). LMDB: one environment per process, nothing to test. */
static void test_two_stores_one_database(void **state) {
  ct_env *e = *state;
  const char *url = getenv("DD_TEST_CATALOG");
  if (!url || !*url) return;
  cat_store *b = NULL;
  cat_catalog *c = NULL;
  assert_int_equal(ct_open(&b, e->dir), 0);
  assert_int_equal(cat_catalog_get(b, &c, "r1"), DD_ENOTFOUND); /* cached as absent */
  assert_int_equal(cat_catalog_get(b, &c, "r1"), DD_ENOTFOUND);
  CT_FREE(ct_catalog(e->s, "r1"));
  assert_int_equal(cat_catalog_get(b, &c, "R1"), 0);
  assert_string_equal(c->name, "r1");
  CT_FREE(c);
  Deltad__Catalog__V1__UpdateCatalogRequest up = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST__INIT;
  up.name = "r1";
  up._comment_case = DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___COMMENT_COMMENT;
  up.comment = "changed on a";
  assert_int_equal(cat_catalog_update(e->s, &c, "admin", &up), 0);
  CT_FREE(c);
  assert_int_equal(cat_catalog_get(b, &c, "r1"), 0);
  assert_string_equal(c->comment, "changed on a");
  CT_FREE(c);
  char buf[256];
  ct_list_all(b, 10, buf, sizeof buf);
  assert_string_equal(buf, "r1,");
  assert_int_equal(cat_catalog_delete(b, "r1", 0), 0); /* deleted through b */
  assert_int_equal(cat_catalog_get(e->s, &c, "r1"), DD_ENOTFOUND);
  ct_list_all(e->s, 10, buf, sizeof buf);
  assert_string_equal(buf, "");
  cat_store_close(b);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_name_validation),
      cmocka_unit_test_setup_teardown(test_create_rejects_bad_names, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_fields_and_case_insensitive, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_missing, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_persists_across_reopen, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_rename_keeps_ids, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_update_fields, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_force_delete, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_pagination, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_page_caps, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_pagination_changes_between_pages, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_pagination_concurrent_thread, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_page_token_garbage, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_concurrent_creates_unique, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_two_stores_one_database, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
