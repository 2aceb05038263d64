/* catalog_svc.c: deltad.catalog.v1.CatalogService: catalogs and schemas, admin only.
 * Each handler checks the caller, hands the request to the catalog store (which validates
 * it and runs one transaction) and returns the store's message as the response. The reads
 * first ask the transport's memo (svc_read_memo_hit: same catalog state, caller and
 * request, same reply). */
#include "common/err.h"
#include "deltad/catalog/v1/catalog.pb-c.h"
#include "google/protobuf/empty.pb-c.h"
#include "server/service/svc_util.h"

#define CS_REQ(type) const Deltad__Catalog__V1__##type *req = (const void *)msg

/* ---- catalogs ------------------------------------------------------------------------------ */

static int cs_list_catalogs(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(ListCatalogsRequest);
  Deltad__Catalog__V1__ListCatalogsResponse *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc && svc_read_memo_hit(call, msg)) return 0;
  if (!rc) rc = cat_catalog_list(svc_store(call), &resp, req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cs_create_catalog(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(CreateCatalogRequest);
  cat_catalog *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_catalog_create(svc_store(call), &resp, svc_actor(call), req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cs_get_catalog(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(GetCatalogRequest);
  cat_catalog *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc && svc_read_memo_hit(call, msg)) return 0;
  if (!rc) rc = cat_catalog_get(svc_store(call), &resp, req->name);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cs_update_catalog(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(UpdateCatalogRequest);
  cat_catalog *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_catalog_update(svc_store(call), &resp, svc_actor(call), req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cs_delete_catalog(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(DeleteCatalogRequest);
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_catalog_delete(svc_store(call), req->name, req->force);
  return svc_reply_empty(out, rc);
}

/* ---- schemas ------------------------------------------------------------------------------- */

static int cs_list_schemas(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(ListSchemasRequest);
  Deltad__Catalog__V1__ListSchemasResponse *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc && svc_read_memo_hit(call, msg)) return 0;
  if (!rc) rc = cat_schema_list(svc_store(call), &resp, req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cs_create_schema(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(CreateSchemaRequest);
  cat_schema *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_schema_create(svc_store(call), &resp, svc_actor(call), req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cs_get_schema(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(GetSchemaRequest);
  cat_schema *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc && svc_read_memo_hit(call, msg)) return 0;
  if (!rc) rc = cat_schema_get(svc_store(call), &resp, req->full_name);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cs_update_schema(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(UpdateSchemaRequest);
  cat_schema *resp = NULL;
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_schema_update(svc_store(call), &resp, svc_actor(call), req);
  return svc_reply(out, resp ? &resp->base : NULL, rc);
}

static int cs_delete_schema(dd_call *call, const ProtobufCMessage *msg, ProtobufCMessage **out) {
  CS_REQ(DeleteSchemaRequest);
  int rc = svc_require_admin(call);
  if (!rc) rc = cat_schema_delete(svc_store(call), req->full_name, req->force);
  return svc_reply_empty(out, rc);
}

/* ---- the table ----------------------------------------------------------------------------- */

/* Reads answer from the catalog alone (DD_METHOD_QUICK); writes commit (an fsync). */
#define CS_METHOD_F(name, fn, in, outd, flags)                                          \
  {"/deltad.catalog.v1.CatalogService/" name, &deltad__catalog__v1__##in##__descriptor, \
   &outd, fn, flags}
#define CS_METHOD(name, fn, in, outd) CS_METHOD_F(name, fn, in, outd, 0)
#define CS_READ(name, fn, in, outd) CS_METHOD_F(name, fn, in, outd, DD_METHOD_QUICK)

const dd_method dd_catalog_methods[] = {
    CS_READ("ListCatalogs", cs_list_catalogs, list_catalogs_request,
            deltad__catalog__v1__list_catalogs_response__descriptor),
    CS_METHOD("CreateCatalog", cs_create_catalog, create_catalog_request,
              deltad__catalog__v1__catalog_info__descriptor),
    CS_READ("GetCatalog", cs_get_catalog, get_catalog_request,
            deltad__catalog__v1__catalog_info__descriptor),
    CS_METHOD("UpdateCatalog", cs_update_catalog, update_catalog_request,
              deltad__catalog__v1__catalog_info__descriptor),
    CS_METHOD("DeleteCatalog", cs_delete_catalog, delete_catalog_request,
              google__protobuf__empty__descriptor),
    CS_READ("ListSchemas", cs_list_schemas, list_schemas_request,
            deltad__catalog__v1__list_schemas_response__descriptor),
    CS_METHOD("CreateSchema", cs_create_schema, create_schema_request,
              deltad__catalog__v1__schema_info__descriptor),
    CS_READ("GetSchema", cs_get_schema, get_schema_request,
            deltad__catalog__v1__schema_info__descriptor),
    CS_METHOD("UpdateSchema", cs_update_schema, update_schema_request,
              deltad__catalog__v1__schema_info__descriptor),
    CS_METHOD("DeleteSchema", cs_delete_schema, delete_schema_request,
              google__protobuf__empty__descriptor),
};
const size_t dd_catalog_methods_len = sizeof dd_catalog_methods / sizeof dd_catalog_methods[0];
