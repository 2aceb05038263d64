/* call_route.h: the REST router of the call core: google.api.http path templates matched
 * against request paths, as pure functions (no sockets) so they are unit-tested alone.
 *
 * Templates are relative to the base path: "/catalogs", "/catalogs/{name}",
 * "/files/{path=**}", "/tables/{name}:vacuum". A variable `{f}` (or `{f=*}`) matches one
 * non-empty segment; `{f=**}` matches the rest of the path (one segment or more; only as
 * the last segment); a trailing ":verb" must appear literally at the end of the path.
 * Segments are split on the raw path and then percent-decoded, so "%2F" stays inside a
 * variable. When several templates match, the most specific wins: compared segment by
 * segment, a literal beats a variable, which beats `**`. A path that matches only
 * templates of other HTTP verbs is reported apart (405). */
#ifndef DD_SERVER_CALL_CALL_ROUTE_H
#define DD_SERVER_CALL_CALL_ROUTE_H

#include <stddef.h>

#include "generated/api.h"

#define DD_CALL_MAX_VARS 8

typedef struct dd_call_router dd_call_router;

typedef struct dd_call_var {
  const char *field; /* proto field path from the template, e.g. "name" (borrowed) */
  char *value;       /* percent-decoded, malloc'ed */
} dd_call_var;

typedef struct dd_call_match {
  size_t route; /* index into the routes given to dd_call_router_new */
  size_t n_vars;
  dd_call_var vars[DD_CALL_MAX_VARS];
  char allow[64]; /* on DD_EUNSUPPORTED: the verbs the path has, "GET, DELETE" */
} dd_call_match;

/* Compiles the templates of routes[0..n). routes must outlive the router. DD_EINVAL
 * names a template it cannot parse. */
int dd_call_router_new(dd_call_router **out, const dd_api_route *routes, size_t n);
void dd_call_router_free(dd_call_router *r);

/* Matches verb and path (relative to the base path, starting with '/', no query, still
 * percent-encoded). Returns 0 and fills *out (release it with dd_call_match_clear);
 * DD_ENOTFOUND when no template matches the path; DD_EUNSUPPORTED when templates match
 * the path but none for this verb (HTTP 405); DD_EINVAL for a bad percent-escape. */
int dd_call_router_match(const dd_call_router *r, const char *verb, const char *path,
                         dd_call_match *out);
void dd_call_match_clear(dd_call_match *m);

/* Percent-decodes s in place; with plus_is_space, '+' becomes ' ' (query strings).
 * Returns 0, or -1 on a malformed escape or an encoded NUL. */
int dd_call_pct_decode(char *s, int plus_is_space);

#endif
