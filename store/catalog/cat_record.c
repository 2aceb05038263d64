/* cat_record.c: the pieces every kind of catalog object is built from: packed protobuf
 * records keyed by id, case-insensitive name indexes, and paged listing in key order. */
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "store/catalog/cat_internal.h"

/* ---- records ------------------------------------------------------------------------------ */

int cat__rec_get(cat_store *s, MDB_txn *txn, int db, const char *id,
                 const ProtobufCMessageDescriptor *desc, ProtobufCMessage **out) {
  MDB_val k = {strlen(id), (void *)id}, v;
  *out = NULL;
  int rc = mdb_get(txn, s->dbi[db], &k, &v);
  if (rc == MDB_NOTFOUND) return DD_ENOTFOUND;
  if (rc) return cat__mdb_err(rc, "catalog store: read record");
  *out = protobuf_c_message_unpack(desc, NULL, v.mv_size, v.mv_data);
  if (!*out) return dd_err_set(DD_ECORRUPT, "catalog store: record %s does not decode", id);
  return 0;
}

int cat__rec_put(cat_store *s, MDB_txn *txn, int db, const char *id,
                 const ProtobufCMessage *msg, ProtobufCMessage **copy) {
  MDB_val k = {strlen(id), (void *)id};
  MDB_val v = {protobuf_c_message_get_packed_size(msg), NULL};
  int rc = mdb_put(txn, s->dbi[db], &k, &v, MDB_RESERVE);
  if (rc) return cat__mdb_err(rc, "catalog store: write record");
  protobuf_c_message_pack(msg, v.mv_data);
  if (!copy) return 0;
  *copy = protobuf_c_message_unpack(msg->descriptor, NULL, v.mv_size, v.mv_data);
  return *copy ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

/* ---- map views ---------------------------------------------------------------------------- */

int cat__props_check(const char *field, size_t n, void *const *src) {
  for (size_t i = 0; i < n; i++) {
    const cat__kv *e = src[i];
    if (!e->key || !*e->key) return dd_err_set(DD_EINVAL, "%s: empty key", field);
  }
  return 0;
}

int cat__props_view(cat__kv ***out, const ProtobufCMessageDescriptor *desc, size_t n,
                    void *const *src) {
  *out = NULL;
  if (n == 0) return 0;
  if (desc->sizeof_message != sizeof(cat__kv))
    return dd_err_set(DD_EINTERNAL, "%s is not a map entry", desc->name);
  cat__kv **ptrs = malloc(n * (sizeof *ptrs + sizeof(cat__kv)));
  if (!ptrs) return dd_err_set(DD_ENOMEM, "out of memory");
  cat__kv *entries = (cat__kv *)(ptrs + n);
  for (size_t i = 0; i < n; i++) {
    const cat__kv *e = src[i];
    protobuf_c_message_init(desc, &entries[i]);
    entries[i].key = e->key;
    entries[i].value = e->value;
    ptrs[i] = &entries[i];
  }
  *out = ptrs;
  return 0;
}

/* ---- name indexes ------------------------------------------------------------------------- */

int cat__name_get(cat_store *s, MDB_txn *txn, int db, const char *scope, const char *name,
                  char id[CAT__ID_LEN + 1]) {
  char key[CAT__KEY_MAX];
  MDB_val k = {cat__name_key(key, scope, name), key}, v;
  int rc = mdb_get(txn, s->dbi[db], &k, &v);
  if (rc == MDB_NOTFOUND) return DD_ENOTFOUND;
  if (rc) return cat__mdb_err(rc, "catalog store: read name index");
  if (v.mv_size != CAT__ID_LEN) return dd_err_set(DD_ECORRUPT, "catalog store: bad name index");
  memcpy(id, v.mv_data, CAT__ID_LEN);
  id[CAT__ID_LEN] = '\0';
  return 0;
}

int cat__name_put(cat_store *s, MDB_txn *txn, int db, const char *scope, const char *name,
                  const char *id) {
  char key[CAT__KEY_MAX];
  MDB_val k = {cat__name_key(key, scope, name), key}, v = {CAT__ID_LEN, (void *)id};
  int rc = mdb_put(txn, s->dbi[db], &k, &v, MDB_NOOVERWRITE);
  if (rc == MDB_KEYEXIST) return DD_EEXISTS;
  return rc ? cat__mdb_err(rc, "catalog store: write name index") : 0;
}

int cat__key_del(cat_store *s, MDB_txn *txn, int db, const void *key, size_t len) {
  MDB_val k = {len, (void *)key};
  int rc = mdb_del(txn, s->dbi[db], &k, NULL);
  if (rc == MDB_NOTFOUND) return 0;
  return rc ? cat__mdb_err(rc, "catalog store: delete") : 0;
}

int cat__name_del(cat_store *s, MDB_txn *txn, int db, const char *scope, const char *name) {
  char key[CAT__KEY_MAX];
  size_t n = cat__name_key(key, scope, name);
  return cat__key_del(s, txn, db, key, n);
}

int cat__get_by_name(cat_store *s, MDB_txn *txn, int names_db, int recs_db, const char *scope,
                     const char *name, const ProtobufCMessageDescriptor *desc,
                     ProtobufCMessage **out, char id[CAT__ID_LEN + 1]) {
  int rc = cat__name_get(s, txn, names_db, scope, name, id);
  if (rc) return rc;
  rc = cat__rec_get(s, txn, recs_db, id, desc, out);
  if (rc == DD_ENOTFOUND)
    return dd_err_set(DD_ECORRUPT, "catalog store: name index points at missing record %s", id);
  return rc;
}

/* ---- walking a scope ---------------------------------------------------------------------- */

int cat__scope_walk(cat_store *s, MDB_txn *txn, int db, const char *scope, cat__walk_fn fn,
                    void *arg) {
  char key[CAT__KEY_MAX], id[CAT__ID_LEN + 1];
  size_t plen = cat__name_key(key, scope, ""), klen = plen;
  MDB_cursor *cur = NULL;
  int rc = 0, mrc = mdb_cursor_open(txn, s->dbi[db], &cur);
  if (mrc) return cat__mdb_err(mrc, "catalog store: open cursor");
  for (;;) {
    MDB_val k = {klen, key}, v;
    mrc = mdb_cursor_get(cur, &k, &v, klen ? MDB_SET_RANGE : MDB_FIRST);
    if (mrc == 0 && klen > plen && k.mv_size == klen && memcmp(k.mv_data, key, klen) == 0)
      mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
    if (mrc || k.mv_size < plen || k.mv_size >= CAT__KEY_MAX || memcmp(k.mv_data, key, plen))
      break;
    if (v.mv_size != CAT__ID_LEN) {
      rc = dd_err_set(DD_ECORRUPT, "catalog store: bad index entry");
      break;
    }
    klen = k.mv_size;
    memcpy(key, k.mv_data, klen);
    key[klen] = '\0';
    memcpy(id, v.mv_data, CAT__ID_LEN);
    id[CAT__ID_LEN] = '\0';
    if ((rc = fn(s, txn, key + plen, id, arg))) break;
  }
  mdb_cursor_close(cur);
  if (!rc && mrc != 0 && mrc != MDB_NOTFOUND) rc = cat__mdb_err(mrc, "catalog store: scan");
  return rc;
}

/* ---- listing ------------------------------------------------------------------------------- */

void cat__page_free(cat__page *page) {
  for (size_t i = 0; i < page->n; i++) protobuf_c_message_free_unpacked(page->items[i], NULL);
  free(page->items);
  free(page->next);
  memset(page, 0, sizeof *page);
}

/* Positions the cursor on the first key of scope after `after` (a lname; "" = start).
 * Returns MDB_NOTFOUND when there is none. */
static int cat__list_seek(MDB_cursor *cur, MDB_val *k, MDB_val *v, const char *prefix,
                          size_t plen, const char *after) {
  char key[CAT__KEY_MAX];
  memcpy(key, prefix, plen);
  size_t alen = strlen(after);
  memcpy(key + plen, after, alen);
  k->mv_size = plen + alen;
  k->mv_data = key;
  /* LMDB refuses an empty key: an unscoped list without a token starts at the first key */
  int rc = k->mv_size ? mdb_cursor_get(cur, k, v, MDB_SET_RANGE)
                      : mdb_cursor_get(cur, k, v, MDB_FIRST);
  if (rc == 0 && alen > 0 && k->mv_size == plen + alen && memcmp(k->mv_data, key, plen + alen) == 0)
    rc = mdb_cursor_get(cur, k, v, MDB_NEXT);
  return rc;
}

static bool cat__in_scope(const MDB_val *k, const char *prefix, size_t plen) {
  return k->mv_size >= plen && memcmp(k->mv_data, prefix, plen) == 0;
}

static int cat__list_collect(cat_store *s, MDB_txn *txn, MDB_cursor *cur, int recs_db,
                             const char *prefix, size_t plen, const char *after, int max,
                             const ProtobufCMessageDescriptor *desc, cat__page *out) {
  MDB_val k, v;
  char last[CAT__KEY_MAX];
  size_t last_len = 0;
  int rc, mrc = cat__list_seek(cur, &k, &v, prefix, plen, after);
  while (mrc == 0 && cat__in_scope(&k, prefix, plen) && out->n < (size_t)max) {
    char id[CAT__ID_LEN + 1];
    if (v.mv_size != CAT__ID_LEN) return dd_err_set(DD_ECORRUPT, "catalog store: bad name index");
    memcpy(id, v.mv_data, CAT__ID_LEN);
    id[CAT__ID_LEN] = '\0';
    rc = cat__rec_get(s, txn, recs_db, id, desc, &out->items[out->n]);
    if (rc == DD_ENOTFOUND) rc = dd_err_set(DD_ECORRUPT, "catalog store: dangling index %s", id);
    if (rc) return rc;
    out->n++;
    last_len = k.mv_size - plen;
    memcpy(last, (const char *)k.mv_data + plen, last_len);
    mrc = mdb_cursor_get(cur, &k, &v, MDB_NEXT);
  }
  if (mrc != 0 && mrc != MDB_NOTFOUND) return cat__mdb_err(mrc, "catalog store: list");
  bool more = mrc == 0 && cat__in_scope(&k, prefix, plen);
  out->next = more ? cat__page_token(last, last_len) : strdup("");
  return out->next ? 0 : dd_err_set(DD_ENOMEM, "out of memory");
}

int cat__list(cat_store *s, int names_db, int recs_db, const char *scope,
              const ProtobufCMessageDescriptor *desc, int32_t max_results, const char *token,
              cat__page *out) {
  char after[CAT__NAME_MAX + 1], prefix[CAT__KEY_MAX];
  int max;
  MDB_txn *txn = NULL;
  MDB_cursor *cur = NULL;
  memset(out, 0, sizeof *out);
  int rc = cat__page_args(max_results, token, &max, after);
  if (rc) return rc;
  size_t plen = scope ? cat__name_key(prefix, scope, "") : 0;
  out->items = calloc((size_t)max, sizeof *out->items);
  if (!out->items) return dd_err_set(DD_ENOMEM, "out of memory");
  if ((rc = cat__txn_begin(s, &txn, false))) goto cleanup;
  int mrc = mdb_cursor_open(txn, s->dbi[names_db], &cur);
  if (mrc) {
    rc = cat__mdb_err(mrc, "catalog store: open cursor");
    goto cleanup;
  }
  rc = cat__list_collect(s, txn, cur, recs_db, prefix, plen, after, max, desc, out);
cleanup:
  if (cur) mdb_cursor_close(cur);
  if (txn) mdb_txn_abort(txn);
  if (rc) cat__page_free(out);
  return rc;
}
