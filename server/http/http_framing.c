/* http_framing.c: refuses requests whose framing or header block is ambiguous, before
 * any route sees them (RFC 9112 §5, §6.1, §6.3): more than one Content-Length, both
 * Content-Length and Transfer-Encoding, a transfer coding other than a lone "chunked",
 * Transfer-Encoding in HTTP/1.0, obs-fold continuation lines, NUL or other control
 * characters in a field, and field names that are not tokens. The refusal closes the
 * connection, so bytes after the bad request are never parsed as a request.
 *
 * libmicrohttpd 0.9.75 parses the header block in place: the request line and each
 * "name: value" line stay where they arrived in the connection's read buffer, with the
 * colon and the CR LF (or bare LF) overwritten by NULs, and the parsed fields point into
 * it in arrival order. So a block is clean exactly when the fields chain: each name starts
 * right after the previous line's terminator, and each value right after its name's
 * colon and blanks. An obs-fold line breaks the chain (MHD copies the folded field
 * elsewhere and glues the continuation onto its name), and so does a NUL inside a value
 * (MHD keeps only the bytes before it). Pointers are compared as integers before any byte
 * is read, and only bytes inside the block MHD reports (its size from the method's start)
 * are read. A NUL right before a line's end goes unseen (it only shortens the value). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"
#include "server/http/http_int.h"

#define FRAMING_MAX_GAP 4096 /* blanks allowed between a colon and its value */

typedef struct framing {
  const char *line_end; /* the NUL ending the previous line (request line or field) */
  int broken;           /* the fields do not chain: obs-fold or NUL */
  int bad_name, bad_value;
  int n_cl, n_te;
  const char *te;
} framing;

/* RFC 9110 §5.6.2 tchar */
static int is_tchar(unsigned char ch) {
  if (ch >= '0' && ch <= '9') return 1;
  if ((ch | 0x20) >= 'a' && (ch | 0x20) <= 'z') return 1;
  return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

static int name_ok(const char *s, size_t n) {
  if (n == 0) return 0;
  for (size_t i = 0; i < n; i++)
    if (!is_tchar((unsigned char)s[i])) return 0;
  return 1;
}

/* Visible characters, blanks and obs-text; no controls (a bare CR included). */
static int value_ok(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) {
    unsigned char ch = (unsigned char)s[i];
    if ((ch < 0x20 && ch != '\t') || ch == 0x7f) return 0;
  }
  return 1;
}

/* Where the line after the one ending at end starts (CR LF and bare LF both became NULs). */
static const char *next_line(const char *end) {
  const char *p = end + 1;
  return *p == '\0' ? p + 1 : p;
}

static int chains(framing *f, const char *key, size_t ks, const char *value) {
  if (!f->line_end || next_line(f->line_end) != key) return 0;
  uintptr_t colon = (uintptr_t)key + ks, v = (uintptr_t)value;
  if (v <= colon || v - colon - 1 > FRAMING_MAX_GAP) return 0;
  for (const char *p = key + ks + 1; p < value; p++)
    if (*p != ' ' && *p != '\t') return 0;
  return 1;
}

static enum MHD_Result framing_field(void *cls, enum MHD_ValueKind kind, const char *key,
                                     size_t ks, const char *value, size_t vs) {
  (void)kind;
  framing *f = cls;
  if (!value) value = "";
  if (!f->broken && !chains(f, key, ks, value)) f->broken = 1;
  f->line_end = f->broken ? NULL : value + vs;
  if (!name_ok(key, ks)) f->bad_name = 1;
  if (!value_ok(value, vs)) f->bad_value = 1;
  if (ks == 14 && strncasecmp(key, "Content-Length", 14) == 0) f->n_cl++;
  if (ks == 17 && strncasecmp(key, "Transfer-Encoding", 17) == 0) {
    f->n_te++;
    f->te = value;
  }
  return MHD_YES;
}

/* The last coding of a Transfer-Encoding list, and whether there are others. */
static int te_last_is_chunked(const char *te, int *others) {
  const char *last = strrchr(te, ',');
  *others = last != NULL;
  last = last ? last + 1 : te;
  while (*last == ' ' || *last == '\t') last++;
  size_t n = strlen(last);
  while (n > 0 && (last[n - 1] == ' ' || last[n - 1] == '\t')) n--;
  return n == 7 && strncasecmp(last, "chunked", 7) == 0;
}

/* After the last field, only its terminator and the empty line (CR LF or LF each, all
 * NULs now) may remain before the end of the block MHD reports; more means a NUL cut the
 * last value short. */
static int block_ends(const framing *f, struct MHD_Connection *c, const char *method) {
  const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
  if (!ci || !method || !f->line_end) return 1;
  uintptr_t end = (uintptr_t)method + ci->header_size, at = (uintptr_t)f->line_end;
  if (at < (uintptr_t)method || at > end || end - at > 4) return 0;
  for (const char *p = f->line_end; (uintptr_t)p < end; p++)
    if (*p != '\0') return 0;
  return 1;
}

int dd_http__framing_check(struct MHD_Connection *c, const char *method, const char *version,
                        int *status) {
  framing f = {.line_end = version && *version ? version + strlen(version) : NULL};
  MHD_get_connection_values_n(c, MHD_HEADER_KIND, framing_field, &f);
  if (!f.broken && !block_ends(&f, c, method)) f.broken = 1;
  *status = 400;
  if (f.broken)
    return dd_err_set(DD_EINVAL, "malformed header block (obs-fold line or NUL in a field)");
  if (f.bad_name) return dd_err_set(DD_EINVAL, "malformed header field name");
  if (f.bad_value) return dd_err_set(DD_EINVAL, "control character in a header field");
  if (f.n_cl > 1) return dd_err_set(DD_EINVAL, "more than one Content-Length");
  if (f.n_te == 0) return 0;
  if (f.n_cl > 0) return dd_err_set(DD_EINVAL, "both Content-Length and Transfer-Encoding");
  if (f.n_te > 1) return dd_err_set(DD_EINVAL, "more than one Transfer-Encoding");
  if (version && strcmp(version, "HTTP/1.0") == 0)
    return dd_err_set(DD_EINVAL, "Transfer-Encoding in an HTTP/1.0 request");
  int others = 0;
  if (!te_last_is_chunked(f.te, &others))
    return dd_err_set(DD_EINVAL, "Transfer-Encoding must end with chunked");
  if (others) {
    *status = 501;
    return dd_err_set(DD_EUNSUPPORTED, "only the chunked transfer coding is supported");
  }
  return 0;
}

enum MHD_Result dd_http__refuse_close(struct MHD_Connection *c, int code, int http_status,
                                   const char *msg) {
  char *body = dd_http__error_json(code, msg);
  struct MHD_Response *r =
      body ? MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE) : NULL;
  if (!r) {
    free(body);
    return MHD_NO;
  }
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
  enum MHD_Result ok = dd_http__queue(c, (unsigned)http_status, r);
  MHD_destroy_response(r);
  return ok;
}
