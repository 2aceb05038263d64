/* lance_rest.h: the Lance Namespace REST protocol on deltad's HTTP port (no base path, as
 * the spec's default): /v1/namespace/{id}/{create,list,describe,drop,exists,table/list} and
 * /v1/table/{id}/{register,describe,exists,drop,deregister}. Each request becomes the
 * deltad.lance.v1 request message and goes to the same handler the gRPC service runs
 * (dd_lance_methods); replies and errors are the Lance JSON bodies, with the Lance error
 * code of docs/lance.md. Other Lance operations answer Unsupported (406, code 0). */
#ifndef DD_SERVER_HTTP_NATIVE_LANCE_REST_H
#define DD_SERVER_HTTP_NATIVE_LANCE_REST_H

#include "server/http/http_server.h"
#include "server/service/lance_svc.h"

/* Registers the native handlers for "/v1/namespace/" and "/v1/table" on s (before
 * dd_http_server_start). app is the dd_app given to the handlers as dd_call.app. */
int lance_rest_register(dd_http_server *s, void *app);

/* The Lance error code (docs/lance.md) for a failed operation: the handler's DD_E* code and
 * what it was about. This is the one place where Lance codes are chosen. */
int lance_rest_error_code(int dd_code, lance_subject subject);
/* The HTTP status the Lance REST spec gives a Lance error code. */
int lance_rest_http_status(int lance_code);

#endif
