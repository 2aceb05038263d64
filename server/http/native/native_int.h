/* native_int.h: the request-parsing steps of the native REST adapters (the Range header of
 * the signed-file server, Delta Sharing path splitting and maxResults, Lance route lookup),
 * named with `__` and exposed only so tests/fuzz/http can reach them. Nothing but those
 * adapters and their fuzz target includes this header. */
#ifndef DD_SERVER_HTTP_NATIVE_NATIVE_INT_H
#define DD_SERVER_HTTP_NATIVE_NATIVE_INT_H

#include <stddef.h>
#include <stdint.h>

#include "deltad/sharing/v1/sharing.pb-c.h"

/* files_rest.c: parses "bytes=a-b", "bytes=a-", "bytes=-n" against size into [*lo, *hi].
 * 1 for a satisfiable range, 0 when the header is to be ignored (absent or not one byte
 * range), -1 when unsatisfiable (416). */
int dd_http__files_range(const char *h, int64_t size, int64_t *lo, int64_t *hi);

/* sharing_rest.c: the decoded segments of a path under <base>/shares. */
#define DD_HTTP__SR_SEGS 8
typedef struct dd_http__sr_route {
  const char *seg[DD_HTTP__SR_SEGS]; /* decoded path segments (in the split buffer) */
  int n;
} dd_http__sr_route;
/* Splits the path after the prefix into decoded segments, in place; DD_ENOTFOUND for an
 * empty segment, a bad escape or more than DD_HTTP__SR_SEGS segments. */
int dd_http__sr_split(char *buf, dd_http__sr_route *r);
/* A maxResults query value, clamped to int32 (DD_EINVAL when not a decimal number). */
int dd_http__sr_max_results(const char *s, int32_t *max);

/* sharing_query.c: QueryTable's JSON body into a new QueryTableRequest (*out, freed with
 * protobuf_c_message_free_unpacked; share, schema and table left empty). "" is an empty
 * query. DD_EINVAL with the reference server's message on bad JSON, a wrong type or a
 * negative value. */
int dd_native__query_decode(Deltad__Sharing__V1__QueryTableRequest **out, const char *body,
                            size_t len);

/* lance_rest.c: finds the route of "{id}/{action}[/]" among the namespace (table 0) or table
 * (table 1) operations: its action name and the length of the raw id before the '/'.
 * DD_EUNSUPPORTED when there is none. */
int dd_http__lance_route(int table, const char *path, const char **action, size_t *id_len);

#endif
