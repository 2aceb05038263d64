/* sharing_admin.c: deltad.sharing.v1.DeltaSharingExtensionService: shares, their schemas
 * and tables, recipients (bearer tokens shown once; the profile file a client needs) and
 * grants. Admin only; the store does the validation and the transactions. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "common/err.h"
#include "server/service/auth.h"
#include "server/service/sharing_int.h"
#include "server/service/svc_util.h"

#define SHR_DEFAULT_TOKEN_LIFETIME_S (30LL * 24 * 3600)
#define SHR_MAX_LIFETIME_S (100LL * 365 * 24 * 3600)

typedef Deltad__Sharing__V1__RecipientTokenResponse shr_token_resp;

static int64_t shr_admin_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- shares, schemas, tables -------------------------------------------------------- */

static int shr_create_share(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  cat_share *sh = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_create(svc_store(call), &sh, svc_actor(call), (const void *)in);
  return svc_reply(out, sh ? &sh->base : NULL, rc);
}

static int shr_get_share_info(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__GetShareInfoRequest *req = (const void *)in;
  cat_share *sh = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_get(svc_store(call), &sh, req->name);
  return svc_reply(out, sh ? &sh->base : NULL, rc);
}

static int shr_list_share_infos(dd_call *call, const ProtobufCMessage *in,
                                ProtobufCMessage **out) {
  Deltad__Sharing__V1__ListShareInfosResponse *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_list(svc_store(call), &resp, (const void *)in);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int shr_update_share(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  cat_share *sh = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_update(svc_store(call), &sh, svc_actor(call), (const void *)in);
  return svc_reply(out, sh ? &sh->base : NULL, rc);
}

static int shr_delete_share(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__DeleteShareRequest *req = (const void *)in;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_delete(svc_store(call), req->name, req->force);
  return svc_reply_empty(out, rc);
}

static int shr_create_schema(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  cat_share_schema *sc = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_schema_create(svc_store(call), &sc, svc_actor(call), (const void *)in);
  return svc_reply(out, sc ? &sc->base : NULL, rc);
}

static int shr_delete_schema(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__DeleteSharingSchemaRequest *req = (const void *)in;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_schema_delete(svc_store(call), req->share, req->name, req->force);
  return svc_reply_empty(out, rc);
}

/* The table an AddTable names must be confined like every shared table (shr_table_root
 * checks it); a missing location is left to the store's own NOT_FOUND. */
static int shr_add_confine(dd_call *call, const Deltad__Sharing__V1__AddTableRequest *req) {
  if (!(req->url && *req->url) && !(req->location && *req->location)) return 0;
  if ((req->url && *req->url && req->location && *req->location) ||
      (req->path && (req->path[0] == '/' || strstr(req->path, ".."))))
    return 0; /* malformed: the store's validation answers */
  cat_shared_table view = DELTAD__SHARING__V1__SHARED_TABLE__INIT;
  view.name = req->name;
  view.url = req->url;
  view.location = req->location;
  view.path = req->path;
  char *root = NULL, *remote = NULL;
  cat_view *v = NULL;
  int rc = cat_view_open(svc_store(call), &v);
  if (!rc) rc = shr_table_root(v, &view, &root, &remote);
  cat_view_close(v);
  if (rc == DD_ENOTFOUND && !(req->url && *req->url)) rc = 0, dd_err_clear();
  /* a local table must exist now: a recipient's query would otherwise fail later, and
   * name the provider's path to the recipient */
  struct stat st;
  char *log = NULL;
  if (!rc && root && (asprintf(&log, "%s/_delta_log", root) < 0 || stat(log, &st) != 0 || !S_ISDIR(st.st_mode)))
    rc = dd_err_set(DD_ENOTFOUND, "no Delta table at '%s' (it has no _delta_log directory)",
                    req->url && *req->url ? req->url : root);
  free(log);
  free(root);
  free(remote);
  return rc;
}

static int shr_add_table(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  cat_shared_table *t = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = shr_add_confine(call, (const void *)in);
  if (!rc) rc = cat_share_table_add(svc_store(call), &t, svc_actor(call), (const void *)in);
  return svc_reply(out, t ? &t->base : NULL, rc);
}

static int shr_update_table(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  cat_shared_table *t = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_table_update(svc_store(call), &t, (const void *)in);
  return svc_reply(out, t ? &t->base : NULL, rc);
}

static int shr_remove_table(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__RemoveTableRequest *req = (const void *)in;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_share_table_remove(svc_store(call), req->share, req->schema, req->name);
  return svc_reply_empty(out, rc);
}

/* ---- recipients ------------------------------------------------------------------------ */

/* ISO-8601 UTC with milliseconds, the profile file's expirationTime. */
static void shr_iso_ms(char *buf, size_t cap, int64_t ms) {
  time_t s = (time_t)(ms / 1000);
  struct tm tm;
  gmtime_r(&s, &tm);
  size_t n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S", &tm);
  snprintf(buf + n, cap - n, ".%03dZ", (int)(ms % 1000));
}

/* The profile file: {"shareCredentialsVersion":1,"endpoint":...,"bearerToken":...,
 * "expirationTime":...} (expirationTime only when the token expires). */
static char *shr_profile(const dd_call *call, const char *token, int64_t expiry_ms) {
  const dd_app_opts *o = dd_app_options(call->app);
  char exp[64] = "", *out = NULL;
  if (expiry_ms) {
    char iso[40];
    shr_iso_ms(iso, sizeof iso, expiry_ms);
    snprintf(exp, sizeof exp, ",\"expirationTime\":\"%s\"", iso);
  }
  if (asprintf(&out, "{\"shareCredentialsVersion\":1,\"endpoint\":\"%s%s\",\"bearerToken\":\"%s\"%s}",
               o->public_url ? o->public_url : "", dd_app_base_path(call->app), token, exp) < 0)
    return NULL;
  return out;
}

/* A duration in seconds from now as an epoch-ms instant; DD_EINVAL naming field when it is
 * negative or beyond SHR_MAX_LIFETIME_S (so the arithmetic cannot overflow). */
static int shr_deadline(int64_t *out_ms, const char *field, int64_t seconds) {
  if (seconds < 0) return dd_err_set(DD_EINVAL, "%s: must not be negative", field);
  if (seconds > SHR_MAX_LIFETIME_S)
    return dd_err_set(DD_EINVAL, "%s: at most %lld seconds (100 years)", field,
                      (long long)SHR_MAX_LIFETIME_S);
  *out_ms = shr_admin_now_ms() + seconds * 1000;
  return 0;
}

static int shr_lifetime(int64_t *expiry_ms, bool has, int64_t seconds) {
  int64_t s = has ? seconds : SHR_DEFAULT_TOKEN_LIFETIME_S;
  if (s == 0) {
    *expiry_ms = 0;
    return 0;
  }
  return shr_deadline(expiry_ms, "token_lifetime_seconds", s);
}

/* Builds the reply that shows a new token once. Takes r. */
static int shr_token_reply(const dd_call *call, ProtobufCMessage **out, cat_recipient *r,
                           const char *token, int64_t expiry_ms) {
  shr_token_resp *resp = malloc(sizeof *resp);
  if (!resp) {
    protobuf_c_message_free_unpacked(&r->base, NULL);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__sharing__v1__recipient_token_response__init(resp);
  resp->recipient = r;
  resp->bearer_token = strdup(token);
  resp->expiration_time = expiry_ms;
  resp->profile = shr_profile(call, token, expiry_ms);
  int rc = resp->bearer_token && resp->profile ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
  return svc_reply(out, &resp->base, rc);
}

static int shr_create_recipient(dd_call *call, const ProtobufCMessage *in,
                                ProtobufCMessage **out) {
  const Deltad__Sharing__V1__CreateRecipientRequest *req = (const void *)in;
  char token[DD_AUTH_TOKEN_CHARS + 1];
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  int64_t expiry = 0;
  cat_recipient *r = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = shr_lifetime(&expiry, req->_token_lifetime_seconds_case != 0,
                             req->token_lifetime_seconds);
  if (!rc) rc = dd_auth_random_token(token);
  if (!rc) rc = cat_token_hash(hash, token, strlen(token));
  if (!rc) rc = cat_recipient_create(svc_store(call), &r, svc_actor(call), req->name,
                                     req->comment, hash, expiry);
  if (!rc) rc = shr_token_reply(call, out, r, token, expiry);
  memset(token, 0, sizeof token);
  return rc;
}

static int shr_rotate_token(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__RotateRecipientTokenRequest *req = (const void *)in;
  char token[DD_AUTH_TOKEN_CHARS + 1];
  unsigned char hash[CAT_TOKEN_HASH_LEN];
  int64_t expiry = 0, old_expiry = 0;
  cat_recipient *r = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = shr_deadline(&old_expiry, "existing_token_expire_in_seconds",
                             req->existing_token_expire_in_seconds);
  if (!rc) rc = shr_lifetime(&expiry, req->_token_lifetime_seconds_case != 0,
                             req->token_lifetime_seconds);
  if (!rc) rc = dd_auth_random_token(token);
  if (!rc) rc = cat_token_hash(hash, token, strlen(token));
  if (!rc)
    rc = cat_recipient_rotate(svc_store(call), &r, req->name, hash, expiry, old_expiry);
  if (!rc) rc = shr_token_reply(call, out, r, token, expiry);
  memset(token, 0, sizeof token);
  return rc;
}

static int shr_get_recipient(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__GetRecipientRequest *req = (const void *)in;
  cat_recipient *r = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_recipient_get(svc_store(call), &r, req->name);
  return svc_reply(out, r ? &r->base : NULL, rc);
}

static int shr_list_recipients(dd_call *call, const ProtobufCMessage *in,
                               ProtobufCMessage **out) {
  Deltad__Sharing__V1__ListRecipientsResponse *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_recipient_list(svc_store(call), &resp, (const void *)in);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int shr_delete_recipient(dd_call *call, const ProtobufCMessage *in,
                                ProtobufCMessage **out) {
  const Deltad__Sharing__V1__DeleteRecipientRequest *req = (const void *)in;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_recipient_delete(svc_store(call), req->name);
  return svc_reply_empty(out, rc);
}

/* ---- grants ------------------------------------------------------------------------------ */

static int shr_grant(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__GrantShareRequest *req = (const void *)in;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_grant_add(svc_store(call), req->share, req->recipient);
  return svc_reply_empty(out, rc);
}

static int shr_revoke(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__RevokeShareRequest *req = (const void *)in;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_grant_remove(svc_store(call), req->share, req->recipient);
  return svc_reply_empty(out, rc);
}

static int shr_list_grants(dd_call *call, const ProtobufCMessage *in, ProtobufCMessage **out) {
  const Deltad__Sharing__V1__ListGrantsRequest *req = (const void *)in;
  Deltad__Sharing__V1__ListGrantsResponse *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_grant_list(svc_store(call), &resp, req->share, req->recipient);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

/* ---- method table ------------------------------------------------------------------------- */

#define SHX_M(name, fn, in, o) \
  {"/deltad.sharing.v1.DeltaSharingExtensionService/" name, \
   &deltad__sharing__v1__##in##__descriptor, &o, fn, 0}
#define SHX_T(x) deltad__sharing__v1__##x##__descriptor
#define SHX_EMPTY google__protobuf__empty__descriptor

const dd_method dd_sharing_ext_methods[] = {
    SHX_M("CreateShare", shr_create_share, create_share_request, SHX_T(share_info)),
    SHX_M("GetShareInfo", shr_get_share_info, get_share_info_request, SHX_T(share_info)),
    SHX_M("ListShareInfos", shr_list_share_infos, list_share_infos_request,
          SHX_T(list_share_infos_response)),
    SHX_M("UpdateShare", shr_update_share, update_share_request, SHX_T(share_info)),
    SHX_M("DeleteShare", shr_delete_share, delete_share_request, SHX_EMPTY),
    SHX_M("CreateSharingSchema", shr_create_schema, create_sharing_schema_request,
          SHX_T(sharing_schema_info)),
    SHX_M("DeleteSharingSchema", shr_delete_schema, delete_sharing_schema_request, SHX_EMPTY),
    SHX_M("AddTable", shr_add_table, add_table_request, SHX_T(shared_table)),
    SHX_M("UpdateTable", shr_update_table, update_table_request, SHX_T(shared_table)),
    SHX_M("RemoveTable", shr_remove_table, remove_table_request, SHX_EMPTY),
    SHX_M("CreateRecipient", shr_create_recipient, create_recipient_request,
          SHX_T(recipient_token_response)),
    SHX_M("GetRecipient", shr_get_recipient, get_recipient_request, SHX_T(recipient)),
    SHX_M("ListRecipients", shr_list_recipients, list_recipients_request,
          SHX_T(list_recipients_response)),
    SHX_M("DeleteRecipient", shr_delete_recipient, delete_recipient_request, SHX_EMPTY),
    SHX_M("RotateRecipientToken", shr_rotate_token, rotate_recipient_token_request,
          SHX_T(recipient_token_response)),
    SHX_M("GrantShare", shr_grant, grant_share_request, SHX_EMPTY),
    SHX_M("RevokeShare", shr_revoke, revoke_share_request, SHX_EMPTY),
    SHX_M("ListGrants", shr_list_grants, list_grants_request, SHX_T(list_grants_response)),
};
const size_t dd_sharing_ext_methods_len =
    sizeof dd_sharing_ext_methods / sizeof dd_sharing_ext_methods[0];
