/* call_run.c: dd_call_run, the one launcher of a handler, and what it checks around it:
 * the deadline before and after, a send only from a streaming handler and only of the
 * method's output type, one unary reply; the call's read view bound around a unary
 * handler (call.h, dd_call_view_ops); and the handler's detail and file slots. Also the
 * deadline helpers (grpc-timeout). */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/err.h"
#include "server/call/call.h"
#include "server/call/call_obs.h"

/* The handler's dd_call and what the core keeps beside it (call first: handlers get
 * &ctx->call and the core's callbacks cast back). */
typedef struct call__ctx {
  dd_call call;
  const dd_call_registry *r;
  const dd_method *m;
  const dd_call_sink *sink;
  size_t sent;
  uint64_t bytes; /* protobuf size of what was sent */
  uint64_t memo_bytes; /* a memo hit's protobuf size */
} call__ctx;

int64_t dd_call_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

bool dd_call_deadline_passed(int64_t deadline_ms) {
  return deadline_ms > 0 && dd_call_now_ms() >= deadline_ms;
}

int dd_call_parse_timeout(const char *v, int64_t *deadline_ms) {
  *deadline_ms = 0;
  if (!v) return 0;
  size_t n = strlen(v);
  int64_t amount = 0;
  if (n < 2 || n > 9) return dd_err_set(DD_EINVAL, "grpc-timeout \"%.16s\" is not 1-8 digits and a unit", v);
  for (size_t i = 0; i + 1 < n; i++) {
    if (v[i] < '0' || v[i] > '9') return dd_err_set(DD_EINVAL, "grpc-timeout \"%s\" is not 1-8 digits and a unit", v);
    amount = amount * 10 + (v[i] - '0');
  }
  int64_t ms;
  switch (v[n - 1]) {
  case 'H': ms = amount * 3600000; break;
  case 'M': ms = amount * 60000; break;
  case 'S': ms = amount * 1000; break;
  case 'm': ms = amount; break;
  case 'u': ms = amount / 1000; break;
  case 'n': ms = amount / 1000000; break;
  default: return dd_err_set(DD_EINVAL, "grpc-timeout \"%s\" has no unit (H, M, S, m, u or n)", v);
  }
  *deadline_ms = dd_call_now_ms() + ms;
  return 0;
}

/* ---- the handler's slots ---- */

void dd_call_set_detail(dd_call *call, int detail) { call->detail = detail; }

int dd_call_reply_file(dd_call *call, int fd, uint64_t off, uint64_t len) {
  if (call->has_file) close(call->file_fd);
  call->has_file = fd >= 0;
  call->file_fd = fd;
  call->file_off = off;
  call->file_len = len;
  return fd >= 0 ? 0 : dd_err_set(DD_EINVAL, "file reply without a file");
}

int dd_call_memo(dd_call *call, const void *key, size_t len) {
  return call->memo && !call->memo_hit ? call->memo(call, key, len) : 0;
}

static int call__memo(dd_call *call, const void *key, size_t len) {
  call__ctx *c = (call__ctx *)call;
  if ((c->m->flags & DD_METHOD_STREAMING) || !c->sink->memo) return 0;
  uint64_t pb = 0;
  if (c->sink->memo(c->sink->cls, key, len, &pb) != 1) return 0;
  call->memo_hit = 1;
  c->memo_bytes = pb;
  dd_call__obs_memo_hit(c->r, c->m);
  return 1;
}

/* ---- the callbacks the handler sees ---- */

static const char *call__header(dd_call *call, const char *name) {
  call__ctx *c = (call__ctx *)call;
  return c->sink->header ? c->sink->header(c->sink->cls, name) : NULL;
}

/* The reply is of the method's output type. */
static int call__check_type(const call__ctx *c, const ProtobufCMessage *msg) {
  const ProtobufCMessageDescriptor *want = c->m->output;
  if (msg && msg->descriptor == want) return 0;
  return dd_err_set(DD_EINTERNAL, "handler of %s replied with %s, not %s", c->m->path,
                    msg ? msg->descriptor->name : "nothing", want->name);
}

static int call__deadline(const call__ctx *c, const char *when) {
  if (!dd_call_deadline_passed(c->call.deadline_ms)) return 0;
  return dd_err_set(DD_EDEADLINE, "deadline exceeded %s", when);
}

static void call__count(call__ctx *c, const ProtobufCMessage *msg) {
  c->sent++;
  c->bytes += protobuf_c_message_get_packed_size(msg);
}

static int call__send(dd_call *call, const ProtobufCMessage *msg) {
  call__ctx *c = (call__ctx *)call;
  if (!(c->m->flags & DD_METHOD_STREAMING))
    return dd_err_set(DD_EINTERNAL, "send called by the unary handler of %s", c->m->path);
  int rc = call__check_type(c, msg);
  /* handlers stop on DD_ECANCELLED; dd_call_run reports DD_EDEADLINE once they return */
  if (!rc && dd_call_deadline_passed(c->call.deadline_ms)) rc = dd_err_set(DD_ECANCELLED, "deadline exceeded");
  if (!rc) rc = c->sink->send(c->sink->cls, msg);
  if (!rc) call__count(c, msg);
  return rc;
}

/* ---- the launcher ---- */

/* After a unary handler returned 0: its one reply (a file, or out sent through the sink). */
static int call__reply(call__ctx *c, const ProtobufCMessage *out) {
  if (c->call.has_file) return 0;
  if (c->call.memo_hit) {
    if (out) return dd_err_set(DD_EINTERNAL, "handler of %s replied after a memo hit", c->m->path);
    int rc = call__deadline(c, "while the call ran");
    if (!rc) {
      c->sent++;
      c->bytes += c->memo_bytes;
    }
    return rc;
  }
  int rc = call__check_type(c, out);
  if (!rc) rc = call__deadline(c, "while the call ran");
  if (!rc) rc = c->sink->send(c->sink->cls, out);
  if (!rc) call__count(c, out);
  return rc;
}

int dd_call_run(const dd_call_registry *r, const dd_method *m, const ProtobufCMessage *req,
                const dd_principal *who, int64_t deadline_ms, const dd_call_sink *sink,
                dd_call_result *res) {
  dd_call__span sp;
  dd_call__obs_begin(r, &sp, sink->request_id);
  call__ctx c = {.call = {.request_id = sp.request_id, .method_path = m->path, .principal = who, .deadline_ms = deadline_ms, .app = dd_call_registry_app(r),
                          .send = call__send, .header = call__header, .memo = call__memo, .transport = sink->cls, .file_fd = -1},
                 .r = r, .m = m, .sink = sink};
  *res = (dd_call_result){.file_fd = -1};
  ProtobufCMessage *out = NULL;
  int rc = call__deadline(&c, "before the call ran");
  dd_call_pre_observe_fn pre = dd_call__registry_pre_observer(r);
  if (!rc && pre) pre(&c.call, m, req);
  const dd_call_view_ops *vo = who->view ? dd_call_registry_view_ops(r) : NULL;
  bool bind = vo && !rc && !(m->flags & DD_METHOD_STREAMING);
  if (vo && !bind) vo->done(who->view); /* a stream (long-lived) opens views of its own */
  if (bind) vo->bind(who->view);
  if (!rc) rc = m->fn(&c.call, req, &out);
  if (bind) {
    vo->bind(NULL);
    vo->done(who->view); /* the connection is free before the reply is sent */
  }
  if (rc == DD_ECANCELLED && dd_call_deadline_passed(deadline_ms))
    rc = dd_err_wrap(DD_EDEADLINE, "deadline exceeded");
  if (!rc && !(m->flags & DD_METHOD_STREAMING)) rc = call__reply(&c, out);
  dd_call_observe_fn observe = dd_call__registry_observer(r);
  if (observe) observe(&c.call, m, req, rc ? NULL : out, rc);
  if (out) protobuf_c_message_free_unpacked(out, NULL);
  res->detail = c.call.detail;
  res->sent = c.sent;
  res->bytes = c.bytes + (c.call.has_file && !rc ? c.call.file_len : 0);
  memcpy(res->request_id, sp.request_id, sizeof res->request_id);
  if (c.call.has_file && rc) close(c.call.file_fd);
  else if (c.call.has_file) {
    res->file_fd = c.call.file_fd;
    res->file_off = c.call.file_off;
    res->file_len = c.call.file_len;
  }
  dd_call__obs_end(r, m, who, rc, &sp, res->bytes, res->sent);
  return rc;
}
