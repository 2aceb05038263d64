/* sharing_rest.h: the Delta Sharing protocol over REST, served natively (byte for byte as
 * delta-io/delta-sharing PROTOCOL.md says) under <base_path>/shares, beside the admin
 * routes of the catalog-and-sharing spec on the same paths (POST /shares, DELETE
 * /shares/{name}, POST/DELETE /shares/{share}/schemas...), which go to the
 * DeltaSharingExtensionService handlers. */
#ifndef DD_SERVER_HTTP_NATIVE_SHARING_REST_H
#define DD_SERVER_HTTP_NATIVE_SHARING_REST_H

#include "server/http/http_server.h"
#include "server/service/app.h"

/* Registers <base_path>/shares (and the file server, files_rest.h). Call before
 * dd_http_server_start. app must outlive the server. */
int dd_sharing_rest_register(dd_http_server *srv, dd_app *app, const char *base_path);

#endif
