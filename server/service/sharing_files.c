/* sharing_files.c: the file side of local signed URLs. A URL names
 * "<share id>.<table id>.<recipient id>.<grant generation>/<path in the table>" and
 * carries expires + sig (store/sign); this checks the signature and expiry first, then,
 * through one catalog read view, that the grant the URL was made under still exists, that
 * the table is still shared and where it lives, then opens the file strictly beneath the
 * table root. Also the protocol's error codes. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "server/service/sharing_files.h"
#include "server/service/sharing_int.h"
#include "store/sharing/shq.h"
#include "store/sign/sign.h"

int dd_sharing_open_file(dd_app *app, const char *raw_path, const char *expires,
                         const char *sig, int64_t now_ms, int *out_fd) {
  char *tid = NULL, *rel = NULL, *root = NULL;
  cat_shared_table *t = NULL;
  cat_view *v = NULL;
  *out_fd = -1;
  int rc = sign_local_split_path(&tid, &rel, raw_path);
  if (rc) return rc;
  if (!expires || !sig) {
    rc = dd_err_set(DD_EPERM, "bad signature");
    goto cleanup;
  }
  rc = sign_local_verify(dd_app_url_key(app), tid, rel, expires, sig, now_ms);
  if (rc) goto cleanup;
  char *part[4] = {tid, NULL, NULL, NULL};
  for (int i = 1; i < 4; i++) {
    char *dot = part[i - 1] ? strchr(part[i - 1], '.') : NULL;
    if (dot) *dot = '\0', part[i] = dot + 1;
  }
  if (!part[3] || strchr(part[3], '.')) {
    rc = dd_err_set(DD_ENOTFOUND, "table not found");
    goto cleanup;
  }
  if ((rc = cat_view_open(dd_app_store(app), &v))) goto cleanup;
  if (strcmp(part[2], "-") != 0) { /* made for a recipient: its grant must be the same */
    char gen[40];
    rc = cat_view_grant_generation(v, part[0], part[2], gen);
    if (!rc && strcmp(gen, part[3]) != 0) rc = DD_ENOTFOUND;
    if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ENOTFOUND, "table not found");
    if (rc) goto cleanup;
  }
  rc = cat_view_share_table_find(v, &t, part[0], part[1]);
  if (!rc) rc = shr_table_root(v, t, &root, NULL);
  cat_view_close(v);
  v = NULL;
  if (!rc) rc = sign_open_under(out_fd, root, rel);
cleanup:
  cat_view_close(v);
  if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
  free(tid);
  free(rel);
  free(root);
  return rc;
}

const char *dd_sharing_error_code(int rc, int *out_status) {
  switch (rc) {
  case DD_ENOTFOUND: *out_status = 404; return "RESOURCE_DOES_NOT_EXIST";
  case DD_EINVAL:
  case DD_ERANGE: *out_status = 400; return "INVALID_PARAMETER_VALUE";
  case DD_EPRECOND:
  case DD_EUNSUPPORTED: *out_status = 400; return shq_error_code(rc);
  case DD_ECORRUPT: *out_status = 400; return "MALFORMED_REQUEST";
  case DD_EUNAUTH: *out_status = 401; return "UNAUTHENTICATED";
  case DD_EPERM: *out_status = 403; return "PERMISSION_DENIED";
  case DD_EEXISTS: *out_status = 409; return "RESOURCE_ALREADY_EXISTS";
  case DD_ECONFLICT: *out_status = 409; return "ABORTED";
  case DD_EIO: *out_status = 503; return "TEMPORARILY_UNAVAILABLE"; /* storage unreachable */
  case DD_ENOMEM: *out_status = 429; return "RESOURCE_EXHAUSTED"; /* limits (req_guard.h) */
  default: *out_status = 500; return "INTERNAL_ERROR";
  }
}
