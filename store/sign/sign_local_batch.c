/* sign_local_batch.c: the local URLs of many files of one table with one expiry (a sharing
 * query's), the very URLs sign_local_url makes, at a fraction of its cost. Made once: the
 * URL's start (base, table id escaped) as JSON, its tail up to the signature, and the
 * SHA-256 states of HMAC's inner hash after the key block and the canonical string's fixed
 * start and of its outer hash after the key block. A file then costs its path's escaping
 * and three SHA-256 blocks, with no allocation (a path that needs normalising, one).
 * The batch is read-only once made: any number of threads may use it at once.
 *
 * OpenSSL 3 deprecates the SHA256_* calls, but they are the only ones whose state is a
 * plain struct that can be copied without an allocation (an EVP_MD_CTX copy allocates
 * twice per URL): this file alone uses them. */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/crypto.h>
#include <openssl/sha.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

#define BATCH_SIG_LEN 43 /* base64url of 32 bytes, no padding */

struct sign_local_batch {
  SHA256_CTX inner; /* key ^ ipad, then "deltad-local-v1\n" <len> ":" table_id "\n" */
  SHA256_CTX outer; /* key ^ opad */
  dd_buf start;     /* '"' + JSON of base + "/files/" + pct(table_id) + "/" */
  char tail[48];    /* "?expires=" <ms> "&sig=" */
  size_t tail_len;
  char exp[24]; /* "\n" <ms>: the canonical string's end */
  size_t exp_len;
};

int sign_local_batch_new(sign_local_batch **out, const sign_local_key *key, const char *base_url,
                         const char *table_id, int64_t expires_at_ms) {
  *out = NULL;
  if (!key || !base_url || !*base_url) return dd_err_set(DD_EINVAL, "local URL needs a key and a base URL");
  if (!table_id || !*table_id || strchr(table_id, '/'))
    return dd_err_set(DD_EINVAL, "bad table id '%s'", table_id ? table_id : "");
  if (expires_at_ms < 0) return dd_err_set(DD_EINVAL, "negative expiry");
  sign_local_batch *b = calloc(1, sizeof *b);
  if (!b) return dd_err_set(DD_ENOMEM, "out of memory");
  size_t base_len = strlen(base_url);
  while (base_len > 0 && base_url[base_len - 1] == '/') base_len--;
  sign__buf tid = SIGN__BUF_INIT;
  sign__buf_pct(&tid, table_id, 0);
  dd_buf_put_jstr(&b->start, base_url, base_len);
  if (b->start.len) b->start.p[--b->start.len] = '\0'; /* the closing quote comes after the URL */
  dd_buf_puts(&b->start, "/files/");
  if (!tid.failed) dd_buf_puts(&b->start, tid.p);
  dd_buf_putc(&b->start, '/');
  bool oom = tid.failed || b->start.oom;
  sign__buf_free(&tid);
  b->tail_len = (size_t)snprintf(b->tail, sizeof b->tail, "?expires=%lld&sig=", (long long)expires_at_ms);
  b->exp_len = (size_t)snprintf(b->exp, sizeof b->exp, "\n%lld", (long long)expires_at_ms);
  uint8_t pad[SHA256_CBLOCK] = {0};
  memcpy(pad, key->k, SIGN_LOCAL_KEY_LEN);
  for (size_t i = 0; i < sizeof pad; i++) pad[i] ^= 0x36;
  char head[40];
  int hn = snprintf(head, sizeof head, "deltad-local-v1\n%zu:", strlen(table_id));
  SHA256_Init(&b->inner);
  SHA256_Update(&b->inner, pad, sizeof pad);
  SHA256_Update(&b->inner, head, (size_t)hn);
  SHA256_Update(&b->inner, table_id, strlen(table_id));
  SHA256_Update(&b->inner, "\n", 1);
  for (size_t i = 0; i < sizeof pad; i++) pad[i] ^= 0x36 ^ 0x5c;
  SHA256_Init(&b->outer);
  SHA256_Update(&b->outer, pad, sizeof pad);
  OPENSSL_cleanse(pad, sizeof pad);
  if (oom) {
    sign_local_batch_free(b);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  *out = b;
  return 0;
}

/* Whether rel is already what sign__rel_normalize makes of it: relative, no empty, "."
 * or ".." segment. */
static bool is_normal(const char *rel, size_t n) {
  if (!n || rel[0] == '/' || rel[n - 1] == '/') return false;
  for (const char *seg = rel, *end = rel + n; seg < end;) {
    const char *slash = memchr(seg, '/', (size_t)(end - seg));
    size_t len = slash ? (size_t)(slash - seg) : (size_t)(end - seg);
    if (!len || (seg[0] == '.' && (len == 1 || (len == 2 && seg[1] == '.')))) return false;
    seg += len + 1;
  }
  return true;
}

int sign_local_batch_put_json(const sign_local_batch *b, dd_buf *out, const char *rel_path) {
  char *norm = NULL;
  size_t n = rel_path ? strlen(rel_path) : 0;
  if (!is_normal(rel_path, n)) {
    int rc = sign__rel_normalize(&norm, rel_path);
    if (rc) return rc;
    rel_path = norm, n = strlen(norm);
  }
  char len[24]; /* "<n>:" without printf (a call a file) */
  char digits[21];
  size_t nd = 0, ln = 0;
  for (size_t v = n; nd == 0 || v; v /= 10) digits[nd++] = (char)('0' + v % 10);
  while (nd) len[ln++] = digits[--nd];
  len[ln++] = ':';
  uint8_t mac[SHA256_DIGEST_LENGTH];
  SHA256_CTX c = b->inner;
  SHA256_Update(&c, len, ln);
  SHA256_Update(&c, rel_path, n);
  SHA256_Update(&c, b->exp, b->exp_len);
  SHA256_Final(mac, &c);
  c = b->outer;
  SHA256_Update(&c, mac, sizeof mac);
  SHA256_Final(mac, &c);
  OPENSSL_cleanse(&c, sizeof c);
  char sig[BATCH_SIG_LEN + 2];
  sign__b64(sig, mac, sizeof mac, 1);
  int rc = 0;
  if (n > SIZE_MAX / 4 || !dd_buf_reserve(out, b->start.len + 3 * n + b->tail_len + BATCH_SIG_LEN + 1)) {
    rc = dd_err_set(DD_ENOMEM, "out of memory building a signed URL");
  } else {
    dd_buf_put(out, b->start.p, b->start.len);
    out->len += sign__pct_into(out->p + out->len, rel_path, n, 1);
    dd_buf_put(out, b->tail, b->tail_len);
    dd_buf_put(out, sig, BATCH_SIG_LEN);
    dd_buf_putc(out, '"');
  }
  free(norm);
  return rc;
}

void sign_local_batch_free(sign_local_batch *b) {
  if (!b) return;
  OPENSSL_cleanse(&b->inner, sizeof b->inner);
  OPENSSL_cleanse(&b->outer, sizeof b->outer);
  dd_buf_free(&b->start);
  free(b);
}
