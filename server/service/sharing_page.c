/* sharing_page.c: page tokens of the Delta Sharing list calls. A token is base64url of
 * "<kind>\x1f<scope>\x1f<position>": the kind (S shares, C schemas, T tables of a schema,
 * A all tables) and the scope (share id, schema) bind it to the list it came from, the
 * position is the lower-cased name of the last item returned; the next page starts
 * strictly after it, so items are neither skipped nor repeated across pages. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/sharing_int.h"

static const char shr_b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

int shr_page_limit(int *out, bool has, int32_t max_results) {
  if (!has) {
    *out = SHR_MAX_RESULTS;
    return 0;
  }
  if (max_results < 0 || max_results > SHR_MAX_RESULTS)
    return dd_err_set(DD_EINVAL,
                      "Acceptable values of 'maxResults' are 0 to %d, inclusive. (Default: %d)",
                      SHR_MAX_RESULTS, SHR_MAX_RESULTS);
  *out = max_results;
  return 0;
}

char *shr_page_token(char kind, const char *scope, const char *pos) {
  size_t n = 2 + strlen(scope) + 1 + strlen(pos);
  char *raw = malloc(n + 1), *out = malloc((n + 2) / 3 * 4 + 1);
  if (!raw || !out) {
    free(raw);
    free(out);
    return NULL;
  }
  snprintf(raw, n + 1, "%c\x1f%s\x1f%s", kind, scope, pos);
  const unsigned char *p = (const unsigned char *)raw;
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)p[i] << 16 | (i + 1 < n ? (unsigned)p[i + 1] << 8 : 0) |
                 (i + 2 < n ? p[i + 2] : 0);
    out[o++] = shr_b64[v >> 18 & 63];
    out[o++] = shr_b64[v >> 12 & 63];
    if (i + 1 < n) out[o++] = shr_b64[v >> 6 & 63];
    if (i + 2 < n) out[o++] = shr_b64[v & 63];
  }
  out[o] = '\0';
  free(raw);
  return out;
}

static int shr_b64_val(char c) {
  const char *p = c ? strchr(shr_b64, c) : NULL;
  return p ? (int)(p - shr_b64) : -1;
}

/* Strict unpadded base64url decoding into buf (cap bytes incl. NUL); length or -1. */
static long shr_b64_decode(char *buf, size_t cap, const char *in) {
  size_t n = strlen(in), o = 0;
  if (n % 4 == 1) return -1;
  for (size_t i = 0; i < n; i += 4) {
    size_t k = n - i < 4 ? n - i : 4;
    int v[4] = {0, 0, 0, 0};
    for (size_t j = 0; j < k; j++)
      if ((v[j] = shr_b64_val(in[i + j])) < 0) return -1;
    unsigned w = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
    for (size_t j = 0; j + 1 < k; j++) {
      if (o + 1 >= cap) return -1;
      buf[o++] = (char)(w >> (16 - 8 * j));
    }
  }
  buf[o] = '\0';
  return (long)o;
}

int shr_page_decode(char kind, const char *scope, const char *token, char *pos, size_t cap) {
  char raw[1024];
  pos[0] = '\0';
  if (!token || !*token) return 0;
  long n = shr_b64_decode(raw, sizeof raw, token);
  size_t sl = strlen(scope);
  if (n < 3 || (size_t)n != strlen(raw) || raw[0] != kind || raw[1] != '\x1f' ||
      (size_t)n < 3 + sl || memcmp(raw + 2, scope, sl) != 0 || raw[2 + sl] != '\x1f' ||
      strlen(raw + 3 + sl) >= cap || raw[3 + sl] == '\0')
    return dd_err_set(DD_EINVAL, "invalid 'nextPageToken'");
  memcpy(pos, raw + 3 + sl, strlen(raw + 3 + sl) + 1);
  return 0;
}
