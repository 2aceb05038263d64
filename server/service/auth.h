/* auth.h: bearer-token authentication: the admin token created on first start, and the
 * check of a presented token against the SHA-256 hashes kept in the catalog store. */
#ifndef DD_SERVER_SERVICE_AUTH_H
#define DD_SERVER_SERVICE_AUTH_H

#include <stddef.h>

#include "server/call/call.h"
#include "server/call/handler.h"
#include "store/catalog/cat_store.h"

/* Bytes of a generated token string, without the NUL: 32 random bytes in hex. */
#define DD_AUTH_TOKEN_CHARS 64

/* Creates the admin token unless one is stored: from DELTAD_ADMIN_TOKEN when set (nothing
 * written to disk), else random and written to <data_dir>/admin.token (mode 0600), whose
 * path then goes to *out_path (malloc'ed; NULL otherwise; out_path may be NULL).
 * *out_from_env (may be NULL) is set to 1 when DELTAD_ADMIN_TOKEN was used this time. */
int dd_auth_bootstrap(cat_store *store, const char *data_dir, char **out_path,
                      int *out_from_env);
/* Fills *out for a valid, unexpired token; DD_EUNAUTH "invalid or expired token" else. */
int dd_auth_check(cat_store *store, const char *token, size_t len, dd_principal *out);
/* Writes a fresh random token (DD_AUTH_TOKEN_CHARS hex digits and a NUL). */
int dd_auth_random_token(char out[DD_AUTH_TOKEN_CHARS + 1]);

/* The call's read view (call.h, dd_call_view_ops) over the dd_app's catalog store: a
 * cat_view bound to the thread that checks the token and runs the handler
 * (cat_view_bind), with a reference count for the transport and a stream runner. Give it
 * to the registry with dd_call_registry_set_view_ops. */
extern const dd_call_view_ops dd_auth_view_ops;

#endif
