/* lance_rest_id.h: Lance object identifiers in REST paths. The {id} segment of
 * /v1/namespace/{id}/... and /v1/table/{id}/... is the object's path joined by a delimiter
 * ("$" unless the `delimiter` query parameter says otherwise), percent-encoded, with '+'
 * for a space; an id equal to the delimiter is the root namespace (no parts). Decoding
 * comes first, so "%24" is a delimiter too. */
#ifndef DD_SERVER_HTTP_NATIVE_LANCE_REST_ID_H
#define DD_SERVER_HTTP_NATIVE_LANCE_REST_ID_H

#include <stddef.h>

enum {
  DD_NATIVE__LANCE_ID_MAX_BYTES = 4096, /* decoded id, delimiters included */
  DD_NATIVE__LANCE_ID_MAX_DELIM = 16
};

typedef struct dd_native__lance_id {
  char **parts; /* malloc'ed, each malloc'ed */
  size_t n;
} dd_native__lance_id;
#define DD_NATIVE__LANCE_ID_INIT {NULL, 0}

/* Parses raw[0..len) (still percent-encoded). DD_EINVAL with a message for a bad escape, an
 * empty id or part, a decoded id over DD_NATIVE__LANCE_ID_MAX_BYTES, or a delimiter that is empty or
 * over DD_NATIVE__LANCE_ID_MAX_DELIM bytes. delimiter NULL means "$". */
int dd_native__lance_id_parse(dd_native__lance_id *out, const char *raw, size_t len, const char *delimiter);
/* 1 when id has exactly the n parts given. */
int dd_native__lance_id_equal(const dd_native__lance_id *id, char *const *parts, size_t n);
/* Frees the parts. Accepts NULL and an empty id. */
void dd_native__lance_id_free(dd_native__lance_id *id);

#endif
