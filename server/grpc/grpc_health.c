/* grpc_health.c: grpc.health.v1.Health, the standard health-checking service. The server
 * and every service in its method table are SERVING until shutdown begins (then
 * NOT_SERVING); other names are unknown: Check answers NOT_FOUND, Watch sends
 * SERVICE_UNKNOWN and stays open, as the health-checking protocol says. Check is an
 * ordinary unary handler; Watch is served asynchronously by grpc_astream.c. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "grpc/health/v1/health.pb-c.h"
#include "server/grpc/grpc_int.h"

int dd_grpc__health_status(dd_grpc_server *s, const char *service) {
  bool known = !service || !*service;
  for (size_t i = 0; i < s->n_services && !known; i++) known = strcmp(s->services[i], service) == 0;
  if (!known) return GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN;
  if (atomic_load(&s->stopping)) return GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__NOT_SERVING;
  return GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVING;
}

static int health_check(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out) {
  const dd_grpc__call *c = call->transport;
  const char *service = ((const Grpc__Health__V1__HealthCheckRequest *)req)->service;
  int status = dd_grpc__health_status(c->srv, service);
  if (status == GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__SERVING_STATUS__SERVICE_UNKNOWN)
    return dd_err_set(DD_ENOTFOUND, "unknown service '%s'", service);
  Grpc__Health__V1__HealthCheckResponse *resp = malloc(sizeof *resp);
  if (!resp) return dd_err_set(DD_ENOMEM, "out of memory");
  grpc__health__v1__health_check_response__init(resp);
  resp->status = status;
  *out = &resp->base;
  return 0;
}

const dd_method dd_grpc__health_check_method = {
    "/grpc.health.v1.Health/Check", &grpc__health__v1__health_check_request__descriptor,
    &grpc__health__v1__health_check_response__descriptor, health_check, DD_METHOD_PUBLIC};

/* Served by dd_grpc__serve_watch, not through fn. */
const dd_method dd_grpc__health_watch_method = {
    "/grpc.health.v1.Health/Watch", &grpc__health__v1__health_check_request__descriptor,
    &grpc__health__v1__health_check_response__descriptor, NULL,
    DD_METHOD_PUBLIC | DD_METHOD_STREAMING};
