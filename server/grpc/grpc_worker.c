/* grpc_worker.c: request slots and the worker loop. A worker waits on its completion
 * queue, re-posts a slot for every call that arrives (before serving it, so the number of
 * pending requests per method stays constant) and dispatches each completion by the kind
 * of its method and the op of its tag (see grpc_int.h). */
#include <stdlib.h>

#include "common/err.h"
#include "server/grpc/grpc_int.h"

static void worker__tags(dd_grpc__call *c) {
  dd_grpc__tag *tags[] = {&c->t_new, &c->t_done, &c->t_send, &c->t_recv, &c->t_close, &c->t_status};
  dd_grpc__op ops[] = {DD_GRPC__T_NEW,  DD_GRPC__T_DONE,  DD_GRPC__T_SEND,
                       DD_GRPC__T_RECV, DD_GRPC__T_CLOSE, DD_GRPC__T_STATUS};
  for (size_t i = 0; i < sizeof tags / sizeof tags[0]; i++) {
    tags[i]->op = ops[i];
    tags[i]->call = c;
  }
}

int dd_grpc__post(dd_grpc__worker *w, const dd_grpc__method *method) {
  dd_grpc__call *c = calloc(1, sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  c->srv = w->srv;
  c->w = w;
  c->method = method;
  worker__tags(c);
  grpc_metadata_array_init(&c->md);
  grpc_call_error err;
  if (!method) {
    grpc_call_details_init(&c->details);
    err = grpc_server_request_call(w->srv->gs, &c->call, &c->details, &c->md, w->cq, w->cq, &c->t_new);
  } else {
    /* A streaming call's batches complete on its own pluck queue (grpc_int.h). */
    grpc_completion_queue *bound = w->cq;
    if (method->kind == DD_GRPC__K_STREAM) {
      if (!(c->pluck = grpc_completion_queue_create_for_pluck(NULL))) {
        dd_grpc__call_free(c);
        return dd_err_set(DD_EINTERNAL, "cannot create a completion queue");
      }
      bound = c->pluck;
    }
    grpc_byte_buffer **payload = method->kind == DD_GRPC__K_REFLECT ? NULL : &c->payload;
    err = grpc_server_request_registered_call(w->srv->gs, method->handle, &c->call, &c->deadline, &c->md,
                                              payload, bound, w->cq, &c->t_new);
  }
  if (err != GRPC_CALL_OK) {
    dd_grpc__call_free(c);
    return dd_err_set(DD_EINTERNAL, "cannot request a call (grpc_call_error %d)", (int)err);
  }
  return 0;
}

void dd_grpc__call_free(dd_grpc__call *c) {
  if (!c) return;
  if (c->call) grpc_call_unref(c->call);
  if (c->pluck) { /* every batch of the call was plucked */
    grpc_completion_queue_shutdown(c->pluck);
    grpc_completion_queue_destroy(c->pluck);
  }
  grpc_metadata_array_destroy(&c->md);
  if (!c->method) grpc_call_details_destroy(&c->details);
  if (c->payload) grpc_byte_buffer_destroy(c->payload);
  if (c->send_bb) grpc_byte_buffer_destroy(c->send_bb);
  if (c->recv_bb) grpc_byte_buffer_destroy(c->recv_bb);
  if (c->has_status_details) grpc_slice_unref(c->status_details);
  if (c->has_mu) pthread_mutex_destroy(&c->mu);
  rg_release(&c->admit);
  free(c->hdr);
  free(c->memo_key.data);
  free(c);
}

/* Whether a matched call of m posts one slot more (grpc_int.h, Slots): true until the
 * method holds prepost_max slots a worker. */
static bool worker__grow(dd_grpc_server *s, const dd_grpc__method *m) {
  dd_grpc__method *mm = &s->methods[m - s->methods]; /* the server's own, mutable */
  int limit = (mm->prepost_max - mm->prepost) * s->n_workers;
  int g = atomic_load(&mm->grown);
  while (g < limit)
    if (atomic_compare_exchange_weak(&mm->grown, &g, g + 1)) return true;
  return false;
}

static void worker__serve(dd_grpc__worker *w, dd_grpc__call *c) {
  /* Keep the slot count: a new request for this method before this call is served (and
   * one more while the method grows). After shutdown began, a post fails harmlessly (its
   * slot comes back !ok). */
  if (!atomic_load(&w->srv->stopping)) {
    (void)dd_grpc__post(w, c->method);
    if (c->method && worker__grow(w->srv, c->method)) (void)dd_grpc__post(w, c->method);
  }
  if (atomic_load(&w->srv->draining)) {
    dd_grpc__serve_refused(c);
    return;
  }
  switch (c->method ? c->method->kind : DD_GRPC__K_UNKNOWN) {
  case DD_GRPC__K_UNARY: dd_grpc__serve_unary(c); break;
  case DD_GRPC__K_STREAM: dd_grpc__serve_stream(c); break;
  case DD_GRPC__K_WATCH: dd_grpc__serve_watch(c); break;
  case DD_GRPC__K_REFLECT: dd_grpc__serve_reflect(c); break;
  case DD_GRPC__K_UNKNOWN: dd_grpc__serve_unknown(c); break;
  }
}

static void worker__dispatch(dd_grpc__worker *w, dd_grpc__tag *t, bool ok) {
  dd_grpc__call *c = t->call;
  switch (t->op) {
  case DD_GRPC__T_NEW:
    if (ok) worker__serve(w, c);
    else dd_grpc__call_free(c); /* the server is shutting down */
    break;
  case DD_GRPC__T_DONE: dd_grpc__call_free(c); break;
  case DD_GRPC__T_SEND:
  case DD_GRPC__T_RECV:
  case DD_GRPC__T_CLOSE:
  case DD_GRPC__T_STATUS: dd_grpc__astream_event(c, t->op, ok); break;
  case DD_GRPC__T_SHUTDOWN: break; /* never on a worker queue */
  }
}

void *dd_grpc__worker_main(void *arg) {
  dd_grpc__worker *w = arg;
  for (;;) {
    grpc_event ev = grpc_completion_queue_next(w->cq, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
    if (ev.type == GRPC_QUEUE_SHUTDOWN) break;
    if (ev.type == GRPC_OP_COMPLETE) worker__dispatch(w, ev.tag, ev.success != 0);
  }
  return NULL;
}
