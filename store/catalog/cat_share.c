/* cat_share.c: Delta Sharing shares in the store. A share is one record (ShareInfo) that
 * nests its schemas and their shared tables; every change reads it, edits the heap tree
 * and writes it back in one write transaction (layout: cat_internal.h). */
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <strings.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"
#include "store/catalog/cat_share_int.h"

#define SHARE_DESC (&deltad__sharing__v1__share_info__descriptor)

/* ---- loading and saving -------------------------------------------------------------- */

int cat__share_load(cat_store *s, cat_txn *txn, const char *name, cat_share **out) {
  char id[CAT__ID_LEN + 1];
  int rc = cat_name_check("share", name, 1);
  if (rc) return rc;
  rc = cat__get_by_name(s, txn, CAT__DB_SHARE_NAMES, CAT__DB_SHARES, NULL, name, SHARE_DESC,
                        (ProtobufCMessage **)out, id);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ENOTFOUND, "share '%s' not found", name);
  return rc;
}

static int cat__share_save(cat_store *s, cat_txn *txn, cat_share *sh) {
  return cat__rec_put(s, txn, CAT__DB_SHARES, sh->id, &sh->base, NULL);
}

/* Runs edit on the share named name inside one write transaction, then saves it. */
int cat__share_edit_by_name(cat_store *s, const char *name, cat__share_edit_fn edit, void *arg,
                           cat_share **out) {
  cat_txn *txn = NULL;
  cat_share *sh = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__share_load(s, txn, name, &sh);
  if (!rc) rc = edit(s, txn, sh, arg);
  if (!rc) rc = cat__share_save(s, txn, sh);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (!rc && out) *out = sh;
  else if (sh) protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

/* ---- properties (deep copies, owned by the tree) ------------------------------------- */

int cat__props_copy(void ***dst, size_t *n_dst, const ProtobufCMessageDescriptor *desc,
                    size_t n, void *const *src) {
  int rc = cat__props_check("properties", n, src);
  if (rc || n == 0) return rc;
  cat__kv **arr = calloc(n, sizeof *arr);
  if (!arr) return dd_err_set(DD_ENOMEM, "out of memory");
  for (size_t i = 0; i < n; i++) {
    const cat__kv *e = src[i];
    arr[i] = malloc(sizeof **arr);
    if (arr[i]) {
      protobuf_c_message_init(desc, arr[i]);
      arr[i]->key = cat__strdup(e->key);
      arr[i]->value = cat__strdup(e->value);
    }
    if (!arr[i] || !arr[i]->key || !arr[i]->value) {
      for (size_t j = 0; j <= i; j++)
        if (arr[j]) protobuf_c_message_free_unpacked(&arr[j]->base, NULL);
      free(arr);
      return dd_err_set(DD_ENOMEM, "out of memory");
    }
  }
  for (size_t i = 0; i < *n_dst; i++) protobuf_c_message_free_unpacked((*dst)[i], NULL);
  free(*dst);
  *dst = (void **)arr;
  *n_dst = n;
  return 0;
}

/* ---- sorted pointer arrays ----------------------------------------------------------- */

/* Index of the element named name in arr (names at offset name_off), or -1; *at is where
 * it would be inserted to keep lower-cased order. */
long cat__find_named(void *const *arr, size_t n, size_t name_off, const char *name,
                     size_t *at) {
  size_t i = 0;
  for (; i < n; i++) {
    const char *nm = *(char *const *)((const char *)arr[i] + name_off);
    int c = strcasecmp(nm, name);
    if (c == 0) {
      if (at) *at = i;
      return (long)i;
    }
    if (c > 0) break;
  }
  if (at) *at = i;
  return -1;
}

int cat__insert_at(void ***arr, size_t *n, size_t at, void *item) {
  void **grown = realloc(*arr, (*n + 1) * sizeof *grown);
  if (!grown) return dd_err_set(DD_ENOMEM, "out of memory");
  memmove(grown + at + 1, grown + at, (*n - at) * sizeof *grown);
  grown[at] = item;
  *arr = grown;
  (*n)++;
  return 0;
}

void cat__remove_at(void **arr, size_t *n, size_t at) {
  protobuf_c_message_free_unpacked(arr[at], NULL);
  memmove(arr + at, arr + at + 1, (*n - at - 1) * sizeof *arr);
  (*n)--;
}

/* ---- shares -------------------------------------------------------------------------- */

int cat_share_create(cat_store *s, cat_share **out, const char *actor,
                     const Deltad__Sharing__V1__CreateShareRequest *req) {
  cat_txn *txn = NULL;
  cat_share *sh = NULL;
  *out = NULL;
  int rc = cat_name_check("name", req->name, 0);
  if (rc) return rc;
  if (!(sh = malloc(sizeof *sh))) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__sharing__v1__share_info__init(sh);
  char id[CAT__ID_LEN + 1];
  if ((rc = cat__uuid(id))) goto cleanup;
  sh->id = cat__strdup(id);
  sh->name = cat__strdup(req->name);
  sh->description = cat__strdup(req->description);
  sh->created_by = cat__strdup(actor);
  sh->updated_by = cat__strdup(actor);
  sh->created_at = sh->updated_at = cat__now_ms();
  if (!sh->id || !sh->name || !sh->description || !sh->created_by || !sh->updated_by) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  rc = cat__props_copy((void ***)&sh->properties, &sh->n_properties,
                       &deltad__sharing__v1__share_info__properties_entry__descriptor,
                       req->n_properties, (void *const *)req->properties);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_SHARE_NAMES, NULL, req->name, id);
  if (rc == DD_EEXISTS) rc = dd_err_set(DD_EEXISTS, "share '%s' already exists", req->name);
  if (!rc) rc = cat__share_save(s, txn, sh);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
cleanup:
  if (!rc) *out = sh;
  else protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

int cat_view_share_get(cat_view *v, cat_share **out, const char *name) {
  *out = NULL;
  return cat__share_load(v->s, v->txn, name, out);
}

int cat_share_get(cat_store *s, cat_share **out, const char *name) {
  cat_view v;
  *out = NULL;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_share_get(&v, out, name);
  return cat__view_end(&v, rc);
}

int cat_view_share_by_id(cat_view *v, cat_share **out, const char *id) {
  *out = NULL;
  if (strlen(id) != CAT__ID_LEN) return dd_err_set(DD_ENOTFOUND, "share not found");
  int rc = cat__rec_get(v->s, v->txn, CAT__DB_SHARES, id, SHARE_DESC, (ProtobufCMessage **)out);
  return rc == DD_ENOTFOUND ? dd_err_set(DD_ENOTFOUND, "share not found") : rc;
}

int cat_share_get_by_id(cat_store *s, cat_share **out, const char *id) {
  cat_view v;
  *out = NULL;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_share_by_id(&v, out, id);
  return cat__view_end(&v, rc);
}

typedef struct {
  const Deltad__Sharing__V1__UpdateShareRequest *req;
  const char *actor;
} cat__share_upd;

/* Moves the recipient_grants keys of a renamed share to its new lname. */
static int cat__share_regrant_one(cat_store *s, cat_txn *txn, const char *lname,
                                  const char *rid, void *arg) {
  (void)lname;
  const char *const *names = arg; /* old name, new name, share id */
  int rc = cat__name_del(s, txn, CAT__DB_RECIPIENT_GRANTS, rid, names[0]);
  if (rc && rc != DD_ENOTFOUND) return rc;
  return cat__name_put(s, txn, CAT__DB_RECIPIENT_GRANTS, rid, names[1], names[2]);
}

static int cat__share_rename(cat_store *s, cat_txn *txn, cat_share *sh, const char *new_name) {
  int rc = cat_name_check("new_name", new_name, 0);
  if (rc || strcmp(new_name, sh->name) == 0) return rc;
  if (strcasecmp(new_name, sh->name) != 0) {
    rc = cat__name_put(s, txn, CAT__DB_SHARE_NAMES, NULL, new_name, sh->id);
    if (rc == DD_EEXISTS) return dd_err_set(DD_EEXISTS, "share '%s' already exists", new_name);
    if (!rc) rc = cat__name_del(s, txn, CAT__DB_SHARE_NAMES, NULL, sh->name);
    const char *names[3] = {sh->name, new_name, sh->id};
    if (!rc) rc = cat__scope_walk(s, txn, CAT__DB_SHARE_GRANTS, sh->id, cat__share_regrant_one,
                                  (void *)names);
  } else {
    /* same lname, new spelling: the names index keeps the id */
  }
  if (!rc) rc = cat__str_replace(&sh->name, new_name);
  for (size_t i = 0; !rc && i < sh->n_schemas; i++) {
    cat_share_schema *sc = sh->schemas[i];
    rc = cat__str_replace(&sc->share, new_name);
    for (size_t j = 0; !rc && j < sc->n_tables; j++)
      rc = cat__str_replace(&sc->tables[j]->share, new_name);
  }
  return rc;
}

static int cat__share_update_edit(cat_store *s, cat_txn *txn, cat_share *sh, void *arg) {
  const cat__share_upd *u = arg;
  int rc = 0;
  if (u->req->_new_name_case == DELTAD__SHARING__V1__UPDATE_SHARE_REQUEST___NEW_NAME_NEW_NAME)
    rc = cat__share_rename(s, txn, sh, u->req->new_name);
  if (!rc && u->req->_description_case ==
                 DELTAD__SHARING__V1__UPDATE_SHARE_REQUEST___DESCRIPTION_DESCRIPTION)
    rc = cat__str_replace(&sh->description, u->req->description);
  if (!rc && u->req->n_properties)
    rc = cat__props_copy((void ***)&sh->properties, &sh->n_properties,
                         &deltad__sharing__v1__share_info__properties_entry__descriptor,
                         u->req->n_properties, (void *const *)u->req->properties);
  if (!rc) rc = cat__str_replace(&sh->updated_by, u->actor);
  sh->updated_at = cat__now_ms();
  return rc;
}

int cat_share_update(cat_store *s, cat_share **out, const char *actor,
                     const Deltad__Sharing__V1__UpdateShareRequest *req) {
  cat__share_upd u = {req, actor};
  *out = NULL;
  return cat__share_edit_by_name(s, req->name, cat__share_update_edit, &u, out);
}

static int cat__share_ungrant_one(cat_store *s, cat_txn *txn, const char *lname,
                                  const char *rid, void *arg) {
  const cat_share *sh = arg;
  int rc = cat__name_del(s, txn, CAT__DB_RECIPIENT_GRANTS, rid, sh->name);
  if (rc && rc != DD_ENOTFOUND) return rc;
  return cat__name_del(s, txn, CAT__DB_SHARE_GRANTS, sh->id, lname);
}

int cat_share_delete(cat_store *s, const char *name, int force) {
  cat_txn *txn = NULL;
  cat_share *sh = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__share_load(s, txn, name, &sh);
  if (!rc && sh->n_schemas && !force)
    rc = dd_err_set(DD_EPRECOND, "share '%s' still has %zu schema(s); delete them or use force",
                    sh->name, sh->n_schemas);
  if (!rc) rc = cat__scope_walk(s, txn, CAT__DB_SHARE_GRANTS, sh->id, cat__share_ungrant_one, sh);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_SHARE_NAMES, NULL, sh->name);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_SHARES, sh->id, CAT__ID_LEN);
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (sh) protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

int cat_share_list(cat_store *s, Deltad__Sharing__V1__ListShareInfosResponse **out,
                   const Deltad__Sharing__V1__ListShareInfosRequest *req) {
  cat__page page;
  *out = NULL;
  int rc = cat__list(s, CAT__DB_SHARE_NAMES, CAT__DB_SHARES, NULL, SHARE_DESC, req->max_results,
                     req->page_token, &page);
  if (rc) return rc;
  Deltad__Sharing__V1__ListShareInfosResponse *resp = malloc(sizeof *resp);
  if (!resp) {
    cat__page_free(&page);
    return dd_err_set(DD_ENOMEM, "out of memory");
  }
  deltad__sharing__v1__list_share_infos_response__init(resp);
  resp->n_shares = page.n;
  resp->shares = (cat_share **)page.items;
  resp->next_page_token = page.next;
  *out = resp;
  return 0;
}

/* ---- schemas --------------------------------------------------------------------------- */

typedef struct {
  const Deltad__Sharing__V1__CreateSharingSchemaRequest *req;
  cat_share_schema *made; /* borrowed from the tree */
} cat__schema_add;

static int cat__schema_add_edit(cat_store *s, cat_txn *txn, cat_share *sh, void *arg) {
  (void)s;
  (void)txn;
  cat__schema_add *a = arg;
  size_t at;
  if (cat__find_named((void *const *)sh->schemas, sh->n_schemas,
                      offsetof(cat_share_schema, name), a->req->name, &at) >= 0)
    return dd_err_set(DD_EEXISTS, "schema '%s' already exists in share '%s'", a->req->name,
                      sh->name);
  cat_share_schema *sc = malloc(sizeof *sc);
  if (!sc) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__sharing__v1__sharing_schema_info__init(sc);
  char id[CAT__ID_LEN + 1];
  int rc = cat__uuid(id);
  sc->id = cat__strdup(id);
  sc->name = cat__strdup(a->req->name);
  sc->share = cat__strdup(sh->name);
  sc->share_id = cat__strdup(sh->id);
  sc->description = cat__strdup(a->req->description);
  if (!rc && (!sc->id || !sc->name || !sc->share || !sc->share_id || !sc->description))
    rc = dd_err_set(DD_ENOMEM, "out of memory");
  if (!rc)
    rc = cat__props_copy((void ***)&sc->properties, &sc->n_properties,
                         &deltad__sharing__v1__sharing_schema_info__properties_entry__descriptor,
                         a->req->n_properties, (void *const *)a->req->properties);
  if (!rc) rc = cat__insert_at((void ***)&sh->schemas, &sh->n_schemas, at, sc);
  if (rc) {
    protobuf_c_message_free_unpacked(&sc->base, NULL);
    return rc;
  }
  a->made = sc;
  return 0;
}

/* A heap copy of a message (pack + unpack). */
int cat__msg_dup(ProtobufCMessage **out, const ProtobufCMessage *m) {
  size_t n = protobuf_c_message_get_packed_size(m);
  uint8_t *buf = malloc(n ? n : 1);
  if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
  protobuf_c_message_pack(m, buf);
  *out = protobuf_c_message_unpack(m->descriptor, NULL, n, buf);
  free(buf);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

int cat_share_schema_create(cat_store *s, cat_share_schema **out, const char *actor,
                            const Deltad__Sharing__V1__CreateSharingSchemaRequest *req) {
  (void)actor;
  cat__schema_add a = {req, NULL};
  cat_share *sh = NULL;
  *out = NULL;
  int rc = cat_name_check("name", req->name, 0);
  if (!rc) rc = cat__share_edit_by_name(s, req->share, cat__schema_add_edit, &a, &sh);
  if (!rc) rc = cat__msg_dup((ProtobufCMessage **)out, &a.made->base);
  if (sh) protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

typedef struct {
  const char *name;
  int force;
} cat__schema_del;

static int cat__schema_del_edit(cat_store *s, cat_txn *txn, cat_share *sh, void *arg) {
  (void)s;
  (void)txn;
  cat__schema_del *d = arg;
  long i = cat__find_named((void *const *)sh->schemas, sh->n_schemas,
                           offsetof(cat_share_schema, name), d->name, NULL);
  if (i < 0)
    return dd_err_set(DD_ENOTFOUND, "schema '%s' not found in share '%s'", d->name, sh->name);
  if (sh->schemas[i]->n_tables && !d->force)
    return dd_err_set(DD_EPRECOND, "schema '%s' still has %zu table(s); remove them or use force",
                      sh->schemas[i]->name, sh->schemas[i]->n_tables);
  cat__remove_at((void **)sh->schemas, &sh->n_schemas, (size_t)i);
  return 0;
}

int cat_share_schema_delete(cat_store *s, const char *share, const char *name, int force) {
  cat__schema_del d = {name, force};
  return cat__share_edit_by_name(s, share, cat__schema_del_edit, &d, NULL);
}

/* ---- finding a table by ids ------------------------------------------------------------ */

int cat_view_share_table_find(cat_view *v, cat_shared_table **out, const char *share_id,
                              const char *table_id) {
  cat_share *sh = NULL;
  *out = NULL;
  int rc = cat_view_share_by_id(v, &sh, share_id);
  if (rc) return rc;
  rc = dd_err_set(DD_ENOTFOUND, "table not found");
  for (size_t i = 0; i < sh->n_schemas && rc == DD_ENOTFOUND; i++)
    for (size_t j = 0; j < sh->schemas[i]->n_tables; j++)
      if (strcmp(sh->schemas[i]->tables[j]->id, table_id) == 0) {
        rc = cat__msg_dup((ProtobufCMessage **)out, &sh->schemas[i]->tables[j]->base);
        break;
      }
  protobuf_c_message_free_unpacked(&sh->base, NULL);
  return rc;
}

int cat_share_table_find(cat_store *s, cat_shared_table **out, const char *share_id,
                         const char *table_id) {
  cat_view v;
  *out = NULL;
  int rc = cat__view_begin(s, &v);
  if (!rc) rc = cat_view_share_table_find(&v, out, share_id, table_id);
  return cat__view_end(&v, rc);
}
