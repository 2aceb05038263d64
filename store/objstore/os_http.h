/* os_http.h: the HTTP client the object-store backends (os_s3.c, os_azure.c) send their
 * requests with: libcurl easy handles kept in one locked pool for the process, so
 * connections are reused across stores and calls, bounded retries of transient failures, and the whole body or a byte range read
 * into memory. Internal to store/objstore (prefix os__http). */
#ifndef DD_STORE_OBJSTORE_OS_HTTP_H
#define DD_STORE_OBJSTORE_OS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store/objstore/os.h"

typedef struct os__http_req {
  const char *method;          /* "GET", "HEAD", "PUT", "POST", "DELETE" */
  const char *url;             /* fully signed URL */
  const char *const *headers;  /* "Name: value" strings, NULL-terminated; may be NULL */
  const void *body;            /* PUT or POST body (may be NULL with body_len 0) */
  size_t body_len;
  uint64_t range_off;          /* with range_len > 0: "Range: bytes=off-(off+len-1)" */
  size_t range_len;
} os__http_req;

typedef struct os__http_resp {
  long status;                 /* HTTP status; 0 when no response arrived */
  uint8_t *body;               /* malloc'ed, NUL-terminated (not counted in len); owned */
  size_t len;
  int64_t content_length;      /* from the headers, -1 when absent */
  int64_t mtime_ms;            /* Last-Modified, -1 when absent */
  bool timed_out;              /* no response: the transfer stalled (not retried) */
  char *headers;               /* header lines of the final response ("Name: v\r\n"...),
                                  NUL-terminated; owned; read with os__http_header */
} os__http_resp;

/* Initialises libcurl once for the process (call before the first request; cheap after). */
int os__http_init(void);

/* Sends the request (URL made by make_url(ctx) on every attempt, so a retry is signed
 * afresh) and fills *out. Connection failures and 500/502/503/504 are retried up to three
 * times with a short backoff (a transfer stalled for 60 s is not: it fails at once); any
 * other status is returned as is (the caller decides).
 * Returns DD_EIO (message names the URL without its query, never the signature) when no
 * HTTP response could be had. Free *out with os__http_resp_free. */
typedef int (*os__http_url_fn)(void *ctx, char **out_url);
int os__http_do(const os__http_req *rq, os__http_url_fn make_url, void *ctx,
                os__http_resp *out);
void os__http_resp_free(os__http_resp *r);

/* The value of response header `name` (case-insensitive; surrounding blanks trimmed) into
 * out (cap bytes); false when the response has no such header. */
bool os__http_header(const os__http_resp *r, const char *name, char *out, size_t cap);

/* POSTs form (application/x-www-form-urlencoded) to the OAuth 2 token endpoint url and
 * reads the JSON answer (os_oauth.c): *token (malloc'ed) is its access_token, *exp
 * now + expires_in (3600 when absent). A refusal (400, 401, 403) is DD_EPERM, another
 * answer DD_EIO, with "<what>: HTTP <status>: <error_description>". */
int os__oauth_token(const char *url, const char *form, const char *what, int64_t now,
                    char **token, int64_t *exp);

/* The outcome of a ranged GET (offset, len) for the object what/name ("s3 object", key):
 * copies the bytes to out and returns 0 (a 200 means the store sent the whole object: the
 * range is cut from it); DD_ECORRUPT when the object is shorter (416 or a short body);
 * 1 when the status is neither 200, 206 nor 416 (the caller reports it). */
int os__http_range_copy(const os__http_resp *r, uint64_t offset, size_t len, uint8_t *out,
                        const char *what, const char *name);

/* Text of the first <tag>...</tag> in an XML body into out (cap bytes, NUL-terminated;
 * longer text is cut, never inside a decoded character): the five predefined entities and
 * character references (&#NN; &#xHH;, written out as UTF-8) are decoded. Returns a pointer
 * just past the closing tag, or NULL when absent (out untouched). */
const char *os__xml_text(const char *xml, const char *tag, char *out, size_t cap);

/* Parses an RFC 3339 time ("2024-03-15T09:30:00.000Z", "...T11:30:00+02:00"; no zone
 * means UTC) to epoch ms, the fraction truncated to ms; -1 when malformed, out of range
 * (month 13, 30 February) or before 1970. */
int64_t os__iso8601_ms(const char *s);

/* Whether an object key stays under a store's root prefix: key is prefix itself or below
 * it ("tables/t/x" is under "tables/t", "tables/t2/x" is not; every key is under ""). */
bool os__key_under(const char *key, const char *prefix);

/* Whether a path relative to a store's root has a ".." segment ('/' or '\\' separated):
 * such a path would leave the root once an HTTP client or a store normalises it. */
bool os__rel_has_dotdot(const char *rel);

/* os_s3.c: adds the entries of one ListObjectsV2 page (XML body) under the key prefix pfx
 * to l (cap: its capacity, os_list_add's); *next gets the continuation token or "". */
int os__s3_list_page(os_list *l, size_t *cap, const char *xml, const char *pfx, char *next,
                     size_t next_cap);
/* os_azure.c: the same for one List Blobs page; *next gets the next marker or "". */
int os__azure_list_page(os_list *l, size_t *cap, const char *xml, const char *pfx, char *next,
                        size_t next_cap);

/* os_probe.c: for backends whose directories are key prefixes: mkdirs does nothing, and
 * rmdir (nothing to remove) succeeds when list_raw finds nothing under dir/ (an absent
 * prefix is fine; the store's errors, such as an absent bucket, are passed up), else
 * DD_EPRECOND "<what> prefix '<dir>' is not empty". */
int os__prefix_mkdirs(void *impl, const char *dir);
int os__prefix_rmdir(int (*list_raw)(void *impl, const char *dir, os_list *out), void *impl,
                     const char *dir, const char *what);

/* os_probe.c: 0 when conditional puts to the store named by where ("<kind>|<endpoint>|
 * <bucket>") are safe. The first call per where runs probe(ctx) (1 honoured, 0 ignored,
 * negative: an error, not kept) and keeps its answer for the process; an ignoring store is
 * DD_EPRECOND naming store, endpoint, bucket and the condition it ignores. */
typedef int (*os__probe_fn)(void *ctx);
int os__cond_put_check(const char *where, os__probe_fn probe, void *ctx, const char *store,
                       const char *endpoint, const char *bucket, const char *condition);

/* ---- streamed puts in parts (os_parts.c) ----
 * A backend's put stream embeds an os__parts first and gives its operations: part sends
 * part number no (1-based; the first call starts the upload and sets started), single puts
 * an object that never filled a part (one put-if-absent), finish sends the last part
 * (n bytes, at least one: a full part is sent only when more bytes follow) and completes
 * the upload of nparts + 1 parts, cancel removes a started upload (best effort, errors
 * dropped).
 * Parts are os__part_bytes() long: $DD_OBJSTORE_PART_BYTES (rounded down to 256 KiB, at
 * least 256 KiB, at most 512 MiB; S3 wants 5 MiB for every part but the last), default
 * 8 MiB. One part is in memory at a time and sent synchronously. */
typedef struct os__parts os__parts;
typedef struct os__parts_ops {
  int (*part)(os__parts *p, const uint8_t *data, size_t n, unsigned no);
  int (*single)(os__parts *p, const uint8_t *data, size_t n);
  int (*finish)(os__parts *p, const uint8_t *data, size_t n, unsigned nparts);
  void (*cancel)(os__parts *p);
  void (*release)(os__parts *p); /* frees the backend's stream (os__parts_free included) */
} os__parts_ops;
struct os__parts {
  const os__parts_ops *ops;
  uint8_t *buf;      /* cap bytes, allocated at the first write */
  size_t len, cap;
  unsigned nparts;   /* parts sent */
  uint64_t sent;     /* bytes sent in them */
  bool started;      /* the backend started an upload (cancel removes it) */
  bool done;         /* committed or aborted */
};
size_t os__part_bytes(void);
void os__parts_init(os__parts *p, const os__parts_ops *ops);
int os__parts_write(os__parts *p, const void *data, size_t len);
/* Puts the object (single or finish); a failed finish cancels the upload. */
int os__parts_commit(os__parts *p);
/* Cancels a started upload unless committed. */
void os__parts_abort(os__parts *p);
void os__parts_free(os__parts *p);
/* The vtable's put_stream_write, _commit and _abort for such a stream (ps: its os__parts);
 * commit and abort release it. */
int os__parts_write_cb(void *ps, const void *data, size_t len);
int os__parts_commit_cb(void *ps);
void os__parts_abort_cb(void *ps);

/* Parses an HTTP date (RFC 1123, "Sun, 29 Nov 2026 20:45:02 GMT") to epoch ms; -1 when
 * malformed or before 1970 (as os__iso8601_ms). */
int64_t os__http_date_ms(const char *s);

#endif
