/* sharing_files.h: the file side of local signed URLs: opening the file behind one, and
 * the method that answers with it (DeltaSharingFileService/OpenFile, served natively by
 * server/http/native/files_rest.c). */
#ifndef DD_SERVER_SERVICE_SHARING_FILES_H
#define DD_SERVER_SERVICE_SHARING_FILES_H

#include "server/service/app.h"

/* Checks a local file URL (raw_path: what follows ".../files/", still percent-encoded;
 * expires and sig: its query values) and opens the file read-only into *out_fd.
 * DD_EPERM when the signature is wrong, the URL expired or the path leaves the table
 * (nothing is read then); DD_ENOTFOUND when the table is no longer shared or the file is
 * gone; DD_EINVAL for a malformed path. now_ms is the clock. */
int dd_sharing_open_file(dd_app *app, const char *raw_path, const char *expires,
                         const char *sig, int64_t now_ms, int *out_fd);

/* DeltaSharingFileService (in dd_app_methods). */
extern const dd_method dd_sharing_file_methods[];
extern const size_t dd_sharing_file_methods_len;

#endif
