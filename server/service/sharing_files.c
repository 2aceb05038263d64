/* sharing_files.c: the file side of local signed URLs. A URL names
 * "<share id>.<table id>.<recipient id>.<grant generation>/<path in the table>" and
 * carries expires + sig (store/sign); this checks the signature and expiry first, then,
 * through one catalog read view, that the grant the URL was made under still exists, that
 * the table is still shared and where it lives, then opens the file strictly beneath the
 * table root; and the method the REST file server runs (OpenFile). */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

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

/* DeltaSharingFileService/OpenFile: the file behind a signed URL, as the call's file reply
 * (the whole file; the REST codec sends the range asked for). A malformed URL is
 * DD_ECORRUPT (the protocol's MALFORMED_REQUEST). */
static int shr_open_file(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__OpenFileRequest *req = (const void *)in;
  struct timespec ts;
  struct stat st;
  int fd = -1;
  (void)out;
  clock_gettime(CLOCK_REALTIME, &ts);
  int rc = dd_sharing_open_file(call->app, req->path, *req->expires ? req->expires : NULL,
                                *req->sig ? req->sig : NULL,
                                (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000, &fd);
  if (rc == DD_EINVAL) return dd_err_set(DD_ECORRUPT, "%s", dd_err_msg());
  if (rc) return rc;
  if (fstat(fd, &st) != 0) {
    close(fd);
    return dd_err_set(DD_EIO, "fstat failed");
  }
  return dd_call_reply_file(call, fd, 0, (uint64_t)st.st_size);
}

/* Over REST the signature is the authorization: the file server runs OpenFile for an
 * unauthenticated caller (server/http/native/files_rest.c). Its flags make gRPC, which
 * cannot send a file anyway, ask for an administrator's token like any other method. */
const dd_method dd_sharing_file_methods[] = {
    {"/deltad.sharing.v1.DeltaSharingFileService/OpenFile",
     &deltad__sharing__v1__open_file_request__descriptor,
     &deltad__sharing__v1__open_file_response__descriptor, shr_open_file, 0},
};
const size_t dd_sharing_file_methods_len = 1;
