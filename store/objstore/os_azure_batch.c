/* os_azure_batch.c: the Blob Batch request of the Azure backend (os_azure.c): the
 * multipart/mixed body of up to OS__AZURE_BATCH_MAX Delete Blob subrequests, and the
 * reading of the multipart answer (one HTTP status per subrequest, by Content-ID). Each
 * subrequest line is the path and query of the blob's URL (its SAS, or none with a bearer
 * header), as the service checks each one's authorization on its own. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/err.h"
#include "store/objstore/os_remote.h"

/* The path and query of an absolute URL ("/" when it has none). */
static const char *url_path(const char *url) {
  const char *p = strstr(url, "://");
  p = p ? strchr(p + 3, '/') : NULL;
  return p ? p : "/";
}

int os__azure_batch_body(char **out, size_t *len, const char *boundary, const char *const *urls, size_t n,
                         const char *auth_hdr) {
  dd_buf b = {0};
  *out = NULL;
  for (size_t i = 0; i < n; i++) {
    dd_buf_printf(&b, "--%s\r\nContent-Type: application/http\r\nContent-Transfer-Encoding: binary\r\n"
                  "Content-ID: %zu\r\n\r\nDELETE %s HTTP/1.1\r\n", boundary, i, url_path(urls[i]));
    if (auth_hdr) dd_buf_printf(&b, "%s\r\n", auth_hdr);
    dd_buf_puts(&b, "Content-Length: 0\r\n\r\n");
  }
  dd_buf_printf(&b, "--%s--\r\n", boundary);
  if (b.oom) {
    dd_buf_free(&b);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  *out = b.p, *len = b.len;
  return 0;
}

/* Value of header name within [p, end) (a part's header lines), copied into v. */
static bool part_header(const char *p, const char *end, const char *name, char *v, size_t cap) {
  size_t nl = strlen(name);
  for (const char *l = p; l < end;) {
    const char *e = memchr(l, '\n', (size_t)(end - l));
    e = e ? e : end;
    if ((size_t)(e - l) > nl && !strncasecmp(l, name, nl) && l[nl] == ':') {
      const char *s = l + nl + 1;
      while (s < e && *s == ' ') s++;
      size_t k = (size_t)(e - s);
      while (k && (s[k - 1] == '\r' || s[k - 1] == ' ')) k--;
      if (k >= cap) k = cap - 1;
      memcpy(v, s, k);
      v[k] = 0;
      return true;
    }
    l = e + 1;
  }
  return false;
}

int os__azure_batch_parse(const char *body, const char *boundary, size_t n, long *status, char *err,
                          size_t errcap) {
  size_t seen = 0, blen = strlen(boundary);
  char delim[256];
  for (size_t i = 0; i < n; i++) status[i] = 0;
  if (errcap) err[0] = 0;
  if (blen + 3 > sizeof delim) return dd_err_set(DD_EIO, "Azure Blob Batch: a boundary too long");
  snprintf(delim, sizeof delim, "--%s", boundary);
  for (const char *p = strstr(body, delim); p; ) {
    p += blen + 2;
    if (p[0] == '-' && p[1] == '-') break; /* the closing delimiter */
    const char *end = strstr(p, delim);
    if (!end) end = p + strlen(p);
    const char *st = strstr(p, "HTTP/1.1 ");
    if (st && st < end) {
      long code = strtol(st + 9, NULL, 10);
      char id[32] = "", ec[128] = "";
      part_header(p, st, "Content-ID", id, sizeof id);
      part_header(st, end, "x-ms-error-code", ec, sizeof ec);
      char *idend = NULL;
      long k = *id ? strtol(id, &idend, 10) : -1;
      if (k >= 0 && (size_t)k < n && idend && !*idend) {
        if (!status[k]) seen++;
        status[k] = code;
      }
      if ((code < 200 || code >= 300) && code != 404 && errcap && !err[0])
        snprintf(err, errcap, "HTTP %ld %s", code, ec);
    }
    p = *end ? end : NULL;
  }
  if (seen == n) return 0;
  return dd_err_set(DD_EIO, "Azure Blob Batch: %zu of %zu answers%s%s", seen, n,
                    errcap && err[0] ? ", first error " : "", errcap ? err : "");
}
