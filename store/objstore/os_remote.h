/* os_remote.h: opening an os_store on object storage (library dd_objstore).
 *
 * A table in GCS (gs://) is read and written over the JSON API (os_gcs.c). A table in S3
 * (s3://, s3a://, s3n://) is read and written over the S3 REST API with
 * SigV4-presigned requests made by store/sign, on AWS or on an S3-compatible store named by
 * the credential's endpoint (path-style requests). A table in Azure Blob Storage (abfs[s]://,
 * wasb[s]://, az://, azure://) is read and written over the Blob service REST API, every
 * request carrying a SAS (a container SAS made from an account key, or a stored token), on
 * https://<account>.blob.<suffix> or on the credential's azure_endpoint (Azurite). ADLS Gen2
 * directories listed as blobs count as directories. Semantics the backends give on top of
 * os.h's contract:
 *  - a "directory" is a key prefix ending in '/'; mkdirs is a no-op; rmdir succeeds when
 *    nothing is under the prefix; os_list_dir of an empty or absent prefix is DD_ENOTFOUND;
 *  - os_put_if_absent sends If-None-Match: * (atomic on AWS S3 since 2024 and on MinIO)
 *    after checking with HEAD that the key is absent, so stores that ignore the header
 *    still refuse an existing key outside a race; Azure honours the header atomically, so
 *    no HEAD is sent there, and its 409 BlobAlreadyExists is DD_EEXISTS too;
 *  - streamed puts (os_put_stream) go in parts (os_parts.c): S3 multipart uploads, Azure
 *    blocks, GCS resumable uploads, each completed under the same condition as a
 *    put-if-absent and cancelled on failure; an object below one part is one put;
 *  - absolute paths ("s3://bucket/key") are accepted when they lie under the store's root
 *    (same bucket and below its key prefix; Azure: the same container and prefix, and the
 *    same account when the URL names one); relative paths with a ".." segment are refused
 *    (DD_EPERM), so a Delta log cannot make deltad read objects outside its table.
 * Status mapping: 404 DD_ENOTFOUND, 401/403 DD_EPERM, 412 DD_EEXISTS, 409 DD_ECONFLICT,
 * anything else DD_EIO with the store's error code and message. */
#ifndef DD_STORE_OBJSTORE_OS_REMOTE_H
#define DD_STORE_OBJSTORE_OS_REMOTE_H

#include <stdbool.h>
#include <stdint.h>

#include "store/objstore/os.h"
#include "store/sign/sign.h"

/* Opens the store at url: file:// or an absolute path opens the local backend (cred
 * unused, may be NULL); s3 URLs need an AWS credential, Azure URLs an Azure account-key or
 * SAS credential, gs URLs a GCP service-account key or an HMAC key. Other schemes
 * DD_EUNSUPPORTED. */
int os_open_url(os_store **out, const char *url, const sign_cred *cred);

/* The S3 backend at a parsed s3 location. The credential's strings are copied. */
int os_s3_open(os_store **out, const sign_location *loc, const sign_cred *cred);

/* The Azure Blob backend at a parsed Azure location. The account is the location's, or the
 * credential's for az:// and azure:// (DD_EINVAL when they differ); the credential's
 * strings are copied. A service principal (SIGN_CRED_AZURE_CLIENT, client secret) sends
 * OAuth bearer tokens (os_azure_ad.c) instead of a SAS. */
int os_azure_open(os_store **out, const sign_location *loc, const sign_cred *cred);

/* Blob Batch of Delete Blob subrequests (os_azure_batch.c): the multipart/mixed body for
 * the blob URLs urls[0..n) (each line the URL's path and query; auth_hdr, e.g. a bearer
 * "Authorization: ..." line, added to each, may be NULL), malloc'ed; and the statuses of
 * the answer (status[i] for Content-ID i; err gets the first failure other than 404).
 * The parse is DD_EIO when a subrequest has no answer (the batch itself was refused). */
#define OS__AZURE_BATCH_MAX 256
int os__azure_batch_body(char **out, size_t *len, const char *boundary, const char *const *urls, size_t n,
                         const char *auth_hdr);
int os__azure_batch_parse(const char *body, const char *boundary, size_t n, long *status, char *err,
                          size_t errcap);

/* Trusts the CAs of the PEM file at path (instead of the system's) for every object-store
 * and identity-platform request from now on; NULL or "" goes back to the system's. Call at
 * start, before requests are made (not thread-safe against them). DD_ENOTFOUND when the
 * file cannot be read. */
int os_set_ca_file(const char *path);

/* ---- Azure service principals (os_azure_ad.c) ----
 * Tokens come from the Microsoft identity platform's client-credentials grant at
 * <authority>/<tenant>/oauth2/v2.0/token (scope https://storage.azure.com/.default); the
 * authority is the credential's azure_authority, else $AZURE_AUTHORITY_HOST, else
 * https://login.microsoftonline.com. Tokens and user delegation keys are kept for the
 * process (by a SHA-256 of the authority, tenant, client and secret; keys also by account)
 * and fetched again 5 minutes before they expire; a lock guards both tables, and a fetch
 * happens under it, so concurrent first calls wait for one answer. Only client secrets are
 * supported (certificates and federated tokens are DD_EUNSUPPORTED). */

/* "Authorization: Bearer <token>" for cred into hdr (cap bytes). DD_EPERM when the identity
 * platform refuses the client (its error_description in the message), DD_EIO when it
 * cannot be reached. */
int os_azure_bearer(const sign_cred *cred, char *hdr, size_t cap);

/* A user delegation key of account, valid at least until need_until_s (epoch seconds, at
 * most 6 days ahead), from Get User Delegation Key on the account's blob endpoint (the
 * credential's azure_endpoint or https://<account>.blob.<suffix>). The strings are the
 * caller's: os_azure_udk_free. */
typedef struct os_azure_udk {
  char *oid, *tid, *start, *expiry, *service, *version, *value;
  sign_azure_udk key; /* views of the strings above, for sign_object_url */
} os_azure_udk;
int os_azure_udk_get(os_azure_udk *out, const sign_cred *cred, const char *account,
                     const char *endpoint_suffix, int64_t need_until_s);
void os_azure_udk_free(os_azure_udk *k);

/* ---- temporary AWS credentials (os_aws_sts.c) ----
 * STS AssumeRole of role_arn with cred's long-term keys (SIGN_CRED_AWS), at endpoint
 * (NULL: https://sts.<cred's region>.amazonaws.com; else "scheme://host[:port]", such as
 * MinIO's or an emulator's), for duration_s seconds (900..43200), narrowed by the session
 * policy policy_json when given. STS refusing (400, 403) is DD_EPERM with its code and
 * message; no answer or a malformed one DD_EIO. The strings of *out are the caller's. */
typedef struct os_aws_assume {
  const sign_cred *cred;
  const char *endpoint;
  const char *role_arn;
  const char *external_id; /* NULL or "": none */
  const char *session_name;
  const char *policy_json; /* NULL or "": the role's own permissions */
  int duration_s;
} os_aws_assume;
typedef struct os_aws_session {
  char *access_key_id, *secret_access_key, *session_token;
  int64_t expiration_ms; /* epoch ms, from STS's Expiration */
} os_aws_session;
int os_aws_assume_role(os_aws_session *out, const os_aws_assume *in);
void os_aws_session_free(os_aws_session *s);

/* A GCS access token downscoped to the objects under bucket/prefix (read; objectAdmin when
 * write) by a Credential Access Boundary (os_gcs_down.c): cred's service-account token
 * exchanged at sts_url (NULL: https://sts.googleapis.com/v1/token). *out_token is the
 * caller's; *out_exp its expiry (epoch s). DD_EPERM when either exchange is refused. */
int os_gcs_downscoped_token(char **out_token, int64_t *out_exp, const sign_cred *cred,
                            const char *sts_url, const char *bucket, const char *prefix,
                            bool write);

/* The GCS backend at a parsed gs:// location (os_gcs.c): a service account's key
 * (SIGN_CRED_GCP_SA) reads and writes over the JSON API with OAuth 2 tokens; an HMAC key
 * (given as SIGN_CRED_AWS: access id and secret) goes to the S3 backend on the XML API at
 * https://storage.googleapis.com (or the credential's aws_endpoint). */
int os_gcs_open(os_store **out, const sign_location *loc, const sign_cred *cred);

#endif
