/* files_rest.h: deltad serving the data files of local shared tables at the signed,
 * expiring URLs the sharing protocol hands out (<base_path>/files/<table>/<path>?expires=
 * &sig=), with single-range requests (206, Content-Range, Accept-Ranges). A URL that is
 * expired, altered or points outside its table gets 403 and nothing is read. A codec
 * (native_int.h) of the method DeltaSharingFileService/OpenFile, whose handler answers
 * with the open file (dd_call_reply_file). */
#ifndef DD_SERVER_HTTP_NATIVE_FILES_REST_H
#define DD_SERVER_HTTP_NATIVE_FILES_REST_H

#include "server/http/http_server.h"

int dd_native_files_register(dd_http_server *srv, const char *base_path);

#endif
