/* sharing_rest.h: the Delta Sharing protocol over REST, served natively (byte for byte as
 * delta-io/delta-sharing PROTOCOL.md says) under <base_path>/shares, beside the admin
 * routes of the catalog-and-sharing spec on the same paths (POST /shares, DELETE
 * /shares/{name}, POST/DELETE /shares/{share}/schemas...), which go to the
 * DeltaSharingExtensionService handlers. A codec (native_int.h): every request runs one
 * method through the call core. */
#ifndef DD_SERVER_HTTP_NATIVE_SHARING_REST_H
#define DD_SERVER_HTTP_NATIVE_SHARING_REST_H

#include "server/http/http_server.h"

/* Registers <base_path>/shares and the signed-file server (files_rest.h) on srv. Call
 * before dd_http_server_start. */
int dd_native_sharing_register(dd_http_server *srv, const char *base_path);

#endif
