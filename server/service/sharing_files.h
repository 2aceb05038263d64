/* sharing_files.h: what the native Delta Sharing REST adapters (server/http/native/) need
 * from the sharing service besides its handler table: opening the file behind a signed
 * local URL, and the reference server's error codes. */
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

/* The Delta Sharing errorCode for a DD_E* code from the sharing handlers, and its HTTP
 * status in *out_status (e.g. RESOURCE_DOES_NOT_EXIST / 404). */
const char *dd_sharing_error_code(int rc, int *out_status);

#endif
