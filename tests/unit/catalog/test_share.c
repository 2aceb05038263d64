/* test_share.c: the store's shares, grants and recipients (cat_store.h, Delta Sharing
 * part) on a real LMDB environment: nesting and ordering, case-insensitive names, rename
 * keeping grants, deletes cascading to grants and tokens, and token rotation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "tests/unit/catalog/cat_test_util.h"
#include "store/catalog/cat_store.h"

typedef struct {
  char dir[64];
  cat_store *s;
} fx;

static int setup(void **state) {
  fx *f = calloc(1, sizeof *f);
  snprintf(f->dir, sizeof f->dir, "/tmp/dd-catshare-XXXXXX");
  if (!mkdtemp(f->dir) || ct_open(&f->s, f->dir) != 0) return -1;
  *state = f;
  return 0;
}

static int teardown(void **state) {
  fx *f = *state;
  char cmd[128];
  cat_store_close(f->s);
  snprintf(cmd, sizeof cmd, "rm -rf %s", f->dir);
  if (system(cmd) != 0) return -1;
  free(f);
  return 0;
}

static void mk_share(cat_store *s, const char *name) {
  Deltad__Sharing__V1__CreateShareRequest r = DELTAD__SHARING__V1__CREATE_SHARE_REQUEST__INIT;
  cat_share *sh = NULL;
  r.name = (char *)name;
  assert_int_equal(cat_share_create(s, &sh, "admin", &r), 0);
  protobuf_c_message_free_unpacked(&sh->base, NULL);
}

static void mk_schema(cat_store *s, const char *share, const char *name) {
  Deltad__Sharing__V1__CreateSharingSchemaRequest r =
      DELTAD__SHARING__V1__CREATE_SHARING_SCHEMA_REQUEST__INIT;
  cat_share_schema *sc = NULL;
  r.share = (char *)share;
  r.name = (char *)name;
  assert_int_equal(cat_share_schema_create(s, &sc, "admin", &r), 0);
  protobuf_c_message_free_unpacked(&sc->base, NULL);
}

static int add_table(cat_store *s, const char *share, const char *schema, const char *name) {
  Deltad__Sharing__V1__AddTableRequest r = DELTAD__SHARING__V1__ADD_TABLE_REQUEST__INIT;
  cat_shared_table *t = NULL;
  r.share = (char *)share;
  r.schema = (char *)schema;
  r.name = (char *)name;
  r.url = "file:///tmp/x";
  int rc = cat_share_table_add(s, &t, "admin", &r);
  if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

static void test_nesting_order_and_case(void **state) {
  fx *f = *state;
  mk_share(f->s, "Sales");
  assert_int_equal(add_table(f->s, "sales", "main", "t"), DD_ENOTFOUND); /* no schema yet */
  mk_schema(f->s, "SALES", "Main");
  mk_schema(f->s, "sales", "archive");
  assert_int_equal(add_table(f->s, "sales", "MAIN", "zeta"), 0);
  assert_int_equal(add_table(f->s, "sales", "main", "Alpha"), 0);
  assert_int_equal(add_table(f->s, "sales", "main", "ALPHA"), DD_EEXISTS);
  cat_share *sh = NULL;
  assert_int_equal(cat_share_get(f->s, &sh, "sAlEs"), 0);
  assert_string_equal(sh->name, "Sales");
  assert_int_equal(sh->n_schemas, 2);
  assert_string_equal(sh->schemas[0]->name, "archive");
  assert_string_equal(sh->schemas[1]->tables[0]->name, "Alpha");
  assert_string_equal(sh->schemas[1]->tables[1]->name, "zeta");
  cat_shared_table *t = NULL;
  assert_int_equal(cat_share_table_find(f->s, &t, sh->id, sh->schemas[1]->tables[1]->id), 0);
  assert_string_equal(t->name, "zeta");
  protobuf_c_message_free_unpacked(&t->base, NULL);
  assert_int_equal(cat_share_schema_delete(f->s, "sales", "main", 0), DD_EPRECOND);
  assert_int_equal(cat_share_table_remove(f->s, "sales", "main", "zeta"), 0);
  assert_int_equal(cat_share_table_find(f->s, &t, sh->id, sh->schemas[1]->tables[1]->id),
                   DD_ENOTFOUND);
  assert_int_equal(cat_share_delete(f->s, "sales", 0), DD_EPRECOND);
  assert_int_equal(cat_share_delete(f->s, "sales", 1), 0);
  protobuf_c_message_free_unpacked(&sh->base, NULL);
  assert_int_equal(cat_share_get(f->s, &sh, "sales"), DD_ENOTFOUND);
}

typedef struct {
  char names[8][64];
  int n;
} walk_out;

static int collect(void *arg, const char *lname, const char *id) {
  walk_out *w = arg;
  (void)id;
  snprintf(w->names[w->n++], 64, "%s", lname);
  return 0;
}

static cat_recipient *mk_recipient(cat_store *s, const char *name, unsigned char seed) {
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  cat_recipient *r = NULL;
  memset(hash, seed, sizeof hash);
  assert_int_equal(cat_recipient_create(s, &r, "admin", name, "", hash, 0), 0);
  assert_int_equal(r->n_token_hashes, 0); /* never handed out */
  return r;
}

static void test_grants_walk_and_rename(void **state) {
  fx *f = *state;
  mk_share(f->s, "b");
  mk_share(f->s, "a");
  mk_share(f->s, "c");
  cat_recipient *r = mk_recipient(f->s, "Bob", 1);
  assert_int_equal(cat_grant_add(f->s, "c", "bob"), 0);
  assert_int_equal(cat_grant_add(f->s, "A", "BOB"), 0);
  assert_int_equal(cat_grant_add(f->s, "a", "bob"), 0); /* twice: no-op */
  walk_out w = {0};
  assert_int_equal(cat_share_walk(f->s, NULL, "", collect, &w), 0);
  assert_int_equal(w.n, 3);
  assert_string_equal(w.names[0], "a");
  memset(&w, 0, sizeof w);
  assert_int_equal(cat_share_walk(f->s, r->id, "a", collect, &w), 0);
  assert_int_equal(w.n, 1);
  assert_string_equal(w.names[0], "c");
  char sid[40];
  assert_int_equal(cat_grant_check(f->s, r->id, "B", sid), DD_ENOTFOUND);
  assert_int_equal(cat_grant_check(f->s, r->id, "C", sid), 0);
  /* a rename keeps the grant under the new name */
  Deltad__Sharing__V1__UpdateShareRequest u = DELTAD__SHARING__V1__UPDATE_SHARE_REQUEST__INIT;
  cat_share *sh = NULL;
  u.name = "c";
  u._new_name_case = DELTAD__SHARING__V1__UPDATE_SHARE_REQUEST___NEW_NAME_NEW_NAME;
  u.new_name = "Zed";
  assert_int_equal(cat_share_update(f->s, &sh, "admin", &u), 0);
  protobuf_c_message_free_unpacked(&sh->base, NULL);
  assert_int_equal(cat_grant_check(f->s, r->id, "c", sid), DD_ENOTFOUND);
  assert_int_equal(cat_grant_check(f->s, r->id, "zed", sid), 0);
  assert_int_equal(cat_grant_remove(f->s, "zed", "bob"), 0);
  assert_int_equal(cat_grant_remove(f->s, "zed", "bob"), DD_ENOTFOUND);
  /* deleting the share drops its grants */
  assert_int_equal(cat_share_delete(f->s, "a", 0), 0);
  memset(&w, 0, sizeof w);
  assert_int_equal(cat_share_walk(f->s, r->id, "", collect, &w), 0);
  assert_int_equal(w.n, 0);
  protobuf_c_message_free_unpacked(&r->base, NULL);
}

static void test_recipient_tokens(void **state) {
  fx *f = *state;
  unsigned char h1[CAT_TOKEN_HASH_LEN], h2[CAT_TOKEN_HASH_LEN];
  cat_token_rec rec;
  memset(h1, 7, sizeof h1);
  memset(h2, 8, sizeof h2);
  cat_recipient *r = mk_recipient(f->s, "eve", 7);
  assert_int_equal(cat_token_lookup(f->s, &rec, h1), 0);
  assert_int_equal(rec.kind, CAT_TOKEN_RECIPIENT);
  assert_string_equal(rec.name, "eve");
  assert_string_equal(rec.id, r->id);
  protobuf_c_message_free_unpacked(&r->base, NULL);
  /* rotate: the old token ends now */
  assert_int_equal(cat_recipient_rotate(f->s, &r, "EVE", h2, 0, 0), 0);
  protobuf_c_message_free_unpacked(&r->base, NULL);
  assert_int_equal(cat_token_lookup(f->s, &rec, h1), DD_ENOTFOUND);
  assert_int_equal(cat_token_lookup(f->s, &rec, h2), 0);
  assert_int_equal(cat_recipient_create(f->s, &r, "admin", "Eve", "", h1, 0), DD_EEXISTS);
  assert_int_equal(cat_recipient_delete(f->s, "eve"), 0);
  assert_int_equal(cat_token_lookup(f->s, &rec, h2), DD_ENOTFOUND);
  assert_int_equal(cat_recipient_get(f->s, &r, "eve"), DD_ENOTFOUND);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test_setup_teardown(test_nesting_order_and_case, setup, teardown),
      cmocka_unit_test_setup_teardown(test_grants_walk_and_rename, setup, teardown),
      cmocka_unit_test_setup_teardown(test_recipient_tokens, setup, teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
