/* cat_catalog.c: catalogs in the store: create, get, update (comment, rename, properties),
 * delete (with its schemas when forced) and list. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define CAT__CATALOG_DESC (&deltad__catalog__v1__catalog_info__descriptor)
#define CAT__CATALOG_PROPS (&deltad__catalog__v1__catalog_info__properties_entry__descriptor)

/* Finds the catalog named name inside txn; DD_ENOTFOUND with the usual message. */
static int cat__catalog_find(cat_store *s, cat_txn *txn, const char *name, cat_catalog **out,
                             char id[CAT__ID_LEN + 1]) {
  int rc = cat__get_by_name(s, txn, CAT__DB_CATALOG_NAMES, CAT__DB_CATALOGS, NULL, name,
                            CAT__CATALOG_DESC, (ProtobufCMessage **)out, id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "catalog '%s' not found", name);
  return rc;
}

/* ---- create -------------------------------------------------------------------------------- */

static int cat__catalog_insert(cat_store *s, cat_txn *txn, cat_catalog **out, const char *actor,
                               const Deltad__Catalog__V1__CreateCatalogRequest *req) {
  char id[CAT__ID_LEN + 1];
  cat__kv **props = NULL;
  int rc = cat__uuid(id);
  if (!rc) rc = cat__props_view(&props, CAT__CATALOG_PROPS, req->n_properties,
                                (void *const *)req->properties);
  if (rc) return rc;
  rc = cat__name_put(s, txn, CAT__DB_CATALOG_NAMES, NULL, req->name, id);
  if (rc == DD_EEXISTS) rc = dd_err_set(DD_EEXISTS, "catalog '%s' already exists", req->name);
  if (rc) goto cleanup;
  Deltad__Catalog__V1__CatalogInfo rec = DELTAD__CATALOG__V1__CATALOG_INFO__INIT;
  int64_t now = cat__now_ms();
  rec.id = id;
  rec.name = req->name;
  rec.comment = req->comment;
  rec.storage_root = req->storage_root;
  rec.n_properties = req->n_properties;
  rec.properties = (Deltad__Catalog__V1__CatalogInfo__PropertiesEntry **)props;
  rec.owner = rec.created_by = rec.updated_by = (char *)actor;
  rec.create_at = rec.update_at = now;
  rc = cat__rec_put(s, txn, CAT__DB_CATALOGS, id, &rec.base, (ProtobufCMessage **)out);
cleanup:
  free(props);
  return rc;
}

int cat_catalog_create(cat_store *s, cat_catalog **out, const char *actor,
                       const Deltad__Catalog__V1__CreateCatalogRequest *req) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = cat_name_check("name", req->name, 0);
  if (!rc) rc = cat__props_check("properties", req->n_properties, (void *const *)req->properties);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__catalog_insert(s, txn, out, actor, req);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- get / list ------------------------------------------------------------------------------ */

int cat_catalog_get(cat_store *s, cat_catalog **out, const char *name) {
  cat_txn *txn = NULL;
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = cat_name_check("name", name, 0);
  if (rc) return rc;
  if ((rc = cat__txn_begin(s, &txn, false))) return rc;
  rc = cat__catalog_find(s, txn, name, out, id);
  cat__txn_abort(txn);
  return rc;
}

int cat_catalog_list(cat_store *s, Deltad__Catalog__V1__ListCatalogsResponse **out,
                     const Deltad__Catalog__V1__ListCatalogsRequest *req) {
  cat__page page;
  *out = NULL;
  int rc = cat__list(s, CAT__DB_CATALOG_NAMES, CAT__DB_CATALOGS, NULL, CAT__CATALOG_DESC,
                     req->max_results, req->page_token, &page);
  if (rc) return rc;
  Deltad__Catalog__V1__ListCatalogsResponse *resp = malloc(sizeof *resp);
  if (!resp) {
    cat__page_free(&page);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__catalog__v1__list_catalogs_response__init(resp);
  resp->n_catalogs = page.n;
  resp->catalogs = (cat_catalog **)page.items;
  resp->next_page_token = page.next;
  *out = resp;
  return 0;
}

/* ---- update ---------------------------------------------------------------------------------- */

/* Walk callback: rewrites catalog_name and full_name of one schema (arg: the new name). */
static int cat__schema_recatalog(cat_store *s, cat_txn *txn, const char *lname, const char *id,
                                 void *arg) {
  const char *new_name = arg;
  char full[2 * CAT__NAME_MAX + 2];
  cat_schema *sch = NULL;
  (void)lname;
  int rc = cat__rec_get(s, txn, CAT__DB_SCHEMAS, id, &deltad__catalog__v1__schema_info__descriptor,
                        (ProtobufCMessage **)&sch);
  if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ECORRUPT, "catalog store: dangling schema %s", id);
  if (rc) return rc;
  cat_schema view = *sch;
  snprintf(full, sizeof full, "%s.%s", new_name, sch->name);
  view.catalog_name = (char *)new_name;
  view.full_name = full;
  rc = cat__rec_put(s, txn, CAT__DB_SCHEMAS, id, &view.base, NULL);
  protobuf_c_message_free_unpacked(&sch->base, NULL);
  return rc;
}

static int cat__catalog_rename_schemas(cat_store *s, cat_txn *txn, const char *cat_id,
                                       const char *new_name) {
  return cat__scope_walk(s, txn, CAT__DB_SCHEMA_NAMES, cat_id, cat__schema_recatalog,
                         (void *)new_name);
}

static int cat__catalog_rename(cat_store *s, cat_txn *txn, const char *id, const char *old_name,
                               const char *new_name) {
  int rc = cat__name_del(s, txn, CAT__DB_CATALOG_NAMES, NULL, old_name);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_CATALOG_NAMES, NULL, new_name, id);
  if (rc == DD_EEXISTS) return dd_err_set(DD_EEXISTS, "catalog '%s' already exists", new_name);
  if (!rc) rc = cat__catalog_rename_schemas(s, txn, id, new_name);
  return rc;
}

static int cat__catalog_apply(cat_store *s, cat_txn *txn, cat_catalog **out, const char *actor,
                              const Deltad__Catalog__V1__UpdateCatalogRequest *req) {
  char id[CAT__ID_LEN + 1];
  cat_catalog *cur = NULL;
  cat__kv **props = NULL;
  int rc = cat__catalog_find(s, txn, req->name, &cur, id);
  if (rc) return rc;
  cat_catalog view = *cur;
  bool renamed = req->_new_name_case == DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___NEW_NAME_NEW_NAME;
  if (renamed && (rc = cat__catalog_rename(s, txn, id, cur->name, req->new_name))) goto cleanup;
  if (renamed) view.name = req->new_name;
  if (req->_comment_case == DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___COMMENT_COMMENT)
    view.comment = req->comment;
  if (req->n_properties > 0) {
    rc = cat__props_view(&props, CAT__CATALOG_PROPS, req->n_properties,
                         (void *const *)req->properties);
    if (rc) goto cleanup;
    view.n_properties = req->n_properties;
    view.properties = (Deltad__Catalog__V1__CatalogInfo__PropertiesEntry **)props;
  }
  view.updated_by = (char *)actor;
  view.update_at = cat__now_ms();
  rc = cat__rec_put(s, txn, CAT__DB_CATALOGS, id, &view.base, (ProtobufCMessage **)out);
cleanup:
  free(props);
  protobuf_c_message_free_unpacked(&cur->base, NULL);
  return rc;
}

static int cat__catalog_update_check(const Deltad__Catalog__V1__UpdateCatalogRequest *req) {
  int rc = cat_name_check("name", req->name, 0);
  if (!rc && req->_new_name_case == DELTAD__CATALOG__V1__UPDATE_CATALOG_REQUEST___NEW_NAME_NEW_NAME)
    rc = cat_name_check("new_name", req->new_name, 0);
  if (!rc) rc = cat__props_check("properties", req->n_properties, (void *const *)req->properties);
  return rc;
}

int cat_catalog_update(cat_store *s, cat_catalog **out, const char *actor,
                       const Deltad__Catalog__V1__UpdateCatalogRequest *req) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = cat__catalog_update_check(req);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__catalog_apply(s, txn, out, actor, req);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- delete ---------------------------------------------------------------------------------- */

typedef struct cat__drop_arg {
  const char *cat_id, *name;
  int force;
} cat__drop_arg;

/* Walk callback: deletes one schema of the catalog, or refuses when not forced. */
static int cat__schema_drop(cat_store *s, cat_txn *txn, const char *lname, const char *id,
                            void *arg) {
  const cat__drop_arg *a = arg;
  if (!a->force) return dd_err_set(DD_EPRECOND, "catalog '%s' is not empty; use force", a->name);
  int rc = cat__key_del(s, txn, CAT__DB_SCHEMAS, id, CAT__ID_LEN);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_SCHEMA_NAMES, a->cat_id, lname);
  return rc;
}

static int cat__catalog_drop_schemas(cat_store *s, cat_txn *txn, const char *cat_id,
                                     const char *name, int force) {
  cat__drop_arg a = {cat_id, name, force};
  return cat__scope_walk(s, txn, CAT__DB_SCHEMA_NAMES, cat_id, cat__schema_drop, &a);
}

int cat_catalog_delete(cat_store *s, const char *name, int force) {
  cat_txn *txn = NULL;
  cat_catalog *cur = NULL;
  char id[CAT__ID_LEN + 1];
  int rc = cat_name_check("name", name, 0);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__catalog_find(s, txn, name, &cur, id);
  /* Lance namespaces and tables below the catalog (and below its schemas) go first. */
  if (!rc) rc = cat__lance_below_drop(s, txn, 1, id, cur->name, force);
  if (!rc) rc = cat__catalog_drop_schemas(s, txn, id, cur->name, force);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_CATALOG_NAMES, NULL, name);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_CATALOGS, id, CAT__ID_LEN);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (cur) protobuf_c_message_free_unpacked(&cur->base, NULL);
  return rc;
}
