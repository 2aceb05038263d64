/* grpc_call.c: what every call needs around the call core (call.h): request metadata
 * copied into NUL-terminated strings, the deadline in epoch ms, authentication through
 * dd_call_authenticate, request decoding (bounded by req_guard.h), dd_call_run with a
 * sink that packs each reply, and the status op; and the two fully asynchronous paths:
 * unary methods and methods nobody registered. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <grpc/byte_buffer_reader.h>
#include <grpc/slice.h>
#include <grpc/support/time.h>

#include "common/err.h"
#include "server/grpc/grpc_int.h"

/* ---- the call's context ---- */

static const char *call__header(void *cls, const char *name) {
  dd_grpc__call *c = cls;
  for (size_t i = 0; i < c->n_hdr; i++)
    if (strcasecmp(c->hdr[2 * i], name) == 0) return c->hdr[2 * i + 1];
  return NULL;
}

/* Copies the request metadata (slices are not NUL-terminated) into one allocation:
 * a pointer array (name, value, name, value, ...) followed by the strings. */
static int call__copy_headers(dd_grpc__call *c) {
  size_t n = c->md.count, bytes = 2 * n * sizeof(char *);
  for (size_t i = 0; i < n; i++)
    bytes += GRPC_SLICE_LENGTH(c->md.metadata[i].key) + GRPC_SLICE_LENGTH(c->md.metadata[i].value) + 2;
  if (n == 0) return 0;
  if (!(c->hdr = malloc(bytes))) return dd_err_set(DD_ENOMEM, "out of memory");
  char *p = (char *)(c->hdr + 2 * n);
  for (size_t i = 0; i < n; i++) {
    const grpc_slice *kv[2] = {&c->md.metadata[i].key, &c->md.metadata[i].value};
    for (int j = 0; j < 2; j++) {
      size_t len = GRPC_SLICE_LENGTH(*kv[j]);
      memcpy(p, GRPC_SLICE_START_PTR(*kv[j]), len);
      p[len] = '\0';
      c->hdr[2 * i + j] = p;
      p += len + 1;
    }
  }
  c->n_hdr = n;
  return 0;
}

static bool call__no_deadline(gpr_timespec d) {
  return gpr_time_cmp(d, gpr_inf_future(d.clock_type)) == 0;
}

/* The call core's deadlines are dd_call_now_ms() (CLOCK_MONOTONIC) milliseconds: what is
 * left of gRPC's deadline, added to that clock, so no wall-clock step reaches it. */
static int64_t call__deadline_ms(gpr_timespec d) {
  if (call__no_deadline(d)) return 0;
  int64_t now = dd_call_now_ms();
  if (d.clock_type == GPR_TIMESPAN) return now + d.tv_sec * 1000 + d.tv_nsec / 1000000;
  gpr_timespec left = gpr_time_sub(d, gpr_now(d.clock_type));
  int64_t ms = left.tv_sec * 1000 + left.tv_nsec / 1000000;
  return now + (ms > 0 ? ms : 0);
}

bool dd_grpc__deadline_passed(const dd_grpc__call *c) {
  if (call__no_deadline(c->deadline) || c->deadline.clock_type == GPR_TIMESPAN) return false;
  return gpr_time_cmp(gpr_now(c->deadline.clock_type), c->deadline) >= 0;
}

int dd_grpc__ctx_init(dd_grpc__call *c) {
  memset(&c->principal, 0, sizeof c->principal);
  c->principal.kind = DD_PRINCIPAL_NONE;
  c->deadline_ms = call__deadline_ms(c->deadline);
  dd_request_id(c->request_id);
  return call__copy_headers(c);
}

/* ---- authentication, decoding, encoding, running ---- */

/* Authenticates the caller, authorizes the method for it and admits the call, all before
 * the request is decoded (call.h). */
int dd_grpc__authenticate(dd_grpc__call *c) {
  return dd_call_authenticate(c->srv->reg, c->method->m, DD_CALL_AUTH_GRPC,
                              call__header(c, "authorization"), NULL, &c->principal, &c->admit,
                              c->request_id);
}

int dd_grpc__decode(dd_grpc__call *c, ProtobufCMessage **out) {
  *out = NULL;
  const ProtobufCMessageDescriptor *d = c->method->m->input;
  if (!c->payload) return dd_err_set(DD_EINVAL, "malformed request: no %s message", d->name);
  grpc_byte_buffer_reader r;
  if (!grpc_byte_buffer_reader_init(&r, c->payload))
    return dd_err_set(DD_EINVAL, "malformed request: cannot decompress the message");
  grpc_slice s = grpc_byte_buffer_reader_readall(&r);
  grpc_byte_buffer_reader_destroy(&r);
  int rc = rg_pb_unpack(out, d, GRPC_SLICE_START_PTR(s), GRPC_SLICE_LENGTH(s));
  grpc_slice_unref(s);
  return rc;
}

/* msg packed into a new slice *out (within the message limit). */
static int call__pack(dd_grpc__call *c, const ProtobufCMessage *msg, grpc_slice *out) {
  size_t n = protobuf_c_message_get_packed_size(msg);
  if (n > c->srv->opts.max_message_bytes)
    return dd_err_set(DD_ENOMEM, "response message of %zu bytes exceeds the limit of %zu bytes", n,
                      c->srv->opts.max_message_bytes);
  *out = grpc_slice_malloc(n);
  protobuf_c_message_pack(msg, GRPC_SLICE_START_PTR(*out));
  return 0;
}

int dd_grpc__encode(dd_grpc__call *c, const ProtobufCMessage *msg, grpc_byte_buffer **out) {
  *out = NULL;
  grpc_slice s;
  int rc = call__pack(c, msg, &s);
  if (rc) return rc;
  *out = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return 0;
}

int dd_grpc__run(dd_grpc__call *c, int (*send)(void *cls, const ProtobufCMessage *msg),
                 int (*memo)(void *cls, const void *key, size_t len, uint64_t *pb_bytes)) {
  ProtobufCMessage *req = NULL;
  dd_call_result res;
  int rc = dd_grpc__ctx_init(c);
  if (!rc) rc = dd_grpc__authenticate(c);
  if (!rc) rc = dd_grpc__decode(c, &req);
  if (!rc) {
    dd_call_sink sink = {.cls = c, .header = call__header, .send = send, .memo = memo, .request_id = c->request_id};
    rc = dd_call_run(c->srv->reg, c->method->m, req, &c->principal, c->deadline_ms, &sink, &res);
    if (res.file_fd >= 0) {
      close(res.file_fd);
      if (!rc)
        rc = dd_err_set(DD_EUNSUPPORTED,
                        "%s answers with a file, which gRPC cannot carry: fetch the signed URL from the REST port",
                        c->method->m->path);
    }
  }
  if (req) protobuf_c_message_free_unpacked(req, NULL);
  return rc;
}

/* ---- status ---- */

void dd_grpc__status_op_code(dd_grpc__call *c, grpc_status_code code, const char *msg, grpc_op *op) {
  if (c->has_status_details) grpc_slice_unref(c->status_details);
  c->status_details = grpc_slice_from_copied_string(msg ? msg : "");
  c->has_status_details = true;
  memset(op, 0, sizeof *op);
  op->op = GRPC_OP_SEND_STATUS_FROM_SERVER;
  op->data.send_status_from_server.status = code;
  op->data.send_status_from_server.status_details = code == GRPC_STATUS_OK ? NULL : &c->status_details;
  if (c->request_id[0]) { /* the slices point into the call, which outlives the batch */
    c->trailer.key = grpc_slice_from_static_string("x-request-id");
    c->trailer.value = grpc_slice_from_static_buffer(c->request_id, DD_REQUEST_ID_LEN);
    op->data.send_status_from_server.trailing_metadata = &c->trailer;
    op->data.send_status_from_server.trailing_metadata_count = 1;
  }
}

void dd_grpc__status_op(dd_grpc__call *c, int rc, grpc_op *op) {
  if (rc == 0) {
    dd_grpc__status_op_code(c, GRPC_STATUS_OK, NULL, op);
    return;
  }
  grpc_status_code code = (grpc_status_code)dd_call_status_grpc(rc);
  if (rc == DD_ECANCELLED && dd_grpc__deadline_passed(c)) code = GRPC_STATUS_DEADLINE_EXCEEDED;
  dd_grpc__status_op_code(c, code, *dd_err_msg() ? dd_err_msg() : dd_err_name(rc), op);
}

static void call__op(grpc_op *op, grpc_op_type type) {
  memset(op, 0, sizeof *op);
  op->op = type;
}

/* ---- unary and unknown methods ---- */

/* The unary reply: packed for the one final batch, and kept in the memo when the
 * handler asked it under a key (dd_call_memo missed). */
static int call__pack_reply(void *cls, const ProtobufCMessage *msg) {
  dd_grpc__call *c = cls;
  grpc_slice s;
  int rc = call__pack(c, msg, &s);
  if (rc) return rc;
  size_t n = GRPC_SLICE_LENGTH(s);
  if (c->memo_key.len)
    dd_call_memotab_put(c->srv->memo, c->memo_key.data, c->memo_key.len, GRPC_SLICE_START_PTR(s), n, n);
  c->send_bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return 0;
}

typedef struct call__memo_ctx {
  dd_grpc__call *c;
  uint64_t pb_bytes;
} call__memo_ctx;

/* A memo hit's kept bytes as the message to send (under the memo slot's read lock). */
static int call__memo_take(void *ctx, const void *body, size_t blen, uint64_t pb_bytes) {
  call__memo_ctx *m = ctx;
  grpc_slice s = grpc_slice_from_copied_buffer(body, blen);
  m->c->send_bb = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  m->pb_bytes = pb_bytes;
  return m->c->send_bb ? 0 : -1;
}

/* dd_call_memo for unary calls: 1 when the packed reply for (this method, key) is kept
 * (then c->send_bb holds it), else 0 with the key remembered for call__pack_reply. */
static int call__memo(void *cls, const void *key, size_t len, uint64_t *pb_bytes) {
  dd_grpc__call *c = cls;
  char full[1280];
  size_t plen = strlen(c->method->m->path) + 1;
  c->memo_key.len = 0;
  if (plen + len > sizeof full) return 0;
  memcpy(full, c->method->m->path, plen);
  memcpy(full + plen, key, len);
  call__memo_ctx m = {c, 0};
  if (dd_call_memotab_use(c->srv->memo, full, plen + len, call__memo_take, &m)) {
    *pb_bytes = m.pb_bytes;
    return 1;
  }
  if (dd_call_buf_append(&c->memo_key, full, plen + len)) {
    dd_err_clear();
    c->memo_key.len = 0;
  }
  return 0;
}

void dd_grpc__serve_unary(dd_grpc__call *c) {
  dd_err_clear();
  int rc = dd_grpc__run(c, call__pack_reply, call__memo);
  grpc_op ops[4];
  size_t n = 0;
  call__op(&ops[n++], GRPC_OP_SEND_INITIAL_METADATA);
  if (!rc) {
    call__op(&ops[n], GRPC_OP_SEND_MESSAGE);
    ops[n++].data.send_message.send_message = c->send_bb;
  }
  dd_grpc__status_op(c, rc, &ops[n++]);
  call__op(&ops[n], GRPC_OP_RECV_CLOSE_ON_SERVER);
  ops[n++].data.recv_close_on_server.cancelled = &c->cancelled;
  if (grpc_call_start_batch(c->call, ops, n, &c->t_done, NULL) != GRPC_CALL_OK) dd_grpc__call_free(c);
}

void dd_grpc__serve_unknown(dd_grpc__call *c) {
  char msg[512];
  snprintf(msg, sizeof msg, "unknown method %.*s", (int)GRPC_SLICE_LENGTH(c->details.method),
           (const char *)GRPC_SLICE_START_PTR(c->details.method));
  grpc_op ops[3];
  call__op(&ops[0], GRPC_OP_SEND_INITIAL_METADATA);
  dd_grpc__status_op_code(c, GRPC_STATUS_UNIMPLEMENTED, msg, &ops[1]);
  call__op(&ops[2], GRPC_OP_RECV_CLOSE_ON_SERVER);
  ops[2].data.recv_close_on_server.cancelled = &c->cancelled;
  if (grpc_call_start_batch(c->call, ops, 3, &c->t_done, NULL) != GRPC_CALL_OK) dd_grpc__call_free(c);
}

/* A call matched after the drain began: UNAVAILABLE, the handler never runs. A stream's
 * batches complete on its own pluck queue, the others' on the worker's NEXT queue (T_DONE). */
void dd_grpc__serve_refused(dd_grpc__call *c) {
  grpc_op ops[3];
  call__op(&ops[0], GRPC_OP_SEND_INITIAL_METADATA);
  dd_grpc__status_op_code(c, GRPC_STATUS_UNAVAILABLE, "server shutting down", &ops[1]);
  call__op(&ops[2], GRPC_OP_RECV_CLOSE_ON_SERVER);
  ops[2].data.recv_close_on_server.cancelled = &c->cancelled;
  bool plucked = c->method && c->method->kind == DD_GRPC__K_STREAM;
  if (grpc_call_start_batch(c->call, ops, 3, &c->t_done, NULL) != GRPC_CALL_OK) {
    dd_grpc__call_free(c);
    return;
  }
  if (!plucked) return; /* freed on T_DONE */
  grpc_completion_queue_pluck(c->pluck, &c->t_done, gpr_inf_future(GPR_CLOCK_MONOTONIC), NULL);
  dd_grpc__call_free(c);
}
