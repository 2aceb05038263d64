/* lance_rest_id.c: parsing Lance identifiers out of REST paths (lance_rest_id.h). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/call/call_route.h"
#include "server/http/native/lance_rest_id.h"

void dd_native__lance_id_free(dd_native__lance_id *id) {
  if (!id) return;
  for (size_t i = 0; i < id->n; i++) free(id->parts[i]);
  free(id->parts);
  id->parts = NULL;
  id->n = 0;
}

static int id_check_delim(const char *d) {
  size_t n = strlen(d);
  if (n == 0) return dd_err_set(DD_EINVAL, "delimiter: must not be empty");
  if (n > DD_NATIVE__LANCE_ID_MAX_DELIM)
    return dd_err_set(DD_EINVAL, "delimiter: longer than %d bytes", DD_NATIVE__LANCE_ID_MAX_DELIM);
  return 0;
}

/* Appends s[0..n) as a new part. */
static int id_push(dd_native__lance_id *out, const char *s, size_t n) {
  if (n == 0) return dd_err_set(DD_EINVAL, "id: empty part at position %zu", out->n);
  char **np = realloc(out->parts, (out->n + 1) * sizeof *np);
  if (!np) return dd_err_set(DD_ENOMEM, "out of memory");
  out->parts = np;
  if (!(np[out->n] = malloc(n + 1))) return dd_err_set(DD_ENOMEM, "out of memory");
  memcpy(np[out->n], s, n);
  np[out->n++][n] = '\0';
  return 0;
}

/* Splits the decoded id on delim. */
static int id_split(dd_native__lance_id *out, const char *s, const char *delim) {
  size_t dl = strlen(delim);
  for (;;) {
    const char *hit = strstr(s, delim);
    int rc = id_push(out, s, hit ? (size_t)(hit - s) : strlen(s));
    if (rc || !hit) return rc;
    s = hit + dl;
  }
}

int dd_native__lance_id_parse(dd_native__lance_id *out, const char *raw, size_t len, const char *delimiter) {
  const char *delim = delimiter ? delimiter : "$";
  char *s = NULL;
  *out = (dd_native__lance_id)DD_NATIVE__LANCE_ID_INIT;
  int rc = id_check_delim(delim);
  if (rc) return rc;
  if (len == 0) return dd_err_set(DD_EINVAL, "id: must not be empty");
  if (len > 3 * DD_NATIVE__LANCE_ID_MAX_BYTES)
    return dd_err_set(DD_EINVAL, "id: longer than %d bytes", DD_NATIVE__LANCE_ID_MAX_BYTES);
  if (!(s = malloc(len + 1))) return dd_err_set(DD_ENOMEM, "out of memory");
  memcpy(s, raw, len);
  s[len] = '\0';
  if (dd_call_pct_decode(s, 1) != 0) rc = dd_err_set(DD_EINVAL, "id: bad percent-encoding");
  else if (strlen(s) > DD_NATIVE__LANCE_ID_MAX_BYTES)
    rc = dd_err_set(DD_EINVAL, "id: longer than %d bytes", DD_NATIVE__LANCE_ID_MAX_BYTES);
  else if (strcmp(s, delim) != 0) /* the delimiter alone is the root: no parts */
    rc = id_split(out, s, delim);
  free(s);
  if (rc) dd_native__lance_id_free(out);
  return rc;
}

int dd_native__lance_id_equal(const dd_native__lance_id *id, char *const *parts, size_t n) {
  if (id->n != n) return 0;
  for (size_t i = 0; i < n; i++)
    if (strcmp(id->parts[i], parts[i]) != 0) return 0;
  return 1;
}
