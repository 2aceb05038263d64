/* cat_schema.c: schemas in the store, addressed by "catalog.schema": create, get,
 * update (comment, rename within the catalog, properties), delete and list per catalog. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__SCHEMA_DESC (&deltad__catalog__v1__schema_info__descriptor)
#define CAT__SCHEMA_PROPS (&deltad__catalog__v1__schema_info__properties_entry__descriptor)

/* The catalog a schema lives in: its id and display name. */
typedef struct cat__parent {
  char id[CAT__ID_LEN + 1];
  char name[CAT__NAME_MAX + 1];
} cat__parent;

static int cat__parent_find(cat_store *s, cat_txn *txn, const char *name, cat__parent *out) {
  cat_catalog *c = NULL;
  int rc = cat__get_by_name(s, txn, CAT__DB_CATALOG_NAMES, CAT__DB_CATALOGS, NULL, name,
                            &deltad__catalog__v1__catalog_info__descriptor,
                            (ProtobufCMessage **)&c, out->id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "catalog '%s' not found", name);
  if (rc) return rc;
  snprintf(out->name, sizeof out->name, "%s", c->name);
  protobuf_c_message_free_unpacked(&c->base, NULL);
  return 0;
}

/* Finds schema full_name: its catalog, record and id. */
static int cat__schema_find(cat_store *s, cat_txn *txn, const char *full_name, cat__parent *p,
                            cat_schema **out, char id[CAT__ID_LEN + 1]) {
  char cname[256], sname[256];
  int rc = cat_full_name_split("full_name", full_name, cname, sname);
  if (!rc) rc = cat__parent_find(s, txn, cname, p);
  if (rc) return rc;
  rc = cat__get_by_name(s, txn, CAT__DB_SCHEMA_NAMES, CAT__DB_SCHEMAS, p->id, sname,
                        CAT__SCHEMA_DESC, (ProtobufCMessage **)out, id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "schema '%s' not found", full_name);
  return rc;
}

/* Ends a write: commits on success, aborts on failure and frees a half-made *out. */
static int cat__schema_finish(int rc, cat_txn *txn, cat_schema **out) {
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc && out && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- create ---------------------------------------------------------------------------------- */

static int cat__schema_insert(cat_store *s, cat_txn *txn, cat_schema **out, const char *actor,
                              const Deltad__Catalog__V1__CreateSchemaRequest *req) {
  cat__parent p;
  char id[CAT__ID_LEN + 1], full[2 * CAT__NAME_MAX + 2];
  cat__kv **props = NULL;
  int rc = cat__parent_find(s, txn, req->catalog_name, &p);
  if (!rc) rc = cat__uuid(id);
  if (!rc) rc = cat__props_view(&props, CAT__SCHEMA_PROPS, req->n_properties,
                                (void *const *)req->properties);
  if (rc) return rc;
  snprintf(full, sizeof full, "%s.%s", p.name, req->name);
  rc = cat__name_put(s, txn, CAT__DB_SCHEMA_NAMES, p.id, req->name, id);
  if (rc == DD_EEXISTS) rc = dd_err_set(DD_EEXISTS, "schema '%s' already exists", full);
  if (rc) goto cleanup;
  cat_schema rec = DELTAD__CATALOG__V1__SCHEMA_INFO__INIT;
  rec.schema_id = id;
  rec.name = req->name;
  rec.catalog_name = p.name;
  rec.full_name = full;
  rec.comment = req->comment;
  rec.storage_root = req->storage_root;
  rec.n_properties = req->n_properties;
  rec.properties = (Deltad__Catalog__V1__SchemaInfo__PropertiesEntry **)props;
  rec.owner = rec.created_by = rec.updated_by = (char *)actor;
  rec.create_at = rec.update_at = cat__now_ms();
  rc = cat__rec_put(s, txn, CAT__DB_SCHEMAS, id, &rec.base, (ProtobufCMessage **)out);
cleanup:
  free(props);
  return rc;
}

int cat_schema_create(cat_store *s, cat_schema **out, const char *actor,
                      const Deltad__Catalog__V1__CreateSchemaRequest *req) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = cat_name_check("catalog_name", req->catalog_name, 0);
  if (!rc) rc = cat_name_check("name", req->name, 0);
  if (!rc) rc = cat__props_check("properties", req->n_properties, (void *const *)req->properties);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__schema_insert(s, txn, out, actor, req);
  return cat__schema_finish(rc, txn, out);
}

/* ---- get / list ------------------------------------------------------------------------------ */

int cat_schema_get(cat_store *s, cat_schema **out, const char *full_name) {
  cat_txn *txn = NULL;
  cat__parent p;
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  rc = cat__schema_find(s, txn, full_name, &p, out, id);
  cat__txn_abort(txn);
  return rc;
}

int cat_schema_list(cat_store *s, Deltad__Catalog__V1__ListSchemasResponse **out,
                    const Deltad__Catalog__V1__ListSchemasRequest *req) {
  cat_txn *txn = NULL;
  cat__parent p;
  cat__page page;
  *out = NULL;
  int rc = cat_name_check("catalog_name", req->catalog_name, 0);
  if (!rc) rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  rc = cat__parent_find(s, txn, req->catalog_name, &p);
  cat__txn_abort(txn);
  if (rc) return rc;
  rc = cat__list(s, CAT__DB_SCHEMA_NAMES, CAT__DB_SCHEMAS, p.id, CAT__SCHEMA_DESC,
                 req->max_results, req->page_token, &page);
  if (rc) return rc;
  Deltad__Catalog__V1__ListSchemasResponse *resp = malloc(sizeof *resp);
  if (!resp) {
    cat__page_free(&page);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__catalog__v1__list_schemas_response__init(resp);
  resp->n_schemas = page.n;
  resp->schemas = (cat_schema **)page.items;
  resp->next_page_token = page.next;
  *out = resp;
  return 0;
}

/* ---- update ---------------------------------------------------------------------------------- */

static int cat__schema_apply(cat_store *s, cat_txn *txn, cat_schema **out, const char *actor,
                             const Deltad__Catalog__V1__UpdateSchemaRequest *req) {
  cat__parent p;
  char id[CAT__ID_LEN + 1], full[2 * CAT__NAME_MAX + 2];
  cat_schema *cur = NULL;
  cat__kv **props = NULL;
  int rc = cat__schema_find(s, txn, req->full_name, &p, &cur, id);
  if (rc) return rc;
  cat_schema view = *cur;
  if (req->_new_name_case == DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___NEW_NAME_NEW_NAME) {
    snprintf(full, sizeof full, "%s.%s", p.name, req->new_name);
    rc = cat__name_del(s, txn, CAT__DB_SCHEMA_NAMES, p.id, cur->name);
    if (!rc) rc = cat__name_put(s, txn, CAT__DB_SCHEMA_NAMES, p.id, req->new_name, id);
    if (rc == DD_EEXISTS) rc = dd_err_set(DD_EEXISTS, "schema '%s' already exists", full);
    if (rc) goto cleanup;
    view.name = req->new_name;
    view.full_name = full;
  }
  if (req->_comment_case == DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___COMMENT_COMMENT)
    view.comment = req->comment;
  if (req->n_properties > 0) {
    rc = cat__props_view(&props, CAT__SCHEMA_PROPS, req->n_properties,
                         (void *const *)req->properties);
    if (rc) goto cleanup;
    view.n_properties = req->n_properties;
    view.properties = (Deltad__Catalog__V1__SchemaInfo__PropertiesEntry **)props;
  }
  view.updated_by = (char *)actor;
  view.update_at = cat__now_ms();
  rc = cat__rec_put(s, txn, CAT__DB_SCHEMAS, id, &view.base, (ProtobufCMessage **)out);
cleanup:
  free(props);
  protobuf_c_message_free_unpacked(&cur->base, NULL);
  return rc;
}

int cat_schema_update(cat_store *s, cat_schema **out, const char *actor,
                      const Deltad__Catalog__V1__UpdateSchemaRequest *req) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = 0;
  if (req->_new_name_case == DELTAD__CATALOG__V1__UPDATE_SCHEMA_REQUEST___NEW_NAME_NEW_NAME)
    rc = cat_name_check("new_name", req->new_name, 0);
  if (!rc) rc = cat__props_check("properties", req->n_properties, (void *const *)req->properties);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__schema_apply(s, txn, out, actor, req);
  return cat__schema_finish(rc, txn, out);
}

/* ---- delete ---------------------------------------------------------------------------------- */

int cat_schema_delete(cat_store *s, const char *full_name, int force) {
  cat_txn *txn = NULL;
  cat__parent p;
  cat_schema *cur = NULL;
  char id[CAT__ID_LEN + 1];
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__schema_find(s, txn, full_name, &p, &cur, id);
  /* A schema holds Lance namespaces and tables (level 2 of the Lance API): without force a
   * schema that has any is not deleted; with force they go in the same transaction. */
  if (!rc) rc = cat__lance_below_drop(s, txn, 2, id, full_name, force);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_SCHEMA_NAMES, p.id, cur->name);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_SCHEMAS, id, CAT__ID_LEN);
  if (cur) protobuf_c_message_free_unpacked(&cur->base, NULL);
  return cat__schema_finish(rc, txn, NULL);
}
