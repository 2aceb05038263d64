/* client.h: dd_client, a small blocking gRPC client for deltad built on gRPC core. It sends
 * one protobuf-c request to a method path ("/deltad.catalog.v1.CatalogService/GetCatalog")
 * with `authorization: Bearer <token>` and a deadline, and decodes the reply with a
 * protobuf-c descriptor. deltactl uses it for every command; other tools may too.
 *
 * Errors: the gRPC status of a failed call becomes a DD_E* code (dd_client_code_from_grpc)
 * and its message is kept in dd_err_msg(); dd_client_last_status() keeps the raw gRPC code
 * so a caller can print the exact status name (DEADLINE_EXCEEDED is not CANCELLED).
 * Threads: a dd_client runs one call at a time; use one per thread. */
#ifndef DD_CMD_CLIENT_H
#define DD_CMD_CLIENT_H

#include <protobuf-c/protobuf-c.h>
#include <stdint.h>

typedef struct dd_client dd_client;

typedef struct dd_client_opts {
  const char *target; /* "HOST:PORT"; NULL = "127.0.0.1:50051" */
  const char *token;  /* bearer token; NULL or "" = send no authorization */
  int64_t timeout_ms; /* per-call deadline; 0 = 30 s */
  /* TLS: on when tls_ca_file is set (PEM CA the server's certificate must chain to);
   * tls_cert_file and tls_key_file (PEM, both or neither) present a client certificate. */
  const char *tls_ca_file;
  const char *tls_cert_file;
  const char *tls_key_file;
} dd_client_opts;
#define DD_CLIENT_OPTS_INIT {NULL, NULL, 0, NULL, NULL, NULL}

/* Creates the channel (connection happens lazily on the first call). Copies what it needs
 * from opts (the TLS files are read here: DD_EINVAL naming a file that cannot be read). */
int dd_client_open(dd_client **out, const dd_client_opts *opts);
/* Closes the channel. Accepts NULL. */
void dd_client_free(dd_client *c);

/* A unary call. On success *out is the decoded response, owned by the caller and freed with
 * protobuf_c_message_free_unpacked(*out, NULL). On failure *out is NULL and the return value
 * is the DD_E* code for the gRPC status, with the server's message in dd_err_msg(). */
int dd_client_call(dd_client *c, const char *method_path, const ProtobufCMessage *req,
                   const ProtobufCMessageDescriptor *resp_desc, ProtobufCMessage **out);

/* Called once per streamed message; msg is borrowed (freed after the callback returns).
 * A non-zero return stops the stream (the call is cancelled) and is returned by
 * dd_client_stream. */
typedef int (*dd_client_msg_fn)(void *ud, const ProtobufCMessage *msg);

/* A server-streaming call: sends req, then calls fn for each reply message in order.
 * Returns 0 when the stream ended with status OK, the callback's non-zero value when it
 * stopped early, or the DD_E* code of the final status. */
int dd_client_stream(dd_client *c, const char *method_path, const ProtobufCMessage *req,
                     const ProtobufCMessageDescriptor *resp_desc, dd_client_msg_fn fn, void *ud);

/* The gRPC status code (grpc_status_code value) of the last call; 0 before any call.
 * Calls that fail before reaching gRPC (encoding, out of memory) report 13 (INTERNAL). */
int dd_client_last_status(const dd_client *c);

/* "NOT_FOUND", "UNAUTHENTICATED", ... for a gRPC status code; "UNKNOWN" when out of range. */
const char *dd_client_status_name(int grpc_status);
/* The DD_E* code for a gRPC status code (0 for OK). */
int dd_client_code_from_grpc(int grpc_status);

#endif
