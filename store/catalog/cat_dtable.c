/* cat_dtable.c: Delta table records in the store (cat_store.h, "Delta tables in the
 * catalog"): create (EXTERNAL or MANAGED), get by name or id, list per schema, update
 * (rename, comment, owner, properties). Drop, undrop and purge are in cat_dtable_drop.c.
 * The key layout is in cat_internal.h ("Delta tables"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_dtable_int.h"

#define DT_PROPS (&deltad__tables__v1__table_info__properties_entry__descriptor)

/* ---- names and schemas --------------------------------------------------------------------- */

int cat_table_name_split(const char *field, const char *full, char cat[256], char sch[256],
                         char tbl[256]) {
  const char *a = full ? strchr(full, '.') : NULL, *b = a ? strchr(a + 1, '.') : NULL;
  if (!a || !b || (size_t)(a - full) > 255 || (size_t)(b - a - 1) > 255 || strlen(b + 1) > 255)
    return dd_err_set(DD_EINVAL, "%s: '%s' is not catalog.schema.table", field, full ? full : "");
  snprintf(cat, 256, "%.*s", (int)(a - full), full);
  snprintf(sch, 256, "%.*s", (int)(b - a - 1), a + 1);
  snprintf(tbl, 256, "%s", b + 1);
  int rc = cat_name_check(field, cat, 0);
  if (!rc) rc = cat_name_check(field, sch, 0);
  if (!rc) rc = cat_name_check(field, tbl, 0);
  return rc;
}

int cat_new_id(char out[37]) { return cat__uuid(out); }

int cat__dt_schema(cat_store *s, cat_txn *txn, const char *cat, const char *sch,
                   cat__dt_parent *out) {
  cat_catalog *c = NULL;
  cat_schema *sc = NULL;
  char cid[CAT__ID_LEN + 1];
  memset(out, 0, sizeof *out);
  int rc = cat__get_by_name(s, txn, CAT__DB_CATALOG_NAMES, CAT__DB_CATALOGS, NULL, cat,
                            &deltad__catalog__v1__catalog_info__descriptor,
                            (ProtobufCMessage **)&c, cid);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "catalog '%s' not found", cat);
  if (!rc) rc = cat__get_by_name(s, txn, CAT__DB_SCHEMA_NAMES, CAT__DB_SCHEMAS, cid, sch,
                                 &deltad__catalog__v1__schema_info__descriptor,
                                 (ProtobufCMessage **)&sc, out->schema_id);
  if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ENOTFOUND, "schema '%s.%s' not found", cat, sch);
  if (!rc) {
    snprintf(out->catalog, sizeof out->catalog, "%s", c->name);
    snprintf(out->schema, sizeof out->schema, "%s", sc->name);
    const char *root = sc->storage_root && *sc->storage_root ? sc->storage_root : c->storage_root;
    out->root = cat__strdup(root ? root : "");
    if (!out->root) rc = dd_err_set(DD_ENOMEM, "out of memory");
  }
  if (c) protobuf_c_message_free_unpacked(&c->base, NULL);
  if (sc) protobuf_c_message_free_unpacked(&sc->base, NULL);
  return rc;
}

int cat__dt_names(cat_dtable *t, const char *cat, const char *sch) {
  char full[3 * 256];
  snprintf(full, sizeof full, "%s.%s.%s", cat, sch, t->name);
  int rc = cat__str_replace(&t->catalog_name, cat);
  if (!rc) rc = cat__str_replace(&t->schema_name, sch);
  if (!rc) rc = cat__str_replace(&t->full_name, *cat ? full : "");
  return rc;
}

int cat__dt_names_by_schema(cat_store *s, cat_txn *txn, cat_dtable *t) {
  cat_schema *sc = NULL;
  int rc = cat__rec_get(s, txn, CAT__DB_SCHEMAS, t->schema_id,
                        &deltad__catalog__v1__schema_info__descriptor, (ProtobufCMessage **)&sc);
  if (rc == DD_ENOTFOUND) return cat__dt_names(t, "", ""); /* its schema is gone */
  if (!rc) rc = cat__dt_names(t, sc->catalog_name, sc->name);
  if (sc) protobuf_c_message_free_unpacked(&sc->base, NULL);
  return rc;
}

int cat__table_name_taken(cat_store *s, cat_txn *txn, const char *schema_id, const char *name,
                          const char *full) {
  char id[CAT__ID_LEN + 1];
  int rc = cat__name_get(s, txn, CAT__DB_DELTA_TABLE_NAMES, schema_id, name, id);
  if (rc == DD_ENOTFOUND) rc = cat__name_get(s, txn, CAT__DB_LANCE_TABLE_NAMES, schema_id, name, id);
  if (rc == 0) return dd_err_set(DD_EEXISTS, "table '%s' already exists", full);
  return rc == DD_ENOTFOUND ? 0 : rc;
}

int cat__dt_find(cat_store *s, cat_txn *txn, const char *full_name, cat__dt_parent *p,
                 cat_dtable **out, char id[CAT__ID_LEN + 1]) {
  char cat[256], sch[256], tbl[256];
  *out = NULL;
  memset(p, 0, sizeof *p);
  int rc = cat_table_name_split("full_name", full_name, cat, sch, tbl);
  if (!rc) rc = cat__dt_schema(s, txn, cat, sch, p);
  if (rc) return rc; /* an unknown catalog or schema says which */
  rc = cat__get_by_name(s, txn, CAT__DB_DELTA_TABLE_NAMES, CAT__DB_DELTA_TABLES, p->schema_id, tbl,
                        &deltad__tables__v1__table_info__descriptor, (ProtobufCMessage **)out, id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "table '%s' not found", full_name);
  if (!rc) rc = cat__dt_names(*out, p->catalog, p->schema);
  return rc;
}

int cat__dt_finish(int rc, cat_txn *txn, cat_dtable **out) {
  if (!rc && txn && txn->write) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc && out && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- create -------------------------------------------------------------------------------- */

static int dt_location_check(const char *loc) {
  size_t n = loc ? strlen(loc) : 0;
  if (n == 0) return dd_err_set(DD_EINVAL, "storage_location: required");
  if (n > CAT_DTABLE_LOCATION_MAX)
    return dd_err_set(DD_EINVAL, "storage_location: longer than %d bytes", CAT_DTABLE_LOCATION_MAX);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)loc[i] < 0x20 || loc[i] == 0x7F)
      return dd_err_set(DD_EINVAL, "storage_location: contains a control character");
  if (loc[0] != '/' && !strstr(loc, "://"))
    return dd_err_set(DD_EINVAL, "storage_location: '%s' is not an absolute path or URL", loc);
  return 0;
}

static int dt_insert(cat_store *s, cat_txn *txn, cat_dtable **out, const char *actor,
                     const cat_dtable_new *nw) {
  const Deltad__Tables__V1__CreateTableRequest *req = nw->req;
  cat__dt_parent p;
  char id[CAT__ID_LEN + 1], full[3 * 256];
  cat__kv **props = NULL;
  int rc = cat__dt_schema(s, txn, req->catalog_name, req->schema_name, &p);
  if (rc) return rc;
  snprintf(full, sizeof full, "%s.%s.%s", p.catalog, p.schema, req->name);
  if (nw->id) snprintf(id, sizeof id, "%s", nw->id);
  else rc = cat__uuid(id);
  if (!rc) rc = cat__table_name_taken(s, txn, p.schema_id, req->name, full);
  if (!rc) rc = cat__props_view(&props, DT_PROPS, req->n_properties, (void *const *)req->properties);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_DELTA_TABLE_NAMES, p.schema_id, req->name, id);
  if (rc == DD_EEXISTS) rc = dd_err_set(DD_EEXISTS, "table '%s' already exists", full);
  if (rc) goto cleanup;
  cat_dtable rec = DELTAD__TABLES__V1__TABLE_INFO__INIT;
  rec.table_id = id;
  rec.name = req->name;
  rec.schema_id = p.schema_id;
  rec.table_type = nw->managed ? "MANAGED" : "EXTERNAL";
  rec.data_source_format = "DELTA";
  rec.storage_location = (char *)nw->location;
  rec.comment = req->comment;
  rec.n_properties = req->n_properties;
  rec.properties = (Deltad__Tables__V1__TableInfo__PropertiesEntry **)props;
  rec.owner = rec.created_by = rec.updated_by = (char *)actor;
  rec.create_at = rec.update_at = cat__now_ms();
  rc = cat__rec_put(s, txn, CAT__DB_DELTA_TABLES, id, &rec.base, (ProtobufCMessage **)out);
  if (!rc) rc = cat__dt_names(*out, p.catalog, p.schema);
cleanup:
  free(props);
  free(p.root);
  return rc;
}

int cat_dtable_create(cat_store *s, cat_dtable **out, const char *actor, const cat_dtable_new *nw) {
  const Deltad__Tables__V1__CreateTableRequest *req = nw->req;
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = cat_name_check("catalog_name", req->catalog_name, 0);
  if (!rc) rc = cat_name_check("schema_name", req->schema_name, 0);
  if (!rc) rc = cat_name_check("name", req->name, 0);
  if (!rc) rc = dt_location_check(nw->location);
  if (!rc && nw->id && strlen(nw->id) != CAT__ID_LEN) rc = dd_err_set(DD_EINVAL, "id: not a record id");
  if (!rc) rc = cat__props_check("properties", req->n_properties, (void *const *)req->properties);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = dt_insert(s, txn, out, actor, nw);
  return cat__dt_finish(rc, txn, out);
}

int cat__dt_schema_read(cat_store *s, const char *catalog, const char *schema, cat__dt_parent *p) {
  cat_txn *txn = NULL;
  memset(p, 0, sizeof *p);
  int rc = cat_name_check("catalog_name", catalog, 0);
  if (!rc) rc = cat_name_check("schema_name", schema, 0);
  if (!rc) rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  rc = cat__dt_schema(s, txn, catalog, schema, p);
  cat__txn_abort(txn);
  return rc;
}

int cat_dtable_storage_root(cat_store *s, char **out, const char *catalog, const char *schema) {
  cat__dt_parent p;
  *out = NULL;
  int rc = cat__dt_schema_read(s, catalog, schema, &p);
  if (rc) return rc;
  if (!*p.root) {
    free(p.root);
    return dd_err_set(DD_EPRECOND, "neither schema '%s.%s' nor catalog '%s' has a storage_root for "
                      "MANAGED tables", catalog, schema, catalog);
  }
  *out = p.root;
  return 0;
}

/* ---- get / list ---------------------------------------------------------------------------- */

static int dt_get_in(cat_store *s, cat_txn *txn, cat_dtable **out, const char *full_name) {
  cat__dt_parent p;
  char id[CAT__ID_LEN + 1];
  int rc = cat__dt_find(s, txn, full_name, &p, out, id);
  free(p.root);
  return rc;
}

int cat_dtable_get(cat_store *s, cat_dtable **out, const char *full_name) {
  cat_view v;
  *out = NULL;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_dtable_get(&v, out, full_name);
  return cat__view_end(&v, rc);
}

int cat_view_dtable_get(cat_view *v, cat_dtable **out, const char *full_name) {
  *out = NULL;
  int rc = dt_get_in(v->s, v->txn, out, full_name);
  return cat__dt_finish(rc, NULL, out);
}

int cat_dtable_get_by_id(cat_store *s, cat_dtable **out, const char *id) {
  cat_txn *txn = NULL;
  *out = NULL;
  if (!id || strlen(id) != CAT__ID_LEN || strchr(id, '/'))
    return dd_err_set(DD_ENOTFOUND, "table id '%s' not found", id ? id : "");
  int rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  rc = cat__rec_get(s, txn, CAT__DB_DELTA_TABLES, id, &deltad__tables__v1__table_info__descriptor,
                    (ProtobufCMessage **)out);
  if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ENOTFOUND, "table id '%s' not found", id);
  if (!rc) rc = cat__dt_names_by_schema(s, txn, *out);
  return cat__dt_finish(rc, txn, out);
}

int cat_dtable_list(cat_store *s, Deltad__Tables__V1__ListTablesResponse **out,
                    const Deltad__Tables__V1__ListTablesRequest *req) {
  cat__dt_parent p;
  cat__page page;
  *out = NULL;
  int rc = cat__dt_schema_read(s, req->catalog_name, req->schema_name, &p);
  if (rc) return rc;
  free(p.root);
  rc = cat__list(s, CAT__DB_DELTA_TABLE_NAMES, CAT__DB_DELTA_TABLES, p.schema_id,
                 &deltad__tables__v1__table_info__descriptor, req->max_results, req->page_token, &page);
  if (rc) return rc;
  for (size_t i = 0; i < page.n && !rc; i++) rc = cat__dt_names((cat_dtable *)page.items[i], p.catalog, p.schema);
  Deltad__Tables__V1__ListTablesResponse *r = rc ? NULL : malloc(sizeof *r);
  if (!r) {
    cat__page_free(&page);
    return rc ? rc : dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__tables__v1__list_tables_response__init(r);
  r->n_tables = page.n;
  r->tables = (cat_dtable **)page.items;
  r->next_page_token = page.next;
  *out = r;
  return 0;
}

/* ---- update -------------------------------------------------------------------------------- */

#define DT_UPD(f) DELTAD__TABLES__V1__UPDATE_TABLE_REQUEST___##f

static int dt_apply(cat_store *s, cat_txn *txn, cat_dtable **out, const char *actor,
                    const Deltad__Tables__V1__UpdateTableRequest *req) {
  cat__dt_parent p;
  char id[CAT__ID_LEN + 1], full[3 * 256];
  cat_dtable *cur = NULL;
  cat__kv **props = NULL;
  int rc = cat__dt_find(s, txn, req->full_name, &p, &cur, id);
  if (rc) goto cleanup;
  cat_dtable view = *cur;
  if (req->_new_name_case == DT_UPD(NEW_NAME_NEW_NAME) && strcmp(req->new_name, cur->name)) {
    snprintf(full, sizeof full, "%s.%s.%s", p.catalog, p.schema, req->new_name);
    rc = cat__name_del(s, txn, CAT__DB_DELTA_TABLE_NAMES, p.schema_id, cur->name);
    /* a change of case only is the same lname: no clash with itself */
    if (!rc) rc = cat__table_name_taken(s, txn, p.schema_id, req->new_name, full);
    if (!rc) rc = cat__name_put(s, txn, CAT__DB_DELTA_TABLE_NAMES, p.schema_id, req->new_name, id);
    if (rc) goto cleanup;
    view.name = req->new_name;
  }
  if (req->_comment_case == DT_UPD(COMMENT_COMMENT)) view.comment = req->comment;
  if (req->_owner_case == DT_UPD(OWNER_OWNER)) view.owner = req->owner;
  if (req->n_properties > 0) {
    rc = cat__props_view(&props, DT_PROPS, req->n_properties, (void *const *)req->properties);
    if (rc) goto cleanup;
    view.n_properties = req->n_properties;
    view.properties = (Deltad__Tables__V1__TableInfo__PropertiesEntry **)props;
  }
  view.catalog_name = view.schema_name = view.full_name = "";
  view.updated_by = (char *)actor;
  view.update_at = cat__now_ms();
  rc = cat__rec_put(s, txn, CAT__DB_DELTA_TABLES, id, &view.base, (ProtobufCMessage **)out);
  if (!rc) rc = cat__dt_names(*out, p.catalog, p.schema);
cleanup:
  free(props);
  free(p.root);
  if (cur) protobuf_c_message_free_unpacked(&cur->base, NULL);
  return rc;
}

int cat_dtable_update(cat_store *s, cat_dtable **out, const char *actor,
                      const Deltad__Tables__V1__UpdateTableRequest *req) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = 0;
  if (req->_new_name_case == DT_UPD(NEW_NAME_NEW_NAME)) rc = cat_name_check("new_name", req->new_name, 0);
  if (!rc && req->_owner_case == DT_UPD(OWNER_OWNER) && !*req->owner)
    rc = dd_err_set(DD_EINVAL, "owner: must not be empty");
  if (!rc) rc = cat__props_check("properties", req->n_properties, (void *const *)req->properties);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = dt_apply(s, txn, out, actor, req);
  return cat__dt_finish(rc, txn, out);
}

int cat__dtable_find_any(cat_store *s, cat_txn *txn, const char *full_name, cat_dtable **out) {
  int rc = dt_get_in(s, txn, out, full_name);
  return cat__dt_finish(rc, NULL, out);
}
