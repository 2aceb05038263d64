/* cat_dtable_drop.c: the end of a Delta table record: drop (EXTERNAL: deregistered;
 * MANAGED: kept as dropped until undropped or purged), undrop, the dropped list, the purge
 * of dropped records whose retention passed (their data is deleted by the caller first),
 * and what a schema delete does with the tables in it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_dtable_int.h"

#define DT_DESC (&deltad__tables__v1__table_info__descriptor)

static bool dt_managed(const cat_dtable *t) { return !strcmp(t->table_type, "MANAGED"); }

/* Takes the live record t (id, in schema schema_id) out of the name index; MANAGED ones are
 * kept as dropped. */
static int dt_drop_in(cat_store *s, cat_txn *txn, const char *schema_id, const char *id,
                      cat_dtable *t) {
  int rc = cat__name_del(s, txn, CAT__DB_DELTA_TABLE_NAMES, schema_id, t->name);
  if (rc) return rc;
  if (!dt_managed(t)) return cat__key_del(s, txn, CAT__DB_DELTA_TABLES, id, CAT__ID_LEN);
  cat_dtable view = *t;
  view.catalog_name = view.schema_name = view.full_name = "";
  view.deleted_at = cat__now_ms();
  t->deleted_at = view.deleted_at;
  rc = cat__rec_put(s, txn, CAT__DB_DELTA_TABLES, id, &view.base, NULL);
  if (!rc) rc = cat__kv_put(txn, CAT__DB_DELTA_DROPPED, id, CAT__ID_LEN, id, CAT__ID_LEN, false);
  return rc;
}

int cat_dtable_delete(cat_store *s, cat_dtable **out, const char *full_name) {
  cat_txn *txn = NULL;
  cat__dt_parent p = {.root = NULL};
  cat_dtable *t = NULL;
  char id[CAT__ID_LEN + 1];
  if (out) *out = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = cat__dt_find(s, txn, full_name, &p, &t, id);
  if (!rc) rc = dt_drop_in(s, txn, p.schema_id, id, t);
  free(p.root);
  rc = cat__dt_finish(rc, txn, &t);
  if (out) *out = t;
  else if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

/* ---- walking the dropped records ----------------------------------------------------------- */

/* Calls fn for each dropped record (a heap message fn may keep by setting *rec NULL). */
typedef int (*dt_dropped_fn)(cat_store *s, cat_txn *txn, cat_dtable **rec, void *arg);

typedef struct dt_walk {
  dt_dropped_fn fn;
  void *arg;
} dt_walk;

static int dt_walk_one(cat_store *s, cat_txn *txn, const char *key, const char *id, void *arg) {
  const dt_walk *w = arg;
  cat_dtable *t = NULL;
  (void)key;
  int rc = cat__rec_get(s, txn, CAT__DB_DELTA_TABLES, id, DT_DESC, (ProtobufCMessage **)&t);
  if (rc == DD_ENOTFOUND) return 0; /* a dangling entry matches nothing */
  if (!rc) rc = w->fn(s, txn, &t, w->arg);
  if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

static int dt_dropped_walk(cat_store *s, cat_txn *txn, dt_dropped_fn fn, void *arg) {
  dt_walk w = {fn, arg};
  return cat__scope_walk(s, txn, CAT__DB_DELTA_DROPPED, NULL, dt_walk_one, &w);
}

/* A growing list of records (the response's tables). */
static int dt_push(Deltad__Tables__V1__ListTablesResponse *r, cat_dtable **rec) {
  cat_dtable **t = realloc(r->tables, (r->n_tables + 1) * sizeof *t);
  if (!t) return dd_err_set(DD_ENOMEM, "out of memory");
  r->tables = t;
  t[r->n_tables++] = *rec;
  *rec = NULL;
  return 0;
}

static int dt_resp_new(Deltad__Tables__V1__ListTablesResponse **out) {
  *out = malloc(sizeof **out);
  if (!*out) return dd_err_set(DD_ENOMEM, "out of memory");
  deltad__tables__v1__list_tables_response__init(*out);
  (*out)->next_page_token = cat__strdup("");
  return (*out)->next_page_token ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

static int dt_resp_end(int rc, cat_txn *txn, Deltad__Tables__V1__ListTablesResponse **out) {
  if (!rc && txn->write) rc = cat__txn_commit(txn);
  else cat__txn_abort(txn);
  if (rc && *out) {
    protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
  }
  return rc;
}

/* ---- undrop -------------------------------------------------------------------------------- */

typedef struct dt_pick {
  const char *schema_id, *name, *table_id;
  cat_dtable *best;
} dt_pick;

static int dt_pick_one(cat_store *s, cat_txn *txn, cat_dtable **rec, void *arg) {
  dt_pick *a = arg;
  cat_dtable *t = *rec;
  char k1[CAT__KEY_MAX], k2[CAT__KEY_MAX];
  (void)s;
  (void)txn;
  if (strcmp(t->schema_id, a->schema_id)) return 0;
  size_t n1 = cat__name_key(k1, NULL, t->name), n2 = cat__name_key(k2, NULL, a->name);
  if (n1 != n2 || memcmp(k1, k2, n1)) return 0;
  if (*a->table_id && strcmp(t->table_id, a->table_id)) return 0;
  if (a->best && a->best->deleted_at >= t->deleted_at) return 0;
  if (a->best) protobuf_c_message_free_unpacked(&a->best->base, NULL);
  a->best = t;
  *rec = NULL;
  return 0;
}

static int dt_undrop_in(cat_store *s, cat_txn *txn, cat_dtable **out, const char *actor,
                        const char *full_name, const char *table_id) {
  char cat[256], sch[256], tbl[256], full[3 * 256];
  cat__dt_parent p;
  int rc = cat_table_name_split("full_name", full_name, cat, sch, tbl);
  if (!rc) rc = cat__dt_schema(s, txn, cat, sch, &p);
  if (rc) return rc;
  free(p.root);
  dt_pick a = {p.schema_id, tbl, table_id ? table_id : "", NULL};
  snprintf(full, sizeof full, "%s.%s.%s", p.catalog, p.schema, tbl);
  rc = dt_dropped_walk(s, txn, dt_pick_one, &a);
  if (!rc && !a.best) rc = dd_err_set(DD_ENOTFOUND, "no dropped table '%s'%s%s", full,
                                      *a.table_id ? " with id " : "", a.table_id);
  if (!rc) rc = cat__table_name_taken(s, txn, p.schema_id, a.best->name, full);
  if (!rc) rc = cat__name_put(s, txn, CAT__DB_DELTA_TABLE_NAMES, p.schema_id, a.best->name, a.best->table_id);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_DELTA_DROPPED, a.best->table_id, CAT__ID_LEN);
  if (!rc) {
    cat_dtable view = *a.best;
    view.deleted_at = 0;
    view.updated_by = (char *)actor;
    view.update_at = cat__now_ms();
    rc = cat__rec_put(s, txn, CAT__DB_DELTA_TABLES, view.table_id, &view.base, (ProtobufCMessage **)out);
  }
  if (!rc) rc = cat__dt_names(*out, p.catalog, p.schema);
  if (a.best) protobuf_c_message_free_unpacked(&a.best->base, NULL);
  return rc;
}

int cat_dtable_undrop(cat_store *s, cat_dtable **out, const char *actor, const char *full_name,
                      const char *table_id) {
  cat_txn *txn = NULL;
  *out = NULL;
  int rc = cat__txn_begin(s, &txn, true);
  if (!rc) rc = dt_undrop_in(s, txn, out, actor, full_name, table_id);
  return cat__dt_finish(rc, txn, out);
}

/* ---- the dropped list and the purge -------------------------------------------------------- */

typedef struct dt_collect {
  const char *schema_id; /* NULL: every schema */
  int64_t cutoff_ms;     /* INT64_MAX: any time */
  size_t max;
  Deltad__Tables__V1__ListTablesResponse *r;
} dt_collect;

static int dt_collect_one(cat_store *s, cat_txn *txn, cat_dtable **rec, void *arg) {
  dt_collect *a = arg;
  cat_dtable *t = *rec;
  if (a->schema_id && strcmp(t->schema_id, a->schema_id)) return 0;
  if (t->deleted_at > a->cutoff_ms) return 0;
  if (a->r->n_tables >= a->max) return 1; /* enough */
  int rc = cat__dt_names_by_schema(s, txn, t);
  return rc ? rc : dt_push(a->r, rec);
}

static int dt_collect_run(cat_store *s, Deltad__Tables__V1__ListTablesResponse **out, dt_collect *a) {
  cat_txn *txn = NULL;
  int rc = dt_resp_new(out);
  if (!rc) rc = cat__txn_begin(s, &txn, false);
  if (rc) {
    if (*out) protobuf_c_message_free_unpacked(&(*out)->base, NULL);
    *out = NULL;
    return rc;
  }
  a->r = *out;
  rc = dt_dropped_walk(s, txn, dt_collect_one, a);
  return dt_resp_end(rc == 1 ? 0 : rc, txn, out);
}

int cat_dtable_list_dropped(cat_store *s, Deltad__Tables__V1__ListTablesResponse **out,
                            const char *catalog, const char *schema) {
  dt_collect a = {NULL, INT64_MAX, CAT__MAX_PAGE, NULL};
  cat__dt_parent p;
  *out = NULL;
  if ((catalog && *catalog) || (schema && *schema)) {
    int rc = cat__dt_schema_read(s, catalog, schema, &p);
    if (rc) return rc;
    free(p.root);
    a.schema_id = p.schema_id;
  }
  return dt_collect_run(s, out, &a);
}

int cat_dtable_purge_due(cat_store *s, Deltad__Tables__V1__ListTablesResponse **out,
                         int64_t cutoff_ms, size_t max) {
  dt_collect a = {NULL, cutoff_ms, max ? max : CAT__MAX_PAGE, NULL};
  *out = NULL;
  return dt_collect_run(s, out, &a);
}

int cat_dtable_purge_done(cat_store *s, const char *id) {
  cat_txn *txn = NULL;
  cat__bytes v;
  if (!id || strlen(id) != CAT__ID_LEN) return dd_err_set(DD_EINVAL, "id: not a record id");
  int rc = cat__txn_begin(s, &txn, true);
  if (rc) return rc;
  rc = cat__kv_get(txn, CAT__DB_DELTA_DROPPED, id, CAT__ID_LEN, &v);
  if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ENOTFOUND, "no dropped table with id %s", id);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_DELTA_DROPPED, id, CAT__ID_LEN);
  if (!rc) rc = cat__key_del(s, txn, CAT__DB_DELTA_TABLES, id, CAT__ID_LEN);
  return cat__dt_finish(rc, txn, NULL);
}

/* ---- a schema delete ----------------------------------------------------------------------- */

typedef struct dt_below {
  const char *schema_id, *what;
  int force;
} dt_below;

static int dt_below_one(cat_store *s, cat_txn *txn, const char *lname, const char *id, void *arg) {
  const dt_below *a = arg;
  cat_dtable *t = NULL;
  (void)lname;
  if (!a->force) return dd_err_set(DD_EPRECOND, "'%s' is not empty: it holds Delta tables", a->what);
  int rc = cat__rec_get(s, txn, CAT__DB_DELTA_TABLES, id, DT_DESC, (ProtobufCMessage **)&t);
  if (rc == DD_ENOTFOUND) return cat__name_del(s, txn, CAT__DB_DELTA_TABLE_NAMES, a->schema_id, lname);
  if (!rc) rc = dt_drop_in(s, txn, a->schema_id, id, t);
  if (t) protobuf_c_message_free_unpacked(&t->base, NULL);
  return rc;
}

int cat__dtable_below_drop(cat_store *s, cat_txn *txn, const char *schema_id, const char *what,
                           int force) {
  dt_below a = {schema_id, what, force};
  return cat__scope_walk(s, txn, CAT__DB_DELTA_TABLE_NAMES, schema_id, dt_below_one, &a);
}
