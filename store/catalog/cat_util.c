/* cat_util.c: small helpers of the catalog store: name validation and folding, UUIDs,
 * clocks, and the page-token encoding (base64url of the last listed lower-case name). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/rand.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

/* ---- names ------------------------------------------------------------------------------ */

/* Length of the UTF-8 sequence starting at p (at most n bytes left) and its code point;
 * 0 when it is not a valid, shortest-form sequence. */
static size_t cat__utf8_next(const unsigned char *p, size_t n, unsigned *cp) {
  unsigned c = p[0];
  size_t len;
  unsigned min;
  if (c < 0x80) {
    *cp = c;
    return 1;
  } else if ((c & 0xE0) == 0xC0) {
    len = 2, min = 0x80, c &= 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    len = 3, min = 0x800, c &= 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    len = 4, min = 0x10000, c &= 0x07;
  } else {
    return 0;
  }
  if (len > n) return 0;
  for (size_t i = 1; i < len; i++) {
    if ((p[i] & 0xC0) != 0x80) return 0;
    c = (c << 6) | (p[i] & 0x3F);
  }
  if (c < min || c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) return 0;
  *cp = c;
  return len;
}

int cat_name_check(const char *field, const char *name, int dotted_ok) {
  size_t n = name ? strlen(name) : 0;
  if (n == 0) return dd_err_set(DD_EINVAL, "%s: must not be empty", field);
  if (n > CAT__NAME_MAX)
    return dd_err_set(DD_EINVAL, "%s: longer than %d bytes", field, CAT__NAME_MAX);
  const unsigned char *p = (const unsigned char *)name;
  for (size_t i = 0; i < n;) {
    unsigned cp;
    size_t len = cat__utf8_next(p + i, n - i, &cp);
    if (len == 0) return dd_err_set(DD_EINVAL, "%s: not valid UTF-8", field);
    if (cp < 0x20 || (cp >= 0x7F && cp <= 0x9F))
      return dd_err_set(DD_EINVAL, "%s: contains a control character", field);
    if (cp == '/') return dd_err_set(DD_EINVAL, "%s: must not contain '/'", field);
    if (cp == '.' && !dotted_ok)
      return dd_err_set(DD_EINVAL, "%s: must not contain '.'", field);
    i += len;
  }
  return 0;
}

int cat_full_name_split(const char *field, const char *full, char cat[256], char sch[256]) {
  const char *dot = full ? strchr(full, '.') : NULL;
  if (!full || !*full) return dd_err_set(DD_EINVAL, "%s: must not be empty", field);
  if (!dot || strchr(dot + 1, '.') || dot == full || !dot[1] || (size_t)(dot - full) > 255 ||
      strlen(dot + 1) > 255)
    return dd_err_set(DD_EINVAL, "%s: '%s' is not of the form catalog.schema", field, full);
  memcpy(cat, full, (size_t)(dot - full));
  cat[dot - full] = '\0';
  strcpy(sch, dot + 1);
  int rc = cat_name_check(field, cat, 0);
  if (!rc) rc = cat_name_check(field, sch, 0);
  return rc;
}

size_t cat__name_key(char buf[CAT__KEY_MAX], const char *scope, const char *name) {
  size_t n = 0;
  if (scope) {
    size_t sl = strlen(scope);
    memcpy(buf, scope, sl);
    buf[sl] = '/';
    n = sl + 1;
  }
  for (const char *p = name; *p && n < CAT__KEY_MAX - 1; p++) {
    char c = *p;
    buf[n++] = (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
  }
  buf[n] = '\0';
  return n;
}

/* ---- ids, clocks, strings ---------------------------------------------------------------- */

int64_t cat__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int cat__uuid(char out[CAT__ID_LEN + 1]) {
  unsigned char b[16];
  static const char hex[] = "0123456789abcdef";
  if (RAND_bytes(b, sizeof b) != 1) return dd_err_set(DD_EINTERNAL, "RAND_bytes failed");
  b[6] = (unsigned char)((b[6] & 0x0F) | 0x40); /* version 4 */
  b[8] = (unsigned char)((b[8] & 0x3F) | 0x80); /* RFC 4122 variant */
  size_t o = 0;
  for (int i = 0; i < 16; i++) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out[o++] = '-';
    out[o++] = hex[b[i] >> 4];
    out[o++] = hex[b[i] & 15];
  }
  out[o] = '\0';
  return 0;
}

char *cat__strdup(const char *s) { return strdup(s ? s : ""); }

int cat__str_replace(char **slot, const char *s) {
  char *copy = cat__strdup(s);
  if (!copy) return dd_err_set(DD_ENOMEM, "out of memory");
  if (*slot && *slot != protobuf_c_empty_string) free(*slot);
  *slot = copy;
  return 0;
}

/* ---- page tokens ---------------------------------------------------------------------------- */

static const char cat__b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

char *cat__page_token(const char *lname, size_t len) {
  char *out = malloc((len + 2) / 3 * 4 + 1);
  if (!out) return NULL;
  const unsigned char *p = (const unsigned char *)lname;
  size_t o = 0;
  for (size_t i = 0; i < len; i += 3) {
    unsigned v = (unsigned)p[i] << 16;
    if (i + 1 < len) v |= (unsigned)p[i + 1] << 8;
    if (i + 2 < len) v |= p[i + 2];
    out[o++] = cat__b64[(v >> 18) & 63];
    out[o++] = cat__b64[(v >> 12) & 63];
    if (i + 1 < len) out[o++] = cat__b64[(v >> 6) & 63];
    if (i + 2 < len) out[o++] = cat__b64[v & 63];
  }
  out[o] = '\0';
  return out;
}

static int cat__b64_val(char c) {
  const char *p = c ? strchr(cat__b64, c) : NULL;
  return p ? (int)(p - cat__b64) : -1;
}

/* Decodes unpadded base64url into out (cap bytes incl. NUL); -1 when malformed. */
static int cat__b64_decode(char *out, size_t cap, const char *in) {
  size_t n = strlen(in), o = 0;
  if (n % 4 == 1) return -1;
  for (size_t i = 0; i < n; i += 4) {
    int v[4] = {0, 0, 0, 0};
    size_t k = n - i < 4 ? n - i : 4;
    for (size_t j = 0; j < k; j++)
      if ((v[j] = cat__b64_val(in[i + j])) < 0) return -1;
    unsigned w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
    unsigned char bytes[3] = {(unsigned char)(w >> 16), (unsigned char)(w >> 8), (unsigned char)w};
    for (size_t j = 0; j + 1 < k; j++) {
      if (o + 1 >= cap) return -1;
      out[o++] = (char)bytes[j];
    }
    /* unused low bits of the last group must be zero (one encoding per token) */
    if (k == 2 && (v[1] & 15)) return -1;
    if (k == 3 && (v[2] & 3)) return -1;
  }
  out[o] = '\0';
  return (int)o;
}

int cat__page_args(int32_t max_results, const char *token, int *out_max,
                   char after[CAT__NAME_MAX + 1]) {
  if (max_results < 0)
    return dd_err_set(DD_EINVAL, "max_results: must not be negative (got %d)", max_results);
  *out_max = max_results == 0 ? CAT__DEFAULT_PAGE
             : max_results > CAT__MAX_PAGE ? CAT__MAX_PAGE
                                           : max_results;
  after[0] = '\0';
  if (!token || !*token) return 0;
  int n = cat__b64_decode(after, CAT__NAME_MAX + 1, token);
  if (n <= 0 || strlen(after) != (size_t)n) return dd_err_set(DD_EINVAL, "invalid page token");
  return 0;
}
