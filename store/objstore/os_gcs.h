/* os_gcs.h: what the GCS backend (os_gcs.c) shares with its helpers (os_gcs_auth.c) and
 * the tests: a service account's key, the OAuth 2 token exchange, and the JSON answers of
 * the storage/v1 API. Internal to store/objstore (prefix os__gcs). */
#ifndef DD_STORE_OBJSTORE_OS_GCS_H
#define DD_STORE_OBJSTORE_OS_GCS_H

#include <stddef.h>
#include <stdint.h>

#include "store/objstore/os.h"

/* The parts of a service account's JSON key deltad uses (owned strings). */
typedef struct os__gcs_key {
  char *client_email;
  char *private_key; /* PEM */
  char *private_key_id; /* may be NULL */
  char *token_uri;   /* default https://oauth2.googleapis.com/token */
} os__gcs_key;

/* Parses the JSON key; DD_EINVAL naming what is missing. The caller frees with
 * os__gcs_key_free (also on error). */
int os__gcs_key_parse(os__gcs_key *out, const char *json);
void os__gcs_key_free(os__gcs_key *k);
/* SHA-256 of the key's private key and token_uri (what a cached token is kept under). */
int os__gcs_key_id(const os__gcs_key *k, unsigned char out[32]);
/* The signed JWT assertion of the key at now (RS256; iat now, exp now + 3600). */
int os__gcs_jwt(char **out, const os__gcs_key *k, int64_t now);
/* Exchanges the JWT at the key's token_uri: *token (malloc'ed) and its expiry (epoch s). */
int os__gcs_fetch_token(const os__gcs_key *k, int64_t now, char **token, int64_t *exp);
/* Adds the entries of one objects.list page (JSON) under pfx to l; *next the pageToken or "". */
int os__gcs_list_page(os_list *l, size_t *cap, const char *json, const char *pfx, char *next,
                      size_t next_cap);
/* Size and update time of an object's metadata (JSON). */
int os__gcs_object_meta(const char *json, int64_t *size, int64_t *mtime_ms);

#endif
