/* cat_token.c: API tokens in the store, kept only as SHA-256 hashes mapping to the
 * principal they authenticate (record layout in cat_internal.h). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__TOKEN_VERSION 1
#define CAT__TOKEN_FIXED (1 + 1 + 8 + CAT_TOKEN_HASH_LEN)

/* Serializes rec into buf (room for CAT__TOKEN_FIXED + 2 + 255 + 39); returns the length. */
static size_t cat__token_encode(unsigned char *buf, const unsigned char *hash,
                                const cat_token_rec *rec) {
  size_t o = 0, nl = strnlen(rec->name, 255), il = strnlen(rec->id, sizeof rec->id - 1);
  uint64_t exp = (uint64_t)rec->expiry_ms;
  buf[o++] = CAT__TOKEN_VERSION;
  buf[o++] = (unsigned char)rec->kind;
  for (int i = 7; i >= 0; i--) buf[o++] = (unsigned char)(exp >> (8 * i));
  memcpy(buf + o, hash, CAT_TOKEN_HASH_LEN);
  o += CAT_TOKEN_HASH_LEN;
  buf[o++] = (unsigned char)nl;
  memcpy(buf + o, rec->name, nl);
  o += nl;
  buf[o++] = (unsigned char)il;
  memcpy(buf + o, rec->id, il);
  return o + il;
}

static int cat__token_decode(cat_token_rec *out, const unsigned char *hash,
                             const unsigned char *p, size_t n) {
  memset(out, 0, sizeof *out);
  if (n < CAT__TOKEN_FIXED + 2 || p[0] != CAT__TOKEN_VERSION) goto corrupt;
  out->kind = (cat_token_kind)p[1];
  uint64_t exp = 0;
  for (int i = 0; i < 8; i++) exp = exp << 8 | p[2 + i];
  out->expiry_ms = (int64_t)exp;
  /* The key already matched; the stored copy is compared in constant time anyway. */
  if (CRYPTO_memcmp(p + 10, hash, CAT_TOKEN_HASH_LEN) != 0) goto corrupt;
  size_t o = CAT__TOKEN_FIXED, nl = p[o++];
  if (o + nl + 1 > n) goto corrupt;
  memcpy(out->name, p + o, nl);
  o += nl;
  size_t il = p[o++];
  if (o + il != n || il >= sizeof out->id) goto corrupt;
  memcpy(out->id, p + o, il);
  return 0;
corrupt:
  return dd_err_set(DD_ECORRUPT, "catalog store: malformed token record");
}

/* SHA-256 fetched once for the process: EVP_sha256() makes every digest fetch the
 * algorithm again, under the library's provider locks, which every request thread takes
 * for its token check. Kept until exit. */
static EVP_MD *cat__sha256;
static pthread_once_t cat__sha256_once = PTHREAD_ONCE_INIT;
static void cat__sha256_fetch(void) { cat__sha256 = EVP_MD_fetch(NULL, "SHA256", NULL); }

/* The last token each thread hashed, with its hash: a client sends the same token with
 * every call, and hashing it (a digest context made and freed by EVP_Digest) was most of
 * a small call's token check. Compared in constant time for its length; only tokens up to
 * CAT__MEMO_MAX bytes are kept. */
#define CAT__MEMO_MAX 128
static _Thread_local struct {
  size_t len; /* 0: empty */
  unsigned char token[CAT__MEMO_MAX];
  unsigned char hash[CAT_TOKEN_HASH_LEN];
} cat__memo;

int cat_token_hash(unsigned char out[CAT_TOKEN_HASH_LEN], const char *token, size_t len) {
  if (len && len == cat__memo.len && CRYPTO_memcmp(cat__memo.token, token, len) == 0) {
    memcpy(out, cat__memo.hash, CAT_TOKEN_HASH_LEN);
    return 0;
  }
  unsigned int n = 0;
  pthread_once(&cat__sha256_once, cat__sha256_fetch);
  const EVP_MD *md = cat__sha256 ? cat__sha256 : EVP_sha256();
  if (EVP_Digest(token, len, out, &n, md, NULL) != 1 || n != CAT_TOKEN_HASH_LEN)
    return dd_err_set(DD_EINTERNAL, "SHA-256 failed");
  if (len && len <= CAT__MEMO_MAX) {
    memcpy(cat__memo.token, token, len);
    memcpy(cat__memo.hash, out, CAT_TOKEN_HASH_LEN);
    cat__memo.len = len;
  }
  return 0;
}

int cat_token_put(cat_store *s, const unsigned char hash[CAT_TOKEN_HASH_LEN],
                  const cat_token_rec *rec) {
  unsigned char buf[CAT__TOKEN_FIXED + 2 + 255 + 40];
  cat_txn *txn = NULL;
  if (rec->kind != CAT_TOKEN_ADMIN && rec->kind != CAT_TOKEN_RECIPIENT)
    return dd_err_set(DD_EINVAL, "token: unknown principal kind %d", (int)rec->kind);
  size_t n = cat__token_encode(buf, hash, rec);
  int rc = cat__txn_begin(s, &txn, true);
  if (rc) return rc;
  rc = cat__kv_put(txn, CAT__DB_TOKENS, hash, CAT_TOKEN_HASH_LEN, buf, n, false);
  if (rc) {
    cat__txn_abort(txn);
    return rc;
  }
  return cat__txn_commit(txn);
}

/* The last token record each thread looked up, with the store (its serial) and the
 * catalog generation it was read at: a client sends one token with every call, and the
 * record cannot change without the generation moving (a revocation, a rotation, a
 * deletion are commits). Stores without generations (PostgreSQL) read every time. */
static _Thread_local struct {
  uint64_t serial, gen; /* serial 0: empty */
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  cat_token_rec rec;
} cat__rec_memo;

int cat_token_lookup(cat_store *s, cat_token_rec *out,
                     const unsigned char hash[CAT_TOKEN_HASH_LEN]) {
  cat_txn *txn = NULL;
  cat__bytes v;
  uint64_t gen = 0;
  int rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  bool has_gen = cat__txn_generation(txn, &gen) == 0;
  if (!has_gen) dd_err_clear();
  if (has_gen && cat__rec_memo.serial == s->serial && cat__rec_memo.gen == gen &&
      CRYPTO_memcmp(cat__rec_memo.hash, hash, CAT_TOKEN_HASH_LEN) == 0) {
    *out = cat__rec_memo.rec;
    cat__txn_abort(txn);
    return 0;
  }
  rc = cat__kv_get(txn, CAT__DB_TOKENS, hash, CAT_TOKEN_HASH_LEN, &v);
  if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ENOTFOUND, "token not found");
  else if (!rc) rc = cat__token_decode(out, hash, v.p, v.n);
  cat__txn_abort(txn);
  if (!rc && has_gen) {
    cat__rec_memo.serial = s->serial;
    cat__rec_memo.gen = gen;
    memcpy(cat__rec_memo.hash, hash, CAT_TOKEN_HASH_LEN);
    cat__rec_memo.rec = *out;
  }
  return rc;
}

int cat_token_delete(cat_store *s, const unsigned char hash[CAT_TOKEN_HASH_LEN]) {
  cat_txn *txn = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (rc) return rc;
  rc = cat__kv_del(txn, CAT__DB_TOKENS, hash, CAT_TOKEN_HASH_LEN);
  if (rc) {
    cat__txn_abort(txn);
    return rc == DD_ENOTFOUND ? dd_err_set(DD_ENOTFOUND, "token not found") : rc;
  }
  return cat__txn_commit(txn);
}

int cat_token_has_kind(cat_store *s, int *out, cat_token_kind kind) {
  cat_txn *txn = NULL;
  cat__cur *cur = NULL;
  cat__bytes k, v;
  *out = 0;
  int rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  int mrc = cat__cur_open(txn, CAT__DB_TOKENS, &cur);
  for (mrc = mrc ? mrc : cat__cur_seek(cur, "", 0, &k, &v); mrc == 0 && !*out;
       mrc = cat__cur_next(cur, &k, &v))
    *out = v.n > 1 && ((const unsigned char *)v.p)[1] == (unsigned char)kind;
  if (mrc != 0 && mrc != DD_ENOTFOUND) rc = mrc;
  cat__cur_close(cur);
  cat__txn_abort(txn);
  return rc;
}
