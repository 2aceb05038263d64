/* os_remote.c: os_open_url, which opens the backend a table URL names (local, S3, Azure, GCS). */
#include "store/objstore/os_remote.h"

#include "common/err.h"

int os_open_url(os_store **out, const char *url, const sign_cred *cred) {
  *out = NULL;
  if (url[0] == '/') return os_local_open(out, url);
  sign_location loc;
  int rc = sign_parse_location(&loc, url);
  if (rc) return rc;
  switch (loc.kind) {
    case SIGN_LOC_FILE: rc = os_local_open(out, loc.path); break;
    case SIGN_LOC_S3: rc = os_s3_open(out, &loc, cred); break;
    case SIGN_LOC_AZURE: rc = os_azure_open(out, &loc, cred); break;
    case SIGN_LOC_GCS: rc = os_gcs_open(out, &loc, cred); break;
    default:
      rc = dd_err_set(DD_EUNSUPPORTED, "reading tables at %s (%s) is not supported yet", url,
                      loc.scheme);
      break;
  }
  sign_location_free(&loc);
  return rc;
}
