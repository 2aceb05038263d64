/* grpc_test_client.c: the tests' blocking gRPC client (see the header). Each call has its
 * own pluck completion queue; batches are started and plucked one at a time, except the
 * status, which is requested up front and plucked last. */
#include "tests/unit/grpc/grpc_test_client.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/support/time.h>

enum { TC_STATUS = 1, TC_SEND, TC_CLOSE, TC_RECV };

static grpc_event tc__wait(grpc_completion_queue *cq, intptr_t tag) {
  return grpc_completion_queue_pluck(cq, (void *)tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
}

static bool tc__batch(grpc_call *call, grpc_completion_queue *cq, grpc_op *ops, size_t n, intptr_t tag) {
  if (grpc_call_start_batch(call, ops, n, (void *)tag, NULL) != GRPC_CALL_OK) return false;
  return tc__wait(cq, tag).success != 0;
}

tc_bytes tc_pack(const ProtobufCMessage *msg) {
  tc_bytes b;
  b.len = protobuf_c_message_get_packed_size(msg);
  b.data = malloc(b.len ? b.len : 1);
  protobuf_c_message_pack(msg, b.data);
  return b;
}

static void tc__append(tc_result *r, grpc_byte_buffer *bb) {
  grpc_byte_buffer_reader rd;
  grpc_byte_buffer_reader_init(&rd, bb);
  grpc_slice s = grpc_byte_buffer_reader_readall(&rd);
  grpc_byte_buffer_reader_destroy(&rd);
  r->msgs = realloc(r->msgs, (r->n_msgs + 1) * sizeof *r->msgs);
  tc_bytes *b = &r->msgs[r->n_msgs++];
  b->len = GRPC_SLICE_LENGTH(s);
  b->data = malloc(b->len ? b->len : 1);
  memcpy(b->data, GRPC_SLICE_START_PTR(s), b->len);
  grpc_slice_unref(s);
}

static size_t tc__metadata(const tc_opts *o, grpc_metadata *md) {
  size_t n = 0;
  memset(md, 0, 2 * sizeof *md);
  if (o && o->authorization) {
    md[n].key = grpc_slice_from_static_string("authorization");
    md[n++].value = grpc_slice_from_copied_string(o->authorization);
  }
  if (o && o->echo) {
    md[n].key = grpc_slice_from_static_string("x-echo");
    md[n++].value = grpc_slice_from_copied_string(o->echo);
  }
  return n;
}

static void tc__send_all(grpc_call *call, grpc_completion_queue *cq, const tc_bytes *reqs, size_t n) {
  for (size_t i = 0; i < n; i++) {
    grpc_slice s = grpc_slice_from_copied_buffer((const char *)reqs[i].data, reqs[i].len);
    grpc_byte_buffer *bb = grpc_raw_byte_buffer_create(&s, 1);
    grpc_slice_unref(s);
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_SEND_MESSAGE;
    op.data.send_message.send_message = bb;
    bool ok = tc__batch(call, cq, &op, 1, TC_SEND);
    grpc_byte_buffer_destroy(bb);
    if (!ok) return;
  }
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  tc__batch(call, cq, &op, 1, TC_CLOSE);
}

static void tc__recv_all(grpc_call *call, grpc_completion_queue *cq, const tc_opts *o, tc_result *out) {
  for (;;) {
    grpc_byte_buffer *bb = NULL;
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &bb;
    if (!tc__batch(call, cq, &op, 1, TC_RECV) || !bb) return;
    tc__append(out, bb);
    grpc_byte_buffer_destroy(bb);
    if (o && o->received) atomic_fetch_add(o->received, 1);
    if (o && o->cancel_after && out->n_msgs == o->cancel_after) grpc_call_cancel(call, NULL);
  }
}

int tc_call(grpc_channel *ch, const char *method, const tc_opts *o, const tc_bytes *reqs, size_t n_reqs,
            tc_result *out) {
  memset(out, 0, sizeof *out);
  grpc_completion_queue *cq = grpc_completion_queue_create_for_pluck(NULL);
  gpr_timespec deadline = gpr_inf_future(GPR_CLOCK_REALTIME);
  if (o && o->timeout_ms)
    deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC), gpr_time_from_millis(o->timeout_ms, GPR_TIMESPAN));
  grpc_slice m = grpc_slice_from_copied_string(method);
  grpc_call *call = grpc_channel_create_call(ch, NULL, GRPC_PROPAGATE_DEFAULTS, cq, m, NULL, deadline, NULL);
  grpc_slice_unref(m);

  grpc_metadata md[2];
  grpc_metadata_array initial, trailing;
  grpc_metadata_array_init(&initial);
  grpc_metadata_array_init(&trailing);
  grpc_slice details = grpc_empty_slice();
  grpc_op ops[3];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = tc__metadata(o, md);
  ops[0].data.send_initial_metadata.metadata = md;
  ops[1].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[1].data.recv_initial_metadata.recv_initial_metadata = &initial;
  ops[2].op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  ops[2].data.recv_status_on_client.trailing_metadata = &trailing;
  ops[2].data.recv_status_on_client.status = &out->status;
  ops[2].data.recv_status_on_client.status_details = &details;
  int rc = grpc_call_start_batch(call, ops, 3, (void *)(intptr_t)TC_STATUS, NULL) == GRPC_CALL_OK ? 0 : -1;
  if (rc == 0) {
    tc__send_all(call, cq, reqs, n_reqs);
    tc__recv_all(call, cq, o, out);
    tc__wait(cq, TC_STATUS);
    size_t n = GRPC_SLICE_LENGTH(details);
    if (n >= sizeof out->details) n = sizeof out->details - 1;
    memcpy(out->details, GRPC_SLICE_START_PTR(details), n);
    out->details[n] = '\0';
  }
  grpc_slice_unref(details);
  grpc_metadata_array_destroy(&initial);
  grpc_metadata_array_destroy(&trailing);
  grpc_call_unref(call);
  for (size_t i = 0; i < ops[0].data.send_initial_metadata.count; i++) grpc_slice_unref(md[i].value);
  grpc_completion_queue_shutdown(cq);
  grpc_completion_queue_destroy(cq);
  return rc;
}

void tc_result_free(tc_result *r) {
  for (size_t i = 0; i < r->n_msgs; i++) free(r->msgs[i].data);
  free(r->msgs);
  memset(r, 0, sizeof *r);
}
