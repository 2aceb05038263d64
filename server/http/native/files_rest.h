/* files_rest.h: deltad serving the data files of local shared tables at the signed,
 * expiring URLs the sharing protocol hands out (<base_path>/files/<table>/<path>?expires=
 * &sig=), with single-range requests (206, Content-Range, Accept-Ranges). A URL that is
 * expired, altered or points outside its table gets 403 and nothing is read. */
#ifndef DD_SERVER_HTTP_NATIVE_FILES_REST_H
#define DD_SERVER_HTTP_NATIVE_FILES_REST_H

#include "server/http/http_server.h"
#include "server/service/app.h"

int dd_files_rest_register(dd_http_server *srv, dd_app *app, const char *base_path);

#endif
