/* sign_azure.c: Azure Blob URLs: for reading table files a service SAS for one blob signed
 * with the storage account key, or a stored SAS token appended as it is; for the Azure
 * backend of os_store a container SAS (sr=c) and request URLs with query parameters. ADLS
 * Gen2 (abfss, dfs host) locations are read through the blob endpoint of the same
 * account. The string-to-sign layouts are listed in sign_int.h. */
#include "store/sign/sign_int.h"

#include <openssl/crypto.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define SIGN__AZURE_DEFAULT_SUFFIX "core.windows.net"

/* Storage account names: 3..24 lower-case letters and digits. */
static int sign__account_ok(const char *a) {
  size_t n = a ? strlen(a) : 0;
  if (n < 3 || n > 24)
    return 0;
  for (const char *p = a; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
      return 0;
  return 1;
}

/* Container names: 3..63 of lower-case letters, digits and '-' ("$root" and "$web" too). */
static int sign__container_ok(const char *c) {
  size_t n = c ? strlen(c) : 0;
  if (c && (strcmp(c, "$root") == 0 || strcmp(c, "$web") == 0))
    return 1;
  if (n < 3 || n > 63)
    return 0;
  for (const char *p = c; *p; p++)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '-'))
      return 0;
  return 1;
}

/* A blob endpoint such as Azurite's "http://127.0.0.1:10000/devstoreaccount1": http(s),
 * a host (letters, digits, '.', '-', ':' and [IPv6]: no user information) and an optional
 * plain path; no query, fragment, escapes, blanks or control characters, which would
 * change where a signed URL or its SAS goes. Endpoint suffixes are host names. */
static int sign__azure_endpoint_ok(const char *e, int suffix_only) {
  const char *h = e;
  if (!suffix_only) {
    if (strncmp(e, "https://", 8) == 0)
      h = e + 8;
    else if (strncmp(e, "http://", 7) == 0)
      h = e + 7;
    else
      return 0;
  }
  size_t n = strcspn(h, "/");
  if (n == 0 || n > 253 || (suffix_only && h[n]))
    return 0;
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)h[i];
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '-' || (!suffix_only && (c == ':' || c == '[' || c == ']'))))
      return 0;
  }
  for (const char *p = h + n; *p; p++) {
    unsigned char c = (unsigned char)*p;
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
          c == '.' || c == '-' || c == '_' || c == '~' || c == '/'))
      return 0;
  }
  return 1;
}

static int sign__azure_check(const char *account, const char *container, const char *blob,
                             const sign_azure_opts *opts) {
  if (opts && opts->version != SIGN_AZURE_OPTS_VERSION)
    return dd_err_set(DD_EINVAL, "sign_azure_opts version %u is not %d", opts->version,
                      SIGN_AZURE_OPTS_VERSION);
  /* (the endpoint is not repeated: a mistyped one may carry a password) */
  if (opts && opts->blob_endpoint && !sign__azure_endpoint_ok(opts->blob_endpoint, 0))
    return dd_err_set(DD_EINVAL, "Azure endpoint must be http(s)://host[:port][/path] without "
                      "user information, query, fragment or escapes");
  if (opts && opts->endpoint_suffix && !sign__azure_endpoint_ok(opts->endpoint_suffix, 1))
    return dd_err_set(DD_EINVAL, "Azure endpoint suffix must be a host name");
  if (!sign__account_ok(account))
    return dd_err_set(DD_EINVAL, "bad Azure storage account name '%s'", account ? account : "");
  if (!sign__container_ok(container))
    return dd_err_set(DD_EINVAL, "bad Azure container name '%s'", container ? container : "");
  if (!blob || !*blob || strlen(blob) > 1024)
    return dd_err_set(DD_EINVAL, "bad Azure blob name");
  return 0;
}

/* The blob URL without a query: <endpoint>/<container>/<pct(blob), '/' kept>; the
 * container's URL when blob is "". */
static void sign__azure_url(sign__buf *b, const char *account, const char *container,
                            const char *blob, const sign_azure_opts *opts) {
  if (opts && opts->blob_endpoint) {
    const char *e = opts->blob_endpoint;
    size_t n = strlen(e);
    while (n > 0 && e[n - 1] == '/')
      n--;
    sign__buf_put(b, e, n);
  } else {
    const char *suffix =
        opts && opts->endpoint_suffix ? opts->endpoint_suffix : SIGN__AZURE_DEFAULT_SUFFIX;
    sign__buf_printf(b, "https://%s.blob.%s", account, suffix);
  }
  sign__buf_puts(b, "/");
  sign__buf_pct(b, container, 0);
  if (blob && *blob) {
    sign__buf_puts(b, "/");
    sign__buf_pct(b, blob, 1);
  }
}

/* Versions are YYYY-MM-DD, so they compare as strings. */
static int sign__version_ok(const char *v) {
  if (!v || strlen(v) != 10 || v[4] != '-' || v[7] != '-')
    return 0;
  for (int i = 0; i < 10; i++)
    if (i != 4 && i != 7 && (v[i] < '0' || v[i] > '9'))
      return 0;
  return 1;
}

int sign__azure_sts(char **out, const char *resource, const char *sr, const char *st,
                    const char *se, const char *permissions, const char *version) {
  *out = NULL;
  if (!sign__version_ok(version))
    return dd_err_set(DD_EINVAL, "bad Azure service version '%s'", version ? version : "");
  if (strcmp(version, "2015-04-05") < 0)
    return dd_err_set(DD_EUNSUPPORTED, "Azure SAS version %s is older than 2015-04-05",
                      version);
  sign__buf b = SIGN__BUF_INIT;
  /* sp, st, se, canonicalizedResource, si, sip, spr, sv */
  sign__buf_printf(&b, "%s\n%s\n%s\n%s\n\n\n\n%s\n", permissions, st, se, resource, version);
  if (strcmp(version, "2018-11-09") >= 0)
    sign__buf_printf(&b, "%s\n\n", sr); /* sr, signedSnapshotTime */
  if (strcmp(version, "2020-12-06") >= 0)
    sign__buf_puts(&b, "\n"); /* signedEncryptionScope */
  sign__buf_puts(&b, "\n\n\n\n"); /* rscc, rscd, rsce, rscl, then rsct (empty, last) */
  return sign__buf_finish(&b, out);
}

int sign__azure_string_to_sign(char **out, const char *account, const char *container,
                               const char *blob, const char *st, const char *se,
                               const char *permissions, const char *version) {
  sign__buf r = SIGN__BUF_INIT;
  *out = NULL;
  sign__buf_printf(&r, "/blob/%s/%s/%s", account, container, blob);
  char *res = NULL;
  int rc = sign__buf_finish(&r, &res);
  if (rc == 0)
    rc = sign__azure_sts(out, res, "b", st, se, permissions, version);
  free(res);
  return rc;
}

/* "racwd..." style: non-empty, lower-case letters, no letter twice. */
static int sign__perms_ok(const char *p) {
  if (!p || !*p || strlen(p) > 26)
    return 0;
  for (const char *q = p; *q; q++)
    if (*q < 'a' || *q > 'z' || strchr(q + 1, *q))
      return 0;
  return 1;
}

/* HMAC-SHA256 of sts with the base64 account key, as base64 in sig (45 bytes). */
static int sign__azure_sig(char sig[48], const char *account_key_b64, const char *sts) {
  uint8_t *key = NULL, mac[SIGN__SHA256_LEN];
  size_t key_len = 0;
  int rc = sign__b64_decode(&key, &key_len, account_key_b64 ? account_key_b64 : "");
  if (rc < 0)
    return dd_err_wrap(DD_EINVAL, "Azure account key is not valid base64");
  rc = sign__hmac_sha256(mac, key, key_len, sts, strlen(sts));
  OPENSSL_cleanse(key, key_len);
  free(key);
  if (rc < 0)
    return rc;
  sign__b64(sig, mac, sizeof mac, 0);
  return 0;
}

/* Appends "sv=&st=&se=&sr=&sp=&sig=" of a service SAS on resource ("/blob/<account>/
 * <container>[/<blob>]") to b. start_s <= 0 omits st. */
static int sign__azure_sas_query(sign__buf *b, const char *account_key_b64,
                                 const char *resource, const char *sr, int64_t start_s,
                                 int64_t expiry_s, const char *permissions,
                                 const char *version) {
  char st[24] = "", se[24], sig[48];
  char *sts = NULL;
  int rc;
  if (!sign__perms_ok(permissions))
    return dd_err_set(DD_EINVAL, "bad SAS permissions '%s'", permissions ? permissions : "");
  if (start_s > 0 && start_s >= expiry_s)
    return dd_err_set(DD_EINVAL, "SAS start is not before its expiry");
  if (start_s > 0 && (rc = sign__utc_format(st, sizeof st, start_s, "%Y-%m-%dT%H:%M:%SZ")) < 0)
    return rc;
  if ((rc = sign__utc_format(se, sizeof se, expiry_s, "%Y-%m-%dT%H:%M:%SZ")) < 0)
    return rc;
  rc = sign__azure_sts(&sts, resource, sr, st, se, permissions, version);
  if (rc == 0)
    rc = sign__azure_sig(sig, account_key_b64, sts);
  free(sts);
  if (rc < 0)
    return rc;
  sign__buf_printf(b, "sv=%s", version);
  if (*st) {
    sign__buf_puts(b, "&st=");
    sign__buf_pct(b, st, 0);
  }
  sign__buf_puts(b, "&se=");
  sign__buf_pct(b, se, 0);
  sign__buf_printf(b, "&sr=%s&sp=%s&sig=", sr, permissions);
  sign__buf_pct(b, sig, 0);
  return 0;
}

int sign_azure_blob_sas_ex(char **out, const char *account, const char *account_key_b64,
                           const char *container, const char *blob, int64_t start_s,
                           int64_t expiry_s, const char *permissions, const char *version,
                           const sign_azure_opts *opts) {
  sign__buf r = SIGN__BUF_INIT, b = SIGN__BUF_INIT;
  char *res = NULL;
  *out = NULL;
  int rc = sign__azure_check(account, container, blob, opts);
  if (rc < 0)
    return rc;
  sign__buf_printf(&r, "/blob/%s/%s/%s", account, container, blob);
  if ((rc = sign__buf_finish(&r, &res)) < 0)
    return rc;
  sign__azure_url(&b, account, container, blob, opts);
  sign__buf_puts(&b, "?");
  rc = sign__azure_sas_query(&b, account_key_b64, res, "b", start_s, expiry_s, permissions,
                             version);
  free(res);
  if (rc < 0) {
    sign__buf_free(&b);
    return rc;
  }
  return sign__buf_finish(&b, out);
}

int sign_azure_container_sas(char **out, const char *account, const char *account_key_b64,
                             const char *container, int64_t start_s, int64_t expiry_s,
                             const char *permissions, const char *version) {
  sign__buf r = SIGN__BUF_INIT, b = SIGN__BUF_INIT;
  char *res = NULL;
  *out = NULL;
  int rc = sign__azure_check(account, container, "-", NULL);
  if (rc < 0)
    return rc;
  sign__buf_printf(&r, "/blob/%s/%s", account, container);
  if ((rc = sign__buf_finish(&r, &res)) < 0)
    return rc;
  rc = sign__azure_sas_query(&b, account_key_b64, res, "c", start_s, expiry_s, permissions,
                             version);
  free(res);
  if (rc < 0) {
    sign__buf_free(&b);
    return rc;
  }
  return sign__buf_finish(&b, out);
}

int sign_azure_request_url(char **out, const char *account, const char *container,
                           const char *blob, const sign_azure_param *params, size_t nparams,
                           const char *sas_query, const sign_azure_opts *opts) {
  *out = NULL;
  int rc = sign__azure_check(account, container, blob && *blob ? blob : "-", opts);
  if (rc < 0)
    return rc;
  if (sas_query && *sas_query == '?')
    sas_query++;
  if (sas_query && (!*sas_query || strpbrk(sas_query, "# \t\r\n?")))
    return dd_err_set(DD_EINVAL, "bad SAS token");
  sign__buf b = SIGN__BUF_INIT;
  sign__azure_url(&b, account, container, blob, opts);
  sign__buf_puts(&b, "?");
  for (size_t i = 0; i < nparams; i++) {
    sign__buf_puts(&b, params[i].name);
    sign__buf_puts(&b, "=");
    sign__buf_pct(&b, params[i].value, 0);
    if (i + 1 < nparams || sas_query) sign__buf_puts(&b, "&");
  }
  if (sas_query) sign__buf_puts(&b, sas_query);
  else if (!nparams) b.len--; /* no query at all: drop the '?' */
  return sign__buf_finish(&b, out);
}

int sign_azure_blob_sas(char **out, const char *account, const char *account_key_b64,
                        const char *container, const char *blob, int64_t start_s,
                        int64_t expiry_s, const char *permissions, const char *version) {
  return sign_azure_blob_sas_ex(out, account, account_key_b64, container, blob, start_s,
                                expiry_s, permissions, version, NULL);
}

int sign_azure_with_sas_ex(char **out, const char *account, const char *container,
                           const char *blob, const char *sas_token,
                           const sign_azure_opts *opts) {
  *out = NULL;
  int rc = sign__azure_check(account, container, blob, opts);
  if (rc < 0)
    return rc;
  if (sas_token && *sas_token == '?')
    sas_token++;
  if (!sas_token || !*sas_token || strpbrk(sas_token, "# \t\r\n?"))
    return dd_err_set(DD_EINVAL, "bad SAS token");
  sign__buf b = SIGN__BUF_INIT;
  sign__azure_url(&b, account, container, blob, opts);
  sign__buf_puts(&b, "?");
  sign__buf_puts(&b, sas_token);
  return sign__buf_finish(&b, out);
}

int sign_azure_with_sas(char **out, const char *account, const char *container,
                        const char *blob, const char *sas_token) {
  return sign_azure_with_sas_ex(out, account, container, blob, sas_token, NULL);
}

/* ---- user delegation SAS (a service principal's key) ---- */

/* A key field as the SAS carries it: non-empty, no characters a query or the
 * string-to-sign could be confused by. */
static int sign__udk_field_ok(const char *v) {
  return v && *v && strlen(v) < 128 && !strpbrk(v, "\n\r&=?# ");
}

int sign_azure_udk_sas(char **out, const char *account, const sign_azure_udk *k,
                       const char *container, const char *blob, int64_t start_s,
                       int64_t expiry_s, const char *permissions, const sign_azure_opts *opts) {
  *out = NULL;
  int rc = sign__azure_check(account, container, blob, opts);
  if (rc < 0)
    return rc;
  if (!k || !sign__udk_field_ok(k->oid) || !sign__udk_field_ok(k->tid) ||
      !sign__udk_field_ok(k->start) || !sign__udk_field_ok(k->expiry) ||
      !sign__udk_field_ok(k->service) || !sign__version_ok(k->version) || !k->value_b64)
    return dd_err_set(DD_EINVAL, "incomplete Azure user delegation key");
  if (!sign__perms_ok(permissions))
    return dd_err_set(DD_EINVAL, "bad SAS permissions '%s'", permissions ? permissions : "");
  char st[24], se[24], sig[48];
  if ((rc = sign__utc_format(st, sizeof st, start_s, "%Y-%m-%dT%H:%M:%SZ")) < 0 ||
      (rc = sign__utc_format(se, sizeof se, expiry_s, "%Y-%m-%dT%H:%M:%SZ")) < 0)
    return rc;
  if (start_s >= expiry_s || strcmp(se, k->expiry) > 0) /* same layout: compares as times */
    return dd_err_set(DD_EINVAL, "the SAS would outlive its user delegation key (%s)", k->expiry);
  sign__buf sts = SIGN__BUF_INIT;
  /* sp, st, se, canonicalizedResource, skoid, sktid, skt, ske, sks, skv, saoid, suoid,
   * scid, sip, spr, sv, sr, signedSnapshotTime, ses, rscc, rscd, rsce, rscl, rsct */
  sign__buf_printf(&sts, "%s\n%s\n%s\n/blob/%s/%s/%s\n%s\n%s\n%s\n%s\n%s\n%s\n\n\n\n\n\n%s\nb\n\n\n\n\n\n\n",
                   permissions, st, se, account, container, blob, k->oid, k->tid, k->start,
                   k->expiry, k->service, k->version, SIGN_AZURE_VERSION);
  char *text = NULL;
  if ((rc = sign__buf_finish(&sts, &text)) < 0)
    return rc;
  rc = sign__azure_sig(sig, k->value_b64, text);
  free(text);
  if (rc < 0)
    return dd_err_wrap(rc, "the user delegation key");
  sign__buf b = SIGN__BUF_INIT;
  sign__azure_url(&b, account, container, blob, opts);
  sign__buf_printf(&b, "?sv=%s&st=", SIGN_AZURE_VERSION);
  sign__buf_pct(&b, st, 0);
  sign__buf_puts(&b, "&se=");
  sign__buf_pct(&b, se, 0);
  const char *names[] = {"skoid", "sktid", "skt", "ske", "sks", "skv"};
  const char *vals[] = {k->oid, k->tid, k->start, k->expiry, k->service, k->version};
  for (int i = 0; i < 6; i++) {
    sign__buf_printf(&b, "&%s=", names[i]);
    sign__buf_pct(&b, vals[i], 0);
  }
  sign__buf_printf(&b, "&sr=b&sp=%s&sig=", permissions);
  sign__buf_pct(&b, sig, 0);
  return sign__buf_finish(&b, out);
}
