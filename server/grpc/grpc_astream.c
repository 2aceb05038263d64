/* grpc_astream.c: the asynchronous streams, which hold no thread while they wait:
 * grpc.health.v1.Health/Watch (the current status once, then open until the client goes
 * away or the server shuts down) and grpc.reflection.v1alpha reflection (bidirectional:
 * each request message gets one reply; the client's half-close ends it with OK).
 *
 * Each call counts its outstanding batches in refs under its mu; completions arrive on
 * its worker's queue only, but shutdown (another thread) may add a final status, so every
 * change happens under mu. The call sits in the server's stream list from its start until
 * refs reach 0 (see grpc_int.h for the lock order). */
#include <stdlib.h>
#include <string.h>

#include <grpc/byte_buffer_reader.h>

#include "common/err.h"
#include "grpc/health/v1/health.pb-c.h"
#include "server/grpc/grpc_int.h"

/* ---- batches and the stream list ---- */

/* Starts a batch and counts it; c->mu held (or the call not yet shared). */
static bool as__start(dd_grpc__call *c, grpc_op *ops, size_t n, dd_grpc__tag *tag) {
  if (grpc_call_start_batch(c->call, ops, n, tag, NULL) != GRPC_CALL_OK) return false;
  c->refs++;
  return true;
}

static void as__send_status(dd_grpc__call *c, grpc_op *status_op) {
  c->status_sent = true;
  as__start(c, status_op, 1, &c->t_status);
}

/* Ends the stream for shutdown; c->mu held. */
static void as__end_locked(dd_grpc__call *c) {
  if (c->finished || c->status_sent || c->closed) return;
  grpc_op op;
  dd_grpc__status_op_code(c, GRPC_STATUS_UNAVAILABLE, "the server is shutting down", &op);
  as__send_status(c, &op);
}

static void as__link(dd_grpc__call *c) {
  dd_grpc_server *s = c->srv;
  pthread_mutex_lock(&s->mu);
  c->prev = NULL;
  c->next = s->streams;
  if (s->streams) s->streams->prev = c;
  s->streams = c;
  if (atomic_load(&s->stopping)) { /* shutdown already walked the list */
    pthread_mutex_lock(&c->mu);
    as__end_locked(c);
    pthread_mutex_unlock(&c->mu);
  }
  pthread_mutex_unlock(&s->mu);
}

static void as__unlink(dd_grpc__call *c) {
  dd_grpc_server *s = c->srv;
  pthread_mutex_lock(&s->mu);
  if (c->prev) c->prev->next = c->next;
  else s->streams = c->next;
  if (c->next) c->next->prev = c->prev;
  pthread_mutex_unlock(&s->mu);
}

void dd_grpc__astream_end_all(dd_grpc_server *s) {
  pthread_mutex_lock(&s->mu);
  for (dd_grpc__call *c = s->streams; c; c = c->next) {
    pthread_mutex_lock(&c->mu);
    as__end_locked(c);
    pthread_mutex_unlock(&c->mu);
  }
  pthread_mutex_unlock(&s->mu);
}

/* Starts the stream's first batches (first, then RECV_CLOSE) and shares the call. */
static void as__begin(dd_grpc__call *c, grpc_op *first, size_t n_first, dd_grpc__tag *first_tag) {
  pthread_mutex_init(&c->mu, NULL);
  c->has_mu = true;
  c->md_sent = true;
  as__start(c, first, n_first, first_tag);
  grpc_op close;
  memset(&close, 0, sizeof close);
  close.op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  close.data.recv_close_on_server.cancelled = &c->cancelled;
  as__start(c, &close, 1, &c->t_close);
  if (c->refs == 0) {
    dd_grpc__call_free(c);
    return;
  }
  as__link(c); /* completions run on this thread, after we return: no race with them */
}

/* A call that fails before its stream starts: one batch, freed on T_DONE. */
static void as__fail(dd_grpc__call *c, int rc) {
  grpc_op ops[3];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  dd_grpc__status_op(c, rc, &ops[1]);
  ops[2].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[2].data.recv_close_on_server.cancelled = &c->cancelled;
  if (grpc_call_start_batch(c->call, ops, 3, &c->t_done, NULL) != GRPC_CALL_OK) dd_grpc__call_free(c);
}

/* ---- health Watch ---- */

static int as__watch_reply(dd_grpc__call *c) {
  ProtobufCMessage *req = NULL;
  int rc = dd_grpc__ctx_init(c);
  if (!rc) rc = dd_grpc__decode(c, &req);
  if (rc) return rc;
  Grpc__Health__V1__HealthCheckResponse resp = GRPC__HEALTH__V1__HEALTH_CHECK_RESPONSE__INIT;
  resp.status = dd_grpc__health_status(c->srv, ((Grpc__Health__V1__HealthCheckRequest *)req)->service);
  protobuf_c_message_free_unpacked(req, NULL);
  return dd_grpc__encode(c, &resp.base, &c->send_bb);
}

void dd_grpc__serve_watch(dd_grpc__call *c) {
  dd_err_clear();
  int rc = as__watch_reply(c);
  if (rc) {
    as__fail(c, rc);
    return;
  }
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = c->send_bb;
  as__begin(c, ops, 2, &c->t_send);
}

/* ---- reflection ---- */

static void as__recv(dd_grpc__call *c) {
  if (c->status_sent || c->closed) return;
  grpc_op op;
  memset(&op, 0, sizeof op);
  op.op = GRPC_OP_RECV_MESSAGE;
  op.data.recv_message.recv_message = &c->recv_bb;
  as__start(c, &op, 1, &c->t_recv);
}

void dd_grpc__serve_reflect(dd_grpc__call *c) {
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[1].op = GRPC_OP_RECV_MESSAGE;
  ops[1].data.recv_message.recv_message = &c->recv_bb;
  as__begin(c, ops, 2, &c->t_recv);
}

static int as__reflect_reply(grpc_byte_buffer *bb, grpc_byte_buffer **out) {
  grpc_byte_buffer_reader r;
  if (!grpc_byte_buffer_reader_init(&r, bb))
    return dd_err_set(DD_EINVAL, "malformed request: cannot decompress the message");
  grpc_slice req = grpc_byte_buffer_reader_readall(&r);
  grpc_byte_buffer_reader_destroy(&r);
  uint8_t *buf = NULL;
  size_t len = 0;
  int rc = dd_grpc__reflection_reply(GRPC_SLICE_START_PTR(req), GRPC_SLICE_LENGTH(req), &buf, &len);
  grpc_slice_unref(req);
  if (rc) return rc;
  grpc_slice s = grpc_slice_new(buf, len, free);
  *out = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return 0;
}

/* A RECV_MESSAGE completed; c->mu held. */
static void as__received(dd_grpc__call *c, bool ok) {
  grpc_byte_buffer *bb = c->recv_bb;
  c->recv_bb = NULL;
  grpc_op op;
  memset(&op, 0, sizeof op);
  if (!ok || c->status_sent || c->closed) {
    if (bb) grpc_byte_buffer_destroy(bb);
    return;
  }
  if (!bb) { /* the client half-closed: done */
    dd_grpc__status_op(c, 0, &op);
    as__send_status(c, &op);
    return;
  }
  dd_err_clear();
  int rc = as__reflect_reply(bb, &c->send_bb);
  grpc_byte_buffer_destroy(bb);
  if (rc) {
    dd_grpc__status_op(c, rc, &op);
    as__send_status(c, &op);
    return;
  }
  op.op = GRPC_OP_SEND_MESSAGE;
  op.data.send_message.send_message = c->send_bb;
  if (!as__start(c, &op, 1, &c->t_send)) {
    grpc_byte_buffer_destroy(c->send_bb);
    c->send_bb = NULL;
  }
}

/* ---- completions ---- */

void dd_grpc__astream_event(dd_grpc__call *c, dd_grpc__op op, bool ok) {
  pthread_mutex_lock(&c->mu);
  switch (op) {
  case DD_GRPC__T_SEND:
    grpc_byte_buffer_destroy(c->send_bb);
    c->send_bb = NULL;
    if (ok && c->method->kind == DD_GRPC__K_REFLECT) as__recv(c);
    break;
  case DD_GRPC__T_RECV: as__received(c, ok); break;
  case DD_GRPC__T_CLOSE: c->closed = true; break;
  default: break;
  }
  bool done = --c->refs == 0;
  if (done) c->finished = true;
  pthread_mutex_unlock(&c->mu);
  if (done) {
    as__unlink(c);
    dd_grpc__call_free(c);
  }
}
