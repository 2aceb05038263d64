/* sign_location.c: storage location URLs (file, s3/s3a/s3n, abfs[s]/wasb[s], az/azure,
 * gs) parsed into kind, bucket or container, account and key prefix; and the dispatcher
 * that signs an object under a location with the location's credential. */
#include "store/sign/sign_int.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/err.h"

#define SIGN__AZURE_CLOCK_SKEW_S 300 /* st is set this far in the past */
#define SIGN__MAX_EXPIRES_S 604800

void sign_location_free(sign_location *loc) {
  if (!loc)
    return;
  free(loc->scheme);
  free(loc->bucket);
  free(loc->account);
  free(loc->endpoint_suffix);
  free(loc->path);
  memset(loc, 0, sizeof *loc);
}

static char *sign__strndup(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

/* ===================== parsing ===================== */

static sign_loc_kind sign__scheme_kind(const char *scheme) {
  static const struct {
    const char *name;
    sign_loc_kind kind;
  } map[] = {{"file", SIGN_LOC_FILE},   {"s3", SIGN_LOC_S3},       {"s3a", SIGN_LOC_S3},
             {"s3n", SIGN_LOC_S3},      {"abfs", SIGN_LOC_AZURE},  {"abfss", SIGN_LOC_AZURE},
             {"wasb", SIGN_LOC_AZURE},  {"wasbs", SIGN_LOC_AZURE}, {"az", SIGN_LOC_AZURE},
             {"azure", SIGN_LOC_AZURE}, {"gs", SIGN_LOC_GCS}};
  for (size_t i = 0; i < sizeof map / sizeof map[0]; i++)
    if (strcmp(scheme, map[i].name) == 0)
      return map[i].kind;
  return 0;
}

/* Decodes and normalises a key prefix: no leading/trailing '/', no ".." segment. */
static int sign__prefix(char **out, const char *raw, size_t n) {
  char *enc = sign__strndup(raw, n), *dec = NULL;
  *out = NULL;
  if (!enc)
    return dd_err_set(DD_ENOMEM, "out of memory");
  int rc = sign_pct_decode(&dec, enc);
  free(enc);
  if (rc < 0)
    return rc;
  const char *p = dec;
  while (*p == '/')
    p++;
  if (!*p) {
    free(dec);
    *out = strdup("");
    return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  }
  rc = sign__rel_normalize(out, p);
  free(dec);
  if (rc == DD_EPERM)
    rc = dd_err_set(DD_EINVAL, "bad path in storage location: '..' is not allowed");
  return rc;
}

/* file:///abs, file:/abs and file://localhost/abs. */
static int sign__parse_file(sign_location *loc, const char *rest) {
  if (strncmp(rest, "//", 2) == 0) {
    rest += 2;
    if (strncmp(rest, "localhost/", 10) == 0)
      rest += 9;
    else if (*rest != '/')
      return dd_err_set(DD_EINVAL, "file location must name a local absolute path");
  }
  if (*rest != '/')
    return dd_err_set(DD_EINVAL, "file location must name an absolute path");
  char *rel = NULL;
  int rc = sign__prefix(&rel, rest, strlen(rest));
  if (rc < 0)
    return rc;
  loc->path = malloc(strlen(rel) + 2);
  if (!loc->path) {
    free(rel);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  strcpy(loc->path, "/");
  strcat(loc->path, rel);
  free(rel);
  return 0;
}

/* Azure authority "container@account.(dfs|blob).<suffix>". */
static int sign__parse_azure_host(sign_location *loc, const char *auth, size_t n) {
  const char *at = memchr(auth, '@', n);
  if (!at || at == auth)
    return dd_err_set(DD_EINVAL, "Azure location needs container@account.<host>");
  const char *host = at + 1;
  size_t hn = n - (size_t)(host - auth);
  const char *dot = memchr(host, '.', hn);
  if (!dot || dot == host)
    return dd_err_set(DD_EINVAL, "Azure location host has no account name");
  const char *svc = dot + 1;
  size_t sn = hn - (size_t)(svc - host);
  const char *suffix;
  if (sn > 4 && (strncmp(svc, "dfs.", 4) == 0 || strncmp(svc, "blob.", 5) == 0))
    suffix = svc + (svc[0] == 'd' ? 4 : 5);
  else
    return dd_err_set(DD_EINVAL, "Azure location host must be <account>.dfs.* or .blob.*");
  loc->bucket = sign__strndup(auth, (size_t)(at - auth));
  loc->account = sign__strndup(host, (size_t)(dot - host));
  loc->endpoint_suffix = sign__strndup(suffix, hn - (size_t)(suffix - host));
  if (!loc->bucket || !loc->account || !loc->endpoint_suffix)
    return dd_err_set(DD_ENOMEM, "out of memory");
  if (!*loc->endpoint_suffix || strchr(loc->endpoint_suffix, ':'))
    return dd_err_set(DD_EINVAL, "Azure location host has a bad suffix");
  return 0;
}

/* "//authority/prefix" of the object-store schemes. */
static int sign__parse_object(sign_location *loc, const char *rest) {
  if (strncmp(rest, "//", 2) != 0)
    return dd_err_set(DD_EINVAL, "storage location needs <scheme>://<bucket>/...");
  rest += 2;
  size_t an = strcspn(rest, "/");
  if (an == 0)
    return dd_err_set(DD_EINVAL, "storage location has no bucket or container");
  int rc;
  int needs_host = loc->kind == SIGN_LOC_AZURE && strcmp(loc->scheme, "az") != 0 &&
                   strcmp(loc->scheme, "azure") != 0;
  if (loc->kind == SIGN_LOC_AZURE && memchr(rest, '@', an)) {
    rc = sign__parse_azure_host(loc, rest, an);
  } else if (needs_host) {
    rc = dd_err_set(DD_EINVAL, "%s location needs container@account.<host>", loc->scheme);
  } else {
    loc->bucket = sign__strndup(rest, an);
    rc = loc->bucket ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
    if (rc == 0 && (strchr(loc->bucket, '@') || strchr(loc->bucket, ':')))
      rc = dd_err_set(DD_EINVAL, "bad bucket '%s' in storage location", loc->bucket);
  }
  if (rc == 0)
    rc = sign__prefix(&loc->path, rest + an, strlen(rest + an));
  return rc;
}

int sign_location_under(char **out_rel, const sign_location *root, const char *url) {
  *out_rel = NULL;
  sign_location loc;
  int rc = sign_parse_location(&loc, url);
  if (rc < 0)
    return rc;
  size_t pl = strlen(root->path);
  int same = loc.kind == root->kind &&
             strcmp(loc.bucket ? loc.bucket : "", root->bucket ? root->bucket : "") == 0 &&
             (!loc.account || !root->account || strcasecmp(loc.account, root->account) == 0);
  const char *rel = loc.path + pl + (pl ? 1 : 0);
  int below = same && strncmp(loc.path, root->path, pl) == 0 &&
              (pl == 0 || loc.path[pl] == '/') && *rel;
  if (!below)
    rc = dd_err_set(DD_EPERM, "file '%s' is outside the shared table", url);
  else if (!(*out_rel = strdup(rel)))
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  sign_location_free(&loc);
  return rc;
}

int sign_parse_location(sign_location *out, const char *url) {
  memset(out, 0, sizeof *out);
  if (!url || !*url)
    return dd_err_set(DD_EINVAL, "empty storage location");
  if (strpbrk(url, "?# \t\r\n"))
    return dd_err_set(DD_EINVAL, "storage location '%s' has a query, fragment or space", url);
  size_t sn = strcspn(url, ":");
  if (url[sn] != ':' || sn == 0 || sn > 8)
    return dd_err_set(DD_EINVAL, "storage location '%s' has no scheme", url);
  out->scheme = sign__strndup(url, sn);
  if (!out->scheme)
    return dd_err_set(DD_ENOMEM, "out of memory");
  for (char *p = out->scheme; *p; p++)
    *p = (char)tolower((unsigned char)*p);
  out->kind = sign__scheme_kind(out->scheme);
  int rc;
  if (!out->kind)
    rc = dd_err_set(DD_EINVAL, "unknown storage scheme '%s'", out->scheme);
  else if (out->kind == SIGN_LOC_FILE)
    rc = sign__parse_file(out, url + sn + 1);
  else
    rc = sign__parse_object(out, url + sn + 1);
  if (rc < 0)
    sign_location_free(out);
  return rc;
}

/* ===================== signing an object under a location ===================== */

static int sign__object_key(char **out, const sign_location *loc, const char *rel_key) {
  char *rel = NULL;
  int rc = sign__rel_normalize(&rel, rel_key);
  if (rc < 0)
    return rc;
  sign__buf b = SIGN__BUF_INIT;
  if (loc->path && *loc->path) {
    sign__buf_puts(&b, loc->path);
    sign__buf_puts(&b, "/");
  }
  sign__buf_puts(&b, rel);
  free(rel);
  return sign__buf_finish(&b, out);
}

static int sign__object_s3(char **out, const sign_location *loc, const char *key,
                           const sign_cred *cred, int64_t now_s, int expires_s) {
  if (cred->kind != SIGN_CRED_AWS)
    return dd_err_set(DD_EINVAL, "an S3 location needs an AWS credential");
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  o.endpoint = cred->aws_endpoint && *cred->aws_endpoint ? cred->aws_endpoint : NULL;
  o.style = cred->aws_style;
  return sign_s3_presign(out, &cred->aws, cred->aws_region, loc->bucket, key, now_s, expires_s,
                         &o);
}

static int sign__object_azure(char **out, const sign_location *loc, const char *key,
                              const sign_cred *cred, int64_t now_s, int expires_s) {
  const char *acct = loc->account ? loc->account : cred->azure_account;
  if (loc->account && cred->azure_account && *cred->azure_account &&
      strcmp(loc->account, cred->azure_account) != 0)
    return dd_err_set(DD_EINVAL, "credential is for Azure account '%s', location is in '%s'",
                      cred->azure_account, loc->account);
  sign_azure_opts o = SIGN_AZURE_OPTS_INIT;
  o.endpoint_suffix = loc->endpoint_suffix;
  o.blob_endpoint = cred->azure_endpoint && *cred->azure_endpoint ? cred->azure_endpoint : NULL;
  switch (cred->kind) {
  case SIGN_CRED_AZURE_KEY: {
    int64_t st = now_s > SIGN__AZURE_CLOCK_SKEW_S ? now_s - SIGN__AZURE_CLOCK_SKEW_S : 0;
    return sign_azure_blob_sas_ex(out, acct, cred->azure_key_b64, loc->bucket, key, st,
                                  now_s + expires_s, "r", SIGN_AZURE_VERSION, &o);
  }
  case SIGN_CRED_AZURE_SAS:
    return sign_azure_with_sas_ex(out, acct, loc->bucket, key, cred->azure_sas, &o);
  case SIGN_CRED_AZURE_CLIENT: {
    if (!cred->azure_udk)
      return dd_err_set(DD_EPRECOND, "signing with an Azure service principal needs a user "
                        "delegation key, and none was fetched");
    int64_t st = now_s > SIGN__AZURE_CLOCK_SKEW_S ? now_s - SIGN__AZURE_CLOCK_SKEW_S : 0;
    return sign_azure_udk_sas(out, acct, cred->azure_udk, loc->bucket, key, st,
                              now_s + expires_s, "r", &o);
  }
  default:
    return dd_err_set(DD_EINVAL, "an Azure location needs an Azure credential");
  }
}

int sign_object_url(char **out, const sign_location *loc, const char *rel_key,
                    const sign_cred *cred, int64_t now_s, int expires_s) {
  char *key = NULL;
  *out = NULL;
  if (!loc || !cred)
    return dd_err_set(DD_EINVAL, "no location or credential");
  if (loc->kind == SIGN_LOC_FILE)
    return dd_err_set(DD_EINVAL, "local files are signed with sign_local_url");
  if (loc->kind == SIGN_LOC_GCS && (cred->kind != SIGN_CRED_GCP_SA || !cred->gcp_private_key))
    return dd_err_set(DD_EUNSUPPORTED, "signing Google Cloud Storage URLs needs a service "
                      "account's key (an HMAC credential cannot sign them here)");
  if (loc->kind != SIGN_LOC_S3 && loc->kind != SIGN_LOC_AZURE && loc->kind != SIGN_LOC_GCS)
    return dd_err_set(DD_EINVAL, "unknown location kind");
  if (expires_s < 1 || expires_s > SIGN__MAX_EXPIRES_S)
    return dd_err_set(DD_EINVAL, "expiry %d is outside 1..%d seconds", expires_s,
                      SIGN__MAX_EXPIRES_S);
  int rc = sign__object_key(&key, loc, rel_key);
  if (rc < 0)
    return rc;
  if (loc->kind == SIGN_LOC_S3)
    rc = sign__object_s3(out, loc, key, cred, now_s, expires_s);
  else if (loc->kind == SIGN_LOC_GCS)
    rc = sign_gcs_v4_url(out, cred->gcs_endpoint, loc->bucket, key, cred->gcp_client_email,
                         cred->gcp_private_key, now_s, expires_s);
  else
    rc = sign__object_azure(out, loc, key, cred, now_s, expires_s);
  free(key);
  return rc;
}
