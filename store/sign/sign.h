/* sign.h: URL signing for Delta Sharing file URLs (library dd_sign, prefix sign_).
 *
 * Four jobs, one file each under store/sign/:
 *   sign_local.c     deltad serves table files itself: HMAC-SHA256 signed URLs with a
 *                    32-byte key kept in the data directory; sign_resolve.c maps a
 *                    verified relative path to a file strictly under the table root.
 *   sign_s3.c        AWS Signature Version 4 presigned GET URLs (query-string auth).
 *   sign_azure.c     Azure Blob service SAS (account key) or a stored SAS token.
 *   sign_location.c  storage location URLs (file, s3, abfss, az, gs) and a dispatcher
 *                    that signs an object under a location with a credential.
 *
 * Conventions: every function returns 0 or a negative DD_E* code with dd_err_msg() set.
 * Every char ** output is a heap string owned by the caller (free it with free()); on
 * failure *out is left NULL. Times are explicit arguments (no hidden clock) so the
 * functions are pure and testable. All functions are thread-safe: they keep no state.
 *
 * The formats and the published vectors they are tested against are described in
 * sign_int.h. */
#ifndef DD_STORE_SIGN_SIGN_H
#define DD_STORE_SIGN_SIGN_H

#include <stddef.h>
#include <stdint.h>

#include "common/buf.h"

/* ===================== local signed URLs ===================== */

#define SIGN_LOCAL_KEY_LEN 32

/* The HMAC key for local URLs. A plain struct so callers keep it on the stack or in
 * their server object; treat the bytes as secret (never log them). */
typedef struct sign_local_key {
  uint8_t k[SIGN_LOCAL_KEY_LEN];
} sign_local_key;

/* Loads the 32-byte key at path, or creates it (random, mode 0600, created atomically:
 * written to a temporary file then linked into place, so two processes racing both end
 * up with the winner's key). Refuses a key file that group or others may access
 * (DD_EPRECOND, "chmod 600" in the message), a file that is not a regular file or is a
 * symlink (DD_EPRECOND), and a file whose size is not 32 bytes (DD_ECORRUPT). */
int sign_local_key_load_or_create(sign_local_key *out, const char *path);
/* As sign_local_key_load_or_create with the same checks, but never creates: a missing
 * file is DD_EPRECOND naming it (replicas share one key file made beforehand). */
int sign_local_key_load(sign_local_key *out, const char *path);

/* Builds BASE/files/<table_id>/<rel_path>?expires=<ms>&sig=<sig>: table_id and every
 * segment of rel_path are percent-encoded (RFC 3986 unreserved characters kept), sig is
 * base64url (no padding) of HMAC-SHA256(key, canonical string; see sign_int.h).
 * rel_path is the file's path relative to the table root as it is on the file system
 * (a Delta add.path is a URI: decode it first). It is normalised ("a//./b" -> "a/b");
 * ".." segments, absolute paths and empty paths are refused with DD_EPERM. A trailing
 * '/' on base_url is ignored. */
int sign_local_url(char **out, const sign_local_key *key, const char *base_url,
                   const char *table_id, const char *rel_path, int64_t expires_at_ms);

/* The URLs of many files of one table with one expiry (a sharing query's): exactly those
 * sign_local_url makes, with the fixed parts and the HMAC's key blocks computed once
 * (sign_local_batch.c). Arguments and errors as sign_local_url's. Read-only once made:
 * threads may share one. */
typedef struct sign_local_batch sign_local_batch;
int sign_local_batch_new(sign_local_batch **out, const sign_local_key *key, const char *base_url,
                         const char *table_id, int64_t expires_at_ms);
/* Appends rel_path's URL to out as a JSON string (quoted, escaped). */
int sign_local_batch_put_json(const sign_local_batch *b, dd_buf *out, const char *rel_path);
void sign_local_batch_free(sign_local_batch *b);

/* Checks a local URL's parts (already percent-decoded): returns 0, DD_EPERM
 * "bad signature" (wrong key, any altered part, malformed expires or sig; compared in
 * constant time) or DD_EPERM "URL expired" (now_ms >= expires). The signature is checked
 * before the expiry. rel_path gets the same normalisation as in sign_local_url; after a
 * 0 return, map it to a file with sign_resolve_under(). */
int sign_local_verify(const sign_local_key *key, const char *table_id, const char *rel_path,
                      const char *expires, const char *sig, int64_t now_ms);

/* Splits the raw (still percent-encoded) path of a local URL after ".../files/", i.e.
 * "<table_id>/<rel_path>", into the decoded table id and relative path to hand to
 * sign_local_verify. DD_EINVAL for a missing part or a malformed escape (or %00). The
 * expires and sig query values need no decoding (digits and base64url). */
int sign_local_split_path(char **out_table_id, char **out_rel_path, const char *path);

/* Resolves rel_path under table_root to an absolute, symlink-free path in *out_abs.
 * Refuses (DD_EPERM) absolute paths, ".." segments, and any path whose realpath is not
 * strictly under realpath(table_root) (a symlink escaping the table). DD_ENOTFOUND when
 * the root or the file does not exist. Note: the check is done at call time; a caller
 * that opens the file later should open it with O_NOFOLLOW. */
int sign_resolve_under(char **out_abs, const char *table_root, const char *rel_path);

/* Opens rel_path under table_root for reading and returns the descriptor in *out_fd. The
 * kernel keeps the resolution beneath the root (openat2 RESOLVE_BENEATH), atomically with
 * the open, so a symlink swapped in after sign_resolve_under's check cannot escape;
 * stricter than sign_resolve_under in that any symlink climbing out of the root, even to
 * come back in, and absolute symlinks are refused. DD_EPERM for escapes, ".." and absolute
 * paths, DD_ENOTFOUND for a missing file or one that is not a regular file. On kernels
 * without openat2 it falls back to sign_resolve_under + open(O_NOFOLLOW). */
int sign_open_under(int *out_fd, const char *table_root, const char *rel_path);

/* Strict percent-decoding of a URL path component: refuses malformed escapes and %00
 * (DD_EINVAL). '+' is kept as '+'. Useful when a transport hands over raw paths. */
int sign_pct_decode(char **out, const char *s);

/* ===================== AWS SigV4 presigned URLs ===================== */

typedef struct sign_aws_creds {
  const char *access_key_id;
  const char *secret_access_key;
  const char *session_token; /* NULL or "": none; else sent as X-Amz-Security-Token */
} sign_aws_creds;

typedef enum {
  SIGN_S3_STYLE_AUTO = 0, /* virtual-hosted on AWS unless the bucket is not DNS-safe
                             (dots, upper case, '_'); path-style on a custom endpoint */
  SIGN_S3_STYLE_VIRTUAL,  /* https://<bucket>.<host>/<key> */
  SIGN_S3_STYLE_PATH      /* https://<host>/<bucket>/<key> */
} sign_s3_style;

typedef struct sign_s3_opts {
  unsigned version;
  const char *endpoint; /* NULL: https://s3.<region>.amazonaws.com (.com.cn for cn-*);
                           else "scheme://host[:port]" of a MinIO-like store */
  sign_s3_style style;
} sign_s3_opts;

#define SIGN_S3_OPTS_VERSION 1
#define SIGN_S3_OPTS_INIT {SIGN_S3_OPTS_VERSION, NULL, SIGN_S3_STYLE_AUTO}

/* A presigned GET URL for s3://bucket/key valid for expires_s seconds (1..604800) from
 * now_epoch_s: UNSIGNED-PAYLOAD, signed header "host". The key is URI-encoded once with
 * '/' kept (S3 does not normalise or double-encode object paths). opts may be NULL. */
int sign_s3_presign(char **out, const sign_aws_creds *c, const char *region,
                    const char *bucket, const char *key, int64_t now_epoch_s, int expires_s,
                    const sign_s3_opts *opts);

/* One extra query parameter of a presigned request (the value is percent-encoded here). */
typedef struct sign_s3_param {
  const char *name; /* a lower-case letter first ("list-type", "uploadId"); sorted by name */
  const char *value;
} sign_s3_param;

typedef struct sign_s3_request {
  const char *method; /* "GET", "HEAD", "PUT" or "DELETE" */
  const sign_s3_param *params;
  size_t nparams;
} sign_s3_request;

/* A presigned URL for any S3 request, as sign_s3_presign but with q's method and extra
 * query parameters signed too; key may be "" for bucket requests (ListObjectsV2). The
 * caller sends exactly that method and URL; other headers it adds are not signed. */
int sign_s3_presign_req(char **out, const sign_s3_request *q, const sign_aws_creds *c,
                        const char *region, const char *bucket, const char *key,
                        int64_t now_epoch_s, int expires_s, const sign_s3_opts *opts);

/* ===================== AWS SigV4 in the Authorization header ===================== */

/* A request to sign with header authentication (sign_aws.c), for AWS services such as STS. */
typedef struct sign_aws_v4_request {
  const char *method;       /* "POST", "GET" */
  const char *host;         /* the Host header as sent: "sts.us-east-1.amazonaws.com[:port]" */
  const char *path;         /* canonical URI, "/" for STS */
  const char *query;        /* canonical query string (sorted, encoded), "" or NULL for none */
  const char *content_type; /* signed when not NULL */
  const void *body;
  size_t body_len;
} sign_aws_v4_request;

typedef struct sign_aws_v4_signed_out {
  char amz_date[17];   /* X-Amz-Date: yyyymmddThhmmssZ */
  char *authorization; /* the Authorization header's value; owned */
} sign_aws_v4_signed_out;

/* Signs q at now_s for region and service: send "X-Amz-Date: <amz_date>", "Authorization:
 * <authorization>", the content type and, when c has a session token,
 * "X-Amz-Security-Token: <token>". DD_EINVAL for missing parts or control characters in a
 * header value. Free with sign_aws_v4_signed_free (also after an error). */
int sign_aws_v4_signed(sign_aws_v4_signed_out *out, const sign_aws_v4_request *q,
                       const sign_aws_creds *c, const char *region, const char *service,
                       int64_t now_s);
void sign_aws_v4_signed_free(sign_aws_v4_signed_out *s);

/* ===================== Azure Blob SAS ===================== */

typedef struct sign_azure_opts {
  unsigned version;
  const char *endpoint_suffix; /* NULL: "core.windows.net" (e.g. "core.chinacloudapi.cn") */
  const char *blob_endpoint;   /* NULL: https://<account>.blob.<suffix>; else a full base URL
                                  such as Azurite's "http://127.0.0.1:10000/devstoreaccount1" */
} sign_azure_opts;

#define SIGN_AZURE_OPTS_VERSION 1
#define SIGN_AZURE_OPTS_INIT {SIGN_AZURE_OPTS_VERSION, NULL, NULL}

/* https://<account>.blob.core.windows.net/<container>/<blob>?sv=&st=&se=&sr=b&sp=&sig=
 * A service SAS for one blob signed with the account key (base64, as the portal shows
 * it). start_s <= 0 omits st. permissions: e.g. "r". version: a service version, e.g.
 * "2020-12-06"; the string-to-sign layouts of 2015-04-05, 2018-11-09 and 2020-12-06
 * (and later) are implemented, older versions give DD_EUNSUPPORTED. */
int sign_azure_blob_sas(char **out, const char *account, const char *account_key_b64,
                        const char *container, const char *blob, int64_t start_s,
                        int64_t expiry_s, const char *permissions, const char *version);
int sign_azure_blob_sas_ex(char **out, const char *account, const char *account_key_b64,
                           const char *container, const char *blob, int64_t start_s,
                           int64_t expiry_s, const char *permissions, const char *version,
                           const sign_azure_opts *opts);

/* The blob URL with a stored SAS token appended (a leading '?' on the token is ignored). */
int sign_azure_with_sas(char **out, const char *account, const char *container,
                        const char *blob, const char *sas_token);
int sign_azure_with_sas_ex(char **out, const char *account, const char *container,
                           const char *blob, const char *sas_token,
                           const sign_azure_opts *opts);

/* The service version deltad signs SASes with and sends as x-ms-version. */
#define SIGN_AZURE_VERSION "2020-12-06"

/* A service SAS for a whole container (sr=c), as a query string without '?'
 * ("sv=&st=&se=&sr=c&sp=&sig="), to append to any request on that container's blobs or on
 * the container itself (List Blobs). Same rules as sign_azure_blob_sas; permissions in the
 * service's order, e.g. "rcwdl". */
int sign_azure_container_sas(char **out, const char *account, const char *account_key_b64,
                             const char *container, int64_t start_s, int64_t expiry_s,
                             const char *permissions, const char *version);

/* One query parameter of a Blob service request (the value is percent-encoded here). */
typedef struct sign_azure_param {
  const char *name; /* "restype", "comp", "prefix", "delimiter", "marker" */
  const char *value;
} sign_azure_param;

/* The URL of a Blob service request: <endpoint>/<container>[/<pct(blob)>]?<params>&<sas>;
 * blob NULL or "" names the container itself. sas_query (a leading '?' is ignored) is a SAS
 * made by sign_azure_container_sas or a stored token; NULL for a request that authenticates
 * with an OAuth bearer token instead (no SAS; "" is refused). */
int sign_azure_request_url(char **out, const char *account, const char *container,
                           const char *blob, const sign_azure_param *params, size_t nparams,
                           const char *sas_query, const sign_azure_opts *opts);

/* A user delegation key (Get User Delegation Key, asked for with a service principal's
 * OAuth token): the fields the service returned, times as it wrote them
 * ("2026-12-02T10:00:00Z"), and the key (base64). Borrowed strings. */
typedef struct sign_azure_udk {
  const char *oid, *tid;           /* SignedOid, SignedTid */
  const char *start, *expiry;      /* SignedStart, SignedExpiry */
  const char *service, *version;   /* SignedService ("b"), SignedVersion */
  const char *value_b64;           /* Value: the HMAC key */
} sign_azure_udk;

/* https://<account>.blob.<suffix>/<container>/<blob>?sv=&st=&se=&skoid=&sktid=&skt=&ske=
 * &sks=&skv=&sr=b&sp=&sig=: a user delegation SAS for one blob, version
 * SIGN_AZURE_VERSION (the 2020-12-06 string-to-sign with the key's fields). The SAS must
 * end by the key's expiry (DD_EINVAL otherwise). */
int sign_azure_udk_sas(char **out, const char *account, const sign_azure_udk *key,
                       const char *container, const char *blob, int64_t start_s,
                       int64_t expiry_s, const char *permissions, const sign_azure_opts *opts);

/* ===================== storage locations ===================== */

typedef enum {
  SIGN_LOC_FILE = 1, /* file:///abs/path */
  SIGN_LOC_S3,       /* s3://, s3a://, s3n:// */
  SIGN_LOC_AZURE,    /* abfs[s]://c@a.dfs.<suffix>/p, wasb[s]://c@a.blob.<suffix>/p,
                        az://c/p, azure://c/p (account from the credential) */
  SIGN_LOC_GCS       /* gs://bucket/prefix: parsed, not signable */
} sign_loc_kind;

typedef struct sign_location {
  sign_loc_kind kind;
  char *scheme;          /* lower case as written: "s3a", "abfss", "file" */
  char *bucket;          /* S3/GCS bucket or Azure container; NULL for file */
  char *account;         /* Azure account when the URL names it; else NULL */
  char *endpoint_suffix; /* Azure: "core.windows.net" when the URL names a host; else NULL */
  char *path;            /* file: absolute path, normalised, no trailing '/';
                            others: key prefix without leading or trailing '/', may be "" */
} sign_location;

/* Parses a storage location URL. DD_EINVAL for anything malformed or an unknown scheme.
 * On success free the members with sign_location_free(). */
int sign_parse_location(sign_location *out, const char *url);
/* When url (an absolute URL, e.g. a path in a Delta log) names an object below root (same
 * kind and bucket or container, same account when both name one, strictly under root's
 * path), *out_rel gets its path relative to root (the caller's to free); else DD_EPERM
 * "file ... is outside the shared table". DD_EINVAL when url does not parse. */
int sign_location_under(char **out_rel, const sign_location *root, const char *url);
/* Frees the members of loc (not loc itself) and zeroes it. Accepts NULL. */
void sign_location_free(sign_location *loc);

typedef enum {
  SIGN_CRED_NONE = 0,
  SIGN_CRED_AWS,       /* aws + aws_region (+ optional endpoint and style) */
  SIGN_CRED_AZURE_KEY, /* azure_account + azure_key_b64 */
  SIGN_CRED_AZURE_SAS, /* azure_account + azure_sas */
  SIGN_CRED_AZURE_CLIENT, /* service principal (client secret): OAuth tokens; URLs are
                             signed with a user delegation key (azure_udk) */
  SIGN_CRED_GCP_SA        /* gcp_key_json: a service account's JSON key (GCS JSON API) */
} sign_cred_kind;

/* A credential as stored in the catalog (deltad.credentials.v1), borrowed strings. */
typedef struct sign_cred {
  sign_cred_kind kind;
  sign_aws_creds aws;
  const char *aws_region;
  const char *aws_endpoint; /* optional custom endpoint (MinIO) */
  sign_s3_style aws_style;
  const char *azure_account;
  const char *azure_key_b64;
  const char *azure_sas;
  const char *azure_endpoint; /* NULL: https://<account>.blob.<suffix>; else a full blob base
                                 URL such as Azurite's "http://127.0.0.1:10000/devstoreaccount1" */
  const char *azure_tenant, *azure_client_id, *azure_client_secret; /* AZURE_CLIENT */
  const char *azure_authority; /* NULL: https://login.microsoftonline.com (AZURE_AUTHORITY_HOST) */
  const sign_azure_udk *azure_udk; /* AZURE_CLIENT: the key to sign URLs with (os_azure_udk) */
  const char *gcp_key_json;   /* SIGN_CRED_GCP_SA (the store reads with it) ... */
  const char *gcp_client_email, *gcp_private_key; /* ... and its parts, to sign URLs */
  const char *gcs_endpoint;   /* NULL: https://storage.googleapis.com; else an emulator's base */
} sign_cred;

/* A presigned GET URL for the object <loc->path>/<rel_key>, valid from now_s for
 * expires_s seconds: S3 SigV4, Azure SAS, GCS V4 (sign_gcs_v4_url, with a service
 * account's email and key). File locations are signed with sign_local_url (DD_EINVAL),
 * Azure service principals without a user delegation key in cred->azure_udk give
 * DD_EPRECOND, GCS without a service account DD_EUNSUPPORTED; a
 * credential of the wrong kind or for another Azure account gives DD_EINVAL. */
int sign_object_url(char **out, const sign_location *loc, const char *rel_key,
                    const sign_cred *cred, int64_t now_s, int expires_s);

/* A Cloud Storage V4 signed GET URL (GOOG4-RSA-SHA256, sign_gcs.c) of bucket/key at
 * endpoint (NULL: https://storage.googleapis.com), signed with the PEM private key of the
 * service account email, valid from now_s for expires_s seconds. */
int sign_gcs_v4_url(char **out, const char *endpoint, const char *bucket, const char *key,
                    const char *email, const char *pem, int64_t now_s, int expires_s);
/* RSASSA-PKCS1-v1_5 with SHA-256 of the string msg under the PEM private key: *out
 * (malloc'ed, *out_len bytes). DD_EINVAL when pem is not a private key. */
int sign_rs256(uint8_t **out, size_t *out_len, const char *pem, const char *msg);

#endif
