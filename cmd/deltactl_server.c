/* deltactl_server.c: `deltactl server info|ping`, over deltad.system.v1.SystemService. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cmd/deltactl_common.h"
#include "cmd/deltactl_groups.h"
#include "deltad/system/v1/system.pb-c.h"

#define SYS_SVC "/deltad.system.v1.SystemService/"

static int srv_info(int argc, char **argv) {
  const dctl_opt opts[] = {{NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl server info\n"
                        "  Shows the server version and who the token authenticates as.\n",
                        opts, 0, 0};
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, NULL, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  Deltad__System__V1__GetServerInfoRequest req = DELTAD__SYSTEM__V1__GET_SERVER_INFO_REQUEST__INIT;
  ProtobufCMessage *resp = NULL;
  rc = dctl_call(SYS_SVC "GetServerInfo", &req.base,
                 &deltad__system__v1__get_server_info_response__descriptor, &resp);
  if (!rc) rc = dctl_print_msg(resp);
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc;
}

static double srv__now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int srv_ping(int argc, char **argv) {
  const dctl_opt opts[] = {{NULL, 0, NULL, NULL, NULL}};
  const dctl_cmd cmd = {"usage: deltactl server ping\n"
                        "  Calls the no-op Ping method and prints the round trip time.\n",
                        opts, 0, 0};
  int npos;
  int rc = dctl_parse(&cmd, argc, argv, NULL, &npos);
  if (rc != DCTL_CONTINUE) return rc;
  dd_client *c;
  if ((rc = dctl_client_get(&c))) return rc;
  Deltad__System__V1__PingRequest req = DELTAD__SYSTEM__V1__PING_REQUEST__INIT;
  ProtobufCMessage *resp = NULL;
  double t0 = srv__now_ms();
  rc = dctl_call(SYS_SVC "Ping", &req.base, &deltad__system__v1__ping_response__descriptor, &resp);
  double ms = srv__now_ms() - t0;
  protobuf_c_message_free_unpacked(resp, NULL);
  return rc ? rc : dctl_print_done("pong in %.2f ms", ms);
}

static const dctl_verb srv__verbs[] = {
    {"info", srv_info, "show the server version and the caller's principal"},
    {"ping", srv_ping, "call the no-op Ping method"},
    {NULL, NULL, NULL},
};

int dctl_server_main(int argc, char **argv) {
  return dctl_group_run("server", "Ask the server about itself.", srv__verbs, argc, argv);
}
