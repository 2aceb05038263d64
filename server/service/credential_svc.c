/* credential_svc.c: deltad.credentials.v1.CredentialService: credentials (secrets are
 * accepted, encrypted at rest by the store, and never returned) and storage locations.
 * Admin only; each handler checks the caller and hands the request to the catalog store. */
#include "common/err.h"
#include "deltad/credentials/v1/credentials.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "server/service/svc_util.h"

#define CR_REQ(type) const Deltad__Credentials__V1__##type *req = (const void *)msg

/* ---- credentials ----------------------------------------------------------------------------- */

static int cr_create_credential(dd_call *call, const ProtobufCMessage *msg,
                                ProtobufCMessage **out) {
  CR_REQ(CreateCredentialRequest);
  cat_credential *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_credential_create(svc_store(call), &resp, svc_actor(call), req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cr_get_credential(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CR_REQ(GetCredentialRequest);
  cat_credential *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_credential_get(svc_store(call), &resp, req->name);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cr_list_credentials(dd_call *call, const ProtobufCMessage *msg,
                               ProtobufCMessage **out) {
  CR_REQ(ListCredentialsRequest);
  Deltad__Credentials__V1__ListCredentialsResponse *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_credential_list(svc_store(call), &resp, req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cr_delete_credential(dd_call *call, const ProtobufCMessage *msg,
                                ProtobufCMessage **out) {
  CR_REQ(DeleteCredentialRequest);
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_credential_delete(svc_store(call), req->name);
  return svc_reply_empty(out, rc);
}

/* ---- storage locations ----------------------------------------------------------------------- */

static int cr_list_locations(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CR_REQ(ListStorageLocationsRequest);
  Deltad__Credentials__V1__ListStorageLocationsResponse *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_location_list(svc_store(call), &resp, req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cr_create_location(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CR_REQ(CreateStorageLocationRequest);
  cat_location *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_location_create(svc_store(call), &resp, svc_actor(call), req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cr_get_location(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CR_REQ(GetStorageLocationRequest);
  cat_location *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_location_get(svc_store(call), &resp, req->name);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cr_delete_location(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CR_REQ(DeleteStorageLocationRequest);
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_location_delete(svc_store(call), req->name);
  return svc_reply_empty(out, rc);
}

/* ---- the table ------------------------------------------------------------------------------- */

#define CR_METHOD(name, fn, in, outd)                                                           \
  {"/deltad.credentials.v1.CredentialService/" name,                                           \
   &deltad__credentials__v1__##in##__descriptor, &outd, fn, 0}

const dd_method dd_credential_methods[] = {
    CR_METHOD("CreateCredential", cr_create_credential, create_credential_request,
              deltad__credentials__v1__credential__descriptor),
    CR_METHOD("GetCredential", cr_get_credential, get_credential_request,
              deltad__credentials__v1__credential__descriptor),
    CR_METHOD("ListCredentials", cr_list_credentials, list_credentials_request,
              deltad__credentials__v1__list_credentials_response__descriptor),
    CR_METHOD("DeleteCredential", cr_delete_credential, delete_credential_request,
              google__protobuf__empty__descriptor),
    CR_METHOD("ListStorageLocations", cr_list_locations, list_storage_locations_request,
              deltad__credentials__v1__list_storage_locations_response__descriptor),
    CR_METHOD("CreateStorageLocation", cr_create_location, create_storage_location_request,
              deltad__credentials__v1__storage_location__descriptor),
    CR_METHOD("GetStorageLocation", cr_get_location, get_storage_location_request,
              deltad__credentials__v1__storage_location__descriptor),
    CR_METHOD("DeleteStorageLocation", cr_delete_location, delete_storage_location_request,
              google__protobuf__empty__descriptor),
};
const size_t dd_credential_methods_len =
    sizeof dd_credential_methods / sizeof dd_credential_methods[0];
