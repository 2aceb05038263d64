/* os_http.c: libcurl-based HTTP client of the object-store backends (see os_http.h):
 * a process-wide locked pool of easy handles (connection reuse), retries of transient failures and
 * response bodies read into memory. */
#include "store/objstore/os_http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/err.h"

#define OS__HTTP_POOL 16
#define OS__HTTP_TRIES 4

/* One pool for the process: stores are opened per call (a shared table per query), and
 * each curl handle keeps its connections, so a shared pool is what lets the next query
 * reuse the TCP/TLS connection to the same endpoint. */
static pthread_mutex_t os__pool_mu = PTHREAD_MUTEX_INITIALIZER;
static CURL *os__pool[OS__HTTP_POOL];
static int os__npool;

static pthread_once_t os__curl_once = PTHREAD_ONCE_INIT;
static int os__curl_ok;

static void os__curl_init(void) { os__curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == 0; }

int os__http_init(void) {
  pthread_once(&os__curl_once, os__curl_init);
  return os__curl_ok ? 0 : dd_err_set(DD_EINTERNAL, "libcurl failed to initialise");
}

static CURL *os__http_take(void) {
  CURL *c = NULL;
  pthread_mutex_lock(&os__pool_mu);
  if (os__npool > 0) c = os__pool[--os__npool];
  pthread_mutex_unlock(&os__pool_mu);
  if (c) curl_easy_reset(c); /* options go, the connection cache stays */
  else c = curl_easy_init();
  return c;
}

static void os__http_give(CURL *c) {
  pthread_mutex_lock(&os__pool_mu);
  if (os__npool < OS__HTTP_POOL) {
    os__pool[os__npool++] = c;
    c = NULL;
  }
  pthread_mutex_unlock(&os__pool_mu);
  if (c) curl_easy_cleanup(c);
}

/* ---- one attempt ---------------------------------------------------------------------- */

typedef struct os__sink {
  uint8_t *p;
  size_t len, cap;
  bool oom;
} os__sink;

static size_t os__write_cb(char *data, size_t sz, size_t n, void *ud) {
  os__sink *s = ud;
  size_t add = sz * n;
  if (s->len + add + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 4096;
    while (cap < s->len + add + 1) cap *= 2;
    uint8_t *np = realloc(s->p, cap);
    if (!np) {
      s->oom = true;
      return 0;
    }
    s->p = np;
    s->cap = cap;
  }
  memcpy(s->p + s->len, data, add);
  s->len += add;
  return add;
}

/* Header lines: a new status line ("HTTP/...", e.g. after "100 Continue") starts over, so
 * only the final response's headers are kept. */
static size_t os__header_cb(char *data, size_t sz, size_t n, void *ud) {
  os__sink *s = ud;
  size_t add = sz * n;
  if (add >= 5 && strncmp(data, "HTTP/", 5) == 0) s->len = 0;
  return os__write_cb(data, sz, n, ud) == add ? add : 0;
}

typedef struct os__src {
  const uint8_t *p;
  size_t len, off;
} os__src;

static size_t os__read_cb(char *buf, size_t sz, size_t n, void *ud) {
  os__src *s = ud;
  size_t take = sz * n;
  if (take > s->len - s->off) take = s->len - s->off;
  memcpy(buf, s->p + s->off, take);
  s->off += take;
  return take;
}

/* The CA bundle (os_set_ca_file): set once at start, before any request. */
static char *os__ca_file;

int os_set_ca_file(const char *path) {
  free(os__ca_file);
  os__ca_file = NULL;
  if (!path || !*path) return 0;
  FILE *f = fopen(path, "r");
  if (!f) return dd_err_set(DD_ENOTFOUND, "storage CA file '%s' cannot be read", path);
  fclose(f);
  return (os__ca_file = strdup(path)) ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* The URL without its query string, for messages (never show a signature). */
static void os__url_bare(char *out, size_t cap, const char *url) {
  snprintf(out, cap, "%.*s", (int)strcspn(url, "?"), url);
}

static int os__attempt(CURL *c, const os__http_req *rq, const char *url, os__http_resp *out) {
  struct curl_slist *hl = NULL;
  char range[80];
  os__sink sink = {0}, hdrs = {0};
  os__src src = {rq->body, rq->body_len, 0};
  int rc = 0;
  for (const char *const *hp = rq->headers; hp && *hp; hp++) {
    struct curl_slist *n = curl_slist_append(hl, *hp);
    if (!n) goto oom;
    hl = n;
  }
  if (rq->range_len > 0) {
    snprintf(range, sizeof range, "Range: bytes=%llu-%llu", (unsigned long long)rq->range_off,
             (unsigned long long)(rq->range_off + rq->range_len - 1));
    struct curl_slist *n = curl_slist_append(hl, range);
    if (!n) goto oom;
    hl = n;
  }
  curl_easy_setopt(c, CURLOPT_URL, url);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L); /* abort a transfer stalled 60 s */
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(c, CURLOPT_FILETIME, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, hl);
  if (os__ca_file) curl_easy_setopt(c, CURLOPT_CAINFO, os__ca_file);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, os__write_cb);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, os__header_cb);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &hdrs);
  if (strcmp(rq->method, "HEAD") == 0) {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (strcmp(rq->method, "PUT") == 0) {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, os__read_cb);
    curl_easy_setopt(c, CURLOPT_READDATA, &src);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)rq->body_len);
  } else if (strcmp(rq->method, "POST") == 0) {
    curl_easy_setopt(c, CURLOPT_POST, 1L);
    curl_easy_setopt(c, CURLOPT_POSTFIELDS, rq->body ? rq->body : "");
    curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)rq->body_len);
  } else if (strcmp(rq->method, "GET") != 0) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
  }
  CURLcode cc = curl_easy_perform(c);
  if (sink.oom || hdrs.oom) goto oom;
  if (cc != CURLE_OK) {
    char bare[300];
    os__url_bare(bare, sizeof bare, url);
    rc = dd_err_set(DD_EIO, "%s %s: %s", rq->method, bare, curl_easy_strerror(cc));
    out->timed_out = cc == CURLE_OPERATION_TIMEDOUT;
    goto cleanup;
  }
  curl_off_t cl = -1;
  curl_off_t ft = -1;
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &out->status);
  curl_easy_getinfo(c, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &cl);
  curl_easy_getinfo(c, CURLINFO_FILETIME_T, &ft);
  out->content_length = cl;
  out->mtime_ms = ft >= 0 ? (int64_t)ft * 1000 : -1;
  if (!sink.p && !(sink.p = malloc(1))) goto oom;
  sink.p[sink.len] = 0;
  out->body = sink.p;
  out->len = sink.len;
  sink.p = NULL;
  if (!hdrs.p && !(hdrs.p = malloc(1))) goto oom;
  hdrs.p[hdrs.len] = 0;
  out->headers = (char *)hdrs.p;
  hdrs.p = NULL;
  goto cleanup;
oom:
  rc = dd_err_set(DD_ENOMEM, "out of memory");
cleanup:
  free(sink.p);
  free(hdrs.p);
  curl_slist_free_all(hl);
  return rc;
}

static bool os__transient(long status) {
  return status == 500 || status == 502 || status == 503 || status == 504;
}

/* HTTP requests sent (every attempt) and body bytes received and sent, for the process. */
static atomic_uint_fast64_t os__n_requests, os__n_bytes_in, os__n_bytes_out;

void os_http_stats_get(os_http_stats *out) {
  out->requests = atomic_load_explicit(&os__n_requests, memory_order_relaxed);
  out->bytes_in = atomic_load_explicit(&os__n_bytes_in, memory_order_relaxed);
  out->bytes_out = atomic_load_explicit(&os__n_bytes_out, memory_order_relaxed);
}

int os__http_do(const os__http_req *rq, os__http_url_fn make_url, void *ctx,
                os__http_resp *out) {
  memset(out, 0, sizeof *out);
  int rc = 0;
  for (int attempt = 0; attempt < OS__HTTP_TRIES; attempt++) {
    if (attempt > 0) {
      struct timespec ts = {0, 50000000L << (2 * (attempt - 1))}; /* 50, 200, 800 ms */
      nanosleep(&ts, NULL);
    }
    os__http_resp_free(out);
    char *url = NULL;
    if ((rc = make_url(ctx, &url))) return rc;
    CURL *c = os__http_take();
    if (!c) {
      free(url);
      return dd_err_set(DD_ENOMEM, "out of memory (curl handle)");
    }
    rc = os__attempt(c, rq, url, out);
    os__http_give(c);
    atomic_fetch_add_explicit(&os__n_requests, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&os__n_bytes_in, out->len, memory_order_relaxed);
    atomic_fetch_add_explicit(&os__n_bytes_out, rq->body_len, memory_order_relaxed);
    free(url);
    if (rc == DD_ENOMEM) return rc;
    if (rc && out->timed_out) return rc; /* a stalled store: waiting again would only stall */
    if (rc == 0 && !os__transient(out->status)) return 0;
  }
  return rc; /* a transient status after the last try is returned as a response */
}

int os__http_range_copy(const os__http_resp *r, uint64_t offset, size_t len, uint8_t *out,
                        const char *what, const char *name) {
  if (r->status != 200 && r->status != 206 && r->status != 416) return 1;
  uint64_t skip = r->status == 200 ? offset : 0;
  if (r->status == 416 || r->len < skip + len)
    return dd_err_set(DD_ECORRUPT, "%s '%s' is shorter than %llu bytes", what, name,
                      (unsigned long long)(offset + len));
  memcpy(out, r->body + skip, len);
  return 0;
}

void os__http_resp_free(os__http_resp *r) {
  if (!r) return;
  free(r->body);
  free(r->headers);
  memset(r, 0, sizeof *r);
}

bool os__http_header(const os__http_resp *r, const char *name, char *out, size_t cap) {
  size_t nl = strlen(name);
  for (const char *p = r->headers; p && *p;) {
    const char *eol = strchr(p, '\n');
    size_t ll = eol ? (size_t)(eol - p) : strlen(p);
    if (ll > nl && p[nl] == ':' && strncasecmp(p, name, nl) == 0) {
      const char *v = p + nl + 1, *e = p + ll;
      while (v < e && (*v == ' ' || *v == '\t')) v++;
      while (e > v && (e[-1] == '\r' || e[-1] == ' ' || e[-1] == '\t')) e--;
      snprintf(out, cap, "%.*s", (int)(e - v), v);
      return true;
    }
    p = eol ? eol + 1 : p + ll;
  }
  return false;
}

/* ---- XML and time helpers ------------------------------------------------------------- */

/* Code point v as UTF-8 into out if all its bytes fit in room; returns the bytes written
 * (0: does not fit). v is a character XML allows (checked by the caller). */
static size_t os__utf8_put(char *out, size_t room, unsigned long v) {
  unsigned char b[4];
  size_t n;
  if (v < 0x80) {
    b[0] = (unsigned char)v;
    n = 1;
  } else if (v < 0x800) {
    b[0] = (unsigned char)(0xC0 | (v >> 6));
    b[1] = (unsigned char)(0x80 | (v & 0x3F));
    n = 2;
  } else if (v < 0x10000) {
    b[0] = (unsigned char)(0xE0 | (v >> 12));
    b[1] = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
    b[2] = (unsigned char)(0x80 | (v & 0x3F));
    n = 3;
  } else {
    b[0] = (unsigned char)(0xF0 | (v >> 18));
    b[1] = (unsigned char)(0x80 | ((v >> 12) & 0x3F));
    b[2] = (unsigned char)(0x80 | ((v >> 6) & 0x3F));
    b[3] = (unsigned char)(0x80 | (v & 0x3F));
    n = 4;
  }
  if (n > room) return 0;
  memcpy(out, b, n);
  return n;
}

/* A character reference "&#NN;" or "&#xHH;" at s (n bytes left): its code point in *v and
 * its length, or 0 when it is not one or names a character XML 1.0 does not allow. */
static size_t os__xml_charref(const char *s, size_t n, unsigned long *v) {
  size_t i = 2;
  int hex = 0;
  if (n < 4 || s[0] != '&' || s[1] != '#') return 0;
  if (s[2] == 'x') {
    hex = 1;
    i = 3;
  }
  size_t start = i;
  *v = 0;
  for (; i < n && i - start < 8; i++) {
    char c = s[i];
    int d = c >= '0' && c <= '9' ? c - '0'
            : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10
            : hex && c >= 'A' && c <= 'F' ? c - 'A' + 10
            : -1;
    if (d < 0) break;
    *v = *v * (hex ? 16 : 10) + (unsigned long)d;
  }
  if (i == start || i >= n || s[i] != ';') return 0;
  bool ok = *v == 0x9 || *v == 0xA || *v == 0xD || (*v >= 0x20 && *v <= 0xD7FF) ||
            (*v >= 0xE000 && *v <= 0xFFFD) || (*v >= 0x10000 && *v <= 0x10FFFF);
  return ok ? i + 1 : 0;
}

/* Decodes the n bytes at s into out (cap bytes, always NUL-terminated when cap > 0): the
 * five predefined entities and character references; anything else is copied as is. A
 * character that does not fit whole ends the output. */
static size_t os__xml_unescape(char *out, size_t cap, const char *s, size_t n) {
  static const struct { const char *e; char c; } ents[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  size_t o = 0;
  if (cap == 0) return 0;
  for (size_t i = 0; i < n && o + 1 < cap;) {
    if (s[i] == '&') {
      size_t k, el = 0;
      for (k = 0; k < sizeof ents / sizeof ents[0]; k++) {
        el = strlen(ents[k].e);
        if (i + el <= n && strncmp(s + i, ents[k].e, el) == 0) break;
      }
      if (k < sizeof ents / sizeof ents[0]) {
        out[o++] = ents[k].c;
        i += el;
        continue;
      }
      unsigned long v;
      size_t rl = os__xml_charref(s + i, n - i, &v);
      if (rl) {
        size_t w = os__utf8_put(out + o, cap - 1 - o, v);
        if (w == 0) break;
        o += w;
        i += rl;
        continue;
      }
    }
    out[o++] = s[i++];
  }
  out[o] = 0;
  return o;
}

const char *os__xml_text(const char *xml, const char *tag, char *out, size_t cap) {
  char open[64], close[64];
  snprintf(open, sizeof open, "<%s>", tag);
  snprintf(close, sizeof close, "</%s>", tag);
  const char *a = strstr(xml, open);
  if (!a) return NULL;
  a += strlen(open);
  const char *b = strstr(a, close);
  if (!b) return NULL;
  os__xml_unescape(out, cap, a, (size_t)(b - a));
  return b + strlen(close);
}

int64_t os__http_date_ms(const char *s) {
  time_t t = curl_getdate(s, NULL);
  return t < 0 ? -1 : (int64_t)t * 1000; /* before 1970 (curl gives those too): unknown */
}

/* Reads exactly n digits at *p into *v and advances *p; false when they are not there. */
static bool os__digits(const char **p, int n, int *v) {
  *v = 0;
  for (int i = 0; i < n; i++) {
    char c = (*p)[i];
    if (c < '0' || c > '9') return false;
    *v = *v * 10 + (c - '0');
  }
  *p += n;
  return true;
}

/* Days from 1970-01-01 to the proleptic Gregorian date y-m-d (civil-from-days inverted:
 * years counted from March so the leap day ends the year). */
static int64_t os__days_from_civil(int y, int m, int d) {
  int64_t yy = m <= 2 ? y - 1 : y;
  int64_t era = (yy >= 0 ? yy : yy - 399) / 400;
  int64_t yoe = yy - era * 400;
  int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static int os__month_days(int y, int m) {
  static const int md[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  return m == 2 && leap ? 29 : md[m - 1];
}

/* YYYY-MM-DDTHH:MM:SS[.fraction][Z|+HH:MM|-HH:MM] (no zone: UTC); fields range-checked,
 * the fraction truncated to milliseconds. Times before 1970 are refused (-1). */
int64_t os__iso8601_ms(const char *s) {
  int y, mo, d, h, mi, sec, ms = 0, oh = 0, om = 0, sign = 0;
  const char *p = s;
  if (!os__digits(&p, 4, &y) || *p++ != '-' || !os__digits(&p, 2, &mo) || *p++ != '-' ||
      !os__digits(&p, 2, &d) || (*p != 'T' && *p != 't') || !(++p, os__digits(&p, 2, &h)) ||
      *p++ != ':' || !os__digits(&p, 2, &mi) || *p++ != ':' || !os__digits(&p, 2, &sec))
    return -1;
  if (*p == '.') { /* "5" is 500 ms, "123999" is 123 ms */
    p++;
    int nd = 0;
    for (; *p >= '0' && *p <= '9'; p++, nd++)
      if (nd < 3) ms = ms * 10 + (*p - '0');
    if (nd == 0) return -1;
    for (; nd < 3; nd++) ms *= 10;
  }
  if (*p == 'Z' || *p == 'z') {
    p++;
  } else if (*p == '+' || *p == '-') {
    sign = *p++ == '+' ? 1 : -1;
    if (!os__digits(&p, 2, &oh) || *p++ != ':' || !os__digits(&p, 2, &om) || oh > 23 || om > 59)
      return -1;
  }
  if (*p != '\0') return -1;
  if (y < 1970 || mo < 1 || mo > 12 || d < 1 || d > os__month_days(y, mo) || h > 23 || mi > 59 ||
      sec > 60)
    return -1;
  int64_t t = os__days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec -
              sign * (oh * 3600 + om * 60);
  return t < 0 ? -1 : t * 1000 + ms;
}

/* ---- keys ------------------------------------------------------------------------------- */

bool os__key_under(const char *key, const char *prefix) {
  size_t n = strlen(prefix);
  return n == 0 || (strncmp(key, prefix, n) == 0 && (key[n] == '/' || key[n] == '\0'));
}

bool os__rel_has_dotdot(const char *rel) {
  for (const char *seg = rel; *seg;) {
    size_t len = strcspn(seg, "/\\");
    if (len == 2 && seg[0] == '.' && seg[1] == '.') return true;
    seg += len;
    if (*seg) seg++;
  }
  return false;
}
