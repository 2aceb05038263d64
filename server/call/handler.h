/* handler.h: the contract between transports and services (DESIGN.md, "the one rule").
 *
 * A handler is a function from a decoded request message and a call context to a status
 * and a response message. Every transport (server/grpc, server/http and its native
 * codecs) runs every method through the call core (server/call/call.h, dd_call_run);
 * no transport knows what a handler does, and no handler sees HTTP or a grpc_call.
 *
 * Ownership: the request belongs to the transport and is valid during the call. A unary
 * handler returns its response in *out as a heap tree the transport frees with
 * protobuf_c_message_free_unpacked(*out, NULL): every string, array and sub-message in it
 * must be malloc'ed (never a string literal). A streaming handler sends each message with
 * call->send (the handler keeps ownership of what it sends) and leaves *out NULL; send
 * refuses a unary handler and a message of another type, and returns DD_ECANCELLED once
 * the client went away or the deadline passed (the handler returns that code; the core
 * reports DD_EDEADLINE for the latter). A unary handler may instead
 * answer with a file (dd_call_reply_file), leaving *out NULL.
 * Errors: return a DD_E* code with dd_err_set(); the transport maps it through the one
 * table of server/call/call.h (dd_call_status_*) and sends dd_err_msg() as the message.
 * A handler may add a detail (dd_call_set_detail) that a protocol's error code depends on.
 * Threads: handlers run concurrently on every transport thread. */
#ifndef DD_SERVER_CALL_HANDLER_H
#define DD_SERVER_CALL_HANDLER_H

#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "common/err.h"

typedef enum {
  DD_PRINCIPAL_NONE = 0, /* not authenticated (only DD_METHOD_PUBLIC methods) */
  DD_PRINCIPAL_ADMIN,    /* manages everything */
  DD_PRINCIPAL_RECIPIENT /* a Delta Sharing recipient: reads its granted shares */
} dd_principal_kind;

typedef struct dd_principal {
  dd_principal_kind kind;
  char name[256]; /* "admin" or the recipient's name */
  char id[40];    /* the principal's UUID (recipient id), "" for admin */
  /* The services' read view the token was checked in (call.h, dd_call_view_ops), which the
   * handler's reads share; borrowed from the call's admission ticket. NULL: none. */
  void *view;
} dd_principal;

typedef struct dd_call dd_call;
struct dd_call {
  const dd_principal *principal; /* never NULL; kind NONE for public calls */
  int64_t deadline_ms;           /* absolute, dd_call_now_ms() (CLOCK_MONOTONIC); 0: none */
  void *app;                     /* the application object given to the transport */
  /* Streaming replies: sends one message. Returns 0, or DD_ECANCELLED when the client is
   * gone or the deadline passed (the handler should stop and return that code). */
  int (*send)(dd_call *call, const ProtobufCMessage *msg);
  /* Request metadata / header by lower-case name; NULL when absent. The returned string
   * is NUL-terminated and valid during the call. */
  const char *(*header)(dd_call *call, const char *name);
  /* The reply memo behind dd_call_memo (NULL: none, e.g. a call made by a test). */
  int (*memo)(dd_call *call, const void *key, size_t len);
  void *transport; /* the transport's own state; handlers do not touch it */
  const char *request_id;        /* the call's id (in its access-log line), never NULL */
  const char *method_path;       /* "/pkg.Service/Method" of the method running */
  /* Set by the handler through the functions below, read by the call core. */
  int detail;                  /* protocol detail of an error (DD_CALL_DETAIL_*); 0 none */
  int has_file;                /* a file reply was set: file_fd (owned) and its range */
  int file_fd;
  uint64_t file_off, file_len;
  int memo_hit;                /* dd_call_memo answered: the transport sends its bytes */
};

/* Error details a handler may set (read only when the call fails). */
enum {
  DD_CALL_DETAIL_NONE = 0,      /* the request itself (bad input, authentication, ...) */
  DD_CALL_DETAIL_NAMESPACE = 1, /* Lance: the failure is about a namespace */
  DD_CALL_DETAIL_TABLE = 2,     /* Lance: the failure is about a table */
};

/* Sets the call's error detail (the last value set counts). */
void dd_call_set_detail(dd_call *call, int detail);
/* Answers a unary call with len bytes of the open file fd from off, sent by the transport
 * (by sendfile where it can). The call owns fd from here, also on error (it replaces and
 * closes a file set before). The handler returns 0 with *out NULL. 0, or DD_EINVAL. */
int dd_call_reply_file(dd_call *call, int fd, uint64_t off, uint64_t len);

/* Reply memo: a unary handler whose reply is a function of key alone (key names the
 * state it reads, such as the catalog's generation, the caller and the request's
 * parameters: everything the reply depends on) asks whether the transport kept the bytes
 * it sent for (this method, key) under the same encoding. 1: it did, and sends them; the
 * handler returns 0 with *out NULL. 0: it did not (or keeps none: gRPC, a codec that
 * does not memoize); the handler replies as usual and the transport may keep the
 * encoding of that reply under key. Streaming handlers always get 0. */
int dd_call_memo(dd_call *call, const void *key, size_t len);

typedef int (*dd_handler_fn)(dd_call *call, const ProtobufCMessage *req, ProtobufCMessage **out);

enum {
  DD_METHOD_STREAMING = 1u << 0, /* server-streaming reply */
  DD_METHOD_PUBLIC = 1u << 1,    /* needs no token */
  DD_METHOD_RECIPIENT = 1u << 2, /* a recipient may call it (else: administrators only) */
  /* A unary method that answers from the catalog's read view and memory alone (no Delta
   * log, object store or file): REST's epoll pool (--http-threads N) runs it on the
   * connection's pool thread, as a thread per connection does, instead of handing it to a
   * handler worker and back (two thread switches, about as much CPU as a short call). On
   * PostgreSQL its reads are round trips that hold up that pool thread's other
   * connections meanwhile. */
  DD_METHOD_QUICK = 1u << 3,
};

typedef struct dd_method {
  const char *path; /* "/deltad.catalog.v1.CatalogService/GetCatalog" */
  const ProtobufCMessageDescriptor *input;
  const ProtobufCMessageDescriptor *output;
  dd_handler_fn fn;
  unsigned flags;
} dd_method;

/* Authenticates a bearer token (bytes, not NUL-terminated). Fills *out and returns 0, or
 * returns DD_EUNAUTH. Implemented by the services; the transports call it through this
 * pointer so they never learn where tokens are kept. */
typedef int (*dd_auth_fn)(void *app, const char *token, size_t len, dd_principal *out);

/* Whether principal p may call m at all, decided from m->flags alone before the request is
 * decoded: 0, or DD_EPERM (same message as svc_require_admin) for a non-administrator
 * calling a method without DD_METHOD_RECIPIENT. Handlers still check what they serve. */
int dd_method_authorize(const dd_method *m, const dd_principal *p);

#endif
