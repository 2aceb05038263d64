/* s3_presign_print.c: test-only command that prints what sign_s3_presign_req makes for its
 * arguments, so tests/integration/test_s3_sigv4_botocore.py can compare deltad's SigV4
 * presigned URLs with those of AWS's own signer (botocore) for the same inputs.
 *
 * usage: s3_presign_print METHOD REGION BUCKET KEY EPOCH EXPIRES ENDPOINT STYLE
 *                         AKID SECRET TOKEN [NAME=VALUE ...]
 *   ENDPOINT "-" for AWS; STYLE auto|virtual|path; TOKEN "-" for none; each NAME=VALUE is
 *   one sign_s3_param (given sorted by name, as sign_s3_presign_req requires).
 * Output: the URL on the first line, then the canonical request, a line "--STS--", and the
 * string to sign. Exit status 0, or 1 with "error <code>: <message>" on stderr.
 * "s3_presign_print -" reads many requests from stdin instead (see presign_lines), so a
 * test can check hundreds of cases without starting a process for each. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/sign/sign_int.h"

#define MAX_PARAMS 16

static const char *dash_null(const char *s) { return strcmp(s, "-") == 0 ? NULL : s; }

static int parse_style(const char *s, sign_s3_style *out) {
  if (strcmp(s, "auto") == 0) *out = SIGN_S3_STYLE_AUTO;
  else if (strcmp(s, "virtual") == 0) *out = SIGN_S3_STYLE_VIRTUAL;
  else if (strcmp(s, "path") == 0) *out = SIGN_S3_STYLE_PATH;
  else return -1;
  return 0;
}

/* Presigns the request named by the 11+ fields f (see the usage above) and prints it. */
static int presign_one(int n, char **f) {
  if (n < 11 || n - 11 > MAX_PARAMS) return dd_err_set(DD_EINVAL, "need 11 fields + params");
  sign_s3_param ps[MAX_PARAMS];
  size_t np = 0;
  for (int i = 11; i < n; i++) {
    char *eq = strchr(f[i], '=');
    if (!eq) return dd_err_set(DD_EINVAL, "parameter '%s' has no '='", f[i]);
    *eq = '\0';
    ps[np++] = (sign_s3_param){f[i], eq + 1};
  }
  sign_s3_opts o = SIGN_S3_OPTS_INIT;
  o.endpoint = dash_null(f[6]);
  if (parse_style(f[7], &o.style) < 0) return dd_err_set(DD_EINVAL, "bad style '%s'", f[7]);
  sign_aws_creds c = {f[8], f[9], dash_null(f[10])};
  sign_s3_request q = {f[0], ps, np};
  int64_t now = strtoll(f[4], NULL, 10);
  int expires = atoi(f[5]);
  char *url = NULL, *url2 = NULL, *cr = NULL, *sts = NULL;
  int rc = sign_s3_presign_req(&url, &q, &c, f[1], f[2], f[3], now, expires, &o);
  if (rc == 0)
    rc = sign__s3_presign_steps(&url2, &cr, &sts, &q, &c, f[1], f[2], f[3], now, expires, &o);
  if (rc == 0 && strcmp(url, url2) != 0)
    rc = dd_err_set(DD_EINTERNAL, "public and step-wise presign disagree");
  if (rc == 0) printf("%s\n%s\n--STS--\n%s\n", url, cr, sts);
  free(url);
  free(url2);
  free(cr);
  free(sts);
  return rc;
}

/* Batch mode: one request per stdin line, fields separated by tabs; after each request
 * a line "--END--" (or "--ERROR-- <code> <message>"). */
static int presign_lines(void) {
  char line[8192];
  while (fgets(line, sizeof line, stdin)) {
    line[strcspn(line, "\n")] = '\0';
    char *f[11 + MAX_PARAMS + 1];
    int n = 0;
    for (char *save = NULL, *t = line; n < (int)(sizeof f / sizeof f[0]); t = NULL) {
      char *tok = strtok_r(t, "\t", &save);
      if (!tok) break;
      f[n++] = strcmp(tok, "\x01") == 0 ? (char *)"" : tok; /* \x01 stands for "" */
    }
    int rc = presign_one(n, f);
    if (rc) printf("--ERROR-- %d %s\n", rc, dd_err_msg());
    printf("--END--\n");
    fflush(stdout);
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "-") == 0) return presign_lines();
  if (argc < 12) {
    fprintf(stderr, "usage: %s METHOD REGION BUCKET KEY EPOCH EXPIRES ENDPOINT STYLE AKID "
                    "SECRET TOKEN [NAME=VALUE ...]\n       %s -   (requests on stdin)\n",
            argv[0], argv[0]);
    return 2;
  }
  int rc = presign_one(argc - 1, argv + 1);
  if (rc) fprintf(stderr, "error %d: %s\n", rc, dd_err_msg());
  return rc == 0 ? 0 : 1;
}
