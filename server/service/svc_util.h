/* svc_util.h: small helpers the service handlers share: who may call (admin only), the
 * store behind a call, and handing a response (or an error) back to the transport. */
#ifndef DD_SERVER_SERVICE_SVC_UTIL_H
#define DD_SERVER_SERVICE_SVC_UTIL_H

#include <stdbool.h>

#include "server/service/app.h"
#include "store/catalog/cat_store.h"

/* 0 for an admin; DD_EPERM for a recipient, DD_EUNAUTH for an unauthenticated call. */
int svc_require_admin(const dd_call *call);
/* The catalog store of the call's application (borrowed; lives as long as the app). */
cat_store *svc_store(const dd_call *call);
/* The caller's principal name, recorded as owner / created_by / updated_by. */
const char *svc_actor(const dd_call *call);
/* On rc == 0 hands msg to the transport through *out; else frees msg (may be NULL).
 * Returns rc. */
int svc_reply(ProtobufCMessage **out, ProtobufCMessage *msg, int rc);
/* Replies google.protobuf.Empty when rc == 0; returns rc. */
int svc_reply_empty(ProtobufCMessage **out, int rc);
/* What a recipient (or an unauthenticated caller) may learn of a failure; admins keep every
 * message as it is. For the others, a failure of the server's own (storage, corrupt data,
 * internal, memory, a path the server may not use), or any failure at all when `all` (used
 * once a shared table has been found: what goes wrong reading it is the provider's
 * business), is written to the log with a fresh request id, and the message is replaced by
 * a generic one carrying that id. The code is kept; a cancelled call and a missing or bad
 * token are never rewritten. Returns rc. */
int svc_recipient_error(const dd_call *call, int rc, bool all);
/* Whether the transport still holds its encoding of this read's reply (dd_call_memo): the
 * key is the catalog generation of view v, the caller (a recipient's id, or any admin) and
 * the request's bytes, which must be everything the reply depends on. A store without
 * generations (PostgreSQL) keeps nothing. true: the handler returns 0 without a reply. */
bool svc_memo_hit(dd_call *call, cat_view *v, const ProtobufCMessage *in);
/* svc_memo_hit over the call's view (the one the token check opened, bound to the
 * thread); false when there is none (no view is opened for the memo alone): for handlers
 * that read through the store rather than a view. */
bool svc_read_memo_hit(dd_call *call, const ProtobufCMessage *in);

#endif
