/* sign_int.h: internals of dd_sign shared by its files and its unit tests.
 *
 * ---- Local URLs --------------------------------------------------------------------
 * URL:        <base>/files/<pct(table_id)>/<pct(seg1)>/<pct(seg2)>...?expires=<ms>&sig=<s>
 * canonical:  "deltad-local-v1\n" <len(table_id)> ":" table_id "\n"
 *                                 <len(rel_path)> ":" rel_path "\n" <expires as decimal>
 *             (lengths in decimal bytes, so no choice of names can make two different
 *             triples produce the same string)
 * s:          base64url without padding of HMAC-SHA256(key, canonical): 43 characters.
 * pct():      RFC 3986: A-Z a-z 0-9 - . _ ~ kept, every other byte as %XX (upper case).
 *
 * ---- AWS SigV4 query-string auth (S3 presign) --------------------------------------
 * CanonicalRequest = "GET\n" CanonicalURI "\n" CanonicalQuery "\n"
 *                    "host:" host "\n" "\n" "host\n" "UNSIGNED-PAYLOAD"
 * CanonicalURI     = "/" [bucket "/"] UriEncode(key, keep '/')      (path-style bucket)
 * CanonicalQuery   = the X-Amz-* parameters sorted by name, values UriEncode'd ('/'
 *                    encoded): Algorithm, Credential, Date, Expires, [Security-Token],
 *                    SignedHeaders
 * StringToSign     = "AWS4-HMAC-SHA256\n" yyyymmddThhmmssZ "\n" scope "\n" hex(SHA256(CR))
 * scope            = yyyymmdd "/" region "/s3/aws4_request"
 * SigningKey       = HMAC(HMAC(HMAC(HMAC("AWS4" secret, yyyymmdd), region), "s3"),
 *                    "aws4_request");   Signature = hex(HMAC(SigningKey, StringToSign))
 * URL              = scheme "://" host CanonicalURI "?" CanonicalQuery "&X-Amz-Signature=" sig
 *
 * ---- Azure service SAS (blob) -------------------------------------------------------
 * StringToSign (2020-12-06 and later) = sp, st, se, "/blob/<account>/<container>/<blob>",
 *   si, sip, spr, sv, sr, snapshot, ses, rscc, rscd, rsce, rscl, rsct joined by "\n"
 *   (unused fields empty, their newline kept). 2018-11-09: the same without ses.
 *   2015-04-05: without sr, snapshot and ses. A container SAS (sr=c) signs
 *   "/blob/<account>/<container>" with sr "c". sig = base64(HMAC-SHA256(base64-decoded
 *   account key, UTF-8 string-to-sign)), URL-encoded in the query.
 *
 * The tests in tests/unit/sign/ name where each vector comes from. */
#ifndef DD_STORE_SIGN_SIGN_INT_H
#define DD_STORE_SIGN_SIGN_INT_H

#include <stddef.h>
#include <stdint.h>

#include "store/sign/sign.h"

/* ---- growable string (sign_util.c) ------------------------------------------------- */

/* A NUL-terminated growable string. Appends never fail visibly: the first allocation
 * failure sets `failed`, later appends do nothing, and sign__buf_finish reports it. */
typedef struct sign__buf {
  char *p;
  size_t len, cap;
  int failed;
} sign__buf;

#define SIGN__BUF_INIT {NULL, 0, 0, 0}

/* Makes room for extra more bytes (and the NUL): 0, or -1 with `failed` set. */
int sign__buf_reserve(sign__buf *b, size_t extra);
void sign__buf_put(sign__buf *b, const void *s, size_t n);
void sign__buf_puts(sign__buf *b, const char *s);
void sign__buf_printf(sign__buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Appends s percent-encoded (RFC 3986 unreserved kept); keep_slash keeps '/'. */
void sign__buf_pct(sign__buf *b, const char *s, int keep_slash);
/* The same for s[0..n) into out, which has room for 3n bytes; returns the length. */
size_t sign__pct_into(char *out, const char *s, size_t n, int keep_slash);
/* Appends v in decimal. */
void sign__buf_i64(sign__buf *b, int64_t v);
/* Hands the string to *out (0) or frees it and returns DD_ENOMEM. */
int sign__buf_finish(sign__buf *b, char **out);
void sign__buf_free(sign__buf *b);

/* ---- crypto and encodings (sign_util.c) --------------------------------------------- */

#define SIGN__SHA256_LEN 32

/* HMAC-SHA256 through OpenSSL 3 EVP_MAC. Returns 0 or DD_EINTERNAL. */
int sign__hmac_sha256(uint8_t out[SIGN__SHA256_LEN], const void *key, size_t key_len,
                      const void *msg, size_t msg_len);
/* SHA-256 through EVP_Digest. Returns 0 or DD_EINTERNAL. */
int sign__sha256(uint8_t out[SIGN__SHA256_LEN], const void *msg, size_t len);
/* Lower-case hex of n bytes into out (2n+1 bytes). */
void sign__hex(char *out, const uint8_t *in, size_t n);
/* Base64 (standard alphabet, padded) or base64url (no padding) of n bytes into out,
 * which must hold 4*ceil(n/3)+1 bytes. Returns the length written. */
size_t sign__b64(char *out, const uint8_t *in, size_t n, int url);
/* Strict standard base64 decode (padding required, no whitespace). *out is malloc'ed.
 * Returns 0 or DD_EINVAL / DD_ENOMEM. */
int sign__b64_decode(uint8_t **out, size_t *out_len, const char *s);
/* Formats t (epoch seconds, UTC) with strftime-like fmt into out. DD_EINVAL when t is
 * outside years 1970..9999. */
int sign__utc_format(char *out, size_t cap, int64_t t, const char *fmt);

/* ---- paths (sign_resolve.c) ---------------------------------------------------------- */

/* Normalises a relative path: drops empty and "." segments, joins with '/'. DD_EPERM for
 * NULL, absolute paths, ".." segments, or a path with no segment left. */
int sign__rel_normalize(char **out, const char *rel);
/* The same appended to b (DD_EPERM, or DD_ENOMEM once b failed). */
int sign__rel_normalize_into(sign__buf *b, const char *rel);

/* ---- local canonical string (sign_local.c) ------------------------------------------ */

/* The canonical string signed for a local URL (format above); rel_path already normalised. */
int sign__local_canonical(char **out, const char *table_id, const char *rel_path,
                          int64_t expires_ms);

/* ---- SigV4 steps, exposed for the published-vector tests (sign_s3.c) ---------------- */

/* SigningKey for secret, yyyymmdd date, region and service. */
int sign__aws_signing_key(uint8_t out[SIGN__SHA256_LEN], const char *secret,
                          const char *date8, const char *region, const char *service);

/* The presign with its intermediate strings. Each of canonical / string_to_sign may be
 * NULL; what is returned is owned by the caller. */
int sign__s3_presign_steps(char **out_url, char **out_canonical, char **out_string_to_sign,
                           const sign_s3_request *q, const sign_aws_creds *c,
                           const char *region, const char *bucket, const char *key,
                           int64_t now_epoch_s, int expires_s, const sign_s3_opts *opts);

/* ---- Azure steps (sign_azure.c) ------------------------------------------------------ */

/* The service SAS string-to-sign for a resource ("/blob/<account>/<container>[/<blob>]")
 * of kind sr ("b" or "c"); layout by version, see above. */
int sign__azure_sts(char **out, const char *resource, const char *sr, const char *st,
                    const char *se, const char *permissions, const char *version);
/* The service SAS string-to-sign for a blob (layout by version, see above). */
int sign__azure_string_to_sign(char **out, const char *account, const char *container,
                               const char *blob, const char *st, const char *se,
                               const char *permissions, const char *version);

#endif
