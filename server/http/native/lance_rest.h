/* lance_rest.h: the Lance Namespace REST protocol on deltad's HTTP port (no base path, as
 * the spec's default): /v1/namespace/{id}/{create,list,describe,drop,exists,table/list} and
 * /v1/table/{id}/{register,describe,exists,drop,deregister}. A codec (native_int.h): each
 * request becomes the deltad.lance.v1 request message and runs the NamespaceService method
 * gRPC runs; replies and errors are the Lance JSON bodies, with the Lance error code of
 * docs/lance.md (dd_call_status_lance). Other Lance operations answer Unsupported (406,
 * code 0). */
#ifndef DD_SERVER_HTTP_NATIVE_LANCE_REST_H
#define DD_SERVER_HTTP_NATIVE_LANCE_REST_H

#include "server/http/http_server.h"

/* Registers the codec for "/v1/namespace/" and "/v1/table" on s (before
 * dd_http_server_start). */
int dd_native_lance_register(dd_http_server *s);

#endif
