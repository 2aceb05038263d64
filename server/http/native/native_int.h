/* native_int.h: the native REST codecs (Delta Sharing, Lance Namespace, the signed-file
 * server), prefix dd_native_ (module-internal dd_native__).
 *
 * A codec is registered for a URL prefix (dd_http_add_native) and turns each request
 * into one call: it authenticates the caller, decodes the request once into the method's
 * request message (path segments, query string, JSON body) and hands both to the call
 * core with its hooks (dd_native__run, a dd_http__codec): encode turns the reply, or each
 * streamed message, into the protocol's bytes on the producer thread; encode_error writes
 * a late failure as the protocol says (or cuts the reply); head sets the status and
 * headers once the first bytes or the end are there, or writes the protocol's error body
 * (from the call core's one status table, dd_call_status_*). A request that fails before
 * its call (routing, authentication, a bad body) is answered by the codec's error
 * encoder directly. Codecs include nothing of the services or the engines.
 *
 * The parsing steps named with `__` below are exposed so tests/fuzz/http can reach them;
 * nothing but the codecs and that fuzz target includes this header. */
#ifndef DD_SERVER_HTTP_NATIVE_NATIVE_INT_H
#define DD_SERVER_HTTP_NATIVE_NATIVE_INT_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "deltad/sharing/v1/sharing.pb-c.h"
#include "server/http/http_int.h"

/* ---- running the call (http_native.c) --------------------------------------------------- */

/* The server's method for a gRPC path, or NULL. */
const dd_method *dd_native__method(const dd_http_request *r, const char *path);
/* Answers the request with method m on msg (taken: freed also on failure) for who
 * (copied) through the call core, with codec's hooks (copied; codec->cls is taken and
 * freed by codec->free_cls). The native handler returns 0 right after and leaves its
 * reply alone: the reply comes from codec->head. */
int dd_native__run(const dd_http_request *r, const dd_method *m, ProtobufCMessage *msg,
                   const dd_principal *who, const dd_http__codec *codec);

/* Appends j's compact text to out (an encode hook's buffer) and drops the reference;
 * DD_ENOMEM when j is NULL or cannot be written. */
int dd_native__append_json(dd_call_buf *out, json_t *j);

/* A call's file reply reaches a codec's head hook already in the reply (res->file_fd is
 * -1 then; res->file_off and file_len tell what it holds). These narrow it to len bytes
 * from off (within what it holds; DD_EINTERNAL otherwise), or close and drop it (for an
 * error body instead). */
int dd_native__reply_file_range(dd_http_reply *r, uint64_t off, uint64_t len);
void dd_native__reply_drop_file(dd_http_reply *r);

/* ---- parsing steps ---------------------------------------------------------------------- */

/* files_rest.c: parses "bytes=a-b", "bytes=a-", "bytes=-n" against size into [*lo, *hi].
 * 1 for a satisfiable range, 0 when the header is to be ignored (absent or not one byte
 * range), -1 when unsatisfiable (416). */
int dd_native__files_range(const char *h, int64_t size, int64_t *lo, int64_t *hi);

/* sharing_rest.c: the decoded segments of a path under <base>/shares. */
#define DD_NATIVE__SR_SEGS 8
typedef struct dd_native__sr_route {
  const char *seg[DD_NATIVE__SR_SEGS]; /* decoded path segments (in the split buffer) */
  int n;
} dd_native__sr_route;
/* Splits the path after the prefix into decoded segments, in place; DD_ENOTFOUND for an
 * empty segment, a bad escape or more than DD_NATIVE__SR_SEGS segments. */
int dd_native__sr_split(char *buf, dd_native__sr_route *r);
/* A maxResults query value, clamped to int32 (DD_EINVAL when not a decimal number). */
int dd_native__sr_max_results(const char *s, int32_t *max);

/* sharing_query.c: QueryTable's JSON body into a new QueryTableRequest (*out, freed with
 * protobuf_c_message_free_unpacked; share, schema and table left empty). "" is an empty
 * query. DD_EINVAL with the reference server's message on bad JSON, a wrong type or a
 * negative value. */
int dd_native__query_decode(Deltad__Sharing__V1__QueryTableRequest **out, const char *body,
                            size_t len);

/* lance_rest.c: finds the route of "{id}/{action}[/]" among the namespace (table 0) or table
 * (table 1) operations: its action name and the length of the raw id before the '/'.
 * DD_EUNSUPPORTED when there is none. */
int dd_native__lance_route(int table, const char *path, const char **action, size_t *id_len);

#endif
