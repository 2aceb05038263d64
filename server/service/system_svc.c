/* system_svc.c: deltad.system.v1.SystemService: Ping (does nothing; the benchmark
 * baseline) and GetServerInfo (version and who is calling). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "deltad/system/v1/system.pb-c.h"
#include "server/service/app.h"

static int sys_ping(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)call;
  (void)req;
  Deltad__System__V1__PingResponse *resp = malloc(sizeof *resp);
  if (!resp) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__system__v1__ping_response__init(resp);
  *out = &resp->base;
  return 0;
}

static int sys_info(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  (void)req;
  Deltad__System__V1__GetServerInfoResponse *resp = malloc(sizeof *resp);
  if (!resp) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__system__v1__get_server_info_response__init(resp);
  resp->version = strdup(dd_app_options(call->app)->version);
  resp->principal = strdup(call->principal->name);
  if (!resp->version || !resp->principal) {
    protobuf_c_message_free_unpacked(&resp->base, NULL);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  *out = &resp->base;
  return 0;
}

#define SYS_METHOD(name, fn, in, outd) \
  {"/deltad.system.v1.SystemService/" name, &in, &outd, fn, DD_METHOD_RECIPIENT}

const dd_method dd_system_methods[] = {
    SYS_METHOD("Ping", sys_ping, deltad__system__v1__ping_request__descriptor,
               deltad__system__v1__ping_response__descriptor),
    SYS_METHOD("GetServerInfo", sys_info, deltad__system__v1__get_server_info_request__descriptor,
               deltad__system__v1__get_server_info_response__descriptor),
};
const size_t dd_system_methods_len = sizeof dd_system_methods / sizeof dd_system_methods[0];
