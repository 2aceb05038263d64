/* fuzz_native.c: the request parsing of the native REST adapters, which every client
 * reaches before any handler runs. The first byte picks the part:
 *   0 the signed-file server's Range header against a file size (next 8 bytes),
 *   1 Delta Sharing path splitting under <base>/shares, then each segment as maxResults,
 *   2 Lance route lookup (namespace or table routes) and the id before the action, decoded
 *     with a delimiter (after the first NUL, when there is one);
 * a first byte of 0xFF instead feeds the rest to the QueryTable body decoder.
 * Checks: a satisfiable range lies inside the file; segments are non-empty and at most
 * DD_NATIVE__SR_SEGS; a found Lance route's id length is within the path; a decoded
 * QueryTable request has no negative optional value, a positive maxFiles and no NULL hint. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/http/native/lance_rest_id.h"
#include "server/http/native/native_int.h"

static void range(const uint8_t *d, size_t n) {
  if (n < 8) return;
  int64_t size = 0;
  memcpy(&size, d, 8);
  if (size < 0) size = -(size + 1);
  size_t len = n - 8;
  char *h = malloc(len + 1);
  if (!h) return;
  memcpy(h, d + 8, len);
  h[len] = '\0';
  int64_t lo = -1, hi = -1;
  int r = dd_native__files_range(h, size, &lo, &hi);
  if (r == 1 && !(lo >= 0 && lo <= hi && hi < size)) abort();
  if (r < -1 || r > 1) abort();
  free(h);
}

static void sharing_path(const char *path) {
  char *buf = strdup(path);
  if (!buf) return;
  dd_native__sr_route r;
  if (dd_native__sr_split(buf, &r) == 0) {
    if (r.n < 0 || r.n > DD_NATIVE__SR_SEGS) abort();
    for (int i = 0; i < r.n; i++) {
      if (!r.seg[i][0]) abort();
      int32_t max = 0;
      dd_native__sr_max_results(r.seg[i], &max);
    }
  }
  free(buf);
}

static void lance(int table, const char *path, const char *delim) {
  const char *action = NULL;
  size_t id_len = 0;
  if (dd_native__lance_route(table, path, &action, &id_len) != 0) return;
  if (!action || id_len >= strlen(path) || path[id_len] != '/') abort();
  dd_native__lance_id id = DD_NATIVE__LANCE_ID_INIT;
  if (dd_native__lance_id_parse(&id, path, id_len, delim) == 0)
    for (size_t i = 0; i < id.n; i++)
      if (!id.parts[i]) abort();
  dd_native__lance_id_free(&id);
}

static void query_body(const uint8_t *d, size_t n) {
  Deltad__Sharing__V1__QueryTableRequest *q = NULL;
  if (dd_native__query_decode(&q, (const char *)d, n) != 0) {
    if (q) abort();
    return;
  }
  if ((q->_limit_hint_case && q->limit_hint < 0) || (q->_version_case && q->version < 0) ||
      (q->_starting_version_case && q->starting_version < 0) ||
      (q->_ending_version_case && q->ending_version < 0) || (q->_max_files_case && q->max_files < 1))
    abort();
  for (size_t i = 0; i < q->n_predicate_hints; i++)
    if (!q->predicate_hints[i]) abort();
  protobuf_c_message_free_unpacked(&q->base, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1 || size > 65536) return 0;
  if (data[0] == 0xFF) {
    query_body(data + 1, size - 1);
    dd_err_clear();
    return 0;
  }
  int part = data[0] % 3, table = data[0] / 3 % 2;
  const uint8_t *d = data + 1;
  size_t n = size - 1;
  if (part == 0) {
    range(d, n);
  } else {
    char *s = malloc(n + 2);
    if (!s) return 0;
    memcpy(s, d, n);
    s[n] = s[n + 1] = '\0';
    const char *delim = memchr(s, '\0', n) ? s + strlen(s) + 1 : NULL;
    if (part == 1) sharing_path(s);
    else lance(table, s, delim);
    free(s);
  }
  dd_err_clear();
  return 0;
}
