/* fuzz_location.c: fuzz target for the parsers of dd_sign with property checks.
 * The input is taken both as a storage location URL and as a percent-encoded relative
 * path. Properties: a parsed location has the fields its kind promises and no ".."
 * segment in its path; signing an object under it never crashes and never yields a URL
 * without the bucket; any relative path accepted by sign_local_url round-trips through
 * the URL text (percent-decoding gives back the normalised path) and verifies. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

#define CHECK(c) \
  do {           \
    if (!(c))    \
      abort();   \
  } while (0)

static int has_dotdot(const char *p) {
  const char *s = p;
  while ((s = strstr(s, "..")) != NULL) {
    if ((s == p || s[-1] == '/') && (s[2] == '\0' || s[2] == '/'))
      return 1;
    s += 2;
  }
  return 0;
}

static void fuzz_location(const char *url) {
  sign_location loc;
  if (sign_parse_location(&loc, url) < 0)
    return;
  CHECK(loc.scheme && loc.path && !has_dotdot(loc.path));
  if (loc.kind == SIGN_LOC_FILE)
    CHECK(loc.path[0] == '/' && !loc.bucket);
  else
    CHECK(loc.bucket && *loc.bucket && loc.path[0] != '/');
  sign_cred c = {0};
  c.kind = loc.kind == SIGN_LOC_AZURE ? SIGN_CRED_AZURE_SAS : SIGN_CRED_AWS;
  c.aws.access_key_id = "AKID";
  c.aws.secret_access_key = "secret";
  c.aws_region = "us-east-1";
  c.azure_account = "acct01";
  c.azure_sas = "sv=2021-08-06&sig=x";
  char *out = NULL;
  if (sign_object_url(&out, &loc, "part-0.parquet", &c, 1700000000, 60) == 0)
    CHECK(out && strstr(out, "part-0.parquet?"));
  free(out);
  sign_location_free(&loc);
}

static void fuzz_local_path(const char *encoded) {
  char *rel = NULL, *norm = NULL, *url = NULL, *back = NULL;
  sign_local_key k;
  memset(&k, 7, sizeof k);
  if (sign_pct_decode(&rel, encoded) < 0)
    return;
  if (sign__rel_normalize(&norm, rel) == 0) {
    CHECK(!has_dotdot(norm) && norm[0] != '/');
    CHECK(sign_local_url(&url, &k, "http://h", "t", rel, 100) == 0);
    const char *p = strstr(url, "/files/t/");
    const char *q = strrchr(url, '?');
    CHECK(p && q && q > p);
    char *enc = strndup(p + 9, (size_t)(q - p - 9));
    CHECK(enc && sign_pct_decode(&back, enc) == 0 && strcmp(back, norm) == 0);
    free(enc);
    const char *sig = strstr(q, "&sig=");
    CHECK(sig && sign_local_verify(&k, "t", back, "100", sig + 5, 99) == 0);
  } else {
    CHECK(sign_local_url(&url, &k, "http://h", "t", rel, 100) == DD_EPERM);
  }
  free(rel);
  free(norm);
  free(url);
  free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > 4096)
    return 0;
  char *s = malloc(size + 1);
  if (!s)
    return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  fuzz_location(s);
  fuzz_local_path(s);
  free(s);
  return 0;
}
