/* grpc_test_client.h: a small blocking gRPC client on gRPC core's C API for the tests:
 * one call sends some request messages (raw bytes), half-closes, and collects every
 * response message, the status code and its message. */
#ifndef DD_TESTS_UNIT_GRPC_TEST_CLIENT_H
#define DD_TESTS_UNIT_GRPC_TEST_CLIENT_H

#include <grpc/grpc.h>
#include <protobuf-c/protobuf-c.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tc_opts {
  const char *authorization; /* the "authorization" value; NULL: none */
  const char *echo;          /* "x-echo" value; NULL: none */
  int timeout_ms;            /* 0: no deadline */
  size_t cancel_after;       /* cancel the call after this many responses; 0: never */
  atomic_long *received;     /* if set, incremented per response (watch from a thread) */
} tc_opts;

typedef struct tc_bytes {
  uint8_t *data;
  size_t len;
} tc_bytes;

typedef struct tc_result {
  grpc_status_code status;
  char details[1024];
  tc_bytes *msgs; /* every response message, in order */
  size_t n_msgs;
} tc_result;

/* Calls method on ch with reqs[0..n_reqs). Returns 0, or -1 when the call could not be
 * made at all. Free the result with tc_result_free. */
int tc_call(grpc_channel *ch, const char *method, const tc_opts *o, const tc_bytes *reqs, size_t n_reqs,
            tc_result *out);
void tc_result_free(tc_result *r);

/* Packs msg into a malloc'ed tc_bytes (free data). */
tc_bytes tc_pack(const ProtobufCMessage *msg);

#endif
