/* cat_share_table.c: the tables of a share's schema: add (naming a Delta table by storage
 * location + relative path, or by absolute URL), update the sharing options, remove. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"
#include "store/catalog/cat_share_int.h"

typedef Deltad__Sharing__V1__AddTableRequest cat__add_req;

static cat_share_schema *cat__schema_of(cat_share *sh, const char *name) {
  long i = cat__find_named((void *const *)sh->schemas, sh->n_schemas,
                           offsetof(cat_share_schema, name), name, NULL);
  if (i < 0) {
    dd_err_set(DD_ENOTFOUND, "schema '%s' not found in share '%s'", name, sh->name);
    return NULL;
  }
  return sh->schemas[i];
}

/* Exactly one of url / location / table; a path only with a location, relative, without "..". */
static int cat__table_target_check(const cat__add_req *r) {
  int has_url = r->url && *r->url, has_loc = r->location && *r->location;
  int has_tbl = r->table && *r->table;
  if (has_url + has_loc + has_tbl != 1)
    return dd_err_set(DD_EINVAL, "table: give exactly one of url, location (+ path) or table "
                      "(a catalog table's full name)");
  if (has_tbl && r->path && *r->path) return dd_err_set(DD_EINVAL, "path: only allowed with a location");
  if (has_tbl) return 0;
  if (has_url && !strstr(r->url, "://"))
    return dd_err_set(DD_EINVAL, "url: '%s' is not an absolute URL (file:///..., s3://...)",
                      r->url);
  if (has_url && r->path && *r->path)
    return dd_err_set(DD_EINVAL, "path: only allowed with a location");
  if (r->path && (r->path[0] == '/' || strstr(r->path, "..")))
    return dd_err_set(DD_EINVAL, "path: must be relative to the location, without '..'");
  if (r->_start_version_case && r->start_version < 0)
    return dd_err_set(DD_EINVAL, "start_version: must not be negative");
  return 0;
}

typedef struct {
  const cat__add_req *req;
  const char *actor;
  cat_shared_table *made;
} cat__table_add;

static int cat__table_fill(cat_shared_table *t, const cat_share *sh, const cat_share_schema *sc,
                           const cat__add_req *r, const char *actor, const char *loc_name) {
  char id[CAT__ID_LEN + 1];
  int rc = cat__uuid(id);
  t->id = cat__strdup(id);
  t->name = cat__strdup(r->name);
  t->schema = cat__strdup(sc->name);
  t->share = cat__strdup(sh->name);
  t->share_id = cat__strdup(sh->id);
  t->location = cat__strdup(loc_name);
  t->path = cat__strdup(r->path);
  t->url = cat__strdup(r->url);
  t->comment = cat__strdup(r->comment);
  t->created_by = cat__strdup(actor);
  t->created_at = cat__now_ms();
  t->history_shared = r->history_shared;
  if (r->_start_version_case) {
    t->_start_version_case = DELTAD__SHARING__V1__SHARED_TABLE___START_VERSION_START_VERSION;
    t->start_version = r->start_version;
  }
  if (!rc && (!t->id || !t->name || !t->schema || !t->share || !t->share_id || !t->location ||
              !t->path || !t->url || !t->comment || !t->created_by))
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  return rc;
}

static int cat__table_add_edit(cat_store *s, cat_txn *txn, cat_share *sh, void *arg);

/* add-table --table cat.sch.t: shares the location the Delta table record has (as a URL). */
static int cat__table_add_catalog(cat_store *s, cat_txn *txn, cat_share *sh, cat__table_add *a) {
  cat_dtable *t = NULL;
  int rc = cat__dtable_find_any(s, txn, a->req->table, &t);
  if (rc) return rc;
  cat__add_req r = *a->req;
  r.table = "";
  r.url = t->storage_location;
  cat__table_add b = {&r, a->actor, NULL};
  rc = cat__table_add_edit(s, txn, sh, &b);
  a->made = b.made;
  protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

static int cat__table_add_edit(cat_store *s, cat_txn *txn, cat_share *sh, void *arg) {
  cat__table_add *a = arg;
  const cat__add_req *r = a->req;
  cat_share_schema *sc = cat__schema_of(sh, r->schema);
  size_t at;
  if (!sc) return DD_ENOTFOUND;
  if (cat__find_named((void *const *)sc->tables, sc->n_tables, offsetof(cat_shared_table, name),
                      r->name, &at) >= 0)
    return dd_err_set(DD_EEXISTS, "table '%s' already exists in %s.%s", r->name, sh->name,
                      sc->name);
  cat_location *loc = NULL;
  char loc_id[CAT__ID_LEN + 1];
  int rc = 0;
  if (r->table && *r->table) return cat__table_add_catalog(s, txn, sh, a);
  if (r->location && *r->location) {
    rc = cat__get_by_name(s, txn, CAT__DB_LOCATION_NAMES, CAT__DB_LOCATIONS, NULL, r->location,
                          &deltad__credentials__v1__storage_location__descriptor,
                          (ProtobufCMessage **)&loc, loc_id);
    if (rc == DD_ENOTFOUND)
      return dd_err_set(DD_ENOTFOUND, "storage location '%s' not found", r->location);
    if (rc) return rc;
  }
  cat_shared_table *t = malloc(sizeof *t);
  if (!t) rc = dd_err_set(DD_ENOMEM, "out of memory");
  else deltad__sharing__v1__shared_table__init(t);
  if (!rc) rc = cat__table_fill(t, sh, sc, r, a->actor, loc ? loc->name : "");
  if (!rc) rc = cat__insert_at((void ***)&sc->tables, &sc->n_tables, at, t);
  if (loc) protobuf_c_message_free_unpacked(&loc->base, NULL);
  if (rc) {
    if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
    return rc;
  }
  a->made = t;
  return 0;
}

int cat_share_table_add(cat_store *s, cat_shared_table **out, const char *actor,
                        const cat__add_req *req) {
  cat__table_add a = {req, actor, NULL};
  cat_share *sh = NULL;
  *out = NULL;
  int rc = cat_name_check("name", req->name, 0);
  if (!rc) rc = cat_name_check("schema", req->schema, 0);
  if (!rc) rc = cat__table_target_check(req);
  if (!rc) rc = cat__share_edit_by_name(s, req->share, cat__table_add_edit, &a, &sh);
  if (!rc) rc = cat__msg_dup((ProtobufCMessage **)out, &a.made->base);
  if (sh) protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

/* ---- update / remove ------------------------------------------------------------------- */

typedef struct {
  const char *schema, *name;
  const Deltad__Sharing__V1__UpdateTableRequest *upd; /* NULL: remove */
  cat_shared_table *found;
} cat__table_op;

static int cat__table_op_edit(cat_store *s, cat_txn *txn, cat_share *sh, void *arg) {
  (void)s;
  (void)txn;
  cat__table_op *op = arg;
  cat_share_schema *sc = cat__schema_of(sh, op->schema);
  if (!sc) return DD_ENOTFOUND;
  long i = cat__find_named((void *const *)sc->tables, sc->n_tables,
                           offsetof(cat_shared_table, name), op->name, NULL);
  if (i < 0)
    return dd_err_set(DD_ENOTFOUND, "table '%s' not found in %s.%s", op->name, sh->name,
                      sc->name);
  if (!op->upd) {
    cat__remove_at((void **)sc->tables, &sc->n_tables, (size_t)i);
    return 0;
  }
  cat_shared_table *t = sc->tables[i];
  const Deltad__Sharing__V1__UpdateTableRequest *u = op->upd;
  if (u->_history_shared_case) t->history_shared = u->history_shared;
  if (u->_start_version_case) {
    t->_start_version_case = u->start_version < 0
        ? DELTAD__SHARING__V1__SHARED_TABLE___START_VERSION__NOT_SET
        : DELTAD__SHARING__V1__SHARED_TABLE___START_VERSION_START_VERSION;
    t->start_version = u->start_version < 0 ? 0 : u->start_version;
  }
  op->found = t;
  if (u->_comment_case) return cat__str_replace(&t->comment, u->comment);
  return 0;
}

int cat_share_table_update(cat_store *s, cat_shared_table **out,
                           const Deltad__Sharing__V1__UpdateTableRequest *req) {
  cat__table_op op = {req->schema, req->name, req, NULL};
  cat_share *sh = NULL;
  *out = NULL;
  int rc = cat__share_edit_by_name(s, req->share, cat__table_op_edit, &op, &sh);
  if (!rc) rc = cat__msg_dup((ProtobufCMessage **)out, &op.found->base);
  if (sh) protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

int cat_share_table_remove(cat_store *s, const char *share, const char *schema,
                           const char *name) {
  cat__table_op op = {schema, name, NULL, NULL};
  return cat__share_edit_by_name(s, share, cat__table_op_edit, &op, NULL);
}
