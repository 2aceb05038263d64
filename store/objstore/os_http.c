/* os_http.c: libcurl-based HTTP client of the object-store backends (see os_http.h):
 * a locked pool of easy handles (connection reuse), retries of transient failures and
 * response bodies read into memory. */
#include "store/objstore/os_http.h"

#include <curl/curl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/err.h"

#define OS__HTTP_POOL 8
#define OS__HTTP_TRIES 4

struct os__http {
  pthread_mutex_t mu;
  CURL *pool[OS__HTTP_POOL];
  int npool;
};

static pthread_once_t os__curl_once = PTHREAD_ONCE_INIT;
static int os__curl_ok;

static void os__curl_init(void) { os__curl_ok = curl_global_init(CURL_GLOBAL_DEFAULT) == 0; }

int os__http_new(os__http **out) {
  *out = NULL;
  pthread_once(&os__curl_once, os__curl_init);
  if (!os__curl_ok) return dd_err_set(DD_EINTERNAL, "libcurl failed to initialise");
  os__http *h = calloc(1, sizeof *h);
  if (!h) return dd_err_set(DD_ENOMEM, "out of memory");
  pthread_mutex_init(&h->mu, NULL);
  *out = h;
  return 0;
}

void os__http_free(os__http *h) {
  if (!h) return;
  for (int i = 0; i < h->npool; i++) curl_easy_cleanup(h->pool[i]);
  pthread_mutex_destroy(&h->mu);
  free(h);
}

static CURL *os__http_take(os__http *h) {
  CURL *c = NULL;
  pthread_mutex_lock(&h->mu);
  if (h->npool > 0) c = h->pool[--h->npool];
  pthread_mutex_unlock(&h->mu);
  if (c) curl_easy_reset(c);
  else c = curl_easy_init();
  return c;
}

static void os__http_give(os__http *h, CURL *c) {
  pthread_mutex_lock(&h->mu);
  if (h->npool < OS__HTTP_POOL) {
    h->pool[h->npool++] = c;
    c = NULL;
  }
  pthread_mutex_unlock(&h->mu);
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

/* The URL without its query string, for messages (never show a signature). */
static void os__url_bare(char *out, size_t cap, const char *url) {
  snprintf(out, cap, "%.*s", (int)strcspn(url, "?"), url);
}

static int os__attempt(CURL *c, const os__http_req *rq, const char *url, os__http_resp *out) {
  struct curl_slist *hl = NULL;
  char range[80];
  os__sink sink = {0};
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
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, os__write_cb);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
  if (strcmp(rq->method, "HEAD") == 0) {
    curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  } else if (strcmp(rq->method, "PUT") == 0) {
    curl_easy_setopt(c, CURLOPT_UPLOAD, 1L);
    curl_easy_setopt(c, CURLOPT_READFUNCTION, os__read_cb);
    curl_easy_setopt(c, CURLOPT_READDATA, &src);
    curl_easy_setopt(c, CURLOPT_INFILESIZE_LARGE, (curl_off_t)rq->body_len);
  } else if (strcmp(rq->method, "GET") != 0) {
    curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, rq->method);
  }
  CURLcode cc = curl_easy_perform(c);
  if (sink.oom) goto oom;
  if (cc != CURLE_OK) {
    char bare[300];
    os__url_bare(bare, sizeof bare, url);
    rc = dd_err_set(DD_EIO, "%s %s: %s", rq->method, bare, curl_easy_strerror(cc));
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
  goto cleanup;
oom:
  rc = dd_err_set(DD_ENOMEM, "out of memory");
cleanup:
  free(sink.p);
  curl_slist_free_all(hl);
  return rc;
}

static bool os__transient(long status) {
  return status == 500 || status == 502 || status == 503 || status == 504;
}

int os__http_do(os__http *h, const os__http_req *rq, os__http_url_fn make_url, void *ctx,
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
    CURL *c = os__http_take(h);
    if (!c) {
      free(url);
      return dd_err_set(DD_ENOMEM, "out of memory (curl handle)");
    }
    rc = os__attempt(c, rq, url, out);
    os__http_give(h, c);
    free(url);
    if (rc == DD_ENOMEM) return rc;
    if (rc == 0 && !os__transient(out->status)) return 0;
  }
  return rc; /* a transient status after the last try is returned as a response */
}

void os__http_resp_free(os__http_resp *r) {
  if (!r) return;
  free(r->body);
  memset(r, 0, sizeof *r);
}

/* ---- XML and time helpers ------------------------------------------------------------- */

static size_t os__xml_unescape(char *out, size_t cap, const char *s, size_t n) {
  static const struct { const char *e; char c; } ents[] = {
      {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
  size_t o = 0;
  for (size_t i = 0; i < n && o + 1 < cap;) {
    if (s[i] == '&') {
      size_t k;
      for (k = 0; k < sizeof ents / sizeof ents[0]; k++) {
        size_t el = strlen(ents[k].e);
        if (i + el <= n && strncmp(s + i, ents[k].e, el) == 0) {
          out[o++] = ents[k].c;
          i += el;
          break;
        }
      }
      if (k < sizeof ents / sizeof ents[0]) continue;
      if (i + 2 < n && s[i + 1] == '#') { /* &#NN; or &#xHH; (ASCII only; S3 keys) */
        char *end = NULL;
        long v = s[i + 2] == 'x' ? strtol(s + i + 3, &end, 16) : strtol(s + i + 2, &end, 10);
        if (end && *end == ';' && v > 0 && v < 128) {
          out[o++] = (char)v;
          i = (size_t)(end - s) + 1;
          continue;
        }
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

int64_t os__iso8601_ms(const char *s) {
  int y, mo, d, h, mi;
  double sec;
  if (sscanf(s, "%4d-%2d-%2dT%2d:%2d:%lf", &y, &mo, &d, &h, &mi, &sec) != 6) return -1;
  struct tm tm = {0};
  tm.tm_year = y - 1900;
  tm.tm_mon = mo - 1;
  tm.tm_mday = d;
  tm.tm_hour = h;
  tm.tm_min = mi;
  time_t t = timegm(&tm);
  if (t == (time_t)-1) return -1;
  return (int64_t)t * 1000 + (int64_t)(sec * 1000.0 + 0.5);
}
