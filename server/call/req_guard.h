/* req_guard.h: what every request must pass before it is decoded, on every transport.
 *
 * 1. Shape bounds on the encoded bytes, checked without recursion and without allocating
 *    the message: protobuf (rg_pb_check, guided by the message descriptor: length-delimited
 *    fields whose type is a message are descended, each string must be UTF-8 without NUL)
 *    and JSON bodies (rg_json_check, a byte scan before jansson builds anything). A message
 *    nested deeper than max_depth, or with more than max_elements fields and list items, is
 *    DD_EINVAL (INVALID_ARGUMENT / 400); one whose decoded form is estimated above
 *    max_memory is DD_ENOMEM (RESOURCE_EXHAUSTED / 429). protobuf-c and the handlers
 *    recurse once per nesting level, so max_depth is what keeps their stacks bounded.
 * 2. Admission (rg_admit): at most max_requests requests in flight in the process and
 *    max_requests_per_principal per recipient (the administrator, trusted, has only the
 *    process cap); over either cap a request is refused at once with DD_ENOMEM
 *    (RESOURCE_EXHAUSTED / 429 with Retry-After).
 *
 * The limits are one process-wide value (rg_configure, called by main before serving;
 * read-only afterwards). Every function here is thread-safe. */
#ifndef DD_SERVER_CALL_REQ_GUARD_H
#define DD_SERVER_CALL_REQ_GUARD_H

#include <protobuf-c/protobuf-c.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "server/call/handler.h"

/* Spark clients build a plan two message levels per DataFrame operation and two per
 * nested expression; 128 levels serve ~60 chained operations (protobuf-java's own default
 * limit is 100). */
#define RG_DEFAULT_MAX_DEPTH 128
#define RG_DEFAULT_MAX_ELEMENTS 1000000
#define RG_DEFAULT_MAX_MEMORY (256u << 20)
#define RG_DEFAULT_MAX_REQUESTS 256
#define RG_DEFAULT_MAX_REQUESTS_PER_PRINCIPAL 32
#define RG_MAX_DEPTH_LIMIT 1000 /* the largest max_depth rg_configure accepts */

typedef struct rg_limits {
  unsigned max_depth;        /* message (or JSON container) nesting; the top level is 1 */
  size_t max_elements;       /* fields and repeated items (JSON: values), whole request */
  size_t max_memory;         /* estimated bytes of the decoded request */
  unsigned max_requests;     /* in flight, whole process; 0: no cap */
  unsigned max_requests_per_principal; /* in flight per recipient; 0: no cap */
} rg_limits;

#define RG_LIMITS_INIT                                                                       \
  {.max_depth = RG_DEFAULT_MAX_DEPTH, .max_elements = RG_DEFAULT_MAX_ELEMENTS,               \
   .max_memory = RG_DEFAULT_MAX_MEMORY, .max_requests = RG_DEFAULT_MAX_REQUESTS,             \
   .max_requests_per_principal = RG_DEFAULT_MAX_REQUESTS_PER_PRINCIPAL}

/* Sets the process-wide limits (before any request is served). DD_EINVAL for a max_depth
 * of 0 or above RG_MAX_DEPTH_LIMIT. */
int rg_configure(const rg_limits *l);
/* The limits in force (borrowed, valid for the process). */
const rg_limits *rg_limits_get(void);

/* Checks len bytes of an encoded d against the limits. 0, DD_EINVAL (too deep, too many
 * elements, a string not UTF-8 or with NUL, malformed wire data) or DD_ENOMEM. */
int rg_pb_check(const ProtobufCMessageDescriptor *d, const uint8_t *buf, size_t len);
/* rg_pb_check, then protobuf_c_message_unpack: *out is the caller's (free_unpacked). */
int rg_pb_unpack(ProtobufCMessage **out, const ProtobufCMessageDescriptor *d, const uint8_t *buf,
                 size_t len);
/* Checks a JSON text: container depth, values, estimated decoded size. Does not validate
 * the JSON (jansson does, afterwards). */
int rg_json_check(const char *buf, size_t len);

/* ---- admission ---- */

struct dd_call_view_ops;
typedef struct rg_ticket {
  unsigned slot1; /* the slot held, plus one; 0 (a zeroed ticket) holds nothing */
  /* The call's read view (dd_call_authenticate): the transport's reference, given back
   * by rg_release. NULL: none. */
  void *view;
  const struct dd_call_view_ops *view_ops;
} rg_ticket;

/* Admits one request of p into the in-flight counts; *t holds it until rg_release. A
 * ticket already held is kept (admitting twice is harmless). DD_ENOMEM over a cap. */
int rg_admit(rg_ticket *t, const dd_principal *p);
/* Lets go of what *t holds (nothing when it holds nothing): its admission, and its
 * reference to the call's read view. */
void rg_release(rg_ticket *t);
/* In-flight requests in the process (for tests and diagnostics). */
unsigned rg_in_flight(void);

#endif
