/* cat_test_util.h: helpers for the catalog store tests: a fresh temporary data directory
 * per test (removed afterwards), opening the store there, and request builders.
 * With DD_TEST_CATALOG=postgresql://... in the environment the store is opened on that
 * PostgreSQL instead of LMDB, in a schema named after the data directory (so each test
 * starts empty and a reopen finds its data): the ctests unit.catalog.*.pg do that. */
#ifndef DD_TESTS_UNIT_CATALOG_CAT_TEST_UTIL_H
#define DD_TESTS_UNIT_CATALOG_CAT_TEST_UTIL_H

#include <ftw.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"
#include "store/catalog/cat_store.h"

typedef struct ct_env {
  char dir[256];
  cat_store *s;
} ct_env;

static int ct__rm(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  return remove(p);
}

/* cat_store_open on dir, on the backend DD_TEST_CATALOG names (LMDB when unset). */
static inline int ct_open(cat_store **s, const char *dir) {
  const char *url = getenv("DD_TEST_CATALOG");
  cat_store_opts o = CAT_STORE_OPTS_INIT;
  const char *base = strrchr(dir, '/');
  o.catalog_url = url && *url ? url : NULL;
  o.pg_schema = base ? base + 1 : dir;
  o.pool_size = 4;
  return cat_store_open(s, dir, &o);
}

/* Number of entries in a sub-database (one cursor walk). */
static inline size_t ct_db_entries(cat_store *s, int db) {
  cat_txn *txn = NULL;
  cat__cur *cur = NULL;
  cat__bytes k, v;
  size_t n = 0;
  assert_int_equal(cat__txn_begin(s, &txn, false), 0);
  assert_int_equal(cat__cur_open(txn, db, &cur), 0);
  int rc = cat__cur_seek(cur, "", 0, &k, &v);
  for (; rc == 0; rc = cat__cur_next(cur, &k, &v)) n++;
  assert_int_equal(rc, DD_ENOTFOUND);
  cat__cur_close(cur);
  cat__txn_abort(txn);
  return n;
}

static inline void ct_reopen(ct_env *e) {
  cat_store_close(e->s);
  e->s = NULL;
  int rc = ct_open(&e->s, e->dir);
  if (rc) fail_msg("reopen: %s", dd_err_msg());
}

static inline int ct_setup(void **state) {
  ct_env *e = calloc(1, sizeof *e);
  const char *tmp = getenv("TMPDIR");
  snprintf(e->dir, sizeof e->dir, "%s/ddcat.XXXXXX", tmp && *tmp ? tmp : "/tmp");
  if (!mkdtemp(e->dir)) return -1;
  if (ct_open(&e->s, e->dir)) {
    fprintf(stderr, "open the store: %s\n", dd_err_msg());
    return -1;
  }
  *state = e;
  return 0;
}

static inline int ct_teardown(void **state) {
  ct_env *e = *state;
  cat_store_close(e->s);
  nftw(e->dir, ct__rm, 16, FTW_DEPTH | FTW_PHYS);
  free(e);
  return 0;
}

#define CT_FREE(m) protobuf_c_message_free_unpacked(&(m)->base, NULL)

/* Creates catalog name (must succeed) and returns it (caller frees). */
static inline cat_catalog *ct_catalog(cat_store *s, const char *name) {
  Deltad__Catalog__V1__CreateCatalogRequest req = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cat_catalog *c = NULL;
  req.name = (char *)name;
  int rc = cat_catalog_create(s, &c, "admin", &req);
  if (rc) fail_msg("create catalog %s: %s", name, dd_err_msg());
  return c;
}

static inline int ct_catalog_rc(cat_store *s, const char *name) {
  Deltad__Catalog__V1__CreateCatalogRequest req = DELTAD__CATALOG__V1__CREATE_CATALOG_REQUEST__INIT;
  cat_catalog *c = NULL;
  req.name = (char *)name;
  int rc = cat_catalog_create(s, &c, "admin", &req);
  if (c) CT_FREE(c);
  return rc;
}

static inline int ct_schema_rc(cat_store *s, const char *cat, const char *name) {
  Deltad__Catalog__V1__CreateSchemaRequest req = DELTAD__CATALOG__V1__CREATE_SCHEMA_REQUEST__INIT;
  cat_schema *c = NULL;
  req.name = (char *)name;
  req.catalog_name = (char *)cat;
  int rc = cat_schema_create(s, &c, "admin", &req);
  if (c) CT_FREE(c);
  return rc;
}

/* Lists all catalogs with page size n; appends names (comma-separated) to buf. */
static inline void ct_list_all(cat_store *s, int n, char *buf, size_t cap) {
  Deltad__Catalog__V1__ListCatalogsRequest req = DELTAD__CATALOG__V1__LIST_CATALOGS_REQUEST__INIT;
  char token[1024] = "";
  buf[0] = '\0';
  req.max_results = n;
  do {
    Deltad__Catalog__V1__ListCatalogsResponse *r = NULL;
    req.page_token = token;
    int rc = cat_catalog_list(s, &r, &req);
    if (rc) fail_msg("list catalogs: %d %s", rc, dd_err_msg());
    for (size_t i = 0; i < r->n_catalogs; i++) {
      strncat(buf, r->catalogs[i]->name, cap - strlen(buf) - 1);
      strncat(buf, ",", cap - strlen(buf) - 1);
    }
    snprintf(token, sizeof token, "%s", r->next_page_token);
    CT_FREE(r);
  } while (token[0]);
}

#endif
