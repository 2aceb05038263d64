/* grpc_stream.c: server-streaming calls. The handler runs on a thread of its own, so the
 * worker that was handed the call goes on serving the other calls of its connection (see
 * grpc_int.h); the call was bound to its own pluck queue when its slot was posted, so
 * every batch here is started and then plucked by its tag: each send waits for its SEND_MESSAGE to
 * complete before the next may start (one in flight), and a RECV_CLOSE_ON_SERVER batch
 * started up front tells a send that the client cancelled or the deadline passed. */
#include <pthread.h>
#include <string.h>

#include "common/err.h"
#include "server/grpc/grpc_int.h"

static grpc_event stream__pluck(dd_grpc__call *c, dd_grpc__tag *tag, gpr_timespec until) {
  return grpc_completion_queue_pluck(c->pluck, tag, until, NULL);
}

/* True once the call cannot take more messages: closed (cancelled: the handler has not
 * sent its status yet) or past its deadline. Polls the close batch without waiting. */
static bool stream__gone(dd_grpc__call *c) {
  if (!c->closed && stream__pluck(c, &c->t_close, gpr_inf_past(GPR_CLOCK_MONOTONIC)).type == GRPC_OP_COMPLETE)
    c->closed = true;
  return c->closed || dd_grpc__deadline_passed(c);
}

static int stream__cancelled(dd_grpc__call *c) {
  if (dd_grpc__deadline_passed(c)) return dd_err_set(DD_ECANCELLED, "deadline exceeded");
  return dd_err_set(DD_ECANCELLED, "the call was cancelled");
}

static int stream__send(void *cls, const ProtobufCMessage *msg) {
  dd_grpc__call *c = cls;
  if (stream__gone(c)) return stream__cancelled(c);
  grpc_byte_buffer *bb = NULL;
  int rc = dd_grpc__encode(c, msg, &bb);
  if (rc) return rc;
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  size_t n = 0;
  if (!c->md_sent) ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[n].op = GRPC_OP_SEND_MESSAGE;
  ops[n++].data.send_message.send_message = bb;
  grpc_call_error err = grpc_call_start_batch(c->call, ops, n, &c->t_send, NULL);
  if (err != GRPC_CALL_OK) {
    grpc_byte_buffer_destroy(bb);
    return dd_err_set(DD_EINTERNAL, "cannot send a message (grpc_call_error %d)", (int)err);
  }
  c->md_sent = true;
  grpc_event ev = stream__pluck(c, &c->t_send, gpr_inf_future(GPR_CLOCK_MONOTONIC));
  grpc_byte_buffer_destroy(bb);
  return ev.success ? 0 : stream__cancelled(c);
}

static void stream__serve(dd_grpc__call *c) {
  grpc_op ops[2];
  memset(ops, 0, sizeof ops);
  ops[0].op = GRPC_OP_RECV_CLOSE_ON_SERVER;
  ops[0].data.recv_close_on_server.cancelled = &c->cancelled;
  bool close_started = grpc_call_start_batch(c->call, ops, 1, &c->t_close, NULL) == GRPC_CALL_OK;
  if (!close_started) c->closed = true;

  dd_err_clear();
  int rc = dd_grpc__run(c, stream__send, NULL);

  size_t n = 0;
  memset(ops, 0, sizeof ops);
  if (!c->md_sent) ops[n++].op = GRPC_OP_SEND_INITIAL_METADATA;
  dd_grpc__status_op(c, rc, &ops[n++]);
  if (grpc_call_start_batch(c->call, ops, n, &c->t_status, NULL) == GRPC_CALL_OK)
    stream__pluck(c, &c->t_status, gpr_inf_future(GPR_CLOCK_MONOTONIC));
  if (close_started && !c->closed) stream__pluck(c, &c->t_close, gpr_inf_future(GPR_CLOCK_MONOTONIC));
  dd_grpc__call_free(c);
}

static void *stream__main(void *arg) {
  dd_grpc__call *c = arg;
  dd_grpc_server *s = c->srv;
  stream__serve(c);
  pthread_mutex_lock(&s->mu);
  s->stream_threads--;
  pthread_cond_broadcast(&s->cv);
  pthread_mutex_unlock(&s->mu);
  return NULL;
}

void dd_grpc__serve_stream(dd_grpc__call *c) {
  dd_grpc_server *s = c->srv;
  pthread_attr_t attr;
  pthread_t t;
  bool started = false;
  pthread_mutex_lock(&s->mu);
  s->stream_threads++;
  pthread_mutex_unlock(&s->mu);
  if (pthread_attr_init(&attr) == 0) {
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    started = pthread_create(&t, &attr, stream__main, c) == 0;
    pthread_attr_destroy(&attr);
  }
  if (!started) stream__main(c); /* no thread to be had: serve it here, as before */
}

void dd_grpc__stream_wait_all(dd_grpc_server *s) {
  pthread_mutex_lock(&s->mu);
  while (s->stream_threads > 0) pthread_cond_wait(&s->cv, &s->mu);
  pthread_mutex_unlock(&s->mu);
}
