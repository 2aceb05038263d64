/* sharing_int.h: what the Delta Sharing service files (server/service/sharing_*.c) share,
 * and the few entry points the native REST adapters call (they never see Delta or LMDB).
 *
 * Who sees what: an admin sees every share; a recipient sees the shares granted to it,
 * and a share it was not granted answers exactly as one that does not exist (the same
 * DD_ENOTFOUND and message). Unauthenticated calls never reach these handlers.
 *
 * Catalog reads: each handler opens one read view of the catalog per request
 * (cat_view_open) and passes it to the helpers below, so a request costs one LMDB read
 * transaction whatever it looks up; the view is closed before a table's log is read or a
 * reply streams. */
#ifndef DD_SERVER_SERVICE_SHARING_INT_H
#define DD_SERVER_SERVICE_SHARING_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/service/app.h"
#include "store/catalog/cat_store.h"
#include "store/objstore/os_remote.h"
#include "store/sign/sign.h"

/* The reference server's default and largest page size for list calls. */
#define SHR_MAX_RESULTS 500

/* ---- visibility (sharing_acl.c) ---------------------------------------------------- */

/* Loads the share named name through v if the caller may see it (DD_ENOTFOUND "share
 * '<name>' not found" otherwise). */
int shr_share_visible(const dd_call *call, cat_view *v, const char *name, cat_share **out);
/* Finds share/schema/table for the caller. *out_share is the whole share (free it);
 * *out_table is borrowed from it. DD_ENOTFOUND with the reference server's message. */
int shr_table_visible(const dd_call *call, cat_view *v, const char *share, const char *schema,
                      const char *table, cat_share **out_share,
                      const cat_shared_table **out_table);

/* ---- ListShares answers by catalog generation (sharing_list_cache.c) ----------------- */

/* Internally locked; one per application (dd_app_share_list_cache). who is "A" for an
 * admin or "R" followed by the recipient's id; after is the decoded page start. get: 0 and
 * a copy of the answer kept for exactly (gen, who, after, limit) into *out (the caller's),
 * DD_ENOTFOUND when there is none, DD_ENOMEM. put keeps a copy of resp (best effort). */
int shr_list_cache_new(shr_list_cache **out);
void shr_list_cache_free(shr_list_cache *c);
int shr_list_cache_get(shr_list_cache *c, uint64_t gen, const char *who, const char *after,
                       int limit, Deltad__Sharing__V1__ListSharesResponse **out);
void shr_list_cache_put(shr_list_cache *c, uint64_t gen, const char *who, const char *after,
                        int limit, const Deltad__Sharing__V1__ListSharesResponse *resp);

/* ---- page tokens (sharing_page.c) --------------------------------------------------- */

/* max_results: -1 when absent; DD_EINVAL outside 0..SHR_MAX_RESULTS. Returns the limit. */
int shr_page_limit(int *out, bool has, int32_t max_results);
/* base64url("<kind>\x1f<scope>\x1f<pos>"), malloc'ed. */
char *shr_page_token(char kind, const char *scope, const char *pos);
/* Decodes a token of kind for scope into pos (cap bytes). "" / NULL gives pos "".
 * DD_EINVAL "invalid 'nextPageToken'" for anything else. */
int shr_page_decode(char kind, const char *scope, const char *token, char *pos, size_t cap);

/* ---- tables (sharing_table.c) ------------------------------------------------------- */

/* The local directory of a shared table, malloc'ed, or DD_EUNSUPPORTED for remote ones
 * when remote_url is NULL; for a remote table *remote_url gets the table URL instead.
 * DD_EPERM when the table is not under a registered storage location or overlaps the
 * data directory (cat_view_location_confine). */
int shr_table_root(cat_view *v, const cat_shared_table *t, char **out_root, char **remote_url);

/* ---- tables in object storage (sharing_store.c) -------------------------------------- */

/* What reading and signing a remote table needs; members owned, freed by shr_remote_free. */
typedef struct shr_remote {
  cat_location *loc;   /* the storage location the table is under */
  cat_credential *cred; /* its credential, secrets decrypted */
  sign_location where; /* the table URL, parsed */
  sign_cred sc;        /* the credential for signing; strings borrowed from cred and loc,
                          or from the two below */
  char *gcp_email, *gcp_pem; /* a GCP key's client_email and private_key (owned) */
  os_azure_udk udk;          /* an Azure service principal's user delegation key (owned;
                                sc.azure_udk points into it once shr_remote_can_sign got it) */
} shr_remote;

/* Finds the location and credential of the table at url (t->location, or (t NULL or no
 * location named) the location
 * whose URL is the longest prefix of url) and opens its object store in *out_store (the
 * caller's). DD_EPRECOND when no location or credential reaches it. */
int shr_remote_open(cat_view *v, const cat_shared_table *t, const char *url, shr_remote *r,
                    os_store **out_store);
void shr_remote_free(shr_remote *r);
/* The lookups of shr_remote_open without opening the store (free r with shr_remote_free
 * after an error too). */
int shr_remote_resolve(cat_view *v, const cat_shared_table *t, const char *url, shr_remote *r);
/* The value of r's location property name (case-insensitive), borrowed; NULL when unset. */
const char *shr_remote_prop(const shr_remote *r, const char *name);
/* os_open's opener (store/objstore/os.h) for the server: ctx is the cat_store; opens the
 * object store at url through the location covering it and its credential, as
 * shr_remote_open with no shared table does (one read view per call). */
int shr_store_opener(void *ctx, const char *url, os_store **out);
/* 0 when file URLs of r's table may be given to recipients. A stored Azure SAS token would
 * travel in every URL as it is (granting whatever it grants, e.g. the whole container), so
 * it needs the location property sas_to_recipients=true; else DD_EPRECOND saying so. */
int shr_remote_can_sign(shr_remote *r, int ttl_s);

/* ---- local file URLs (sharing_files.c) ----------------------------------------------- */

/* The table id in local file URLs, signed with the rest of the URL:
 * "<share id>.<table id>.<recipient id>.<grant generation>" (cat_grant_generation), or
 * "<share id>.<table id>.-.-" for URLs made for an admin. Serving a recipient's URL checks
 * that the same grant still exists, so a revoke or a deleted recipient ends it at once. */
#define SHR_FILE_TABLE_ID_MAX 160

#endif
