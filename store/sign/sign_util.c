/* sign_util.c: the small pieces every signer shares: a growable string, percent and
 * base64 encodings, hex, UTC time formatting, and HMAC-SHA256 / SHA-256 from OpenSSL 3. */
#include "store/sign/sign_int.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/params.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"

/* ===================== growable string ===================== */

int sign__buf_reserve(sign__buf *b, size_t extra) {
  if (b->failed)
    return -1;
  if (extra > SIZE_MAX / 2 - b->len) {
    b->failed = 1;
    return -1;
  }
  size_t need = b->len + extra + 1;
  if (need <= b->cap)
    return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need)
    cap *= 2;
  char *p = realloc(b->p, cap);
  if (!p) {
    b->failed = 1;
    return -1;
  }
  b->p = p;
  b->cap = cap;
  return 0;
}

void sign__buf_put(sign__buf *b, const void *s, size_t n) {
  if (sign__buf_reserve(b, n) < 0)
    return;
  if (n)
    memcpy(b->p + b->len, s, n);
  b->len += n;
  b->p[b->len] = '\0';
}

void sign__buf_puts(sign__buf *b, const char *s) { sign__buf_put(b, s, strlen(s)); }

void sign__buf_printf(sign__buf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) {
    b->failed = 1;
    return;
  }
  if (sign__buf_reserve(b, (size_t)n) < 0)
    return;
  va_start(ap, fmt);
  vsnprintf(b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
}

void sign__buf_i64(sign__buf *b, int64_t v) {
  char tmp[24];
  size_t i = sizeof tmp;
  uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
  do {
    tmp[--i] = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0)
    tmp[--i] = '-';
  sign__buf_put(b, tmp + i, sizeof tmp - i);
}

static int sign__unreserved(unsigned char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
         c == '-' || c == '.' || c == '_' || c == '~';
}

/* sign__unreserved as a table, filled once. */
static bool sign__pct_keep[256];
static pthread_once_t sign__pct_once = PTHREAD_ONCE_INIT;

static void sign__pct_init(void) {
  for (int c = 0; c < 256; c++)
    sign__pct_keep[c] = sign__unreserved((unsigned char)c);
}

size_t sign__pct_into(char *out, const char *s, size_t n, int keep_slash) {
  static const char hex[] = "0123456789ABCDEF";
  pthread_once(&sign__pct_once, sign__pct_init);
  char *o = out;
  for (const unsigned char *p = (const unsigned char *)s, *end = p + n; p < end; p++) {
    if (sign__pct_keep[*p] || (keep_slash && *p == '/')) {
      *o++ = (char)*p;
    } else {
      *o++ = '%';
      *o++ = hex[*p >> 4];
      *o++ = hex[*p & 15];
    }
  }
  return (size_t)(o - out);
}

/* Percent-encodes s into b: room for the worst case (3 bytes a byte) is made once, then
 * every byte is written in place. */
void sign__buf_pct(sign__buf *b, const char *s, int keep_slash) {
  size_t n = strlen(s);
  if (n > SIZE_MAX / 4 || sign__buf_reserve(b, 3 * n) < 0) {
    b->failed = 1;
    return;
  }
  b->len += sign__pct_into(b->p + b->len, s, n, keep_slash);
  b->p[b->len] = '\0';
}

int sign__buf_finish(sign__buf *b, char **out) {
  if (b->failed || sign__buf_reserve(b, 0) < 0) {
    sign__buf_free(b);
    return dd_err_set(DD_ENOMEM, "out of memory building a signed URL");
  }
  b->p[b->len] = '\0'; /* an empty buffer was never written */
  *out = b->p;
  b->p = NULL;
  b->len = b->cap = 0;
  return 0;
}

void sign__buf_free(sign__buf *b) {
  if (!b)
    return;
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

/* ===================== percent-decoding ===================== */

static int sign__hexval(unsigned char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  if (c >= 'A' && c <= 'F')
    return c - 'A' + 10;
  return -1;
}

int sign_pct_decode(char **out, const char *s) {
  *out = NULL;
  if (!s)
    return dd_err_set(DD_EINVAL, "no string to decode");
  size_t n = strlen(s);
  char *d = malloc(n + 1);
  if (!d)
    return dd_err_set(DD_ENOMEM, "out of memory");
  size_t j = 0;
  for (size_t i = 0; i < n; i++) {
    if (s[i] != '%') {
      d[j++] = s[i];
      continue;
    }
    /* s is NUL-terminated: a short escape stops at the NUL, which is not a hex digit. */
    int hi = sign__hexval((unsigned char)s[i + 1]);
    int lo = hi >= 0 ? sign__hexval((unsigned char)s[i + 2]) : -1;
    if (hi < 0 || lo < 0) {
      free(d);
      return dd_err_set(DD_EINVAL, "malformed percent-escape in '%s'", s);
    }
    if (hi == 0 && lo == 0) {
      free(d);
      return dd_err_set(DD_EINVAL, "%%00 is not allowed in a path");
    }
    d[j++] = (char)(hi * 16 + lo);
    i += 2;
  }
  d[j] = '\0';
  *out = d;
  return 0;
}

/* ===================== hex and base64 ===================== */

void sign__hex(char *out, const uint8_t *in, size_t n) {
  static const char hex[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = hex[in[i] >> 4];
    out[2 * i + 1] = hex[in[i] & 15];
  }
  out[2 * n] = '\0';
}

static const char sign__b64_std[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
static const char sign__b64_url[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

size_t sign__b64(char *out, const uint8_t *in, size_t n, int url) {
  const char *a = url ? sign__b64_url : sign__b64_std;
  size_t o = 0, i = 0;
  for (; i + 3 <= n; i += 3) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    out[o++] = a[(v >> 6) & 63];
    out[o++] = a[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)in[i] << 16;
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    if (!url) {
      out[o++] = '=';
      out[o++] = '=';
    }
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8;
    out[o++] = a[v >> 18];
    out[o++] = a[(v >> 12) & 63];
    out[o++] = a[(v >> 6) & 63];
    if (!url)
      out[o++] = '=';
  }
  out[o] = '\0';
  return o;
}

static int sign__b64_val(unsigned char c) {
  const char *p = c ? strchr(sign__b64_std, c) : NULL;
  return p ? (int)(p - sign__b64_std) : -1;
}

int sign__b64_decode(uint8_t **out, size_t *out_len, const char *s) {
  *out = NULL;
  *out_len = 0;
  size_t n = strlen(s);
  if (n == 0 || n % 4 != 0)
    return dd_err_set(DD_EINVAL, "base64 value has a bad length");
  size_t pad = (s[n - 1] == '=') + (n >= 2 && s[n - 2] == '=');
  uint8_t *d = malloc(n / 4 * 3);
  if (!d)
    return dd_err_set(DD_ENOMEM, "out of memory");
  size_t o = 0;
  for (size_t i = 0; i < n; i += 4) {
    int last = i + 4 == n;
    int v[4];
    for (int k = 0; k < 4; k++) {
      v[k] = sign__b64_val((unsigned char)s[i + k]);
      int is_pad = last && (size_t)k >= 4 - pad;
      if (is_pad ? s[i + k] != '=' : v[k] < 0) {
        free(d);
        return dd_err_set(DD_EINVAL, "base64 value has a bad character");
      }
      if (is_pad)
        v[k] = 0;
    }
    uint32_t w = (uint32_t)v[0] << 18 | (uint32_t)v[1] << 12 | (uint32_t)v[2] << 6 | (uint32_t)v[3];
    d[o++] = (uint8_t)(w >> 16);
    if (!(last && pad == 2))
      d[o++] = (uint8_t)(w >> 8);
    if (!(last && pad >= 1))
      d[o++] = (uint8_t)w;
  }
  *out = d;
  *out_len = o;
  return 0;
}

/* ===================== time ===================== */

int sign__utc_format(char *out, size_t cap, int64_t t, const char *fmt) {
  /* 253402300799 is 9999-12-31T23:59:59Z. */
  if (t < 0 || t > INT64_C(253402300799))
    return dd_err_set(DD_EINVAL, "time %lld is out of range", (long long)t);
  time_t tt = (time_t)t;
  struct tm tm;
  if (!gmtime_r(&tt, &tm) || strftime(out, cap, fmt, &tm) == 0)
    return dd_err_set(DD_EINVAL, "cannot format time %lld", (long long)t);
  return 0;
}

/* ===================== OpenSSL ===================== */

/* HMAC-SHA256 with a per-thread MAC context that keeps its last key: signing thousands of
 * file URLs with one key then costs two SHA-256 runs each, not an algorithm fetch (which
 * dominated EVP_Q_mac: 23% of a 100,000-file query). Other keys (SigV4's chained keys)
 * re-key the same context. The key copy is cleansed when the thread ends. */
typedef struct sign__hmac_tl {
  EVP_MAC_CTX *ctx;
  uint8_t key[128];
  size_t key_len; /* 0 with no key yet */
} sign__hmac_tl;

static pthread_once_t sign__hmac_once = PTHREAD_ONCE_INIT;
static pthread_key_t sign__hmac_key;
static EVP_MAC *sign__hmac_alg;

static void sign__hmac_tl_free(void *p) {
  sign__hmac_tl *tl = p;
  EVP_MAC_CTX_free(tl->ctx);
  OPENSSL_cleanse(tl->key, sizeof tl->key);
  free(tl);
}

static void sign__hmac_init(void) {
  if (pthread_key_create(&sign__hmac_key, sign__hmac_tl_free) == 0)
    sign__hmac_alg = EVP_MAC_fetch(NULL, "HMAC", NULL);
}

/* This thread's context keyed with key, or NULL (then the caller uses EVP_Q_mac). */
static EVP_MAC_CTX *sign__hmac_ctx(const void *key, size_t key_len) {
  pthread_once(&sign__hmac_once, sign__hmac_init);
  if (!sign__hmac_alg || key_len == 0 || key_len > sizeof ((sign__hmac_tl *)0)->key)
    return NULL;
  sign__hmac_tl *tl = pthread_getspecific(sign__hmac_key);
  if (!tl) {
    if (!(tl = calloc(1, sizeof *tl)))
      return NULL;
    if (!(tl->ctx = EVP_MAC_CTX_new(sign__hmac_alg)) ||
        pthread_setspecific(sign__hmac_key, tl) != 0) {
      sign__hmac_tl_free(tl);
      return NULL;
    }
  }
  if (tl->key_len == key_len && CRYPTO_memcmp(tl->key, key, key_len) == 0)
    return EVP_MAC_init(tl->ctx, NULL, 0, NULL) ? tl->ctx : NULL; /* same key again */
  OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string("digest", (char *)"SHA256", 0),
                         OSSL_PARAM_construct_end()};
  tl->key_len = 0;
  if (!EVP_MAC_init(tl->ctx, key, key_len, params))
    return NULL;
  memcpy(tl->key, key, key_len);
  tl->key_len = key_len;
  return tl->ctx;
}

int sign__hmac_sha256(uint8_t out[SIGN__SHA256_LEN], const void *key, size_t key_len,
                      const void *msg, size_t msg_len) {
  size_t got = 0;
  /* EVP_Q_mac rejects a NULL key even with length 0; give it a valid pointer. */
  static const uint8_t empty = 0;
  EVP_MAC_CTX *ctx = sign__hmac_ctx(key, key_len);
  if (ctx) {
    if (EVP_MAC_update(ctx, msg_len ? msg : &empty, msg_len) &&
        EVP_MAC_final(ctx, out, &got, SIGN__SHA256_LEN) && got == SIGN__SHA256_LEN)
      return 0;
    return dd_err_set(DD_EINTERNAL, "HMAC-SHA256 failed in OpenSSL");
  }
  if (!EVP_Q_mac(NULL, "HMAC", NULL, "SHA256", NULL, key_len ? key : &empty, key_len,
                 msg_len ? msg : &empty, msg_len, out, SIGN__SHA256_LEN, &got) ||
      got != SIGN__SHA256_LEN)
    return dd_err_set(DD_EINTERNAL, "HMAC-SHA256 failed in OpenSSL");
  return 0;
}

int sign__sha256(uint8_t out[SIGN__SHA256_LEN], const void *msg, size_t len) {
  unsigned int got = 0;
  if (!EVP_Digest(msg, len, out, &got, EVP_sha256(), NULL) || got != SIGN__SHA256_LEN)
    return dd_err_set(DD_EINTERNAL, "SHA-256 failed in OpenSSL");
  return 0;
}
