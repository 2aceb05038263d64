/* test_token.c: token hashes in the LMDB store: put, lookup, delete, kinds, persistence. */
#include "cat_test_util.h"

static void test_hash_vector(void **state) {
  (void)state;
  unsigned char h[CAT_TOKEN_HASH_LEN];
  static const unsigned char abc[] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea};
  assert_int_equal(cat_token_hash(h, "abc", 3), 0);
  assert_memory_equal(h, abc, sizeof abc);
}

/* Each thread keeps the last token it hashed: the same token again gives the same hash,
 * another one of the same length (or a longer one sharing its prefix, or one too long to
 * keep) its own, SHA-256's of each (the vectors of "abc", "abd" and 200 x 'a'). */
static void test_hash_memo(void **state) {
  (void)state;
  unsigned char h[CAT_TOKEN_HASH_LEN];
  static const unsigned char abc[] = {0xba, 0x78, 0x16, 0xbf, 0x8f, 0x01, 0xcf, 0xea};
  static const unsigned char abd[] = {0xa5, 0x2d, 0x15, 0x9f, 0x26, 0x2b, 0x2c, 0x6d};
  static const unsigned char abcd[] = {0x88, 0xd4, 0x26, 0x6f, 0xd4, 0xe6, 0x33, 0x8d};
  static const unsigned char a200[] = {0xc2, 0xa9, 0x08, 0xd9, 0x8f, 0x5d, 0xf9, 0x87};
  char many[200];
  memset(many, 'a', sizeof many);
  for (int round = 0; round < 2; round++) {
    assert_int_equal(cat_token_hash(h, "abc", 3), 0);
    assert_memory_equal(h, abc, sizeof abc);
    assert_int_equal(cat_token_hash(h, "abc", 3), 0);
    assert_memory_equal(h, abc, sizeof abc);
    assert_int_equal(cat_token_hash(h, "abd", 3), 0);
    assert_memory_equal(h, abd, sizeof abd);
    assert_int_equal(cat_token_hash(h, "abcd", 4), 0);
    assert_memory_equal(h, abcd, sizeof abcd);
    assert_int_equal(cat_token_hash(h, many, sizeof many), 0);
    assert_memory_equal(h, a200, sizeof a200);
    assert_int_equal(cat_token_hash(h, many, sizeof many), 0);
    assert_memory_equal(h, a200, sizeof a200);
  }
}

static void test_put_lookup_delete(void **state) {
  ct_env *e = *state;
  unsigned char h1[CAT_TOKEN_HASH_LEN], h2[CAT_TOKEN_HASH_LEN];
  cat_token_rec rec = {.kind = CAT_TOKEN_RECIPIENT, .name = "acme", .id = "rid-1",
                       .expiry_ms = 1234567890123LL}, got;
  int has = -1;
  cat_token_hash(h1, "tok-1", 5);
  cat_token_hash(h2, "tok-2", 5);
  assert_int_equal(cat_token_has_kind(e->s, &has, CAT_TOKEN_RECIPIENT), 0);
  assert_int_equal(has, 0);
  assert_int_equal(cat_token_put(e->s, h1, &rec), 0);
  assert_int_equal(cat_token_lookup(e->s, &got, h2), DD_ENOTFOUND);
  ct_reopen(e);
  assert_int_equal(cat_token_lookup(e->s, &got, h1), 0);
  assert_int_equal(got.kind, CAT_TOKEN_RECIPIENT);
  assert_string_equal(got.name, "acme");
  assert_string_equal(got.id, "rid-1");
  assert_int_equal(got.expiry_ms, 1234567890123LL);
  assert_int_equal(cat_token_has_kind(e->s, &has, CAT_TOKEN_RECIPIENT), 0);
  assert_int_equal(has, 1);
  assert_int_equal(cat_token_has_kind(e->s, &has, CAT_TOKEN_ADMIN), 0);
  assert_int_equal(has, 0);
  rec.kind = 7;
  assert_int_equal(cat_token_put(e->s, h2, &rec), DD_EINVAL);
  assert_int_equal(cat_token_delete(e->s, h1), 0);
  assert_int_equal(cat_token_lookup(e->s, &got, h1), DD_ENOTFOUND);
  assert_int_equal(cat_token_delete(e->s, h1), DD_ENOTFOUND);
}

/* A looked-up record is kept per thread for the store and catalog state it was read at:
 * a changed record (put again), a deleted one and another store with the same hash (a
 * second store in another directory, and the first one reopened, whose generations may
 * repeat) are all seen at once. */
static void test_lookup_memo(void **state) {
  ct_env *e = *state;
  unsigned char h[CAT_TOKEN_HASH_LEN];
  cat_token_rec rec = {.kind = CAT_TOKEN_RECIPIENT, .name = "acme", .id = "rid-1"}, got;
  cat_token_hash(h, "tok-m", 5);
  assert_int_equal(cat_token_put(e->s, h, &rec), 0);
  for (int i = 0; i < 3; i++) {
    assert_int_equal(cat_token_lookup(e->s, &got, h), 0);
    assert_string_equal(got.name, "acme");
  }
  snprintf(rec.name, sizeof rec.name, "%s", "acme2");
  assert_int_equal(cat_token_put(e->s, h, &rec), 0);
  assert_int_equal(cat_token_lookup(e->s, &got, h), 0);
  assert_string_equal(got.name, "acme2");
  char odir[sizeof e->dir + 8];
  cat_store *os = NULL;
  snprintf(odir, sizeof odir, "%s.other", e->dir);
  assert_int_equal(mkdir(odir, 0700), 0);
  assert_int_equal(ct_open(&os, odir), 0);
  assert_int_equal(cat_token_lookup(os, &got, h), DD_ENOTFOUND);
  assert_int_equal(cat_token_lookup(e->s, &got, h), 0);
  assert_int_equal(cat_token_delete(e->s, h), 0);
  assert_int_equal(cat_token_lookup(e->s, &got, h), DD_ENOTFOUND);
  assert_int_equal(cat_token_put(e->s, h, &rec), 0);
  assert_int_equal(cat_token_lookup(e->s, &got, h), 0);
  ct_reopen(e);
  assert_int_equal(cat_token_lookup(e->s, &got, h), 0);
  assert_string_equal(got.name, "acme2");
  cat_store_close(os);
  assert_int_equal(nftw(odir, ct__rm, 8, FTW_DEPTH | FTW_PHYS), 0);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_hash_vector),
      cmocka_unit_test(test_hash_memo),
      cmocka_unit_test_setup_teardown(test_put_lookup_delete, ct_setup, ct_teardown),
      cmocka_unit_test_setup_teardown(test_lookup_memo, ct_setup, ct_teardown),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
