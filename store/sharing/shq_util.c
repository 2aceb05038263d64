/* shq_util.c: the small pieces the sharing engine is built from: a growable line buffer
 * that writes compact JSON, hashes for file ids, URL decoding of log paths, base64url and
 * the protocol's timestamp and date formats. */
#include <ctype.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "common/err.h"
#include "store/sharing/shq_internal.h"

/* ======================= line buffer ======================= */

void shq__put_i64(shq_buf *b, int64_t v) {
  char tmp[24], *e = tmp + sizeof tmp, *p = e;
  uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
  do {
    *--p = (char)('0' + u % 10);
    u /= 10;
  } while (u);
  if (v < 0) *--p = '-';
  dd_buf_put(b, p, (size_t)(e - p));
}

void shq__put_kvmap(shq_buf *b, const char *packed) {
  const char *cur = packed, *k, *v;
  bool first = true;
  dd_buf_putc(b, '{');
  while (cur && dl_kv_next(&cur, &k, &v)) {
    if (!first) dd_buf_putc(b, ',');
    first = false;
    shq__put_jstrz(b, k);
    dd_buf_putc(b, ':');
    if (v) shq__put_jstrz(b, v);
    else dd_buf_puts(b, "null");
  }
  dd_buf_putc(b, '}');
}

static int dump_cb(const char *buf, size_t n, void *data) {
  dd_buf_put(data, buf, n);
  return 0;
}

void shq__put_json(shq_buf *b, const json_t *v) {
  if (json_dump_callback(v, dump_cb, b, JSON_COMPACT | JSON_ENCODE_ANY)) b->oom = true;
}

int shq__emit(shq_buf *b, shq_line_fn fn, void *ctx) {
  if (b->oom) return dd_err_set(DD_ENOMEM, "out of memory building a response line");
  int rc = fn(ctx, b->p ? b->p : "", b->len);
  b->len = 0;
  return rc;
}

int shq__out_emit(shq_out *o) {
  shq_buf *b = &o->b;
  if (!o->keep_lines) return shq__emit(b, o->fn, o->ctx);
  if (b->oom) return dd_err_set(DD_ENOMEM, "out of memory building a response line");
  int rc = o->fn(o->ctx, b->p + o->line_start, b->len - o->line_start);
  if (rc) {
    b->len = o->line_start;
    if (b->p) b->p[b->len] = '\0';
    return rc;
  }
  dd_buf_putc(b, '\0');
  o->line_start = b->len;
  return b->oom ? dd_err_set(DD_ENOMEM, "out of memory building a response line") : 0;
}

/* ======================= hashes, paths, base64url ======================= */

/* The MD5 implementation is fetched once; each thread keeps one digest context. */
static EVP_MD *md5_impl;
static pthread_once_t md5_once = PTHREAD_ONCE_INIT;
static void md5_fetch(void) { md5_impl = EVP_MD_fetch(NULL, "MD5", NULL); }

static _Thread_local EVP_MD_CTX *md5_ctx;
static pthread_key_t md5_key;
static pthread_once_t md5_key_once = PTHREAD_ONCE_INIT;
static void md5_ctx_free(void *c) { EVP_MD_CTX_free(c); }
static void md5_key_make(void) { pthread_key_create(&md5_key, md5_ctx_free); }

void shq__hex16(const unsigned char md[16], char out[33]) {
  static const char hex[] = "0123456789abcdef";
  for (unsigned i = 0; i < 16; i++) {
    out[2 * i] = hex[md[i] >> 4];
    out[2 * i + 1] = hex[md[i] & 15];
  }
  out[32] = 0;
}

void shq__md5_hex(const char *s, size_t n, char out[33]) {
  unsigned char md[16];
  shq__md5(s, n, md);
  shq__hex16(md, out);
}

void shq__md5(const char *s, size_t n, unsigned char out[16]) {
  unsigned char md[EVP_MAX_MD_SIZE] = {0};
  unsigned int len = 0;
  pthread_once(&md5_once, md5_fetch);
  if (!md5_ctx) {
    pthread_once(&md5_key_once, md5_key_make);
    if ((md5_ctx = EVP_MD_CTX_new())) pthread_setspecific(md5_key, md5_ctx);
  }
  if (!md5_impl || !md5_ctx || !EVP_DigestInit_ex2(md5_ctx, md5_impl, NULL) ||
      !EVP_DigestUpdate(md5_ctx, s, n) || !EVP_DigestFinal_ex(md5_ctx, md, &len))
    EVP_Digest(s, n, md, &len, EVP_md5(), NULL);
  memcpy(out, md, 16);
}

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = tolower(c);
  return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

char *shq__url_decode(const char *s) {
  size_t n = strlen(s);
  char *o = malloc(n + 1), *w = o;
  if (!o) return NULL;
  for (size_t i = 0; i < n; i++) {
    int h, l;
    if (s[i] == '%' && i + 2 < n && (h = hexval((unsigned char)s[i + 1])) >= 0 &&
        (l = hexval((unsigned char)s[i + 2])) >= 0) {
      *w++ = (char)(h * 16 + l);
      i += 2;
    } else {
      *w++ = s[i];
    }
  }
  *w = 0;
  return o;
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *shq__b64url_enc(const uint8_t *d, size_t n) {
  char *o = malloc(n / 3 * 4 + 5), *w = o;
  if (!o) return NULL;
  size_t i = 0;
  for (; i + 2 < n; i += 3) {
    uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8 | d[i + 2];
    *w++ = b64[v >> 18];
    *w++ = b64[(v >> 12) & 63];
    *w++ = b64[(v >> 6) & 63];
    *w++ = b64[v & 63];
  }
  if (n - i == 1) {
    uint32_t v = (uint32_t)d[i] << 16;
    *w++ = b64[v >> 18];
    *w++ = b64[(v >> 12) & 63];
  } else if (n - i == 2) {
    uint32_t v = (uint32_t)d[i] << 16 | (uint32_t)d[i + 1] << 8;
    *w++ = b64[v >> 18];
    *w++ = b64[(v >> 12) & 63];
    *w++ = b64[(v >> 6) & 63];
  }
  *w = 0;
  return o;
}

int shq__b64url_dec(const char *s, uint8_t **out, size_t *out_n) {
  size_t n = strlen(s);
  if (n % 4 == 1) return DD_EINVAL;
  uint8_t *o = malloc(n * 3 / 4 + 3);
  if (!o) return DD_ENOMEM;
  size_t w = 0;
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < n; i++) {
    const char *p = s[i] ? strchr(b64, s[i]) : NULL;
    if (!p) {
      free(o);
      return DD_EINVAL;
    }
    acc = acc << 6 | (uint32_t)(p - b64);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      o[w++] = (uint8_t)(acc >> bits);
    }
  }
  *out = o;
  *out_n = w;
  return 0;
}

/* ======================= dates and timestamps ======================= */

static int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

/* Reads 1..maxd digits; returns count read or 0. */
static int digits(const char *s, size_t n, size_t *pos, int maxd, int64_t *out) {
  int k = 0;
  int64_t v = 0;
  while (*pos < n && k < maxd && isdigit((unsigned char)s[*pos])) {
    v = v * 10 + (s[*pos] - '0');
    (*pos)++;
    k++;
  }
  *out = v;
  return k;
}

static bool valid_ymd(int64_t y, int64_t m, int64_t d) {
  static const int mdays[] = {31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1 || d > mdays[m - 1]) return false;
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return !(m == 2 && d == 29 && !leap);
}

static int parse_ymd(const char *s, size_t n, size_t *pos, int64_t *days) {
  int64_t y, m, d;
  if (digits(s, n, pos, 4, &y) != 4 || *pos >= n || s[(*pos)++] != '-') return -1;
  if (!digits(s, n, pos, 2, &m) || *pos >= n || s[(*pos)++] != '-') return -1;
  if (!digits(s, n, pos, 2, &d) || !valid_ymd(y, m, d)) return -1;
  *days = days_from_civil(y, (int)m, (int)d);
  return 0;
}

int shq__parse_date(const char *s, size_t n, int64_t *out_days) {
  size_t pos = 0;
  if (parse_ymd(s, n, &pos, out_days) || pos != n) return -1;
  return 0;
}

int shq__parse_ts_us(const char *s, size_t n, int64_t *out_us) {
  size_t pos = 0;
  int64_t days, hh = 0, mm = 0, ss = 0, frac = 0, off = 0;
  if (parse_ymd(s, n, &pos, &days)) return -1;
  if (pos < n) {
    bool iso = s[pos] == 'T';
    if (s[pos] != 'T' && s[pos] != ' ') return -1;
    pos++;
    if (!digits(s, n, &pos, 2, &hh) || pos >= n || s[pos++] != ':') return -1;
    if (digits(s, n, &pos, 2, &mm) != 2) return -1;
    if (pos < n && s[pos] == ':') {
      pos++;
      if (digits(s, n, &pos, 2, &ss) != 2) return -1;
    } else if (!iso) {
      return -1;
    }
    if (pos < n && s[pos] == '.') {
      pos++;
      int k = 0;
      while (pos < n && isdigit((unsigned char)s[pos])) {
        if (k < 6) frac = frac * 10 + (s[pos] - '0');
        k++;
        pos++;
      }
      if (!k) return -1;
      for (; k < 6; k++) frac *= 10;
    }
    if (hh > 23 || mm > 59 || ss > 59) return -1;
    if (pos < n && iso) {
      if (s[pos] == 'Z' || s[pos] == 'z') {
        pos++;
      } else if (s[pos] == '+' || s[pos] == '-') {
        int sign = s[pos++] == '-' ? -1 : 1;
        int64_t oh, om = 0;
        if (digits(s, n, &pos, 2, &oh) != 2) return -1;
        if (pos < n && s[pos] == ':') pos++;
        if (pos < n && digits(s, n, &pos, 2, &om) != 2) return -1;
        if (oh > 18 || om > 59) return -1;
        off = sign * (oh * 3600 + om * 60);
      }
    }
  }
  if (pos != n) return -1;
  *out_us = ((days * 86400 + hh * 3600 + mm * 60 + ss - off) * 1000000) + frac;
  return 0;
}

int shq_parse_timestamp(const char *s, int64_t *out_ms) {
  int64_t us;
  if (!s || shq__parse_ts_us(s, strlen(s), &us) || !strchr(s, ':'))
    return dd_err_set(DD_EINVAL, "Invalid timestamp: '%s' is not in the timestamp format "
                      "(e.g. 2022-01-01T00:00:00Z)", s ? s : "(null)");
  *out_ms = us >= 0 ? us / 1000 : -((-us + 999) / 1000);
  return 0;
}

int shq__param_rc(int rc) {
  if (rc != DD_ERANGE) return rc;
  char msg[1024];
  snprintf(msg, sizeof msg, "%s", dd_err_msg());
  return dd_err_set(DD_EINVAL, "%s", msg);
}
