/* svc_util.c: helpers shared by the service handlers (see svc_util.h). */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/log.h"
#include "google/protobuf/empty.pb-c.h"
#include "server/service/svc_util.h"

static int svc__not_admin(const dd_principal *p) {
  switch (p->kind) {
  case DD_PRINCIPAL_ADMIN: return 0;
  case DD_PRINCIPAL_NONE: return dd_err_set(DD_EUNAUTH, "authentication required");
  default: return dd_err_set(DD_EPERM, "permission denied: '%s' is not an administrator", p->name);
  }
}

int svc_require_admin(const dd_call *call) { return svc__not_admin(call->principal); }

cat_store *svc_store(const dd_call *call) { return dd_app_store(call->app); }

const char *svc_actor(const dd_call *call) { return call->principal->name; }

int svc_reply(ProtobufCMessage **out, ProtobufCMessage *msg, int rc) {
  if (rc) {
    if (msg) protobuf_c_message_free_unpacked(msg, NULL);
    return rc;
  }
  *out = msg;
  return 0;
}

int svc_reply_empty(ProtobufCMessage **out, int rc) {
  if (rc) return rc;
  Google__Protobuf__Empty *e = malloc(sizeof *e);
  if (!e) return dd_err_set(DD_ENOMEM, "out of memory");
  google__protobuf__empty__init(e);
  *out = &e->base;
  return 0;
}

#define SVC_GENERIC_MSG "the server could not complete the request"

int svc_recipient_error(const dd_call *call, int rc, bool all) {
  if (rc >= 0 || call->principal->kind == DD_PRINCIPAL_ADMIN) return rc;
  if (rc == DD_ECANCELLED || rc == DD_EUNAUTH) return rc;
  bool server_side = rc == DD_EIO || rc == DD_ECORRUPT || rc == DD_EINTERNAL ||
                     rc == DD_ENOMEM || rc == DD_EPERM;
  if (!all && !server_side) return rc;
  if (!strncmp(dd_err_msg(), SVC_GENERIC_MSG, strlen(SVC_GENERIC_MSG))) return rc; /* done */
  char id[DD_REQUEST_ID_LEN + 1]; /* the call's own (its x-request-id), else a fresh one */
  if (call->request_id && strlen(call->request_id) == DD_REQUEST_ID_LEN) memcpy(id, call->request_id, sizeof id);
  else dd_request_id(id);
  dd_log(DD_LOG_ERROR, "request %s: %s '%s': %s: %s", id,
         call->principal->kind == DD_PRINCIPAL_RECIPIENT ? "recipient" : "caller",
         call->principal->name, dd_err_name(rc), dd_err_msg());
  return dd_err_set(rc, SVC_GENERIC_MSG " (request id %s); the data provider can look it up",
                    id);
}

bool svc_memo_hit(dd_call *call, cat_view *v, const ProtobufCMessage *in) {
  uint64_t gen = 0;
  if (cat_view_generation(v, &gen) != 0) {
    dd_err_clear();
    return false;
  }
  uint8_t key[1024];
  const dd_principal *p = call->principal;
  size_t idl = strnlen(p->id, sizeof p->id), n = protobuf_c_message_get_packed_size(in);
  size_t head = sizeof gen + 1 + idl + 1;
  if (head + n > sizeof key) return false;
  memcpy(key, &gen, sizeof gen);
  key[sizeof gen] = p->kind == DD_PRINCIPAL_ADMIN ? 'A' : 'R';
  memcpy(key + sizeof gen + 1, p->id, idl);
  key[head - 1] = 0;
  protobuf_c_message_pack(in, key + head);
  return dd_call_memo(call, key, head + n) == 1;
}

bool svc_read_memo_hit(dd_call *call, const ProtobufCMessage *in) {
  cat_view *v = cat_view_bound(svc_store(call)); /* the token check's */
  return v && svc_memo_hit(call, v, in);
}
