/* cat_table.c: Lance tables in the store (cat_store.h, "Lance namespaces and tables"):
 * register (create or overwrite), get, deregister and paged listing per namespace. A table
 * is a TableInfo record under its namespace's id; its data stays where `location` says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define TABLE_DESC (&deltad__lance__v1__table_info__descriptor)
#define TABLE_PROPS (&deltad__lance__v1__table_info__properties_entry__descriptor)
#define PATH_STR_MAX 1024
#define LOCATION_MAX 4096

static int tbl_location_check(const char *loc) {
  size_t n = loc ? strlen(loc) : 0;
  if (n == 0) return dd_err_set(DD_EINVAL, "location: must not be empty");
  if (n > LOCATION_MAX) return dd_err_set(DD_EINVAL, "location: longer than %d bytes", LOCATION_MAX);
  for (size_t i = 0; i < n; i++)
    if ((unsigned char)loc[i] < 0x20 || loc[i] == 0x7F)
      return dd_err_set(DD_EINVAL, "location: contains a control character");
  return 0;
}

/* Checks a table path: at least a namespace and a name, valid names. */
static int tbl_path_check(const char *const *path, size_t depth) {
  if (depth == 0) return dd_err_set(DD_EINVAL, "id: a table id must not be empty");
  return cat_ns_path_check(path, depth, 1);
}

/* Resolves the namespace of a table path and finds the table's id. DD_ENOTFOUND with
 * "namespace ... not found" or "table ... not found". The root holds no tables. */
static int tbl_find(cat_store *s, cat_txn *txn, const char *const *path, size_t depth,
                    cat__ns_node *ns, char id[CAT__ID_LEN + 1]) {
  char p[PATH_STR_MAX];
  int rc = cat__ns_resolve(s, txn, path, depth - 1, ns);
  if (rc) return rc;
  rc = depth == 1 ? DD_ENOTFOUND
                  : cat__name_get(s, txn, CAT__DB_LANCE_TABLE_NAMES, ns->id, path[depth - 1], id);
  if (rc != DD_ENOTFOUND) return rc;
  cat__ns_path_str(p, sizeof p, path, depth);
  return dd_err_set(DD_ENOTFOUND, "table '%s' not found", p);
}

static int tbl_finish(int rc, cat_txn *txn, cat_lance_table **out) {
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc && out && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- register ------------------------------------------------------------------------------ */

typedef struct tbl_new {
  const char *actor, *name, *location;
  size_t n_props;
  void *const *props;
} tbl_new;

static int tbl_put(cat_store *s, cat_txn *txn, const cat__ns_node *ns, const char *id,
                   const tbl_new *nw, cat_lance_table **out) {
  cat__kv **kv = NULL;
  int rc = cat__props_view(&kv, TABLE_PROPS, nw->n_props, nw->props);
  if (rc) return rc;
  cat_lance_table rec = DELTAD__LANCE__V1__TABLE_INFO__INIT;
  rec.id = (char *)id;
  rec.name = (char *)nw->name;
  rec.namespace_id = (char *)ns->id;
  rec.location = (char *)nw->location;
  rec.n_properties = nw->n_props;
  rec.properties = (Deltad__Lance__V1__TableInfo__PropertiesEntry **)kv;
  rec.format = "lance";
  rec.owner = rec.created_by = rec.updated_by = (char *)nw->actor;
  rec.create_at = rec.update_at = cat__now_ms();
  rc = cat__rec_put(s, txn, CAT__DB_LANCE_TABLES, id, &rec.base, (ProtobufCMessage **)out);
  free(kv);
  return rc;
}

static int tbl_register_in(cat_store *s, cat_txn *txn, cat_lance_table **out,
                           const char *const *path, size_t depth, int overwrite,
                           const tbl_new *nw) {
  cat__ns_node ns;
  char id[CAT__ID_LEN + 1], p[PATH_STR_MAX];
  int rc = cat__ns_resolve(s, txn, path, depth - 1, &ns);
  if (rc) return rc;
  /* a schema's table names are one namespace with its Delta tables (cat_dtable.c) */
  rc = ns.level == 2 ? cat__name_get(s, txn, CAT__DB_DELTA_TABLE_NAMES, ns.id, nw->name, id) : DD_ENOTFOUND;
  if (rc == 0) {
    cat__ns_path_str(p, sizeof p, path, depth);
    return dd_err_set(DD_EEXISTS, "table '%s' already exists (a Delta table)", p);
  }
  if (rc != DD_ENOTFOUND) return rc;
  rc = cat__name_get(s, txn, CAT__DB_LANCE_TABLE_NAMES, ns.id, nw->name, id);
  if (rc == 0 && !overwrite) {
    cat__ns_path_str(p, sizeof p, path, depth);
    return dd_err_set(DD_EEXISTS, "table '%s' already exists", p);
  }
  if (rc == DD_ENOTFOUND) { /* a new registration */
    if ((rc = cat__uuid(id))) return rc;
    rc = cat__name_put(s, txn, CAT__DB_LANCE_TABLE_NAMES, ns.id, nw->name, id);
  }
  if (rc) return rc;
  return tbl_put(s, txn, &ns, id, nw, out);
}

int cat_lance_table_register(cat_store *s, cat_lance_table **out, const char *actor,
                             const char *const *path, size_t depth, const char *location,
                             int overwrite, size_t n_props, void *const *props) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = tbl_path_check(path, depth);
  if (!rc && depth < 2)
    rc = dd_err_set(DD_EINVAL, "id: the root namespace holds no tables; name a namespace first");
  if (!rc) rc = tbl_location_check(location);
  if (!rc) rc = cat__props_check("properties", n_props, props);
  if (rc) return rc;
  tbl_new nw = {actor, path[depth - 1], location, n_props, props};
  if ((rc = cat__txn_begin(s, &txn, true))) return rc;
  rc = tbl_register_in(s, txn, out, path, depth, overwrite, &nw);
  return tbl_finish(rc, txn, out);
}

/* ---- get / deregister -------------------------------------------------------------------- */

static int tbl_load(cat_store *s, cat_txn *txn, const char *id, cat_lance_table **out) {
  int rc = cat__rec_get(s, txn, CAT__DB_LANCE_TABLES, id, TABLE_DESC, (ProtobufCMessage **)out);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ECORRUPT, "catalog store: dangling table %s", id);
  return rc;
}

int cat_lance_table_get(cat_store *s, cat_lance_table **out, const char *const *path,
                        size_t depth) {
  cat_txn *txn = NULL;
  cat__ns_node ns;
  char id[CAT__ID_LEN + 1];
  *out = NULL;
  int rc = tbl_path_check(path, depth);
  if (!rc) rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  rc = tbl_find(s, txn, path, depth, &ns, id);
  if (!rc) rc = tbl_load(s, txn, id, out);
  cat__txn_abort(txn);
  return rc;
}

int cat_lance_table_deregister(cat_store *s, cat_lance_table **out, const char *const *path,
                               size_t depth) {
  cat_txn *txn = NULL;
  cat__ns_node ns;
  char id[CAT__ID_LEN + 1];
  cat_lance_table *was = NULL;
  if (out) *out = NULL;
  int rc = tbl_path_check(path, depth);
  if (!rc) rc = cat__txn_begin(s, &txn, true);
  if (rc) return rc;
  rc = tbl_find(s, txn, path, depth, &ns, id);
  if (!rc) rc = tbl_load(s, txn, id, &was);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_LANCE_TABLE_NAMES, ns.id, was->name);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_LANCE_TABLES, id, CAT__ID_LEN);
  rc = tbl_finish(rc, txn, &was);
  if (out) *out = was;
  else if (was) protobuf_c_message_free_unpacked(&was->base, NULL);
  return rc;
}

/* ---- list --------------------------------------------------------------------------------- */

int cat_lance_table_list(cat_store *s, Deltad__Lance__V1__ListTablesResponse **out,
                         const char *const *path, size_t depth, int32_t limit,
                         const char *page_token) {
  cat_txn *txn = NULL;
  cat__ns_node ns;
  Deltad__Lance__V1__ListTablesResponse *r = NULL;
  *out = NULL;
  int rc = cat_ns_path_check(path, depth, 0);
  if (!rc) rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  if (!(r = malloc(sizeof *r))) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  deltad__lance__v1__list_tables_response__init(r);
  rc = cat__ns_resolve(s, txn, path, depth, &ns);
  /* The root holds no tables; "-" is a scope no id has (its own scope would be the whole
   * names DB). */
  if (!rc)
    rc = cat__name_page(s, txn, CAT__DB_LANCE_TABLE_NAMES, CAT__DB_LANCE_TABLES, TABLE_DESC,
                        ns.level == 0 ? "-" : ns.id, limit, page_token, &r->tables,
                        &r->n_tables, &r->page_token);
cleanup:
  cat__txn_abort(txn);
  if (rc && r) protobuf_c_message_free_unpacked(&r->base, NULL);
  else *out = r;
  return rc;
}
