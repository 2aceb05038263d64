/* grpc_test_server.c: serves the test method table (grpc_test_methods.h) on
 * 127.0.0.1:<free port> for the Python interop test: prints "port N" on stdout, then runs
 * until stdin reaches end of file, shuts down gracefully and exits 0. */
#include <stdio.h>

#include <grpc/grpc.h>

#include "common/err.h"
#include "server/grpc/grpc_server.h"
#include "tests/unit/grpc/grpc_test_methods.h"

int main(void) {
  dd_grpc_opts o = DD_GRPC_OPTS_INIT;
  o.listen = "127.0.0.1:0";
  o.max_message_bytes = 64u << 10;
  dd_grpc_server *s = NULL;
  if (dd_grpc_server_start(&s, &o, gt_registry()) != 0) {
    fprintf(stderr, "grpc_test_server: %s\n", dd_err_msg());
    return 1;
  }
  printf("port %d\n", dd_grpc_server_port(s));
  fflush(stdout);
  while (getchar() != EOF) {
  }
  dd_grpc_server_free(s);
  return 0;
}
