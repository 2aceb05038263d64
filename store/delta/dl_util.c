/* dl_util.c: small building blocks of the delta module: a chunked arena, a growable
 * buffer, hashing, URL coding of paths, packed string maps, JSON field helpers, UUIDs. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <openssl/rand.h>

#include "common/err.h"
#include "store/delta/dl_internal.h"

/* ======================= arena ======================= */

struct dl__chunk {
  dl__chunk *next;
  size_t cap;
  _Alignas(8) unsigned char data[];
};

void *dl__arena_reserve(dl__arena *a, size_t n) {
  dl__chunk *c = malloc(sizeof *c + n);
  if (!c) return NULL;
  c->next = a->head;
  c->cap = n;
  a->head = c;
  a->used = 0;
  a->cap = n;
  a->bytes += sizeof *c + n;
  return c->data;
}

/* n bytes at the next multiple of align (1 or 8) in the head chunk, or a new chunk. */
static void *bump(dl__arena *a, size_t n, size_t align) {
  size_t at = a->head ? (a->used + align - 1) & ~(align - 1) : 0;
  if (!a->head || at > a->cap || n > a->cap - at) {
    if (!dl__arena_reserve(a, n > 60000 ? n : 65536 - sizeof(dl__chunk))) return NULL;
    at = 0;
  }
  void *p = a->head->data + at;
  a->used = at + n;
  return p;
}

void *dl__arena_alloc(dl__arena *a, size_t n) { return bump(a, n, 8); }

char *dl__arena_strndup(dl__arena *a, const char *s, size_t n) {
  /* strings pack unaligned: a million paths and stats texts save 3-4 bytes each */
  char *p = bump(a, n + 1, 1);
  if (!p) return NULL;
  memcpy(p, s, n);
  p[n] = 0;
  return p;
}

char *dl__arena_strdup(dl__arena *a, const char *s) {
  return s ? dl__arena_strndup(a, s, strlen(s)) : NULL;
}

void dl__arena_free(dl__arena *a) {
  dl__chunk *c = a->head;
  while (c) {
    dl__chunk *n = c->next;
    free(c);
    c = n;
  }
  memset(a, 0, sizeof *a);
}

void dl__arena_splice(dl__arena *dst, dl__arena *src) {
  if (!src->head) return;
  if (!dst->head) {
    *dst = *src;
  } else {
    dl__chunk *tail = src->head;
    while (tail->next) tail = tail->next;
    tail->next = dst->head->next; /* behind dst's head, which stays the one bumped */
    dst->head->next = src->head;
    dst->bytes += src->bytes;
  }
  memset(src, 0, sizeof *src);
}

int dl__madvise_inner(void *p, size_t n, size_t align, int advice) {
  uintptr_t s = ((uintptr_t)p + align - 1) & ~(align - 1), e = ((uintptr_t)p + n) & ~(align - 1);
  return p && e > s ? madvise((void *)s, e - s, advice) : 0;
}

/* ======================= hashing, URL coding ======================= */

uint64_t dl__hash(const void *p, size_t n, uint64_t seed) {
  /* Eight bytes per step (multiply, rotate), then a final avalanche (the splitmix64
   * finaliser): in-memory tables only, never stored, so the function may change. */
  const unsigned char *s = p;
  uint64_t h = (seed ^ 0x9e3779b97f4a7c15ULL) + n * 0xbf58476d1ce4e5b9ULL;
  for (; n >= 8; s += 8, n -= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h ^= w * 0x94d049bb133111ebULL;
    h = (h << 29 | h >> 35) * 0x9e3779b97f4a7c15ULL;
  }
  uint64_t t = 0;
  for (size_t i = 0; i < n; i++) t |= (uint64_t)s[i] << (8 * i);
  h ^= t * 0x94d049bb133111ebULL;
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

static int hexval(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool dl_rel_path_clean(const char *p, size_t len) {
  if (!len || p[0] == '/') return false;
  for (const char *seg = p, *end = p + len;;) {
    size_t n = 0;
    while (seg + n < end && seg[n] != '/') n++;
    if (n == 0 || (n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.')) return false;
    for (size_t i = 0; i < n; i++) {
      unsigned char c = (unsigned char)seg[i];
      if (c < 0x20 || c == 0x7f || c == '\\') return false;
    }
    if (seg + n == end) return true;
    seg += n + 1;
  }
}

bool dl__url_decode(const char *s, char *out) {
  bool any = false;
  while (*s) {
    int hi, lo;
    if (s[0] == '%' && (hi = hexval(s[1])) >= 0 && (lo = hexval(s[2])) >= 0) {
      *out++ = (char)(hi * 16 + lo);
      s += 3;
      any = true;
    } else {
      *out++ = *s++;
    }
  }
  *out = 0;
  return any;
}

void dl__url_encode_path(dd_buf *b, const char *s) {
  static const char hex[] = "0123456789ABCDEF";
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    bool keep = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                strchr("-._~/!$&'()*+,;=:@", c);
    if (keep && c) dd_buf_putc(b, (char)c);
    else {
      char e[3] = {'%', hex[c >> 4], hex[c & 15]};
      dd_buf_put(b, e, 3);
    }
  }
}

/* ======================= packed maps ======================= */

int dl_kv_next(const char **cursor, const char **key, const char **value) {
  const char *p = *cursor;
  if (!p || !*p) return 0;
  *key = p;
  p += strlen(p) + 1;
  *value = ((unsigned char)p[0] == 0xFF && p[1] == 0) ? NULL : p;
  p += strlen(p) + 1;
  *cursor = p;
  return 1;
}

int dl_kv_get(const char *packed, const char *key, const char **value) {
  const char *k, *v, *c = packed;
  while (dl_kv_next(&c, &k, &v)) {
    if (!strcmp(k, key)) {
      *value = v;
      return 1;
    }
  }
  *value = NULL;
  return 0;
}

size_t dl__kv_size(const char *packed) {
  if (!packed) return 0;
  const char *p = packed;
  while (*p) {
    p += strlen(p) + 1;
    p += strlen(p) + 1;
  }
  return (size_t)(p - packed) + 1;
}

int dl_kv_pack(char **out, const char *const *keys, const char *const *values, size_t n) {
  dd_buf b = {0};
  for (size_t i = 0; i < n; i++) {
    dd_buf_put(&b, keys[i], strlen(keys[i]) + 1);
    if (values[i]) dd_buf_put(&b, values[i], strlen(values[i]) + 1);
    else dd_buf_put(&b, "\xff", 2);
  }
  dd_buf_putc(&b, 0);
  if (b.oom) {
    dd_buf_free(&b);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  *out = b.p;
  return 0;
}

const char *dl__kv_from_json(dl__arena *a, const json_t *obj) {
  size_t need = 1;
  const char *k;
  json_t *v;
  if (json_is_object(obj)) {
    json_object_foreach((json_t *)obj, k, v) {
      need += strlen(k) + 1;
      need += json_is_string(v) ? json_string_length(v) + 1 : 2;
    }
  }
  char *p = dl__arena_alloc(a, need), *w = p;
  if (!p) return NULL;
  if (json_is_object(obj)) {
    json_object_foreach((json_t *)obj, k, v) {
      size_t kl = strlen(k) + 1;
      memcpy(w, k, kl);
      w += kl;
      if (json_is_string(v)) {
        /* values with an embedded NUL are cut there: maps hold C strings */
        size_t vl = strlen(json_string_value(v)) + 1;
        memcpy(w, json_string_value(v), vl);
        w += vl;
      } else {
        *w++ = DL__NULL_BYTE;
        *w++ = 0;
      }
    }
  }
  *w = 0;
  return p;
}

json_t *dl__kv_to_json(const char *packed) {
  json_t *o = json_object();
  const char *k, *v, *c = packed;
  while (o && dl_kv_next(&c, &k, &v)) json_object_set_new(o, k, v ? json_string(v) : json_null());
  return o;
}

/* ======================= JSON, time, names ======================= */

const char *dl__json_str(const json_t *o, const char *key) {
  json_t *v = json_object_get(o, key);
  return json_is_string(v) ? json_string_value(v) : NULL;
}

int64_t dl__json_int(const json_t *o, const char *key, int64_t dflt) {
  json_t *v = json_object_get(o, key);
  if (json_is_integer(v)) return (int64_t)json_integer_value(v);
  if (json_is_real(v)) {
    double d = json_real_value(v);
    return (d >= -9.2e18 && d <= 9.2e18) ? (int64_t)d : dflt;
  }
  if (json_is_string(v)) {
    char *end;
    errno = 0;
    long long x = strtoll(json_string_value(v), &end, 10);
    if (!errno && *end == 0 && end != json_string_value(v)) return x;
  }
  return dflt;
}

int64_t dl__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

char *dl__version_path(int64_t v, const char *suffix) {
  char *p = NULL;
  if (asprintf(&p, DL__LOG "/%020lld%s", (long long)v, suffix) < 0) return NULL;
  return p;
}

void dl_uuid(char out[37]) { dl__uuid(out); }

void dl__uuid(char out[37]) {
  unsigned char b[16];
  if (RAND_bytes(b, sizeof b) != 1) {
    for (size_t i = 0; i < sizeof b; i++) b[i] = (unsigned char)rand();
  }
  b[6] = (unsigned char)((b[6] & 0x0F) | 0x40);
  b[8] = (unsigned char)((b[8] & 0x3F) | 0x80);
  snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
           b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
           b[14], b[15]);
}
