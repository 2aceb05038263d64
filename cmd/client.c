/* client.c: dd_client (see client.h): blocking unary and server-streaming calls on gRPC
 * core with a pluck completion queue, protobuf-c encoding and decoding, and the mapping of
 * gRPC statuses to the DD_E* error model. */
#include "cmd/client.h"

#include <errno.h>
#include <grpc/byte_buffer.h>
#include <grpc/byte_buffer_reader.h>
#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/support/time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define CLIENT_DEFAULT_TARGET "127.0.0.1:50051"
#define CLIENT_DEFAULT_TIMEOUT_MS 30000
#define CLIENT_MAX_RECV_BYTES (64 * 1024 * 1024)
#define CLIENT_STATUS_INTERNAL 13

struct dd_client {
  grpc_channel *ch;
  grpc_completion_queue *cq; /* pluck queue; one call at a time */
  char *auth;                /* "Bearer <token>", or NULL to send none */
  int64_t timeout_ms;
  int last_status;
};

/* One call's gRPC state, so the unary and streaming paths share setup and cleanup. */
typedef struct client__call {
  grpc_call *call;
  grpc_metadata auth_md;
  grpc_metadata_array md_initial;
  grpc_metadata_array md_trailing;
  grpc_status_code status;
  grpc_slice details;
  grpc_byte_buffer *req_bb;
  grpc_byte_buffer *resp_bb;
} client__call;

/* ---- names and codes ---------------------------------------------------------------- */

static const char *const client__status_names[] = {
    "OK",           "CANCELLED",         "UNKNOWN",        "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED", "NOT_FOUND",    "ALREADY_EXISTS", "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED", "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE",
    "UNIMPLEMENTED", "INTERNAL",         "UNAVAILABLE",    "DATA_LOSS",
    "UNAUTHENTICATED",
};

const char *dd_client_status_name(int grpc_status) {
  int n = (int)(sizeof client__status_names / sizeof client__status_names[0]);
  if (grpc_status < 0 || grpc_status >= n) return "UNKNOWN";
  return client__status_names[grpc_status];
}

int dd_client_code_from_grpc(int grpc_status) {
  switch (grpc_status) {
  case GRPC_STATUS_OK: return 0;
  case GRPC_STATUS_CANCELLED:
  case GRPC_STATUS_DEADLINE_EXCEEDED: return DD_ECANCELLED;
  case GRPC_STATUS_INVALID_ARGUMENT: return DD_EINVAL;
  case GRPC_STATUS_NOT_FOUND: return DD_ENOTFOUND;
  case GRPC_STATUS_ALREADY_EXISTS: return DD_EEXISTS;
  case GRPC_STATUS_PERMISSION_DENIED: return DD_EPERM;
  case GRPC_STATUS_RESOURCE_EXHAUSTED: return DD_ENOMEM;
  case GRPC_STATUS_FAILED_PRECONDITION: return DD_EPRECOND;
  case GRPC_STATUS_ABORTED: return DD_ECONFLICT;
  case GRPC_STATUS_OUT_OF_RANGE: return DD_ERANGE;
  case GRPC_STATUS_UNIMPLEMENTED: return DD_EUNSUPPORTED;
  case GRPC_STATUS_UNAVAILABLE: return DD_EIO;
  case GRPC_STATUS_DATA_LOSS: return DD_ECORRUPT;
  case GRPC_STATUS_UNAUTHENTICATED: return DD_EUNAUTH;
  default: return DD_EINTERNAL; /* UNKNOWN, INTERNAL, anything newer */
  }
}

int dd_client_last_status(const dd_client *c) { return c ? c->last_status : 0; }

/* ---- TLS ----------------------------------------------------------------------------- */

/* The whole of a PEM file, NUL-terminated, or NULL with the error set. */
static char *client__read_pem(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    dd_err_set(DD_EINVAL, "cannot read %s: %s", path, strerror(errno));
    return NULL;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *mem = open_memstream(&buf, &len);
  char chunk[4096];
  size_t n;
  while (mem && (n = fread(chunk, 1, sizeof chunk, f)) > 0) fwrite(chunk, 1, n, mem);
  int bad = !mem || ferror(f);
  if (mem) fclose(mem);
  fclose(f);
  if (bad || len == 0) {
    free(buf);
    dd_err_set(DD_EINVAL, "cannot read %s", path);
    return NULL;
  }
  return buf;
}

/* Insecure credentials, or TLS ones from opts' files. */
static int client__credentials(const dd_client_opts *o, grpc_channel_credentials **out) {
  *out = NULL;
  if (!o->tls_ca_file || !o->tls_ca_file[0]) {
    if (o->tls_cert_file || o->tls_key_file)
      return dd_err_set(DD_EINVAL, "a client certificate needs TLS (a CA file)");
    *out = grpc_insecure_credentials_create();
    return 0;
  }
  if (!o->tls_cert_file != !o->tls_key_file)
    return dd_err_set(DD_EINVAL, "a client certificate needs both its certificate and key file");
  char *ca = client__read_pem(o->tls_ca_file), *cert = NULL, *key = NULL;
  int rc = ca ? 0 : DD_EINVAL;
  if (!rc && o->tls_cert_file && (!(cert = client__read_pem(o->tls_cert_file)) ||
                                  !(key = client__read_pem(o->tls_key_file))))
    rc = DD_EINVAL;
  if (!rc) {
    grpc_ssl_pem_key_cert_pair pair = {key, cert};
    *out = grpc_ssl_credentials_create(ca, cert ? &pair : NULL, NULL, NULL); /* copies */
    if (!*out) rc = dd_err_set(DD_EINVAL, "cannot create TLS credentials");
  }
  free(ca);
  free(cert);
  free(key);
  return rc;
}

/* ---- open / free -------------------------------------------------------------------- */

int dd_client_open(dd_client **out, const dd_client_opts *opts) {
  dd_client_opts def = DD_CLIENT_OPTS_INIT;
  if (!opts) opts = &def;
  *out = NULL;
  dd_client *c = calloc(1, sizeof *c);
  if (!c) return dd_err_set(DD_ENOMEM, "out of memory");
  grpc_init();
  c->timeout_ms = opts->timeout_ms > 0 ? opts->timeout_ms : CLIENT_DEFAULT_TIMEOUT_MS;
  if (opts->token && opts->token[0]) {
    size_t n = strlen(opts->token) + sizeof "Bearer ";
    c->auth = malloc(n);
    if (!c->auth) goto nomem;
    snprintf(c->auth, n, "Bearer %s", opts->token);
  }
  grpc_arg arg;
  arg.type = GRPC_ARG_INTEGER;
  arg.key = (char *)GRPC_ARG_MAX_RECEIVE_MESSAGE_LENGTH;
  arg.value.integer = CLIENT_MAX_RECV_BYTES;
  grpc_channel_args args = {1, &arg};
  grpc_channel_credentials *creds = NULL;
  if (client__credentials(opts, &creds) != 0) {
    dd_client_free(c);
    return DD_EINVAL;
  }
  c->ch = grpc_channel_create(opts->target ? opts->target : CLIENT_DEFAULT_TARGET, creds, &args);
  grpc_channel_credentials_release(creds);
  c->cq = grpc_completion_queue_create_for_pluck(NULL);
  if (!c->ch || !c->cq) goto nomem;
  *out = c;
  return 0;
nomem:
  dd_client_free(c);
  return dd_err_set(DD_ENOMEM, "cannot create the gRPC channel");
}

void dd_client_free(dd_client *c) {
  if (!c) return;
  if (c->ch) grpc_channel_destroy(c->ch);
  if (c->cq) {
    grpc_completion_queue_shutdown(c->cq);
    while (grpc_completion_queue_pluck(c->cq, NULL, gpr_inf_future(GPR_CLOCK_REALTIME), NULL)
               .type != GRPC_QUEUE_SHUTDOWN) {
    }
    grpc_completion_queue_destroy(c->cq);
  }
  free(c->auth);
  free(c);
  grpc_shutdown();
}

/* ---- encoding ----------------------------------------------------------------------- */

static int client__encode(grpc_byte_buffer **out, const ProtobufCMessage *req) {
  size_t len = protobuf_c_message_get_packed_size(req);
  grpc_slice s = grpc_slice_malloc(len);
  protobuf_c_message_pack(req, GRPC_SLICE_START_PTR(s));
  *out = grpc_raw_byte_buffer_create(&s, 1);
  grpc_slice_unref(s);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

static int client__decode(ProtobufCMessage **out, grpc_byte_buffer *bb,
                          const ProtobufCMessageDescriptor *desc) {
  grpc_byte_buffer_reader reader;
  if (!grpc_byte_buffer_reader_init(&reader, bb))
    return dd_err_set(DD_EINTERNAL, "cannot read the response message");
  grpc_slice s = grpc_byte_buffer_reader_readall(&reader);
  grpc_byte_buffer_reader_destroy(&reader);
  *out = protobuf_c_message_unpack(desc, NULL, GRPC_SLICE_LENGTH(s), GRPC_SLICE_START_PTR(s));
  grpc_slice_unref(s);
  if (!*out) return dd_err_set(DD_EINTERNAL, "cannot decode the response as %s", desc->name);
  return 0;
}

/* ---- call lifecycle ----------------------------------------------------------------- */

static int client__begin(dd_client *c, client__call *k, const char *method,
                         const ProtobufCMessage *req) {
  memset(k, 0, sizeof *k);
  grpc_metadata_array_init(&k->md_initial);
  grpc_metadata_array_init(&k->md_trailing);
  k->details = grpc_empty_slice();
  k->status = CLIENT_STATUS_INTERNAL;
  int rc = client__encode(&k->req_bb, req);
  if (rc) return rc;
  gpr_timespec deadline = gpr_time_add(gpr_now(GPR_CLOCK_MONOTONIC),
                                       gpr_time_from_millis(c->timeout_ms, GPR_TIMESPAN));
  grpc_slice m = grpc_slice_from_copied_string(method);
  k->call = grpc_channel_create_call(c->ch, NULL, GRPC_PROPAGATE_DEFAULTS, c->cq, m, NULL,
                                     deadline, NULL);
  grpc_slice_unref(m);
  if (!k->call) return dd_err_set(DD_EINTERNAL, "cannot create a call to %s", method);
  if (c->auth) {
    k->auth_md.key = grpc_slice_from_static_string("authorization");
    k->auth_md.value = grpc_slice_from_static_string(c->auth);
  }
  return 0;
}

static void client__end(client__call *k) {
  if (k->call) grpc_call_unref(k->call);
  grpc_metadata_array_destroy(&k->md_initial);
  grpc_metadata_array_destroy(&k->md_trailing);
  grpc_slice_unref(k->details);
  if (k->req_bb) grpc_byte_buffer_destroy(k->req_bb);
  if (k->resp_bb) grpc_byte_buffer_destroy(k->resp_bb);
}

/* Starts ops as one batch and waits for it. */
static int client__batch(dd_client *c, client__call *k, const grpc_op *ops, size_t n) {
  void *tag = k;
  grpc_call_error e = grpc_call_start_batch(k->call, ops, n, tag, NULL);
  if (e != GRPC_CALL_OK) return dd_err_set(DD_EINTERNAL, "grpc_call_start_batch failed (%d)", e);
  grpc_event ev = grpc_completion_queue_pluck(c->cq, tag, gpr_inf_future(GPR_CLOCK_REALTIME), NULL);
  if (ev.type != GRPC_OP_COMPLETE) return dd_err_set(DD_EINTERNAL, "completion queue failed");
  return 0;
}

/* Fills ops with the sending half (initial metadata with the token, the request, close) and
 * the initial-metadata receive; returns how many ops it wrote. */
static size_t client__send_ops(dd_client *c, client__call *k, grpc_op *ops) {
  memset(ops, 0, 4 * sizeof *ops);
  ops[0].op = GRPC_OP_SEND_INITIAL_METADATA;
  ops[0].data.send_initial_metadata.count = c->auth ? 1 : 0;
  ops[0].data.send_initial_metadata.metadata = c->auth ? &k->auth_md : NULL;
  ops[1].op = GRPC_OP_SEND_MESSAGE;
  ops[1].data.send_message.send_message = k->req_bb;
  ops[2].op = GRPC_OP_SEND_CLOSE_FROM_CLIENT;
  ops[3].op = GRPC_OP_RECV_INITIAL_METADATA;
  ops[3].data.recv_initial_metadata.recv_initial_metadata = &k->md_initial;
  return 4;
}

static void client__status_op(client__call *k, grpc_op *op) {
  memset(op, 0, sizeof *op);
  op->op = GRPC_OP_RECV_STATUS_ON_CLIENT;
  op->data.recv_status_on_client.trailing_metadata = &k->md_trailing;
  op->data.recv_status_on_client.status = &k->status;
  op->data.recv_status_on_client.status_details = &k->details;
}

/* Records the final status on c and turns a failure into a DD_E* code with its message. */
static int client__finish(dd_client *c, client__call *k) {
  c->last_status = (int)k->status;
  if (k->status == GRPC_STATUS_OK) return 0;
  int code = dd_client_code_from_grpc((int)k->status);
  size_t n = GRPC_SLICE_LENGTH(k->details);
  if (n == 0) return dd_err_set(code, "%s", dd_client_status_name((int)k->status));
  return dd_err_set(code, "%.*s", (int)n, (const char *)GRPC_SLICE_START_PTR(k->details));
}

/* ---- public calls ------------------------------------------------------------------- */

int dd_client_call(dd_client *c, const char *method_path, const ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out) {
  client__call k;
  grpc_op ops[6];
  *out = NULL;
  c->last_status = CLIENT_STATUS_INTERNAL;
  int rc = client__begin(c, &k, method_path, req);
  if (rc) goto cleanup;
  size_t n = client__send_ops(c, &k, ops);
  memset(&ops[n], 0, sizeof ops[n]);
  ops[n].op = GRPC_OP_RECV_MESSAGE;
  ops[n++].data.recv_message.recv_message = &k.resp_bb;
  client__status_op(&k, &ops[n++]);
  rc = client__batch(c, &k, ops, n);
  if (rc) goto cleanup;
  rc = client__finish(c, &k);
  if (rc) goto cleanup;
  if (!k.resp_bb) {
    c->last_status = CLIENT_STATUS_INTERNAL;
    rc = dd_err_set(DD_EINTERNAL, "the server sent no response message");
    goto cleanup;
  }
  rc = client__decode(out, k.resp_bb, resp_desc);
  if (rc) c->last_status = CLIENT_STATUS_INTERNAL;
cleanup:
  client__end(&k);
  return rc;
}

/* Receives messages until the stream ends or fn stops it; returns fn's stop value or an
 * error code, 0 at the end of the stream. */
static int client__recv_all(dd_client *c, client__call *k, const ProtobufCMessageDescriptor *desc,
                            dd_client_msg_fn fn, void *ud) {
  for (;;) {
    grpc_op op;
    memset(&op, 0, sizeof op);
    op.op = GRPC_OP_RECV_MESSAGE;
    op.data.recv_message.recv_message = &k->resp_bb;
    int rc = client__batch(c, k, &op, 1);
    if (rc) return rc;
    if (!k->resp_bb) return 0;
    ProtobufCMessage *msg = NULL;
    rc = client__decode(&msg, k->resp_bb, desc);
    grpc_byte_buffer_destroy(k->resp_bb);
    k->resp_bb = NULL;
    if (!rc) rc = fn(ud, msg);
    protobuf_c_message_free_unpacked(msg, NULL);
    if (rc) {
      grpc_call_cancel(k->call, NULL);
      return rc;
    }
  }
}

int dd_client_stream(dd_client *c, const char *method_path, const ProtobufCMessage *req,
                     const ProtobufCMessageDescriptor *resp_desc, dd_client_msg_fn fn, void *ud) {
  client__call k;
  grpc_op ops[4];
  c->last_status = CLIENT_STATUS_INTERNAL;
  int rc = client__begin(c, &k, method_path, req);
  if (rc) goto cleanup;
  rc = client__batch(c, &k, ops, client__send_ops(c, &k, ops));
  if (rc) goto cleanup;
  int stop = client__recv_all(c, &k, resp_desc, fn, ud);
  client__status_op(&k, &ops[0]);
  rc = client__batch(c, &k, ops, 1);
  if (rc) goto cleanup;
  if (stop) {
    c->last_status = (int)k.status; /* CANCELLED, normally: the stream was cut short */
    rc = stop; /* stopped by the callback (or a decode failure): that is the answer */
    goto cleanup;
  }
  rc = client__finish(c, &k);
cleanup:
  client__end(&k);
  return rc;
}
