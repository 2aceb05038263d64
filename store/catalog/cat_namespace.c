/* cat_namespace.c: Lance namespaces in the store (cat_store.h, "Lance namespaces and
 * tables"): resolving a path level by level (catalog, schema, then namespace records),
 * create with its three modes, get, drop (restrict or cascade, depth first in one
 * transaction) and paged listing of child names. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

#define NS_DESC (&deltad__lance__v1__namespace_info__descriptor)
#define NS_PROPS (&deltad__lance__v1__namespace_info__properties_entry__descriptor)
#define CATALOG_DESC (&deltad__catalog__v1__catalog_info__descriptor)
#define CATALOG_PROPS (&deltad__catalog__v1__catalog_info__properties_entry__descriptor)
#define SCHEMA_DESC (&deltad__catalog__v1__schema_info__descriptor)
#define SCHEMA_PROPS (&deltad__catalog__v1__schema_info__properties_entry__descriptor)
#define PATH_STR_MAX 1024
#define PAGE_MAX 1000

/* The names DB and records DB holding the children of a node at `level`. */
static int ns_names_db(size_t level) {
  return level == 0 ? CAT__DB_CATALOG_NAMES : level == 1 ? CAT__DB_SCHEMA_NAMES : CAT__DB_NAMESPACE_NAMES;
}
static int ns_recs_db(size_t level) {
  return level == 0 ? CAT__DB_CATALOGS : level == 1 ? CAT__DB_SCHEMAS : CAT__DB_NAMESPACES;
}
static const ProtobufCMessageDescriptor *ns_desc(size_t level) {
  return level == 0 ? CATALOG_DESC : level == 1 ? SCHEMA_DESC : NS_DESC;
}
/* The scope of a node's children in their names DB (NULL: the catalogs have none). */
static const char *ns_scope(const cat__ns_node *n) { return n->level == 0 ? NULL : n->id; }

/* ---- paths ----------------------------------------------------------------------------- */

void cat__ns_path_str(char *buf, size_t cap, const char *const *path, size_t depth) {
  size_t n = 0;
  buf[0] = '\0';
  for (size_t i = 0; i < depth && n + 1 < cap; i++) {
    int w = snprintf(buf + n, cap - n, "%s%s", i ? "$" : "", path[i]);
    if (w < 0) break;
    n += (size_t)w;
  }
  if (n >= cap) n = cap - 1;
  buf[n] = '\0';
}

int cat_ns_path_check(const char *const *path, size_t depth, int table) {
  char field[32];
  if (depth > CAT_NS_MAX_DEPTH)
    return dd_err_set(DD_EINVAL, "id: deeper than %d levels", CAT_NS_MAX_DEPTH);
  for (size_t i = 0; i < depth; i++) {
    snprintf(field, sizeof field, "id[%zu]", i);
    bool last_is_table = table && i + 1 == depth;
    int rc = cat_name_check(field, path[i], i >= 2 || last_is_table);
    if (rc) return rc;
  }
  return 0;
}

static int ns_not_found(const char *const *path, size_t depth) {
  char p[PATH_STR_MAX];
  cat__ns_path_str(p, sizeof p, path, depth);
  return dd_err_set(DD_ENOTFOUND, "namespace '%s' not found", p);
}

/* The child `name` of parent; DD_ENOTFOUND (no message) when absent. */
static int ns_child(cat_store *s, cat_txn *txn, const cat__ns_node *parent, const char *name,
                    cat__ns_node *out) {
  out->level = parent->level + 1;
  return cat__name_get(s, txn, ns_names_db(parent->level), ns_scope(parent), name, out->id);
}

int cat__ns_resolve(cat_store *s, cat_txn *txn, const char *const *path, size_t depth,
                    cat__ns_node *out) {
  cat__ns_node cur = {0, ""};
  for (size_t i = 0; i < depth; i++) {
    cat__ns_node next;
    int rc = ns_child(s, txn, &cur, path[i], &next);
    if (rc == DD_ENOTFOUND) return ns_not_found(path, depth);
    if (rc) return rc;
    cur = next;
  }
  *out = cur;
  return 0;
}

/* ---- the common view of a namespace ---------------------------------------------------- */

/* Packs a view (borrowed pointers) and unpacks it into a heap tree the caller owns. */
static int ns_copy(const cat_namespace *view, cat_namespace **out) {
  size_t len = protobuf_c_message_get_packed_size(&view->base);
  uint8_t *buf = malloc(len ? len : 1);
  if (!buf) return dd_err_set(DD_ENOMEM, "out of memory");
  protobuf_c_message_pack(&view->base, buf);
  *out = (cat_namespace *)protobuf_c_message_unpack(NS_DESC, NULL, len, buf);
  free(buf);
  return *out ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* Fills view from a catalog / schema record (borrowing its strings) and copies it. */
static int ns_view_copy(cat_namespace *view, size_t n_props, void *const *props,
                        cat_namespace **out) {
  cat__kv **kv = NULL;
  int rc = cat__props_view(&kv, NS_PROPS, n_props, props);
  if (rc) return rc;
  view->n_properties = n_props;
  view->properties = (Deltad__Lance__V1__NamespaceInfo__PropertiesEntry **)kv;
  rc = ns_copy(view, out);
  free(kv);
  return rc;
}

static int ns_load_catalog(const cat_catalog *c, cat_namespace **out) {
  cat_namespace v = DELTAD__LANCE__V1__NAMESPACE_INFO__INIT;
  v.id = c->id;
  v.name = c->name;
  v.owner = c->owner;
  v.create_at = c->create_at;
  v.created_by = c->created_by;
  v.update_at = c->update_at;
  v.updated_by = c->updated_by;
  v.level = 1;
  return ns_view_copy(&v, c->n_properties, (void *const *)c->properties, out);
}

static int ns_load_schema(cat_store *s, cat_txn *txn, const cat_schema *sc, cat_namespace **out) {
  char cat_id[CAT__ID_LEN + 1];
  int rc = cat__name_get(s, txn, CAT__DB_CATALOG_NAMES, NULL, sc->catalog_name, cat_id);
  if (rc == DD_ENOTFOUND) cat_id[0] = '\0'; /* only the parent id is missing from the view */
  else if (rc) return rc;
  cat_namespace v = DELTAD__LANCE__V1__NAMESPACE_INFO__INIT;
  v.id = sc->schema_id;
  v.name = sc->name;
  v.parent_id = cat_id;
  v.owner = sc->owner;
  v.create_at = sc->create_at;
  v.created_by = sc->created_by;
  v.update_at = sc->update_at;
  v.updated_by = sc->updated_by;
  v.level = 2;
  return ns_view_copy(&v, sc->n_properties, (void *const *)sc->properties, out);
}

/* The NamespaceInfo of a resolved node (the root is an empty record at level 0). */
static int ns_load(cat_store *s, cat_txn *txn, const cat__ns_node *n, cat_namespace **out) {
  ProtobufCMessage *rec = NULL;
  *out = NULL;
  if (n->level == 0) {
    cat_namespace root = DELTAD__LANCE__V1__NAMESPACE_INFO__INIT;
    return ns_copy(&root, out);
  }
  int rc = cat__rec_get(s, txn, ns_recs_db(n->level - 1), n->id, ns_desc(n->level - 1), &rec);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ECORRUPT, "catalog store: dangling namespace %s", n->id);
  if (rc) return rc;
  if (n->level == 1) rc = ns_load_catalog((const cat_catalog *)rec, out);
  else if (n->level == 2) rc = ns_load_schema(s, txn, (const cat_schema *)rec, out);
  else *out = (cat_namespace *)rec, rec = NULL;
  if (rec) protobuf_c_message_free_unpacked(rec, NULL);
  return rc;
}

/* ---- insert ----------------------------------------------------------------------------- */

typedef struct ns_new {
  const char *actor, *name;
  size_t n_props;
  void *const *props;
  int64_t now;
} ns_new;

static int ns_insert_catalog(cat_store *s, cat_txn *txn, const char *id, const ns_new *nw) {
  cat__kv **kv = NULL;
  int rc = cat__props_view(&kv, CATALOG_PROPS, nw->n_props, nw->props);
  if (rc) return rc;
  cat_catalog rec = DELTAD__CATALOG__V1__CATALOG_INFO__INIT;
  rec.id = (char *)id;
  rec.name = (char *)nw->name;
  rec.n_properties = nw->n_props;
  rec.properties = (Deltad__Catalog__V1__CatalogInfo__PropertiesEntry **)kv;
  rec.owner = rec.created_by = rec.updated_by = (char *)nw->actor;
  rec.create_at = rec.update_at = nw->now;
  rc = cat__rec_put(s, txn, CAT__DB_CATALOGS, id, &rec.base, NULL);
  free(kv);
  return rc;
}

static int ns_insert_schema(cat_store *s, cat_txn *txn, const cat__ns_node *parent,
                            const char *id, const ns_new *nw) {
  cat_catalog *c = NULL;
  cat__kv **kv = NULL;
  char full[2 * CAT__NAME_MAX + 2];
  int rc = cat__rec_get(s, txn, CAT__DB_CATALOGS, parent->id, CATALOG_DESC, (ProtobufCMessage **)&c);
  if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ECORRUPT, "catalog store: dangling catalog %s", parent->id);
  if (!rc) rc = cat__props_view(&kv, SCHEMA_PROPS, nw->n_props, nw->props);
  if (rc) goto cleanup;
  snprintf(full, sizeof full, "%s.%s", c->name, nw->name);
  cat_schema rec = DELTAD__CATALOG__V1__SCHEMA_INFO__INIT;
  rec.schema_id = (char *)id;
  rec.name = (char *)nw->name;
  rec.catalog_name = c->name;
  rec.full_name = full;
  rec.n_properties = nw->n_props;
  rec.properties = (Deltad__Catalog__V1__SchemaInfo__PropertiesEntry **)kv;
  rec.owner = rec.created_by = rec.updated_by = (char *)nw->actor;
  rec.create_at = rec.update_at = nw->now;
  rc = cat__rec_put(s, txn, CAT__DB_SCHEMAS, id, &rec.base, NULL);
cleanup:
  free(kv);
  if (c) protobuf_c_message_free_unpacked(&c->base, NULL);
  return rc;
}

static int ns_insert_deep(cat_store *s, cat_txn *txn, const cat__ns_node *parent,
                          const char *id, const ns_new *nw) {
  cat__kv **kv = NULL;
  int rc = cat__props_view(&kv, NS_PROPS, nw->n_props, nw->props);
  if (rc) return rc;
  cat_namespace rec = DELTAD__LANCE__V1__NAMESPACE_INFO__INIT;
  rec.id = (char *)id;
  rec.name = (char *)nw->name;
  rec.parent_id = (char *)parent->id;
  rec.n_properties = nw->n_props;
  rec.properties = (Deltad__Lance__V1__NamespaceInfo__PropertiesEntry **)kv;
  rec.owner = rec.created_by = rec.updated_by = (char *)nw->actor;
  rec.create_at = rec.update_at = nw->now;
  rec.level = (int32_t)(parent->level + 1);
  rc = cat__rec_put(s, txn, CAT__DB_NAMESPACES, id, &rec.base, NULL);
  free(kv);
  return rc;
}

/* Creates the child nw->name of parent: name index, then the record of its level. */
static int ns_insert(cat_store *s, cat_txn *txn, const cat__ns_node *parent, const ns_new *nw,
                     cat__ns_node *out) {
  out->level = parent->level + 1;
  int rc = cat__uuid(out->id);
  if (!rc) rc = cat__name_put(s, txn, ns_names_db(parent->level), ns_scope(parent), nw->name, out->id);
  if (rc == DD_EEXISTS) rc = dd_err_set(DD_ECONFLICT, "catalog store: name index changed");
  if (rc) return rc;
  if (parent->level == 0) return ns_insert_catalog(s, txn, out->id, nw);
  if (parent->level == 1) return ns_insert_schema(s, txn, parent, out->id, nw);
  return ns_insert_deep(s, txn, parent, out->id, nw);
}

/* ---- drop --------------------------------------------------------------------------------- */

typedef struct ns_drop_arg {
  const cat__ns_node *node;
  const char *path; /* for messages */
  int cascade;
} ns_drop_arg;

static int ns_drop_node(cat_store *s, cat_txn *txn, const cat__ns_node *node,
                        const char *parent_scope, const char *lname, const char *path,
                        int cascade);

/* Walk callback: one table of the namespace being dropped. */
static int ns_drop_table(cat_store *s, cat_txn *txn, const char *lname, const char *id, void *arg) {
  const ns_drop_arg *a = arg;
  if (!a->cascade) return dd_err_set(DD_EPRECOND, "namespace '%s' is not empty: it holds tables", a->path);
  int rc = cat__key_del(s, txn, CAT__DB_LANCE_TABLES, id, CAT__ID_LEN);
  if (!rc) rc = cat__name_del(s, txn, CAT__DB_LANCE_TABLE_NAMES, a->node->id, lname);
  return rc;
}

/* Walk callback: one child namespace of the namespace being dropped. */
static int ns_drop_child(cat_store *s, cat_txn *txn, const char *lname, const char *id, void *arg) {
  const ns_drop_arg *a = arg;
  if (!a->cascade)
    return dd_err_set(DD_EPRECOND, "namespace '%s' is not empty: it holds namespaces", a->path);
  cat__ns_node child = {a->node->level + 1, ""};
  memcpy(child.id, id, CAT__ID_LEN + 1);
  return ns_drop_node(s, txn, &child, a->node->id, lname, a->path, 1);
}

/* Drops node (found as lname under parent_scope) after its tables and children. */
static int ns_drop_node(cat_store *s, cat_txn *txn, const cat__ns_node *node,
                        const char *parent_scope, const char *lname, const char *path,
                        int cascade) {
  ns_drop_arg a = {node, path, cascade};
  int rc = cat__scope_walk(s, txn, CAT__DB_LANCE_TABLE_NAMES, node->id, ns_drop_table, &a);
  if (!rc) rc = cat__scope_walk(s, txn, ns_names_db(node->level), node->id, ns_drop_child, &a);
  if (!rc) rc = cat__name_del(s, txn, ns_names_db(node->level - 1), parent_scope, lname);
  if (!rc) rc = cat__key_del(s, txn, ns_recs_db(node->level - 1), node->id, CAT__ID_LEN);
  return rc;
}

/* Walk callback: the Lance content of one schema of a catalog being deleted. */
static int ns_below_schema(cat_store *s, cat_txn *txn, const char *lname, const char *id, void *arg) {
  const ns_drop_arg *a = arg;
  (void)lname;
  return cat__lance_below_drop(s, txn, 2, id, a->path, a->cascade);
}

int cat__lance_below_drop(cat_store *s, cat_txn *txn, size_t level, const char *id,
                          const char *what, int force) {
  cat__ns_node node = {level, ""};
  if (level < 1 || strlen(id) != CAT__ID_LEN) return dd_err_set(DD_EINTERNAL, "catalog store: bad node");
  memcpy(node.id, id, CAT__ID_LEN + 1);
  ns_drop_arg a = {&node, what, force};
  int rc = cat__scope_walk(s, txn, CAT__DB_LANCE_TABLE_NAMES, node.id, ns_drop_table, &a);
  if (!rc && level == 1) /* the schemas themselves are the catalog API's to delete */
    rc = cat__scope_walk(s, txn, CAT__DB_SCHEMA_NAMES, node.id, ns_below_schema, &a);
  if (!rc && level >= 2) rc = cat__scope_walk(s, txn, CAT__DB_NAMESPACE_NAMES, node.id, ns_drop_child, &a);
  if (!rc && level == 2) rc = cat__dtable_below_drop(s, txn, node.id, what, force); /* Delta tables */
  return rc;
}

/* Resolves path (depth >= 1) into its parent and node. */
static int ns_resolve_pair(cat_store *s, cat_txn *txn, const char *const *path, size_t depth,
                           cat__ns_node *parent, cat__ns_node *node) {
  int rc = cat__ns_resolve(s, txn, path, depth - 1, parent);
  if (rc == DD_ENOTFOUND) return ns_not_found(path, depth);
  if (!rc) rc = ns_child(s, txn, parent, path[depth - 1], node);
  if (rc == DD_ENOTFOUND) return ns_not_found(path, depth);
  return rc;
}

/* ---- public calls ------------------------------------------------------------------------ */

/* Ends a write: commits on success, aborts on failure and frees a half-made *out. */
static int ns_finish(int rc, cat_txn *txn, cat_namespace **out) {
  if (!rc) rc = cat__txn_commit(txn);
  else if (txn) cat__txn_abort(txn);
  if (rc && out && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

static int ns_create_in(cat_store *s, cat_txn *txn, cat_namespace **out, const char *const *path,
                        size_t depth, cat_ns_create_mode mode, const ns_new *nw) {
  cat__ns_node parent, node;
  char p[PATH_STR_MAX];
  cat__ns_path_str(p, sizeof p, path, depth);
  int rc = cat__ns_resolve(s, txn, path, depth - 1, &parent);
  if (rc) return rc;
  rc = ns_child(s, txn, &parent, nw->name, &node);
  if (rc && rc != DD_ENOTFOUND) return rc;
  if (rc == 0 && mode == CAT_NS_CREATE)
    return dd_err_set(DD_EEXISTS, "namespace '%s' already exists", p);
  if (rc == 0 && mode == CAT_NS_EXIST_OK) return ns_load(s, txn, &node, out);
  if (rc == 0 && (rc = ns_drop_node(s, txn, &node, ns_scope(&parent), nw->name, p, 1))) return rc;
  if ((rc = ns_insert(s, txn, &parent, nw, &node))) return rc;
  return ns_load(s, txn, &node, out);
}

static int ns_root_create(cat_namespace **out, cat_ns_create_mode mode) {
  if (mode == CAT_NS_CREATE) return dd_err_set(DD_EEXISTS, "the root namespace always exists");
  if (mode == CAT_NS_OVERWRITE) return dd_err_set(DD_EINVAL, "the root namespace cannot be overwritten");
  cat_namespace root = DELTAD__LANCE__V1__NAMESPACE_INFO__INIT;
  return ns_copy(&root, out);
}

int cat_ns_create(cat_store *s, cat_namespace **out, const char *actor, const char *const *path,
                  size_t depth, cat_ns_create_mode mode, size_t n_props, void *const *props) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = cat_ns_path_check(path, depth, 0);
  if (!rc) rc = cat__props_check("properties", n_props, props);
  if (rc) return rc;
  if (depth == 0) return ns_root_create(out, mode);
  ns_new nw = {actor, path[depth - 1], n_props, props, cat__now_ms()};
  if ((rc = cat__txn_begin(s, &txn, true))) return rc;
  rc = ns_create_in(s, txn, out, path, depth, mode, &nw);
  return ns_finish(rc, txn, out);
}

int cat_ns_get(cat_store *s, cat_namespace **out, const char *const *path, size_t depth) {
  cat_txn *txn = NULL;
  cat__ns_node node;
  *out = NULL;
  int rc = cat_ns_path_check(path, depth, 0);
  if (!rc) rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  rc = cat__ns_resolve(s, txn, path, depth, &node);
  if (!rc) rc = ns_load(s, txn, &node, out);
  cat__txn_abort(txn);
  return rc;
}

int cat_ns_drop(cat_store *s, cat_namespace **out, const char *const *path, size_t depth,
                int cascade) {
  cat_txn *txn = NULL;
  cat__ns_node parent, node;
  cat_namespace *was = NULL;
  char p[PATH_STR_MAX];
  if (out) *out = NULL;
  int rc = cat_ns_path_check(path, depth, 0);
  if (rc) return rc;
  if (depth == 0) return dd_err_set(DD_EINVAL, "the root namespace cannot be dropped");
  cat__ns_path_str(p, sizeof p, path, depth);
  if ((rc = cat__txn_begin(s, &txn, true))) return rc;
  rc = ns_resolve_pair(s, txn, path, depth, &parent, &node);
  if (!rc) rc = ns_load(s, txn, &node, &was);
  if (!rc) rc = ns_drop_node(s, txn, &node, ns_scope(&parent), path[depth - 1], p, cascade);
  rc = ns_finish(rc, txn, &was);
  if (out) *out = was;
  else if (was) protobuf_c_message_free_unpacked(&was->base, NULL);
  return rc;
}

/* ---- listing ----------------------------------------------------------------------------- */

/* The "name" string of a record whose descriptor has one. */
static const char *ns_rec_name(const ProtobufCMessage *rec) {
  const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(rec->descriptor, "name");
  return f ? *(char *const *)((const char *)rec + f->offset) : "";
}

static void ns_names_free(char **names, size_t n) {
  for (size_t i = 0; i < n; i++) free(names[i]);
  free(names);
}

typedef struct ns_page {
  char **names;
  size_t n;
  char *last; /* display name of the last item */
} ns_page;

static int ns_page_add(cat_store *s, cat_txn *txn, int recs_db, const ProtobufCMessageDescriptor *desc,
                       const cat__bytes *v, ns_page *pg) {
  char id[CAT__ID_LEN + 1];
  ProtobufCMessage *rec = NULL;
  if (v->n != CAT__ID_LEN) return dd_err_set(DD_ECORRUPT, "catalog store: bad name index");
  memcpy(id, v->p, CAT__ID_LEN);
  id[CAT__ID_LEN] = '\0';
  int rc = cat__rec_get(s, txn, recs_db, id, desc, &rec);
  if (rc == DD_ENOTFOUND) return dd_err_set(DD_ECORRUPT, "catalog store: dangling index %s", id);
  if (rc) return rc;
  pg->names[pg->n] = strdup(ns_rec_name(rec));
  protobuf_c_message_free_unpacked(rec, NULL);
  if (!pg->names[pg->n]) return dd_err_set(DD_ENOMEM, "out of memory");
  pg->last = pg->names[pg->n++];
  return 0;
}

static int ns_page_args(int32_t limit, const char *token, int *max, char after[CAT__KEY_MAX]) {
  if (limit < 0) return dd_err_set(DD_EINVAL, "limit: must not be negative (got %d)", limit);
  *max = limit == 0 || limit > PAGE_MAX ? PAGE_MAX : limit;
  after[0] = '\0';
  if (!token || !*token) return 0;
  int rc = cat_name_check("page_token", token, 1);
  if (!rc) cat__name_key(after, NULL, token);
  return rc;
}

int cat__name_page(cat_store *s, cat_txn *txn, int db, int recs_db,
                   const ProtobufCMessageDescriptor *desc, const char *scope, int32_t limit,
                   const char *token, char ***names, size_t *n, char **next) {
  char after[CAT__KEY_MAX], prefix[CAT__KEY_MAX];
  int max = 0, mrc = 0;
  ns_page pg = {NULL, 0, NULL};
  cat__cur *cur = NULL;
  cat__bytes k, v;
  int rc = ns_page_args(limit, token, &max, after);
  if (rc) return rc;
  size_t plen = scope ? cat__name_key(prefix, scope, "") : 0;
  if (!(pg.names = calloc((size_t)max, sizeof *pg.names))) return dd_err_set(DD_ENOMEM, "out of memory");
  if ((rc = cat__cur_open(txn, db, &cur))) goto cleanup;
  mrc = cat__cur_seek_after(cur, prefix, plen, after, &k, &v);
  while (!rc && mrc == 0 && cat__in_prefix(&k, prefix, plen) && pg.n < (size_t)max) {
    rc = ns_page_add(s, txn, recs_db, desc, &v, &pg);
    if (!rc) mrc = cat__cur_next(cur, &k, &v);
  }
  if (!rc && mrc != 0 && mrc != DD_ENOTFOUND) rc = mrc;
  bool more = !rc && mrc == 0 && cat__in_prefix(&k, prefix, plen);
  if (!rc && !(*next = strdup(more && pg.last ? pg.last : ""))) rc = dd_err_set(DD_ENOMEM, "out of memory");
cleanup:
  cat__cur_close(cur);
  if (rc) ns_names_free(pg.names, pg.n);
  else *names = pg.names, *n = pg.n;
  return rc;
}

int cat_ns_list(cat_store *s, Deltad__Lance__V1__ListNamespacesResponse **out,
                const char *const *path, size_t depth, int32_t limit, const char *page_token) {
  cat_txn *txn = NULL;
  cat__ns_node node;
  Deltad__Lance__V1__ListNamespacesResponse *r = NULL;
  *out = NULL;
  int rc = cat_ns_path_check(path, depth, 0);
  if (!rc) rc = cat__txn_begin(s, &txn, false);
  if (rc) return rc;
  if (!(r = malloc(sizeof *r))) {
    rc = dd_err_set(DD_ENOMEM, "out of memory");
    goto cleanup;
  }
  deltad__lance__v1__list_namespaces_response__init(r);
  rc = cat__ns_resolve(s, txn, path, depth, &node);
  if (!rc)
    rc = cat__name_page(s, txn, ns_names_db(node.level), ns_recs_db(node.level), ns_desc(node.level),
                        ns_scope(&node), limit, page_token, &r->namespaces, &r->n_namespaces,
                        &r->page_token);
cleanup:
  cat__txn_abort(txn);
  if (rc && r) protobuf_c_message_free_unpacked(&r->base, NULL);
  else *out = r;
  return rc;
}
